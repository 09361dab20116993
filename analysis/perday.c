/* perday.c — per-day figures from a results file's time series (perday.h). */
#include "analysis/perday.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/stats.h"
#include "analysis/texttable.h"

#define DAY_S 86400.0

struct acc {
    double len, busy, alloc, within, decided, train;
};

/* Columns of one group, all of length *n (absent ones NULL). */
static int read_cols(struct h5_rd *rd, hid_t g, const char *const *names, double **cols, size_t k,
                     size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < k; i++)
        cols[i] = NULL; /* all of them: the caller frees every one, also after a refusal */
    for (size_t i = 0; i < k; i++) {
        size_t m = 0;
        int rc = h5_rd_f64(rd, g, names[i], &cols[i], &m);
        if (rc == -ENOENT)
            continue;
        if (rc)
            return rc;
        if (i > 0 && *n && m != *n)
            return h5_rd_fail(rd, -EIO, "%s: %zu rows, expected %zu", names[i], m, *n);
        *n = m;
    }
    return 0;
}

/* Add one run (root: the file or /repNNNN) to acc[0..ndays). */
static int add_run(struct h5_rd *rd, hid_t root, double gpus, struct acc **acc, size_t *ndays)
{
    static const char *const ts[] = {"time_s", "util_busy", "util_allocated", "share_training"};
    double *c[4];
    size_t n;
    hid_t g = h5_rd_group(rd, root, "timeseries");
    if (g < 0)
        return rd->rc ? rd->rc : h5_rd_fail(rd, -EINVAL, "/timeseries: missing");
    int rc = read_cols(rd, g, ts, c, 4, &n);
    H5Gclose(g);
    if (!rc && (!c[0] || !c[1] || !c[2]))
        rc = h5_rd_fail(rd, -EINVAL, "/timeseries: time_s, util_busy or util_allocated missing");
    size_t days = n ? (size_t)ceil(c[0][n - 1] / DAY_S - 1e-9) : 0;
    if (!rc && days > *ndays) {
        struct acc *a = realloc(*acc, days * sizeof(*a));
        if (!a) {
            rc = -ENOMEM;
        } else {
            memset(a + *ndays, 0, (days - *ndays) * sizeof(*a));
            *acc = a;
            *ndays = days;
        }
    }
    double prev = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        double t = c[0][i], len = t - prev;
        size_t d = t > 0 ? (size_t)ceil(t / DAY_S - 1e-9) - 1 : 0;
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
    for (size_t k = 0; k < 4; k++)
        free(c[k]);
    if (rc)
        return rc;

    /* Services: within / decided per day. */
    hid_t sv = h5_rd_group(rd, root, "services");
    if (sv < 0)
        return rd->rc;
    hsize_t nobj = 0;
    H5G_info_t info;
    if (H5Gget_info(sv, &info) >= 0)
        nobj = info.nlinks;
    for (hsize_t k = 0; !rc && k < nobj; k++) {
        char name[256];
        if (H5Lget_name_by_idx(sv, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof(name),
                               H5P_DEFAULT) < 0)
            continue;
        hid_t s = h5_rd_group(rd, sv, name);
        hid_t st = s >= 0 ? h5_rd_group(rd, s, "timeseries") : H5I_INVALID_HID;
        if (st >= 0) {
            static const char *const cols[] = {"time_s", "within_slo", "served", "dropped",
                                               "failed"};
            double *v[5];
            size_t m;
            rc = read_cols(rd, st, cols, v, 5, &m);
            for (size_t i = 0; !rc && v[0] && v[1] && v[2] && i < m; i++) {
                double t = v[0][i];
                size_t d = t > 0 ? (size_t)ceil(t / DAY_S - 1e-9) - 1 : 0;
                if (d >= *ndays)
                    continue;
                (*acc)[d].within += v[1][i];
                (*acc)[d].decided += v[2][i] + (v[3] ? v[3][i] : 0) + (v[4] ? v[4][i] : 0);
            }
            for (size_t j = 0; j < 5; j++)
                free(v[j]);
            H5Gclose(st);
        }
        if (s >= 0)
            H5Gclose(s);
        rc = rc ? rc : rd->rc;
    }
    H5Gclose(sv);
    return rc;
}

static double run_gpus(struct h5_rd *rd, hid_t root)
{
    double g = NAN;
    hid_t s = h5_rd_group(rd, root, "summary");
    if (s >= 0) {
        if (h5_rd_attr_double(rd, s, "gpus", &g))
            g = NAN;
        H5Gclose(s);
    }
    return g;
}

/* The per-day figures of f, just opened for session rd; closes f. */
static int read_file(struct h5_rd *rd, hid_t f, const char *path, struct perday *out, char *err,
                     size_t errlen)
{
    size_t reps = 0;
    char name[32];
    for (;; reps++) {
        snprintf(name, sizeof(name), "rep%04zu", reps);
        if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
            break;
    }
    bool replicated = reps > 0;
    if (!replicated)
        reps = 1;
    struct acc **per = calloc(reps, sizeof(*per));
    size_t *nd = calloc(reps, sizeof(*nd));
    int rc = per && nd ? 0 : -ENOMEM;
    for (size_t r = 0; !rc && r < reps; r++) {
        hid_t root = f;
        if (replicated) {
            snprintf(name, sizeof(name), "rep%04zu", r);
            root = h5_rd_group(rd, f, name);
            if (root < 0) {
                rc = rd->rc ? rd->rc : -EINVAL;
                break;
            }
        }
        rc = add_run(rd, root, run_gpus(rd, root), &per[r], &nd[r]);
        if (replicated)
            H5Gclose(root);
        if (nd[r] > out->ndays)
            out->ndays = nd[r];
    }
    H5Fclose(f);
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
        for (size_t r = 0; r < reps; r++) {
            const struct acc *a = d < nd[r] ? &per[r][d] : NULL;
            size_t k = d * reps + r;
            bool any = a && a->len > 0;
            out->busy[k] = any ? a->busy / a->len : NAN;
            out->alloc[k] = any ? a->alloc / a->len : NAN;
            out->train_gpu_h[k] = any ? a->train : NAN;
            out->slo[k] = a && a->decided > 0 ? a->within / a->decided : NAN;
            if (any && a->len / 3600 > out->day_h[d])
                out->day_h[d] = a->len / 3600;
        }
    for (size_t r = 0; per && r < reps; r++)
        free(per[r]);
    free(per);
    free(nd);
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "%s: out of memory", path);
        else
            snprintf(err, errlen, "%s: %s", path,
                     rd->why[0] ? rd->why : "cannot read the time series");
        perday_release(out);
    }
    return rc;
}

int perday_read(const char *path, struct perday *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    h5io_quiet();
    struct h5_rd rd;
    hid_t f = h5_rd_open(&rd, path);
    if (f < 0) {
        snprintf(err, errlen, "%s: %s", path, rd.why[0] ? rd.why : "cannot open");
        return -ENOENT;
    }
    return read_file(&rd, f, path, out, err, errlen);
}

int perday_read_results(const struct results *r, struct perday *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    h5io_quiet();
    struct h5_rd rd;
    hid_t f = results_reopen(r, &rd);
    if (f < 0) {
        snprintf(err, errlen, "%s: %s", r->path, rd.why[0] ? rd.why : "cannot open");
        return -ENOENT;
    }
    return read_file(&rd, f, r->path, out, err, errlen);
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
