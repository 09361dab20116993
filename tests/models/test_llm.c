/* test_llm.c — LLM presets, replica memory and iteration time against hand arithmetic. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "models/gpu.h"
#include "models/llm.h"
#include "models/mig.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Parameter counts of the presets against the model cards (Hugging Face "Model size"). */
Test(llm, preset_parameters_match_model_cards)
{
    static const struct {
        const char *name;
        double params;
    } want[] = {
        /* Llama-2-7B: 2 × 32000 × 4096 embeddings + 32 × (4 × 4096² + 3 × 4096 × 11008 + 2 ×
         * 4096) + 4096 = 6,738,415,616. */
        {"llama-2-7b", 6738415616.0},     {"llama-2-13b", 13015864320.0},
        {"llama-2-70b", 68976648192.0},   {"llama-3.1-8b", 8030261248.0},
        {"llama-3.1-70b", 70553706496.0}, {"mistral-7b", 7241732096.0},
    };
    cr_assert_eq(llm_arch_count(), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const struct llm_arch *a = llm_arch_find(want[i].name);
        cr_assert_not_null(a, "%s", want[i].name);
        cr_expect_eq(llm_arch_params(a), want[i].params, "%s: %.0f", want[i].name,
                     llm_arch_params(a));
        cr_expect_eq(a->hidden, a->heads * a->head_dim, "%s", want[i].name);
    }
    cr_expect_not_null(llm_arch_find("LLAMA-2-7B"));
    cr_expect_null(llm_arch_find("gpt-5"));
    char names[200];
    llm_arch_names(names, sizeof(names));
    cr_expect(strstr(names, "llama-2-70b"));
}

Test(llm, kv_bytes_per_token_and_weights)
{
    struct llm_model m;
    /* Llama-2-7B: 2 × 32 layers × 32 KV heads × 128 × 2 B = 524,288 B = 0.5 MiB per token. */
    llm_model_from_arch(llm_arch_find("llama-2-7b"), LLM_DT_FP16, LLM_DT_FP16, &m);
    cr_expect_eq(m.kv_bytes_per_token, 524288.0);
    cr_expect_eq(m.weight_bytes, 2 * 6738415616.0);
    /* Streamed: all but the input embedding (32000 × 4096), twice for bytes. */
    cr_expect_eq(m.stream_bytes, 2 * (6738415616.0 - 131072000.0));
    cr_expect_eq(m.flops_per_token, 2 * (6738415616.0 - 131072000.0));
    /* QKᵀ and PV: 4 × 32 layers × 32 heads × 128 = 524,288 FLOP per pair. */
    cr_expect_eq(m.attn_flops_per_pair, 524288.0);
    cr_expect_eq(m.max_context, 4096);
    /* Llama-3.1-8B (GQA, 8 KV heads): 2 × 32 × 8 × 128 × 2 = 131,072 B; FP8 cache halves it. */
    llm_model_from_arch(llm_arch_find("llama-3.1-8b"), LLM_DT_FP16, LLM_DT_FP8, &m);
    cr_expect_eq(m.kv_bytes_per_token, 65536.0);
    /* Llama-2-70B: 2 × 80 × 8 × 128 × 2 = 327,680 B. INT4 weights: 0.5 B a parameter. */
    llm_model_from_arch(llm_arch_find("llama-2-70b"), LLM_DT_INT4, LLM_DT_FP16, &m);
    cr_expect_eq(m.kv_bytes_per_token, 327680.0);
    cr_expect_eq(m.weight_bytes, 0.5 * 68976648192.0);
    /* A custom model given by its parameter count alone streams every weight. */
    struct llm_arch c = {.layers = 40,
                         .kv_heads = 8,
                         .head_dim = 128,
                         .heads = 40,
                         .params = 14e9,
                         .max_context = 8192};
    llm_model_from_arch(&c, LLM_DT_BF16, LLM_DT_FP16, &m);
    cr_expect_eq(m.stream_bytes, 28e9);
    cr_expect_eq(m.kv_bytes_per_token, 2 * 40 * 8 * 128 * 2.0);
    enum llm_dtype d;
    cr_expect_eq(llm_dtype_parse("BF16", &d), 0);
    cr_expect_eq(d, LLM_DT_BF16);
    cr_expect_eq(llm_dtype_parse("fp4", &d), -EINVAL);
}

/* The fit of a 7B on MIG slices of an A100-80GB, by hand (MIG table: 1g.10gb 9,728 MiB, 2g.20gb
 * 19,968 MiB; gpu_memory_utilization 0.9, 1.3 GiB overhead, blocks of 16). */
Test(llm, memory_fit_on_mig_slices)
{
    const struct gpu_spec *a100 = gpu_spec_find("a100-sxm4-80gb");
    const struct mig_profile *g1 = mig_profile_find(a100, "1g.10gb");
    const struct mig_profile *g2 = mig_profile_find(a100, "2g.20gb");
    cr_assert_eq(g1->memory_mib, 9728);
    cr_assert_eq(g2->memory_mib, 19968);
    struct llm_model m;
    struct llm_mem f;
    llm_model_from_arch(llm_arch_find("llama-2-7b"), LLM_DT_FP16, LLM_DT_FP16, &m);

    /* 1g.10gb: 9.5 GiB × 0.9 = 8.55 GiB < 12.55 GiB of weights alone. */
    cr_expect_eq(llm_memory_plan(&m, 9728 / 1024.0, 1, 0.9, 1.3, 16, 4096, &f), -ENOSPC);
    cr_expect_float_eq(f.usable_bytes, 8.55 * GIB, 1);
    cr_expect_lt(f.kv_bytes, 0);
    cr_expect_eq(f.kv_tokens, 0);
    char msg[400];
    llm_fit_msg(msg, sizeof(msg), "llama-2-7b", "MIG 1g.10gb", &f);
    cr_expect(strstr(msg, "12.6 GiB of weights"), "%s", msg);
    cr_expect(strstr(msg, "1g.10gb gives 9.5 GiB x 0.90"), "%s", msg);
    cr_expect(strstr(msg, "= 8.6 GiB"), "%s", msg);

    /* 2g.20gb: 19.5 × 0.9 − 1.3 GiB = 17,448,304,640 B; − 13,476,831,232 B of weights =
     * 3,971,473,408 B = 7,574.98 tokens of 0.5 MiB: 473 blocks = 7,568 tokens >= 4,096. */
    cr_expect_eq(llm_memory_plan(&m, 19968 / 1024.0, 1, 0.9, 1.3, 16, 4096, &f), 0);
    cr_expect_float_eq(f.kv_bytes, 3971473408.0, 1);
    cr_expect_eq(f.kv_tokens, 7568);

    /* The same 7B quantised to INT4 (3.14 GiB) fits 1g.10gb: 8.55 − 1.3 − 3.138 GiB =
     * 8,421.7 tokens, 526 blocks = 8,416. */
    llm_model_from_arch(llm_arch_find("llama-2-7b"), LLM_DT_INT4, LLM_DT_FP16, &m);
    cr_expect_eq(llm_memory_plan(&m, 9728 / 1024.0, 1, 0.9, 1.3, 16, 4096, &f), 0);
    cr_expect_eq(f.kv_tokens, 8416);

    /* Llama-3.1-8B at its full 131,072-token context does not fit 2g.20gb (1.29 GiB of cache is
     * 10,592 tokens); at max_model_len 8,192 it does. */
    llm_model_from_arch(llm_arch_find("llama-3.1-8b"), LLM_DT_BF16, LLM_DT_BF16, &m);
    cr_expect_eq(llm_memory_plan(&m, 19968 / 1024.0, 1, 0.9, 1.3, 16, 131072, &f), -ENOSPC);
    cr_expect_gt(f.kv_bytes, 0);
    cr_expect_eq(llm_memory_plan(&m, 19968 / 1024.0, 1, 0.9, 1.3, 16, 8192, &f), 0);

    /* Llama-2-70B FP16 (128.5 GiB) needs several 80 GB cards: not 1, yes 2 (TP 2). */
    llm_model_from_arch(llm_arch_find("llama-2-70b"), LLM_DT_FP16, LLM_DT_FP16, &m);
    cr_expect_eq(llm_memory_plan(&m, 80, 1, 0.9, 1.3, 16, 4096, &f), -ENOSPC);
    cr_expect_eq(llm_memory_plan(&m, 80, 2, 0.9, 1.3, 16, 4096, &f), 0);
    /* 144 − 2.6 GiB − 137,953,296,384 B = 13,873,797,529.6 B / 327,680 = 42,339.5: 2,646 blocks. */
    cr_expect_eq(f.kv_tokens, 42336);
    cr_expect_eq(llm_memory_plan(&m, 0, 1, 0.9, 1.3, 16, 4096, &f), -EINVAL);
}

/*
 * Coefficients of Llama-2-7B on a whole A100-80GB (2,039 GB/s, 312 TFLOP/s), by hand:
 * streamed 13,214,687,232 B / (2,039e9 × 0.70) = 9,258.521 µs; 13,214,687,232 FLOP per token /
 * (312e12 × 0.65) = 65.16118 µs; 524,288 B of KV / 1.4273e12 B/s = 0.3673285 µs; 524,288 FLOP
 * per pair / (312e12 × 0.5) = 0.0033608 µs.
 */
Test(llm, coefficients_by_hand)
{
    struct llm_model m;
    struct llm_knobs k;
    struct llm_coef c;
    llm_model_from_arch(llm_arch_find("llama-2-7b"), LLM_DT_FP16, LLM_DT_FP16, &m);
    llm_knobs_default(&k);
    cr_expect_eq(llm_board_tflops("a100-sxm4-80gb"), 312);
    cr_assert_eq(llm_coef_derive(&m, &k, 2039, 312, 1, 1, 1, &c), 0);
    cr_expect_float_eq(c.fixed_us, 500, 1e-12);
    cr_expect_float_eq(c.weights_us, 9258.521146, 1e-5);
    cr_expect_float_eq(c.token_us, 65.161180, 1e-5);
    cr_expect_float_eq(c.ctx_us, 0.36732852, 1e-7);
    cr_expect_float_eq(c.pair_us, 0.0033608205, 1e-9);
    /* One decode step at context 1,000: 500 + sqrt(9258.521² + 65.161²) + 367.33 =
     * 10,126.079 µs (~99 tokens/s). A 1,000-token prefill: 500 + sqrt(9258.521² + 65,161.18²)
     * + 0.0033608 × 500,500 = 67,997.74 µs. */
    cr_expect_float_eq(llm_iter_us(&c, 1, 1000, 0), 10126.0790, 1e-3);
    cr_expect_float_eq(llm_iter_us(&c, 1000, 0, llm_prefill_pairs(0, 1000)), 67997.7389, 1e-3);
    cr_expect_eq(llm_prefill_pairs(0, 1000), 500500);
    /* A second chunk of 100 after 1,000 tokens: 100 × 1,000 + 100 × 101 / 2. */
    cr_expect_eq(llm_prefill_pairs(1000, 100), 105050);

    /* MIG 3g.40gb: memory terms / (4/8), compute terms / its SM speed. */
    struct llm_coef g;
    cr_assert_eq(llm_coef_derive(&m, &k, 2039, 312, 1, 0.5, 0.376, &g), 0);
    cr_expect_float_eq(g.weights_us, 2 * c.weights_us, 1e-6);
    cr_expect_float_eq(g.ctx_us, 2 * c.ctx_us, 1e-9);
    cr_expect_float_eq(g.token_us, c.token_us / 0.376, 1e-6);
    cr_expect_float_eq(g.pair_us, c.pair_us / 0.376, 1e-9);
    cr_expect_float_eq(g.fixed_us, 500, 1e-12);

    /* Llama-2-70B on TP 4: 137,953,296,384 − 2 × 262,144,000 B streamed / 1.4273e12 / (4 ×
     * 0.71) = 33,903.52 µs a step for the weights. TP 3 has no efficiency: refused. */
    llm_model_from_arch(llm_arch_find("llama-2-70b"), LLM_DT_FP16, LLM_DT_FP16, &m);
    cr_assert_eq(llm_coef_derive(&m, &k, 2039, 312, 4, 1, 1, &c), 0);
    cr_expect_float_eq(c.weights_us, 33903.5213, 1e-3);
    cr_expect_eq(llm_coef_derive(&m, &k, 2039, 312, 3, 1, 1, &c), -EINVAL);
}

/* A run of decode steps in closed form equals the sum of its steps; the inverse is exact. */
Test(llm, decode_runs_are_exact)
{
    struct llm_coef c = {.fixed_us = 500,
                         .weights_us = 9258.521,
                         .token_us = 65.16,
                         .ctx_us = 0.3673,
                         .pair_us = 0.00336};
    const double ns[] = {1, 7, 64, 256};
    const double ctx0[] = {0, 1234, 50000};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            double sum = 0;
            for (int s = 0; s < 300; s++) {
                sum += llm_iter_us(&c, ns[i], ctx0[j] + ns[i] * s, 0);
                cr_expect_float_eq(llm_decode_run_us(&c, ns[i], ctx0[j], s + 1), sum, 1e-9 * sum,
                                   "n %g ctx %g m %d", ns[i], ctx0[j], s + 1);
            }
            /* Inverse: for budgets around every partial sum, the largest m that fits. */
            double acc = 0;
            for (int s = 1; s <= 300; s++) {
                acc = llm_decode_run_us(&c, ns[i], ctx0[j], s);
                cr_expect_eq(llm_decode_run_fit(&c, ns[i], ctx0[j], acc, 1000), (uint64_t)s);
                cr_expect_eq(llm_decode_run_fit(&c, ns[i], ctx0[j], acc * (1 - 1e-12), 1000),
                             (uint64_t)(s - 1));
            }
            cr_expect_eq(llm_decode_run_fit(&c, ns[i], ctx0[j], 1e18, 77), 77);
        }
    cr_expect_eq(llm_decode_run_fit(&c, 1, 0, 1, 10), 0);
    struct llm_coef flat = {.fixed_us = 10};
    cr_expect_eq(llm_decode_run_fit(&flat, 4, 0, 95, 1000), 9);
}
