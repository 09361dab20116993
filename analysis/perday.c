/* perday.c — per-day figures from a results file's time series (perday.h). */
#include "analysis/perday.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "analysis/texttable.h"

#define DAY_S 86400.0
/* Days a per-day table may hold: a run lasts at most 100 Julian years (36,525 days; the
 * scenario loader's limit, docs/security.md). A file's times are not trusted: past this
 * they are refused, not cast (a double past SIZE_MAX made an integer is undefined). */
#define MAX_DAYS 36526.0

/* The day (0, 1, ...) of the sample that ends at t: 0 for t <= 0 (or NaN), SIZE_MAX for
 * none (t within 1e-9 day of 0, or past MAX_DAYS). */
static size_t day_of(double t)
{
    if (!(t > 0))
        return 0;
    double d = ceil(t / DAY_S - 1e-9) - 1;
    return d >= 0 && d < MAX_DAYS ? (size_t)d : SIZE_MAX;
}

struct acc {
    double len, busy, alloc, within, decided, train;
};

/*
 * Columns of table `group` of replication rep (results_col: read once, kept by
 * r), all of length *n (absent ones NULL). 0, or the refusal.
 */
static int read_cols(const struct results *r, size_t rep, const char *group,
                     const char *const *names, const double **cols, size_t k, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < k; i++)
        cols[i] = NULL;
    for (size_t i = 0; i < k; i++) {
        size_t m = 0;
        int rc = results_col(r, rep, group, names[i], &cols[i], &m);
        if (rc == -ENOENT)
            continue;
        if (rc)
            return rc;
        if (i > 0 && *n && m != *n)
            return -EIO; /* results_open checked the columns equally long: not reached */
        *n = m;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const struct results_service *const *)a)->name,
                  (*(const struct results_service *const *)b)->name);
}

/* Add replication rep to acc[0..ndays). */
static int add_run(const struct results *r, size_t rep, struct acc **acc, size_t *ndays)
{
    static const char *const ts[] = {"time_s", "util_busy", "util_allocated", "share_training"};
    const double *c[4];
    size_t n;
    double gpus = r->rep_gpus ? r->rep_gpus[rep] : NAN;
    int rc = read_cols(r, rep, "timeseries", ts, c, 4, &n);
    if (!rc && (!c[0] || !c[1] || !c[2]))
        rc = -EINVAL; /* no /timeseries, or time_s, util_busy or util_allocated missing */
    if (rc)
        return rc;
    double last = n ? c[0][n - 1] : 0;
    if (last > MAX_DAYS * DAY_S)
        return -ERANGE;
    size_t days = last > 0 ? (size_t)ceil(last / DAY_S - 1e-9) : 0;
    if (days > *ndays) {
        struct acc *a = realloc(*acc, days * sizeof(*a));
        if (!a)
            return -ENOMEM;
        memset(a + *ndays, 0, (days - *ndays) * sizeof(*a));
        *acc = a;
        *ndays = days;
    }
    double prev = 0;
    for (size_t i = 0; i < n; i++) {
        double t = c[0][i], len = t - prev;
        size_t d = day_of(t);
        prev = t;
        if (!(len > 0) || d >= *ndays)
            continue;
        struct acc *a = &(*acc)[d];
        a->len += len;
        a->busy += c[1][i] * len;
        a->alloc += c[2][i] * len;
        if (c[3])
            a->train += c[3][i] * gpus * len / 3600;
    }

    /* Services: within / decided per day, every service results_open found, in the order of
     * their names (HDF5's name index: the order the sums were always made in). */
    const struct results_service **by = calloc(r->nsvcs ? r->nsvcs : 1, sizeof(*by));
    if (!by)
        return -ENOMEM;
    for (size_t k = 0; k < r->nsvcs; k++)
        by[k] = &r->svcs[k];
    qsort(by, r->nsvcs, sizeof(*by), by_name);
    for (size_t k = 0; !rc && k < r->nsvcs; k++) {
        static const char *const cols[] = {"time_s", "within_slo", "served", "dropped", "failed"};
        char group[600];
        if (snprintf(group, sizeof(group), "services/%s/timeseries", by[k]->name) >=
            (int)sizeof(group))
            continue;
        const double *v[5];
        size_t m;
        rc = read_cols(r, rep, group, cols, v, 5, &m);
        for (size_t i = 0; !rc && v[0] && v[1] && v[2] && i < m; i++) {
            double t = v[0][i];
            size_t d = day_of(t);
            if (d >= *ndays)
                continue;
            (*acc)[d].within += v[1][i];
            (*acc)[d].decided += v[2][i] + (v[3] ? v[3][i] : 0) + (v[4] ? v[4][i] : 0);
        }
    }
    free(by);
    return rc;
}

int perday_read_results(const struct results *r, struct perday *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    size_t reps = r->reps ? r->reps : 1;
    struct acc **per = calloc(reps, sizeof(*per));
    size_t *nd = calloc(reps, sizeof(*nd));
    int rc = per && nd ? 0 : -ENOMEM;
    for (size_t k = 0; !rc && k < reps; k++) {
        rc = add_run(r, k, &per[k], &nd[k]);
        if (nd[k] > out->ndays)
            out->ndays = nd[k];
    }
    size_t D = out->ndays;
    out->reps = reps;
    if (!rc) {
        out->day_h = calloc(D ? D : 1, sizeof(double));
        out->busy = calloc(D * reps + 1, sizeof(double));
        out->alloc = calloc(D * reps + 1, sizeof(double));
        out->slo = calloc(D * reps + 1, sizeof(double));
        out->train_gpu_h = calloc(D * reps + 1, sizeof(double));
        if (!out->day_h || !out->busy || !out->alloc || !out->slo || !out->train_gpu_h)
            rc = -ENOMEM;
    }
    for (size_t d = 0; !rc && d < D; d++)
        for (size_t k = 0; k < reps; k++) {
            const struct acc *a = d < nd[k] ? &per[k][d] : NULL;
            size_t i = d * reps + k;
            bool any = a && a->len > 0;
            out->busy[i] = any ? a->busy / a->len : NAN;
            out->alloc[i] = any ? a->alloc / a->len : NAN;
            out->train_gpu_h[i] = any ? a->train : NAN;
            out->slo[i] = a && a->decided > 0 ? a->within / a->decided : NAN;
            if (any && a->len / 3600 > out->day_h[d])
                out->day_h[d] = a->len / 3600;
        }
    for (size_t k = 0; per && k < reps; k++)
        free(per[k]);
    free(per);
    free(nd);
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "%s: out of memory", r->path);
        else if (rc == -ERANGE)
            snprintf(err, errlen,
                     "%s: /timeseries: time_s goes past 100 years (36,525 days), longer than "
                     "any run",
                     r->path);
        else if (rc == -EINVAL || rc == -ENOENT)
            snprintf(err, errlen, "%s: /timeseries: time_s, util_busy or util_allocated missing",
                     r->path);
        else
            snprintf(err, errlen, "%s: %s", r->path,
                     results_why(r)[0] ? results_why(r) : "cannot read the time series");
        perday_release(out);
    }
    return rc;
}

int perday_read(const char *path, struct perday *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct results r;
    int rc = results_open_for(&r, path, RESULTS_BY_REPORT, err, errlen);
    if (rc)
        return rc;
    rc = perday_read_results(&r, out, err, errlen);
    results_release(&r);
    return rc;
}

void perday_release(struct perday *p)
{
    free(p->day_h);
    free(p->busy);
    free(p->alloc);
    free(p->slo);
    free(p->train_gpu_h);
    memset(p, 0, sizeof(*p));
}

/* "mean" or "mean ± ci95" of v[0..n) scaled (NaN skipped), or "-". */
static void cell(char *buf, size_t len, const double *v, size_t n, double scale, int prec)
{
    struct stats_summary s;
    stats_summarize(v, n, &s);
    if (s.n == 0)
        snprintf(buf, len, "-");
    else if (s.n >= 2 && isfinite(s.ci95))
        snprintf(buf, len, "%.*f ± %.*f", prec, s.mean * scale, prec, s.ci95 * scale);
    else
        snprintf(buf, len, "%.*f", prec, s.mean * scale);
}

int perday_print(FILE *out, const struct perday *p, bool md, int indent)
{
    static const char *const hdr[] = {"day",         "hours",        "busy %",
                                      "allocated %", "within SLO %", "training GPU-h"};
    struct texttable tt;
    texttable_init(&tt, 6);
    texttable_row(&tt, hdr);
    for (size_t d = 0; d < p->ndays; d++) {
        char c[6][64];
        const char *row[6] = {c[0], c[1], c[2], c[3], c[4], c[5]};
        const size_t R = p->reps, k = d * R;
        snprintf(c[0], sizeof(c[0]), "%zu", d);
        snprintf(c[1], sizeof(c[1]), "%.4g", p->day_h[d]);
        cell(c[2], sizeof(c[2]), p->busy + k, R, 100, 1);
        cell(c[3], sizeof(c[3]), p->alloc + k, R, 100, 1);
        cell(c[4], sizeof(c[4]), p->slo + k, R, 100, 2);
        cell(c[5], sizeof(c[5]), p->train_gpu_h + k, R, 1, 1);
        texttable_row(&tt, row);
    }
    int rc = texttable_print(&tt, out, md, indent);
    texttable_release(&tt);
    return rc;
}

int perday_print_side_by_side(FILE *out, const struct results *const *r, size_t n, bool md,
                              int indent)
{
    struct perday *p = calloc(n ? n : 1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    size_t days = 0, ok = 0;
    char err[512];
    for (size_t f = 0; f < n; f++)
        if (perday_read_results(r[f], &p[f], err, sizeof(err)) == 0) {
            ok++;
            days = p[f].ndays > days ? p[f].ndays : days;
        }
    int rc = 0;
    if (ok == n && days >= 2) {
        size_t ncols = 1 + 2 * n;
        char(*c)[64] = calloc(ncols, sizeof(*c));
        const char **row = calloc(ncols, sizeof(*row));
        struct texttable tt;
        texttable_init(&tt, ncols);
        if (!c || !row)
            rc = -ENOMEM;
        for (size_t k = 0; !rc && k < ncols; k++)
            row[k] = c[k];
        if (!rc) {
            snprintf(c[0], sizeof(c[0]), "day");
            for (size_t f = 0; f < n; f++) {
                char id = (char)('A' + (f < 26 ? f : 25));
                snprintf(c[1 + f], sizeof(c[0]), "%c busy %%", id);
                snprintf(c[1 + n + f], sizeof(c[0]), "%c within SLO %%", id);
            }
            texttable_row(&tt, row);
        }
        for (size_t d = 0; !rc && d < days; d++) {
            snprintf(c[0], sizeof(c[0]), "%zu", d);
            for (size_t f = 0; f < n; f++) {
                const struct perday *q = &p[f];
                bool has = d < q->ndays;
                if (has) {
                    cell(c[1 + f], sizeof(c[0]), q->busy + d * q->reps, q->reps, 100, 1);
                    cell(c[1 + n + f], sizeof(c[0]), q->slo + d * q->reps, q->reps, 100, 2);
                } else {
                    snprintf(c[1 + f], sizeof(c[0]), "-");
                    snprintf(c[1 + n + f], sizeof(c[0]), "-");
                }
            }
            texttable_row(&tt, row);
        }
        if (!rc) {
            fprintf(out, "\n%sper day (simulated days from t = 0, whole run)\n", md ? "### " : "");
            rc = texttable_print(&tt, out, md, indent);
        }
        texttable_release(&tt);
        free(c);
        free(row);
    }
    for (size_t f = 0; f < n; f++)
        perday_release(&p[f]);
    free(p);
    return rc;
}
