/* results.c — read a results file (single or replicated) into tables of metrics. */
#include "analysis/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5read.h"

struct metric_def {
    const char *key, *label, *unit;
    double scale;
    int better;
};

/* Headline metrics in display order; any other numeric /summary attribute follows. */
static const struct metric_def headline_defs[] = {
    {"util_allocated", "GPU-time allocated", "%", 100, RESULTS_HIGHER},
    {"util_busy", "GPU-time busy (SM active)", "%", 100, RESULTS_HIGHER},
    {"util_useful", "GPU-time useful", "%", 100, RESULTS_HIGHER},
    {"slo_share", "arrivals within SLO", "%", 100, RESULTS_HIGHER},
    {"slo_share_served", "served within SLO", "%", 100, RESULTS_HIGHER},
    {"slo_share_worst_service", "within SLO, worst service", "%", 100, RESULTS_HIGHER},
    {"p99_ms_worst_service", "p99 latency, worst service", "ms", 1, RESULTS_LOWER},
    {"headroom_min_worst_service", "serving headroom (capacity at SLO / load), tightest", "x", 1,
     RESULTS_NEUTRAL},
    {"ttft_p99_ms_worst_service", "p99 time to first token, worst LLM service", "ms", 1,
     RESULTS_LOWER},
    {"tpot_p99_ms_worst_service", "p99 time per output token, worst LLM service", "ms", 1,
     RESULTS_LOWER},
    {"tokens_per_s", "LLM tokens generated per second", "tokens/s", 1, RESULTS_NEUTRAL},
    {"kv_occupancy_mean", "LLM KV-cache occupancy, mean", "%", 100, RESULTS_NEUTRAL},
    {"llm_preemptions", "LLM sequences preempted (KV cache full)", "", 1, RESULTS_LOWER},
    {"requests_arrived", "requests arrived", "", 1, RESULTS_NEUTRAL},
    {"requests_dropped", "requests dropped", "", 1, RESULTS_LOWER},
    {"requests_waiting", "requests waiting at the end", "", 1, RESULTS_LOWER},
    {"requests_within_slo", "requests within SLO", "", 1, RESULTS_NEUTRAL},
    {"jobs_submitted", "jobs submitted", "", 1, RESULTS_NEUTRAL},
    {"jobs_completed", "jobs completed", "", 1, RESULTS_HIGHER},
    {"jobs_rejected", "jobs rejected", "", 1, RESULTS_LOWER},
    {"training_gpu_hours", "training work done", "GPU-h", 1, RESULTS_HIGHER},
    {"queue_delay_mean_s", "queueing delay, mean", "s", 1, RESULTS_LOWER},
    {"queue_delay_p95_s", "queueing delay, p95", "s", 1, RESULTS_LOWER},
    {"completion_mean_s", "completion time, mean", "s", 1, RESULTS_LOWER},
    {"completion_p95_s", "completion time, p95", "s", 1, RESULTS_LOWER},
    {"checkpoint_overhead", "checkpoint overhead", "%", 100, RESULTS_LOWER},
    {"energy_kwh", "energy", "kWh", 1, RESULTS_LOWER},
    {"cost_total", "cost of the cluster", "", 1, RESULTS_LOWER},
    {"cost_per_million_within_slo", "cost per million requests within SLO", "", 1, RESULTS_LOWER},
    {"cost_per_training_gpu_hour", "cost per training GPU-hour done", "", 1, RESULTS_LOWER},
    {"power_mean_w", "mean power", "W", 1, RESULTS_LOWER},
};

/* /summary attributes that describe the run rather than measure it (shown in the header). */
static const char *const context_keys[] = {"duration_s", "gpus", "gpu_hours", "warmup_s"};

static const struct metric_def svc_defs[] = {
    {"arrived", "requests", "", 1, RESULTS_NEUTRAL},
    {"dropped", "dropped", "", 1, RESULTS_LOWER},
    {"mean_ms", "mean", "ms", 1, RESULTS_LOWER},
    {"p50_ms", "p50", "ms", 1, RESULTS_LOWER},
    {"p95_ms", "p95", "ms", 1, RESULTS_LOWER},
    {"p99_ms", "p99", "ms", 1, RESULTS_LOWER},
    {"mean_wait_ms", "mean waiting time", "ms", 1, RESULTS_LOWER},
    {"wait_p95_ms", "waiting time, p95", "ms", 1, RESULTS_LOWER},
    {"wait_p99_ms", "waiting time, p99", "ms", 1, RESULTS_LOWER},
    {"slo_ms", "SLO target", "ms", 1, RESULTS_NEUTRAL},
    {"slo_quantile", "SLO quantile", "%", 100, RESULTS_NEUTRAL},
    {"slo_quantile_ms", "SLO-quantile latency", "ms", 1, RESULTS_LOWER},
    {"slo_share", "within SLO", "%", 100, RESULTS_HIGHER},
    {"slo_share_served", "served within SLO", "%", 100, RESULTS_HIGHER},
    {"slo_met", "SLO met", "%", 100, RESULTS_HIGHER},
    {"headroom_min", "serving headroom, tightest interval", "x", 1, RESULTS_NEUTRAL},
    {"headroom_peak", "serving headroom at the busiest interval", "x", 1, RESULTS_NEUTRAL},
    /* LLM services (kind: llm); absent (NaN) for the batch kind */
    {"ttft_mean_ms", "time to first token, mean", "ms", 1, RESULTS_LOWER},
    {"ttft_p50_ms", "time to first token, p50", "ms", 1, RESULTS_LOWER},
    {"ttft_p99_ms", "time to first token, p99", "ms", 1, RESULTS_LOWER},
    {"tpot_mean_ms", "time per output token, mean", "ms", 1, RESULTS_LOWER},
    {"tpot_p50_ms", "time per output token, p50", "ms", 1, RESULTS_LOWER},
    {"tpot_p99_ms", "time per output token, p99", "ms", 1, RESULTS_LOWER},
    {"ttft_slo_ms", "TTFT target", "ms", 1, RESULTS_NEUTRAL},
    {"tpot_slo_ms", "TPOT target", "ms", 1, RESULTS_NEUTRAL},
    {"tokens_per_s", "tokens generated per second", "tokens/s", 1, RESULTS_NEUTRAL},
    {"kv_occupancy_mean", "KV-cache occupancy, mean", "%", 100, RESULTS_NEUTRAL},
    {"preemptions", "sequences preempted (KV cache full)", "", 1, RESULTS_LOWER},
    {"rejected_too_long", "prompts refused (max_context)", "", 1, RESULTS_LOWER},
};

/* /pools/<name> attributes shown per pool (summary keys, so check --pool can reuse them). */
static const struct metric_def pool_defs[] = {
    {"gpus", "GPUs", "", 1, RESULTS_NEUTRAL},
    {"util_allocated", "GPU-time allocated", "%", 100, RESULTS_HIGHER},
    {"util_busy", "GPU-time busy (SM active)", "%", 100, RESULTS_HIGHER},
    {"util_useful", "GPU-time useful", "%", 100, RESULTS_HIGHER},
    {"share_fragmented", "GPU-time free but unusable by any queued gang", "%", 100, RESULTS_LOWER},
    {"requests_served", "requests served", "", 1, RESULTS_NEUTRAL},
    {"slo_share", "served within SLO", "%", 100, RESULTS_HIGHER},
    {"training_gpu_hours", "training work done", "GPU-h", 1, RESULTS_HIGHER},
    {"energy_kwh", "energy", "kWh", 1, RESULTS_LOWER},
    {"cost_total", "cost", "", 1, RESULTS_LOWER},
    {"duration_s", "simulated time", "s", 1, RESULTS_NEUTRAL},
};

/* /queues/<name> attributes (sim/output_queues.h). */
static const struct metric_def queue_defs[] = {
    {"nominal_gpus", "nominal quota", "GPUs", 1, RESULTS_NEUTRAL},
    {"admitted_mean_gpus", "admitted (mean)", "GPUs", 1, RESULTS_NEUTRAL},
    {"borrowed_mean_gpus", "borrowed (mean)", "GPUs", 1, RESULTS_NEUTRAL},
    {"lent_mean_gpus", "lent (mean)", "GPUs", 1, RESULTS_NEUTRAL},
    {"admissions", "admissions", "workloads", 1, RESULTS_NEUTRAL},
    {"evictions", "evictions", "workloads", 1, RESULTS_LOWER},
    {"delay_mean_s", "queueing delay mean", "s", 1, RESULTS_LOWER},
    {"delay_p50_s", "queueing delay p50", "s", 1, RESULTS_LOWER},
    {"delay_p99_s", "queueing delay p99", "s", 1, RESULTS_LOWER},
    {"delay_max_s", "queueing delay max", "s", 1, RESULTS_LOWER},
};

/* /jobs columns that are per-job time stamps or sizes, not summable overheads. */
static const char *const job_time_cols[] = {"submit_s", "start_s",       "end_s",       "work_s",
                                            "done_s",   "queue_delay_s", "completion_s"};

static const char *const job_states[] = {"jobs_queued_at_end", "jobs_running_at_end", "jobs_done",
                                         "jobs_rejected"};

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}

static void table_release(struct results_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->m[i].key);
        free(t->m[i].values);
        free(t->m[i].own_label);
        free(t->m[i].own_unit);
    }
    free(t->m);
    t->m = NULL;
    t->n = 0;
}

const struct results_metric *results_table_find(const struct results_table *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->m[i].key, key))
            return &t->m[i];
    return NULL;
}

/* Add (or find) metric key; values start NaN. Returns NULL on allocation failure. */
static struct results_metric *table_add(struct results_table *t, const struct metric_def *d,
                                        size_t reps)
{
    struct results_metric *m = (struct results_metric *)results_table_find(t, d->key);
    if (m)
        return m;
    struct results_metric *nm = realloc(t->m, (t->n + 1) * sizeof(*nm));
    if (!nm)
        return NULL;
    t->m = nm;
    m = &t->m[t->n];
    memset(m, 0, sizeof(*m));
    m->key = dupstr(d->key);
    m->values = malloc(reps * sizeof(*m->values));
    if (!m->key || !m->values) {
        free(m->key);
        free(m->values);
        return NULL;
    }
    for (size_t i = 0; i < reps; i++)
        m->values[i] = NAN;
    m->label = d->label ? d->label : "";
    m->unit = d->unit;
    m->scale = d->scale;
    m->better = d->better;
    t->n++;
    return m;
}

static void table_finish(struct results_table *t, size_t reps)
{
    for (size_t i = 0; i < t->n; i++)
        stats_summarize(t->m[i].values, reps, &t->m[i].s);
}

/* What one results_open reads with: the session (limits, first refusal) and the tables. */
struct rd_ctx {
    struct results *r;
    struct h5_rd *rd;
    size_t rep;
};

static double attr_or_nan(struct h5_rd *rd, hid_t g, const char *name)
{
    double v = NAN;
    h5_rd_attr_double(rd, g, name, &v);
    return v;
}

struct attr_walk {
    struct results_table *t;
    struct h5_rd *rd;
    size_t rep, reps, seen;
    int rc;
};

static herr_t summary_attr(hid_t obj, const char *name, const H5A_info_t *info, void *data)
{
    struct attr_walk *w = data;
    (void)info;
    if (++w->seen > H5READ_MAX_LINKS) {
        w->rc = h5_rd_fail(w->rd, -EIO, "/summary: more than %u attributes", H5READ_MAX_LINKS);
        return -1;
    }
    if (in_list(name, context_keys, sizeof(context_keys) / sizeof(context_keys[0])))
        return 0;
    bool known = false;
    for (size_t k = 0; k < sizeof(headline_defs) / sizeof(headline_defs[0]); k++)
        known |= !strcmp(name, headline_defs[k].key);
    /* A string (a note a newer schema may add) is not a metric; a known metric must be a number. */
    if (!known && h5_rd_attr_class(obj, name) == H5T_STRING)
        return 0;
    double v;
    int rc = h5_rd_attr_double(w->rd, obj, name, &v);
    if (rc) {
        w->rc = rc;
        return -1;
    }
    /* Not in the reader's table: its unit comes from the file (apply_units) or there is none. */
    struct metric_def d = {name, NULL, "", 1, RESULTS_NEUTRAL};
    struct results_metric *m = table_add(w->t, &d, w->reps);
    if (!m) {
        w->rc = -ENOMEM;
        return -1;
    }
    m->values[w->rep] = v;
    return 0;
}

/*
 * The file's own unit and label of every metric of t (group g): "<key>.unit"
 * ("1" = a fraction, shown as % × 100) and "<key>.label". Absent: the
 * reader's table stays. Returns 0 or the session's error.
 */
static int apply_units(struct h5_rd *rd, hid_t g, struct results_table *t)
{
    char name[300];
    for (size_t i = 0; i < t->n && !rd->rc; i++) {
        struct results_metric *m = &t->m[i];
        snprintf(name, sizeof(name), "%s.unit", m->key);
        char *u = NULL, *l = NULL;
        if (h5_rd_attr_class(g, name) == H5T_STRING && !h5_rd_attr_str(rd, g, name, &u)) {
            free(m->own_unit);
            bool frac = !strcmp(u, "1");
            m->own_unit = frac ? dupstr("%") : u;
            if (frac)
                free(u);
            m->unit = m->own_unit ? m->own_unit : "";
            m->scale = frac ? 100 : 1;
        }
        snprintf(name, sizeof(name), "%s.label", m->key);
        if (h5_rd_attr_class(g, name) == H5T_STRING && !h5_rd_attr_str(rd, g, name, &l)) {
            free(m->own_label);
            m->own_label = l;
            m->label = l;
        }
    }
    return rd->rc;
}

static int read_summary(struct rd_ctx *c, hid_t root)
{
    hid_t g = h5_rd_group(c->rd, root, "summary");
    if (g < 0)
        return c->rd->rc;
    struct attr_walk w = {&c->r->headline, c->rd, c->rep, c->r->reps, 0, 0};
    hsize_t idx = 0;
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, summary_attr, &w);
    if (c->rep == 0 && !w.rc) {
        c->r->duration_s = attr_or_nan(c->rd, g, "duration_s");
        c->r->gpus = attr_or_nan(c->rd, g, "gpus");
        c->r->warmup_s = attr_or_nan(c->rd, g, "warmup_s");
        w.rc = apply_units(c->rd, g, &c->r->headline);
    }
    H5Gclose(g);
    return w.rc ? w.rc : c->rd->rc;
}

/* Links a walk visits: hard links only, at most H5READ_MAX_LINKS per group. */
static int walk_link_ok(struct h5_rd *rd, hid_t grp, const char *name, const H5L_info_t *info,
                        size_t *seen)
{
    char where[200] = "?";
    if (H5Iget_name(grp, where, sizeof(where)) <= 0)
        snprintf(where, sizeof(where), "?");
    if (++*seen > H5READ_MAX_LINKS)
        return h5_rd_fail(rd, -EIO, "%s: more than %u objects", where, H5READ_MAX_LINKS);
    if (info->type != H5L_TYPE_HARD)
        return h5_rd_fail(rd, -EIO, "%s/%.120s: a soft or external link (not read)",
                          strcmp(where, "/") ? where : "", name);
    return 0;
}

struct svc_walk {
    struct rd_ctx *c;
    size_t seen;
    int rc;
    enum { WALK_SERVICES, WALK_POOLS, WALK_QUEUES, WALK_FLAVORS } kind;
    const char *queue; /* WALK_FLAVORS: the queue whose /flavors is walked */
};

static void iterate_links(hid_t g, H5L_iterate_t fn, void *data, const int *rc, size_t *seen);

/* The entry named name of a list of services (or queues), added with defs when new. */
static struct results_service *named_get(struct results_service **list, size_t *n,
                                         const struct metric_def *defs, size_t ndefs, size_t reps,
                                         const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*list)[i].name, name))
            return &(*list)[i];
    struct results_service *ns = realloc(*list, (*n + 1) * sizeof(*ns));
    if (!ns)
        return NULL;
    *list = ns;
    struct results_service *s = &ns[*n];
    memset(s, 0, sizeof(*s));
    s->name = dupstr(name);
    if (!s->name)
        return NULL;
    ++*n;
    for (size_t k = 0; k < ndefs; k++)
        if (!table_add(&s->t, &defs[k], reps))
            return NULL;
    return s;
}

static struct results_service *service_get(struct results *r, const char *name)
{
    return named_get(&r->svcs, &r->nsvcs, svc_defs, sizeof(svc_defs) / sizeof(svc_defs[0]), r->reps,
                     name);
}

static herr_t service_link(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct svc_walk *w = data;
    struct h5_rd *rd = w->c->rd;
    if ((w->rc = walk_link_ok(rd, grp, name, info, &w->seen)) != 0)
        return -1;
    hid_t g = h5_rd_group(rd, grp, name);
    if (g < 0) {
        w->rc = rd->rc ? rd->rc : -EIO;
        return -1;
    }
    char qf[512];
    if (w->kind == WALK_FLAVORS && /* a queue's flavor: an entry "<queue>/<flavor>" */
        snprintf(qf, sizeof qf, "%s/%s", w->queue, name) >= (int)sizeof qf) {
        H5Gclose(g);
        w->rc = h5_rd_fail(rd, -EIO, "/queues/%.60s/flavors: a flavor name too long", w->queue);
        return -1;
    }
    if ((w->kind == WALK_QUEUES || w->kind == WALK_FLAVORS) &&
        w->c->r->nqueues >= H5READ_MAX_LINKS) { /* however the groups were walked */
        H5Gclose(g);
        w->rc = h5_rd_fail(rd, -EIO, "/queues: more than %u queues and flavors", H5READ_MAX_LINKS);
        return -1;
    }
    struct results_service *s =
        w->kind == WALK_QUEUES || w->kind == WALK_FLAVORS
            ? named_get(&w->c->r->queues, &w->c->r->nqueues, queue_defs,
                        sizeof(queue_defs) / sizeof(queue_defs[0]), w->c->r->reps,
                        w->kind == WALK_FLAVORS ? qf : name)
        : w->kind == WALK_POOLS
            ? named_get(&w->c->r->pools, &w->c->r->npools, pool_defs,
                        sizeof(pool_defs) / sizeof(pool_defs[0]), w->c->r->reps, name)
            : service_get(w->c->r, name);
    if (!s) {
        H5Gclose(g);
        w->rc = -ENOMEM;
        return -1;
    }
    for (size_t k = 0; k < s->t.n && !rd->rc; k++)
        s->t.m[k].values[w->c->rep] = attr_or_nan(rd, g, s->t.m[k].key);
    if (w->c->rep == 0 && !rd->rc)
        apply_units(rd, g, &s->t);
    if (w->kind == WALK_POOLS && w->c->rep == 0 && !rd->rc && !s->board &&
        h5_rd_attr_class(g, "gpu") == H5T_STRING)
        h5_rd_attr_str(rd, g, "gpu", &s->board);
    if (w->kind == WALK_POOLS && w->c->rep == 0 && !rd->rc && !s->sharing &&
        h5_rd_attr_class(g, "sharing") == H5T_STRING)
        h5_rd_attr_str(rd, g, "sharing", &s->sharing);
    /* Several GPU flavors: /queues/<name>/flavors/<flavor> follow their queue, their links
     * counted with the queues' against the reader's limit. */
    if (w->kind == WALK_QUEUES && !rd->rc && H5Lexists(g, "flavors", H5P_DEFAULT) > 0) {
        hid_t fg = h5_rd_group(rd, g, "flavors");
        if (fg >= 0) {
            struct svc_walk fw = {w->c, w->seen, 0, WALK_FLAVORS, name};
            iterate_links(fg, service_link, &fw, &fw.rc, &fw.seen);
            w->seen = fw.seen;
            H5Gclose(fg);
            if (fw.rc && !rd->rc)
                rd->rc = fw.rc;
        }
    }
    H5Gclose(g);
    w->rc = rd->rc;
    return w->rc ? -1 : 0;
}

/* Iterate grp's links in creation order (the scenario's order), else by name. */
static void iterate_links(hid_t g, H5L_iterate_t fn, void *data, const int *rc, size_t *seen)
{
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, fn, data) < 0 && !*rc) {
        idx = 0;
        *seen = 0;
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, fn, data);
    }
}

static int read_services(struct rd_ctx *c, hid_t root)
{
    hid_t g = h5_rd_group(c->rd, root, "services");
    if (g < 0)
        return c->rd->rc;
    struct svc_walk w = {c, 0, 0, WALK_SERVICES, NULL};
    iterate_links(g, service_link, &w, &w.rc, &w.seen);
    H5Gclose(g);
    return w.rc ? w.rc : c->rd->rc;
}

/* /pools/<name> (optional: only files of a scenario with cluster.pools have it). */
static int read_pools(struct rd_ctx *c, hid_t root)
{
    if (H5Lexists(root, "pools", H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = h5_rd_group(c->rd, root, "pools");
    if (g < 0)
        return c->rd->rc;
    struct svc_walk w = {c, 0, 0, WALK_POOLS, NULL};
    iterate_links(g, service_link, &w, &w.rc, &w.seen);
    H5Gclose(g);
    return w.rc ? w.rc : c->rd->rc;
}

/* /queues, when the run wrote it (a policy with queues). */
static int read_queues(struct rd_ctx *c, hid_t root)
{
    if (H5Lexists(root, "queues", H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = h5_rd_group(c->rd, root, "queues");
    if (g < 0)
        return c->rd->rc;
    struct svc_walk w = {c, 0, 0, WALK_QUEUES, NULL};
    iterate_links(g, service_link, &w, &w.rc, &w.seen);
    H5Gclose(g);
    return w.rc ? w.rc : c->rd->rc;
}

/*
 * Structure before data: the 1-D columns of a table group (every dataset of
 * /timeseries, /jobs, a service's timeseries and histogram; the "_s" columns
 * of /gpus) are numeric datasets within the reader's limits and equally long.
 */
struct shape_walk {
    struct h5_rd *rd;
    const char *suffix; /* only names ending so (NULL: every link) */
    char first[128];    /* the column the others are measured against */
    uint64_t len;
    size_t seen;
    int rc;
};

static herr_t shape_link(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct shape_walk *w = data;
    if ((w->rc = walk_link_ok(w->rd, grp, name, info, &w->seen)) != 0)
        return -1;
    size_t n = strlen(name), k = w->suffix ? strlen(w->suffix) : 0;
    if (w->suffix && (n <= k || strcmp(name + n - k, w->suffix)))
        return 0;
    uint64_t len = 0;
    if ((w->rc = h5_rd_f64_len(w->rd, grp, name, &len)) != 0)
        return -1;
    if (!w->first[0]) {
        snprintf(w->first, sizeof(w->first), "%s", name);
        w->len = len;
    } else if (len != w->len) {
        char where[200] = "?";
        if (H5Iget_name(grp, where, sizeof(where)) <= 0)
            snprintf(where, sizeof(where), "?");
        w->rc = h5_rd_fail(w->rd, -EIO,
                           "%s/%.100s: %llu values, but %s/%s has %llu (the columns of a table "
                           "must be equally long)",
                           where, name, (unsigned long long)len, where, w->first,
                           (unsigned long long)w->len);
        return -1;
    }
    return 0;
}

static int check_columns(struct h5_rd *rd, hid_t parent, const char *group, const char *suffix)
{
    hid_t g = h5_rd_group(rd, parent, group);
    if (g < 0)
        return rd->rc;
    struct shape_walk w = {.rd = rd, .suffix = suffix};
    hsize_t idx = 0;
    H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, shape_link, &w);
    H5Gclose(g);
    return w.rc ? w.rc : rd->rc;
}

struct svc_shape_walk {
    struct h5_rd *rd;
    size_t seen;
    int rc;
};

static herr_t service_shape(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct svc_shape_walk *w = data;
    if ((w->rc = walk_link_ok(w->rd, grp, name, info, &w->seen)) != 0)
        return -1;
    hid_t s = h5_rd_group(w->rd, grp, name);
    if (s < 0) {
        w->rc = w->rd->rc ? w->rd->rc : -EIO;
        return -1;
    }
    w->rc = check_columns(w->rd, s, "timeseries", NULL);
    if (!w->rc)
        w->rc = check_columns(w->rd, s, "histogram", NULL);
    H5Gclose(s);
    return w->rc ? -1 : 0;
}

static int check_shapes(struct h5_rd *rd, hid_t root)
{
    int rc = check_columns(rd, root, "timeseries", NULL);
    if (!rc)
        rc = check_columns(rd, root, "jobs", NULL);
    if (!rc)
        rc = check_columns(rd, root, "gpus", "_s");
    hid_t g = rc ? H5I_INVALID_HID : h5_rd_group(rd, root, "services");
    if (g >= 0) {
        struct svc_shape_walk w = {rd, 0, 0};
        hsize_t idx = 0;
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, service_shape, &w);
        H5Gclose(g);
        rc = w.rc;
    }
    return rc ? rc : rd->rc;
}

struct col_walk {
    struct results_table *t;
    struct h5_rd *rd;
    size_t rep, reps;
    double denom; /* divisor of the summed column */
    const char *const *skip;
    size_t nskip, seen;
    int rc;
};

/* Sum of each 1-D dataset "<x>_s" of a group, divided by denom (GPU states, job seconds). */
static herr_t sum_column(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct col_walk *w = data;
    if ((w->rc = walk_link_ok(w->rd, grp, name, info, &w->seen)) != 0)
        return -1;
    size_t n = strlen(name);
    if (n < 3 || strcmp(name + n - 2, "_s") || in_list(name, w->skip, w->nskip))
        return 0;
    double *v = NULL;
    size_t len = 0;
    if ((w->rc = h5_rd_f64(w->rd, grp, name, &v, &len)) != 0)
        return -1;
    double sum = 0;
    for (size_t i = 0; i < len; i++)
        if (isfinite(v[i]))
            sum += v[i];
    free(v);
    struct metric_def d = {name, NULL, w->denom == 1 ? "h" : "%", w->denom == 1 ? 1 / 3600.0 : 100,
                           RESULTS_NEUTRAL};
    struct results_metric *m = table_add(w->t, &d, w->reps);
    if (!m) {
        w->rc = -ENOMEM;
        return -1;
    }
    m->values[w->rep] = sum / w->denom;
    return 0;
}

static int walk_columns(hid_t root, const char *group, struct col_walk *w)
{
    hid_t g = h5_rd_group(w->rd, root, group);
    if (g < 0)
        return w->rd->rc;
    iterate_links(g, sum_column, w, &w->rc, &w->seen);
    H5Gclose(g);
    return w->rc ? w->rc : w->rd->rc;
}

static struct results_metric *training_metric(struct results *r, const char *key)
{
    return (struct results_metric *)results_table_find(&r->training, key);
}

static int read_jobs(struct rd_ctx *c, hid_t root)
{
    struct results *r = c->r;
    hid_t g = h5_rd_group(c->rd, root, "jobs");
    if (g < 0)
        return c->rd->rc;
    double *v = NULL;
    size_t n = 0;
    int rc = h5_rd_f64(c->rd, g, "state", &v, &n);
    if (rc == 0) {
        double cnt[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < n; i++)
            if (v[i] >= 0 && v[i] < 4)
                cnt[(size_t)v[i]] += 1;
        for (size_t k = 0; k < 4; k++)
            training_metric(r, job_states[k])->values[c->rep] = cnt[k];
        free(v);
    }
    if (rc == 0 || rc == -ENOENT)
        rc = h5_rd_f64(c->rd, g, "preemptions", &v, &n);
    if (rc == 0) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += isfinite(v[i]) ? v[i] : 0;
        training_metric(r, "preemptions")->values[c->rep] = s;
        free(v);
    }
    H5Gclose(g);
    if (rc && rc != -ENOENT)
        return rc;
    struct col_walk w = {&r->training,
                         c->rd,
                         c->rep,
                         r->reps,
                         1,
                         job_time_cols,
                         sizeof(job_time_cols) / sizeof(job_time_cols[0]),
                         0,
                         0};
    return walk_columns(root, "jobs", &w);
}

static int read_gpus_and_jobs(struct rd_ctx *c, hid_t root)
{
    struct results *r = c->r;
    double gpus = NAN, dur = NAN;
    hid_t g = h5_rd_group(c->rd, root, "summary");
    if (g >= 0) {
        gpus = attr_or_nan(c->rd, g, "gpus");
        dur = attr_or_nan(c->rd, g, "duration_s");
        H5Gclose(g);
    }
    if (c->rd->rc)
        return c->rd->rc;
    static const char *const gpu_skip[] = {"node"};
    if (gpus > 0 && dur > 0) {
        struct col_walk w = {&r->gpu_states, c->rd, c->rep, r->reps, gpus * dur, gpu_skip, 1, 0, 0};
        int rc = walk_columns(root, "gpus", &w);
        if (rc)
            return rc;
    }
    /* Training outcomes: jobs by final state, total preemptions, summed job seconds. */
    for (size_t k = 0; k < 4; k++) {
        struct metric_def d = {job_states[k], NULL, "", 1, RESULTS_NEUTRAL};
        if (!table_add(&r->training, &d, r->reps))
            return -ENOMEM;
    }
    struct metric_def dp = {"preemptions", NULL, "", 1, RESULTS_LOWER};
    if (!table_add(&r->training, &dp, r->reps))
        return -ENOMEM;
    return read_jobs(c, root);
}

static char *meta_str(struct h5_rd *rd, hid_t meta, const char *name)
{
    char *s = NULL;
    h5_rd_attr_str(rd, meta, name, &s);
    return s;
}

void results_rep_root(const struct results *r, size_t i, char *buf, size_t n)
{
    if (r->replicated)
        snprintf(buf, n, "/rep%04zu", i);
    else
        snprintf(buf, n, "/");
}

/* Replications tidesim writes at most (tidesim run --replications). */
#define MAX_REPS 9999

static size_t count_reps(struct h5_rd *rd, hid_t f)
{
    size_t n = 0;
    char name[32];
    for (;;) {
        snprintf(name, sizeof(name), "rep%04zu", n);
        if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
            return n;
        if (++n > MAX_REPS) {
            h5_rd_fail(rd, -EIO, "/rep%04d: more replications than tidesim writes (%d)", MAX_REPS,
                       MAX_REPS);
            return 0;
        }
    }
}

static int read_all(struct results *r, struct h5_rd *rd, hid_t f)
{
    /* Known headline metrics first, in display order, even when absent ("-"). */
    for (size_t k = 0; k < sizeof(headline_defs) / sizeof(headline_defs[0]); k++)
        if (!table_add(&r->headline, &headline_defs[k], r->reps))
            return -ENOMEM;
    r->seeds = malloc(r->reps * sizeof(*r->seeds));
    if (!r->seeds)
        return -ENOMEM;
    for (size_t i = 0; i < r->reps; i++) {
        char name[32];
        snprintf(name, sizeof(name), "rep%04zu", i);
        hid_t g = r->replicated ? h5_rd_group(rd, f, name) : H5Gopen2(f, "/", H5P_DEFAULT);
        if (g < 0)
            return rd->rc ? rd->rc : h5_rd_fail(rd, -EIO, "/%s: cannot open the group", name);
        r->seeds[i] = NAN;
        if (H5Lexists(g, "meta", H5P_DEFAULT) > 0) {
            hid_t m = h5_rd_group(rd, g, "meta");
            if (m >= 0) {
                r->seeds[i] = attr_or_nan(rd, m, "seed");
                H5Gclose(m);
            }
        }
        struct rd_ctx c = {r, rd, i};
        int rc = check_shapes(rd, g);
        if (!rc)
            rc = read_summary(&c, g);
        if (!rc)
            rc = read_services(&c, g);
        if (!rc)
            rc = read_pools(&c, g);
        if (!rc)
            rc = read_queues(&c, g);
        if (!rc)
            rc = read_gpus_and_jobs(&c, g);
        H5Gclose(g);
        if (rc)
            return rc;
    }
    table_finish(&r->headline, r->reps);
    table_finish(&r->gpu_states, r->reps);
    table_finish(&r->training, r->reps);
    for (size_t i = 0; i < r->nsvcs; i++)
        table_finish(&r->svcs[i].t, r->reps);
    for (size_t i = 0; i < r->npools; i++)
        table_finish(&r->pools[i].t, r->reps);
    for (size_t i = 0; i < r->nqueues; i++)
        table_finish(&r->queues[i].t, r->reps);
    return 0;
}

/* /meta into r; *duration_s gets /meta/duration_s (used when /summary lacks it). */
static int read_meta(struct results *r, struct h5_rd *rd, hid_t f, double *duration_s)
{
    hid_t meta = h5_rd_group(rd, f, "meta");
    if (meta < 0)
        return rd->rc;
    r->scenario_name = meta_str(rd, meta, "scenario_name");
    r->policy = meta_str(rd, meta, "policy");
    r->gpu = meta_str(rd, meta, "gpu");
    r->sharing = meta_str(rd, meta, "sharing");
    r->version = meta_str(rd, meta, "tidesim_version");
    r->git_commit = meta_str(rd, meta, "git_commit");
    r->seed = attr_or_nan(rd, meta, "seed");
    double c = attr_or_nan(rd, meta, "complete");
    r->complete = !(c < 1); /* absent (very old files) counts as complete */
    r->sim_time_reached_s = attr_or_nan(rd, meta, "sim_time_reached_s");
    r->wall_seconds = attr_or_nan(rd, meta, "wall_seconds");
    r->events = attr_or_nan(rd, meta, "events_processed");
    *duration_s = attr_or_nan(rd, meta, "duration_s");
    H5Gclose(meta);
    return rd->rc;
}

/*
 * Read the file f, just opened for session rd (h5_rd_open or h5_rd_open_image),
 * into r (zeroed); path names it in r and in messages. Closes f. The one reader
 * behind results_open (a file on disk) and results_open_image (in memory).
 */
static int read_file(struct results *r, struct h5_rd *rd, hid_t f, const char *path, char *err,
                     size_t errlen)
{
    size_t reps = count_reps(rd, f);
    if (!rd->rc && (H5Lexists(f, "meta", H5P_DEFAULT) <= 0 ||
                    (reps == 0 && H5Lexists(f, "summary", H5P_DEFAULT) <= 0))) {
        snprintf(err, errlen, "%s: not a tidesim results file (no /meta or /summary)", path);
        H5Fclose(f);
        return -EINVAL;
    }
    r->replicated = reps > 0;
    r->reps = reps ? reps : 1;
    r->path = dupstr(path);
    int rc = rd->rc;
    double meta_duration_s = NAN;
    if (!rc)
        rc = r->path ? read_meta(r, rd, f, &meta_duration_s) : -ENOMEM;
    if (!rc)
        rc = read_all(r, rd, f);
    if (!rc && isnan(r->duration_s))
        r->duration_s = meta_duration_s;
    H5Fclose(f);
    if (rc) {
        if (rd->rc)
            snprintf(err, errlen, "%s: %s", path, rd->why);
        else
            snprintf(err, errlen, "%s: cannot read the results file (%s)", path,
                     rc == -ENOMEM ? "out of memory" : "damaged layout");
        results_release(r);
        return rc == -ENOMEM ? rc : -EIO;
    }
    return 0;
}

static int open_direct(struct results *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    struct h5_rd rd;
    hid_t f = h5_rd_open(&rd, path);
    if (f < 0) {
        snprintf(err, errlen, "%s: %s", path, rd.why);
        return rd.rc;
    }
    return read_file(r, &rd, f, path, err, errlen);
}

/* The whole read in the child of h5_rd_preflight: libhdf5 may crash on a damaged file. */
static int open_probe(void *arg, char *why, size_t n)
{
    struct results r;
    int rc = open_direct(&r, arg, why, n);
    if (!rc)
        results_release(&r);
    return rc;
}

int results_open(struct results *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    char why[512] = "";
    int rc = h5_rd_preflight(open_probe, (void *)path, H5READ_PREFLIGHT_S, why, sizeof(why));
    /* The reader's own refusal names the file; the child's death, a hang or no child do not. */
    if (rc && strncmp(why, path, strlen(path)) == 0)
        snprintf(err, errlen, "%s", why);
    else if (rc)
        snprintf(err, errlen, "%s: %s", path, why);
    if (rc)
        return rc == -ETIMEDOUT ? -EIO : rc;
    return open_direct(r, path, err, errlen);
}

int results_open_image(struct results *r, const char *name, const void *buf, size_t n, char *err,
                       size_t errlen)
{
    memset(r, 0, sizeof(*r));
    struct h5_rd rd;
    hid_t f = h5_rd_open_image(&rd, buf, n);
    if (f < 0) {
        snprintf(err, errlen, "%s: %s", name, rd.why);
        return rd.rc;
    }
    int rc = read_file(r, &rd, f, name, err, errlen);
    if (!rc) {
        r->image = buf;
        r->image_len = n;
    }
    return rc;
}

hid_t results_reopen(const struct results *r, struct h5_rd *rd)
{
    return r->image ? h5_rd_open_image(rd, r->image, r->image_len) : h5_rd_open(rd, r->path);
}

void results_release(struct results *r)
{
    free(r->path);
    free(r->scenario_name);
    free(r->policy);
    free(r->gpu);
    free(r->sharing);
    free(r->version);
    free(r->git_commit);
    free(r->seeds);
    table_release(&r->headline);
    table_release(&r->gpu_states);
    table_release(&r->training);
    for (size_t i = 0; i < r->nsvcs; i++) {
        free(r->svcs[i].name);
        table_release(&r->svcs[i].t);
    }
    free(r->svcs);
    for (size_t i = 0; i < r->npools; i++) {
        free(r->pools[i].name);
        free(r->pools[i].board);
        free(r->pools[i].sharing);
        table_release(&r->pools[i].t);
    }
    free(r->pools);
    for (size_t i = 0; i < r->nqueues; i++) {
        free(r->queues[i].name);
        table_release(&r->queues[i].t);
    }
    free(r->queues);
    memset(r, 0, sizeof(*r));
}

int results_use_pool(struct results *r, const char *name)
{
    for (size_t i = 0; i < r->npools; i++)
        if (!strcmp(r->pools[i].name, name)) {
            struct results_table t = r->headline;
            r->headline = r->pools[i].t;
            r->pools[i].t = t;
            const struct results_metric *g = results_table_find(&r->headline, "gpus");
            r->gpus = g && g->s.n ? g->s.mean : r->gpus;
            return 0;
        }
    return -ENOENT;
}

const char *results_label(const struct results_metric *m)
{
    return m->label && *m->label ? m->label : m->key;
}

void results_format(char *buf, size_t n, const struct results_metric *m, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return;
    }
    double x = v * m->scale;
    const char *u = m->unit ? m->unit : "";
    if (!strcmp(u, "%"))
        snprintf(buf, n, "%.3f", x);
    else if (!strcmp(u, "ms") || !strcmp(u, "GPU-h") || !strcmp(u, "h"))
        snprintf(buf, n, "%.3f", x);
    else if (!strcmp(u, "s") || !strcmp(u, "W") || !strcmp(u, "kWh"))
        snprintf(buf, n, "%.1f", x);
    else if (x == floor(x) || fabs(x) >= 100)
        snprintf(buf, n, "%.0f", x);
    else
        snprintf(buf, n, "%.3f", x);
}
