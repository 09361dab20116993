/* sweepidx.c — a sweep's index file: write, check, print (sweepidx.h). */
#include "analysis/sweepidx.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/answer.h"
#include "analysis/escape.h"
#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/results.h"
#include "analysis/texttable.h"

const char *const sweepidx_metrics[] = {
    "util_busy",          "util_allocated", "slo_share",        "p99_ms_worst_service",
    "training_gpu_hours", "cost_total",     "share_fragmented", NULL};

#define NMETRICS SWEEPIDX_NMETRICS

/* The readers of an index, without a child process: only after index_vetted. */
static int table_load_direct(struct sweepidx_table *l, const char *path, char *err, size_t errlen);
static int plan_print_direct(FILE *out, const char *path, char *err, size_t errlen);
static int plan_answers_direct(const char *path, double *size_value, size_t n, size_t *nchoices);

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
        int rc = results_open_for(&r, path, 0, err, errlen);
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
    int rc = 0;
    rc = h5_attr_str(g, "kind", SWEEPIDX_KIND);
    rc = rc ? rc : h5_attr_int(g, "index_schema", 1);
    rc = rc ? rc : h5_attr_int(g, "complete", ndone == d->npoints && !d->unfinished);
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
    for (size_t k = 0; !rc && k < d->nextra; k++)
        rc = h5_write_f64(g, d->extra[k].name, d->extra[k].v, d->npoints, NULL);
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
        char name[64];
        snprintf(name, sizeof(name), "point-%04zu", p);
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
    if (!rc && d->write_more)
        rc = d->write_more((long long)f.id, d->ctx);
    if (rc) {
        h5file_abort(&f);
    } else {
        rc = h5file_commit(&f, path, true);
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
    if (m < 0 || h5_rd_attr_str(rd, m, "kind", &kind) ||
        (strcmp(kind, SWEEPIDX_KIND) && strcmp(kind, SWEEPIDX_KIND_PLAN))) {
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

static int read_hash_direct(const char *path, char **hash, char *err, size_t errlen)
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

/*
 * What the child that read an index sends the command (answer.h; the command makes no
 * libhdf5 call on an index either): the table (table_load_direct), a plan's printed /plan
 * table (plan_print_direct's output, its code and message) and a plan's answers
 * (plan_answers_direct: the first IDX_MAX_ANSWERS size values and the count).
 */
#define IDX_MARK        "tidesim index, read by a child\n"
#define IDX_MAX_ANSWERS 256u

struct idx_answer {
    struct sweepidx_table t;
    int plan_rc;
    char *plan_text, *plan_why;
    int ans_rc;
    size_t nchoices, nans;
    double ans[IDX_MAX_ANSWERS];
};

static void idx_answer_release(struct idx_answer *a)
{
    sweepidx_table_release(&a->t);
    free(a->plan_text);
    free(a->plan_why);
    memset(a, 0, sizeof(*a));
}

/* A column of np values, or none (NULL). */
static void put_col(FILE *f, const double *v, size_t np)
{
    answer_put_u64(f, v != NULL);
    if (v)
        answer_put(f, v, np * sizeof(double));
}

static int idx_encode(FILE *f, const struct idx_answer *a)
{
    const struct sweepidx_table *t = &a->t;
    answer_put(f, IDX_MARK, strlen(IDX_MARK));
    const double nums[] = {t->points, t->done_n, t->reps};
    answer_put(f, nums, sizeof(nums));
    answer_put_str(f, t->mode);
    answer_put_str(f, t->sweep_path);
    answer_put_u64(f, t->naxes);
    answer_put_u64(f, t->np);
    for (size_t i = 0; i < t->naxes; i++)
        answer_put_str(f, t->axes[i]);
    put_col(f, t->done, t->np);
    for (size_t m = 0; m < NMETRICS; m++) {
        put_col(f, t->mean[m], t->np);
        put_col(f, t->ci[m], t->np);
    }
    for (size_t i = 0; i < t->np * t->naxes; i++)
        answer_put_str(f, t->vals[i]);
    for (size_t i = 0; i < t->np; i++)
        answer_put_str(f, t->files[i]);
    const double *pc[] = {t->size, t->choice, t->verdict, t->reps_col};
    for (size_t k = 0; k < 4; k++)
        put_col(f, pc[k], t->np);
    answer_put_u64(f, (uint64_t)(int64_t)a->plan_rc);
    answer_put_str(f, a->plan_text);
    answer_put_str(f, a->plan_why);
    answer_put_u64(f, (uint64_t)(int64_t)a->ans_rc);
    answer_put_u64(f, a->nchoices);
    answer_put_u64(f, a->nans);
    answer_put(f, a->ans, a->nans * sizeof(double));
    answer_put(f, IDX_MARK, strlen(IDX_MARK));
    return answer_close(f);
}

static void get_col(struct answer_in *in, double **v, size_t np)
{
    uint64_t has = answer_get_u64(in);
    if (has > 1)
        in->bad = true;
    else if (has)
        answer_get_f64s(in, np, v);
}

/* A negative errno sent as a code (0 included), or bad. */
static int get_code(struct answer_in *in)
{
    int64_t c = (int64_t)answer_get_u64(in);
    if (c > 0 || c < -4095)
        in->bad = true;
    return in->bad ? -EIO : (int)c;
}

/* What the child sent, buf[0..n), into *a (zeroed first); 0, or -EIO / -ENOMEM (a empty). */
static int idx_decode(struct idx_answer *a, const void *buf, size_t n)
{
    memset(a, 0, sizeof(*a));
    struct sweepidx_table *t = &a->t;
    struct answer_in in = {buf, n, false, false};
    answer_get_mark(&in, IDX_MARK);
    double nums[3];
    answer_get(&in, nums, sizeof(nums));
    t->points = nums[0], t->done_n = nums[1], t->reps = nums[2];
    answer_get_str(&in, &t->mode);
    answer_get_str(&in, &t->sweep_path);
    uint64_t naxes = answer_get_u64(&in), np = answer_get_u64(&in);
    /* table_load_direct's own limits: 1-64 axes, 1-10^6 points, one row per point */
    if (in.bad || !t->mode || !t->sweep_path || naxes < 1 || naxes > 64 || np < 1 || np > 1000000 ||
        (double)np != t->points || np * naxes > in.left / 8)
        in.bad = true;
    if (!in.bad) {
        t->axes = calloc((size_t)naxes, sizeof(char *));
        t->vals = calloc((size_t)(np * naxes), sizeof(char *));
        t->files = calloc((size_t)np, sizeof(char *));
        if (!t->axes || !t->vals || !t->files)
            in.bad = in.oom = true;
        else
            t->naxes = (size_t)naxes, t->np = (size_t)np;
    }
    for (size_t i = 0; !in.bad && i < t->naxes; i++)
        if (answer_get_str(&in, &t->axes[i]) && !t->axes[i])
            in.bad = true;
    get_col(&in, &t->done, t->np);
    if (!t->done)
        in.bad = true;
    for (size_t m = 0; m < NMETRICS; m++) {
        get_col(&in, &t->mean[m], t->np);
        get_col(&in, &t->ci[m], t->np);
        if (!t->mean[m] != !t->ci[m])
            in.bad = true;
    }
    for (size_t i = 0; !in.bad && i < t->np * t->naxes; i++)
        if (answer_get_str(&in, &t->vals[i]) && !t->vals[i])
            in.bad = true;
    for (size_t i = 0; !in.bad && i < t->np; i++)
        if (answer_get_str(&in, &t->files[i]) && !t->files[i])
            in.bad = true;
    double **pc[] = {&t->size, &t->choice, &t->verdict, &t->reps_col};
    for (size_t k = 0; k < 4; k++)
        get_col(&in, pc[k], t->np);
    a->plan_rc = get_code(&in);
    answer_get_str(&in, &a->plan_text);
    answer_get_str(&in, &a->plan_why);
    a->ans_rc = get_code(&in);
    uint64_t nch = answer_get_u64(&in), nans = answer_get_u64(&in);
    if (nch > SWEEPIDX_MAX_CHOICES || nans > IDX_MAX_ANSWERS || nans > nch)
        in.bad = true;
    else
        a->nchoices = (size_t)nch, a->nans = (size_t)nans;
    answer_get(&in, a->ans, a->nans * sizeof(double));
    answer_get_mark(&in, IDX_MARK);
    if (in.bad || in.left) {
        bool oom = in.oom;
        idx_answer_release(a);
        return oom ? -ENOMEM : -EIO;
    }
    return 0;
}

/*
 * Everything the commands read of an index (report: the table and a plan's
 * /plan table; check and compare: the table; plot: the table and a plan's
 * answers), read in a child process (index_vetted, index_probe), which sends
 * it to the command through ship (-1: nowhere, only the verdict counts).
 * 0, or the refusal with why ("PATH: /table/done: ...").
 */
static int index_read_all(const char *path, int ship, char *why, size_t n)
{
    struct idx_answer a;
    memset(&a, 0, sizeof(a));
    int rc = table_load_direct(&a.t, path, why, n);
    bool plan_mode = !rc && a.t.mode && !strcmp(a.t.mode, "plan"); /* sweepidx_report */
    bool plan_cols = !rc && a.t.size != NULL;                      /* plot's index charts */
    if (!rc) { /* a plan's /plan table as planidx_print and sweepidx_report print it */
        size_t len = 0;
        char pwhy[1024] = "";
        FILE *mem = open_memstream(&a.plan_text, &len);
        if (!mem) {
            rc = -errno;
            snprintf(why, n, "%s: out of memory", path);
        } else {
            a.plan_rc = plan_print_direct(mem, path, pwhy, sizeof(pwhy));
            fclose(mem);
            if (a.plan_rc)
                a.plan_why = strdup(pwhy);
            if (plan_mode && a.plan_rc) { /* a plan whose /plan cannot be read is refused */
                rc = a.plan_rc;
                snprintf(why, n, "%s", pwhy);
            }
        }
    }
    if (!rc && plan_cols) /* plot ignores a refusal */
        a.ans_rc = plan_answers_direct(path, a.ans, IDX_MAX_ANSWERS, &a.nchoices);
    a.nans = a.nchoices < IDX_MAX_ANSWERS ? a.nchoices : IDX_MAX_ANSWERS;
    if (!rc && ship >= 0) {
        FILE *f = answer_open(ship);
        rc = f ? idx_encode(f, &a) : -errno;
        if (rc)
            snprintf(why, n, "%s: cannot pass on what was read (%s)", path, strerror(-rc));
    }
    idx_answer_release(&a);
    return rc;
}

int sweepidx_answer(const char *path, int fd, char *err, size_t errlen)
{
    return index_read_all(path, fd, err, errlen);
}

int sweepidx_from_answer(struct sweepidx_table *t, const void *buf, size_t n)
{
    struct idx_answer a;
    int rc = idx_decode(&a, buf, n);
    memset(t, 0, sizeof(*t));
    if (!rc) {
        *t = a.t;
        memset(&a.t, 0, sizeof(a.t));
        idx_answer_release(&a);
    }
    return rc;
}

struct idx_probe_arg {
    const char *path;
    int ship;
};

static int read_all_probe(void *arg, char *why, size_t n)
{
    const struct idx_probe_arg *a = arg;
    return index_read_all(a->path, a->ship, why, n);
}

/*
 * The index at path as a child process read it (index_read_all), into *a: v's answer when v
 * holds one on this file as it still is (sweepidx_is_index_vet's child), else a child of our
 * own. 0, or the refusal with err "PATH: why" (-EIO for a child that hung, or a damaged
 * answer).
 */
static int index_vetted(const char *path, const struct results_vet *v, struct idx_answer *a,
                        char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    char why[1024] = "";
    int rc, fd;
    bool vetted = v && v->other && v->ship > 0 && results_vet_current(v, path);
    if (vetted) {
        rc = v->rc;
        fd = v->ship;
        snprintf(why, sizeof(why), "%s", v->why);
    } else if ((fd = answer_fd()) < 0) {
        rc = fd;
        snprintf(why, sizeof(why), "cannot start the reading process (%s)", strerror(-fd));
    } else {
        struct idx_probe_arg pa = {path, fd};
        rc = h5_rd_preflight(read_all_probe, &pa, H5READ_PREFLIGHT_MS, why, sizeof(why));
    }
    if (!rc) {
        struct answer_map m;
        rc = answer_map(fd, &m);
        if (!rc) {
            rc = idx_decode(a, m.p, m.n);
            answer_unmap(&m);
        }
        if (rc)
            snprintf(why, sizeof(why), "%s", rc == -ENOMEM ? "out of memory" : ANSWER_DAMAGED);
    }
    if (!vetted && fd >= 0)
        close(fd);
    if (!rc)
        return 0;
    if (strncmp(why, path, strlen(path)) == 0)
        snprintf(err, errlen, "%s", why);
    else
        snprintf(err, errlen, "%s: %s", path, why);
    return rc == -ETIMEDOUT ? -EIO : rc;
}

/*
 * In the child of results_vet: 0 when path is no sweep or plan index; else
 * the index read as every command reads one: 1, or -1 with why.
 */
static int index_probe(const char *path, int ship, char *why, size_t n)
{
    struct h5_rd rd;
    hid_t m;
    hid_t f = open_index(&rd, path, &m, why, n);
    if (f < 0) {
        why[0] = 0;
        return 0;
    }
    H5Gclose(m);
    H5Fclose(f);
    return index_read_all(path, ship, why, n) ? -1 : 1;
}

bool sweepidx_is_index_vet(const char *path, unsigned by, struct results_vet *v)
{
    /* The file is any file a command was handed (a results file, not trusted): libhdf5 opens
     * it in a child process, never in this one, which only learns the answer. When it is no
     * index, the same child reads it as results_open_for(path, by)'s would, and
     * results_open_vetted takes that verdict: one child per file. When it is an index, the
     * same child reads it as every reader of an index does (index_read_all), and those readers
     * take that verdict (index_vetted). A file the child could not tell (it crashed, or hung)
     * is no index: results_open_vetted then refuses it. */
    return results_vet(path, by, index_probe, v);
}

bool sweepidx_is_index(const char *path)
{
    struct results_vet v;
    bool index = sweepidx_is_index_vet(path, 0, &v);
    results_vet_release(&v);
    return index;
}

/*
 * A point file found in the output folder when a sweep or plan runs again may be anything
 * (a copy, a damaged file, one planted there). It counts as done only if the index can read
 * it (results_open_for(path, 0), sweepidx_write) and it says it is complete, which a child
 * process finds out (results_complete, as for every untrusted file, docs/security.md). A
 * point that is not done is run again and its file replaced.
 */
int sweepidx_point_complete(const char *path)
{
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return 0;
    fclose(probe);
    return results_complete(path, 0);
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

void sweepidx_table_release(struct sweepidx_table *l)
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
    free(l->size);
    free(l->choice);
    free(l->verdict);
    free(l->reps_col);
    memset(l, 0, sizeof(*l));
}

static int table_load_direct(struct sweepidx_table *l, const char *path, char *err, size_t errlen)
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
    /* a plan's columns (absent from a sweep's index) */
    double **pc[] = {&l->size, &l->choice, &l->verdict, &l->reps_col};
    static const char *const pn[] = {"size", "choice", "verdict", "replications"};
    for (size_t k = 0; !rc && k < 4; k++) {
        size_t n2 = 0;
        int r1 = h5_rd_f64(&rd, t, pn[k], pc[k], &n2);
        if (r1 == -ENOENT)
            continue;
        rc = r1;
        if (!rc && n2 != n)
            rc = h5_rd_fail(&rd, -EIO, "/table/%s: wrong length", pn[k]);
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

static void report_json(FILE *out, const struct sweepidx_table *l)
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

int sweepidx_report(FILE *out, const char *path, bool json, const struct results_vet *v, char *err,
                    size_t errlen)
{
    struct idx_answer ia;
    int rc = index_vetted(path, v, &ia, err, errlen);
    if (rc)
        return rc;
    struct sweepidx_table l = ia.t; /* the table is l's now */
    memset(&ia.t, 0, sizeof(ia.t));
    if (json) {
        report_json(out, &l);
        sweepidx_table_release(&l);
        idx_answer_release(&ia);
        return 0;
    }
    bool plan = l.mode && !strcmp(l.mode, "plan");
    if (plan)
        fprintf(out, "plan %s: %zu probe(s) (mean ± 95%% half-width over each probe's seeds)\n",
                l.sweep_path, l.np);
    else
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
        sweepidx_table_release(&l);
        idx_answer_release(&ia);
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
    sweepidx_table_release(&l);
    if (!rc && plan) { /* the child refused a plan whose /plan it could not print */
        fputc('\n', out);
        fputs(ia.plan_text ? ia.plan_text : "", out);
    }
    idx_answer_release(&ia);
    return rc;
}

int sweepidx_select(const char *path, const struct results_vet *v, const struct sweepidx_sel *sel,
                    struct sweepidx_points *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct sweepidx_table l;
    int rc = sweepidx_table_load(&l, path, v, err, errlen);
    if (rc)
        return rc;
    /* --where PATH=VALUE: the axis must exist. */
    size_t wax[SWEEPIDX_SEL_MAX];
    const char *wval[SWEEPIDX_SEL_MAX];
    size_t nw = sel ? sel->nwhere : 0, np = sel ? sel->npoints : 0;
    for (size_t w = 0; w < nw; w++) {
        const char *eq = strchr(sel->where[w], '=');
        size_t kn = eq ? (size_t)(eq - sel->where[w]) : strlen(sel->where[w]);
        wax[w] = SIZE_MAX;
        for (size_t a = 0; a < l.naxes; a++)
            if (strlen(l.axes[a]) == kn && !strncmp(l.axes[a], sel->where[w], kn))
                wax[w] = a;
        wval[w] = eq ? eq + 1 : "";
        if (wax[w] == SIZE_MAX || !eq) {
            int k = snprintf(err, errlen, "%s: --where %s: no axis '%.*s'; its axes are:", path,
                             sel->where[w], (int)kn, sel->where[w]);
            for (size_t a = 0; a < l.naxes && k > 0 && (size_t)k < errlen; a++)
                k += snprintf(err + k, errlen - (size_t)k, " %s", l.axes[a]);
            sweepidx_table_release(&l);
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < np; i++)
        if (sel->points[i] >= l.np) {
            snprintf(err, errlen, "%s: --point %zu: the index has points 0..%zu", path,
                     sel->points[i], l.np - 1);
            sweepidx_table_release(&l);
            return -EINVAL;
        }
    out->point = calloc(l.np, sizeof(size_t));
    out->path = calloc(l.np, sizeof(char *));
    out->label = calloc(l.np, sizeof(char *));
    out->done = calloc(l.np, sizeof(bool));
    out->kind = NULL;
    rc = out->point && out->path && out->label && out->done ? 0 : -ENOMEM;
    char *dir = strdup(path);
    if (!dir)
        rc = -ENOMEM;
    else {
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(dir, strlen(dir) + 1, ".");
    }
    /* Points in the order asked (--point), else in index order. */
    size_t order_n = np ? np : l.np;
    for (size_t k = 0; !rc && k < order_n; k++) {
        size_t p = np ? sel->points[k] : k;
        bool ok = true;
        for (size_t w = 0; w < nw && ok; w++)
            ok = !strcmp(l.vals[p * l.naxes + wax[w]], wval[w]);
        for (size_t j = 0; j < out->n && ok; j++)
            ok = out->point[j] != p; /* a point named twice is taken once */
        if (!ok)
            continue;
        size_t len = 0;
        for (size_t a = 0; a < l.naxes; a++)
            len += strlen(l.axes[a]) + strlen(l.vals[p * l.naxes + a]) + 2;
        char *lab = malloc(len + 1);
        char *fp = join(dir, l.files[p]);
        if (!lab || !fp) {
            free(lab);
            free(fp);
            rc = -ENOMEM;
            break;
        }
        lab[0] = 0;
        for (size_t a = 0; a < l.naxes; a++) {
            size_t at = strlen(lab);
            snprintf(lab + at, len + 1 - at, "%s%s=%s", a ? " " : "", l.axes[a],
                     l.vals[p * l.naxes + a]);
        }
        out->point[out->n] = p;
        out->path[out->n] = fp;
        out->label[out->n] = lab;
        out->done[out->n] = l.done[p] == 1;
        out->n++;
    }
    out->complete = l.done_n == l.points;
    free(dir);
    sweepidx_table_release(&l);
    if (rc) {
        snprintf(err, errlen, "out of memory");
        sweepidx_points_release(out);
    }
    return rc;
}

void sweepidx_points_release(struct sweepidx_points *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->path[i]);
        free(p->label[i]);
    }
    free(p->point);
    free(p->path);
    free(p->label);
    free(p->done);
    free(p->kind);
    memset(p, 0, sizeof(*p));
}

/* A number with thousands separators: 141696 -> "141,696". */
static void thousands(char *buf, size_t n, double v)
{
    char t[64];
    snprintf(t, sizeof(t), "%.0f", fabs(v));
    size_t len = strlen(t), k = 0;
    if (v < 0 && k + 1 < n)
        buf[k++] = '-';
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        buf[k++] = t[i];
        if ((len - i - 1) % 3 == 0 && i + 1 < len)
            buf[k++] = ',';
    }
    buf[k] = 0;
}

struct plan_row {
    char *label, *size, *currency, *binding, *margin, *detail, *below, *search, *note;
    double gpus, cost, runs, runs_now, probes, monotone, size_value;
};

static void plan_row_free(struct plan_row *r)
{
    free(r->label);
    free(r->size);
    free(r->currency);
    free(r->binding);
    free(r->margin);
    free(r->detail);
    free(r->below);
    free(r->search);
    free(r->note);
}

static int plan_row_read(struct h5_rd *rd, hid_t cg, struct plan_row *r)
{
    int rc = h5_rd_attr_str(rd, cg, "label", &r->label);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "size", &r->size);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "currency", &r->currency);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "binding_gate", &r->binding);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "margin", &r->margin);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "binding_detail", &r->detail);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "below", &r->below);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "search", &r->search);
    rc = rc ? rc : h5_rd_attr_str(rd, cg, "note", &r->note);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "gpus", &r->gpus);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "cost_30d", &r->cost);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "runs", &r->runs);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "runs_now", &r->runs_now);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "probes", &r->probes);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "monotone", &r->monotone);
    rc = rc ? rc : h5_rd_attr_double(rd, cg, "size_value", &r->size_value);
    return rc;
}

static int plan_print_direct(FILE *out, const char *path, char *err, size_t errlen)
{
    struct h5_rd rd;
    hid_t m;
    hid_t f = open_index(&rd, path, &m, err, errlen);
    if (f < 0)
        return (int)f;
    H5Gclose(m);
    hid_t g = h5_rd_group(&rd, f, "plan");
    if (g < 0) {
        snprintf(err, errlen, "%s: no /plan (not a tidesim plan index)", path);
        H5Fclose(f);
        return -EINVAL;
    }
    char *objective = NULL, *key = NULL, *gates = NULL, *search = NULL;
    double nch = 0, answer = -1, rmin = 0, rmax = 0, complete = 0;
    int rc = h5_rd_attr_str(&rd, g, "objective", &objective);
    rc = rc ? rc : h5_rd_attr_str(&rd, g, "size_key", &key);
    rc = rc ? rc : h5_rd_attr_str(&rd, g, "gates", &gates);
    rc = rc ? rc : h5_rd_attr_str(&rd, g, "search", &search);
    rc = rc ? rc : h5_rd_attr_double(&rd, g, "choices", &nch);
    rc = rc ? rc : h5_rd_attr_double(&rd, g, "answer", &answer);
    rc = rc ? rc : h5_rd_attr_double(&rd, g, "replications_min", &rmin);
    rc = rc ? rc : h5_rd_attr_double(&rd, g, "replications_max", &rmax);
    rc = rc ? rc : h5_rd_attr_double(&rd, g, "complete", &complete);
    if (!rc && !(nch >= 1 && nch <= SWEEPIDX_MAX_CHOICES))
        rc = h5_rd_fail(&rd, -EIO, "/plan: choices out of range");
    size_t n = rc ? 0 : (size_t)nch;
    struct plan_row *rows = n ? calloc(n, sizeof(*rows)) : NULL;
    if (!rc && !rows)
        rc = -ENOMEM;
    for (size_t c = 0; !rc && c < n; c++) {
        char name[32];
        snprintf(name, sizeof(name), "choice-%04zu", c);
        hid_t cg = h5_rd_group(&rd, g, name);
        if (cg < 0) {
            rc = h5_rd_fail(&rd, -EIO, "/plan/%s: missing", name);
            break;
        }
        rc = plan_row_read(&rd, cg, &rows[c]);
        H5Gclose(cg);
    }
    if (!rc) {
        fprintf(out,
                "plan: the smallest %s passing every gate with 95%% confidence%s\n"
                "  gates: %s\n"
                "  each gate judged on its 95%% interval over %.0f..%.0f seeds a probe (the "
                "same seeds at every size)\n",
                key, complete == 1 ? "" : " (INCOMPLETE: the search was interrupted)", gates, rmin,
                rmax);
        struct texttable tt;
        texttable_init(&tt, 9);
        const char *head[] = {"choice",           "smallest",     "GPUs",
                              "cost / 30 days",   "binding gate", "margin",
                              "one size smaller", "runs",         "search"};
        texttable_row(&tt, head);
        for (size_t c = 0; c < n; c++) {
            const struct plan_row *r = &rows[c];
            char gp[32] = "-", cost[64] = "-", runs[48], srch[40];
            if (isfinite(r->gpus))
                snprintf(gp, sizeof(gp), "%.0f", r->gpus);
            if (isfinite(r->cost)) {
                char t[48];
                thousands(t, sizeof(t), r->cost);
                snprintf(cost, sizeof(cost), "%s %s", t, r->currency);
            }
            snprintf(runs, sizeof(runs), "%.0f (%.0f new)", r->runs, r->runs_now);
            snprintf(srch, sizeof(srch), "%s",
                     !strncmp(r->search, "scan:", 5) ? "scan (not monotone)" : r->search);
            char *sp = strstr(srch, " (every");
            if (sp)
                snprintf(sp, sizeof(srch) - (size_t)(sp - srch), " (all sizes)");
            const char *cells[] = {r->label,
                                   r->size,
                                   gp,
                                   cost,
                                   r->binding[0] ? r->binding : "-",
                                   r->margin[0] ? r->margin : "-",
                                   r->below[0] ? r->below : "-",
                                   runs,
                                   srch};
            texttable_row(&tt, cells);
        }
        rc = texttable_print(&tt, out, false, 2);
        texttable_release(&tt);
        fputs("  margin: how far the binding gate's 95% interval end lies on the passing side "
              "of its bound at the answer (the gate that failed one probed size below)\n",
              out);
        for (size_t c = 0; c < n; c++) {
            const struct plan_row *r = &rows[c];
            if (r->detail[0] && isfinite(r->size_value))
                fprintf(out, "  %s at %s=%s: %s\n", r->label, key, r->size, r->detail);
            else if (r->detail[0])
                fprintf(out, "  %s at the largest %s probed: %s\n", r->label, key, r->detail);
            if (!strncmp(r->search, "scan:", 5))
                fprintf(out, "  %s: NOT MONOTONE, scanned: %s\n", r->label, r->search + 6);
            if (r->note[0])
                fprintf(out, "  %s: %s\n", r->label, r->note);
        }
        if (answer >= 0 && (size_t)answer < n) {
            const struct plan_row *r = &rows[(size_t)answer];
            char cost[64] = "cost not known";
            if (isfinite(r->cost)) {
                char t[48];
                thousands(t, sizeof(t), r->cost);
                snprintf(cost, sizeof(cost), "%s %s per 30 days", t, r->currency);
            }
            fprintf(out, "answer (objective %s): %s at %s=%s: %.0f GPUs, %s\n", objective, r->label,
                    key, r->size, r->gpus, cost);
        } else {
            fprintf(out, "answer: no choice passes every gate within the range\n");
        }
    }
    if (rc && rc != -ENOMEM)
        snprintf(err, errlen, "%s: %s", path, rd.why[0] ? rd.why : strerror(-rc));
    else if (rc)
        snprintf(err, errlen, "out of memory");
    for (size_t c = 0; rows && c < n; c++)
        plan_row_free(&rows[c]);
    free(rows);
    free(objective);
    free(key);
    free(gates);
    free(search);
    H5Gclose(g);
    H5Fclose(f);
    return rc;
}

static int plan_answers_direct(const char *path, double *size_value, size_t n, size_t *nchoices)
{
    struct h5_rd rd;
    hid_t m;
    char err[64];
    *nchoices = 0;
    hid_t f = open_index(&rd, path, &m, err, sizeof(err));
    if (f < 0)
        return (int)f;
    H5Gclose(m);
    hid_t g = h5_rd_group(&rd, f, "plan");
    double nch = 0;
    int rc = g < 0 ? -ENOENT : h5_rd_attr_double(&rd, g, "choices", &nch);
    if (!rc && !(nch >= 1 && nch <= SWEEPIDX_MAX_CHOICES))
        rc = -EIO;
    for (size_t c = 0; !rc && c < (size_t)nch; c++) {
        char name[32];
        snprintf(name, sizeof(name), "choice-%04zu", c);
        hid_t cg = h5_rd_group(&rd, g, name);
        double v = NAN;
        if (cg < 0 || h5_rd_attr_double(&rd, cg, "size_value", &v))
            rc = -EIO;
        if (cg >= 0)
            H5Gclose(cg);
        if (c < n)
            size_value[c] = v;
    }
    if (!rc)
        *nchoices = (size_t)nch;
    if (g >= 0)
        H5Gclose(g);
    H5Fclose(f);
    return rc;
}

/* ---- the readers of an index: what its child sent (index_vetted) ------------------------ */

int sweepidx_table_load(struct sweepidx_table *t, const char *path, const struct results_vet *v,
                        char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    struct idx_answer a;
    int rc = index_vetted(path, v, &a, err, errlen);
    if (rc)
        return rc;
    *t = a.t;
    memset(&a.t, 0, sizeof(a.t));
    idx_answer_release(&a);
    return 0;
}

int planidx_print(FILE *out, const char *path, const struct results_vet *v, char *err,
                  size_t errlen)
{
    struct idx_answer a;
    int rc = index_vetted(path, v, &a, err, errlen);
    if (!rc && a.plan_rc) {
        rc = a.plan_rc;
        snprintf(err, errlen, "%s", a.plan_why ? a.plan_why : "cannot print the plan");
    } else if (!rc) {
        fputs(a.plan_text ? a.plan_text : "", out);
    }
    idx_answer_release(&a);
    return rc;
}

int planidx_answers(const char *path, const struct results_vet *v, double *size_value, size_t n,
                    size_t *nchoices)
{
    char err[64];
    *nchoices = 0;
    struct idx_answer a;
    int rc = index_vetted(path, v, &a, err, sizeof(err));
    if (!rc && !(rc = a.ans_rc)) {
        /* the first IDX_MAX_ANSWERS values came with the answer (plot asks for 256) */
        for (size_t c = 0; c < n && c < a.nans; c++)
            size_value[c] = a.ans[c];
        *nchoices = a.nchoices;
    }
    idx_answer_release(&a);
    return rc;
}

/* The hash a child read (read_hash_direct), sent as an answer: the string. */
struct hash_arg {
    const char *path;
    int ship;
};

static int hash_probe(void *arg, char *why, size_t n)
{
    const struct hash_arg *a = arg;
    char *hash = NULL;
    int rc = read_hash_direct(a->path, &hash, why, n);
    if (!rc) {
        FILE *f = answer_open(a->ship);
        if (!f) {
            rc = -errno;
        } else {
            answer_put(f, IDX_MARK, strlen(IDX_MARK));
            answer_put_str(f, hash);
            answer_put(f, IDX_MARK, strlen(IDX_MARK));
            rc = answer_close(f);
        }
        if (rc)
            snprintf(why, n, "%s: cannot pass on what was read (%s)", a->path, strerror(-rc));
    }
    free(hash);
    return rc;
}

int sweepidx_read_hash(const char *path, char **hash, char *err, size_t errlen)
{
    *hash = NULL;
    char why[1024] = "";
    int fd = answer_fd();
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot start the reading process (%s)", path, strerror(-fd));
        return -EINVAL;
    }
    struct hash_arg ha = {path, fd};
    int rc = h5_rd_preflight(hash_probe, &ha, H5READ_PREFLIGHT_MS, why, sizeof(why));
    if (rc == -ENOENT || rc == -EINVAL) { /* read_hash_direct's own refusal, path first */
        close(fd);
        snprintf(err, errlen, "%s", why);
        return rc;
    }
    if (rc) {
        close(fd);
        snprintf(err, errlen, "%s: %s", path, why);
        return -EINVAL;
    }
    struct answer_map m;
    rc = answer_map(fd, &m);
    close(fd);
    if (!rc) {
        struct answer_in in = {m.p, m.n, false, false};
        answer_get_mark(&in, IDX_MARK);
        answer_get_str(&in, hash);
        answer_get_mark(&in, IDX_MARK);
        if (in.bad || in.left || !*hash) {
            free(*hash);
            *hash = NULL;
            rc = -EIO;
        }
        answer_unmap(&m);
    }
    if (rc) {
        snprintf(err, errlen, "%s: the process that read it sent a damaged answer", path);
        return -EINVAL;
    }
    return 0;
}
