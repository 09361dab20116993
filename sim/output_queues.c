/* output_queues.c — /queues/<name>: per-queue quota over time and queueing delays. */
#include "sim/output_queues.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5io.h"
#include "sim/sim.h"

#define QMAX 256 /* queues written at most (more are left out) */

static const char *const q_names[] = {"time_s",    "admitted_gpus", "borrowed_gpus",
                                      "lent_gpus", "nominal_gpus",  "pending"};
static const char *const q_units[] = {"s", "GPUs", "GPUs", "GPUs", "GPUs", "workloads"};
#define Q_COLS (sizeof(q_names) / sizeof(q_names[0]))
/* Per flavor (several GPU flavors): /queues/<name>/flavors/<flavor>/timeseries. */
#define F_COLS \
    5u /* the first five of q_names: no pending (workloads wait for a CQ, not a flavor) */

struct queue_out {
    hid_t grp; /* /queues */
    uint32_t n;
    hid_t *qg;
    struct h5_series *ts;
    double *sum_adm, *sum_bor, *sum_lent; /* sums over intervals */
    uint64_t intervals;
    struct pol_queue_stat *buf;
    uint32_t nf;                    /* flavors per queue (0: one flavor, no /flavors groups) */
    struct h5_series *fts;          /* n × nf */
    double *f_adm, *f_bor, *f_lent; /* n × nf sums over intervals */
};

static int fail(void)
{
    return h5io_fail();
}

void queue_out_free(struct queue_out *q)
{
    if (!q)
        return;
    for (uint32_t i = 0; i < q->n; i++) {
        h5_series_close(&q->ts[i]);
        if (q->qg[i] > 0)
            H5Gclose(q->qg[i]);
    }
    if (q->grp > 0)
        H5Gclose(q->grp);
    for (uint32_t i = 0; q->fts && i < q->n * q->nf; i++)
        h5_series_close(&q->fts[i]);
    free(q->fts);
    free(q->f_adm);
    free(q->f_bor);
    free(q->f_lent);
    free(q->qg);
    free(q->ts);
    free(q->sum_adm);
    free(q->sum_bor);
    free(q->sum_lent);
    free(q->buf);
    free(q);
}

/* /queues/<name>/flavors/<flavor>/timeseries of queue i. */
static int open_flavors(struct queue_out *q, uint32_t i, const struct pol_queue_stat *st)
{
    hid_t fg = h5_group_create(q->qg[i], "flavors");
    if (fg < 0)
        return fail();
    int rc = 0;
    for (uint32_t f = 0; f < q->nf && !rc; f++) {
        hid_t g = h5_group_create(fg, st->flavors[f].name);
        hid_t t = g < 0 ? -1 : h5_group_create(g, "timeseries");
        if (g < 0 || t < 0)
            rc = fail();
        else
            rc = h5_series_open(&q->fts[(size_t)i * q->nf + f], t, q_names, q_units, F_COLS, 1024);
        if (t >= 0 && H5Gclose(t) < 0 && !rc)
            rc = fail();
        if (g >= 0 && H5Gclose(g) < 0 && !rc)
            rc = fail();
    }
    if (H5Gclose(fg) < 0 && !rc)
        rc = fail();
    return rc;
}

static int open_queues(struct queue_out **out, hid_t file, const struct pol_queue_stat *st,
                       uint32_t n)
{
    struct queue_out *q = calloc(1, sizeof *q);
    if (!q)
        return -ENOMEM;
    q->qg = calloc(n, sizeof *q->qg);
    q->ts = calloc(n, sizeof *q->ts);
    q->sum_adm = calloc(n, sizeof(double));
    q->sum_bor = calloc(n, sizeof(double));
    q->sum_lent = calloc(n, sizeof(double));
    q->buf = calloc(QMAX, sizeof *q->buf);
    if (!q->qg || !q->ts || !q->sum_adm || !q->sum_bor || !q->sum_lent || !q->buf) {
        queue_out_free(q);
        return -ENOMEM;
    }
    if (st[0].nflavors > 0) {
        size_t nn = (size_t)n * st[0].nflavors;
        q->fts = calloc(nn, sizeof *q->fts);
        q->f_adm = calloc(nn, sizeof(double));
        q->f_bor = calloc(nn, sizeof(double));
        q->f_lent = calloc(nn, sizeof(double));
        if (!q->fts || !q->f_adm || !q->f_bor || !q->f_lent) {
            queue_out_free(q);
            return -ENOMEM;
        }
        q->nf = st[0].nflavors;
    }
    int rc = 0;
    q->grp = h5_group_create(file, "queues");
    if (q->grp < 0)
        rc = fail();
    for (uint32_t i = 0; !rc && i < n; i++) {
        q->qg[i] = h5_group_create(q->grp, st[i].name);
        q->n = i + 1;
        if (q->qg[i] < 0) {
            rc = fail();
            break;
        }
        hid_t g = h5_group_create(q->qg[i], "timeseries");
        if (g < 0) {
            rc = fail();
            break;
        }
        rc = h5_series_open(&q->ts[i], g, q_names, q_units, Q_COLS, 1024);
        if (H5Gclose(g) < 0 && !rc)
            rc = fail();
        if (!rc && q->nf)
            rc = open_flavors(q, i, &st[i]);
    }
    if (rc) {
        queue_out_free(q);
        return rc;
    }
    *out = q;
    return 0;
}

int queue_out_interval(struct queue_out **qp, hid_t file, const struct sim *s, sim_time t1)
{
    if (!s->pol || !s->pol->queues)
        return 0;
    struct pol_queue_stat tmp[QMAX];
    struct pol_queue_stat *st = *qp ? (*qp)->buf : tmp;
    uint32_t n = s->pol->queues(s, s->pol_state, st, QMAX);
    if (n > QMAX)
        n = QMAX;
    if (n == 0)
        return 0;
    int rc;
    if (!*qp && (rc = open_queues(qp, file, st, n)))
        return rc;
    struct queue_out *q = *qp;
    rc = 0;
    for (uint32_t i = 0; i < q->n && i < n; i++) {
        double row[Q_COLS] = {sim_time_to_sec(t1), st[i].admitted, st[i].borrowed,
                              st[i].lent,          st[i].nominal,  (double)st[i].pending};
        q->sum_adm[i] += st[i].admitted;
        q->sum_bor[i] += st[i].borrowed;
        q->sum_lent[i] += st[i].lent;
        int r = h5_series_append(&q->ts[i], row);
        rc = rc ? rc : r;
        for (uint32_t f = 0; f < q->nf && f < st[i].nflavors; f++) {
            const struct pol_flavor_stat *fs = &st[i].flavors[f];
            size_t x = (size_t)i * q->nf + f;
            double frow[F_COLS] = {sim_time_to_sec(t1), fs->admitted, fs->borrowed, fs->lent,
                                   fs->nominal};
            q->f_adm[x] += fs->admitted;
            q->f_bor[x] += fs->borrowed;
            q->f_lent[x] += fs->lent;
            r = h5_series_append(&q->fts[x], frow);
            rc = rc ? rc : r;
        }
    }
    q->intervals++;
    return rc;
}

static int put(hid_t g, const char *key, double v, const char *unit, const char *label)
{
    char k[96];
    int rc = h5_attr_double(g, key, v);
    snprintf(k, sizeof k, "%s.unit", key);
    rc = rc ? rc : out_attr_fixed_str(g, k, unit);
    snprintf(k, sizeof k, "%s.label", key);
    rc = rc ? rc : out_attr_fixed_str(g, k, label);
    return rc;
}

/* Attributes of /queues/<name>/flavors/<flavor>: its nominal and mean quotas. */
static int flavor_attrs(struct queue_out *q, uint32_t i, uint32_t f,
                        const struct pol_flavor_stat *fs, double iv)
{
    char path[320];
    snprintf(path, sizeof path, "flavors/%s", fs->name);
    hid_t g = H5Gopen2(q->qg[i], path, H5P_DEFAULT);
    if (g < 0)
        return fail();
    size_t x = (size_t)i * q->nf + f;
    int rc = put(g, "nominal_gpus", fs->nominal, "GPUs", "nominal quota");
    rc = rc ? rc : put(g, "admitted_mean_gpus", q->f_adm[x] / iv, "GPUs", "admitted (mean)");
    rc = rc ? rc : put(g, "borrowed_mean_gpus", q->f_bor[x] / iv, "GPUs", "borrowed (mean)");
    rc = rc ? rc : put(g, "lent_mean_gpus", q->f_lent[x] / iv, "GPUs", "lent (mean)");
    if (H5Gclose(g) < 0 && !rc)
        rc = fail();
    return rc;
}

int queue_out_finish(struct queue_out *q, const struct sim *s)
{
    if (!q)
        return 0;
    uint32_t n = s->pol->queues(s, s->pol_state, q->buf, QMAX);
    int rc = 0;
    double iv = q->intervals ? (double)q->intervals : NAN;
    for (uint32_t i = 0; i < q->n && i < n && !rc; i++) {
        const struct pol_queue_stat *st = &q->buf[i];
        double *d = malloc((st->ndelays ? st->ndelays : 1) * sizeof *d);
        if (!d) {
            rc = -ENOMEM;
            break;
        }
        double sum = 0;
        for (size_t k = 0; k < st->ndelays; k++) {
            d[k] = st->delays[k];
            sum += d[k];
        }
        out_sort(d, st->ndelays);
        hid_t g = q->qg[i];
        size_t nd = st->ndelays;
        rc = put(g, "nominal_gpus", st->nominal, "GPUs", "nominal quota");
        rc = rc ? rc : put(g, "admitted_mean_gpus", q->sum_adm[i] / iv, "GPUs", "admitted (mean)");
        rc = rc ? rc : put(g, "borrowed_mean_gpus", q->sum_bor[i] / iv, "GPUs", "borrowed (mean)");
        rc = rc ? rc : put(g, "lent_mean_gpus", q->sum_lent[i] / iv, "GPUs", "lent (mean)");
        rc = rc ? rc : put(g, "admissions", (double)st->admissions, "workloads", "admissions");
        rc = rc ? rc : put(g, "evictions", (double)st->evictions, "workloads", "evictions");
        rc = rc ? rc
                : put(g, "delay_mean_s", nd ? sum / (double)nd : NAN, "s", "queueing delay mean");
        rc =
            rc ? rc
               : put(g, "delay_p50_s", out_quantile_sorted(d, nd, 0.50), "s", "queueing delay p50");
        rc =
            rc ? rc
               : put(g, "delay_p99_s", out_quantile_sorted(d, nd, 0.99), "s", "queueing delay p99");
        rc = rc ? rc : put(g, "delay_max_s", nd ? d[nd - 1] : NAN, "s", "queueing delay max");
        free(d);
        for (uint32_t f = 0; !rc && f < q->nf && f < st->nflavors; f++)
            rc = flavor_attrs(q, i, f, &st->flavors[f], iv);
    }
    queue_out_free(q);
    return rc;
}
