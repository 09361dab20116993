/*
 * precision.h — `tidesim run --replications auto --precision P`: how precise
 * the headline figures of the replications run so far are, and how many
 * replications the target would take.
 *
 * The precision of a metric is the relative half-width of its 95 % Student-t
 * interval, ci95 / |mean| (analysis/stats.h), over the replications'
 * /summary values. The metrics watched are the headline ones a policy
 * comparison reads: util_busy, slo_share, p99_ms_worst_service and
 * training_gpu_hours; one that is absent, undefined, zero or identical in every
 * replication (no spread: nothing to estimate) is left out.
 *
 * The estimate of what is needed assumes the spread stays as measured:
 * n' = ceil(n · (ci95 / (target · |mean|))²), which errs a little low
 * while t(0.975, n−1) still falls with n; the driver re-measures after each
 * round, so it only takes another round. Stopping when an estimated interval
 * first meets a target makes the stated interval slightly optimistic (the
 * usual caveat of sequential stopping); at least 3 replications run.
 */
#ifndef TIDESIM_PRECISION_H
#define TIDESIM_PRECISION_H

#include <stddef.h>

struct precision_eval {
    double worst;       /* the largest relative half-width; 0 when no metric has spread */
    const char *metric; /* its key (static), or NULL */
    size_t needed;      /* replications the target needs at the spread measured (>= n) */
    size_t metrics;     /* metrics taken into account */
};

/* Headline keys watched (NULL-terminated). */
extern const char *const precision_metrics[];

/*
 * Evaluate the results files parts[0..n) (single runs) against `target`
 * (relative half-width, > 0). Returns 0, or a negative code with err filled
 * (a part that cannot be read).
 */
int precision_evaluate(const char *const *parts, size_t n, double target,
                       struct precision_eval *out, char *err, size_t errlen);

#endif
