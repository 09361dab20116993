/* results.c — read a results file (single or replicated) into tables of metrics. */
#include "analysis/results.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/answer.h"
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

/* /jobs outcomes first in the training table: jobs by final state (/jobs state 0..3, in this
 * order), then preemptions. */
static const struct metric_def training_defs[] = {
    {"jobs_queued_at_end", NULL, "", 1, RESULTS_NEUTRAL},
    {"jobs_running_at_end", NULL, "", 1, RESULTS_NEUTRAL},
    {"jobs_done", NULL, "", 1, RESULTS_NEUTRAL},
    {"jobs_rejected", NULL, "", 1, RESULTS_NEUTRAL},
    {"preemptions", NULL, "", 1, RESULTS_LOWER},
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

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
        free(t->m[i].kept);
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

/* ------------------------------------------------ the open file and its columns */

/*
 * What the commands read after results_open (results.h): one row per column.
 * Keep it in step with the readers: results_col refuses any other column, and
 * tests/analysis/test_results_reads.c checks that what every command asks for
 * is what results_open's child reads.
 */
#define R_RCP (RESULTS_BY_REPORT | RESULTS_BY_COMPARE)
#define R_PH  (RESULTS_BY_PLOT | RESULTS_BY_HTML)
const struct results_read results_reads[] = {
    /* per-day table (perday.c: report, compare); the daily and busy charts (plot) */
    {"timeseries", "time_s", R_RCP | R_PH},
    {"timeseries", "util_busy", R_RCP | R_PH},
    {"timeseries", "util_allocated", R_RCP | R_PH},
    {"timeseries", "share_training", R_RCP | R_PH},
    {"services/*/timeseries", "time_s", R_RCP | R_PH},
    {"services/*/timeseries", "within_slo", R_RCP},
    {"services/*/timeseries", "served", R_RCP},
    {"services/*/timeseries", "dropped", R_RCP},
    {"services/*/timeseries", "failed", R_RCP},
    /* the initial backlog gate (check.c: check --backlog-drained-by); the jobs chart */
    {"jobs", "submit_s", RESULTS_BY_CHECK | R_PH},
    {"jobs", "end_s", RESULTS_BY_CHECK | R_PH},
    {"jobs", "state", RESULTS_BY_CHECK | R_PH},
    {"jobs", "start_s", R_PH},
    {"job_segments", "job", R_PH},
    {"job_segments", "start_s", R_PH},
    {"job_segments", "end_s", R_PH},
    {"job_segments", "kind", R_PH},
    /* the util and queue charts (plot.c) */
    {"timeseries", "share_inference", R_PH},
    {"timeseries", "share_checkpoint", R_PH},
    {"timeseries", "share_restore", R_PH},
    {"timeseries", "share_recompute", R_PH},
    {"timeseries", "share_overhead", R_PH},
    {"timeseries", "share_reconfiguring", R_PH},
    {"timeseries", "share_idle", R_PH},
    {"timeseries", "share_free", R_PH},
    {"timeseries", "jobs_queued", R_PH},
    {"timeseries", "jobs_running", R_PH},
    /* quota and flavors charts */
    {"queues/*/timeseries", "time_s", R_PH},
    {"queues/*/timeseries", "admitted_gpus", R_PH},
    {"queues/*/timeseries", "borrowed_gpus", R_PH},
    {"queues/*/flavors/*/timeseries", "time_s", R_PH},
    {"queues/*/flavors/*/timeseries", "admitted_gpus", R_PH},
    {"queues/*/flavors/*/timeseries", "borrowed_gpus", R_PH},
    /* pools chart */
    {"pools/*/timeseries", "time_s", R_PH},
    {"pools/*/timeseries", "util_busy", R_PH},
    {"pools/*/timeseries", "util_allocated", R_PH},
    /* p99 and cdf charts */
    {"services/*/timeseries", "p99_ms", R_PH},
    {"services/*/histogram", "count", R_PH},
    {"services/*/histogram", "hi_us", R_PH},
    /* llm chart */
    {"services/*/llm_timeseries", "time_s", R_PH},
    {"services/*/llm_timeseries", "ttft_p50_ms", R_PH},
    {"services/*/llm_timeseries", "ttft_p99_ms", R_PH},
    {"services/*/llm_timeseries", "tpot_p50_ms", R_PH},
    {"services/*/llm_timeseries", "tpot_p99_ms", R_PH},
    {"services/*/llm_timeseries", "kv_occupancy", R_PH},
    {"services/*/llm_timeseries", "tokens_per_s", R_PH},
};
const size_t results_nreads = sizeof(results_reads) / sizeof(results_reads[0]);

/* The /meta texts of the HTML report (results_meta_text). */
static const char *const meta_texts[] = {"scenario", "host", "wall_start", "scenario_path"};
#define NMETA (sizeof(meta_texts) / sizeof(meta_texts[0]))

/*
 * Datasets results_open checks and keeps open to be read later without opening
 * them again; past this many, a checked dataset is closed and opened (and
 * checked) again when read, so that a file of many small datasets cannot make
 * the reader hold a handle for each.
 */
#define MAX_OPEN_DSETS 4096

/* An object of the file by its absolute path: a group, or a column. */
struct ent {
    char *path; /* NULL: a free slot */
    hid_t id;   /* open (H5I_INVALID_HID: none) */
    uint64_t len;
    double *v; /* a column's values, once read */
    int rc;    /* 0 found, -ENOENT absent, else the refusal */
    bool asked;
};

/* A hash table of ents (open addressing, cap a power of two). */
struct tab {
    struct ent *e;
    size_t n, cap;
};

struct results_src {
    unsigned by; /* the RESULTS_BY_* whose columns results_col may read */
    hid_t file;
    struct h5_rd rd;
    struct tab grps, cols;
    size_t open; /* datasets held open */
    char *meta[NMETA];
    bool meta_read;
    bool shipped; /* received from the reading child (results_from_answer): nothing to read */
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct ent *tab_slot(struct ent *e, size_t cap, const char *path)
{
    size_t i = (size_t)hash_str(path) & (cap - 1);
    while (e[i].path && strcmp(e[i].path, path))
        i = (i + 1) & (cap - 1);
    return &e[i];
}

/* The ent of path; a new one (id invalid, *fresh set) when absent. NULL: out of memory. */
static struct ent *tab_get(struct tab *t, const char *path, bool *fresh)
{
    *fresh = false;
    if (t->cap) {
        struct ent *e = tab_slot(t->e, t->cap, path);
        if (e->path)
            return e;
    }
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct ent *ne = calloc(cap, sizeof(*ne));
        if (!ne)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->e[i].path)
                *tab_slot(ne, cap, t->e[i].path) = t->e[i];
        free(t->e);
        t->e = ne;
        t->cap = cap;
    }
    struct ent *e = tab_slot(t->e, t->cap, path);
    e->path = dupstr(path);
    if (!e->path)
        return NULL;
    e->id = H5I_INVALID_HID;
    e->rc = -ENOENT;
    t->n++;
    *fresh = true;
    return e;
}

static void tab_release(struct tab *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].path)
            continue;
        if (t->e[i].id >= 0)
            H5Oclose(t->e[i].id);
        free(t->e[i].path);
        free(t->e[i].v);
    }
    free(t->e);
    memset(t, 0, sizeof(*t));
}

static void src_release(struct results_src *s)
{
    if (!s)
        return;
    tab_release(&s->cols);
    tab_release(&s->grps);
    if (s->file >= 0)
        H5Fclose(s->file);
    for (size_t i = 0; i < NMETA; i++)
        free(s->meta[i]);
    free(s);
}

/* "<base>/<name>" ("/<name>" when base is "/" or ""); -ENAMETOOLONG when it does not fit. */
static int join(char *buf, size_t n, const char *base, const char *name)
{
    bool root = !base[0] || !strcmp(base, "/");
    int k = snprintf(buf, n, "%s/%s", root ? "" : base, name);
    return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}

#define PATH_MAX_R 1200 /* bytes of an object's path here (names are bounded by the walks) */

/* Group `path` (absolute, "/" the root), opened once. Its id or a negative value (*rc). */
static hid_t src_group(struct results_src *s, const char *path, int *rc)
{
    bool fresh;
    struct ent *e = tab_get(&s->grps, path, &fresh);
    if (!e) {
        *rc = h5_rd_fail(&s->rd, -ENOMEM, "%s: out of memory", path);
        return H5I_INVALID_HID;
    }
    if (!fresh) {
        *rc = e->rc;
        return e->id;
    }
    hid_t id = H5I_INVALID_HID;
    if (!strcmp(path, "/")) {
        id = H5Gopen2(s->file, "/", H5P_DEFAULT);
        *rc = id >= 0 ? 0 : h5_rd_fail(&s->rd, -EIO, "/: cannot open the root group");
    } else {
        char parent[PATH_MAX_R];
        const char *slash = strrchr(path, '/');
        size_t pl = (size_t)(slash - path);
        snprintf(parent, sizeof(parent), "%.*s", (int)(pl ? pl : 1), path);
        hid_t p = src_group(s, parent, rc); /* may grow the table: e is looked up again */
        if (p >= 0)
            id = h5_rd_group_rc(&s->rd, p, slash + 1, rc);
    }
    e = tab_get(&s->grps, path, &fresh);
    if (!e) {
        if (id >= 0)
            H5Oclose(id);
        *rc = h5_rd_fail(&s->rd, -ENOMEM, "%s: out of memory", path);
        return H5I_INVALID_HID;
    }
    e->id = id;
    e->rc = *rc;
    return id;
}

/*
 * Column `name` of group `gpath` (absolute): opened and checked once, read
 * once when `read`. The ent (rc says whether it is there), or NULL (out of
 * memory, recorded).
 */
static struct ent *src_col(struct results_src *s, const char *gpath, const char *name, bool read)
{
    char path[PATH_MAX_R];
    if (join(path, sizeof(path), gpath, name)) {
        h5_rd_fail(&s->rd, -EIO, "%.200s/%.200s: a path too long", gpath, name);
        return NULL;
    }
    bool fresh;
    struct ent *e = tab_get(&s->cols, path, &fresh);
    if (!e) {
        h5_rd_fail(&s->rd, -ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (s->shipped) { /* the child read everything there is to read: absent, or a bug */
        if (read && e->rc == 0 && !e->v)
            e->rc = h5_rd_fail(&s->rd, -EIO, "%s: not read by the reading process", path);
        return e;
    }
    if (fresh || (e->rc == 0 && e->id < 0 && !e->v && read)) {
        /* Not yet opened, or closed after its check (MAX_OPEN_DSETS): open (and check) it. */
        int rc;
        hid_t g = src_group(s, gpath, &rc);
        hid_t d = g >= 0 ? h5_rd_dset_open(&s->rd, g, name, NULL, &e->len, &rc) : H5I_INVALID_HID;
        e = tab_get(&s->cols, path, &fresh); /* src_group does not grow cols, but be sure */
        if (!e) {
            if (d >= 0)
                H5Oclose(d);
            h5_rd_fail(&s->rd, -ENOMEM, "%s: out of memory", path);
            return NULL;
        }
        e->rc = rc;
        e->id = d;
        if (d >= 0)
            s->open++;
    }
    if (read && e->rc == 0 && !e->v) {
        e->rc = h5_rd_dset_read(&s->rd, e->id, e->path, e->len, &e->v);
        H5Oclose(e->id); /* read once: its handle is not needed again */
        e->id = H5I_INVALID_HID;
        s->open--;
    }
    return e;
}

/* Keep dataset d (name of group gpath, len values), just opened and checked by a walk. */
static int src_checked(struct results_src *s, const char *gpath, const char *name, hid_t d,
                       uint64_t len)
{
    char path[PATH_MAX_R];
    bool fresh = false;
    struct ent *e = join(path, sizeof(path), gpath, name) ? NULL : tab_get(&s->cols, path, &fresh);
    if (!fresh || s->open >= MAX_OPEN_DSETS) { /* seen already, too many open, or no memory */
        H5Oclose(d);
        d = H5I_INVALID_HID;
    }
    if (!e)
        return h5_rd_fail(&s->rd, -ENOMEM, "%s/%s: out of memory", gpath, name);
    if (fresh) {
        e->id = d;
        e->len = len;
        e->rc = 0;
        s->open += d >= 0;
    }
    return 0;
}

/* Whether a (group, name) pair is one results_reads lists for by ("*": one path component). */
static bool listed(const char *group, const char *name, unsigned by)
{
    for (size_t i = 0; i < results_nreads; i++) {
        if (!(results_reads[i].by & by) || strcmp(results_reads[i].name, name))
            continue;
        const char *p = results_reads[i].group, *g = group;
        while (*p && *g) {
            size_t pl = strcspn(p, "/"), gl = strcspn(g, "/");
            if (!(pl == 1 && *p == '*') && (pl != gl || strncmp(p, g, pl)))
                break;
            p += pl + (p[pl] == '/');
            g += gl + (g[gl] == '/');
        }
        if (!*p && !*g)
            return true;
    }
    return false;
}

/* The root of replication rep: "/rep0003", or "" (the file) for a single run. */
static void rep_path(const struct results *r, size_t rep, char *buf, size_t n)
{
    if (r->replicated)
        snprintf(buf, n, "/rep%04zu", rep);
    else
        snprintf(buf, n, "%s", "");
}

int results_col(const struct results *r, size_t rep, const char *group, const char *name,
                const double **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    struct results_src *s = r->src;
    if (!s || rep >= r->reps)
        return -ENOENT;
    if (!listed(group, name, s->by))
        return h5_rd_fail(&s->rd, -EPERM,
                          "%s/%s: not in results_reads (analysis/results.c) for this command, "
                          "not read",
                          group, name);
    char root[32], gpath[PATH_MAX_R];
    rep_path(r, rep, root, sizeof(root));
    if (join(gpath, sizeof(gpath), root, group))
        return h5_rd_fail(&s->rd, -EIO, "%.200s/%.200s: a path too long", root, group);
    struct ent *e = src_col(s, gpath, name, true);
    if (!e)
        return s->rd.rc ? s->rd.rc : -ENOMEM;
    e->asked = true;
    if (e->rc)
        return e->rc;
    *v = e->v;
    *n = (size_t)e->len;
    return 0;
}

const char *results_why(const struct results *r)
{
    return r->src ? r->src->rd.why : "";
}

static void meta_read_all(struct results_src *s)
{
    if (s->meta_read || s->shipped)
        return;
    s->meta_read = true;
    size_t keep = s->rd.str_max;
    s->rd.str_max = H5READ_MAX_TEXT;
    const char *groups[] = {"/meta", "/rep0000/meta"};
    for (size_t i = 0; i < 2 && !s->meta[0]; i++) {
        int rc;
        hid_t g = src_group(s, groups[i], &rc);
        if (g < 0)
            continue;
        for (size_t k = 0; k < NMETA; k++)
            if (!s->meta[k])
                h5_rd_attr_str(&s->rd, g, meta_texts[k], &s->meta[k]);
    }
    s->rd.str_max = keep;
}

void results_meta_text(const struct results *r, const char *name, const char **out)
{
    *out = NULL;
    if (!r->src || !(r->src->by & RESULTS_BY_HTML)) /* what the child read first, only */
        return;
    meta_read_all(r->src);
    for (size_t k = 0; k < NMETA; k++)
        if (!strcmp(name, meta_texts[k]))
            *out = r->src->meta[k];
}

/*
 * The idx-th group (0, 1, ...) results_reads pattern pat stands for, into buf:
 * 1, or 0 past the last, or -1 for one too long to be read (skipped). "*" is
 * each name results_open found in any replication: services (r->svcs), pools
 * (r->pools), queues (entries of r->queues without '/'), and under a queue's
 * flavors, the flavors of that queue (entries "<queue>/<flavor>").
 */
static int expand(const struct results *r, const char *pat, size_t idx, char *buf, size_t n)
{
    const char *star = strchr(pat, '*');
    if (!star) {
        snprintf(buf, n, "%s", pat);
        return idx == 0;
    }
    size_t pre = (size_t)(star - pat);
    const struct results_service *list = NULL;
    size_t cnt = 0;
    if (!strncmp(pat, "services/", pre))
        list = r->svcs, cnt = r->nsvcs;
    else if (!strncmp(pat, "pools/", pre))
        list = r->pools, cnt = r->npools;
    else if (!strncmp(pat, "queues/", pre))
        list = r->queues, cnt = r->nqueues;
    const char *star2 = strchr(star + 1, '*');
    for (size_t i = 0; i < cnt; i++) {
        const char *name = list[i].name, *slash = strchr(name, '/');
        if ((slash != NULL) != (star2 != NULL) || idx-- > 0)
            continue;
        int k = star2 ? snprintf(buf, n, "%.*s%.*s%.*s%s%s", (int)pre, pat, (int)(slash - name),
                                 name, (int)(star2 - star - 1), star + 1, slash + 1, star2 + 1)
                      : snprintf(buf, n, "%.*s%s%s", (int)pre, pat, name, star + 1);
        return k < 0 || (size_t)k >= n ? -1 : 1;
    }
    return 0;
}

int results_read_all(const struct results *r, unsigned by)
{
    struct results_src *s = r->src;
    if (!s)
        return -ENOENT;
    for (size_t rep = 0; rep < r->reps; rep++) {
        char root[32], group[PATH_MAX_R], gpath[PATH_MAX_R];
        rep_path(r, rep, root, sizeof(root));
        for (size_t i = 0; i < results_nreads; i++) {
            if (!(results_reads[i].by & by))
                continue;
            int k;
            for (size_t idx = 0;
                 (k = expand(r, results_reads[i].group, idx, group, sizeof(group))) != 0; idx++) {
                if (k < 0 || join(gpath, sizeof(gpath), root, group))
                    continue;
                struct ent *e = src_col(s, gpath, results_reads[i].name, true);
                if (!e)
                    return s->rd.rc ? s->rd.rc : -ENOMEM;
                if (e->rc && e->rc != -ENOENT)
                    return e->rc;
            }
        }
    }
    if (by & RESULTS_BY_HTML)
        meta_read_all(s);
    return s->rd.rc;
}

size_t results_cols(const struct results *r, bool asked, void (*fn)(const char *path, void *arg),
                    void *arg)
{
    size_t n = 0;
    const struct tab *t = r->src ? &r->src->cols : NULL;
    for (size_t i = 0; t && i < t->cap; i++)
        if (t->e[i].path && (asked ? t->e[i].asked : t->e[i].v || t->e[i].rc)) {
            n++;
            if (fn)
                fn(t->e[i].path, arg);
        }
    return n;
}

/* What one results_open reads with: the session (limits, first refusal) and the tables. */
struct rd_ctx {
    struct results *r;
    struct h5_rd *rd;
    size_t rep;
    const char *root; /* the replication's path: "/rep0003", or "" */
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
    double v;
    int rc =
        known ? h5_rd_attr_double(w->rd, obj, name, &v) : h5_rd_attr_number(w->rd, obj, name, &v);
    if (rc == 1)
        return 0;
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
        if (!h5_rd_attr_str_opt(rd, g, name, &u)) {
            free(m->own_unit);
            bool frac = !strcmp(u, "1");
            m->own_unit = frac ? dupstr("%") : u;
            if (frac)
                free(u);
            if (!m->own_unit) /* a unit lost would print a figure without it */
                return h5_rd_fail(rd, -ENOMEM, "%s: out of memory", name);
            m->unit = m->own_unit;
            m->scale = frac ? 100 : 1;
        }
        snprintf(name, sizeof(name), "%s.label", m->key);
        if (!h5_rd_attr_str_opt(rd, g, name, &l)) {
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
    if (H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, summary_attr, &w) < 0 && !w.rc)
        w.rc =
            h5_rd_fail(c->rd, -EIO,
                       "%s/summary: cannot list its attributes (the HDF5 library failed)", c->root);
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
    if (*seen + 1 <= H5READ_MAX_LINKS && info->type == H5L_TYPE_HARD) {
        ++*seen;
        return 0;
    }
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

static void iterate_links(struct h5_rd *rd, hid_t g, const char *where, const char *group,
                          H5L_iterate_t fn, void *data, int *rc);

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
    if (w->kind == WALK_POOLS && w->c->rep == 0 && !rd->rc && !s->board)
        h5_rd_attr_str_opt(rd, g, "gpu", &s->board); /* absent or no string: none */
    if (w->kind == WALK_POOLS && w->c->rep == 0 && !rd->rc && !s->sharing)
        h5_rd_attr_str_opt(rd, g, "sharing", &s->sharing); /* absent or no string: none */
    /* Several GPU flavors: /queues/<name>/flavors/<flavor> follow their queue, their links
     * counted with the queues' against the reader's limit. */
    if (w->kind == WALK_QUEUES && !rd->rc && h5_rd_link_exists(rd, g, "flavors") > 0) {
        hid_t fg = h5_rd_group(rd, g, "flavors");
        if (fg >= 0) {
            struct svc_walk fw = {w->c, w->seen, 0, WALK_FLAVORS, name};
            char qpath[PATH_MAX_R];
            snprintf(qpath, sizeof(qpath), "%s/queues/%.100s", w->c->root, name);
            iterate_links(rd, fg, qpath, "flavors", service_link, &fw, &fw.rc);
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

/*
 * Iterate g's links (group `group` under `where`) in creation order (the scenario's order),
 * else, in a file without that order, by name. A walk libhdf5 could not finish (out of memory,
 * a damaged index) is refused, not taken for the members it reached.
 */
static void iterate_links(struct h5_rd *rd, hid_t g, const char *where, const char *group,
                          H5L_iterate_t fn, void *data, int *rc)
{
    hsize_t idx = 0;
    int crt = h5_rd_crt_order(g, false);
    herr_t e = crt < 0 ? -1
                       : H5Literate(g, crt ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC, &idx,
                                    fn, data);
    if (e < 0 && !*rc)
        *rc = h5_rd_fail(rd, -EIO, "%s/%s: cannot list its members (the HDF5 library failed)",
                         where, group);
}

static int read_services(struct rd_ctx *c, hid_t root)
{
    hid_t g = h5_rd_group(c->rd, root, "services");
    if (g < 0)
        return c->rd->rc;
    struct svc_walk w = {c, 0, 0, WALK_SERVICES, NULL};
    iterate_links(c->rd, g, c->root, "services", service_link, &w, &w.rc);
    H5Gclose(g);
    return w.rc ? w.rc : c->rd->rc;
}

/* /pools/<name> (optional: only files of a scenario with cluster.pools have it). */
static int read_pools(struct rd_ctx *c, hid_t root)
{
    int there = h5_rd_link_exists(c->rd, root, "pools");
    if (there <= 0)
        return there < 0 ? c->rd->rc : 0;
    hid_t g = h5_rd_group(c->rd, root, "pools");
    if (g < 0)
        return c->rd->rc;
    struct svc_walk w = {c, 0, 0, WALK_POOLS, NULL};
    iterate_links(c->rd, g, c->root, "pools", service_link, &w, &w.rc);
    H5Gclose(g);
    return w.rc ? w.rc : c->rd->rc;
}

/* /queues, when the run wrote it (a policy with queues). */
static int read_queues(struct rd_ctx *c, hid_t root)
{
    int there = h5_rd_link_exists(c->rd, root, "queues");
    if (there <= 0)
        return there < 0 ? c->rd->rc : 0;
    hid_t g = h5_rd_group(c->rd, root, "queues");
    if (g < 0)
        return c->rd->rc;
    struct svc_walk w = {c, 0, 0, WALK_QUEUES, NULL};
    iterate_links(c->rd, g, c->root, "queues", service_link, &w, &w.rc);
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
    struct results_src *src;
    const char *gpath;  /* the group's path */
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
    hid_t d = h5_rd_dset_open(w->rd, grp, name, info, &len, &w->rc);
    if (d < 0)
        return -1;
    /* Kept open: a later read (results_col) neither opens nor checks it again. */
    if ((w->rc = src_checked(w->src, w->gpath, name, d, len)) != 0)
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

/* The table group `group` of parent (path ppath): its columns checked and kept (src_checked). */
static int check_columns(struct results_src *src, hid_t parent, const char *ppath,
                         const char *group, const char *suffix)
{
    struct h5_rd *rd = &src->rd;
    char gpath[PATH_MAX_R];
    if (join(gpath, sizeof(gpath), ppath, group))
        return h5_rd_fail(rd, -EIO, "%.200s/%s: a path too long", ppath, group);
    hid_t g = h5_rd_group(rd, parent, group);
    if (g < 0)
        return rd->rc;
    struct shape_walk w = {.rd = rd, .src = src, .gpath = gpath, .suffix = suffix};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, shape_link, &w) < 0 && !w.rc)
        w.rc = h5_rd_fail(rd, -EIO, "%s: cannot list its members (the HDF5 library failed)", gpath);
    H5Gclose(g);
    return w.rc ? w.rc : rd->rc;
}

struct svc_shape_walk {
    struct results_src *src;
    const char *root;
    size_t seen;
    int rc;
};

static herr_t service_shape(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct svc_shape_walk *w = data;
    struct h5_rd *rd = &w->src->rd;
    if ((w->rc = walk_link_ok(rd, grp, name, info, &w->seen)) != 0)
        return -1;
    char spath[PATH_MAX_R];
    if (snprintf(spath, sizeof(spath), "%s/services/%s", w->root, name) >= (int)sizeof(spath)) {
        w->rc = h5_rd_fail(rd, -EIO, "%s/services/%.100s: a name too long", w->root, name);
        return -1;
    }
    hid_t s = h5_rd_group(rd, grp, name);
    if (s < 0) {
        w->rc = rd->rc ? rd->rc : -EIO;
        return -1;
    }
    w->rc = check_columns(w->src, s, spath, "timeseries", NULL);
    if (!w->rc)
        w->rc = check_columns(w->src, s, spath, "histogram", NULL);
    H5Gclose(s);
    return w->rc ? -1 : 0;
}

static int check_shapes(struct results_src *src, hid_t root, const char *rpath)
{
    struct h5_rd *rd = &src->rd;
    int rc = check_columns(src, root, rpath, "timeseries", NULL);
    if (!rc)
        rc = check_columns(src, root, rpath, "jobs", NULL);
    if (!rc)
        rc = check_columns(src, root, rpath, "gpus", "_s");
    hid_t g = rc ? H5I_INVALID_HID : h5_rd_group(rd, root, "services");
    if (g >= 0) {
        struct svc_shape_walk w = {src, rpath, 0, 0};
        hsize_t idx = 0;
        if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, service_shape, &w) < 0 && !w.rc)
            w.rc = h5_rd_fail(
                rd, -EIO, "%s/services: cannot list its members (the HDF5 library failed)", rpath);
        H5Gclose(g);
        rc = w.rc;
    }
    return rc ? rc : rd->rc;
}

struct col_walk {
    struct results_table *t;
    struct h5_rd *rd;
    struct results_src *src;
    const char *gpath; /* the group's path */
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
    /* Checked by the shape walk and kept open: read here, once. */
    struct ent *e = src_col(w->src, w->gpath, name, true);
    if (!e || e->rc) {
        w->rc = e && e->rc != -ENOENT ? e->rc : w->rd->rc ? w->rd->rc : -ENOMEM;
        return -1;
    }
    const double *v = e->v;
    size_t len = (size_t)e->len;
    double sum = 0;
    for (size_t i = 0; i < len; i++)
        if (isfinite(v[i]))
            sum += v[i];
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

static int walk_columns(hid_t root, const char *rpath, const char *group, struct col_walk *w)
{
    char gpath[PATH_MAX_R];
    if (join(gpath, sizeof(gpath), rpath, group))
        return h5_rd_fail(w->rd, -EIO, "%.200s/%s: a path too long", rpath, group);
    w->gpath = gpath;
    hid_t g = h5_rd_group(w->rd, root, group);
    if (g < 0)
        return w->rd->rc;
    iterate_links(w->rd, g, rpath, group, sum_column, w, &w->rc);
    H5Gclose(g);
    return w->rc ? w->rc : w->rd->rc;
}

static struct results_metric *training_metric(struct results *r, const char *key)
{
    return (struct results_metric *)results_table_find(&r->training, key);
}

/* A column of group gpath through r's cache (read once): 0, -ENOENT, or the refusal. */
static int cached_col(struct results_src *src, const char *gpath, const char *name,
                      const double **v, size_t *n)
{
    struct ent *e = src_col(src, gpath, name, true);
    if (!e)
        return src->rd.rc ? src->rd.rc : -ENOMEM;
    *v = e->v;
    *n = (size_t)e->len;
    return e->rc;
}

static int read_jobs(struct rd_ctx *c, hid_t root)
{
    struct results *r = c->r;
    char gpath[PATH_MAX_R];
    if (join(gpath, sizeof(gpath), c->root, "jobs"))
        return h5_rd_fail(c->rd, -EIO, "%s/jobs: a path too long", c->root);
    const double *v = NULL;
    size_t n = 0;
    int rc = cached_col(r->src, gpath, "state", &v, &n);
    if (rc == 0) {
        double cnt[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < n; i++)
            if (v[i] >= 0 && v[i] < 4)
                cnt[(size_t)v[i]] += 1;
        for (size_t k = 0; k < 4; k++)
            training_metric(r, training_defs[k].key)->values[c->rep] = cnt[k];
    }
    if (rc == 0 || rc == -ENOENT)
        rc = cached_col(r->src, gpath, "preemptions", &v, &n);
    if (rc == 0) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += isfinite(v[i]) ? v[i] : 0;
        training_metric(r, "preemptions")->values[c->rep] = s;
    }
    if (rc && rc != -ENOENT)
        return rc;
    struct col_walk w = {&r->training,
                         c->rd,
                         r->src,
                         NULL,
                         c->rep,
                         r->reps,
                         1,
                         job_time_cols,
                         sizeof(job_time_cols) / sizeof(job_time_cols[0]),
                         0,
                         0};
    return walk_columns(root, c->root, "jobs", &w);
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
    r->rep_gpus[c->rep] = gpus;
    static const char *const gpu_skip[] = {"node"};
    if (gpus > 0 && dur > 0) {
        struct col_walk w = {&r->gpu_states, c->rd,    r->src, NULL, c->rep, r->reps,
                             gpus * dur,     gpu_skip, 1,      0,    0};
        int rc = walk_columns(root, c->root, "gpus", &w);
        if (rc)
            return rc;
    }
    /* Training outcomes: jobs by final state, total preemptions, summed job seconds. */
    for (size_t k = 0; k < LEN(training_defs); k++)
        if (!table_add(&r->training, &training_defs[k], r->reps))
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
        int there = h5_rd_link_exists(rd, f, name);
        if (there <= 0)
            return there < 0 ? 0 : n;
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
    r->rep_gpus = malloc(r->reps * sizeof(*r->rep_gpus));
    if (!r->seeds || !r->rep_gpus)
        return -ENOMEM;
    for (size_t i = 0; i < r->reps; i++) {
        char name[32];
        snprintf(name, sizeof(name), "rep%04zu", i);
        hid_t g = r->replicated ? h5_rd_group(rd, f, name) : H5Gopen2(f, "/", H5P_DEFAULT);
        if (g < 0)
            return rd->rc ? rd->rc : h5_rd_fail(rd, -EIO, "/%s: cannot open the group", name);
        r->seeds[i] = NAN;
        r->rep_gpus[i] = NAN;
        char root[32];
        rep_path(r, i, root, sizeof(root));
        if (h5_rd_link_exists(rd, g, "meta") > 0) {
            hid_t m = h5_rd_group(rd, g, "meta");
            if (m >= 0) {
                r->seeds[i] = attr_or_nan(rd, m, "seed");
                H5Gclose(m);
            }
        }
        struct rd_ctx c = {r, rd, i, root};
        int rc = check_shapes(r->src, g, root);
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
 * Read the file s->file, just opened for session s->rd (h5_rd_open or
 * h5_rd_open_image), into r (zeroed), which keeps s open: later reads
 * (results_col) use the same file id and session. path names it in r and in
 * messages. On failure s is released.
 */
static int read_file(struct results *r, struct results_src *s, const char *path, char *err,
                     size_t errlen)
{
    struct h5_rd *rd = &s->rd;
    hid_t f = s->file;
    r->src = s;
    size_t reps = count_reps(rd, f);
    int has_meta = rd->rc ? 1 : h5_rd_link_exists(rd, f, "meta");
    int has_summary = rd->rc || reps ? 1 : h5_rd_link_exists(rd, f, "summary");
    if (!rd->rc && (has_meta == 0 || has_summary == 0)) {
        snprintf(err, errlen, "%s: not a tidesim results file (no /meta or /summary)", path);
        results_release(r);
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

/* A session with the file just opened (h5_rd_open or h5_rd_open_image). NULL: see *rc. */
static struct results_src *src_open(const char *path, const void *buf, size_t n, char *err,
                                    size_t errlen, int *rc)
{
    struct results_src *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        *rc = -ENOMEM;
        return NULL;
    }
    s->file = buf ? h5_rd_open_image(&s->rd, buf, n) : h5_rd_open(&s->rd, path);
    if (s->file < 0) {
        snprintf(err, errlen, "%s: %s", path, s->rd.why);
        *rc = s->rd.rc;
        free(s);
        return NULL;
    }
    *rc = 0;
    return s;
}

static int open_direct(struct results *r, const char *path, unsigned by, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    int rc;
    struct results_src *s = src_open(path, NULL, 0, err, errlen, &rc);
    if (s)
        s->by = by;
    return s ? read_file(r, s, path, err, errlen) : rc;
}

/* ------------------------------------------------ the child's read, sent to the command */

/*
 * The command's own process never calls libhdf5 on a results file. results_open's child
 * (h5_rd_preflight) reads it, then writes what it read to an anonymous file the parent made
 * before the fork: struct results and every column results_reads lists for the command, read
 * or refused, with the /meta texts. The parent decodes that (results_from_answer) instead of
 * reading the file again. Reading twice was no guarantee: libhdf5 1.10's behaviour on a damaged
 * file depends on the state of its heap (docs/security.md), so a read the child survived could
 * still crash, or silently corrupt, the command; and a corruption that does not crash the
 * child would have happened in the command as well. Now a file that subverts libhdf5 acts in
 * the child only, and can make it send numbers, which the file could have held anyway: the
 * decoder checks every count and length against the bytes it was sent and refuses anything
 * else. The format is this build's own, between two processes of one binary (native byte
 * order, no versioning); it is never written to disk under a name.
 */
#define SHIP_MAGIC     "tidesim results, read by a child\n"
#define SHIP_MAX_REPS  9999u        /* count_reps' limit */
#define SHIP_MAX_VALUE (1ull << 28) /* h5read's limit on a dataset's values */

static void put_table(FILE *f, const struct results_table *t, size_t reps)
{
    answer_put_u64(f, t->n);
    for (size_t i = 0; i < t->n; i++) {
        const struct results_metric *m = &t->m[i];
        answer_put_str(f, m->key);
        answer_put_str(f, m->own_label);
        answer_put_str(f, m->own_unit);
        answer_put_str(f, m->label);
        answer_put_str(f, m->unit);
        answer_put_f64(f, m->scale);
        answer_put_u64(f, (uint64_t)(int64_t)m->better);
        answer_put(f, m->values, reps * sizeof(double));
        answer_put_u64(f, m->s.n);
        answer_put_f64(f, m->s.mean);
        answer_put_f64(f, m->s.sd);
        answer_put_f64(f, m->s.ci95);
    }
}

static void put_list(FILE *f, const struct results_service *l, size_t n, size_t reps)
{
    answer_put_u64(f, n);
    for (size_t i = 0; i < n; i++) {
        answer_put_str(f, l[i].name);
        answer_put_str(f, l[i].board);
        answer_put_str(f, l[i].sharing);
        put_table(f, &l[i].t, reps);
    }
}

/* In the child: r, as read, to fd (results.h). */
int results_answer(const struct results *r, int fd)
{
    if (!r->src)
        return -EINVAL;
    FILE *f = answer_open(fd);
    if (!f)
        return -errno;
    answer_put(f, SHIP_MAGIC, strlen(SHIP_MAGIC));
    const char *strs[] = {r->scenario_name, r->policy,  r->gpu,
                          r->sharing,       r->version, r->git_commit};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        answer_put_str(f, strs[i]);
    answer_put_u64(f, r->reps);
    answer_put_u64(f, r->replicated);
    answer_put_u64(f, r->complete);
    const double nums[] = {r->seed,    r->sim_time_reached_s, r->duration_s,
                           r->gpus,    r->wall_seconds,       r->events,
                           r->warmup_s};
    answer_put(f, nums, sizeof(nums));
    answer_put(f, r->seeds, r->reps * sizeof(double));
    answer_put(f, r->rep_gpus, r->reps * sizeof(double));
    put_table(f, &r->headline, r->reps);
    put_table(f, &r->gpu_states, r->reps);
    put_table(f, &r->training, r->reps);
    put_list(f, r->svcs, r->nsvcs, r->reps);
    put_list(f, r->pools, r->npools, r->reps);
    put_list(f, r->queues, r->nqueues, r->reps);
    const struct results_src *s = r->src;
    answer_put_u64(f, s->meta_read);
    for (size_t k = 0; k < NMETA; k++)
        answer_put_str(f, s->meta[k]);
    answer_put_u64(f, s->cols.n);
    for (size_t i = 0; i < s->cols.cap; i++) {
        const struct ent *e = &s->cols.e[i];
        if (!e->path)
            continue;
        answer_put_str(f, e->path);
        answer_put_u64(f, (uint64_t)(int64_t)e->rc);
        answer_put_u64(f, e->v ? e->len : UINT64_MAX);
        if (e->v)
            answer_put(f, e->v, (size_t)e->len * sizeof(double));
    }
    answer_put(f, SHIP_MAGIC, strlen(SHIP_MAGIC)); /* the end: nothing was cut */
    return answer_close(f);
}

/* A metric's shipped label or unit, kept in m->kept; own_label / own_unit when they match. */
static const char *keep_text(struct results_metric *m, char *text, char *own, size_t off)
{
    if (!text)
        return NULL;
    if (own && !strcmp(own, text))
        return own;
    return m->kept + off;
}

static void get_table(struct answer_in *in, struct results_table *t, size_t reps)
{
    size_t n = answer_get_count(in, 6 * 8, UINT32_MAX);
    t->m = n ? calloc(n, sizeof(*t->m)) : NULL;
    if (n && !t->m) {
        in->bad = in->oom = true;
        return;
    }
    for (size_t i = 0; i < n && !in->bad; i++) {
        struct results_metric *m = &t->m[i];
        t->n = i + 1; /* what table_release must free */
        char *label = NULL, *unit = NULL;
        answer_get_str(in, &m->key);
        answer_get_str(in, &m->own_label);
        answer_get_str(in, &m->own_unit);
        answer_get_str(in, &label);
        answer_get_str(in, &unit);
        m->scale = answer_get_f64(in);
        m->better = (int)(int64_t)answer_get_u64(in);
        answer_get_f64s(in, reps, &m->values);
        m->s.n = (size_t)answer_get_u64(in);
        m->s.mean = answer_get_f64(in);
        m->s.sd = answer_get_f64(in);
        m->s.ci95 = answer_get_f64(in);
        if (!in->bad && (!m->key || !label || m->s.n > reps ||
                         (m->better != RESULTS_HIGHER && m->better != RESULTS_LOWER &&
                          m->better != RESULTS_NEUTRAL)))
            in->bad = true;
        size_t ll = label ? strlen(label) + 1 : 0, ul = unit ? strlen(unit) + 1 : 0;
        if (!in->bad && (m->kept = malloc(ll + ul + 1)) == NULL)
            in->bad = in->oom = true;
        if (!in->bad) {
            memcpy(m->kept, label, ll);
            if (unit)
                memcpy(m->kept + ll, unit, ul);
            m->label = keep_text(m, label, m->own_label, 0);
            m->unit = keep_text(m, unit, m->own_unit, ll);
        }
        free(label);
        free(unit);
    }
}

static void get_list(struct answer_in *in, struct results_service **l, size_t *ln, size_t reps)
{
    size_t n = answer_get_count(in, 4 * 8, UINT32_MAX);
    *l = n ? calloc(n, sizeof(**l)) : NULL;
    if (n && !*l) {
        in->bad = in->oom = true;
        return;
    }
    for (size_t i = 0; i < n && !in->bad; i++) {
        *ln = i + 1;
        answer_get_str(in, &(*l)[i].name);
        answer_get_str(in, &(*l)[i].board);
        answer_get_str(in, &(*l)[i].sharing);
        get_table(in, &(*l)[i].t, reps);
        if (!in->bad && !(*l)[i].name)
            in->bad = true;
    }
}

/* Whether t starts with the metrics of defs[0..n) in order, as the reader builds its tables
 * (table_add of the known metrics first): report and check look those up and use them. */
static bool starts_with(const struct results_table *t, const struct metric_def *defs, size_t n)
{
    if (t->n < n)
        return false;
    for (size_t k = 0; k < n; k++)
        if (strcmp(t->m[k].key, defs[k].key))
            return false;
    return true;
}

static bool list_starts_with(const struct results_service *l, size_t ln,
                             const struct metric_def *defs, size_t n)
{
    for (size_t i = 0; i < ln; i++)
        if (!starts_with(&l[i].t, defs, n))
            return false;
    return true;
}

/* What the child sent, buf[0..n), into r for a command that reads `by` (results.h). */
int results_from_answer(struct results *r, const char *path, unsigned by, const void *buf, size_t n,
                        char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    struct answer_in in = {buf, n, false, false};
    struct results_src *s = calloc(1, sizeof(*s));
    if (s)
        s->file = H5I_INVALID_HID; /* before any release: no libhdf5 call on id 0 */
    r->src = s;
    r->path = dupstr(path);
    if (!s || !r->path) {
        results_release(r);
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    s->shipped = true;
    s->by = by;
    answer_get_mark(&in, SHIP_MAGIC);
    char **strs[] = {&r->scenario_name, &r->policy,  &r->gpu,
                     &r->sharing,       &r->version, &r->git_commit};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        answer_get_str(&in, strs[i]);
    uint64_t reps = answer_get_u64(&in), replicated = answer_get_u64(&in),
             complete = answer_get_u64(&in);
    if (reps < 1 || reps > SHIP_MAX_REPS || replicated > 1 || complete > 1 ||
        (!replicated && reps != 1))
        in.bad = true;
    r->reps = in.bad ? 0 : (size_t)reps;
    r->replicated = replicated == 1;
    r->complete = complete == 1;
    double nums[7];
    answer_get(&in, nums, sizeof(nums));
    r->seed = nums[0], r->sim_time_reached_s = nums[1], r->duration_s = nums[2];
    r->gpus = nums[3], r->wall_seconds = nums[4], r->events = nums[5], r->warmup_s = nums[6];
    answer_get_f64s(&in, r->reps, &r->seeds);
    answer_get_f64s(&in, r->reps, &r->rep_gpus);
    get_table(&in, &r->headline, r->reps);
    get_table(&in, &r->gpu_states, r->reps);
    get_table(&in, &r->training, r->reps);
    get_list(&in, &r->svcs, &r->nsvcs, r->reps);
    get_list(&in, &r->pools, &r->npools, r->reps);
    get_list(&in, &r->queues, &r->nqueues, r->reps);
    if (!in.bad && (!starts_with(&r->headline, headline_defs, LEN(headline_defs)) ||
                    !starts_with(&r->training, training_defs, LEN(training_defs)) ||
                    !list_starts_with(r->svcs, r->nsvcs, svc_defs, LEN(svc_defs)) ||
                    !list_starts_with(r->pools, r->npools, pool_defs, LEN(pool_defs)) ||
                    !list_starts_with(r->queues, r->nqueues, queue_defs, LEN(queue_defs))))
        in.bad = true;
    uint64_t meta_read = answer_get_u64(&in);
    s->meta_read = meta_read == 1;
    if (meta_read > 1)
        in.bad = true;
    for (size_t k = 0; k < NMETA; k++)
        answer_get_str(&in, &s->meta[k]);
    size_t ncols = answer_get_count(&in, 3 * 8, UINT32_MAX);
    for (size_t i = 0; i < ncols && !in.bad; i++) {
        char *p = NULL;
        answer_get_str(&in, &p);
        int64_t rc = (int64_t)answer_get_u64(&in);
        uint64_t len = answer_get_u64(&in);
        bool fresh = false;
        struct ent *e = NULL;
        if (!in.bad && p && !(e = tab_get(&s->cols, p, &fresh)))
            in.oom = true;
        free(p);
        if (!e || !fresh || rc > 0 || rc < -4095 || (len != UINT64_MAX && len > SHIP_MAX_VALUE)) {
            in.bad = true;
            break;
        }
        e->rc = (int)rc;
        if (len != UINT64_MAX) {
            e->len = len;
            answer_get_f64s(&in, (size_t)len, &e->v);
        } else if (e->rc == 0) {
            e->rc = -ENOENT; /* shape-checked, not read: not the command's to read */
        }
    }
    answer_get_mark(&in, SHIP_MAGIC);
    /* What the child's shape checks made true and the commands rely on: the columns of one
     * table have one length (per-day tables and charts index them together). */
    for (size_t i = 0; !in.bad && i < s->cols.cap; i++) {
        const struct ent *e = &s->cols.e[i];
        if (!e->path || !e->v)
            continue;
        char group[PATH_MAX_R];
        const char *slash = strrchr(e->path, '/');
        snprintf(group, sizeof(group), "%.*s", (int)(slash ? slash - e->path : 0), e->path);
        bool fresh;
        struct ent *g = tab_get(&s->grps, group, &fresh);
        if (!g)
            in.bad = in.oom = true;
        else if (fresh)
            g->len = e->len;
        else if (g->len != e->len)
            in.bad = true;
    }
    tab_release(&s->grps);
    if (in.bad || in.left) {
        bool oom = in.oom;
        results_release(r);
        snprintf(err, errlen, "%s: %s", path, oom ? "out of memory" : ANSWER_DAMAGED);
        return oom ? -ENOMEM : -EIO;
    }
    return 0;
}

/* Decode the child's answer in fd (results_from_answer). */
static int ship_receive(struct results *r, const char *path, unsigned by, int fd, char *err,
                        size_t errlen)
{
    struct answer_map m;
    int rc = answer_map(fd, &m);
    if (rc) {
        memset(r, 0, sizeof(*r));
        snprintf(err, errlen,
                 rc == -ENOMEM ? "%s: out of memory"
                               : "%s: the process that read it sent no answer",
                 path);
        return rc;
    }
    rc = results_from_answer(r, path, by, m.p, m.n, err, errlen);
    answer_unmap(&m);
    return rc;
}

/* What open_probe reads: a path and the columns its command reads later; where it sends
 * what it read (answer_fd; -1: nowhere, only the verdict counts). */
struct probe_arg {
    const char *path;
    unsigned by;
    int ship;
};

/*
 * The read in the child of h5_rd_preflight (libhdf5 may crash on a damaged
 * file): results_open's, then everything a command reads later
 * (results_read_all), which open_probe sends to the command's process.
 */
static int probe_read(const struct probe_arg *a, struct results *r, char *why, size_t n)
{
    int rc = open_direct(r, a->path, a->by, why, n);
    if (!rc) {
        rc = results_read_all(r, a->by);
        if (rc)
            snprintf(why, n, "%s: %s", r->path,
                     results_why(r)[0] ? results_why(r) : "cannot read the results file");
        /* Not released: the child ends with the verdict (h5_rd_preflight), nothing is kept. */
    }
    return rc;
}

static int open_probe(void *arg, char *why, size_t n)
{
    const struct probe_arg *a = arg;
    struct results r;
    int rc = probe_read(a, &r, why, n);
    if (!rc && a->ship >= 0 && (rc = results_answer(&r, a->ship)) != 0)
        snprintf(why, n, "%s: cannot pass on what was read (%s)", a->path, strerror(-rc));
    return rc;
}

/* open_probe's read, then /meta complete: 0 when it is 1, RESULTS_NOT_COMPLETE when not. */
#define RESULTS_NOT_COMPLETE 1
static int complete_probe(void *arg, char *why, size_t n)
{
    struct results r;
    int rc = probe_read(arg, &r, why, n);
    return rc ? rc : r.complete ? 0 : RESULTS_NOT_COMPLETE;
}

bool results_complete(const char *path, unsigned by)
{
    char why[512];
    struct probe_arg a = {path, by, -1};
    return h5_rd_preflight(complete_probe, &a, H5READ_PREFLIGHT_MS, why, sizeof(why)) == 0;
}

/* The same file as when st was taken: device, inode, size, change times. */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

bool results_vet_current(const struct results_vet *v, const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && same_file(&st, &v->st);
}

/* The child's answers for the other kind of file (is_other): read, or refused (why). */
#define VET_OTHER         1000
#define VET_OTHER_REFUSED 1001

struct vet_arg {
    const char *path;
    unsigned by;
    int (*is_other)(const char *path, int ship, char *why, size_t n);
    int ship;
};

static int vet_probe(void *arg, char *why, size_t n)
{
    const struct vet_arg *a = arg;
    int o = a->is_other(a->path, a->ship, why, n);
    if (o > 0)
        return VET_OTHER;
    if (o < 0)
        return VET_OTHER_REFUSED;
    struct probe_arg p = {a->path, a->by, a->ship};
    return open_probe(&p, why, n);
}

bool results_vet(const char *path, unsigned by,
                 int (*is_other)(const char *path, int ship, char *why, size_t n),
                 struct results_vet *v)
{
    memset(v, 0, sizeof(*v));
    v->ship = -1;
    bool st = stat(path, &v->st) == 0;
    v->known = st;
    v->by = by;
    int fd = answer_fd();
    if (fd < 0) {
        v->rc = fd;
        snprintf(v->why, sizeof(v->why), "cannot start the reading process (%s)", strerror(-fd));
        return false;
    }
    struct vet_arg a = {path, by, is_other, fd};
    v->rc = h5_rd_preflight(vet_probe, &a, H5READ_PREFLIGHT_MS, v->why, sizeof(v->why));
    v->ship = fd; /* what the child read: a results file's answer, or the other kind's */
    if (v->rc == VET_OTHER || v->rc == VET_OTHER_REFUSED) {
        v->known = false; /* no results file: nothing for results_open_vetted */
        v->other = st;    /* the other kind's verdict, for its reader (when the file is known) */
        v->rc = v->rc == VET_OTHER ? 0 : -EIO;
        if (!v->rc)
            v->why[0] = 0;
        return true;
    }
    return false;
}

void results_vet_release(struct results_vet *v)
{
    if (v->ship > 0)
        close(v->ship);
    v->ship = -1;
}

int results_open(struct results *r, const char *path, char *err, size_t errlen)
{
    return results_open_vetted(r, path, RESULTS_BY_ALL, NULL, err, errlen);
}

int results_open_for(struct results *r, const char *path, unsigned by, char *err, size_t errlen)
{
    return results_open_vetted(r, path, by, NULL, err, errlen);
}

int results_open_vetted(struct results *r, const char *path, unsigned by,
                        const struct results_vet *v, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    char why[512] = "";
    struct stat st;
    int rc, fd;
    /* The verdict and answer of the child that read this file (as it still is) for these
     * reads, or a child of our own. */
    bool vetted = v && v->known && v->ship > 0 && (by & ~v->by) == 0 && stat(path, &st) == 0 &&
                  same_file(&st, &v->st);
    if (vetted) {
        rc = v->rc;
        fd = v->ship;
        snprintf(why, sizeof(why), "%s", v->why);
    } else if ((fd = answer_fd()) < 0) {
        rc = fd;
        snprintf(why, sizeof(why), "cannot start the reading process (%s)", strerror(-fd));
    } else {
        struct probe_arg a = {path, by, fd};
        rc = h5_rd_preflight(open_probe, &a, H5READ_PREFLIGHT_MS, why, sizeof(why));
    }
    /* The reader's own refusal names the file; the child's death, a hang or no child do not. */
    if (rc && strncmp(why, path, strlen(path)) == 0)
        snprintf(err, errlen, "%s", why);
    else if (rc)
        snprintf(err, errlen, "%s: %s", path, why);
    if (!rc)
        rc = ship_receive(r, path, by, fd, err, errlen);
    if (!vetted && fd >= 0)
        close(fd);
    return rc == -ETIMEDOUT ? -EIO : rc;
}

int results_open_image(struct results *r, const char *name, const void *buf, size_t n, char *err,
                       size_t errlen)
{
    memset(r, 0, sizeof(*r));
    int rc;
    struct results_src *s = src_open(name, buf, n, err, errlen, &rc);
    if (s)
        s->by = RESULTS_BY_ALL;
    return s ? read_file(r, s, name, err, errlen) : rc;
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
    free(r->rep_gpus);
    src_release(r->src);
    table_release(&r->headline);
    table_release(&r->gpu_states);
    table_release(&r->training);
    for (size_t i = 0; i < r->nsvcs; i++) {
        free(r->svcs[i].name);
        free(r->svcs[i].board);
        free(r->svcs[i].sharing);
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
        free(r->queues[i].board);
        free(r->queues[i].sharing);
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
