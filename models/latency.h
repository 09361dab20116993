/*
 * latency.h — inference batch latency and SLO reference tables.
 *
 * Batch service time is linear, l(b) = a + b_per_item · batch (Inoue,
 * arXiv 1912.06322; models.md 4.2), fitted from MLPerf Inference v2.0 on an
 * A100-SXM-80GB, full GPU and one 1g.10gb slice (models.md 4.1/4.2: a = mean
 * single-stream latency − β, β = 1 / offline throughput; rough). Scale by the
 * tenant's speed (share.h) for other allocations: l / speed.
 *
 * SLOs are the MLPerf loadgen server-scenario bounds (models.md 4.3): p99
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
};

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
