/* results.c — read a results file (single or replicated) into tables of metrics. */
#include "analysis/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5io.h"

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
    {"slo_share", "requests within SLO", "%", 100, RESULTS_HIGHER},
    {"slo_share_worst_service", "within SLO, worst service", "%", 100, RESULTS_HIGHER},
    {"p99_ms_worst_service", "p99 latency, worst service", "ms", 1, RESULTS_LOWER},
    {"requests_arrived", "requests arrived", "", 1, RESULTS_NEUTRAL},
    {"requests_dropped", "requests dropped", "", 1, RESULTS_LOWER},
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
    {"power_mean_w", "mean power", "W", 1, RESULTS_LOWER},
};

/* /summary attributes that describe the run rather than measure it (shown in the header). */
static const char *const context_keys[] = {"duration_s", "gpus", "gpu_hours"};

static const struct metric_def svc_defs[] = {
    {"arrived", "requests", "", 1, RESULTS_NEUTRAL},
    {"dropped", "dropped", "", 1, RESULTS_LOWER},
    {"mean_ms", "mean", "ms", 1, RESULTS_LOWER},
    {"p50_ms", "p50", "ms", 1, RESULTS_LOWER},
    {"p95_ms", "p95", "ms", 1, RESULTS_LOWER},
    {"p99_ms", "p99", "ms", 1, RESULTS_LOWER},
    {"slo_ms", "SLO target", "ms", 1, RESULTS_NEUTRAL},
    {"slo_quantile", "SLO quantile", "%", 100, RESULTS_NEUTRAL},
    {"slo_quantile_ms", "SLO-quantile latency", "ms", 1, RESULTS_LOWER},
    {"slo_share", "within SLO", "%", 100, RESULTS_HIGHER},
    {"slo_met", "SLO met", "%", 100, RESULTS_HIGHER},
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

static const char *guess_unit(const char *key, double *scale)
{
    size_t n = strlen(key);
    *scale = 1;
    if (n > 3 && !strcmp(key + n - 3, "_ms"))
        return "ms";
    if (n > 2 && !strcmp(key + n - 2, "_s"))
        return "s";
    if (n > 2 && !strcmp(key + n - 2, "_w"))
        return "W";
    if (n > 4 && !strcmp(key + n - 4, "_kwh"))
        return "kWh";
    if (n > 6 && !strcmp(key + n - 6, "_hours"))
        return "h";
    if (!strncmp(key, "util_", 5) || strstr(key, "share") || strstr(key, "overhead")) {
        *scale = 100;
        return "%";
    }
    return "";
}

struct attr_walk {
    struct results_table *t;
    size_t rep, reps;
    int rc;
};

static herr_t summary_attr(hid_t obj, const char *name, const H5A_info_t *info, void *data)
{
    struct attr_walk *w = data;
    (void)info;
    if (in_list(name, context_keys, sizeof(context_keys) / sizeof(context_keys[0])))
        return 0;
    double v;
    if (h5_read_attr_double(obj, name, &v))
        return 0; /* a string or other non-numeric attribute */
    struct metric_def d = {name, NULL, NULL, 1, RESULTS_NEUTRAL};
    d.unit = guess_unit(name, &d.scale);
    struct results_metric *m = table_add(w->t, &d, w->reps);
    if (!m) {
        w->rc = -ENOMEM;
        return -1;
    }
    m->values[w->rep] = v;
    return 0;
}

static double attr_or_nan(hid_t g, const char *name)
{
    double v = NAN;
    h5_read_attr_double(g, name, &v);
    return v;
}

static int read_summary(struct results *r, hid_t root, size_t rep)
{
    if (H5Lexists(root, "summary", H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = H5Gopen2(root, "summary", H5P_DEFAULT);
    if (g < 0)
        return 0;
    struct attr_walk w = {&r->headline, rep, r->reps, 0};
    hsize_t idx = 0;
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, summary_attr, &w);
    if (rep == 0) {
        r->duration_s = attr_or_nan(g, "duration_s");
        r->gpus = attr_or_nan(g, "gpus");
    }
    H5Gclose(g);
    return w.rc;
}

struct svc_walk {
    struct results *r;
    size_t rep;
    int rc;
};

static struct results_service *service_get(struct results *r, const char *name)
{
    for (size_t i = 0; i < r->nsvcs; i++)
        if (!strcmp(r->svcs[i].name, name))
            return &r->svcs[i];
    struct results_service *ns = realloc(r->svcs, (r->nsvcs + 1) * sizeof(*ns));
    if (!ns)
        return NULL;
    r->svcs = ns;
    struct results_service *s = &r->svcs[r->nsvcs];
    memset(s, 0, sizeof(*s));
    s->name = dupstr(name);
    if (!s->name)
        return NULL;
    r->nsvcs++;
    for (size_t k = 0; k < sizeof(svc_defs) / sizeof(svc_defs[0]); k++)
        if (!table_add(&s->t, &svc_defs[k], r->reps))
            return NULL;
    return s;
}

static herr_t service_link(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct svc_walk *w = data;
    (void)info;
    hid_t g = H5Gopen2(grp, name, H5P_DEFAULT);
    if (g < 0)
        return 0;
    struct results_service *s = service_get(w->r, name);
    if (!s) {
        H5Gclose(g);
        w->rc = -ENOMEM;
        return -1;
    }
    for (size_t k = 0; k < s->t.n; k++)
        s->t.m[k].values[w->rep] = attr_or_nan(g, s->t.m[k].key);
    H5Gclose(g);
    return 0;
}

static int read_services(struct results *r, hid_t root, size_t rep)
{
    if (H5Lexists(root, "services", H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = H5Gopen2(root, "services", H5P_DEFAULT);
    if (g < 0)
        return 0;
    struct svc_walk w = {r, rep, 0};
    hsize_t idx = 0;
    /* Creation order keeps the scenario's service order; fall back to names. */
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, service_link, &w) < 0 && !w.rc) {
        idx = 0;
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, service_link, &w);
    }
    H5Gclose(g);
    return w.rc;
}

struct col_walk {
    struct results_table *t;
    size_t rep, reps;
    double denom; /* divisor of the summed column */
    const char *const *skip;
    size_t nskip;
    int rc;
};

/* Sum of each 1-D dataset "<x>_s" of a group, divided by denom (GPU states, job seconds). */
static herr_t sum_column(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct col_walk *w = data;
    (void)info;
    size_t n = strlen(name);
    if (n < 3 || strcmp(name + n - 2, "_s") || in_list(name, w->skip, w->nskip))
        return 0;
    double *v = NULL;
    size_t len = 0;
    if (h5_read_f64(grp, name, &v, &len))
        return 0;
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
    if (H5Lexists(root, group, H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = H5Gopen2(root, group, H5P_DEFAULT);
    if (g < 0)
        return 0;
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, sum_column, w) < 0 && !w->rc) {
        idx = 0;
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, sum_column, w);
    }
    H5Gclose(g);
    return w->rc;
}

static int read_gpus_and_jobs(struct results *r, hid_t root, size_t rep)
{
    double gpus = NAN, dur = NAN;
    if (H5Lexists(root, "summary", H5P_DEFAULT) > 0) {
        hid_t g = H5Gopen2(root, "summary", H5P_DEFAULT);
        gpus = attr_or_nan(g, "gpus");
        dur = attr_or_nan(g, "duration_s");
        H5Gclose(g);
    }
    static const char *const gpu_skip[] = {"node"};
    if (gpus > 0 && dur > 0) {
        struct col_walk w = {&r->gpu_states, rep, r->reps, gpus * dur, gpu_skip, 1, 0};
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
    if (H5Lexists(root, "jobs", H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = H5Gopen2(root, "jobs", H5P_DEFAULT);
    double *v = NULL;
    size_t n = 0;
    if (h5_read_f64(g, "state", &v, &n) == 0) {
        double cnt[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < n; i++)
            if (v[i] >= 0 && v[i] < 4)
                cnt[(size_t)v[i]] += 1;
        for (size_t k = 0; k < 4; k++)
            ((struct results_metric *)results_table_find(&r->training, job_states[k]))
                ->values[rep] = cnt[k];
        free(v);
    }
    if (h5_read_f64(g, "preemptions", &v, &n) == 0) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += isfinite(v[i]) ? v[i] : 0;
        ((struct results_metric *)results_table_find(&r->training, "preemptions"))->values[rep] = s;
        free(v);
    }
    H5Gclose(g);
    struct col_walk w = {&r->training,
                         rep,
                         r->reps,
                         1,
                         job_time_cols,
                         sizeof(job_time_cols) / sizeof(job_time_cols[0]),
                         0};
    return walk_columns(root, "jobs", &w);
}

static char *meta_str(hid_t meta, const char *name)
{
    char *s = NULL;
    h5_read_attr_str(meta, name, &s);
    return s;
}

void results_rep_root(const struct results *r, size_t i, char *buf, size_t n)
{
    if (r->replicated)
        snprintf(buf, n, "/rep%04zu", i);
    else
        snprintf(buf, n, "/");
}

static size_t count_reps(hid_t f)
{
    size_t n = 0;
    char name[32];
    for (;;) {
        snprintf(name, sizeof(name), "rep%04zu", n);
        if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
            return n;
        n++;
    }
}

static int read_all(struct results *r, hid_t f)
{
    /* Known headline metrics first, in display order, even when absent ("-"). */
    for (size_t k = 0; k < sizeof(headline_defs) / sizeof(headline_defs[0]); k++)
        if (!table_add(&r->headline, &headline_defs[k], r->reps))
            return -ENOMEM;
    for (size_t i = 0; i < r->reps; i++) {
        char root[32];
        results_rep_root(r, i, root, sizeof(root));
        hid_t g = H5Gopen2(f, root, H5P_DEFAULT);
        if (g < 0)
            return -EINVAL;
        int rc = read_summary(r, g, i);
        if (!rc)
            rc = read_services(r, g, i);
        if (!rc)
            rc = read_gpus_and_jobs(r, g, i);
        H5Gclose(g);
        if (rc)
            return rc;
    }
    table_finish(&r->headline, r->reps);
    table_finish(&r->gpu_states, r->reps);
    table_finish(&r->training, r->reps);
    for (size_t i = 0; i < r->nsvcs; i++)
        table_finish(&r->svcs[i].t, r->reps);
    return 0;
}

int results_open(struct results *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    h5io_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        snprintf(err, errlen, "%s: cannot open as an HDF5 results file", path);
        return -ENOENT;
    }
    size_t reps = count_reps(f);
    if (H5Lexists(f, "meta", H5P_DEFAULT) <= 0 ||
        (reps == 0 && H5Lexists(f, "summary", H5P_DEFAULT) <= 0)) {
        snprintf(err, errlen, "%s: not a tidesim results file (no /meta or /summary)", path);
        H5Fclose(f);
        return -EINVAL;
    }
    r->replicated = reps > 0;
    r->reps = reps ? reps : 1;
    r->path = dupstr(path);
    hid_t meta = H5Gopen2(f, "meta", H5P_DEFAULT);
    r->scenario_name = meta_str(meta, "scenario_name");
    r->policy = meta_str(meta, "policy");
    r->gpu = meta_str(meta, "gpu");
    r->sharing = meta_str(meta, "sharing");
    r->version = meta_str(meta, "tidesim_version");
    r->git_commit = meta_str(meta, "git_commit");
    r->seed = attr_or_nan(meta, "seed");
    double c = attr_or_nan(meta, "complete");
    r->complete = !(c < 1); /* absent (very old files) counts as complete */
    r->sim_time_reached_s = attr_or_nan(meta, "sim_time_reached_s");
    r->wall_seconds = attr_or_nan(meta, "wall_seconds");
    r->events = attr_or_nan(meta, "events_processed");
    H5Gclose(meta);
    int rc = r->path ? read_all(r, f) : -ENOMEM;
    if (isnan(r->duration_s)) {
        hid_t m = H5Gopen2(f, "meta", H5P_DEFAULT);
        r->duration_s = attr_or_nan(m, "duration_s");
        H5Gclose(m);
    }
    H5Fclose(f);
    if (rc) {
        snprintf(err, errlen, "%s: cannot read the results file (%s)", path,
                 rc == -ENOMEM ? "out of memory" : "damaged layout");
        results_release(r);
        return rc;
    }
    return 0;
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
    table_release(&r->headline);
    table_release(&r->gpu_states);
    table_release(&r->training);
    for (size_t i = 0; i < r->nsvcs; i++) {
        free(r->svcs[i].name);
        table_release(&r->svcs[i].t);
    }
    free(r->svcs);
    memset(r, 0, sizeof(*r));
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
