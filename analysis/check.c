/* check.c — CI gates on a results file. */
#include "analysis/check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/escape.h"
#include "analysis/compare.h"
#include "analysis/results.h"
#include "analysis/stats.h"

void check_gates_init(struct check_gates *g)
{
    memset(g, 0, sizeof(*g));
    g->min_util = g->min_slo = g->max_ckpt_overhead = g->max_p99_ms = NAN;
    g->max_queue_delay_s = g->min_train_gpuh_day = g->backlog_by_s = NAN;
    g->max_ttft_p99_ms = g->max_tpot_p99_ms = NAN;
    g->util_kind = CHECK_UTIL_BUSY;
    g->tolerance = 0;
}

int check_add_bound(struct check_gates *g, const char *kv, int dir)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || !eq[1])
        return -EINVAL;
    size_t kn = (size_t)(eq - kv);
    if (kn >= sizeof(g->bounds[0].key) || strlen(eq + 1) >= sizeof(g->bounds[0].value))
        return -EINVAL;
    if (g->nbounds >= CHECK_MAX_BOUNDS)
        return -ENOSPC;
    struct check_bound *b = &g->bounds[g->nbounds++];
    memcpy(b->key, kv, kn);
    b->key[kn] = 0;
    snprintf(b->value, sizeof(b->value), "%s", eq + 1);
    b->dir = dir;
    return 0;
}

/* A headline figure's summary over the replications (n = 0, mean NaN when absent). */
static struct stats_summary summary_of(const struct results *r, const char *key)
{
    const struct results_metric *m = results_table_find(&r->headline, key);
    struct stats_summary s = {0, NAN, NAN, NAN};
    if (m && m->s.n)
        s = m->s;
    return s;
}

/* Checkpoint overhead over the replications and whether the file recorded any checkpoint data. */
static struct stats_summary ckpt_overhead(const struct results *r, int *recorded)
{
    struct stats_summary out = summary_of(r, "checkpoint_overhead");
    *recorded = 1;
    if (isfinite(out.mean))
        return out;
    /* Older files: (checkpoint + restore + recompute) / training GPU-time, per replication. */
    static const char *const parts[] = {"checkpoint_s", "restore_s", "recompute_s"};
    const struct results_metric *train = results_table_find(&r->gpu_states, "training_s");
    double *v = calloc(r->reps ? r->reps : 1, sizeof(*v));
    int any = 0;
    for (size_t i = 0; v && i < r->reps; i++) {
        double sum = 0;
        for (size_t k = 0; k < 3; k++) {
            const struct results_metric *m = results_table_find(&r->gpu_states, parts[k]);
            if (m && m->s.n && isfinite(m->values[i])) {
                sum += m->values[i];
                any = 1;
            }
        }
        double t = train && train->s.n ? train->values[i] : NAN;
        v[i] = t > 0 ? sum / t : NAN;
    }
    if (any && v)
        stats_summarize(v, r->reps, &out);
    free(v);
    if (any && out.n)
        return out;
    *recorded = 0;
    stats_single(0, &out);
    return out;
}

static void note(struct check_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct check_list *l, const char *fmt, ...)
{
    size_t k = strlen(l->notes);
    if (k + 2 >= sizeof(l->notes))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->notes + k, sizeof(l->notes) - k - 1, fmt, ap);
    va_end(ap);
    k = strlen(l->notes);
    l->notes[k] = '\n';
    l->notes[k + 1] = 0;
}

/* Append an item; its message is formatted. Returns 0 or -ENOMEM. */
static int add(struct check_list *l, const char *gate, enum check_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add(struct check_list *l, const char *gate, enum check_status st, const char *fmt, ...)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct check_item *p = realloc(l->items, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        l->items = p;
        l->cap = cap;
    }
    struct check_item *it = &l->items[l->n++];
    memset(it, 0, sizeof(*it));
    it->value = it->lo = it->hi = it->bound = it->margin = NAN;
    it->scale = 1;
    snprintf(it->gate, sizeof(it->gate), "%s", gate);
    it->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->msg, sizeof(it->msg), fmt, ap);
    va_end(ap);
    l->o.evaluated++;
    l->o.failed += st == CHECK_FAIL;
    l->o.inconclusive += st == CHECK_INCONCLUSIVE;
    return 0;
}

/* A duration for display: "2.5 h", "40 min", "12 s". */
static void dur(char *buf, size_t n, double s)
{
    if (!isfinite(s))
        snprintf(buf, n, "-");
    else if (fabs(s) >= 3600)
        snprintf(buf, n, "%.4g h", s / 3600);
    else if (fabs(s) >= 60)
        snprintf(buf, n, "%.4g min", s / 60);
    else
        snprintf(buf, n, "%.4g s", s);
}

/* How a judged figure is shown: stored × scale with unit, or as a duration. */
struct shown {
    double scale;
    const char *unit;               /* appended as is (" ms", "%", " GPU-h/day") */
    const struct results_metric *m; /* formatted as the file's figure (results_format) */
    bool duration;
};

static void show_value(char *buf, size_t n, const struct shown *sh, double v)
{
    if (sh->duration) {
        dur(buf, n, v);
    } else if (sh->m) {
        char t[48];
        const char *u = sh->m->unit ? sh->m->unit : "";
        results_format(t, sizeof(t), sh->m, v);
        snprintf(buf, n, "%s%s%s", t, *u ? " " : "", u);
    } else {
        snprintf(buf, n, "%.4g%s", v * sh->scale, sh->unit);
    }
}

/* Store the figures behind an item (the last added). */
static void item_figures(struct check_list *l, const struct stats_summary *s, double lo, double hi,
                         double bound, int dir, double judged, const struct shown *sh)
{
    struct check_item *it = &l->items[l->n - 1];
    it->value = s->mean;
    it->lo = lo;
    it->hi = hi;
    it->bound = bound;
    it->dir = dir;
    it->n = s->n;
    it->margin = isfinite(judged) ? (judged - bound) * (dir > 0 ? 1 : -1) : NAN;
    if (sh->m) {
        it->scale = sh->m->scale;
        snprintf(it->unit, sizeof(it->unit), "%s", sh->m->unit ? sh->m->unit : "");
    } else {
        it->scale = sh->duration ? 1 : sh->scale;
        snprintf(it->unit, sizeof(it->unit), "%s", sh->duration ? "s" : sh->unit);
        char *u = it->unit;
        while (*u == ' ')
            memmove(u, u + 1, strlen(u));
    }
}

/*
 * The one judge of every figure gate: the summary s of a figure over the
 * replications against bound, at least (dir > 0) or at most (dir < 0). On the
 * mean, or, when confident, on the 95 % interval (check.h). A figure not
 * recorded (mean NaN) fails.
 */
static int judge(struct check_list *l, bool confident, const char *gate, const char *what,
                 const struct stats_summary *s, double bound, int dir, const struct shown *sh)
{
    char v[64], b[64];
    double m = s->mean;
    show_value(b, sizeof(b), sh, bound);
    if (!isfinite(m)) {
        int rc = add(l, gate, CHECK_FAIL, "FAIL %s: %s is not recorded in the file (bound %s)",
                     gate, what, b);
        if (!rc)
            item_figures(l, s, NAN, NAN, bound, dir, NAN, sh);
        return rc;
    }
    show_value(v, sizeof(v), sh, m);
    bool has_ci = s->n >= 2 && isfinite(s->ci95);
    double lo = has_ci ? m - s->ci95 : NAN, hi = has_ci ? m + s->ci95 : NAN;
    int rc;
    if (!confident) {
        bool ok = dir > 0 ? m >= bound : m <= bound;
        const char *op = dir > 0 ? (ok ? ">=" : "<") : (ok ? "<=" : ">");
        rc = add(l, gate, ok ? CHECK_PASS : CHECK_FAIL, "%s %s: %s = %s %s bound %s",
                 ok ? "PASS" : "FAIL", gate, what, v, op, b);
        if (!rc)
            item_figures(l, s, lo, hi, bound, dir, m, sh);
        return rc;
    }
    if (!has_ci) {
        rc = add(l, gate, CHECK_INCONCLUSIVE,
                 "INCONCLUSIVE %s: %s = %s: a single run has no interval to judge with "
                 "confidence (bound %s; replicate the run)",
                 gate, what, v, b);
        if (!rc)
            item_figures(l, s, lo, hi, bound, dir, NAN, sh);
        return rc;
    }
    double cons = dir > 0 ? lo : hi, opt = dir > 0 ? hi : lo;
    bool holds = dir > 0 ? cons >= bound : cons <= bound;
    bool fails = dir > 0 ? opt < bound : opt > bound;
    char a[64], c[64];
    show_value(a, sizeof(a), sh, lo);
    show_value(c, sizeof(c), sh, hi);
    enum check_status st = holds ? CHECK_PASS : fails ? CHECK_FAIL : CHECK_INCONCLUSIVE;
    const char *word = holds ? "PASS" : fails ? "FAIL" : "INCONCLUSIVE";
    const char *rel = holds   ? (dir > 0 ? "wholly >=" : "wholly <=")
                      : fails ? (dir > 0 ? "wholly <" : "wholly >")
                              : "straddles";
    rc = add(l, gate, st,
             "%s %s: %s = %s (95%% interval %s .. %s over %zu replications) %s bound %s", word,
             gate, what, v, a, c, s->n, rel, b);
    if (!rc)
        item_figures(l, s, lo, hi, bound, dir, cons, sh);
    return rc;
}

/* A bound on a figure shown as a plain number × scale with unit. */
static int gate_bound(struct check_list *l, bool confident, const char *gate, const char *what,
                      const struct stats_summary *s, double bound, int dir, double scale,
                      const char *unit)
{
    struct shown sh = {scale, unit, NULL, false};
    return judge(l, confident, gate, what, s, bound, dir, &sh);
}

static int gate_duration(struct check_list *l, bool confident, const char *gate, const char *what,
                         const struct stats_summary *s, double bound, int dir)
{
    struct shown sh = {1, "", NULL, true};
    return judge(l, confident, gate, what, s, bound, dir, &sh);
}

/*
 * The initial backlog of replication `rep` (jobs submitted at t = 0): when its
 * last job finished (*drained_s; +inf when one is still queued or running at
 * the end), how many it holds and how many were rejected. 0, -ENOENT (no /jobs)
 * or a refusal code (results_why says why). The columns are r's (results_col:
 * read once, from the file results_open opened).
 */
static int backlog_of(const struct results *r, size_t rep, double *drained_s, size_t *njobs,
                      size_t *rejected, size_t *unfinished)
{
    const double *sub = NULL, *end = NULL, *st = NULL;
    size_t n = 0, m1 = 0, m2 = 0;
    int rc = results_col(r, rep, "jobs", "submit_s", &sub, &n);
    if (!rc)
        rc = results_col(r, rep, "jobs", "end_s", &end, &m1);
    if (!rc)
        rc = results_col(r, rep, "jobs", "state", &st, &m2);
    if (!rc && (m1 != n || m2 != n))
        rc = -EIO; /* results_open checked the columns of /jobs equally long: not reached */
    *drained_s = 0;
    *njobs = *rejected = *unfinished = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (!(sub[i] <= 0))
            continue;
        ++*njobs;
        if (st[i] == 3) {
            ++*rejected;
        } else if (st[i] == 2 && isfinite(end[i])) {
            if (end[i] > *drained_s)
                *drained_s = end[i];
        } else if (st[i] == 4) {
            ++*rejected; /* OOM-killed at placement: left the backlog without running */
        } else {
            ++*unfinished;
            *drained_s = INFINITY;
        }
    }
    return rc;
}

static int gate_backlog(struct check_list *l, bool confident, const struct results *r, double bound)
{
    const char *gate = "backlog-drained-by";
    double worst = 0;
    double *per = calloc(r->reps ? r->reps : 1, sizeof(*per));
    size_t jobs = 0, rej = 0, unf = 0, nrep = 0;
    int rc = per ? 0 : -ENOMEM;
    for (size_t i = 0; i < r->reps && !rc; i++) {
        double d;
        size_t nj, nr, nu;
        rc = backlog_of(r, i, &d, &nj, &nr, &nu);
        if (rc)
            break;
        per[nrep++] = d;
        worst = d > worst ? d : worst;
        jobs += nj;
        rej += nr;
        unf += nu;
    }
    if (rc == -ENOMEM) {
        free(per);
        return rc;
    }
    if (rc == -ENOENT) {
        free(per);
        return add(l, gate, CHECK_FAIL, "FAIL %s: the file has no /jobs table", gate);
    }
    if (rc) {
        free(per);
        return add(l, gate, CHECK_FAIL, "FAIL %s: %s", gate,
                   results_why(r)[0] ? results_why(r) : "unreadable /jobs");
    }
    if (jobs == 0) {
        note(l, "note: no initial backlog (no job submitted at t = 0): drained at 0");
    }
    if (rej)
        note(l, "note: %zu backlog job%s rejected or OOM-killed at placement (never ran) left out",
             rej, rej == 1 ? "" : "s");
    struct stats_summary s;
    stats_summarize(per, nrep, &s);
    free(per);
    char b[32], a[32];
    dur(b, sizeof(b), bound);
    if (unf) {
        rc = add(l, gate, CHECK_FAIL,
                 "FAIL %s: %zu job%s of the initial backlog still queued or running at the "
                 "end of the run (bound %s)",
                 gate, unf, unf == 1 ? "" : "s", b);
        if (!rc) {
            struct check_item *it = &l->items[l->n - 1];
            it->value = INFINITY;
            it->bound = bound;
            it->dir = -1;
            it->margin = -INFINITY;
            snprintf(it->unit, sizeof(it->unit), "s");
        }
        return rc;
    }
    if (confident) {
        char what[64];
        snprintf(what, sizeof(what), "initial backlog drain time");
        return gate_duration(l, true, gate, what, &s, bound, -1);
    }
    double v = nrep ? s.mean : NAN;
    dur(a, sizeof(a), v);
    bool ok = v <= bound;
    if (nrep > 1) {
        char w[32];
        dur(w, sizeof(w), worst);
        rc = add(l, gate, ok ? CHECK_PASS : CHECK_FAIL,
                 "%s %s: initial backlog drained at %s (mean of %zu replications, latest %s) %s "
                 "bound %s",
                 ok ? "PASS" : "FAIL", gate, a, nrep, w, ok ? "<=" : ">", b);
    } else {
        rc = add(l, gate, ok ? CHECK_PASS : CHECK_FAIL,
                 "%s %s: initial backlog drained at %s %s bound %s", ok ? "PASS" : "FAIL", gate, a,
                 ok ? "<=" : ">", b);
    }
    if (!rc) {
        struct shown sh = {1, "", NULL, true};
        item_figures(l, &s, s.n >= 2 ? s.mean - s.ci95 : NAN, s.n >= 2 ? s.mean + s.ci95 : NAN,
                     bound, -1, v, &sh);
    }
    return rc;
}

/* Training work done per simulated day over the replications (mean NaN when not recorded). */
static struct stats_summary train_per_day(const struct results *r)
{
    const struct results_metric *w = results_table_find(&r->headline, "training_gpu_hours");
    const struct results_metric *d = results_table_find(&r->headline, "duration_s");
    struct stats_summary s = {0, NAN, NAN, NAN};
    if (!w || !w->s.n)
        return s;
    double *v = calloc(r->reps ? r->reps : 1, sizeof(*v));
    if (!v)
        return s;
    for (size_t i = 0; i < r->reps; i++) {
        double days = d && d->s.n ? d->values[i] / 86400 : r->duration_s / 86400;
        v[i] = isfinite(w->values[i]) && days > 0 ? w->values[i] / days : NAN;
    }
    stats_summarize(v, r->reps, &s);
    free(v);
    return s;
}

/* "90min", "2h", "1d", "30s", "45" (seconds) into seconds; 0 or -EINVAL. */
static int parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v))
        return -EINVAL;
    double k = 1;
    if (!*end || !strcmp(end, "s"))
        k = 1;
    else if (!strcmp(end, "ms"))
        k = 1e-3;
    else if (!strcmp(end, "min") || !strcmp(end, "m"))
        k = 60;
    else if (!strcmp(end, "h"))
        k = 3600;
    else if (!strcmp(end, "d"))
        k = 86400;
    else
        return -EINVAL;
    *out = v * k;
    return 0;
}

/* A generic gate's bound in the figure's stored unit. 0 or -EINVAL (err filled). */
static int bound_value(const struct results_metric *m, const struct check_bound *b, double *out,
                       char *err, size_t errlen)
{
    const char *unit = m->own_unit ? m->own_unit : (m->scale == 100 ? "1" : m->unit);
    char *end;
    errno = 0;
    double v = strtod(b->value, &end);
    bool num = !errno && end != b->value && isfinite(v);
    if (!strcmp(unit, "1") || !strcmp(unit, "%")) {
        if (num && !strcmp(end, "%")) {
            *out = v / 100;
            return 0;
        }
        if (num && !*end && v <= 1 && v >= -1) {
            *out = v;
            return 0;
        }
        snprintf(err, errlen,
                 "%s=%s: %s is a fraction; write a fraction 0..1 or a percentage (%s%%)", b->key,
                 b->value, b->key, num && !*end ? b->value : "20");
        return -EINVAL;
    }
    if (!strcmp(unit, "s")) {
        if (parse_seconds(b->value, out) == 0)
            return 0;
        snprintf(err, errlen, "%s=%s: %s is a duration; write seconds or 90min, 2h, 1d", b->key,
                 b->value, b->key);
        return -EINVAL;
    }
    if (num && !*end) {
        *out = v;
        return 0;
    }
    snprintf(err, errlen, "%s=%s: %s needs a number (in %s)", b->key, b->value, b->key,
             *unit ? unit : "its unit");
    return -EINVAL;
}

static int gate_generic(struct check_list *l, bool confident, const struct results *r,
                        const struct results_table *t, const char *where,
                        const struct check_bound *b, char *err, size_t errlen)
{
    const struct results_metric *m = results_table_find(t, b->key);
    if (!m || !m->s.n) {
        int k =
            snprintf(err, errlen, "%s: no figure '%s' in %s; it holds:", r->path, b->key, where);
        for (size_t i = 0; i < t->n && k > 0 && (size_t)k < errlen; i++)
            if (t->m[i].s.n)
                k += snprintf(err + k, errlen - (size_t)k, " %s", t->m[i].key);
        return -EINVAL;
    }
    double bound;
    int rc = bound_value(m, b, &bound, err, errlen);
    if (rc)
        return rc;
    char gate[160];
    snprintf(gate, sizeof(gate), "%s %s", b->dir > 0 ? "min" : "max", b->key);
    const char *su = m->own_unit ? m->own_unit : m->unit;
    struct shown sh = {1, "", m, su && !strcmp(su, "s")};
    if (sh.duration)
        sh.m = NULL;
    return judge(l, confident, gate, results_label(m), &m->s, bound, b->dir, &sh);
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
static int gate_against(struct check_list *l, const struct results *r, const struct results *base,
                        double tol)
{
    size_t fam = against_family(r, base);
    double conf = fam ? 1 - 0.05 / (double)fam : 0.95;
    int rc = 0;
    for (size_t i = 0; i < base->headline.n && !rc; i++) {
        const struct results_metric *b = &base->headline.m[i];
        const struct results_metric *m = results_table_find(&r->headline, b->key);
        if (b->better == 0 || !m || !m->s.n || !b->s.n)
            continue;
        struct stats_diff d;
        compare_diff(base, b, r, m, conf, &d);
        double bv = b->s.mean, scale = bv != 0 ? fabs(bv) : 1;
        double w = (b->better > 0 ? -d.diff : d.diff) / scale; /* relative worsening */
        double h = d.has_ci ? d.ci95 / scale : 0;
        char a[48], c[48], gate[160];
        results_format(a, sizeof(a), m, m->s.mean);
        results_format(c, sizeof(c), b, bv);
        snprintf(gate, sizeof(gate), "against %s", b->key);
        char iv[96];
        if (d.has_ci)
            snprintf(iv, sizeof(iv), "interval %.2f..%.2f %%, %s", (w - h) * 100, (w + h) * 100,
                     d.paired ? "paired by seed" : "Welch, unpaired");
        else
            snprintf(iv, sizeof(iv), "single run: compared by value");
        if (w - h > tol)
            rc = add(l, gate, CHECK_FAIL,
                     "FAIL against: %s = %s %s vs baseline %s %s: worse by %.2f %% (%s) > "
                     "tolerance %.2f %%",
                     b->key, a, m->unit, c, b->unit, w * 100, iv, tol * 100);
        else if (w + h > tol)
            rc = add(l, gate, CHECK_INCONCLUSIVE,
                     "INCONCLUSIVE against: %s = %s %s vs baseline %s %s: worse by %.2f %% (%s) "
                     "straddles tolerance %.2f %%",
                     b->key, a, m->unit, c, b->unit, w * 100, iv, tol * 100);
        else
            rc = add(l, gate, CHECK_PASS,
                     "PASS against: %s = %s %s vs baseline %s %s: worse by %.2f %% (%s) within "
                     "tolerance %.2f %%",
                     b->key, a, m->unit, c, b->unit, w * 100, iv, tol * 100);
    }
    return rc;
}

int check_evaluate(const struct results *r, const struct results *base, const struct check_gates *g,
                   struct check_list *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    int rc = 0;
    if (!r->complete)
        note(l, "note: %s is an incomplete run (interrupted)", r->path);
    bool cf = g->confident;
    if (!isnan(g->min_util)) {
        const char *key = g->util_kind == CHECK_UTIL_ALLOCATED ? "util_allocated"
                          : g->util_kind == CHECK_UTIL_USEFUL  ? "util_useful"
                                                               : "util_busy";
        struct stats_summary v = summary_of(r, key);
        if (g->util_kind == CHECK_UTIL_USEFUL && !isfinite(v.mean)) {
            note(l, "note: util_useful is not recorded; using util_busy");
            key = "util_busy";
            v = summary_of(r, key);
        }
        rc = rc ? rc : gate_bound(l, cf, "min-util", key, &v, g->min_util, 1, 1, "");
    }
    if (!isnan(g->min_slo)) {
        const char *key = "slo_share_worst_service";
        struct stats_summary v = summary_of(r, key);
        if (!isfinite(v.mean)) {
            key = "slo_share";
            v = summary_of(r, key);
        }
        rc = rc ? rc : gate_bound(l, cf, "min-slo", key, &v, g->min_slo, 1, 1, "");
    }
    if (!isnan(g->max_ckpt_overhead)) {
        int recorded;
        struct stats_summary v = ckpt_overhead(r, &recorded);
        if (!recorded)
            note(l, "note: no checkpoint data in the file; checkpoint overhead taken as 0");
        rc = rc ? rc
                : gate_bound(l, cf, "max-ckpt-overhead", "checkpoint_overhead", &v,
                             g->max_ckpt_overhead, -1, 1, "");
    }
    if (!isnan(g->max_p99_ms)) {
        struct stats_summary v = summary_of(r, "p99_ms_worst_service");
        rc = rc ? rc
                : gate_bound(l, cf, "max-p99-ms", "p99_ms_worst_service", &v, g->max_p99_ms, -1, 1,
                             " ms");
    }
    if (!isnan(g->max_ttft_p99_ms)) {
        struct stats_summary v = summary_of(r, "ttft_p99_ms_worst_service");
        rc = rc ? rc
                : gate_bound(l, cf, "max-ttft-p99", "ttft_p99_ms_worst_service", &v,
                             g->max_ttft_p99_ms, -1, 1, " ms");
    }
    if (!isnan(g->max_tpot_p99_ms)) {
        struct stats_summary v = summary_of(r, "tpot_p99_ms_worst_service");
        rc = rc ? rc
                : gate_bound(l, cf, "max-tpot-p99", "tpot_p99_ms_worst_service", &v,
                             g->max_tpot_p99_ms, -1, 1, " ms");
    }
    const struct results_table *bt = &r->headline;
    char where[192] = "/summary";
    if (g->queue[0]) {
        const struct results_service *q = NULL;
        for (size_t i = 0; i < r->nqueues; i++)
            if (!strcmp(r->queues[i].name, g->queue))
                q = &r->queues[i];
        if (!q) {
            int k =
                snprintf(err, errlen, "%s: no queue '%s' in /queues; it holds:", r->path, g->queue);
            for (size_t i = 0; i < r->nqueues && k > 0 && (size_t)k < errlen; i++)
                k += snprintf(err + k, errlen - (size_t)k, " %s", r->queues[i].name);
            if (r->nqueues == 0 && k > 0 && (size_t)k < errlen)
                snprintf(err + k, errlen - (size_t)k,
                         " none (a kueue run with manifests "
                         "writes them)");
            return -EINVAL;
        }
        bt = &q->t;
        snprintf(where, sizeof(where), "/queues/%s", g->queue);
    }
    if (!isnan(g->max_queue_delay_s) && g->queue[0]) {
        const struct results_metric *m = results_table_find(bt, "delay_mean_s");
        struct stats_summary v = {0, NAN, NAN, NAN};
        if (m && m->s.n)
            v = m->s;
        char gate[192];
        snprintf(gate, sizeof(gate), "max-queue-delay %s", g->queue);
        rc = rc ? rc : gate_duration(l, cf, gate, "delay_mean_s", &v, g->max_queue_delay_s, -1);
    } else if (!isnan(g->max_queue_delay_s)) {
        struct stats_summary v = summary_of(r, "queue_delay_mean_s");
        rc = rc ? rc
                : gate_duration(l, cf, "max-queue-delay", "queue_delay_mean_s", &v,
                                g->max_queue_delay_s, -1);
    }
    if (!isnan(g->min_train_gpuh_day)) {
        struct stats_summary v = train_per_day(r);
        rc = rc ? rc
                : gate_bound(l, cf, "min-training-gpu-h-per-day", "training_gpu_hours per day", &v,
                             g->min_train_gpuh_day, 1, 1, " GPU-h/day");
    }
    if (!isnan(g->backlog_by_s))
        rc = rc ? rc : gate_backlog(l, cf, r, g->backlog_by_s);
    for (size_t i = 0; i < g->nbounds && !rc; i++)
        rc = gate_generic(l, cf, r, bt, where, &g->bounds[i], err, errlen);
    if (base && !rc)
        rc = gate_against(l, r, base, g->tolerance);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    return rc;
}

void check_list_release(struct check_list *l)
{
    free(l->items);
    memset(l, 0, sizeof(*l));
}

void check_print_text(FILE *out, const struct check_list *l)
{
    fputs(l->notes, out);
    for (size_t i = 0; i < l->n; i++)
        if (l->items[i].status != CHECK_PASS)
            fprintf(out, "%s\n", l->items[i].msg);
    const struct check_outcome *o = &l->o;
    if (o->failed)
        fprintf(out, "check: %zu of %zu gates failed", o->failed, o->evaluated);
    else if (o->inconclusive)
        fprintf(out, "check: no gate failed, %zu of %zu inconclusive", o->inconclusive,
                o->evaluated);
    else
        fprintf(out, "check: all %zu gates hold", o->evaluated);
    if (o->failed && o->inconclusive)
        fprintf(out, ", %zu inconclusive", o->inconclusive);
    fputs("\n", out);
}

/* XML text or attribute value: &<>"' escaped, control characters (not allowed in XML 1.0) as '?'.
 */
void check_print_junit_suite(FILE *out, const struct check_list *l, const struct results *r,
                             const char *name)
{
    const struct check_outcome *o = &l->o;
    size_t errors = !r->complete;
    size_t skipped = o->inconclusive;
    char classname[300];
    snprintf(classname, sizeof(classname), "tidesim.check.%s",
             r->scenario_name ? r->scenario_name : "results");
    fputs("  <testsuite name=\"", out);
    esc_xml(out, name ? name : r->path);
    fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n",
            o->evaluated + errors, o->failed, errors, skipped);
    fputs("    <properties>\n", out);
    const char *const keys[] = {"scenario", "policy", "tidesim_version", "git_commit"};
    const char *const vals[] = {r->scenario_name, r->policy, r->version, r->git_commit};
    for (size_t i = 0; i < 4; i++) {
        fprintf(out, "      <property name=\"%s\" value=\"", keys[i]);
        esc_xml(out, vals[i] ? vals[i] : "-");
        fputs("\"/>\n", out);
    }
    fprintf(out, "      <property name=\"replications\" value=\"%zu\"/>\n", r->reps);
    fputs("    </properties>\n", out);
    if (errors) {
        fputs("    <testcase name=\"complete run\" classname=\"", out);
        esc_xml(out, classname);
        fputs("\">\n      <error message=\"", out);
        esc_xml(out, r->path);
        fputs(" is an incomplete (interrupted) run: its figures cover only part of the "
              "scenario\" type=\"incomplete\"/>\n    </testcase>\n",
              out);
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct check_item *it = &l->items[i];
        fputs("    <testcase name=\"", out);
        esc_xml(out, it->gate);
        fputs("\" classname=\"", out);
        esc_xml(out, classname);
        fputs("\">\n", out);
        if (it->status == CHECK_FAIL) {
            fputs("      <failure message=\"", out);
            esc_xml(out, it->msg);
            fputs("\" type=\"gate\">", out);
            esc_xml(out, it->msg);
            fputs("</failure>\n", out);
        } else if (it->status == CHECK_INCONCLUSIVE) {
            fputs("      <skipped message=\"", out);
            esc_xml(out, it->msg);
            fputs("\"/>\n", out);
        }
        fputs("      <system-out>", out);
        esc_xml(out, it->msg);
        fputs("</system-out>\n    </testcase>\n", out);
    }
    if (l->notes[0]) {
        fputs("    <system-out>", out);
        esc_xml(out, l->notes);
        fputs("</system-out>\n", out);
    }
    fputs("  </testsuite>\n", out);
}

void check_print_junit(FILE *out, const struct check_list *l, const struct results *r)
{
    const struct check_outcome *o = &l->o;
    size_t errors = !r->complete;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out,
            "<testsuites name=\"tidesim check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "skipped=\"%zu\">\n",
            o->evaluated + errors, o->failed, errors, o->inconclusive);
    check_print_junit_suite(out, l, r, NULL);
    fputs("</testsuites>\n", out);
}

size_t check_run(FILE *out, const struct results *r, const struct results *base,
                 const struct check_gates *g, struct check_outcome *res)
{
    struct check_list l;
    char err[2048] = "";
    int rc = check_evaluate(r, base, g, &l, err, sizeof(err));
    if (rc)
        fprintf(out, "error: %s\n", err);
    else
        check_print_text(out, &l);
    struct check_outcome o = l.o;
    check_list_release(&l);
    if (res)
        *res = o;
    return o.failed;
}
