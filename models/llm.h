/*
 * llm.h — LLM serving model: architecture presets, GPU memory of a replica,
 * and the time of one iteration of continuous batching.
 *
 * Room models/ (pure models): includes only models/ of ours. Rule:
 * docs/architecture.md. Every number taken from the world is cited in llm.c
 * and in docs/models.md "LLM serving".
 *
 * Memory (vLLM's rule): a replica on `tp` cards (or one MIG instance) sees
 * device memory × gpu_memory_utilization; the weights, a runtime overhead per
 * card (CUDA context, activation peak, CUDA graphs) and at least
 * `min_kv_tokens` of KV cache (vLLM refuses to start when the cache cannot
 * hold one max_model_len sequence) must fit. What is left holds the KV cache,
 * counted in whole blocks of `block` tokens.
 *
 * Iteration time (µs) of one step of continuous batching that runs `tokens`
 * tokens through the model (the prefill tokens of the step plus one token per
 * decoding sequence), while the decoding sequences attend to `ctx` tokens of
 * KV cache and the prefill chunks attend to `pairs` (query, key) pairs:
 *
 *     t = fixed + sqrt(weights² + (token · tokens)²) + ctx_us · ctx + pair_us · pairs
 *
 * `weights` is the time to stream the weights once (memory-bound floor of a
 * small batch), token · tokens the linear layers' compute: their quadrature
 * sum is a smooth roofline that follows Vidur's A100 profiles of the linear
 * layers within ~6 % rms (docs/models.md). ctx_us is the decode attention's
 * KV read (memory-bound), pair_us the prefill attention (compute-bound),
 * fixed the host's share of a step (scheduling, sampling). Memory terms scale
 * with the replica's share of memory bandwidth, compute terms with its share
 * of SMs (MIG); tensor parallelism divides the GPU terms by tp × efficiency(tp).
 *
 * Runs of decode iterations: between changes of the batch every step has the
 * same n sequences and the context grows by n per step, so m steps from
 * context c take
 *     m · (fixed + sqrt(weights² + (token·n)²) + ctx_us · c) + ctx_us · n · m(m − 1)/2,
 * an arithmetic series (llm_decode_run_us); llm_decode_run_fit inverts it.
 *
 * Units: bytes, tokens, µs. Pure functions; tables are static const.
 */
#ifndef TIDESIM_MODELS_LLM_H
#define TIDESIM_MODELS_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum llm_dtype { LLM_DT_FP32, LLM_DT_FP16, LLM_DT_BF16, LLM_DT_FP8, LLM_DT_INT8, LLM_DT_INT4 };

/* Bytes per element: 4, 2, 2, 1, 1, 0.5. */
double llm_dtype_bytes(enum llm_dtype d);

/* "fp32", "fp16", "bf16", "fp8", "int8", "int4" (case-insensitive). 0 or -EINVAL. */
int llm_dtype_parse(const char *s, enum llm_dtype *out);
const char *llm_dtype_name(enum llm_dtype d);

/* An open model's architecture, as its config.json gives it. */
struct llm_arch {
    char name[32];   /* preset name, e.g. "llama-3.1-8b" */
    char source[64]; /* the Hugging Face repository whose config.json gives the numbers */
    uint32_t layers, hidden, heads, kv_heads, head_dim, intermediate, vocab;
    bool tied;            /* input embedding and lm_head share one matrix */
    uint32_t max_context; /* max_position_embeddings */
    double params;        /* total parameters; 0 = count them from the dimensions */
};

/* Preset by name (case-insensitive), or NULL. */
const struct llm_arch *llm_arch_find(const char *name);
size_t llm_arch_count(void);
const struct llm_arch *llm_arch_at(size_t i);
/* "llama-2-7b, llama-3.1-8b, ..." into buf (snprintf convention). */
size_t llm_arch_names(char *buf, size_t len);

/*
 * Parameters of a Llama-style decoder (gated MLP, RMSNorm, no biases) counted
 * from its dimensions: embeddings (one matrix if tied, else two), per layer
 * q, k, v, o, gate, up, down and two norms, and the final norm. a->params if
 * it is set.
 */
double llm_arch_params(const struct llm_arch *a);

/* What the simulator needs of a model at given weight and KV-cache dtypes. */
struct llm_model {
    double params;              /* total */
    double weight_bytes;        /* resident weights */
    double stream_bytes;        /* weights read per step: all but the input embedding */
    double flops_per_token;     /* linear layers and lm_head: 2 × streamed parameters */
    double kv_bytes_per_token;  /* 2 (K, V) × layers × kv_heads × head_dim × KV dtype */
    double attn_flops_per_pair; /* QKᵀ and PV: 4 × layers × heads × head_dim */
    uint32_t max_context;
};

/*
 * Resolve a. Dimensions that are 0 leave their figure 0 (a custom model
 * given by its parameter count alone streams all its weights: vocab 0).
 */
void llm_model_from_arch(const struct llm_arch *a, enum llm_dtype weights, enum llm_dtype kv,
                         struct llm_model *m);

/* A replica's memory, bytes (all its cards together). */
struct llm_mem {
    double device_bytes;   /* memory of its cards or MIG instance */
    double usable_bytes;   /* × gpu_memory_utilization */
    double weight_bytes;   /* the model's weights */
    double overhead_bytes; /* runtime overhead, per card × cards */
    double kv_bytes;       /* left for the KV cache (may be negative: does not fit) */
    uint64_t kv_tokens;    /* the KV cache in tokens, whole blocks (0 when it does not fit) */
    uint64_t min_kv_tokens;
    double min_kv_bytes; /* their size */
};

/*
 * The memory plan of a replica of m on `cards` devices of device_gib each (a
 * MIG instance: 1 × its memory), gpu_memory_utilization util, overhead_gib per
 * card, KV blocks of `block` tokens, needing at least min_kv_tokens of cache.
 * Returns 0 when it fits, -ENOSPC when it does not (*out filled either way),
 * -EINVAL for nonsense (non-positive sizes).
 */
int llm_memory_plan(const struct llm_model *m, double device_gib, uint32_t cards, double util,
                    double overhead_gib, uint32_t block, uint64_t min_kv_tokens,
                    struct llm_mem *out);

/*
 * One sentence with the figures: "llama-2-7b needs 12.6 GiB of weights + 1.5
 * GiB overhead + 2.0 GiB of KV cache (4096 tokens) = 16.1 GiB, but 1g.10gb
 * gives 9.5 GiB x 0.90 = 8.6 GiB". `where` names the device. snprintf
 * convention.
 */
size_t llm_fit_msg(char *buf, size_t len, const char *model, const char *where,
                   const struct llm_mem *f);

/* Calibration knobs of the iteration time (docs/models.md "LLM serving"). */
struct llm_knobs {
    double eta_bw;    /* achieved share of HBM bandwidth streaming weights and KV, 0..1 */
    double eta_flops; /* achieved share of dense FP16 tensor FLOP/s in the linear layers */
    double eta_attn;  /* achieved share of FLOP/s in prefill attention (FlashAttention) */
    double fixed_us;  /* host time per step: scheduling, input preparation, sampling */
    double tp_eff[4]; /* tensor-parallel efficiency at tp = 1, 2, 4, 8 */
};

/* Defaults: η_bw 0.70, η_flops 0.65, η_attn 0.5, fixed 500 µs, tp 1/0.85/0.72/0.58. */
void llm_knobs_default(struct llm_knobs *k);

/* Efficiency at tp (1, 2, 4 or 8); 0 for any other degree. */
double llm_tp_efficiency(const struct llm_knobs *k, uint32_t tp);

/* Dense FP16/BF16 tensor-core peak of a board by scenario name, TFLOP/s; 0 when unknown. */
double llm_board_tflops(const char *gpu_name);

/* Coefficients of a replica, µs (see the top of this file). */
struct llm_coef {
    double fixed_us;   /* host time per step */
    double weights_us; /* streaming the weights once */
    double token_us;   /* one token through the linear layers */
    double ctx_us;     /* one KV-cache token read by a decode step */
    double pair_us;    /* one (query, key) pair of prefill attention */
};

/*
 * Coefficients of m on one whole card of bw_gbps (GB/s) and tflops (dense
 * FP16), TP 1. Returns 0 or -EINVAL (non-positive figures).
 */
int llm_coef_base(const struct llm_model *m, const struct llm_knobs *k, double bw_gbps,
                  double tflops, struct llm_coef *c);

/*
 * Scale whole-card TP-1 coefficients to a replica on tp cards (GPU terms /
 * (tp × efficiency)) with memory-bandwidth share mem_share (weights, KV) and
 * SM share sm_share (tokens, pairs); fixed unchanged. 0 or -EINVAL.
 */
int llm_coef_scale(const struct llm_coef *base, const struct llm_knobs *k, uint32_t tp,
                   double mem_share, double sm_share, struct llm_coef *c);

/*
 * llm_coef_base then llm_coef_scale: coefficients of m on tp cards of bw_gbps (GB/s) and tflops
 * (dense FP16), with the replica's share of memory bandwidth mem_share and of SMs sm_share (1 and 1
 * on whole cards; a MIG instance: memory slices / 8 and its speed). Returns 0, or -EINVAL (tp
 * without an efficiency, non-positive figures).
 */
int llm_coef_derive(const struct llm_model *m, const struct llm_knobs *k, double bw_gbps,
                    double tflops, uint32_t tp, double mem_share, double sm_share,
                    struct llm_coef *c);

/* One step, µs (formula at the top). */
double llm_iter_us(const struct llm_coef *c, double tokens, double ctx, double pairs);

/* (query, key) pairs of a prefill chunk of q tokens after `prior` tokens of its sequence. */
double llm_prefill_pairs(double prior, double q);

/* m decode steps of n sequences from total context ctx0 (it grows by n a step), µs. */
double llm_decode_run_us(const struct llm_coef *c, double n, double ctx0, double m);

/*
 * The largest m <= max with llm_decode_run_us(c, n, ctx0, m) <= budget (0 when
 * even one step does not fit). Exact against llm_decode_run_us.
 */
uint64_t llm_decode_run_fit(const struct llm_coef *c, double n, double ctx0, double budget,
                            uint64_t max);

/*
 * Requests/s a replica of coefficients c sustains with a TPOT of at most
 * tpot_us (0 = no bound): the steady state of n decoding sequences (each
 * holding prompt + output/2 tokens on average; n <= max_seqs, n × that <=
 * kv_tokens) whose steps also carry the prefills of the requests that replace
 * them (n / output a step, each token_us · prompt + pair_us · prompt(prompt +
 * 1)/2 of work): step = iteration(n) + that, TPOT = step, throughput =
 * n / (output · step), at the best n. 0 when not even one sequence meets the bound.
 */
double llm_capacity_rps(const struct llm_coef *c, double kv_tokens, uint32_t max_seqs,
                        double prompt, double output, double tpot_us);

#endif
