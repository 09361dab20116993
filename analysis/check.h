/*
 * check.h — quality gates on a results file for CI pipelines.
 *
 * Each gate compares one figure of the file with a bound; a replicated file
 * is judged on the mean over its replications. Shares are fractions 0..1.
 *   min_util          utilisation of the kind chosen (busy by default;
 *                     useful falls back to busy when the file has none) >= bound
 *   min_slo           worst service's share of requests within its SLO
 *                     (all services' share if the worst is not recorded) >= bound
 *   max_ckpt_overhead checkpoint overhead (/summary checkpoint_overhead, or
 *                     checkpoint+restore+recompute GPU-time / training GPU-time
 *                     from /gpus); a file without checkpoint data had none: 0
 *   max_p99_ms        worst service's p99 latency (ms) <= bound
 *   against           no headline metric with a direction is worse than the
 *                     baseline's by more than `tolerance` (relative) with
 *                     significance: the interval of the worsening (paired by
 *                     seed when the files share seeds, else Welch; Bonferroni
 *                     over the metrics, so the family errs 5 % of the time)
 *                     lies wholly beyond the tolerance -> failed; wholly within
 *                     -> holds; across it -> inconclusive. Single runs have no
 *                     interval and are compared by value.
 * A bound that is NaN is not checked.
 */
#ifndef TIDESIM_CHECK_H
#define TIDESIM_CHECK_H

#include <stddef.h>
#include <stdio.h>

struct results;

enum check_util_kind { CHECK_UTIL_BUSY, CHECK_UTIL_ALLOCATED, CHECK_UTIL_USEFUL };

struct check_gates {
    double min_util, min_slo, max_ckpt_overhead, max_p99_ms; /* NaN = off */
    enum check_util_kind util_kind;
    double tolerance; /* relative, for the baseline comparison */
};

/* What check_run found: gates evaluated, failed, and inconclusive (baseline gate only). */
struct check_outcome {
    size_t evaluated, failed, inconclusive;
};

/* All gates off, busy utilisation, tolerance 0. */
void check_gates_init(struct check_gates *g);

/*
 * Evaluate the gates on r (and against base when not NULL). Writes one line
 * per failed gate ("FAIL <gate>: <value> <op> <bound>"), one per
 * inconclusive one ("INCONCLUSIVE against: ...") and notes to out, then a
 * summary line. Returns the number of failed gates (0 = none failed) and
 * fills *res (may be NULL).
 */
size_t check_run(FILE *out, const struct results *r, const struct results *base,
                 const struct check_gates *g, struct check_outcome *res);

#endif
