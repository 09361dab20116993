/*
 * latency.h — inference batch latency and SLO reference tables.
 *
 * Batch service time is linear, l(b) = a + b_per_item · batch (Inoue,
 * arXiv 1912.06322), fitted from MLPerf Inference v2.0 on an A100-SXM-80GB
 * (mlcommons/inference_results_v2.0), full GPU and one 1g.10gb slice (a = mean
 * single-stream latency − β, β = 1 / offline throughput; rough). Scale by the
 * tenant's speed (share.h) for other allocations: l / speed.
 *
 * MIG slices (MLPerf v2.0 MIG results): the per-item term scales with the slice's
 * compute, the fixed term only weakly. MLPerf v2.0 on one 1g.10gb slice (speed
 * s ≈ 0.13 of a full card by offline throughput) runs batch-1 only 1.45×
 * (ResNet-50) and 3.45× (BERT-99) slower than the full card, not 1/s ≈ 7.6×.
 * The fixed term a is split into a host/launch part that does not slow down
 * and a GPU part, its share φ (fixed_compute_share), that scales like the
 * per-item work, so on a slice of speed s
 *
 *     l_s(n) = a · ((1 − φ) + φ / s) + b · n / s
 *            = (a · g(φ, s) + b · n) / s,   g = (1 − φ) · s + φ
 *
 * (latency_fixed_scale() returns g). φ is calibrated so that the model gives
 * the measured batch-1 ratio R: φ = (F − 1)/(1/s − 1) with
 * F = (R·(a + b) − b/s)/a: ResNet-50 φ = 0.0155, BERT φ = 0.237.
 *
 * SLOs are the MLPerf loadgen server-scenario bounds (loadgen/mlperf.conf): p99
 * latency, or time-to-first-token / time-per-output-token for LLMs.
 * Units: seconds. Tables are static const; names are case-insensitive.
 */
#ifndef TIDESIM_MODELS_LATENCY_H
#define TIDESIM_MODELS_LATENCY_H

#include <stddef.h>

struct latency_model {
    char model[16]; /* "resnet50", "bert" */
    char slice[16]; /* "full" or "1g.10gb" */
    double a_s;     /* fixed cost per batch, s */
    double b_s;     /* cost per item, s */
    /* Share of a that slows down with the slice's compute (MIG; see above), 0..1. */
    double fixed_compute_share;
};

/* BERT-large's φ, the default of a service that names no model (its a, b are BERT's too). */
#define LATENCY_FIXED_COMPUTE_SHARE_DEFAULT 0.237

/*
 * g(φ, s) = (1 − φ)·s + φ: the factor on the full-card fixed term a such that
 * (a·g + b·n)/s is the batch time on an instance of speed s (0 < s <= 1; s = 1
 * gives 1 exactly). Values outside the ranges are clamped.
 */
double latency_fixed_scale(double phi, double slice_speed);

struct latency_slo {
    char model[32]; /* MLPerf benchmark name, e.g. "resnet50", "llama2-70b-interactive" */
    double p99_s;   /* server-scenario p99 bound, s; 0 for token-SLO models */
    double ttft_s;  /* time to first token, s; 0 when not an LLM */
    double tpot_s;  /* time per output token, s; 0 when not an LLM */
};

/* Coefficients for model on slice ("full" or "1g.10gb"; NULL = "full"), or NULL. */
const struct latency_model *latency_model_find(const char *model, const char *slice);

/* Number of rows and the i-th row (NULL when out of range). */
size_t latency_model_count(void);
const struct latency_model *latency_model_at(size_t i);

/* a + b · batch, s (batch < 1 counts as 1). */
double latency_batch_s(const struct latency_model *m, int batch);

/* MLPerf SLO of model, or NULL. */
const struct latency_slo *latency_slo_find(const char *model);
size_t latency_slo_count(void);
const struct latency_slo *latency_slo_at(size_t i);

#endif
