/* check.c — CI gates on a results file. */
#include "analysis/check.h"

#include <math.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/results.h"
#include "analysis/stats.h"

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

/* Headline metrics with a direction present in both files: the family of the baseline gate. */
static size_t against_family(const struct results *r, const struct results *base)
{
    size_t n = 0;
    for (size_t i = 0; i < base->headline.n; i++) {
        const struct results_metric *b = &base->headline.m[i];
        const struct results_metric *m = results_table_find(&r->headline, b->key);
        n += b->better != 0 && m && m->s.n && b->s.n;
    }
    return n;
}

/*
 * Baseline gate: is any directed headline metric worse than the baseline's
 * by more than the tolerance, with significance? The worsening (positive =
 * worse, relative to the baseline's mean) has an interval from compare_diff
 * (paired by seed, else Welch) at a Bonferroni-corrected level, so the
 * family of metrics keeps a 5 % false-alarm rate: beyond the tolerance as a
 * whole -> fail; within it as a whole -> holds; straddling -> inconclusive.
 * Without an interval (a single run on either side) the values are compared
 * as they are.
 */
static void gate_against(FILE *out, const struct results *r, const struct results *base, double tol,
                         struct check_outcome *o)
{
    size_t fam = against_family(r, base);
    double conf = fam ? 1 - 0.05 / (double)fam : 0.95;
    for (size_t i = 0; i < base->headline.n; i++) {
        const struct results_metric *b = &base->headline.m[i];
        const struct results_metric *m = results_table_find(&r->headline, b->key);
        if (b->better == 0 || !m || !m->s.n || !b->s.n)
            continue;
        o->evaluated++;
        struct stats_diff d;
        compare_diff(base, b, r, m, conf, &d);
        double bv = b->s.mean, scale = bv != 0 ? fabs(bv) : 1;
        double w = (b->better > 0 ? -d.diff : d.diff) / scale; /* relative worsening */
        double h = d.has_ci ? d.ci95 / scale : 0;
        char a[48], c[48];
        results_format(a, sizeof(a), m, m->s.mean);
        results_format(c, sizeof(c), b, bv);
        char iv[96];
        if (d.has_ci)
            snprintf(iv, sizeof(iv), "interval %.2f..%.2f %%, %s", (w - h) * 100, (w + h) * 100,
                     d.paired ? "paired by seed" : "Welch, unpaired");
        else
            snprintf(iv, sizeof(iv), "single run: compared by value");
        if (w - h > tol) {
            fprintf(out,
                    "FAIL against: %s = %s %s vs baseline %s %s: worse by %.2f %% (%s) > "
                    "tolerance %.2f %%\n",
                    b->key, a, m->unit, c, b->unit, w * 100, iv, tol * 100);
            o->failed++;
        } else if (w + h > tol) {
            fprintf(out,
                    "INCONCLUSIVE against: %s = %s %s vs baseline %s %s: worse by %.2f %% (%s) "
                    "straddles tolerance %.2f %%\n",
                    b->key, a, m->unit, c, b->unit, w * 100, iv, tol * 100);
            o->inconclusive++;
        }
    }
}

size_t check_run(FILE *out, const struct results *r, const struct results *base,
                 const struct check_gates *g, struct check_outcome *res)
{
    size_t failed = 0, n = 0;
    struct check_outcome o = {0, 0, 0};
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
        gate_against(out, r, base, g->tolerance, &o);
    o.evaluated += n;
    o.failed += failed;
    if (o.failed)
        fprintf(out, "check: %zu of %zu gates failed", o.failed, o.evaluated);
    else if (o.inconclusive)
        fprintf(out, "check: no gate failed, %zu of %zu inconclusive", o.inconclusive, o.evaluated);
    else
        fprintf(out, "check: all %zu gates hold", o.evaluated);
    if (o.failed && o.inconclusive)
        fprintf(out, ", %zu inconclusive", o.inconclusive);
    fputs("\n", out);
    if (res)
        *res = o;
    return o.failed;
}
