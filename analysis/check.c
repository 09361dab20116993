/* check.c — CI gates on a results file. */
#include "analysis/check.h"

#include <math.h>
#include <string.h>

#include "analysis/results.h"

void check_gates_init(struct check_gates *g)
{
    g->min_util = g->min_slo = g->max_ckpt_overhead = g->max_p99_ms = NAN;
    g->util_kind = CHECK_UTIL_BUSY;
    g->tolerance = 0;
}

static double mean_of(const struct results *r, const char *key)
{
    const struct results_metric *m = results_table_find(&r->headline, key);
    return m && m->s.n ? m->s.mean : NAN;
}

static double state_share(const struct results *r, const char *key)
{
    const struct results_metric *m = results_table_find(&r->gpu_states, key);
    return m && m->s.n ? m->s.mean : NAN;
}

/* Checkpoint overhead and whether the file recorded any checkpoint data. */
static double ckpt_overhead(const struct results *r, int *recorded)
{
    double v = mean_of(r, "checkpoint_overhead");
    *recorded = 1;
    if (isfinite(v))
        return v;
    static const char *const parts[] = {"checkpoint_s", "restore_s", "recompute_s"};
    double sum = 0;
    int any = 0;
    for (size_t i = 0; i < 3; i++) {
        double s = state_share(r, parts[i]);
        if (isfinite(s)) {
            sum += s;
            any = 1;
        }
    }
    double train = state_share(r, "training_s");
    if (any && train > 0)
        return sum / train;
    *recorded = 0;
    return 0;
}

static size_t gate_min(FILE *out, const char *gate, const char *what, double v, double bound,
                       double scale, const char *unit)
{
    if (isfinite(v) && v >= bound)
        return 0;
    if (isfinite(v))
        fprintf(out, "FAIL %s: %s = %.4g%s < bound %.4g%s\n", gate, what, v * scale, unit,
                bound * scale, unit);
    else
        fprintf(out, "FAIL %s: %s is not recorded in the file (bound %.4g%s)\n", gate, what,
                bound * scale, unit);
    return 1;
}

static size_t gate_max(FILE *out, const char *gate, const char *what, double v, double bound,
                       double scale, const char *unit)
{
    if (isfinite(v) && v <= bound)
        return 0;
    if (isfinite(v))
        fprintf(out, "FAIL %s: %s = %.4g%s > bound %.4g%s\n", gate, what, v * scale, unit,
                bound * scale, unit);
    else
        fprintf(out, "FAIL %s: %s is not recorded in the file (bound %.4g%s)\n", gate, what,
                bound * scale, unit);
    return 1;
}

/* Baseline gate: every directed headline metric within tolerance of the baseline. */
static size_t gate_against(FILE *out, const struct results *r, const struct results *base,
                           double tol, size_t *evaluated)
{
    size_t failed = 0;
    for (size_t i = 0; i < base->headline.n; i++) {
        const struct results_metric *b = &base->headline.m[i];
        const struct results_metric *m = results_table_find(&r->headline, b->key);
        if (b->better == 0 || !m || !m->s.n || !b->s.n)
            continue;
        (*evaluated)++;
        double v = m->s.mean, bv = b->s.mean;
        /* Signed worsening relative to the baseline (positive = worse). */
        double worse = b->better > 0 ? bv - v : v - bv;
        double rel = bv != 0 ? worse / fabs(bv) : (worse > 0 ? INFINITY : 0);
        if (rel > tol) {
            char a[48], c[48];
            results_format(a, sizeof(a), m, v);
            results_format(c, sizeof(c), b, bv);
            fprintf(out,
                    "FAIL against: %s = %s %s vs baseline %s %s (%.2f %% worse > tolerance "
                    "%.2f %%)\n",
                    b->key, a, m->unit, c, b->unit, rel * 100, tol * 100);
            failed++;
        }
    }
    return failed;
}

size_t check_run(FILE *out, const struct results *r, const struct results *base,
                 const struct check_gates *g, size_t *evaluated)
{
    size_t failed = 0, n = 0;
    if (!r->complete)
        fprintf(out, "note: %s is an incomplete run (interrupted)\n", r->path);
    if (!isnan(g->min_util)) {
        const char *key = g->util_kind == CHECK_UTIL_ALLOCATED ? "util_allocated"
                          : g->util_kind == CHECK_UTIL_USEFUL  ? "util_useful"
                                                               : "util_busy";
        double v = mean_of(r, key);
        if (g->util_kind == CHECK_UTIL_USEFUL && !isfinite(v)) {
            fprintf(out, "note: util_useful is not recorded; using util_busy\n");
            key = "util_busy";
            v = mean_of(r, key);
        }
        failed += gate_min(out, "min-util", key, v, g->min_util, 1, "");
        n++;
    }
    if (!isnan(g->min_slo)) {
        const char *key = "slo_share_worst_service";
        double v = mean_of(r, key);
        if (!isfinite(v)) {
            key = "slo_share";
            v = mean_of(r, key);
        }
        failed += gate_min(out, "min-slo", key, v, g->min_slo, 1, "");
        n++;
    }
    if (!isnan(g->max_ckpt_overhead)) {
        int recorded;
        double v = ckpt_overhead(r, &recorded);
        if (!recorded)
            fprintf(out, "note: no checkpoint data in the file; checkpoint overhead taken as 0\n");
        failed += gate_max(out, "max-ckpt-overhead", "checkpoint_overhead", v, g->max_ckpt_overhead,
                           1, "");
        n++;
    }
    if (!isnan(g->max_p99_ms)) {
        failed += gate_max(out, "max-p99-ms", "p99_ms_worst_service",
                           mean_of(r, "p99_ms_worst_service"), g->max_p99_ms, 1, " ms");
        n++;
    }
    if (base)
        failed += gate_against(out, r, base, g->tolerance, &n);
    if (failed)
        fprintf(out, "check: %zu of %zu gates failed\n", failed, n);
    else
        fprintf(out, "check: all %zu gates hold\n", n);
    if (evaluated)
        *evaluated = n;
    return failed;
}
