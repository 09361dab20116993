/* sweepidx.c — a sweep's index file: write, check, print (sweepidx.h). */
#include "analysis/sweepidx.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/escape.h"
#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/results.h"
#include "analysis/texttable.h"

const char *const sweepidx_metrics[] = {
    "util_busy",          "util_allocated", "slo_share",        "p99_ms_worst_service",
    "training_gpu_hours", "cost_total",     "share_fragmented", NULL};

#define NMETRICS (sizeof(sweepidx_metrics) / sizeof(sweepidx_metrics[0]) - 1)

/* malloc'd "dir/name". */
static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *s = malloc(a + b + 2);
    if (s) {
        memcpy(s, dir, a);
        s[a] = '/';
        memcpy(s + a + 1, name, b + 1);
    }
    return s;
}

/* The metric columns: means[m][p], ci[m][p] (NaN when absent), present[m]. */
struct cols {
    double *means[NMETRICS], *ci[NMETRICS];
    bool present[NMETRICS];
};

static void cols_free(struct cols *c)
{
    for (size_t m = 0; m < NMETRICS; m++) {
        free(c->means[m]);
        free(c->ci[m]);
    }
}

static int read_points(const struct sweepidx_desc *d, struct cols *c, char *err, size_t errlen)
{
    for (size_t m = 0; m < NMETRICS; m++) {
        c->means[m] = malloc(d->npoints * sizeof(double));
        c->ci[m] = malloc(d->npoints * sizeof(double));
        if (!c->means[m] || !c->ci[m]) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        for (size_t p = 0; p < d->npoints; p++)
            c->means[m][p] = c->ci[m][p] = NAN;
    }
    for (size_t p = 0; p < d->npoints; p++) {
        if (!d->done[p])
            continue;
        char *path = join(d->dir, d->files[p]);
        if (!path) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        struct results r;
        int rc = results_open(&r, path, err, errlen);
        free(path);
        if (rc)
            return rc;
        for (size_t m = 0; m < NMETRICS; m++) {
            const struct results_metric *rm = results_table_find(&r.headline, sweepidx_metrics[m]);
            if (!rm || rm->s.n == 0)
                continue;
            c->present[m] = true;
            c->means[m][p] = rm->s.mean;
            c->ci[m][p] = rm->s.ci95;
        }
        results_release(&r);
    }
    return 0;
}

static int write_meta(hid_t file, const struct sweepidx_desc *d, size_t ndone)
{
    hid_t g = h5_group_create(file, "meta");
    if (g < 0)
        return h5io_fail();
    int rc = h5_attr_str(g, "kind", SWEEPIDX_KIND);
    rc = rc ? rc : h5_attr_int(g, "index_schema", 1);
    rc = rc ? rc : h5_attr_int(g, "complete", ndone == d->npoints);
    rc = rc ? rc : h5_attr_int(g, "points", (int64_t)d->npoints);
    rc = rc ? rc : h5_attr_int(g, "points_done", (int64_t)ndone);
    rc = rc ? rc : h5_attr_int(g, "replications", d->replications);
    rc = rc ? rc : h5_attr_str(g, "mode", d->mode);
    rc = rc ? rc : h5_attr_int(g, "axes", (int64_t)d->naxes);
    for (size_t a = 0; !rc && a < d->naxes; a++) {
        char name[32];
        snprintf(name, sizeof(name), "axis_%zu", a);
        rc = h5_attr_str(g, name, d->axes[a]);
    }
    rc = rc ? rc : h5_attr_str(g, "hash", d->hash);
    rc = rc ? rc : h5_attr_str(g, "sweep_path", d->sweep_path);
    rc = rc ? rc : h5_attr_str(g, "sweep_text", d->sweep_text);
    rc = rc ? rc : h5_attr_str(g, "base_path", d->base_path);
    rc = rc ? rc : h5_attr_str(g, "base_text", d->base_text);
    rc = rc ? rc : h5_attr_str(g, "tidesim_version", d->version);
    rc = rc ? rc : h5_attr_str(g, "git_commit", d->git_commit);
    H5Gclose(g);
    return rc;
}

/* The number a value's text reads as, or NaN. */
static double as_number(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return end != s && !*end && !errno && isfinite(v) ? v : NAN;
}

static int write_table(hid_t file, const struct sweepidx_desc *d, const struct cols *c)
{
    hid_t g = h5_group_create(file, "table");
    if (g < 0)
        return h5io_fail();
    double *col = malloc(d->npoints * sizeof(double));
    int rc = col ? 0 : -ENOMEM;
    for (size_t p = 0; !rc && p < d->npoints; p++)
        col[p] = (double)p;
    rc = rc ? rc : h5_write_f64(g, "point", col, d->npoints, "1");
    for (size_t p = 0; !rc && p < d->npoints; p++)
        col[p] = d->done[p] ? 1 : 0;
    rc = rc ? rc : h5_write_f64(g, "done", col, d->npoints, "1");
    for (size_t a = 0; !rc && a < d->naxes; a++) {
        char name[32];
        snprintf(name, sizeof(name), "axis_%zu", a);
        for (size_t p = 0; p < d->npoints; p++)
            col[p] = as_number(d->values[p * d->naxes + a]);
        rc = h5_write_f64(g, name, col, d->npoints, NULL);
        if (!rc) {
            hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
            rc = ds < 0 ? h5io_fail() : h5_attr_str(ds, "path", d->axes[a]);
            if (ds >= 0)
                H5Dclose(ds);
        }
    }
    for (size_t m = 0; !rc && m < NMETRICS; m++) {
        if (!c->present[m])
            continue;
        char name[64];
        snprintf(name, sizeof(name), "%s_mean", sweepidx_metrics[m]);
        rc = h5_write_f64(g, name, c->means[m], d->npoints, NULL);
        snprintf(name, sizeof(name), "%s_ci95", sweepidx_metrics[m]);
        rc = rc ? rc : h5_write_f64(g, name, c->ci[m], d->npoints, NULL);
    }
    free(col);
    H5Gclose(g);
    return rc;
}

static int write_points(hid_t file, const struct sweepidx_desc *d)
{
    hid_t g = h5_group_create(file, "points");
    if (g < 0)
        return h5io_fail();
    int rc = 0;
    for (size_t p = 0; !rc && p < d->npoints; p++) {
        char name[256];
        snprintf(name, sizeof(name), "%s", d->files[p]);
        char *dot = strrchr(name, '.');
        if (dot)
            *dot = 0;
        hid_t pg = h5_group_create(g, name);
        if (pg < 0) {
            rc = h5io_fail();
            break;
        }
        rc = h5_attr_str(pg, "file", d->files[p]);
        rc = rc ? rc : h5_attr_int(pg, "done", d->done[p]);
        for (size_t a = 0; !rc && a < d->naxes; a++) {
            char an[32];
            snprintf(an, sizeof(an), "axis_%zu", a);
            rc = h5_attr_str(pg, an, d->values[p * d->naxes + a]);
        }
        if (!rc &&
            H5Lcreate_external(d->files[p], "/", pg, "results", H5P_DEFAULT, H5P_DEFAULT) < 0)
            rc = h5io_fail();
        H5Gclose(pg);
    }
    H5Gclose(g);
    return rc;
}

int sweepidx_write(const struct sweepidx_desc *d, char *err, size_t errlen)
{
    struct cols c;
    memset(&c, 0, sizeof(c));
    char *path = join(d->dir, "index.h5");
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = read_points(d, &c, err, errlen);
    if (rc)
        goto out;
    size_t ndone = 0;
    for (size_t p = 0; p < d->npoints; p++)
        ndone += d->done[p];
    struct h5file f;
    rc = h5file_create(&f, path);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
        goto out;
    }
    rc = write_meta(f.id, d, ndone);
    rc = rc ? rc : write_table(f.id, d, &c);
    rc = rc ? rc : write_points(f.id, d);
    if (rc) {
        h5file_abort(&f);
    } else {
        rc = h5file_commit(&f, path);
    }
    if (rc)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
out:
    cols_free(&c);
    free(path);
    return rc;
}

/* Open path's /meta when it is a sweep index: returns the file id (*meta set), or < 0. */
static hid_t open_index(struct h5_rd *rd, const char *path, hid_t *meta, char *err, size_t errlen)
{
    hid_t f = h5_rd_open(rd, path);
    if (f < 0) {
        snprintf(err, errlen, "%s: %s", path, rd->why[0] ? rd->why : "cannot open as HDF5");
        return -ENOENT;
    }
    hid_t m = h5_rd_group(rd, f, "meta");
    char *kind = NULL;
    if (m < 0 || h5_rd_attr_str(rd, m, "kind", &kind) || strcmp(kind, SWEEPIDX_KIND)) {
        snprintf(err, errlen, "%s: not a tidesim sweep index (no /meta kind = %s)", path,
                 SWEEPIDX_KIND);
        free(kind);
        if (m >= 0)
            H5Gclose(m);
        H5Fclose(f);
        return -EINVAL;
    }
    free(kind);
    *meta = m;
    return f;
}

int sweepidx_read_hash(const char *path, char **hash, char *err, size_t errlen)
{
    *hash = NULL;
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -ENOENT;
    }
    fclose(probe);
    struct h5_rd rd;
    hid_t m;
    hid_t f = open_index(&rd, path, &m, err, errlen);
    if (f < 0)
        return -EINVAL;
    int rc = h5_rd_attr_str(&rd, m, "hash", hash);
    if (rc)
        snprintf(err, errlen, "%s: /meta has no hash", path);
    H5Gclose(m);
    H5Fclose(f);
    return rc ? -EINVAL : 0;
}

bool sweepidx_is_index(const char *path)
{
    struct h5_rd rd;
    hid_t m;
    char err[600];
    hid_t f = open_index(&rd, path, &m, err, sizeof(err));
    if (f < 0)
        return false;
    H5Gclose(m);
    H5Fclose(f);
    return true;
}

int sweepidx_point_complete(const char *path)
{
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return 0;
    fclose(probe);
    struct h5_rd rd;
    hid_t f = h5_rd_open(&rd, path);
    if (f < 0)
        return 0;
    hid_t m = h5_rd_group(&rd, f, "meta");
    double c = 0;
    if (m >= 0) {
        if (h5_rd_attr_double(&rd, m, "complete", &c))
            c = 0;
        H5Gclose(m);
    }
    H5Fclose(f);
    return c == 1;
}

/* A metric's value as the report shows it: shares in %, the rest as numbers. */
static void fmt_metric(char *buf, size_t n, size_t m, double mean, double ci)
{
    if (!isfinite(mean)) {
        snprintf(buf, n, "-");
        return;
    }
    const char *k = sweepidx_metrics[m];
    bool share = !strcmp(k, "util_busy") || !strcmp(k, "util_allocated") ||
                 !strcmp(k, "slo_share") || !strcmp(k, "share_fragmented");
    double s = share ? 100 : 1;
    int digits = share || !strcmp(k, "p99_ms_worst_service") ? 2 : 1;
    int len = snprintf(buf, n, "%.*f%s", digits, mean * s, share ? "%" : "");
    if (isfinite(ci) && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " ± %.*f%s", digits, ci * s, share ? "%" : "");
}

static const char *const metric_head[NMETRICS] = {
    "busy", "allocated", "SLO met", "p99 ms (worst)", "training GPU-h", "cost", "fragmented"};

struct loaded {
    double points, done_n, reps;
    char *mode, *sweep_path;
    size_t naxes, np;
    char **axes;
    double *done;
    double *mean[NMETRICS], *ci[NMETRICS];
    char **vals; /* [np * naxes] */
    char **files;
};

static void loaded_free(struct loaded *l)
{
    free(l->mode);
    free(l->sweep_path);
    for (size_t a = 0; l->axes && a < l->naxes; a++)
        free(l->axes[a]);
    free(l->axes);
    free(l->done);
    for (size_t m = 0; m < NMETRICS; m++) {
        free(l->mean[m]);
        free(l->ci[m]);
    }
    for (size_t i = 0; l->vals && i < l->np * l->naxes; i++)
        free(l->vals[i]);
    free(l->vals);
    for (size_t p = 0; l->files && p < l->np; p++)
        free(l->files[p]);
    free(l->files);
}

static int load(struct loaded *l, const char *path, char *err, size_t errlen)
{
    struct h5_rd rd;
    hid_t m, t = -1, pg = -1;
    memset(l, 0, sizeof(*l));
    hid_t f = open_index(&rd, path, &m, err, errlen);
    if (f < 0)
        return (int)f;
    double naxes = 0;
    int rc = h5_rd_attr_double(&rd, m, "points", &l->points);
    rc = rc ? rc : h5_rd_attr_double(&rd, m, "points_done", &l->done_n);
    rc = rc ? rc : h5_rd_attr_double(&rd, m, "replications", &l->reps);
    rc = rc ? rc : h5_rd_attr_double(&rd, m, "axes", &naxes);
    rc = rc ? rc : h5_rd_attr_str(&rd, m, "mode", &l->mode);
    rc = rc ? rc : h5_rd_attr_str(&rd, m, "sweep_path", &l->sweep_path);
    if (!rc && !(naxes >= 1 && naxes <= 64 && l->points >= 1 && l->points <= 1e6))
        rc = h5_rd_fail(&rd, -EIO, "/meta: axes or points out of range");
    if (!rc) {
        l->naxes = (size_t)naxes;
        l->axes = calloc(l->naxes, sizeof(char *));
        rc = l->axes ? 0 : -ENOMEM;
    }
    for (size_t a = 0; !rc && a < l->naxes; a++) {
        char an[32];
        snprintf(an, sizeof(an), "axis_%zu", a);
        rc = h5_rd_attr_str(&rd, m, an, &l->axes[a]);
    }
    if (!rc && (t = h5_rd_group(&rd, f, "table")) < 0)
        rc = h5_rd_fail(&rd, -EIO, "/table: missing");
    size_t n = 0;
    rc = rc ? rc : h5_rd_f64(&rd, t, "done", &l->done, &n);
    if (!rc && n != (size_t)l->points)
        rc = h5_rd_fail(&rd, -EIO, "/table/done: %zu rows for %.0f points", n, l->points);
    l->np = n;
    for (size_t k = 0; !rc && k < NMETRICS; k++) {
        char name[64];
        size_t n2 = 0, n3 = 0;
        snprintf(name, sizeof(name), "%s_mean", sweepidx_metrics[k]);
        int r1 = h5_rd_f64(&rd, t, name, &l->mean[k], &n2);
        if (r1 == -ENOENT)
            continue;
        snprintf(name, sizeof(name), "%s_ci95", sweepidx_metrics[k]);
        rc = r1 ? r1 : h5_rd_f64(&rd, t, name, &l->ci[k], &n3);
        if (!rc && (n2 != n || n3 != n))
            rc = h5_rd_fail(&rd, -EIO, "/table/%s: wrong length", name);
    }
    if (!rc) {
        l->vals = calloc(l->np * l->naxes, sizeof(char *));
        l->files = calloc(l->np, sizeof(char *));
        rc = l->vals && l->files ? 0 : -ENOMEM;
    }
    if (!rc && (pg = h5_rd_group(&rd, f, "points")) < 0)
        rc = h5_rd_fail(&rd, -EIO, "/points: missing");
    for (size_t p = 0; !rc && p < l->np; p++) {
        char name[64];
        snprintf(name, sizeof(name), "point-%04zu", p);
        hid_t one = h5_rd_group(&rd, pg, name);
        if (one < 0) {
            rc = h5_rd_fail(&rd, -EIO, "/points/%s: not a group", name);
            break;
        }
        rc = h5_rd_attr_str(&rd, one, "file", &l->files[p]);
        for (size_t a = 0; !rc && a < l->naxes; a++) {
            char an[32];
            snprintf(an, sizeof(an), "axis_%zu", a);
            rc = h5_rd_attr_str(&rd, one, an, &l->vals[p * l->naxes + a]);
        }
        H5Gclose(one);
    }
    if (rc)
        snprintf(err, errlen, "%s: %s", path, rd.why[0] ? rd.why : strerror(-rc));
    if (pg >= 0)
        H5Gclose(pg);
    if (t >= 0)
        H5Gclose(t);
    H5Gclose(m);
    H5Fclose(f);
    return rc;
}

static void report_json(FILE *out, const struct loaded *l)
{
    fputs("{\"sweep\": ", out);
    esc_json_str(out, l->sweep_path);
    fputs(", \"mode\": ", out);
    esc_json_str(out, l->mode);
    fprintf(out, ", \"points\": %zu, \"points_done\": %.0f, \"replications\": %.0f, \"axes\": [",
            l->np, l->done_n, l->reps);
    for (size_t a = 0; a < l->naxes; a++) {
        fputs(a ? ", " : "", out);
        esc_json_str(out, l->axes[a]);
    }
    fputs("],\n \"table\": [", out);
    for (size_t p = 0; p < l->np; p++) {
        fprintf(out, "%s\n  {\"point\": %zu, \"file\": ", p ? "," : "", p);
        esc_json_str(out, l->files[p]);
        fprintf(out, ", \"done\": %s, \"values\": [", l->done[p] == 1 ? "true" : "false");
        for (size_t a = 0; a < l->naxes; a++) {
            fputs(a ? ", " : "", out);
            esc_json_str(out, l->vals[p * l->naxes + a]);
        }
        fputs("]", out);
        for (size_t m = 0; m < NMETRICS; m++) {
            if (!l->mean[m])
                continue;
            fprintf(out, ", \"%s_mean\": ", sweepidx_metrics[m]);
            esc_json_num(out, l->mean[m][p]);
            fprintf(out, ", \"%s_ci95\": ", sweepidx_metrics[m]);
            esc_json_num(out, l->ci[m][p]);
        }
        fputs("}", out);
    }
    fputs("\n]}\n", out);
}

int sweepidx_report(FILE *out, const char *path, bool json, char *err, size_t errlen)
{
    struct loaded l;
    int rc = load(&l, path, err, errlen);
    if (rc) {
        loaded_free(&l);
        return rc;
    }
    if (json) {
        report_json(out, &l);
        loaded_free(&l);
        return 0;
    }
    fprintf(out, "sweep %s: %s, %zu point(s), %.0f done, %.0f replication(s) per point%s\n",
            l.sweep_path, l.mode, l.np, l.done_n, l.reps,
            l.reps > 1 ? " (mean ± 95% half-width)" : "");
    size_t ncols = 1 + l.naxes;
    for (size_t m = 0; m < NMETRICS; m++)
        ncols += l.mean[m] != NULL;
    struct texttable tt;
    texttable_init(&tt, ncols);
    const char **cells = calloc(ncols, sizeof(char *));
    char(*buf)[64] = calloc(ncols, sizeof(*buf));
    if (!cells || !buf) {
        free(cells);
        free(buf);
        loaded_free(&l);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    size_t k = 0;
    cells[k++] = "point";
    for (size_t a = 0; a < l.naxes; a++)
        cells[k++] = l.axes[a];
    for (size_t m = 0; m < NMETRICS; m++)
        if (l.mean[m])
            cells[k++] = metric_head[m];
    texttable_row(&tt, cells);
    for (size_t p = 0; p < l.np; p++) {
        k = 0;
        snprintf(buf[k], sizeof(buf[k]), "%zu%s", p, l.done[p] == 1 ? "" : " (not run)");
        cells[k] = buf[k];
        k++;
        for (size_t a = 0; a < l.naxes; a++)
            cells[k++] = l.vals[p * l.naxes + a];
        for (size_t m = 0; m < NMETRICS; m++) {
            if (!l.mean[m])
                continue;
            fmt_metric(buf[k], sizeof(buf[k]), m, l.mean[m][p], l.ci[m][p]);
            cells[k] = buf[k];
            k++;
        }
        texttable_row(&tt, cells);
    }
    rc = texttable_print(&tt, out, false, 2);
    if (rc)
        snprintf(err, errlen, "out of memory");
    texttable_release(&tt);
    free(cells);
    free(buf);
    loaded_free(&l);
    return rc;
}
