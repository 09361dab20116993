/* llm.c — LLM presets, replica memory and iteration time (see llm.h; sources in docs/models.md). */
#include "models/llm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *const dtype_names[] = {"fp32", "fp16", "bf16", "fp8", "int8", "int4"};
static const double dtype_bytes[] = {4, 2, 2, 1, 1, 0.5};

double llm_dtype_bytes(enum llm_dtype d)
{
    return (unsigned)d < 6 ? dtype_bytes[d] : 2;
}

const char *llm_dtype_name(enum llm_dtype d)
{
    return (unsigned)d < 6 ? dtype_names[d] : "?";
}

int llm_dtype_parse(const char *s, enum llm_dtype *out)
{
    for (int i = 0; s && i < 6; i++)
        if (!strcasecmp(s, dtype_names[i])) {
            *out = (enum llm_dtype)i;
            return 0;
        }
    return -EINVAL;
}

/*
 * Presets: every dimension from the model's config.json on Hugging Face
 * (hidden_size, intermediate_size, num_attention_heads, num_hidden_layers,
 * num_key_value_heads, vocab_size, max_position_embeddings,
 * tie_word_embeddings); head_dim = hidden / heads. Parameters are counted
 * from the dimensions (llm_arch_params) and agree with the model cards:
 * Llama-2-7B 6.74 B, 13B 13.0 B, 70B 69.0 B; Llama-3.1-8B 8.03 B, 70B 70.6 B;
 * Mistral-7B-v0.1 7.24 B.
 */
static const struct llm_arch arch_table[] = {
    {"llama-2-7b", "meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 128, 11008, 32000, false, 4096, 0},
    {"llama-2-13b", "meta-llama/Llama-2-13b-hf", 40, 5120, 40, 40, 128, 13824, 32000, false, 4096,
     0},
    {"llama-2-70b", "meta-llama/Llama-2-70b-hf", 80, 8192, 64, 8, 128, 28672, 32000, false, 4096,
     0},
    {"llama-3.1-8b", "meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256, false, 131072,
     0},
    {"llama-3.1-70b", "meta-llama/Llama-3.1-70B", 80, 8192, 64, 8, 128, 28672, 128256, false,
     131072, 0},
    {"mistral-7b", "mistralai/Mistral-7B-v0.1", 32, 4096, 32, 8, 128, 14336, 32000, false, 32768,
     0},
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

const struct llm_arch *llm_arch_find(const char *name)
{
    for (size_t i = 0; name && i < LEN(arch_table); i++)
        if (!strcasecmp(arch_table[i].name, name))
            return &arch_table[i];
    return NULL;
}

size_t llm_arch_count(void)
{
    return LEN(arch_table);
}

const struct llm_arch *llm_arch_at(size_t i)
{
    return i < LEN(arch_table) ? &arch_table[i] : NULL;
}

size_t llm_arch_names(char *buf, size_t len)
{
    size_t pos = 0;
    for (size_t i = 0; i < LEN(arch_table); i++) {
        int w = snprintf(pos < len ? buf + pos : NULL, pos < len ? len - pos : 0, "%s%s",
                         i ? ", " : "", arch_table[i].name);
        pos += w > 0 ? (size_t)w : 0;
    }
    if (len && pos >= len)
        buf[len - 1] = 0;
    return pos;
}

double llm_arch_params(const struct llm_arch *a)
{
    if (a->params > 0)
        return a->params;
    double h = a->hidden, q = (double)a->heads * a->head_dim,
           kv = (double)a->kv_heads * a->head_dim;
    double emb = (double)a->vocab * h * (a->tied ? 1 : 2);
    double layer = h * q + 2 * h * kv + q * h + 3 * h * a->intermediate + 2 * h;
    return emb + a->layers * layer + h;
}

void llm_model_from_arch(const struct llm_arch *a, enum llm_dtype weights, enum llm_dtype kv,
                         struct llm_model *m)
{
    memset(m, 0, sizeof(*m));
    m->params = llm_arch_params(a);
    double wb = llm_dtype_bytes(weights);
    /* The input embedding is a lookup: only lm_head is read each step (the same matrix if tied). */
    double streamed = m->params - (a->tied ? 0 : (double)a->vocab * a->hidden);
    m->weight_bytes = m->params * wb;
    m->stream_bytes = streamed * wb;
    m->flops_per_token = 2 * streamed;
    m->kv_bytes_per_token =
        2.0 * a->layers * (double)a->kv_heads * a->head_dim * llm_dtype_bytes(kv);
    m->attn_flops_per_pair = 4.0 * a->layers * (double)a->heads * a->head_dim;
    m->max_context = a->max_context;
}

int llm_memory_plan(const struct llm_model *m, double device_gib, uint32_t cards, double util,
                    double overhead_gib, uint32_t block, uint64_t min_kv_tokens,
                    struct llm_mem *out)
{
    memset(out, 0, sizeof(*out));
    if (!(device_gib > 0) || cards == 0 || !(util > 0) || util > 1 || !(overhead_gib >= 0) ||
        block == 0 || !(m->kv_bytes_per_token > 0))
        return -EINVAL;
    out->device_bytes = device_gib * GIB * cards;
    out->usable_bytes = out->device_bytes * util;
    out->weight_bytes = m->weight_bytes;
    out->overhead_bytes = overhead_gib * GIB * cards;
    out->kv_bytes = out->usable_bytes - out->weight_bytes - out->overhead_bytes;
    out->min_kv_tokens = min_kv_tokens;
    out->min_kv_bytes = (double)min_kv_tokens * m->kv_bytes_per_token;
    double tokens = out->kv_bytes > 0 ? floor(out->kv_bytes / m->kv_bytes_per_token) : 0;
    uint64_t blocks = (uint64_t)(tokens / block);
    uint64_t kv = blocks * block;
    if (kv < min_kv_tokens || kv == 0)
        return -ENOSPC;
    out->kv_tokens = kv;
    return 0;
}

size_t llm_fit_msg(char *buf, size_t len, const char *model, const char *where,
                   const struct llm_mem *f)
{
    double need = f->weight_bytes + f->overhead_bytes + f->min_kv_bytes;
    int w = snprintf(buf, len,
                     "%s needs %.1f GiB of weights + %.1f GiB runtime overhead + %.1f GiB of KV "
                     "cache (%llu tokens) = %.1f GiB, but %s gives %.1f GiB x %.2f "
                     "(gpu_memory_utilization) = %.1f GiB",
                     model, f->weight_bytes / GIB, f->overhead_bytes / GIB, f->min_kv_bytes / GIB,
                     (unsigned long long)f->min_kv_tokens, need / GIB, where, f->device_bytes / GIB,
                     f->device_bytes > 0 ? f->usable_bytes / f->device_bytes : 0,
                     f->usable_bytes / GIB);
    return w > 0 ? (size_t)w : 0;
}

void llm_knobs_default(struct llm_knobs *k)
{
    memset(k, 0, sizeof(*k));
    /*
     * Vidur's A100 profiles of the linear layers (microsoft/vidur,
     * data/profiling/compute/a100/MODEL/mlp.csv, TP 1): the quadrature roofline fits
     * Llama-2-7B, Llama-3-8B and Llama-2-70B with streaming at 0.64-0.70 of
     * 2,039 GB/s and compute at 0.64-0.68 of 312 TFLOP/s (docs/models.md). A
     * single request of Llama-3.1-8B on an A100-40GB decodes at ~75 tokens/s in
     * vLLM 0.23, 77 % of the bandwidth ceiling (johnmusgrave.com, "vLLM
     * throughput-latency sweep on NVIDIA A100"): η_bw 0.70 with 0.5 ms of host
     * time per step gives 70 tokens/s there.
     */
    k->eta_bw = 0.70;
    k->eta_flops = 0.65;
    /* FlashAttention-2 forward reaches 50-73 % of A100 peak (Dao, arXiv 2307.08691): the low end
     * for causal prefill. */
    k->eta_attn = 0.50;
    k->fixed_us = 500;
    /*
     * Tensor parallelism on one DGX A100 node: Vidur's Llama-2-70B linear-layer
     * profiles at TP k plus two all-reduces per layer (a100_dgx/all_reduce.csv),
     * averaged over 64-, 256- and 2,048-token steps: 0.87 (TP 2), 0.71 (TP 4),
     * 0.52 (TP 8) of linear scaling (docs/models.md has the table).
     */
    k->tp_eff[0] = 1.0;
    k->tp_eff[1] = 0.87;
    k->tp_eff[2] = 0.71;
    k->tp_eff[3] = 0.52;
}

double llm_tp_efficiency(const struct llm_knobs *k, uint32_t tp)
{
    switch (tp) {
    case 1:
        return k->tp_eff[0];
    case 2:
        return k->tp_eff[1];
    case 4:
        return k->tp_eff[2];
    case 8:
        return k->tp_eff[3];
    default:
        return 0;
    }
}

double llm_board_tflops(const char *gpu_name)
{
    /* Dense FP16/BF16 tensor-core peaks from NVIDIA's datasheets: A100 312 TFLOP/s (both memory
     * sizes), H100 SXM 989 TFLOP/s. */
    if (!gpu_name)
        return 0;
    if (!strncasecmp(gpu_name, "a100", 4))
        return 312;
    if (!strncasecmp(gpu_name, "h100", 4))
        return 989;
    return 0;
}

int llm_coef_base(const struct llm_model *m, const struct llm_knobs *k, double bw_gbps,
                  double tflops, struct llm_coef *c)
{
    memset(c, 0, sizeof(*c));
    if (!(bw_gbps > 0) || !(tflops > 0) || !(k->eta_bw > 0) || !(k->eta_flops > 0) ||
        !(k->eta_attn > 0) || !(k->fixed_us >= 0))
        return -EINVAL;
    double bw = bw_gbps * 1e9 * k->eta_bw, fl = tflops * 1e12;
    c->fixed_us = k->fixed_us;
    c->weights_us = m->stream_bytes / bw * 1e6;
    c->token_us = m->flops_per_token / (fl * k->eta_flops) * 1e6;
    c->ctx_us = m->kv_bytes_per_token / bw * 1e6;
    c->pair_us = m->attn_flops_per_pair / (fl * k->eta_attn) * 1e6;
    return 0;
}

int llm_coef_scale(const struct llm_coef *base, const struct llm_knobs *k, uint32_t tp,
                   double mem_share, double sm_share, struct llm_coef *c)
{
    double eff = llm_tp_efficiency(k, tp);
    if (!(eff > 0) || !(mem_share > 0) || !(sm_share > 0)) {
        memset(c, 0, sizeof(*c));
        return -EINVAL;
    }
    double gpus = tp * eff; /* parallel speed-up of the GPU terms */
    c->fixed_us = base->fixed_us;
    c->weights_us = base->weights_us / (gpus * mem_share);
    c->ctx_us = base->ctx_us / (gpus * mem_share);
    c->token_us = base->token_us / (gpus * sm_share);
    c->pair_us = base->pair_us / (gpus * sm_share);
    return 0;
}

int llm_coef_derive(const struct llm_model *m, const struct llm_knobs *k, double bw_gbps,
                    double tflops, uint32_t tp, double mem_share, double sm_share,
                    struct llm_coef *c)
{
    struct llm_coef base;
    int rc = llm_coef_base(m, k, bw_gbps, tflops, &base);
    if (rc) {
        memset(c, 0, sizeof(*c));
        return rc;
    }
    return llm_coef_scale(&base, k, tp, mem_share, sm_share, c);
}

double llm_iter_us(const struct llm_coef *c, double tokens, double ctx, double pairs)
{
    double lin = c->token_us * tokens;
    return c->fixed_us + sqrt(c->weights_us * c->weights_us + lin * lin) + c->ctx_us * ctx +
           c->pair_us * pairs;
}

double llm_prefill_pairs(double prior, double q)
{
    return q * prior + q * (q + 1) / 2;
}

double llm_decode_run_us(const struct llm_coef *c, double n, double ctx0, double m)
{
    if (!(m > 0))
        return 0;
    double step0 = llm_iter_us(c, n, ctx0, 0);
    return m * step0 + c->ctx_us * n * m * (m - 1) / 2;
}

uint64_t llm_decode_run_fit(const struct llm_coef *c, double n, double ctx0, double budget,
                            uint64_t max)
{
    if (max == 0 || !(llm_decode_run_us(c, n, ctx0, 1) <= budget))
        return 0;
    /* Root of (β/2) m² + (α − β/2) m − budget = 0, then corrected against the sum itself. */
    double a = llm_iter_us(c, n, ctx0, 0), b = c->ctx_us * n;
    double x;
    if (b > 0) {
        double p = a - b / 2, disc = p * p + 2 * b * budget;
        x = (-p + sqrt(disc)) / b;
        if (p > 0) /* the stable form when p > 0 (no cancellation) */
            x = 2 * budget / (p + sqrt(disc));
    } else {
        x = budget / a;
    }
    double cap = (double)max;
    uint64_t m = x >= cap ? max : x > 1 ? (uint64_t)x : 1;
    while (m < max && llm_decode_run_us(c, n, ctx0, (double)(m + 1)) <= budget)
        m++;
    while (m > 1 && llm_decode_run_us(c, n, ctx0, (double)m) > budget)
        m--;
    return m;
}

double llm_capacity_rps(const struct llm_coef *c, double kv_tokens, uint32_t max_seqs,
                        double prompt, double output, double tpot_us)
{
    if (!(output >= 1) || !(prompt >= 0))
        return 0;
    double per_seq = prompt + output / 2, best = 0;
    double nmax = per_seq > 0 ? floor(kv_tokens / per_seq) : max_seqs;
    if (nmax > max_seqs)
        nmax = max_seqs;
    double pf = c->token_us * prompt + c->pair_us * prompt * (prompt + 1) / 2;
    for (double n = 1; n <= nmax; n++) {
        double step = llm_iter_us(c, n, n * per_seq, 0) + n / output * pf;
        if (tpot_us > 0 && step > tpot_us)
            break; /* the step only grows with n */
        double x = n / (output * step) * 1e6;
        if (x > best)
            best = x;
    }
    return best;
}
