/* output.c — map a run onto the HDF5 results schema (docs/results.md). */
#include "sim/output.h"
#include "sim/output_schema.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/h5io.h"
#include "models/power.h"
#include "sim/output_queues.h"
#include "sim/sim.h"
#include "traces/arrivals.h"
#include "traces/jobs.h"

#ifndef TIDESIM_VERSION
#define TIDESIM_VERSION "dev"
#endif
#ifndef TIDESIM_GIT
#define TIDESIM_GIT "unknown"
#endif

/* /timeseries columns; the share_* columns are fractions of card time by use (sum + free = 1). */
static const char *const ts_names[] = {
    "time_s",           "util_allocated",      "util_busy",
    "util_useful",      "share_training",      "share_inference",
    "share_checkpoint", "share_restore",       "share_recompute",
    "share_overhead",   "share_reconfiguring", "share_idle",
    "share_free",       "gpus_inference",      "gpus_training",
    "jobs_running",     "jobs_queued",         "checkpoint_gpu_s",
    "power_w",          "gpus_fragmented"};
static const char *const ts_units[] = {"s",    "1",    "1",    "1",     "1", "1",   "1",
                                       "1",    "1",    "1",    "1",     "1", "1",   "GPUs",
                                       "GPUs", "jobs", "jobs", "GPU*s", "W", "GPUs"};
#define TS_COLS (sizeof(ts_names) / sizeof(ts_names[0]))

static const char *const svc_names[] = {
    "time_s", "arrived", "rate_rps", "served", "dropped",   "queue_len",    "replicas",   "mean_ms",
    "p50_ms", "p95_ms",  "p99_ms",   "max_ms", "slo_share", "capacity_rps", "within_slo", "failed"};
static const char *const svc_units[] = {
    "s",  "requests", "req/s", "requests", "requests", "requests", "replicas", "ms",
    "ms", "ms",       "ms",    "ms",       "1",        "req/s",    "requests", "requests"};
#define SVC_COLS (sizeof(svc_names) / sizeof(svc_names[0]))

static const char *const hist_names[] = {"interval", "bucket", "count"};
static const char *const hist_units[] = {"index", "index", "requests"};

/* /services/<name>/llm_timeseries (LLM services only): token-level figures per interval. */
static const char *const llm_names[] = {"time_s",       "ttft_mean_ms",         "ttft_p50_ms",
                                        "ttft_p90_ms",  "ttft_p99_ms",          "tpot_mean_ms",
                                        "tpot_p50_ms",  "tpot_p90_ms",          "tpot_p99_ms",
                                        "tokens_per_s", "prefill_tokens_per_s", "kv_occupancy",
                                        "running",      "running_max",          "preemptions",
                                        "swaps",        "rejected_too_long",    "truncated"};
static const char *const llm_units[] = {
    "s",         "ms",        "ms",     "ms",       "ms",       "ms",
    "ms",        "ms",        "ms",     "tokens/s", "tokens/s", "1",
    "sequences", "sequences", "events", "events",   "requests", "requests"};
#define LLM_COLS (sizeof(llm_names) / sizeof(llm_names[0]))

struct svc_out {
    hid_t grp;
    struct h5_series ts, hist;
    bool llm;
    struct h5_series lts, ttft_hist, tpot_hist; /* LLM services */
    /* Serving headroom (capacity at the SLO / arrival rate) over the measured window's
     * intervals with arrivals: the tightest, and the one at the busiest interval. */
    double head_min, head_peak, peak_rate;
};

struct sim_output {
    struct h5file f;
    hid_t g_ts, g_gpus, g_svcs;
    struct h5_series ts;
    struct h5_matrix gpu_alloc, gpu_busy, gpu_useful;
    bool per_gpu;
    float *row;
    struct svc_out *svcs;
    size_t nsvcs;
    uint64_t interval;
    char wall_start[40];
    double wall_t0;
    /* Fragmented GPU-µs (sampled at each interval's end × its length): whole run, and since
     * the warm-up snapshot. */
    double frag_us, frag_win_us;
    /* cluster.pools given: /pools/<name> groups and their per-interval series. */
    hid_t g_pools;
    hid_t *pool_grp;
    struct h5_series *pool_ts;
    uint32_t npools;
    int pool_err;                            /* first write error of the pool series */
    double *pool_frag_us, *pool_frag_win_us; /* per pool, as frag_us / frag_win_us */
    struct queue_out *queues; /* /queues (sim/output_queues.h), NULL until a policy reports */
};

static const char *const pool_ts_names[] = {"time_s",        "util_allocated", "util_busy",
                                            "util_useful",   "share_free",     "gpus_inference",
                                            "gpus_training", "power_w",        "gpus_fragmented"};
static const char *const pool_ts_units[] = {"s", "1", "1", "1", "1", "GPUs", "GPUs", "W", "GPUs"};
#define POOL_TS_COLS (sizeof(pool_ts_names) / sizeof(pool_ts_names[0]))

/* The first error of a sequence of writes: rc unless it is 0. */
static int keep(int rc, int now)
{
    return rc ? rc : now;
}

static void iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Close a group id (0 or negative: none). Returns 0 or the write error of its close. */
static int close_group(hid_t g)
{
    return g > 0 && H5Gclose(g) < 0 ? h5io_fail() : 0;
}

/* Flush and close the series and groups; returns the first write error (the last rows are
 * written here). */
static int close_groups(struct sim_output *o)
{
    int rc = 0;
    for (size_t i = 0; i < o->nsvcs; i++) {
        rc = keep(rc, h5_series_close(&o->svcs[i].ts));
        rc = keep(rc, h5_series_close(&o->svcs[i].hist));
        if (o->svcs[i].llm) {
            rc = keep(rc, h5_series_close(&o->svcs[i].lts));
            rc = keep(rc, h5_series_close(&o->svcs[i].ttft_hist));
            rc = keep(rc, h5_series_close(&o->svcs[i].tpot_hist));
        }
        rc = keep(rc, close_group(o->svcs[i].grp));
    }
    for (uint32_t i = 0; i < o->npools; i++) {
        rc = keep(rc, h5_series_close(&o->pool_ts[i]));
        rc = keep(rc, close_group(o->pool_grp[i]));
    }
    rc = keep(rc, close_group(o->g_pools));
    o->g_pools = 0;
    o->npools = 0;
    rc = keep(rc, h5_series_close(&o->ts));
    rc = keep(rc, h5_matrix_close(&o->gpu_alloc));
    rc = keep(rc, h5_matrix_close(&o->gpu_busy));
    rc = keep(rc, h5_matrix_close(&o->gpu_useful));
    rc = keep(rc, close_group(o->g_ts));
    rc = keep(rc, close_group(o->g_gpus));
    rc = keep(rc, close_group(o->g_svcs));
    o->g_ts = o->g_gpus = o->g_svcs = 0;
    o->nsvcs = 0;
    return rc;
}

static void output_free(struct sim_output *o)
{
    queue_out_free(o->queues);
    free(o->svcs);
    free(o->row);
    free(o->pool_grp);
    free(o->pool_ts);
    free(o->pool_frag_us);
    free(o->pool_frag_win_us);
    free(o);
}

/* An LLM service's token-level series: its timeseries and the TTFT/TPOT interval histograms. */
static int open_llm_series(struct svc_out *so)
{
    static const char *const names[] = {"llm_timeseries", "ttft_interval_histogram",
                                        "tpot_interval_histogram"};
    struct h5_series *ser[] = {&so->lts, &so->ttft_hist, &so->tpot_hist};
    so->llm = true;
    int rc = 0;
    for (size_t k = 0; k < 3 && !rc; k++) {
        hid_t g = h5_group_create(so->grp, names[k]);
        if (g < 0)
            return h5io_fail();
        rc = k == 0 ? h5_series_open(ser[k], g, llm_names, llm_units, LLM_COLS, 1024)
                    : h5_series_open(ser[k], g, hist_names, hist_units, 3, 4096);
        rc = keep(rc, close_group(g));
    }
    return rc;
}

/* One interval's histogram rows (interval, bucket, count) of h. */
static int append_hist(struct h5_series *ser, uint64_t interval, const struct hist *h)
{
    int rc = 0;
    for (uint32_t b = 0; h->total && b < HIST_BUCKETS; b++) {
        if (!h->counts[b])
            continue;
        double hr[3] = {(double)interval, b, (double)h->counts[b]};
        rc = keep(rc, h5_series_append(ser, hr));
    }
    return rc;
}

/* The LLM row of service sv over [t0, t1). */
static int llm_interval(struct svc_out *so, const struct service *sv, uint64_t interval,
                        sim_time t0, sim_time t1)
{
    const struct llm_svc *ls = sv->llm;
    const struct hist *tt = ls->ttft_win, *tp = ls->tpot_win;
    double span = sim_time_to_sec(t1 - t0), row[LLM_COLS];
    row[0] = sim_time_to_sec(t1);
    row[1] = hist_mean(tt) / 1e3;
    row[2] = hist_quantile(tt, 0.50) / 1e3;
    row[3] = hist_quantile(tt, 0.90) / 1e3;
    row[4] = hist_quantile(tt, 0.99) / 1e3;
    row[5] = hist_mean(tp) / 1e3;
    row[6] = hist_quantile(tp, 0.50) / 1e3;
    row[7] = hist_quantile(tp, 0.90) / 1e3;
    row[8] = hist_quantile(tp, 0.99) / 1e3;
    row[9] = span > 0 ? ls->win.tokens_out / span : 0;
    row[10] = span > 0 ? ls->win.tokens_in / span : 0;
    row[11] = llm_interval_kv(sv);
    row[12] = (double)llm_running(sv);
    row[13] = (double)ls->win.running_max;
    row[14] = (double)ls->win.preemptions;
    row[15] = (double)ls->win.swaps;
    row[16] = (double)ls->win.rejected_long;
    row[17] = (double)ls->win.truncated;
    int rc = h5_series_append(&so->lts, row);
    rc = keep(rc, append_hist(&so->ttft_hist, interval, tt));
    rc = keep(rc, append_hist(&so->tpot_hist, interval, tp));
    return rc;
}

int sim_output_open(struct sim_output **out, const char *path, const struct scenario *sc, char *err,
                    size_t errlen)
{
    struct sim_output *o = calloc(1, sizeof(*o));
    *out = NULL;
    if (!o) {
        snprintf(err, errlen, "cannot create %s: out of memory", path);
        return -ENOMEM;
    }
    h5io_quiet();
    o->wall_t0 = mono_now();
    iso_now(o->wall_start, sizeof(o->wall_start));
    int rc = h5file_create(&o->f, path);
    if (rc) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
        free(o);
        return rc;
    }
    uint32_t ngpus = scenario_gpus(sc);
    o->per_gpu = sc->per_gpu_timeseries;
    o->row = calloc(ngpus, sizeof(*o->row));
    o->svcs = calloc(sc->nservices ? sc->nservices : 1, sizeof(*o->svcs));
    o->g_ts = h5_group_create(o->f.id, "timeseries");
    o->g_gpus = h5_group_create(o->f.id, "gpus");
    o->g_svcs = h5_group_create(o->f.id, "services");
    rc = !o->row || !o->svcs ? -ENOMEM : 0;
    if (!rc && (o->g_ts < 0 || o->g_gpus < 0 || o->g_svcs < 0))
        rc = h5io_fail();
    if (!rc)
        rc = h5_series_open(&o->ts, o->g_ts, ts_names, ts_units, TS_COLS, 1024);
    if (!rc && o->per_gpu) {
        rc = h5_matrix_open(&o->gpu_alloc, o->g_gpus, "allocated_by_interval", ngpus, 64, "1");
        if (!rc)
            rc = h5_matrix_open(&o->gpu_busy, o->g_gpus, "busy_by_interval", ngpus, 64, "1");
        if (!rc)
            rc = h5_matrix_open(&o->gpu_useful, o->g_gpus, "useful_by_interval", ngpus, 64, "1");
    }
    if (!rc && sc->pools_given) {
        o->g_pools = h5_group_create(o->f.id, "pools");
        o->pool_grp = calloc(sc->npools, sizeof(*o->pool_grp));
        o->pool_ts = calloc(sc->npools, sizeof(*o->pool_ts));
        o->pool_frag_us = calloc(sc->npools, sizeof(*o->pool_frag_us));
        o->pool_frag_win_us = calloc(sc->npools, sizeof(*o->pool_frag_win_us));
        rc = !o->pool_grp || !o->pool_ts || !o->pool_frag_us || !o->pool_frag_win_us ? -ENOMEM
             : o->g_pools < 0                                                        ? h5io_fail()
                                                                                     : 0;
        for (uint32_t i = 0; !rc && i < sc->npools; i++) {
            o->pool_grp[i] = h5_group_create(o->g_pools, sc->pools[i].name);
            o->npools = i + 1;
            if (o->pool_grp[i] < 0) {
                rc = h5io_fail();
                break;
            }
            hid_t g = h5_group_create(o->pool_grp[i], "timeseries");
            if (g < 0) {
                rc = h5io_fail();
                break;
            }
            rc =
                h5_series_open(&o->pool_ts[i], g, pool_ts_names, pool_ts_units, POOL_TS_COLS, 1024);
            rc = keep(rc, close_group(g));
        }
    }
    for (size_t i = 0; !rc && i < sc->nservices; i++) {
        struct svc_out *so = &o->svcs[i];
        so->head_min = so->head_peak = NAN;
        so->peak_rate = 0;
        so->grp = h5_group_create(o->g_svcs, sc->services[i].name);
        o->nsvcs = i + 1;
        if (so->grp < 0) {
            rc = h5io_fail();
            break;
        }
        hid_t g = h5_group_create(so->grp, "timeseries");
        if (g < 0) {
            rc = h5io_fail();
            break;
        }
        rc = h5_series_open(&so->ts, g, svc_names, svc_units, SVC_COLS, 1024);
        rc = keep(rc, close_group(g));
        if (!rc) {
            hid_t h = h5_group_create(so->grp, "interval_histogram");
            rc =
                h < 0 ? h5io_fail() : h5_series_open(&so->hist, h, hist_names, hist_units, 3, 4096);
            rc = keep(rc, close_group(h));
        }
        if (!rc && sc->services[i].kind == SVC_LLM)
            rc = open_llm_series(so);
    }
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
        close_groups(o);
        h5file_abort(&o->f);
        output_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

/*
 * Nodes of one size: free cards of pool `pool` (UINT32_MAX: every pool, constraints ignored) that
 * no queued gang allowed there could use now: the smallest such gang that fits
 * a node, and the fewest whole nodes of the pool a bigger one needs.
 */
static uint32_t fragmented_alike_pool(const struct sim *s, uint32_t pool)
{
    const struct cluster *cl = &s->cl;
    const struct trainer *tr = &s->tr;
    if (tr->queued == 0 || cl->free_cards == 0 || cl->per_node == 0)
        return 0;
    uint32_t n0 = 0, n1 = cl->nodes;
    if (pool != UINT32_MAX) {
        n0 = cl->pools[pool].first_node;
        n1 = n0 + cl->pools[pool].nodes;
    }
    /* Queued jobs are mostly recent: walk back until all of them are seen. */
    uint32_t small = UINT32_MAX, nodes_big = UINT32_MAX, seen = 0;
    for (uint32_t j = tr->njobs; j-- > 0 && seen < tr->queued;) {
        if (tr->jobs[j].state != JOB_QUEUED)
            continue;
        seen++;
        if (pool != UINT32_MAX && !((tr->jobs[j].pools_allow >> pool) & 1u))
            continue;
        uint32_t g = tr->jobs[j].spec.gpus;
        if (g <= cl->per_node) {
            if (g < small)
                small = g;
        } else if ((g + cl->per_node - 1) / cl->per_node < nodes_big) {
            nodes_big = (g + cl->per_node - 1) / cl->per_node;
        }
    }
    uint32_t whole = 0;
    for (uint32_t n = n0; n < n1; n++)
        whole += cl->node_free[n] == cl->per_node;
    uint32_t frag = 0;
    for (uint32_t n = n0; n < n1; n++) {
        uint32_t f = cl->node_free[n];
        bool usable = (small != UINT32_MAX && f >= small) ||
                      (nodes_big != UINT32_MAX && f == cl->per_node && whole >= nodes_big);
        if (!usable)
            frag += f;
    }
    return frag;
}

static uint32_t fragmented_alike(const struct sim *s)
{
    return fragmented_alike_pool(s, UINT32_MAX);
}

/*
 * Free cards of pool `pool` (UINT32_MAX: every pool, constraints ignored) that
 * no queued gang allowed there could use now: the smallest such gang that fits
 * one of its nodes, and the fewest whole nodes of the pool a bigger one needs
 * (a gang larger than a node takes whole nodes of one pool).
 */
static uint32_t fragmented_pool(const struct sim *s, uint32_t p, bool constrained)
{
    const struct cluster *cl = &s->cl;
    const struct trainer *tr = &s->tr;
    const struct cluster_pool *pl = &cl->pools[p];
    uint32_t per = pl->nodes ? pl->ngpus / pl->nodes : 0, n0 = pl->first_node, n1 = n0 + pl->nodes;
    if (per == 0)
        return 0;
    /* Queued jobs are mostly recent: walk back until all of them are seen. */
    uint32_t small = UINT32_MAX, nodes_big = UINT32_MAX, seen = 0;
    for (uint32_t j = tr->njobs; j-- > 0 && seen < tr->queued;) {
        if (tr->jobs[j].state != JOB_QUEUED)
            continue;
        seen++;
        if (constrained && !((tr->jobs[j].pools_allow >> p) & 1u))
            continue;
        uint32_t g = tr->jobs[j].spec.gpus;
        if (g <= per) {
            if (g < small)
                small = g;
        } else if ((g + per - 1) / per < nodes_big) {
            nodes_big = (g + per - 1) / per;
        }
    }
    uint32_t whole = 0;
    for (uint32_t n = n0; n < n1; n++)
        whole += cl->node_free[n] == per;
    uint32_t frag = 0;
    for (uint32_t n = n0; n < n1; n++) {
        uint32_t f = cl->node_free[n];
        bool usable = (small != UINT32_MAX && f >= small) ||
                      (nodes_big != UINT32_MAX && f == per && whole >= nodes_big);
        if (!usable)
            frag += f;
    }
    return frag;
}

static uint32_t fragmented_in(const struct sim *s, uint32_t pool)
{
    const struct cluster *cl = &s->cl;
    if (s->tr.queued == 0 || cl->free_cards == 0 || cl->per_node == 0)
        return 0;
    if (pool != UINT32_MAX)
        return fragmented_pool(s, pool, true);
    /* The whole cluster as one pool when its nodes are alike (as it always was). */
    bool alike = true;
    for (uint32_t p = 0; p < cl->npools; p++)
        alike = alike && cl->pools[p].ngpus == cl->pools[p].nodes * cl->per_node;
    if (alike)
        return fragmented_alike(s);
    uint32_t frag = 0;
    for (uint32_t p = 0; p < cl->npools; p++)
        frag += fragmented_pool(s, p, false);
    return frag;
}

uint32_t sim_output_fragmented_gpus(const struct sim *s)
{
    if (!s->constrained)
        return fragmented_in(s, UINT32_MAX);
    /* With placement constraints a free card is usable only by the gangs allowed in its pool. */
    uint32_t frag = 0;
    for (uint32_t p = 0; p < s->cl.npools; p++)
        frag += fragmented_in(s, p);
    return frag;
}

static int sink_interval(void *ctx, const struct sim *s, sim_time t0, sim_time t1)
{
    return sim_output_interval(ctx, s, t0, t1);
}

void sim_output_sink(struct sim_output *o, struct sim_sink *sink)
{
    sink->interval = sink_interval;
    sink->ctx = o;
}

/*
 * /pools/<name> attributes (cluster.pools given): the pool's board and size,
 * its utilisations and GPU-time by use over the measured window (as /summary
 * counts them), the training work done on it in reference-board GPU-hours
 * (useful training GPU-time × its training speed), the requests its batch
 * replicas served and within their SLO (whole run), energy and cost at its
 * board's price.
 */
static int annotate_in(hid_t grp, int service, const char *currency);
int out_attr_fixed_str(hid_t obj, const char *name, const char *v);

static int write_pools(struct sim_output *o, const struct sim *s, double win_s, double train_h)
{
    const struct scenario *sc = s->sc;
    const struct cluster *cl = &s->cl;
    int rc = 0;
    (void)train_h;
    for (uint32_t p = 0; p < o->npools && p < cl->npools; p++) {
        const struct cluster_pool *pl = &cl->pools[p];
        hid_t g = o->pool_grp[p];
        double len_us = win_s * 1e6, cap = len_us * pl->ngpus;
        double gh = (double)pl->ngpus * win_s / 3600.0;
        double st[USE_NSTATES] = {0};
        for (uint32_t i = pl->first_gpu; i < pl->first_gpu + pl->ngpus; i++)
            for (int k = 0; k < USE_NSTATES; k++)
                st[k] += sim_window_card_us(s, i, k);
        char labels[512];
        size_t at = 0;
        labels[0] = '\0';
        for (uint32_t l = 0; l < pl->nlabels && at < sizeof(labels); l++) {
            int n = snprintf(labels + at, sizeof(labels) - at, "%s%s=%s", l ? "," : "",
                             pl->labels[l].key, pl->labels[l].value);
            at += n > 0 ? (size_t)n : 0;
        }
        uint64_t served = 0, within = 0;
        for (uint32_t k = 0; k < s->nsvcs; k++) {
            served += s->svcs[k].pool_served[p];
            within += s->svcs[k].pool_within[p];
        }
        /* Fixed-length strings: replications are merged with H5Ocopy, which crashes in HDF5
         * 1.10 on a group with dense attributes and variable-length strings (analysis/merge.c). */
        rc = keep(rc, out_attr_fixed_str(g, "gpu", pl->spec->name));
        rc = keep(rc, out_attr_fixed_str(g, "labels", labels));
        /* A mixed fleet (/meta sharing "mixed"): how its cards are shared (whole cards:
         * exclusive), the tenants a card takes, and its faults (whole run). Only then, so the
         * files of one-mode fleets stay as they were (docs/results.md). */
        if (sc->mixed) {
            rc = keep(rc, out_attr_fixed_str(g, "sharing", share_mode_name(pl->mode)));
            rc = keep(rc, h5_attr_int(g, "slots", pl->slots));
            rc =
                keep(rc, h5_attr_int(g, "faults", s->pool_faults ? (int64_t)s->pool_faults[p] : 0));
            rc = keep(rc,
                      h5_attr_int(g, "fault_victims",
                                  s->pool_fault_victims ? (int64_t)s->pool_fault_victims[p] : 0));
        }
        rc = keep(rc, h5_attr_int(g, "nodes", pl->nodes));
        rc = keep(rc, h5_attr_int(g, "gpus", pl->ngpus));
        rc = keep(rc, h5_attr_int(g, "first_gpu", pl->first_gpu));
        rc = keep(rc, h5_attr_double(g, "train_speed", pl->train_speed));
        rc = keep(rc, h5_attr_double(g, "infer_speed", pl->infer_speed));
        rc = keep(rc, h5_attr_double(g, "gpu_hours", gh));
        rc = keep(
            rc, h5_attr_double(g, "util_allocated", cap > 0 ? sim_pool_gpu_us(s, p, 0) / cap : 0));
        rc = keep(rc, h5_attr_double(g, "util_busy", cap > 0 ? sim_pool_gpu_us(s, p, 1) / cap : 0));
        rc = keep(rc,
                  h5_attr_double(g, "util_useful", cap > 0 ? sim_pool_gpu_us(s, p, 2) / cap : 0));
        char name[48];
        for (int k = 0; k < USE_NSTATES; k++) {
            snprintf(name, sizeof(name), "gpu_hours_%s", use_state_name((enum use_state)k));
            rc = keep(rc, h5_attr_double(g, name, st[k] / 3.6e9));
        }
        rc = keep(
            rc, h5_attr_double(g, "training_gpu_hours", st[USE_USEFUL] / 3.6e9 * pl->train_speed));
        double frag = sim_window_start(s) > 0 ? o->pool_frag_win_us[p] : o->pool_frag_us[p];
        rc = keep(rc, h5_attr_double(g, "share_fragmented", gh > 0 ? frag / 3.6e9 / gh : 0));
        rc = keep(rc, h5_attr_int(g, "requests_served", (int64_t)served));
        rc = keep(rc, h5_attr_int(g, "requests_within_slo", (int64_t)within));
        /* Of the requests served there (a dropped request was served nowhere). */
        rc = keep(rc,
                  h5_attr_double(g, "slo_share", served ? (double)within / (double)served : NAN));
        rc = keep(rc, h5_attr_double(g, "duration_s", sim_time_to_sec(s->end)));
        double kwh = sim_pool_energy_kwh(s, p);
        rc = keep(rc, h5_attr_double(g, "energy_kwh", kwh));
        if (sc->cost.on) {
            double c_gpu = gh * sc->pools[p].gpu_hour, c_pow = kwh * sc->cost.power_kwh;
            rc = keep(rc, h5_attr_double(g, "gpu_hour_price", sc->pools[p].gpu_hour));
            rc = keep(rc, h5_attr_double(g, "cost_gpu", c_gpu));
            rc = keep(rc, h5_attr_double(g, "cost_energy", c_pow));
            rc = keep(rc, h5_attr_double(g, "cost_total", c_gpu + c_pow));
        }
        rc = keep(rc, annotate_in(g, 2, sc->cost.currency));
    }
    return rc;
}

/*
 * Pool p's figures over the interval [t0, t1): appended to its series when the
 * results have /pools. Returns its mean power, W (the cluster's row sums them).
 */
static double pool_interval(struct sim_output *o, const struct sim *s, uint32_t p, sim_time t0,
                            sim_time t1)
{
    const struct cluster *cl = &s->cl;
    const struct cluster_pool *pl = &cl->pools[p];
    double span = (double)(t1 - t0), alloc = 0, busy = 0, useful = 0, tot = 0;
    uint32_t ninf = 0, ntrain = 0;
    for (uint32_t i = pl->first_gpu; i < pl->first_gpu + pl->ngpus; i++) {
        const struct card *g = &cl->cards[i];
        alloc += g->ialloc_us;
        busy += card_busy_us(g, true);
        useful += card_useful_us(g, true);
        for (int k = 0; k < USE_NSTATES; k++)
            tot += g->iacc[k];
        bool inf = false, tr = false;
        for (uint32_t t = 0; t < g->nten; t++) {
            inf |= cl->tenants[g->ten[t]].kind == TENANT_INFER;
            tr |= cl->tenants[g->ten[t]].kind == TENANT_TRAIN;
        }
        ninf += inf;
        ntrain += tr;
    }
    double denom = span > 0 ? span * pl->ngpus : 1;
    double w = pl->ngpus * power_watts(pl->spec->idle_w, pl->spec->tdp_w, busy / denom);
    if (p < o->npools) {
        uint32_t frag = fragmented_in(s, p);
        o->pool_frag_us[p] += (double)frag * span;
        if (s->warm.at > 0 && t0 >= s->warm.at)
            o->pool_frag_win_us[p] += (double)frag * span;
        double row[POOL_TS_COLS] = {sim_time_to_sec(t1),
                                    alloc / denom,
                                    busy / denom,
                                    useful / denom,
                                    tot / denom < 1 ? 1 - tot / denom : 0,
                                    ninf,
                                    ntrain,
                                    w,
                                    frag};
        o->pool_err = keep(o->pool_err, h5_series_append(&o->pool_ts[p], row));
    }
    return w;
}

int sim_output_interval(struct sim_output *o, const struct sim *s, sim_time t0, sim_time t1)
{
    const struct cluster *cl = &s->cl;
    double span = (double)(t1 - t0), alloc = 0, busy = 0, useful = 0, st[USE_NSTATES] = {0};
    double row[TS_COLS > SVC_COLS ? TS_COLS : SVC_COLS];
    uint32_t ninf = 0, ntrain = 0;
    int rc = 0;

    for (uint32_t i = 0; i < cl->ngpus; i++) {
        const struct card *g = &cl->cards[i];
        alloc += g->ialloc_us;
        busy += card_busy_us(g, true);
        useful += card_useful_us(g, true);
        for (int k = 0; k < USE_NSTATES; k++)
            st[k] += g->iacc[k];
        bool inf = false, tr = false;
        for (uint32_t t = 0; t < g->nten; t++) {
            inf |= cl->tenants[g->ten[t]].kind == TENANT_INFER;
            tr |= cl->tenants[g->ten[t]].kind == TENANT_TRAIN;
        }
        ninf += inf;
        ntrain += tr;
    }
    double denom = span > 0 ? span * cl->ngpus : 1, tot = 0;
    row[0] = sim_time_to_sec(t1);
    row[1] = alloc / denom;
    row[2] = busy / denom;
    row[3] = useful / denom;
    for (int k = 0; k < USE_NSTATES; k++) {
        row[4 + k] = st[k] / denom;
        tot += st[k] / denom;
    }
    row[12] = tot < 1 ? 1 - tot : 0;
    row[13] = ninf;
    row[14] = ntrain;
    row[15] = s->tr.running;
    row[16] = s->tr.queued;
    row[17] = (st[USE_CKPT] + st[USE_RESTORE] + st[USE_RECOMPUTE]) / 1e6;
    if (cl->npools > 1) {
        row[18] = 0;
        for (uint32_t p = 0; p < cl->npools; p++)
            row[18] += pool_interval(o, s, p, t0, t1);
    } else {
        row[18] = cl->ngpus * power_watts(s->sc->spec->idle_w, s->sc->spec->tdp_w, busy / denom);
        if (o->npools)
            pool_interval(o, s, 0, t0, t1);
    }
    uint32_t frag = sim_output_fragmented_gpus(s);
    row[19] = frag;
    o->frag_us += (double)frag * span;
    /* The warm-up snapshot is taken at the end of this interval or earlier. */
    if (s->warm.at > 0 && t0 >= s->warm.at)
        o->frag_win_us += (double)frag * span;
    rc = keep(rc, h5_series_append(&o->ts, row));
    rc = keep(rc, o->pool_err);

    if (o->per_gpu) {
        for (uint32_t i = 0; i < cl->ngpus; i++)
            o->row[i] = span > 0 ? (float)(cl->cards[i].ialloc_us / span) : 0.0f;
        rc = keep(rc, h5_matrix_append(&o->gpu_alloc, o->row));
        for (uint32_t i = 0; i < cl->ngpus; i++)
            o->row[i] = span > 0 ? (float)(card_busy_us(&cl->cards[i], true) / span) : 0.0f;
        rc = keep(rc, h5_matrix_append(&o->gpu_busy, o->row));
        for (uint32_t i = 0; i < cl->ngpus; i++)
            o->row[i] = span > 0 ? (float)(card_useful_us(&cl->cards[i], true) / span) : 0.0f;
        rc = keep(rc, h5_matrix_append(&o->gpu_useful, o->row));
    }

    for (uint32_t k = 0; k < s->nsvcs; k++) {
        const struct service *sv = &s->svcs[k];
        const struct hist *h = sv->h_win;
        row[0] = sim_time_to_sec(t1);
        row[1] = (double)sv->win.arrived;
        row[2] = span > 0 ? (double)sv->win.arrived / sim_time_to_sec(t1 - t0) : 0;
        row[3] = (double)sv->win.served;
        row[4] = (double)sv->win.dropped;
        row[5] = (double)service_waiting(sv);
        row[6] = service_replicas(sv);
        row[7] = hist_mean(h) / 1e3;
        row[8] = hist_quantile(h, 0.50) / 1e3;
        row[9] = hist_quantile(h, 0.95) / 1e3;
        row[10] = hist_quantile(h, 0.99) / 1e3;
        row[11] = h->total ? (double)h->max / 1e3 : 0;
        /* Over the requests decided in the interval: served, dropped or failed in it. */
        uint64_t dec = sv->win.served + sv->win.dropped + sv->win.failed;
        row[12] = dec ? (double)sv->win.within_slo / (double)dec : NAN;
        row[13] = service_capacity_rps(sv);
        row[14] = (double)sv->win.within_slo;
        row[15] = (double)sv->win.failed;
        struct svc_out *so = &o->svcs[k];
        bool measured = s->sc->warmup <= 0 || (s->warm.at > 0 && t0 >= s->warm.at);
        if (measured && row[2] > 0) {
            double head = row[13] / row[2];
            if (!(head >= so->head_min))
                so->head_min = head;
            if (row[2] > so->peak_rate) {
                so->peak_rate = row[2];
                so->head_peak = head;
            }
        }
        rc = keep(rc, h5_series_append(&so->ts, row));
        if (h->total) {
            for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
                if (!h->counts[b])
                    continue;
                double hr[3] = {(double)o->interval, b, (double)h->counts[b]};
                rc = keep(rc, h5_series_append(&o->svcs[k].hist, hr));
            }
        }
        if (so->llm)
            rc = keep(rc, llm_interval(so, sv, o->interval, t0, t1));
    }
    rc = keep(rc, queue_out_interval(&o->queues, o->f.id, s, t1));
    o->interval++;
    return rc;
}

static int write_meta(struct sim_output *o, const struct sim *s, bool complete)
{
    const struct scenario *sc = s->sc;
    char host[256] = "unknown", wall_end[40];
    hid_t g = h5_group_create(o->f.id, "meta");
    if (g < 0)
        return h5io_fail();
    gethostname(host, sizeof(host) - 1);
    iso_now(wall_end, sizeof(wall_end));
    int rc = 0;
    rc = keep(rc, h5_attr_int(g, "schema_version", RESULTS_SCHEMA_VERSION));
    rc = keep(rc, h5_attr_str(g, "tidesim_version", TIDESIM_VERSION));
    rc = keep(rc, h5_attr_str(g, "git_commit", TIDESIM_GIT));
    rc = keep(rc, h5_attr_str(g, "scenario", sc->doc.text ? sc->doc.text : ""));
    rc = keep(rc, h5_attr_str(g, "scenario_path", sc->path ? sc->path : ""));
    rc = keep(rc, h5_attr_str(g, "scenario_name", sc->name));
    rc = keep(rc, h5_attr_int(g, "seed", (int64_t)s->seed));
    rc = keep(rc, h5_attr_int(g, "replication", 0));
    rc = keep(rc, h5_attr_str(g, "policy", sc->policy.name));
    rc = keep(rc, h5_attr_str(g, "gpu", sc->gpu));
    /* A mixed fleet (pools of several modes): "mixed"; each pool's is /pools/<name>.sharing. */
    rc = keep(rc, h5_attr_str(g, "sharing", sc->mixed ? "mixed" : share_mode_name(sc->sharing)));
    rc = keep(rc, h5_attr_int(g, "complete", complete ? 1 : 0));
    rc = keep(rc, h5_attr_double(g, "sim_time_reached_s", sim_time_to_sec(s->end)));
    rc = keep(rc, h5_attr_double(g, "duration_s", sim_time_to_sec(sc->duration)));
    rc = keep(rc, h5_attr_double(g, "sample_interval_s", sim_time_to_sec(sc->sample_interval)));
    rc = keep(rc, h5_attr_int(g, "events_processed", (int64_t)s->eng.processed));
    rc = keep(rc, h5_attr_str(g, "wall_start", o->wall_start));
    rc = keep(rc, h5_attr_str(g, "wall_end", wall_end));
    rc = keep(rc, h5_attr_double(g, "wall_seconds", mono_now() - o->wall_t0));
    rc = keep(rc, h5_attr_str(g, "host", host));
    rc = keep(rc, close_group(g));
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void out_sort(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
}

double out_quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

/* /jobs columns and the training part of /summary. */
/*
 * /job_segments: every span a job held its cards, by phase (the segment log of
 * sim/train.h), for the job timeline; segments still open at the end of the
 * run end at its end. Gaps between a job's segments are waits in the queue.
 */
static int write_segments(struct sim_output *o, const struct sim *s)
{
    const struct trainer *tr = &s->tr;
    size_t open = 0;
    for (uint32_t i = 0; i < tr->njobs; i++)
        open += tr->jobs[i].phase != PHASE_NONE && s->end > tr->jobs[i].seg_since;
    size_t n = tr->nsegs + open, m = n ? n : 1;
    double *col = malloc(m * sizeof(*col) * 4);
    if (!col)
        return -ENOMEM;
    double *job = col, *t0 = col + m, *t1 = col + 2 * m, *kind = col + 3 * m;
    size_t k = 0;
    for (size_t i = 0; i < tr->nsegs; i++, k++) {
        job[k] = tr->segs[i].job;
        t0[k] = sim_time_to_sec(tr->segs[i].t0);
        t1[k] = sim_time_to_sec(tr->segs[i].t1);
        kind[k] = tr->segs[i].kind;
    }
    for (uint32_t i = 0; i < tr->njobs; i++) {
        const struct job *j = &tr->jobs[i];
        if (j->phase == PHASE_NONE || !(s->end > j->seg_since))
            continue;
        job[k] = i;
        t0[k] = sim_time_to_sec(j->seg_since);
        t1[k] = sim_time_to_sec(s->end);
        kind[k] = j->phase;
        k++;
    }
    hid_t g = h5_group_create(o->f.id, "job_segments");
    int rc = g < 0 ? h5io_fail() : 0;
    if (g >= 0) {
        static const char legend[] = "1=restore 2=run 3=checkpoint 4=checkpoint in a preemption's "
                                     "grace period";
        rc = keep(rc, h5_write_f64(g, "job", job, n, "1"));
        rc = keep(rc, h5_write_f64(g, "start_s", t0, n, "s"));
        rc = keep(rc, h5_write_f64(g, "end_s", t1, n, "s"));
        rc = keep(rc, h5_write_f64(g, "kind", kind, n, legend));
        rc = keep(rc, h5_attr_str(g, "kind_legend", legend));
        rc = keep(rc, h5_attr_int(g, "truncated", tr->segs_truncated ? 1 : 0));
        rc = keep(rc, close_group(g));
    }
    free(col);
    return rc;
}

static int write_jobs(struct sim_output *o, const struct sim *s, hid_t summary, double *gpu_h_out)
{
    const struct trainer *tr = &s->tr;
    size_t n = tr->njobs, m = n ? n : 1;
    double *col = malloc(m * sizeof(*col) * 18);
    double *qd = malloc(m * sizeof(*qd)), *jct = malloc(m * sizeof(*jct));
    int rc = 0;
    if (!col || !qd || !jct) {
        free(col);
        free(qd);
        free(jct);
        return -ENOMEM;
    }
    double *id = col, *submit = col + m, *start = col + 2 * m, *end = col + 3 * m,
           *gpus = col + 4 * m, *work = col + 5 * m, *done = col + 6 * m, *state = col + 7 * m,
           *delay = col + 8 * m, *jc = col + 9 * m, *pre = col + 10 * m, *outc = col + 11 * m,
           *rst = col + 12 * m, *nck = col + 13 * m, *sav = col + 14 * m, *res = col + 15 * m,
           *lost = col + 16 * m, *qtot = col + 17 * m;
    size_t nq = 0, nj = 0;
    double gpu_h = 0, gpu_h_failed = 0;
    int64_t n_failed = 0, n_cancelled = 0, n_service = 0;
    for (size_t i = 0; i < n; i++) {
        const struct job *j = &tr->jobs[i];
        id[i] = (double)j->spec.id;
        submit[i] = sim_time_to_sec(j->spec.submit);
        start[i] = j->start >= 0 ? sim_time_to_sec(j->start) : NAN;
        end[i] = j->end >= 0 ? sim_time_to_sec(j->end) : NAN;
        gpus[i] = j->spec.gpus;
        work[i] = sim_time_to_sec(j->spec.work);
        done[i] = j->done_us > 0 ? j->done_us / 1e6 : 0; /* a warm job redoing pre-t = 0 work */
        state[i] = (double)j->state;
        delay[i] = j->start >= 0 ? start[i] - submit[i] : NAN;
        jc[i] = j->end >= 0 ? end[i] - submit[i] : NAN;
        pre[i] = j->preemptions;
        outc[i] = (double)j->spec.outcome;
        rst[i] = j->restarts;
        nck[i] = j->checkpoints;
        sav[i] = j->save_us / 1e6;
        res[i] = j->restore_us / 1e6;
        lost[i] = j->lost_us / 1e6;
        qtot[i] = j->queue_us / 1e6;
        if (j->spec.outcome == JOB_LOG_COMPLETED || j->spec.outcome == JOB_LOG_SERVICE)
            gpu_h += done[i] * j->spec.gpus / 3600.0;
        else
            gpu_h_failed += done[i] * j->spec.gpus / 3600.0;
        n_failed += j->spec.outcome == JOB_LOG_FAILED;
        n_cancelled += j->spec.outcome == JOB_LOG_CANCELLED;
        n_service += j->spec.outcome == JOB_LOG_SERVICE;
        if (j->start >= 0)
            qd[nq++] = delay[i];
        if (j->end >= 0)
            jct[nj++] = jc[i];
    }
    hid_t g = h5_group_create(o->f.id, "jobs");
    if (g < 0) {
        rc = h5io_fail();
        goto out;
    }
    rc = keep(rc, h5_write_f64(g, "id", id, n, "1"));
    rc = keep(rc, h5_write_f64(g, "submit_s", submit, n, "s"));
    rc = keep(rc, h5_write_f64(g, "start_s", start, n, "s"));
    rc = keep(rc, h5_write_f64(g, "end_s", end, n, "s"));
    rc = keep(rc, h5_write_f64(g, "gpus", gpus, n, "GPUs"));
    rc = keep(rc, h5_write_f64(g, "work_s", work, n, "s"));
    rc = keep(rc, h5_write_f64(g, "done_s", done, n, "s"));
    rc = keep(rc,
              h5_write_f64(g, "state", state, n, "0=queued 1=running 2=done 3=rejected 4=failed"));
    rc = keep(rc, h5_write_f64(g, "queue_delay_s", delay, n, "s"));
    rc = keep(rc, h5_write_f64(g, "completion_s", jc, n, "s"));
    rc = keep(rc, h5_write_f64(g, "preemptions", pre, n, "1"));
    rc = keep(
        rc, h5_write_f64(g, "log_outcome", outc, n, "0=completed 1=failed 2=cancelled 3=service"));
    rc = keep(rc, h5_write_f64(g, "restarts", rst, n, "1"));
    rc = keep(rc, h5_write_f64(g, "checkpoints", nck, n, "1"));
    rc = keep(rc, h5_write_f64(g, "checkpoint_save_s", sav, n, "s"));
    rc = keep(rc, h5_write_f64(g, "checkpoint_restore_s", res, n, "s"));
    rc = keep(rc, h5_write_f64(g, "lost_s", lost, n, "s"));
    rc = keep(rc, h5_write_f64(g, "queued_total_s", qtot, n, "s"));
    rc = keep(rc, h5_attr_str(g, "state_legend", "0=queued 1=running 2=done 3=rejected 4=failed"));
    rc = keep(rc,
              h5_attr_str(g, "log_outcome_legend", "0=completed 1=failed 2=cancelled 3=service"));
    rc = keep(rc, close_group(g));

    qsort(qd, nq, sizeof(*qd), cmp_double);
    qsort(jct, nj, sizeof(*jct), cmp_double);
    double sq = 0, sj = 0;
    for (size_t i = 0; i < nq; i++)
        sq += qd[i];
    for (size_t i = 0; i < nj; i++)
        sj += jct[i];
    rc = keep(rc, h5_attr_int(summary, "jobs_submitted", (int64_t)n));
    rc = keep(rc, h5_attr_int(summary, "jobs_completed", tr->done));
    rc = keep(rc, h5_attr_int(summary, "jobs_running", tr->running));
    rc = keep(rc, h5_attr_int(summary, "jobs_queued", tr->queued));
    rc = keep(rc, h5_attr_int(summary, "jobs_rejected", tr->rejected));
    if (s->constrained) /* placement constraints in the scenario (sim/pool_cfg.h) */
        rc = keep(rc, h5_attr_int(summary, "jobs_unplaceable", (int64_t)s->unplaceable));
    rc = keep(rc, h5_attr_int(summary, "jobs_failed", tr->failed));
    rc = keep(rc, h5_attr_int(summary, "preemptions", (int64_t)tr->preemptions));
    rc = keep(rc, h5_attr_int(summary, "restarts", (int64_t)tr->restarts));
    rc = keep(rc, h5_attr_double(summary, "training_gpu_hours", gpu_h));
    *gpu_h_out = gpu_h;
    rc = keep(rc, h5_attr_double(summary, "training_gpu_hours_failed_in_log", gpu_h_failed));
    rc = keep(rc, h5_attr_int(summary, "jobs_failed_in_log", n_failed));
    rc = keep(rc, h5_attr_int(summary, "jobs_cancelled_in_log", n_cancelled));
    rc = keep(rc, h5_attr_int(summary, "jobs_services_in_log", n_service));
    rc = keep(rc, h5_attr_int(summary, "job_log_services_skipped", (int64_t)tr->services_skipped));
    struct job_stats st = {0};
    if (tr->src)
        jobs_stats(tr->src, &st);
    rc = keep(rc, h5_attr_int(summary, "job_log_rows_skipped", (int64_t)st.skipped));
    rc = keep(rc,
              h5_attr_int(summary, "job_log_rows_filtered", (int64_t)(st.cpu_only + st.never_ran)));
    rc = keep(rc, h5_attr_double(summary, "queue_delay_mean_s", nq ? sq / (double)nq : NAN));
    rc = keep(rc, h5_attr_double(summary, "queue_delay_p50_s", out_quantile_sorted(qd, nq, 0.5)));
    rc = keep(rc, h5_attr_double(summary, "queue_delay_p95_s", out_quantile_sorted(qd, nq, 0.95)));
    rc = keep(rc, h5_attr_double(summary, "completion_mean_s", nj ? sj / (double)nj : NAN));
    rc = keep(rc, h5_attr_double(summary, "completion_p50_s", out_quantile_sorted(jct, nj, 0.5)));
    rc = keep(rc, h5_attr_double(summary, "completion_p95_s", out_quantile_sorted(jct, nj, 0.95)));
out:
    free(col);
    free(qd);
    free(jct);
    return rc;
}

/* /gpus: per card, seconds by use; they add up to the simulated time. */
static int write_gpus(struct sim_output *o, const struct sim *s)
{
    const struct cluster *cl = &s->cl;
    size_t n = cl->ngpus;
    double *v = malloc((USE_NSTATES + 5) * n * sizeof(*v));
    if (!v)
        return -ENOMEM;
    double end = (double)s->end;
    for (size_t i = 0; i < n; i++) {
        const struct card *g = &cl->cards[i];
        double sum = 0;
        v[i] = g->node;
        v[n + i] = g->alloc_us / 1e6;
        v[2 * n + i] = card_busy_us(g, false) / 1e6;
        v[3 * n + i] = card_useful_us(g, false) / 1e6;
        for (int k = 0; k < USE_NSTATES; k++) {
            v[(5 + (size_t)k) * n + i] = g->acc[k] / 1e6;
            sum += g->acc[k];
        }
        v[4 * n + i] = end > sum ? (end - sum) / 1e6 : 0;
    }
    int rc = 0;
    char name[48];
    rc = keep(rc, h5_write_f64(o->g_gpus, "node", v, n, "index"));
    rc = keep(rc, h5_write_f64(o->g_gpus, "allocated_s", v + n, n, "s"));
    rc = keep(rc, h5_write_f64(o->g_gpus, "busy_s", v + 2 * n, n, "s"));
    rc = keep(rc, h5_write_f64(o->g_gpus, "useful_s", v + 3 * n, n, "s"));
    rc = keep(rc, h5_write_f64(o->g_gpus, "free_s", v + 4 * n, n, "s"));
    for (int k = 0; k < USE_NSTATES; k++) {
        snprintf(name, sizeof(name), "%s_s", use_state_name((enum use_state)k));
        rc = keep(rc, h5_write_f64(o->g_gpus, name, v + (5 + (size_t)k) * n, n, "s"));
    }
    free(v);
    return rc;
}

/*
 * Give every numeric attribute of grp its "<key>.unit" and "<key>.label"
 * companions from output_schema.h (schema 2). An attribute the schema does
 * not know gets none (tests/sim/test_units.c fails on it).
 */
struct name_list {
    char **v;
    size_t n, cap;
    int rc;
};

static herr_t collect_name(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)loc;
    (void)info;
    struct name_list *l = data;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->rc = -ENOMEM;
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    size_t len = strlen(name) + 1;
    if (!(l->v[l->n] = malloc(len))) {
        l->rc = -ENOMEM;
        return -1;
    }
    memcpy(l->v[l->n++], name, len);
    return 0;
}

/*
 * A fixed-length string attribute: libhdf5 1.10 (Debian 12) crashes copying
 * (H5Ocopy, the replication merge) an object whose many attributes include
 * variable-length strings in dense storage, so the companions are fixed.
 */
int out_attr_fixed_str(hid_t obj, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    int rc = t < 0 || sp < 0 || H5Tset_size(t, strlen(v) + 1) < 0 ||
             H5Tset_strpad(t, H5T_STR_NULLTERM) < 0;
    hid_t a = rc ? H5I_INVALID_HID : H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    rc |= a < 0 || H5Awrite(a, t, v) < 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return rc ? h5io_fail() : 0;
}

/* Every attribute of grp in the schema gets "<key>.unit" and "<key>.label"; a unit that
 * starts with "currency" names the scenario's currency instead (cost figures). */
static int annotate_in(hid_t grp, int service, const char *currency)
{
    struct name_list l = {NULL, 0, 0, 0};
    hsize_t idx = 0;
    if (H5Aiterate2(grp, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, &l) < 0 && !l.rc)
        l.rc = h5io_fail();
    int rc = l.rc;
    char **names = l.v;
    size_t n = l.n;
    for (size_t i = 0; i < n && !rc; i++) {
        if (strchr(names[i], '.'))
            continue;
        const struct output_field *f = output_field_find(names[i], service);
        if (!f)
            continue;
        char key[160], unit[96];
        snprintf(key, sizeof(key), "%s.unit", names[i]);
        if (currency && !strncmp(f->unit, "currency", 8))
            snprintf(unit, sizeof(unit), "%s%s", currency, f->unit + 8);
        else
            snprintf(unit, sizeof(unit), "%s", f->unit);
        rc = keep(rc, out_attr_fixed_str(grp, key, unit));
        snprintf(key, sizeof(key), "%s.label", names[i]);
        rc = keep(rc, out_attr_fixed_str(grp, key, f->label));
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int annotate(hid_t grp, int service)
{
    return annotate_in(grp, service, NULL);
}

/* A histogram group name under grp: count, lo_us, hi_us of its buckets up to the last used. */
static int write_hist(hid_t grp, const char *name, const struct hist *h)
{
    uint32_t last = 0;
    for (uint32_t b = 0; b < HIST_BUCKETS; b++)
        if (h->counts[b])
            last = b + 1;
    int64_t *lo = malloc((last ? last : 1) * sizeof(*lo) * 2);
    if (!lo)
        return -ENOMEM;
    for (uint32_t b = 0; b < last; b++) {
        lo[b] = hist_bucket_lo(b);
        lo[last + b] = hist_bucket_hi(b);
    }
    int rc = 0;
    hid_t g = h5_group_create(grp, name);
    if (g < 0)
        rc = h5io_fail();
    if (g >= 0) {
        rc = keep(rc, h5_write_u64(g, "count", h->counts, last, "requests"));
        rc = keep(rc, h5_write_i64(g, "lo_us", lo, last, "us"));
        rc = keep(rc, h5_write_i64(g, "hi_us", lo + last, last, "us"));
        rc = keep(rc, close_group(g));
    }
    free(lo);
    return rc;
}

/* What the summary gathers over the LLM services. */
struct llm_sum {
    uint32_t n;
    double ttft_p99_max, tpot_p99_max; /* ms, worst service */
    double tokens_out, tokens_in, kv_token_us, kv_cap_us;
    uint64_t preemptions;
};

/*
 * An LLM service's token-level figures over the measured window: TTFT and
 * TPOT quantiles against their targets, tokens, KV-cache occupancy,
 * preemptions; and its TTFT/TPOT histograms. *slo_met gets whether both
 * SLO-quantiles meet their targets.
 */
static int write_llm(struct svc_out *so, const struct sim *s, uint32_t k, double win_s,
                     struct llm_sum *sum, bool *slo_met)
{
    const struct service *sv = &s->svcs[k];
    const struct llm_cfg *c = sv->cfg->llm;
    struct hist *tt = malloc(2 * sizeof(*tt)), *tp = tt + 1;
    struct llm_counts w;
    if (!tt)
        return -ENOMEM;
    sim_window_llm(s, k, &w, tt, tp);
    double q = sv->cfg->slo_quantile, ttft_slo = sim_time_to_sec(c->ttft_slo) * 1e3,
           tpot_slo = sim_time_to_sec(c->tpot_slo) * 1e3;
    double ttft_q = hist_quantile(tt, q) / 1e3, tpot_q = hist_quantile(tp, q) / 1e3;
    int rc = 0;
    /* Fixed-length strings: H5Ocopy (the replication merge) crashes on variable-length ones among
     * many attributes in libhdf5 1.10 (attr_fixed_str). */
    rc = keep(rc, out_attr_fixed_str(so->grp, "kind", "llm"));
    rc = keep(rc, out_attr_fixed_str(so->grp, "model", c->model_name));
    rc = keep(rc, h5_attr_int(so->grp, "tensor_parallel", c->tp));
    rc = keep(rc, h5_attr_int(so->grp, "kv_cache_tokens", (int64_t)c->kv_card));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_slo_ms", ttft_slo));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_slo_ms", tpot_slo));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_mean_ms", hist_mean(tt) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_p50_ms", hist_quantile(tt, 0.5) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_p90_ms", hist_quantile(tt, 0.9) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_p99_ms", hist_quantile(tt, 0.99) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_max_ms", tt->total ? (double)tt->max / 1e3 : NAN));
    rc = keep(rc, h5_attr_double(so->grp, "ttft_quantile_ms", ttft_q));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_mean_ms", hist_mean(tp) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_p50_ms", hist_quantile(tp, 0.5) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_p90_ms", hist_quantile(tp, 0.9) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_p99_ms", hist_quantile(tp, 0.99) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_max_ms", tp->total ? (double)tp->max / 1e3 : NAN));
    rc = keep(rc, h5_attr_double(so->grp, "tpot_quantile_ms", tpot_q));
    rc = keep(rc, h5_attr_double(so->grp, "tokens_generated", w.tokens_out));
    rc = keep(rc, h5_attr_double(so->grp, "tokens_prefilled", w.tokens_in));
    rc = keep(rc, h5_attr_double(so->grp, "tokens_per_s", win_s > 0 ? w.tokens_out / win_s : NAN));
    rc = keep(rc, h5_attr_double(so->grp, "kv_occupancy_mean",
                                 w.kv_cap_us > 0 ? w.kv_token_us / w.kv_cap_us : NAN));
    rc = keep(rc, h5_attr_int(so->grp, "preemptions", (int64_t)w.preemptions));
    rc = keep(rc, h5_attr_int(so->grp, "swaps", (int64_t)w.swaps));
    rc = keep(rc, h5_attr_int(so->grp, "rejected_too_long", (int64_t)w.rejected_long));
    rc = keep(rc, h5_attr_int(so->grp, "truncated", (int64_t)w.truncated));
    rc = keep(rc, h5_attr_int(so->grp, "running_max", (int64_t)w.running_max));
    rc = keep(rc, write_hist(so->grp, "ttft_histogram", tt));
    rc = keep(rc, write_hist(so->grp, "tpot_histogram", tp));
    *slo_met = (!tt->total || ttft_q <= ttft_slo) && (!tp->total || tpot_q <= tpot_slo);
    double p99t = hist_quantile(tt, 0.99) / 1e3, p99p = hist_quantile(tp, 0.99) / 1e3;
    if (tt->total && !(p99t <= sum->ttft_p99_max))
        sum->ttft_p99_max = p99t;
    if (tp->total && !(p99p <= sum->tpot_p99_max))
        sum->tpot_p99_max = p99p;
    sum->n++;
    sum->tokens_out += w.tokens_out;
    sum->tokens_in += w.tokens_in;
    sum->kv_token_us += w.kv_token_us;
    sum->kv_cap_us += w.kv_cap_us;
    sum->preemptions += w.preemptions;
    free(tt);
    return rc;
}

/*
 * Service k's group: its whole-run counters, and its latency figures and
 * shares over the measured window (the whole run without output.warmup);
 * *win gets the window's counters for the summary.
 */
static int write_service(struct svc_out *so, const struct sim *s, uint32_t k, double *slo_min,
                         double *p99_max, double *head_min, struct service_stats *win,
                         struct llm_sum *lsum)
{
    const struct service *sv = &s->svcs[k];
    struct hist *h = malloc(2 * sizeof(*h)), *q = h + 1;
    if (!h)
        return -ENOMEM;
    sim_window_service(s, k, win, h, q);
    const struct service_stats *w = win;
    const struct service_cfg *c = sv->cfg;
    int rc = 0;
    /*
     * Within-SLO share over every request whose fate is known: served, dropped,
     * failed (killed in a batch) or still waiting at the end (a miss not yet
     * counted). Requests in a running batch at the end are left out. The
     * served-only share is kept apart (slo_share_served).
     */
    uint64_t decided = w->served + w->dropped + w->failed + service_waiting(sv);
    double share = decided ? (double)w->within_slo / (double)decided : NAN;
    double share_served = w->served ? (double)w->within_slo / (double)w->served : NAN;
    double pq = hist_quantile(h, c->slo_quantile) / 1e3;
    rc = keep(rc, h5_attr_int(so->grp, "arrived", (int64_t)sv->tot.arrived));
    rc = keep(rc, h5_attr_int(so->grp, "served", (int64_t)sv->tot.served));
    rc = keep(rc, h5_attr_int(so->grp, "dropped", (int64_t)sv->tot.dropped));
    rc = keep(rc, h5_attr_int(so->grp, "failed", (int64_t)sv->tot.failed));
    rc = keep(rc, h5_attr_int(so->grp, "waiting", (int64_t)service_waiting(sv)));
    rc = keep(rc, h5_attr_int(so->grp, "within_slo", (int64_t)sv->tot.within_slo));
    if (sim_window_start(s) > 0) {
        rc = keep(rc, h5_attr_int(so->grp, "window_arrived", (int64_t)w->arrived));
        rc = keep(rc, h5_attr_int(so->grp, "window_served", (int64_t)w->served));
        rc = keep(rc, h5_attr_int(so->grp, "window_dropped", (int64_t)w->dropped));
        rc = keep(rc, h5_attr_int(so->grp, "window_failed", (int64_t)w->failed));
        rc = keep(rc, h5_attr_int(so->grp, "window_within_slo", (int64_t)w->within_slo));
    }
    rc = keep(rc, h5_attr_int(so->grp, "in_service", sv->in_service));
    rc = keep(rc, h5_attr_int(so->grp, "batches", (int64_t)sv->tot.batches));
    rc = keep(rc, h5_attr_int(so->grp, "trace_rows_skipped",
                              sv->src ? (int64_t)arrivals_skipped(sv->src) : 0));
    rc = keep(rc, h5_attr_double(so->grp, "mean_ms", hist_mean(h) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "p50_ms", hist_quantile(h, 0.5) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "p95_ms", hist_quantile(h, 0.95) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "p99_ms", hist_quantile(h, 0.99) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "max_ms", h->total ? (double)h->max / 1e3 : NAN));
    /* Waiting time (batch start − arrival) of the requests served in the window. */
    rc = keep(rc, h5_attr_double(so->grp, "mean_wait_ms", hist_mean(q) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "wait_p50_ms", hist_quantile(q, 0.5) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "wait_p95_ms", hist_quantile(q, 0.95) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "wait_p99_ms", hist_quantile(q, 0.99) / 1e3));
    rc = keep(rc, h5_attr_double(so->grp, "wait_max_ms", q->total ? (double)q->max / 1e3 : NAN));
    bool met = pq <= sim_time_to_sec(c->slo) * 1e3;
    if (so->llm) { /* the SLO is on TTFT and TPOT, not on the end-to-end latency */
        double win_s = sim_time_to_sec(s->end - sim_window_start(s));
        rc = keep(rc, write_llm(so, s, k, win_s, lsum, &met));
        rc = keep(rc, h5_attr_double(so->grp, "slo_quantile", c->slo_quantile));
    } else {
        rc = keep(rc, h5_attr_double(so->grp, "slo_ms", sim_time_to_sec(c->slo) * 1e3));
        rc = keep(rc, h5_attr_double(so->grp, "slo_quantile", c->slo_quantile));
        rc = keep(rc, h5_attr_double(so->grp, "slo_quantile_ms", pq));
    }
    rc = keep(rc, h5_attr_double(so->grp, "slo_share", share));
    rc = keep(rc, h5_attr_double(so->grp, "slo_share_served", share_served));
    rc = keep(rc, h5_attr_int(so->grp, "slo_met", met));
    rc = keep(rc, h5_attr_double(so->grp, "headroom_min", so->head_min));
    rc = keep(rc, h5_attr_double(so->grp, "headroom_peak", so->head_peak));
    if (!isnan(so->head_min) && (isnan(*head_min) || so->head_min < *head_min))
        *head_min = so->head_min;

    rc = keep(rc, write_hist(so->grp, "histogram", h));
    if (!isnan(share) && share < *slo_min)
        *slo_min = share;
    double p99 = hist_quantile(h, 0.99) / 1e3;
    if (p99 > *p99_max)
        *p99_max = p99;
    free(h);
    rc = keep(rc, annotate(so->grp, 1));
    return rc;
}

int sim_output_finish(struct sim_output *o, const struct sim *s, bool complete, char **written,
                      char *err, size_t errlen)
{
    const struct scenario *sc = s->sc;
    int rc = 0;
    if (written)
        *written = NULL;

    hid_t sum = h5_group_create(o->f.id, "summary");
    if (sum < 0)
        rc = h5io_fail();
    double slo_min = INFINITY, p99_max = 0, head_min = NAN;
    uint64_t served = 0, within = 0, arrived = 0, dropped = 0, failed = 0, waiting = 0;
    struct llm_sum lsum = {.ttft_p99_max = NAN, .tpot_p99_max = NAN};
    for (uint32_t k = 0; k < s->nsvcs; k++) {
        struct service_stats w;
        rc = keep(rc, write_service(&o->svcs[k], s, k, &slo_min, &p99_max, &head_min, &w, &lsum));
        served += w.served;
        within += w.within_slo;
        arrived += w.arrived;
        dropped += w.dropped;
        failed += w.failed;
        waiting += service_waiting(&s->svcs[k]);
    }
    if (sum >= 0) {
        /* Every figure below covers the measured window [warmup_s, duration_s]. */
        double win_s = sim_time_to_sec(s->end - sim_window_start(s));
        double gh = (double)s->cl.ngpus * win_s / 3600.0;
        rc = keep(rc, h5_attr_double(sum, "duration_s", sim_time_to_sec(s->end)));
        if (sim_window_start(s) > 0)
            rc = keep(rc, h5_attr_double(sum, "warmup_s", sim_time_to_sec(sim_window_start(s))));
        rc = keep(rc, h5_attr_int(sum, "gpus", s->cl.ngpus));
        rc = keep(rc, h5_attr_double(sum, "gpu_hours", gh));
        rc = keep(rc, h5_attr_double(sum, "util_allocated", sim_util_allocated(s)));
        rc = keep(rc, h5_attr_double(sum, "util_busy", sim_util_busy(s)));
        rc = keep(rc, h5_attr_double(sum, "util_useful", sim_util_useful(s)));
        double st[USE_NSTATES] = {0}, busy = 0;
        for (uint32_t i = 0; i < s->cl.ngpus; i++) {
            double b = 0;
            for (int k = 0; k < USE_NSTATES; k++) {
                double v = sim_window_card_us(s, i, k);
                st[k] += v;
                if (k != USE_IDLE && k != USE_RECONFIG)
                    b += v;
            }
            busy += b;
        }
        char name[48];
        for (int k = 0; k < USE_NSTATES; k++) {
            snprintf(name, sizeof(name), "gpu_hours_%s", use_state_name((enum use_state)k));
            rc = keep(rc, h5_attr_double(sum, name, st[k] / 3.6e9));
        }
        double ck = st[USE_CKPT] + st[USE_RESTORE] + st[USE_RECOMPUTE];
        rc = keep(rc, h5_attr_double(sum, "checkpoint_overhead", busy > 0 ? ck / busy : 0));
        double frag_us = sim_window_start(s) > 0 ? o->frag_win_us : o->frag_us;
        rc = keep(rc, h5_attr_double(sum, "share_fragmented", gh > 0 ? frag_us / 3.6e9 / gh : 0));
        rc = keep(
            rc, h5_attr_double(sum, "gpus_fragmented_mean", win_s > 0 ? frag_us / 1e6 / win_s : 0));
        double kwh = sim_energy_kwh(s);
        rc = keep(rc, h5_attr_double(sum, "energy_kwh", kwh));
        rc = keep(rc, h5_attr_double(sum, "power_mean_w", win_s > 0 ? kwh * 3.6e6 / win_s : 0));
        rc = keep(rc, h5_attr_int(sum, "faults", (int64_t)s->faults));
        rc = keep(rc, h5_attr_int(sum, "fault_victims", (int64_t)s->fault_victims));
        rc = keep(rc, h5_attr_int(sum, "oom_kills", (int64_t)(s->oom_kills + s->tr.failed)));
        rc = keep(rc, h5_attr_int(sum, "requests_arrived", (int64_t)arrived));
        rc = keep(rc, h5_attr_int(sum, "requests_served", (int64_t)served));
        rc = keep(rc, h5_attr_int(sum, "requests_dropped", (int64_t)dropped));
        rc = keep(rc, h5_attr_int(sum, "requests_failed", (int64_t)failed));
        uint64_t decided = served + dropped + failed + waiting;
        rc = keep(rc, h5_attr_int(sum, "requests_waiting", (int64_t)waiting));
        rc = keep(rc, h5_attr_int(sum, "requests_within_slo", (int64_t)within));
        rc = keep(
            rc, h5_attr_double(sum, "slo_share", decided ? (double)within / (double)decided : NAN));
        rc = keep(rc, h5_attr_double(sum, "slo_share_served",
                                     served ? (double)within / (double)served : NAN));
        rc = keep(rc, h5_attr_double(sum, "slo_share_worst_service", s->nsvcs ? slo_min : NAN));
        rc = keep(rc, h5_attr_double(sum, "p99_ms_worst_service", s->nsvcs ? p99_max : NAN));
        rc = keep(rc, h5_attr_double(sum, "headroom_min_worst_service", head_min));
        if (lsum.n) { /* LLM services only: a file without them keeps its old summary */
            rc = keep(rc, h5_attr_double(sum, "ttft_p99_ms_worst_service", lsum.ttft_p99_max));
            rc = keep(rc, h5_attr_double(sum, "tpot_p99_ms_worst_service", lsum.tpot_p99_max));
            rc = keep(rc, h5_attr_double(sum, "tokens_generated", lsum.tokens_out));
            rc = keep(
                rc, h5_attr_double(sum, "tokens_per_s", win_s > 0 ? lsum.tokens_out / win_s : NAN));
            rc = keep(rc,
                      h5_attr_double(sum, "kv_occupancy_mean",
                                     lsum.kv_cap_us > 0 ? lsum.kv_token_us / lsum.kv_cap_us : NAN));
            rc = keep(rc, h5_attr_int(sum, "llm_preemptions", (int64_t)lsum.preemptions));
        }
        double train_h = 0;
        rc = keep(rc, write_jobs(o, s, sum, &train_h));
        if (sc->cost.on) {
            /*
             * The cluster is paid whether used or not: every GPU for the measured window,
             * plus energy at power_kwh. Split between inference and training by their
             * GPU-time (inference batches vs training work, checkpoints, restores,
             * recomputation and overhead); idle and free time are shared in that ratio.
             */
            double c_gpu = gh * sc->cost.gpu_hour, c_pow = kwh * sc->cost.power_kwh;
            if (s->cl.npools > 1 || sc->pools[0].gpu_hour != sc->cost.gpu_hour) {
                /* Each pool's GPU-hours at its board's price (cost.boards). */
                c_gpu = 0;
                for (uint32_t p = 0; p < s->cl.npools; p++)
                    c_gpu += (double)s->cl.pools[p].ngpus * win_s / 3600.0 * sc->pools[p].gpu_hour;
            }
            double total = c_gpu + c_pow, inf = st[USE_INFER];
            double trn = st[USE_USEFUL] + st[USE_CKPT] + st[USE_RESTORE] + st[USE_RECOMPUTE] +
                         st[USE_OVERHEAD];
            double f_inf = inf + trn > 0 ? inf / (inf + trn) : 0;
            rc = keep(rc, h5_attr_double(sum, "cost_total", total));
            rc = keep(rc, h5_attr_double(sum, "cost_gpu", c_gpu));
            rc = keep(rc, h5_attr_double(sum, "cost_energy", c_pow));
            rc = keep(rc, h5_attr_double(sum, "cost_per_million_within_slo",
                                         within ? total * f_inf / ((double)within / 1e6) : NAN));
            rc = keep(rc, h5_attr_double(sum, "cost_per_training_gpu_hour",
                                         train_h > 0 ? total * (1 - f_inf) / train_h : NAN));
            rc = keep(rc, out_attr_fixed_str(sum, "cost_currency", sc->cost.currency));
        }
        rc = keep(rc, write_segments(o, s));
        if (o->npools)
            rc = keep(rc, write_pools(o, s, win_s, train_h));
        rc = keep(rc, annotate_in(sum, 0, sc->cost.currency));
        H5Gclose(sum);
    }
    rc = keep(rc, write_gpus(o, s));
    rc = keep(rc, queue_out_finish(o->queues, s));
    o->queues = NULL;
    rc = keep(rc, close_groups(o));
    if (!rc)
        rc = write_meta(o, s, complete);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", o->f.path, strerror(-rc));
        h5file_abort(&o->f);
        output_free(o);
        return rc;
    }

    size_t n = strlen(o->f.path) + 16;
    char *name = malloc(n);
    if (!name) {
        snprintf(err, errlen, "cannot write %s: out of memory", o->f.path);
        h5file_abort(&o->f);
        output_free(o);
        return -ENOMEM;
    }
    snprintf(name, n, complete ? "%s" : "%s.partial", o->f.path);
    (void)sc;
    rc = h5file_commit(&o->f, name, false);
    output_free(o);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", name, strerror(-rc));
        free(name);
        return rc;
    }
    if (written)
        *written = name;
    else
        free(name);
    return 0;
}

void sim_output_abort(struct sim_output *o)
{
    if (!o)
        return;
    close_groups(o);
    h5file_abort(&o->f);
    output_free(o);
}
