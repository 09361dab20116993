/* scenario.c — read and validate a scenario YAML file into struct scenario. */
#include "sim/scenario.h"

#include "models/gpu.h"
#include "models/latency.h"
#include "sim/llm_cfg.h"
#include "sim/override.h"
#include "sim/policy/policy.h"
#include "sim/sharing_from.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const sharing_names[] = {"exclusive", "timeslice", "mps", "mig", NULL};
static const char *const dist_names[] = {"deterministic", "exponential", "lognormal", NULL};
static const char *const shape_names[] = {"constant", "cosine", "hourly", "servegen", NULL};
#define SHAPE_SERVEGEN 3
/* Whether some pool's board has a MIG profile of this name. */
static bool pools_know(const struct scenario *sc, const char *profile)
{
    for (uint32_t i = 0; sc->pools_given && i < sc->npools; i++)
        if (mig_profile_find(sc->pools[i].spec, profile))
            return true;
    return false;
}

/*
 * A MIG `speeds` mapping (profile -> speed, NULL: none) into k, for board. A
 * profile board does not have is an error when strict, unless sc (may be NULL)
 * has a pool whose board has it; otherwise it is skipped.
 */
static int load_mig_speeds(const struct conf_doc *d, const struct conf_node *sp,
                           struct mig_knobs *k, const struct gpu_spec *board,
                           const struct scenario *sc, bool strict, struct conf_err *err)
{
    if (sp && sp->kind != CONF_MAP)
        return conf_errf(err, d, sp, "speeds", "expected a mapping of profile to speed");
    for (size_t i = 0; sp && i < sp->n; i++) {
        double v = 0;
        int rc = conf_double(d, sp, sp->keys[i], true, 1e-3, 1, &v, err);
        if (rc)
            return rc;
        if (mig_knobs_set_speed(k, sp->keys[i], v) && strict &&
            !(sc && pools_know(sc, sp->keys[i]))) {
            struct conf_node at = {.line = sp->key_line[i], .col = sp->key_col[i]};
            return conf_errf(err, d, &at, sp->keys[i], "unknown MIG profile for %s", board->name);
        }
    }
    return 0;
}

static int get_u32(const struct conf_doc *d, const struct conf_node *m, const char *key, bool req,
                   int64_t min, int64_t max, uint32_t *out, struct conf_err *err);

/* Training jobs a synthetic run may submit (expected backlog + per_hour x duration): the trainer
 * holds every job, ~520 bytes each (measured: backlog 100,000 took 52 MB more), so 0.5 GB. */
#define TRAINING_MAX_JOBS 1000000u

static const char *const arrfmt_names[] = {"azure", "servegen", "csv", "counts", NULL};
static const char *const jobfmt_names[] = {"openb", "pai", "helios", "csv", NULL};
static const char *const badrow_names[] = {"fail", "skip", NULL};

/*
 * Resolve a trace path against the scenario file's folder (absolute paths are
 * kept) and check that it can be read. Returns a malloc'd path, or NULL with
 * err filled.
 */
static char *resolve_path(const struct conf_doc *d, const struct conf_node *m, const char *key,
                          struct conf_err *err)
{
    const char *p = NULL;
    if (conf_string(d, m, key, true, &p, err))
        return NULL;
    const char *slash = strrchr(d->path, '/');
    size_t dir = p[0] == '/' || !slash ? 0 : (size_t)(slash - d->path) + 1;
    size_t n = dir + strlen(p) + 1;
    char *full = malloc(n);
    if (!full) {
        conf_errf(err, d, conf_get(m, key), key, "out of memory");
        return NULL;
    }
    memcpy(full, d->path, dir);
    memcpy(full + dir, p, strlen(p) + 1);
    if (access(full, R_OK) != 0) {
        conf_errf(err, d, conf_get(m, key), key, "cannot read '%s': %s", full, strerror(errno));
        free(full);
        return NULL;
    }
    return full;
}

static int get_unit(const struct conf_doc *d, const struct conf_node *m, const char *key,
                    enum tfield_unit *out, struct conf_err *err)
{
    const char *u = NULL;
    int rc = conf_string(d, m, key, false, &u, err);
    if (rc || !u)
        return rc;
    if (tfield_unit_parse(u, out))
        return conf_errf(err, d, conf_get(m, key), key,
                         "expected a time unit (s, ms, us or wall), got '%.40s'", u);
    return 0;
}

static int get_bad_row(const struct conf_doc *d, const struct conf_node *m, bool *skip,
                       struct conf_err *err)
{
    int which = 0, rc = conf_enum(d, m, "on_bad_row", false, badrow_names, &which, err);
    *skip = which == 1;
    return rc;
}

/*
 * Keys of a mapping whose meaning depends on a choice made in it (a profile's
 * shape, a trace's format): a key that only another choice reads is an error
 * at the key, naming the choice it belongs to, instead of being ignored.
 */
struct variant {
    const char *name;
    const char *const *keys; /* NULL-terminated */
};

static bool in_list(const char *const *list, const char *key)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!strcmp(list[i], key))
            return true;
    return false;
}

static int check_variant_keys(const struct conf_doc *d, const struct conf_node *map,
                              const char *what, const struct variant *v, size_t nv, size_t chosen,
                              struct conf_err *err)
{
    for (size_t i = 0; map && map->kind == CONF_MAP && i < map->n; i++) {
        const char *key = map->keys[i];
        if (in_list(v[chosen].keys, key))
            continue;
        char owners[160] = "", takes[240] = "";
        size_t len = 0, nown = 0;
        for (size_t j = 0; j < nv; j++) {
            if (j == chosen || !in_list(v[j].keys, key))
                continue;
            int w =
                snprintf(owners + len, sizeof(owners) - len, "%s%s", nown ? " or " : "", v[j].name);
            len += w > 0 && (size_t)w < sizeof(owners) - len ? (size_t)w : 0;
            nown++;
        }
        if (!nown)
            continue; /* no variant's key: conf_check_keys() reports it */
        len = 0;
        for (size_t j = 0; v[chosen].keys && v[chosen].keys[j]; j++) {
            int w = snprintf(takes + len, sizeof(takes) - len, "%s%s", j ? ", " : "",
                             v[chosen].keys[j]);
            len += w > 0 && (size_t)w < sizeof(takes) - len ? (size_t)w : 0;
        }
        struct conf_node at = {.line = map->key_line[i], .col = map->key_col[i]};
        return conf_errf(err, d, &at, key, "not a key of %s %s (it belongs to %s %s; %s takes %s)",
                         what, v[chosen].name, what, owners, v[chosen].name,
                         takes[0] ? takes : "none of its own");
    }
    return 0;
}

static int load_arrival_trace(const struct conf_doc *d, const struct conf_node *t,
                              struct arrival_trace_cfg *c, struct conf_err *err)
{
    static const char *const keys[] = {
        "path",       "format",       "time_column", "time_unit",  "in_column",
        "out_column", "count_column", "interval",    "origin",     "offset",
        "scale",      "loop",         "loop_period", "on_bad_row", NULL};
    int rc, fmt = ARRFMT_AZURE;
    if ((rc = conf_check_keys(d, t, "trace", keys, err)) ||
        (rc = conf_enum(d, t, "format", true, arrfmt_names, &fmt, err)))
        return rc;
    c->format = (enum arrival_format)fmt;
    static const char *const csv_keys[] = {"time_column", "time_unit", "in_column", "out_column",
                                           NULL};
    static const char *const counts_keys[] = {"time_column", "time_unit", "count_column",
                                              "interval", NULL};
    static const struct variant formats[] = {
        {"azure", NULL}, {"servegen", NULL}, {"csv", csv_keys}, {"counts", counts_keys}};
    if ((rc = check_variant_keys(d, t, "format", formats, 4, (size_t)fmt, err)))
        return rc;
    c->scale = 1.0;
    c->loop = false;
    if ((rc = conf_string(d, t, "origin", false, &c->origin, err)) ||
        (rc = conf_duration(d, t, "offset", false, 0, &c->offset, err)) ||
        (rc = conf_double(d, t, "scale", false, 1e-9, 1e6, &c->scale, err)) ||
        (rc = conf_bool(d, t, "loop", false, &c->loop, err)) ||
        (rc = conf_duration(d, t, "loop_period", false, 0, &c->loop_period, err)) ||
        (rc = get_bad_row(d, t, &c->skip_bad, err)))
        return rc;
    if (c->format == ARRFMT_CSV) {
        c->csv.unit = TFIELD_SEC;
        if ((rc = conf_string(d, t, "time_column", true, &c->csv.time_col, err)) ||
            (rc = get_unit(d, t, "time_unit", &c->csv.unit, err)) ||
            (rc = conf_string(d, t, "in_column", false, &c->csv.in_col, err)) ||
            (rc = conf_string(d, t, "out_column", false, &c->csv.out_col, err)))
            return rc;
    } else if (c->format == ARRFMT_COUNTS) {
        c->counts.unit = TFIELD_SEC;
        c->counts.interval = 60 * SIM_SEC;
        if ((rc = conf_string(d, t, "time_column", true, &c->counts.time_col, err)) ||
            (rc = get_unit(d, t, "time_unit", &c->counts.unit, err)) ||
            (rc = conf_string(d, t, "count_column", true, &c->counts.count_col, err)) ||
            (rc = conf_duration(d, t, "interval", false, SIM_SEC, &c->counts.interval, err)))
            return rc;
    }
    c->path = resolve_path(d, t, "path", err);
    return c->path ? 0 : -EINVAL;
}

static int load_job_trace(const struct conf_doc *d, const struct conf_node *t,
                          struct job_trace_cfg *c, struct conf_err *err)
{
    static const char *const keys[] = {"path",
                                       "format",
                                       "origin",
                                       "offset",
                                       "reorder_window",
                                       "on_bad_row",
                                       "include_services",
                                       "id_column",
                                       "submit_column",
                                       "submit_unit",
                                       "duration_column",
                                       "duration_unit",
                                       "gpus_column",
                                       "fraction_column",
                                       "mig_column",
                                       "priority_column",
                                       "queue_column",
                                       "params_column",
                                       "outcome_column",
                                       "gpu_types",
                                       NULL};
    int rc, fmt = JOBFMT_OPENB;
    if ((rc = conf_check_keys(d, t, "trace", keys, err)) ||
        (rc = conf_enum(d, t, "format", true, jobfmt_names, &fmt, err)))
        return rc;
    c->format = (enum job_format)fmt;
    static const char *const csv_keys[] = {
        "id_column",     "submit_column",   "submit_unit", "duration_column", "duration_unit",
        "gpus_column",   "fraction_column", "mig_column",  "priority_column", "queue_column",
        "params_column", "outcome_column",  NULL};
    static const struct variant formats[] = {
        {"openb", NULL}, {"pai", NULL}, {"helios", NULL}, {"csv", csv_keys}};
    if ((rc = check_variant_keys(d, t, "format", formats, 4, (size_t)fmt, err)) ||
        (rc = gpu_type_map_load(d, conf_get(t, "gpu_types"), &c->gpu_types, err)))
        return rc;
    if ((rc = conf_string(d, t, "origin", false, &c->origin, err)) ||
        (rc = conf_duration(d, t, "offset", false, 0, &c->offset, err)) ||
        (rc = get_u32(d, t, "reorder_window", false, 0, 1000000, &c->reorder_window, err)) ||
        (rc = get_bad_row(d, t, &c->skip_bad, err)) ||
        (rc = conf_bool(d, t, "include_services", false, &c->include_services, err)))
        return rc;
    if (c->format == JOBFMT_CSV) {
        job_csv_map_generic(&c->csv);
        struct job_csv_map *m = &c->csv;
        if ((rc = conf_string(d, t, "id_column", false, &m->id_col, err)) ||
            (rc = conf_string(d, t, "submit_column", false, &m->submit_col, err)) ||
            (rc = get_unit(d, t, "submit_unit", &m->submit_unit, err)) ||
            (rc = conf_string(d, t, "duration_column", false, &m->duration_col, err)) ||
            (rc = get_unit(d, t, "duration_unit", &m->duration_unit, err)) ||
            (rc = conf_string(d, t, "gpus_column", false, &m->gpus_col, err)) ||
            (rc = conf_string(d, t, "fraction_column", false, &m->fraction_col, err)) ||
            (rc = conf_string(d, t, "mig_column", false, &m->mig_col, err)) ||
            (rc = conf_string(d, t, "priority_column", false, &m->priority_col, err)) ||
            (rc = conf_string(d, t, "queue_column", false, &m->queue_col, err)) ||
            (rc = conf_string(d, t, "params_column", false, &m->params_col, err)) ||
            (rc = conf_string(d, t, "outcome_column", false, &m->outcome_col, err)))
            return rc;
    }
    c->path = resolve_path(d, t, "path", err);
    return c->path ? 0 : -EINVAL;
}

/* "+08:00", "-05:30", "UTC", "Z" → minutes east of UTC. */
static int parse_tz(const char *s, int *out)
{
    if (!strcmp(s, "UTC") || !strcmp(s, "Z") || !strcmp(s, "utc")) {
        *out = 0;
        return 0;
    }
    if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':')
        return -EINVAL;
    for (int i = 1; i < 6; i++)
        if (i != 3 && (s[i] < '0' || s[i] > '9'))
            return -EINVAL;
    int h = (s[1] - '0') * 10 + (s[2] - '0');
    int m = (s[4] - '0') * 10 + (s[5] - '0');
    if (h > 14 || m > 59)
        return -EINVAL;
    *out = (s[0] == '-' ? -1 : 1) * (h * 60 + m);
    return 0;
}

static int get_u32(const struct conf_doc *d, const struct conf_node *m, const char *key, bool req,
                   int64_t min, int64_t max, uint32_t *out, struct conf_err *err)
{
    int64_t v = *out;
    int rc = conf_int(d, m, key, req, min, max, &v, err);
    if (rc == 0)
        *out = (uint32_t)v;
    return rc;
}

/* A sequence of exactly n numbers >= 0. */
static int get_numbers(const struct conf_doc *d, const struct conf_node *m, const char *key,
                       size_t n, double *out, struct conf_err *err)
{
    const struct conf_node *s = conf_get(m, key);
    if (!s)
        return 0;
    if (s->kind != CONF_SEQ || s->n != n)
        return conf_errf(err, d, s, key, "expected a list of %zu numbers", n);
    for (size_t i = 0; i < n; i++) {
        const struct conf_node *it = s->items[i];
        char *end;
        errno = 0;
        double v = it->kind == CONF_SCALAR ? strtod(it->value, &end) : -1;
        if (it->kind != CONF_SCALAR || errno || end == it->value || *end || !(v >= 0) || v > 1e12)
            return conf_errf(err, d, it, key, "expected a non-negative number, got '%.40s'",
                             it->kind == CONF_SCALAR ? it->value : "(not a scalar)");
        out[i] = v;
    }
    return 0;
}

static int load_arrivals(const struct conf_doc *d, const struct conf_node *svc,
                         struct service_cfg *c, struct conf_err *err)
{
    static const char *const akeys[] = {"synthetic", "trace", NULL};
    static const char *const skeys[] = {"shape",        "peak_rps",    "rate_rps", "mean_rps",
                                        "trough_ratio", "peak_hour",   "hourly",   "weekly",
                                        "cv",           "hourly_kind", NULL};
    const struct conf_node *a = conf_get(svc, "arrivals");
    int rc;

    if (!a)
        return conf_errf(err, d, svc, "arrivals",
                         "missing (expected a mapping with 'synthetic' or 'trace')");
    if ((rc = conf_check_keys(d, a, "arrivals", akeys, err)))
        return rc;
    const struct conf_node *s = conf_get(a, "synthetic"), *t = conf_get(a, "trace");
    if (s && t)
        return conf_errf(err, d, t, "trace", "expected either 'synthetic' or 'trace', not both");
    if (t) {
        c->from_trace = true;
        return load_arrival_trace(d, t, &c->trace, err);
    }
    if (!s)
        return conf_errf(err, d, a, "synthetic", "missing (expected 'synthetic' or 'trace')");
    if ((rc = conf_check_keys(d, s, "synthetic", skeys, err)))
        return rc;

    struct rate_profile *p = &c->arrivals;
    c->burst_cv = 1.0;
    if ((rc = conf_double(d, s, "cv", false, 0.05, 20, &c->burst_cv, err)))
        return rc;
    int shape = conf_get(s, "hourly") ? RATE_HOURLY : RATE_COSINE;
    if (conf_get(s, "rate_rps") && !conf_get(s, "shape"))
        shape = RATE_CONSTANT;
    if ((rc = conf_enum(d, s, "shape", false, shape_names, &shape, err)))
        return rc;
    /* In the order of shape_names; "shape", "cv" and "weekly" belong to every shape. */
    static const char *const k_constant[] = {"rate_rps", "peak_rps", NULL};
    static const char *const k_cosine[] = {"peak_rps", "trough_ratio", "peak_hour", NULL};
    static const char *const k_hourly[] = {"hourly", "hourly_kind", NULL};
    static const char *const k_servegen[] = {"mean_rps", NULL};
    static const struct variant shapes[] = {{"constant", k_constant},
                                            {"cosine", k_cosine},
                                            {"hourly", k_hourly},
                                            {"servegen", k_servegen}};
    if ((rc = check_variant_keys(d, s, "shape", shapes, 4, (size_t)shape, err)))
        return rc;
    if (shape == SHAPE_SERVEGEN) {
        /* The ServeGen m-small hourly shape (traces/synth.c), scaled to a daily mean. */
        double mean = 0;
        if ((rc = conf_double(d, s, "mean_rps", true, 0, 1e9, &mean, err)))
            return rc;
        rate_profile_servegen(p, mean, false);
        return get_numbers(d, s, "weekly", 7, p->weekly, err);
    }
    p->shape = (enum rate_shape)shape;
    p->trough_ratio = 0.15;
    p->peak_hour = 20;
    if (shape == RATE_CONSTANT) {
        const char *k = conf_get(s, "rate_rps") ? "rate_rps" : "peak_rps";
        if ((rc = conf_double(d, s, k, true, 0, 1e9, &p->peak_rps, err)))
            return rc;
    } else if (shape == RATE_COSINE) {
        if ((rc = conf_double(d, s, "peak_rps", true, 0, 1e9, &p->peak_rps, err)) ||
            (rc = conf_double(d, s, "trough_ratio", false, 0, 1, &p->trough_ratio, err)) ||
            (rc = conf_double(d, s, "peak_hour", false, 0, 24, &p->peak_hour, err)))
            return rc;
    } else {
        if (!conf_get(s, "hourly"))
            return conf_errf(err, d, s, "hourly", "missing (expected a list of 24 numbers)");
        if ((rc = get_numbers(d, s, "hourly", 24, p->hourly, err)))
            return rc;
        static const char *const kinds[] = {"means", "points", NULL};
        int kind = 0;
        if ((rc = conf_enum(d, s, "hourly_kind", false, kinds, &kind, err)))
            return rc;
        p->hourly_points = kind == 1;
        rate_profile_prepare(p);
    }
    return get_numbers(d, s, "weekly", 7, p->weekly, err);
}

/*
 * A name that becomes a file name (the scenario's: "<name>.h5" when run has
 * no -o) or an HDF5 group (a service's: /services/<name>) must be a plain
 * token: ASCII letters, digits, '-', '_' and '.', not starting with '.', at
 * most SCENARIO_NAME_MAX bytes. So no "../x", "/abs", "a/b", "" or ".".
 */
#define SCENARIO_NAME_MAX 128
static int check_plain_name(const struct conf_doc *d, const struct conf_node *map, const char *v,
                            struct conf_err *err)
{
    size_t n = strlen(v);
    bool ok = n > 0 && n <= SCENARIO_NAME_MAX && v[0] != '.';
    for (size_t i = 0; ok && i < n; i++) {
        char c = v[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    }
    if (ok)
        return 0;
    return conf_errf(err, d, conf_get(map, "name"), "name",
                     "expected a plain name (letters, digits, '-', '_', '.'; not starting with "
                     "'.'; at most %d characters), got '%.60s'",
                     SCENARIO_NAME_MAX, v);
}

/* The batch kind's latency, batching and SLO keys. */
static int load_batch_latency(const struct conf_doc *d, const struct conf_node *n,
                              struct service_cfg *c, struct conf_err *err)
{
    static const char *const lkeys[] = {"model", "a_ms", "b_ms",  "fixed_compute_share",
                                        "dist",  "cv",   "bound", NULL};
    static const char *const bounds[] = {"compute", "memory", NULL};
    static const char *const bkeys[] = {"max_batch", "max_wait", NULL};
    static const char *const skeys[] = {"p99_ms", "target_ms", "quantile", NULL};
    int rc, dist = DIST_LOGNORMAL;
    /* BERT-large on a full A100, fitted from MLPerf Inference v2.0 (docs/models.md):
     * a = 1.16 ms, b = 0.28 ms. */
    c->a_ms = 1.16;
    c->b_ms = 0.28;
    c->fixed_compute_share = LATENCY_FIXED_COMPUTE_SHARE_DEFAULT;
    c->cv = 0.1;
    const struct conf_node *l = conf_get(n, "latency");
    if (l) {
        if ((rc = conf_check_keys(d, l, "latency", lkeys, err)))
            return rc;
        const struct conf_node *mn = conf_get(l, "model");
        if (mn) {
            const char *model = NULL;
            if ((rc = conf_string(d, l, "model", true, &model, err)))
                return rc;
            const struct latency_model *lm = latency_model_find(model, "full");
            if (!lm)
                return conf_errf(err, d, mn, "model",
                                 "unknown latency model '%s' (expected resnet50 or bert)", model);
            c->a_ms = lm->a_s * 1e3;
            c->b_ms = lm->b_s * 1e3;
            c->fixed_compute_share = lm->fixed_compute_share;
        }
        if ((rc = conf_double(d, l, "fixed_compute_share", false, 0, 1, &c->fixed_compute_share,
                              err)) ||
            (rc = conf_double(d, l, "a_ms", false, 0, 1e7, &c->a_ms, err)) ||
            (rc = conf_double(d, l, "b_ms", false, 0, 1e7, &c->b_ms, err)) ||
            (rc = conf_enum(d, l, "dist", false, dist_names, &dist, err)) ||
            (rc = conf_double(d, l, "cv", false, 0, 10, &c->cv, err)))
            return rc;
        int bound = 0;
        if ((rc = conf_enum(d, l, "bound", false, bounds, &bound, err)))
            return rc;
        c->memory_bound = bound == 1;
    }
    c->dist = (enum svc_dist)dist;
    if (c->a_ms + c->b_ms <= 0)
        return conf_errf(err, d, l ? l : n, "latency",
                         "expected a_ms + b_ms > 0 (a batch of one must take time)");

    c->max_batch = 32;
    c->max_wait = 5 * SIM_MS;
    const struct conf_node *b = conf_get(n, "batching");
    if (b) {
        if ((rc = conf_check_keys(d, b, "batching", bkeys, err)) ||
            (rc = get_u32(d, b, "max_batch", false, 1, 1 << 20, &c->max_batch, err)) ||
            (rc = conf_duration(d, b, "max_wait", false, 0, &c->max_wait, err)))
            return rc;
    }

    c->slo = 100 * SIM_MS;
    c->slo_quantile = 0.99;
    const struct conf_node *s = conf_get(n, "slo");
    if (s) {
        double ms = 100;
        if ((rc = conf_check_keys(d, s, "slo", skeys, err)))
            return rc;
        if (conf_get(s, "p99_ms") && conf_get(s, "target_ms"))
            return conf_errf(err, d, s, "slo", "expected either 'p99_ms' or 'target_ms', not both");
        if (conf_get(s, "p99_ms")) {
            if ((rc = conf_double(d, s, "p99_ms", false, 0.001, 1e9, &ms, err)))
                return rc;
        } else {
            if ((rc = conf_double(d, s, "target_ms", false, 0.001, 1e9, &ms, err)) ||
                (rc = conf_double(d, s, "quantile", false, 0.5, 0.99999, &c->slo_quantile, err)))
                return rc;
        }
        c->slo = sim_time_from_sec(ms / 1e3);
    }

    return 0;
}

/*
 * startup: {fixed, model_gb, load_gbps: {median, sigma}} (struct startup_cfg).
 * Defaults: an LLM service loads its weights; a batch service without the
 * block keeps the policy's start-up delay.
 */
static int load_startup(const struct conf_doc *d, const struct conf_node *n, struct service_cfg *c,
                        struct conf_err *err)
{
    static const char *const keys[] = {"fixed", "model_gb", "load_gbps", NULL};
    static const char *const lkeys[] = {"median", "sigma", NULL};
    const struct conf_node *st = conf_get(n, "startup");
    struct startup_cfg *u = &c->startup;
    int rc;
    /* Knobs (docs/models.md "Replica start-up"): 30 s of container and engine start (vLLM issue
     * #44881: 16 s to the engine's configuration, then profiling and CUDA graphs); weights at a
     * median 1.8 GB/s from local NVMe (vLLM PR #10647: Llama-2-7B 13.5 GB in 7.3 s on an A100,
     * 13B 26 GB in 16 s), sigma 0.5 for page-cache hits and network storage. */
    u->fixed = 30 * SIM_SEC;
    u->bw_median_gbps = 1.8;
    u->bw_sigma = 0.5;
    u->on = c->kind == SVC_LLM;
    if (c->kind == SVC_LLM)
        u->model_gb = c->llm->model.weight_bytes / 1e9;
    if (!st)
        return 0;
    if ((rc = conf_check_keys(d, st, "startup", keys, err)) ||
        (rc = conf_duration(d, st, "fixed", false, 0, &u->fixed, err)) ||
        (rc = conf_double(d, st, "model_gb", c->kind != SVC_LLM, 0, 1e5, &u->model_gb, err)))
        return rc;
    const struct conf_node *b = conf_get(st, "load_gbps");
    if (b && ((rc = conf_check_keys(d, b, "load_gbps", lkeys, err)) ||
              (rc = conf_double(d, b, "median", false, 0.001, 1e4, &u->bw_median_gbps, err)) ||
              (rc = conf_double(d, b, "sigma", false, 0, 3, &u->bw_sigma, err))))
        return rc;
    u->on = true;
    return 0;
}

static int load_service(const struct conf_doc *d, const struct conf_node *n, struct service_cfg *c,
                        const struct scenario *scn, struct conf_err *err)
{
    static const char *const keys[] = {"name",         "latency",   "batching",
                                       "slo",          "replicas",  "arrivals",
                                       "max_queue",    "memory_gb", "active_thread_percentage",
                                       "mig_profile",  "demand",    "memory_used_gb",
                                       "gpu_fraction", "kind",      "llm",
                                       "startup",      "require",   "prefer",
                                       "queue",        NULL};
    static const char *const kinds[] = {"batch", "llm", NULL};
    static const char *const batch_only[] = {"latency", "batching", "memory_gb", "memory_used_gb"};
    const struct gpu_spec *sc_spec = scn->spec;
    static const char *const rkeys[] = {"count", "min", "max", NULL};
    int rc;

    if ((rc = conf_check_keys(d, n, "services[]", keys, err)))
        return rc;
    if ((rc = conf_string(d, n, "name", true, &c->name, err)) ||
        (rc = check_plain_name(d, n, c->name, err)))
        return rc;
    int kind = SVC_BATCH;
    if ((rc = conf_enum(d, n, "kind", false, kinds, &kind, err)) ||
        (rc = conf_string(d, n, "queue", false, &c->queue, err)))
        return rc;
    c->kind = (enum svc_kind)kind;
    if (c->kind == SVC_BATCH && conf_get(n, "llm"))
        return conf_errf(err, d, conf_get(n, "llm"), "llm", "only with 'kind: llm'");
    for (size_t i = 0; c->kind == SVC_LLM && i < sizeof(batch_only) / sizeof(batch_only[0]); i++)
        if (conf_get(n, batch_only[i]))
            return conf_errf(err, d, conf_get(n, batch_only[i]), batch_only[i],
                             "not a key of an llm service (its batches, latency and memory come "
                             "from its llm block)");

    if (c->kind == SVC_BATCH && (rc = load_batch_latency(d, n, c, err)))
        return rc;
    const struct conf_node *r = conf_get(n, "replicas");
    if (r && r->kind == CONF_SCALAR) {
        if ((rc = get_u32(d, n, "replicas", false, 0, 1 << 20, &c->replicas, err)))
            return rc;
        c->min_replicas = c->max_replicas = c->replicas;
    } else if (r) {
        if ((rc = conf_check_keys(d, r, "replicas", rkeys, err)) ||
            (rc = get_u32(d, r, "count", false, 0, 1 << 20, &c->replicas, err)) ||
            (rc = get_u32(d, r, "min", false, 0, 1 << 20, &c->min_replicas, err)) ||
            (rc = get_u32(d, r, "max", false, 0, 1 << 20, &c->max_replicas, err)))
            return rc;
        if (c->max_replicas && c->min_replicas > c->max_replicas)
            return conf_errf(err, d, r, "min", "expected min <= max");
    }

    c->max_queue = 1000000;
    int64_t mq = (int64_t)c->max_queue;
    if ((rc = conf_int(d, n, "max_queue", false, 1, INT64_MAX / 2, &mq, err)))
        return rc;
    c->max_queue = (uint64_t)mq;
    /* Knob: a BERT-large-class server with its runtime (~10 GiB fits a 1g.10gb slice). */
    c->mem_gib = 8;
    double atp = 100;
    c->demand = 1;
    if ((rc = conf_double(d, n, "memory_gb", false, 0, 1024, &c->mem_gib, err)) ||
        (rc = conf_double(d, n, "memory_used_gb", false, 0, 1024, &c->mem_used_gib, err)) ||
        (rc = conf_double(d, n, "gpu_fraction", false, 0.01, 1, &c->gpu_fraction, err)) ||
        (rc = conf_double(d, n, "active_thread_percentage", false, 1, 100, &atp, err)) ||
        (rc = conf_double(d, n, "demand", false, 0.01, 1, &c->demand, err)) ||
        (rc = conf_string(d, n, "mig_profile", false, &c->mig_profile, err)))
        return rc;
    if (c->mig_profile && !mig_profile_find(sc_spec, c->mig_profile) &&
        !pools_know(scn, c->mig_profile))
        return conf_errf(err, d, conf_get(n, "mig_profile"), "mig_profile",
                         "unknown MIG profile '%.40s' for this GPU", c->mig_profile);
    c->sm_cap = atp / 100;
    /* Its constraints first: in a mixed fleet an LLM replica is sized for the mode of the
     * pools it requires (sim/llm_conf.c). */
    if ((rc = placement_load(d, n, &c->place, err)))
        return rc;
    if (c->kind == SVC_LLM && (rc = llm_cfg_load(d, n, c, scn, err)))
        return rc;
    if ((rc = load_startup(d, n, c, err)))
        return rc;
    if (c->max_queue < c->max_batch)
        return conf_errf(err, d, conf_get(n, "max_queue"), "max_queue",
                         "expected at least max_batch (%u)", c->max_batch);
    return load_arrivals(d, n, c, err);
}

static int load_services(struct scenario *sc, const struct conf_node *root, struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *s = conf_get(root, "services");
    if (!s) {
        sc->nservices = 0;
        return 0;
    }
    if (s->kind != CONF_SEQ)
        return conf_errf(err, d, s, "services", "expected a list of services");
    sc->services = calloc(s->n ? s->n : 1, sizeof(*sc->services));
    if (!sc->services)
        return -ENOMEM;
    sc->nservices = s->n;
    for (size_t i = 0; i < s->n; i++) {
        int rc = load_service(d, s->items[i], &sc->services[i], sc, err);
        if (rc)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sc->services[j].name, sc->services[i].name))
                return conf_errf(err, d, conf_get(s->items[i], "name"), "name",
                                 "duplicate service name '%s'", sc->services[i].name);
    }
    return 0;
}

/* gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1} */
static int load_gpu_mix(const struct conf_doc *d, const struct conf_node *g, struct job_mix *m,
                        struct conf_err *err)
{
    if (g->kind != CONF_MAP || g->n == 0 || g->n > 8)
        return conf_errf(err, d, g, "gpus",
                         "expected a mapping of GPU count to weight, e.g. {1: 0.5, 8: 0.5}");
    m->nsizes = 0;
    for (size_t i = 0; i < g->n; i++) {
        char *end;
        errno = 0;
        long k = strtol(g->keys[i], &end, 10);
        if (errno || *end || k < 1 || k > 4096) {
            struct conf_node at = {.line = g->key_line[i], .col = g->key_col[i]};
            return conf_errf(err, d, &at, "gpus", "expected a positive GPU count, got '%.40s'",
                             g->keys[i]);
        }
        double w = 0;
        int rc = conf_double(d, g, g->keys[i], true, 0, 1e9, &w, err);
        if (rc)
            return rc;
        m->sizes[m->nsizes] = (uint32_t)k;
        m->weights[m->nsizes] = w;
        m->nsizes++;
    }
    return 0;
}

/*
 * training.checkpoint: interval (a duration, "young", "daly" or "none"), mtbf
 * (a duration, or "faults": from cluster.faults, already loaded into sc) and
 * the cost knobs (models/ckpt.h); bandwidth: per_job (one writer per job, the
 * default) or per_gpu (sharded: every member writes its share at the bandwidths).
 */
static int load_checkpoint(const struct conf_doc *d, const struct conf_node *c,
                           const struct scenario *sc, struct train_cfg *t, struct conf_err *err)
{
    static const char *const keys[] = {"interval",        "mtbf",       "state_gb_per_gpu",
                                       "bytes_per_param", "write_gbps", "read_gbps",
                                       "save_fixed",      "warmup",     "grace",
                                       "bandwidth",       NULL};
    static const char *const bw_names[] = {"per_job", "per_gpu", NULL};
    int rc;
    if (!c)
        return 0;
    if ((rc = conf_check_keys(d, c, "checkpoint", keys, err)))
        return rc;
    const struct conf_node *iv = conf_get(c, "interval");
    if (iv && iv->kind == CONF_SCALAR && !strcmp(iv->value, "young")) {
        t->rule = CKPT_RULE_YOUNG;
    } else if (iv && iv->kind == CONF_SCALAR && !strcmp(iv->value, "daly")) {
        t->rule = CKPT_RULE_DALY;
    } else if (iv && iv->kind == CONF_SCALAR && !strcmp(iv->value, "none")) {
        t->interval = 0;
    } else if ((rc = conf_duration(d, c, "interval", false, SIM_SEC, &t->interval, err))) {
        return rc;
    }
    struct ckpt_knobs *k = &t->knobs;
    sim_time mtbf = sim_time_from_sec(t->mtbf_s), fixed = sim_time_from_sec(k->save_fixed_s),
             warm = sim_time_from_sec(k->warmup_s), grace = sim_time_from_sec(k->grace_s);
    const struct conf_node *mv = conf_get(c, "mtbf");
    if (mv && mv->kind == CONF_SCALAR && !strcmp(mv->value, "faults")) {
        /* A member dies of its own faults and, on a shared card, of its
         * card-mates' (a full card: `slots` tenants). */
        bool shared = sc->sharing == SHARE_TIMESLICE || sc->sharing == SHARE_MPS;
        /* Until a job is placed (its interval at submission); then each card of its own
         * pool's mode and replicas (trainer_start). */
        t->fault_rate_per_gpu_h = sc->knobs.fault_rate_per_h * (shared ? sc->slots : 1);
        t->fault_rate_per_tenant_h = sc->knobs.fault_rate_per_h;
        if (!(t->fault_rate_per_gpu_h > 0))
            return conf_errf(err, d, c, "mtbf",
                             "'faults' needs cluster.faults.per_tenant_per_hour > 0");
    } else if ((rc = conf_duration(d, c, "mtbf", false, SIM_SEC, &mtbf, err))) {
        return rc;
    }
    if ((rc = conf_double(d, c, "state_gb_per_gpu", false, 0, 1e6, &t->state_gb_per_gpu, err)) ||
        (rc = conf_double(d, c, "bytes_per_param", false, 1, 64, &k->bytes_per_param, err)) ||
        (rc = conf_double(d, c, "write_gbps", false, 1e-3, 1e4, &k->write_gbps, err)) ||
        (rc = conf_double(d, c, "read_gbps", false, 1e-3, 1e4, &k->read_gbps, err)) ||
        (rc = conf_duration(d, c, "save_fixed", false, 0, &fixed, err)) ||
        (rc = conf_duration(d, c, "warmup", false, 0, &warm, err)) ||
        (rc = conf_duration(d, c, "grace", false, 0, &grace, err)))
        return rc;
    int bw = t->ckpt_per_gpu ? 1 : 0;
    if ((rc = conf_enum(d, c, "bandwidth", false, bw_names, &bw, err)))
        return rc;
    t->ckpt_per_gpu = bw == 1;
    t->mtbf_s = sim_time_to_sec(mtbf);
    k->save_fixed_s = sim_time_to_sec(fixed);
    k->warmup_s = sim_time_to_sec(warm);
    k->grace_s = sim_time_to_sec(grace);
    return 0;
}

static int load_training(struct scenario *sc, const struct conf_node *root, struct conf_err *err)
{
    static const char *const tkeys[] = {
        "jobs",   "backlog", "checkpoint", "memory_gb_per_gpu", "active_thread_percentage",
        "demand", "require", "prefer",     "snapshot",          NULL};
    static const char *const jkeys[] = {"synthetic", "trace", NULL};
    static const char *const skeys[] = {"per_hour",     "duration",  "gpus",
                                        "max_duration", "calibrate", NULL};
    static const char *const dkeys[] = {"lognormal", NULL};
    static const char *const lkeys[] = {"median", "sigma", NULL};
    const struct conf_doc *d = &sc->doc;
    struct training_cfg *t = &sc->training;
    const struct conf_node *tr = conf_get(root, "training");
    int rc;

    train_cfg_init(&t->run);
    if (!tr)
        return 0;
    double atp = 100;
    if ((rc = conf_check_keys(d, tr, "training", tkeys, err)) ||
        (rc = get_u32(d, tr, "backlog", false, 0, TRAINING_MAX_JOBS, &t->backlog, err)) ||
        (rc = conf_double(d, tr, "memory_gb_per_gpu", false, 0, 1024, &t->run.mem_gib_per_gpu,
                          err)) ||
        (rc = conf_double(d, tr, "active_thread_percentage", false, 1, 100, &atp, err)) ||
        (rc = conf_double(d, tr, "demand", false, 0.01, 1, &t->run.demand, err)) ||
        (rc = load_checkpoint(d, conf_get(tr, "checkpoint"), sc, &t->run, err)) ||
        (rc = placement_load(d, tr, &t->place, err)))
        return rc;
    t->run.sm_cap = atp / 100;
    if (conf_get(tr, "snapshot")) {
        /* Read once the pools are known (load_snapshot). */
        t->snapshot_path = resolve_path(d, tr, "snapshot", err);
        if (!t->snapshot_path)
            return -EINVAL;
    }
    const struct conf_node *j = conf_get(tr, "jobs");
    if (!j && t->snapshot_path)
        return 0; /* a warm start only: the snapshot's jobs, no new ones */
    if (!j)
        return conf_errf(err, d, tr, "jobs",
                         "missing (expected a mapping with 'synthetic' or 'trace', or a "
                         "'snapshot' of running jobs)");
    if ((rc = conf_check_keys(d, j, "jobs", jkeys, err)))
        return rc;
    const struct conf_node *s = conf_get(j, "synthetic"), *jt = conf_get(j, "trace");
    if (s && jt)
        return conf_errf(err, d, jt, "trace", "expected either 'synthetic' or 'trace', not both");
    if (jt) {
        t->from_trace = true;
        return load_job_trace(d, jt, &t->trace, err);
    }
    if (!s)
        return conf_errf(err, d, j, "synthetic", "missing (expected 'synthetic' or 'trace')");
    if ((rc = conf_check_keys(d, s, "synthetic", skeys, err)))
        return rc;

    t->synthetic = true;
    /* Defaults (knobs): 2 h median, sigma 1.2; sizes 1/2/4/8 at 50/20/20/10 %. */
    struct job_mix *m = &t->mix;
    m->per_hour = 6;
    m->median_s = 7200;
    m->sigma = 1.2;
    m->nsizes = 4;
    const uint32_t sizes[4] = {1, 2, 4, 8};
    const double weights[4] = {0.5, 0.2, 0.2, 0.1};
    for (unsigned i = 0; i < 4; i++) {
        m->sizes[i] = sizes[i];
        m->weights[i] = weights[i];
    }
    if ((rc = conf_double(d, s, "per_hour", false, 0, 1e7, &m->per_hour, err)))
        return rc;
    const char *cal = NULL;
    if ((rc = conf_string(d, s, "calibrate", false, &cal, err)))
        return rc;
    if (cal && job_mix_from_summary(m, cal, m->per_hour))
        return conf_errf(err, d, conf_get(s, "calibrate"), "calibrate",
                         "expected one of: Seren, Kalos, Philly, Helios, PAI, got '%.40s'", cal);
    sim_time maxd = 0;
    if ((rc = conf_duration(d, s, "max_duration", false, SIM_SEC, &maxd, err)))
        return rc;
    m->max_s = sim_time_to_sec(maxd);
    const struct conf_node *du = conf_get(s, "duration");
    if (du) {
        if ((rc = conf_check_keys(d, du, "duration", dkeys, err)))
            return rc;
        const struct conf_node *ln = conf_get(du, "lognormal");
        if (!ln)
            return conf_errf(err, d, du, "lognormal", "missing (expected {median, sigma})");
        sim_time med = 0;
        if ((rc = conf_check_keys(d, ln, "lognormal", lkeys, err)) ||
            (rc = conf_duration(d, ln, "median", true, SIM_SEC, &med, err)) ||
            (rc = conf_double(d, ln, "sigma", false, 0, 10, &m->sigma, err)))
            return rc;
        m->median_s = sim_time_to_sec(med);
    }
    const struct conf_node *g = conf_get(s, "gpus");
    if (g && (rc = load_gpu_mix(d, g, m, err)))
        return rc;
    uint32_t total = scenario_gpus(sc);
    for (unsigned i = 0; g && i < m->nsizes; i++)
        if (m->sizes[i] > total)
            return conf_errf(err, d, g, "gpus", "a %u-GPU job can never fit a %u-GPU cluster",
                             m->sizes[i], total);
    /* The trainer keeps every job it was given (for /jobs): refuse a run that would not fit,
     * before it grows to gigabytes. */
    double jobs = (double)t->backlog + m->per_hour * sim_time_to_sec(sc->duration) / 3600.0;
    if (jobs > TRAINING_MAX_JOBS) {
        const struct conf_node *at = conf_get(s, "per_hour");
        const char *key = "per_hour";
        if (!at && conf_get(tr, "backlog")) {
            at = conf_get(tr, "backlog");
            key = "backlog";
        }
        return conf_errf(err, d, at ? at : s, key,
                         "expected at most %u training jobs per run (backlog + per_hour x "
                         "duration; each is kept in memory, about 0.5 kB), got %u + %g/h x %g h "
                         "= %.0f",
                         TRAINING_MAX_JOBS, t->backlog, m->per_hour,
                         sim_time_to_sec(sc->duration) / 3600.0, jobs);
    }
    return 0;
}

/* training.snapshot: read and check the running jobs against the pools (traces/snapshot.h). */
static int load_snapshot(struct scenario *sc, struct conf_err *err)
{
    struct training_cfg *t = &sc->training;
    if (!t->snapshot_path)
        return 0;
    int rc = -ENOMEM;
    const char **names = calloc(sc->npools, sizeof(*names));
    uint32_t *first = calloc(sc->npools, sizeof(*first));
    uint32_t *nodes = calloc(sc->npools, sizeof(*nodes));
    uint32_t *per = calloc(sc->npools, sizeof(*per));
    if (names && first && nodes && per) {
        uint32_t at = 0;
        for (uint32_t i = 0; i < sc->npools; i++) {
            names[i] = sc->pools[i].name;
            first[i] = at;
            nodes[i] = sc->pools[i].nodes;
            per[i] = sc->pools[i].gpus_per_node;
            at += nodes[i];
        }
        struct snap_geom g = {.npools = sc->npools,
                              .pool_names = names,
                              .pool_first_node = first,
                              .pool_nodes = nodes,
                              .pool_per_node = per};
        struct trace_err te = {{0}};
        rc = snapshot_load(t->snapshot_path, &g, &t->snap, &t->nsnap, &te);
        if (rc)
            snprintf(err->msg, sizeof(err->msg), "%s",
                     te.msg[0] ? te.msg : "training.snapshot: out of memory");
    } else {
        snprintf(err->msg, sizeof(err->msg), "training.snapshot: out of memory");
    }
    free(names);
    free(first);
    free(nodes);
    free(per);
    return rc;
}

/* policy.autoscale: Kubernetes HPA knobs (sim/autoscale.h). */
static int load_autoscale(const struct conf_doc *d, const struct conf_node *a,
                          struct policy_cfg *pc, struct conf_err *err)
{
    static const char *const keys[] = {"target",         "tolerance",         "min", "max",
                                       "scale_up_delay", "scale_down_window", NULL};
    int rc;
    autoscale_cfg_default(&pc->as);
    pc->as.up_delay = 60 * SIM_SEC;
    if (!a)
        return 0;
    pc->autoscale = true;
    if ((rc = conf_check_keys(d, a, "autoscale", keys, err)) ||
        (rc = conf_double(d, a, "target", false, 0.01, 1, &pc->as.target_util, err)) ||
        (rc = conf_double(d, a, "tolerance", false, 0, 1, &pc->as.tolerance, err)) ||
        (rc = get_u32(d, a, "min", false, 0, 1 << 20, &pc->as.min_replicas, err)) ||
        (rc = get_u32(d, a, "max", false, 1, 1 << 20, &pc->as.max_replicas, err)) ||
        (rc = conf_duration(d, a, "scale_up_delay", false, 0, &pc->as.up_delay, err)) ||
        (rc = conf_duration(d, a, "scale_down_window", false, 0, &pc->as.down_window, err)))
        return rc;
    if (pc->as.max_replicas < pc->as.min_replicas)
        return conf_errf(err, d, a, "max", "expected max >= min");
    return 0;
}

int scenario_refuse_modes(const struct scenario *sc, const struct conf_node *p, uint32_t ok,
                          const char *why, struct conf_err *err)
{
    char list[400] = "";
    size_t n = 0;
    bool bad = false;
    for (uint32_t i = 0; i < sc->npools; i++) {
        enum share_mode m = scenario_pool_mode(sc, i);
        bad |= !((ok >> m) & 1u);
        if (n < sizeof(list))
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%spool '%s' %s", i ? ", " : "",
                                  sc->pools[i].name,
                                  sc->pools[i].whole ? "whole cards" : share_mode_name(m));
    }
    if (!bad)
        return 0;
    const struct conf_node *at = p && conf_get(p, "name") ? conf_get(p, "name") : p;
    struct conf_node top = {.line = 1, .col = 1};
    return conf_errf(err, &sc->doc,
                     at             ? at
                     : sc->doc.root ? sc->doc.root
                                    : &top,
                     "name", "policy '%s' does not model this mixed fleet (%s): %s",
                     sc->policy.name, list, why);
}

static int load_policy(struct scenario *sc, const struct conf_node *root, struct conf_err *err)
{
    static const char *const common[] = {"name", "inference_gpus", "autoscale"};
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *p = conf_get(root, "policy");
    const char *name = "dedicated";
    const char *keys[40];
    int rc;

    if (p && (rc = conf_string(d, p, "name", false, &name, err)))
        return rc;
    sc->policy.ops = policy_find(name);
    if (!sc->policy.ops)
        return conf_errf(err, d, conf_get(p, "name"), "name", "expected one of: %s, got '%.40s'",
                         policy_names_text(), name);
    sc->policy.name = sc->policy.ops->name;
    size_t n = 0;
    for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
        keys[n++] = common[i];
    for (size_t i = 0; sc->policy.ops->keys && sc->policy.ops->keys[i] && n < 39; i++)
        keys[n++] = sc->policy.ops->keys[i];
    keys[n] = NULL;
    if (p && (rc = conf_check_keys(d, p, "policy", keys, err)))
        return rc;
    uint32_t total = scenario_gpus(sc);
    sc->policy.inference_gpus = 0;
    if (p &&
        (rc = get_u32(d, p, "inference_gpus", false, 0, total, &sc->policy.inference_gpus, err)))
        return rc;
    if ((rc = load_autoscale(d, p ? conf_get(p, "autoscale") : NULL, &sc->policy, err)))
        return rc;
    if (sc->policy.ops->parse)
        return sc->policy.ops->parse(sc, p, err);
    return 0;
}

/* cluster.mig / timeSlicing / mps / faults: the sharing knobs (models/share.h, models/mig.h). */
static int load_sharing(struct scenario *sc, const struct conf_node *c, struct conf_err *err)
{
    static const char *const mkeys[] = {"layout",   "efficiency",  "speeds",
                                        "reconfig", "drain_grace", NULL};
    static const char *const tkeys[] = {"replicas", "slice",        "overhead",
                                        "switch",   "memory_quota", NULL};
    static const char *const quotas[] = {"none", "enforced", NULL};
    static const char *const pkeys[] = {"replicas", "interference", "pinned_mem_limit_gb", NULL};
    static const char *const fkeys[] = {"per_tenant_per_hour", "restart", NULL};
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *m = conf_get(c, "mig"), *t = conf_get(c, "timeSlicing"),
                           *p = conf_get(c, "mps"), *f = conf_get(c, "faults");
    int rc;

    share_knobs_init(&sc->knobs);
    sc->slots = 1;
    sc->restart_delay = 60 * SIM_SEC;
    if (sc->spec->mig_capable)
        mig_knobs_init(&sc->mig, sc->spec);
    /* The modes in use: the cluster's, or in a mixed fleet every pool's (scenario.h). */
    bool use_mig = sc->mixed ? scenario_uses(sc, SHARE_MIG) : sc->sharing == SHARE_MIG;
    bool use_ts = sc->mixed ? scenario_uses(sc, SHARE_TIMESLICE) : sc->sharing == SHARE_TIMESLICE;
    bool use_mps = sc->mixed ? scenario_uses(sc, SHARE_MPS) : sc->sharing == SHARE_MPS;
    const char *pools = sc->pools_moded ? " (no pool shares so)" : "";
    if (m && !use_mig)
        return conf_errf(err, d, m, "mig", "only with 'sharing: mig'%s", pools);
    if (t && !use_ts)
        return conf_errf(err, d, t, "timeSlicing", "only with 'sharing: timeslice'%s", pools);
    if (p && !use_mps)
        return conf_errf(err, d, p, "mps", "only with 'sharing: mps'%s", pools);
    sc->ts_replicas = sc->mps_replicas = 4;
    if (use_mig) {
        if (!sc->mixed && !sc->spec->mig_capable)
            return conf_errf(err, d, conf_get(c, "sharing"), "sharing", "%s has no MIG profiles",
                             sc->spec->name);
        /* Pools may carry their own layouts (resolve_pools): then the cluster's is a default. */
        if (!m && !sc->from_layout && !sc->pools_given)
            return conf_errf(err, d, c, "mig", "missing (expected {layout: ...})");
        if (sc->from_layout && conf_get(m, "layout"))
            return conf_errf(err, d, conf_get(m, "layout"), "layout",
                             "the layout comes from sharing_from; give one or the other");
        if (sc->from_layout)
            sc->mig_layout = sc->from_layout;
        double eff = sc->mig.efficiency;
        sim_time rec = sim_time_from_sec(sc->mig.reconfig_s);
        sim_time drain = sim_time_from_sec(sc->mig.drain_grace_s);
        if ((rc = conf_check_keys(d, m, "mig", mkeys, err)) ||
            (!sc->from_layout &&
             (rc = conf_string(d, m, "layout", !sc->pools_given, &sc->mig_layout, err))) ||
            (rc = conf_double(d, m, "efficiency", false, 0.01, 1.2, &eff, err)) ||
            (rc = conf_duration(d, m, "reconfig", false, 0, &rec, err)) ||
            (rc = conf_duration(d, m, "drain_grace", false, 0, &drain, err)))
            return rc;
        mig_knobs_set_efficiency(&sc->mig, eff);
        if ((rc = load_mig_speeds(d, conf_get(m, "speeds"), &sc->mig, sc->spec, sc, true, err)))
            return rc;
        sc->mig.reconfig_s = sim_time_to_sec(rec);
        sc->mig.drain_grace_s = sim_time_to_sec(drain);
        struct mig_layout l;
        char msg[400];
        /* With pools, each pool checks the layout it uses against its board (resolve_pools). */
        if (!sc->pools_given && mig_layout_check(sc->spec, sc->mig_layout, &l, msg, sizeof(msg)))
            return conf_errf(err, d, conf_get(m, "layout"), "layout", "%s", msg);
    }
    /* The cluster's sharing_from gives the replicas of the cluster's own mode. */
    uint32_t from = sc->from_replicas;
    if (use_ts) {
        uint32_t *slots = &sc->ts_replicas;
        *slots = from && sc->sharing == SHARE_TIMESLICE ? from : 4;
        if (from && sc->sharing == SHARE_TIMESLICE && conf_get(t, "replicas"))
            return conf_errf(err, d, conf_get(t, "replicas"), "replicas",
                             "the replicas come from sharing_from; give one or the other");
        sim_time slice = sim_time_from_sec(sc->knobs.ts_slice_s), sw = -1;
        int quota = 0;
        if (t &&
            ((rc = conf_check_keys(d, t, "timeSlicing", tkeys, err)) ||
             (rc = get_u32(d, t, "replicas", false, 1, 64, slots, err)) ||
             (rc = conf_duration(d, t, "slice", false, 1, &slice, err)) ||
             (rc = conf_double(d, t, "overhead", false, 0, 0.9, &sc->knobs.ts_overhead, err)) ||
             (rc = conf_duration(d, t, "switch", false, 0, &sw, err)) ||
             (rc = conf_enum(d, t, "memory_quota", false, quotas, &quota, err))))
            return rc;
        sc->ts_mem_quota = quota == 1;
        if (t && conf_get(t, "switch") && conf_get(t, "overhead"))
            return conf_errf(err, d, conf_get(t, "switch"), "switch",
                             "give either 'switch' (a time) or 'overhead' (a fraction), not both");
        sc->knobs.ts_slice_s = sim_time_to_sec(slice);
        /* The context-switch time s; the stored knob is o = s / (slice + s) (models/share.h). */
        if (sw >= 0) {
            double s = sim_time_to_sec(sw);
            sc->knobs.ts_overhead = s / (sc->knobs.ts_slice_s + s);
            if (sc->knobs.ts_overhead > 0.9)
                return conf_errf(err, d, conf_get(t, "switch"), "switch",
                                 "expected at most 9 slices (the switch would take over 90 %% of "
                                 "the card)");
        }
    }
    if (use_mps) {
        uint32_t *slots = &sc->mps_replicas;
        *slots = from && sc->sharing == SHARE_MPS ? from : 4;
        if (from && sc->sharing == SHARE_MPS && conf_get(p, "replicas"))
            return conf_errf(err, d, conf_get(p, "replicas"), "replicas",
                             "the replicas come from sharing_from; give one or the other");
        if (p && ((rc = conf_check_keys(d, p, "mps", pkeys, err)) ||
                  (rc = get_u32(d, p, "replicas", false, 1, SHARE_MPS_MAX_CLIENTS, slots, err)) ||
                  (rc = conf_double(d, p, "interference", false, 0, 10, &sc->knobs.mps_interference,
                                    err)) ||
                  (rc = conf_double(d, p, "pinned_mem_limit_gb", false, 0, 1024,
                                    &sc->mps_mem_limit_gib, err))))
            return rc;
    }
    if (sc->sharing == SHARE_TIMESLICE)
        sc->slots = sc->ts_replicas;
    else if (sc->sharing == SHARE_MPS)
        sc->slots = sc->mps_replicas;
    if (f && ((rc = conf_check_keys(d, f, "faults", fkeys, err)) ||
              (rc = conf_double(d, f, "per_tenant_per_hour", false, 0, 1e6,
                                &sc->knobs.fault_rate_per_h, err)) ||
              (rc = conf_duration(d, f, "restart", false, 0, &sc->restart_delay, err))))
        return rc;
    return 0;
}

/*
 * cost: { pricing: on_demand|reserved, gpu_hour_on_demand: P, gpu_hour_reserved: P,
 *         power_kwh: P, currency: USD }. The on-demand default is a public list price
 * (docs/scenario.md); a reserved price has no default and must be given to be used.
 */
static int load_cost(struct scenario *sc, const struct conf_node *root, struct conf_err *err)
{
    static const char *const keys[] = {"pricing",   "gpu_hour_on_demand", "gpu_hour_reserved",
                                       "power_kwh", "currency",           "boards",
                                       NULL};
    static const char *const bkeys[] = {"gpu_hour_on_demand", "gpu_hour_reserved", NULL};
    static const char *const pricings[] = {"on_demand", "reserved", NULL};
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *c = conf_get(root, "cost");
    /* AWS EC2 p4d.24xlarge (8 x A100-SXM4-40GB), us-east-1 on-demand: $32.77 an hour as
     * listed in 2024, i.e. $4.10 per GPU-hour. */
    double od = 4.10, rs = -1;
    int pricing = 0, rc;
    sc->cost =
        (struct cost_cfg){.on = c != NULL, .gpu_hour = od, .power_kwh = 0, .currency = "USD"};
    for (uint32_t i = 0; i < sc->npools; i++)
        sc->pools[i].gpu_hour = od;
    if (!c)
        return 0;
    if ((rc = conf_check_keys(d, c, "cost", keys, err)) ||
        (rc = conf_enum(d, c, "pricing", false, pricings, &pricing, err)) ||
        (rc = conf_double(d, c, "gpu_hour_on_demand", false, 0, 1e6, &od, err)) ||
        (rc = conf_double(d, c, "gpu_hour_reserved", false, 0, 1e6, &rs, err)) ||
        (rc = conf_double(d, c, "power_kwh", false, 0, 1e3, &sc->cost.power_kwh, err)) ||
        (rc = conf_string(d, c, "currency", false, &sc->cost.currency, err)))
        return rc;
    if (pricing == 1 && rs < 0)
        return conf_errf(err, d, conf_get(c, "pricing"), "pricing",
                         "'reserved' needs gpu_hour_reserved (there is no default reserved price)");
    sc->cost.gpu_hour = pricing == 1 ? rs : od;
    for (uint32_t i = 0; i < sc->npools; i++)
        sc->pools[i].gpu_hour = sc->cost.gpu_hour;
    /* cost.boards: {BOARD: {gpu_hour_on_demand, gpu_hour_reserved}} — a board's own prices. */
    const struct conf_node *b = conf_get(c, "boards");
    if (b && b->kind != CONF_MAP)
        return conf_errf(err, d, b, "boards", "expected a mapping of board to its prices");
    for (size_t i = 0; b && i < b->n; i++) {
        const struct gpu_spec *spec = gpu_spec_find(b->keys[i]);
        struct conf_node at = {.line = b->key_line[i], .col = b->key_col[i]};
        if (!spec) {
            char msg[256];
            gpu_spec_unknown_msg(msg, sizeof(msg), b->keys[i]);
            return conf_errf(err, d, &at, b->keys[i], "%s", msg);
        }
        const struct conf_node *e = b->items[i];
        double bod = -1, brs = -1;
        if ((rc = conf_check_keys(d, e, b->keys[i], bkeys, err)) ||
            (rc = conf_double(d, e, "gpu_hour_on_demand", false, 0, 1e6, &bod, err)) ||
            (rc = conf_double(d, e, "gpu_hour_reserved", false, 0, 1e6, &brs, err)))
            return rc;
        double price = pricing == 1 ? brs : bod;
        if (price < 0)
            return conf_errf(err, d, e, pricing == 1 ? "gpu_hour_reserved" : "gpu_hour_on_demand",
                             "missing: the %s price of %s (pricing: %s)",
                             pricing == 1 ? "reserved" : "on-demand", spec->name,
                             pricings[pricing]);
        for (uint32_t k = 0; k < sc->npools; k++)
            if (strcmp(sc->pools[k].spec->name, spec->name) == 0)
                sc->pools[k].gpu_hour = price;
    }
    return 0;
}

/*
 * The file a sharing_from names (FILE, a key of parent, or {file: FILE, config:
 * NAME}), resolved beside the scenario; *config is set when the mapping names
 * one (left as it is otherwise). NULL with err filled on a bad value.
 */
static char *sharing_from_path(const struct conf_doc *d, const struct conf_node *parent,
                               const struct conf_node *sf, const char **config,
                               struct conf_err *err)
{
    static const char *const keys[] = {"file", "config", NULL};
    if (sf->kind != CONF_MAP)
        return resolve_path(d, parent, "sharing_from", err);
    if (conf_check_keys(d, sf, "sharing_from", keys, err) ||
        conf_string(d, sf, "config", false, config, err))
        return NULL;
    return resolve_path(d, sf, "file", err);
}

/*
 * cluster.sharing_from: FILE or {file: FILE, config: NAME} — the sharing mode and its
 * replicas or MIG layout from a device-plugin or mig-parted config (sim/sharing_from.h).
 * The knob blocks (mig, timeSlicing, mps) may still tune what the file does not say.
 */
static int load_sharing_from(struct scenario *sc, const struct conf_node *c, struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *sf = conf_get(c, "sharing_from");
    const char *config = NULL;
    int rc;
    if (conf_get(c, "sharing"))
        return conf_errf(err, d, conf_get(c, "sharing"), "sharing",
                         "the sharing mode comes from sharing_from; give one or the other");
    char *path = sharing_from_path(d, c, sf, &config, err);
    if (!path)
        return -EINVAL;
    bool mp = false;
    uint32_t labelled = 0;
    if ((rc = sharing_from_is_migparted(path, &mp, err))) {
        free(path);
        return rc;
    }
    sc->from_migparted = mp;
    sc->from_path = path;
    for (uint32_t i = 0; mp && !config && sc->pools_given && i < sc->npools; i++)
        labelled += pool_label(&sc->pools[i], POOL_MIG_CONFIG_LABEL) != NULL;
    struct sharing_from out;
    if (labelled) {
        /* Per-node configurations, as the mig-manager reads them: each pool's label names its
         * own (resolve_pools reads its layout). The cluster shares by MIG when any enables it. */
        sc->sharing = SHARE_EXCLUSIVE;
        for (uint32_t i = 0; rc == 0 && i < sc->npools; i++) {
            const char *lab = pool_label(&sc->pools[i], POOL_MIG_CONFIG_LABEL);
            if (!lab)
                continue;
            rc = sharing_from_load(path, lab, sc->pools[i].spec, &out, err);
            if (rc == 0 && out.mode == SHARE_MIG)
                sc->sharing = SHARE_MIG;
        }
        return rc;
    }
    rc = sharing_from_load(path, config, sc->spec, &out, err);
    if (rc == 0) {
        sc->sharing = out.mode;
        sc->from_replicas = out.replicas;
        if (out.layout[0] && !(sc->from_layout = strdup(out.layout)))
            rc = -ENOMEM;
        if (out.ignored[0])
            snprintf(sc->warning, sizeof(sc->warning), "%s: read but not modelled: %s", path,
                     out.ignored);
    }
    return rc;
}

/*
 * A pool's own sharing_from (FILE or {file, config}; sim/sharing_from.h): the
 * device plugin's or mig-parted's configuration of its nodes, read for its
 * board. It gives the pool's mode (mig-parted: mig or whole cards; a
 * device-plugin file: timeslice or mps) whatever the cluster's, and says what
 * the pool's sharing, layout and replicas would say.
 */
static int load_pool_from(struct scenario *sc, struct pool_cfg *p, struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *sf = p->from_at;
    const struct conf_node *own[] = {p->sharing_at, conf_get(p->mig_at, "layout"),
                                     conf_get(p->ts_at, "replicas"),
                                     conf_get(p->mps_at, "replicas")};
    static const char *const own_keys[] = {"sharing", "layout", "replicas", "replicas"};
    for (size_t k = 0; k < 4; k++)
        if (own[k])
            return conf_errf(err, d, own[k], own_keys[k],
                             "pool '%s': its sharing_from says this; give one or the other",
                             p->name);
    const char *config = pool_label(p, POOL_MIG_CONFIG_LABEL);
    int rc;
    char *path = sharing_from_path(d, p->node, sf, &config, err);
    if (!path)
        return -EINVAL;
    bool mp = false;
    struct sharing_from out;
    if ((rc = sharing_from_is_migparted(path, &mp, err)) == 0)
        rc = sharing_from_load(path, mp ? config : NULL, p->spec, &out, err);
    if (rc == 0 && out.ignored[0] && !sc->warning[0])
        snprintf(sc->warning, sizeof(sc->warning), "%s: read but not modelled: %s", path,
                 out.ignored);
    free(path);
    if (rc)
        return rc;
    if (out.mode == SHARE_EXCLUSIVE) {
        p->whole = true;
        return 0;
    }
    /* A mode other than the cluster's makes a mixed fleet (resolve_pool_modes). */
    p->own_mode = out.mode != sc->sharing;
    p->mode = out.mode;
    if (out.mode == SHARE_MIG) {
        if (!(p->layout_own = strdup(out.layout)))
            return -ENOMEM;
        p->mig_layout = p->layout_own;
    } else {
        p->slots = out.replicas;
    }
    return 0;
}

/*
 * One pool's own sharing settings (cluster.pools[].mig / timeSlicing / mps and the
 * nvidia.com/mig.config label) within its mode (resolve_pool_modes): its own MIG layout
 * and speeds, or its own replicas. c is the cluster mapping (for the cluster layout's
 * position in messages).
 */
static int resolve_pool(struct scenario *sc, const struct conf_node *c, struct pool_cfg *p,
                        struct conf_err *err)
{
    static const char *const mkeys[] = {"layout", "speeds", NULL};
    static const char *const rkeys[] = {"replicas", NULL};
    static const char *const wide_mig[] = {"efficiency", "reconfig", "drain_grace", NULL};
    const struct conf_doc *d = &sc->doc;
    /* Its mode (resolve_pool_modes): whole cards, its own, or the cluster's. */
    enum share_mode pm = p->whole ? SHARE_EXCLUSIVE : p->own_mode ? p->mode : sc->sharing;
    const char *have = share_mode_name(pm);
    int rc;
    struct {
        const struct conf_node *at;
        const char *key;
        enum share_mode mode;
    } own[] = {{p->mig_at, "mig", SHARE_MIG},
               {p->ts_at, "timeSlicing", SHARE_TIMESLICE},
               {p->mps_at, "mps", SHARE_MPS}};
    for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
        if (!own[k].at)
            continue;
        if (p->whole)
            return conf_errf(err, d, own[k].at, own[k].key,
                             "pool '%s' takes whole cards (sharing: none): it has no %s settings",
                             p->name, own[k].key);
        if (pm != own[k].mode)
            return conf_errf(err, d, own[k].at, own[k].key,
                             "pool '%s': only in a pool that shares by %s (this one shares by "
                             "%s: its sharing, or the cluster's)",
                             p->name, share_mode_name(own[k].mode), have);
    }
    if (p->ts_at || p->mps_at) {
        const struct conf_node *t = p->ts_at ? p->ts_at : p->mps_at;
        const char *key = p->ts_at ? "timeSlicing" : "mps";
        for (size_t i = 0; i < t->n && t->kind == CONF_MAP; i++)
            if (strcmp(t->keys[i], "replicas"))
                return conf_errf(err, d, t->items[i], t->keys[i],
                                 "set for the whole cluster (cluster.%s.%s), not per pool; a "
                                 "pool sets only its replicas",
                                 key, t->keys[i]);
        if ((rc = conf_check_keys(d, t, key, rkeys, err)) ||
            (rc = get_u32(d, t, "replicas", true, 1, p->ts_at ? 64 : SHARE_MPS_MAX_CLIENTS,
                          &p->slots, err)))
            return rc;
    }
    /* A time-sliced or MPS pool in a cluster of another mode: the replicas of
     * cluster.timeSlicing / cluster.mps (else 4) unless it gives its own. */
    if (p->own_mode && p->slots == 0 && pm == SHARE_TIMESLICE)
        p->slots = sc->ts_replicas;
    if (p->own_mode && p->slots == 0 && pm == SHARE_MPS)
        p->slots = sc->mps_replicas;
    const char *label = pool_label(p, POOL_MIG_CONFIG_LABEL);
    if (p->own_mode && pm != SHARE_MIG && label && sc->from_migparted && !p->from_at) {
        /* A time-sliced or MPS pool whose label picks a mig-parted configuration: it must
         * leave MIG off (the device plugin then shares whole cards). */
        struct sharing_from out;
        if ((rc = sharing_from_load(sc->from_path, label, p->spec, &out, err)))
            return rc;
        if (out.mode == SHARE_MIG)
            return conf_errf(err, d, p->sharing_at ? p->sharing_at : p->node, "sharing",
                             "pool '%s' shares by %s but its label %s=%s enables MIG in %s "
                             "(time-slicing or MPS on MIG instances is not modelled)",
                             p->name, have, POOL_MIG_CONFIG_LABEL, label, sc->from_path);
    }
    /* MIG settings: a MIG pool, or a pool of whole cards in a MIG cluster (as before). */
    if (p->own_mode ? pm != SHARE_MIG : sc->sharing != SHARE_MIG)
        return 0;

    const struct conf_node *m = p->mig_at, *cm = conf_get(c, "mig");
    for (size_t i = 0; m && wide_mig[i]; i++)
        if (conf_get(m, wide_mig[i]))
            return conf_errf(err, d, conf_get(m, wide_mig[i]), wide_mig[i],
                             "set for the whole cluster (cluster.mig.%s), not per pool",
                             wide_mig[i]);
    if (m && ((rc = conf_check_keys(d, m, "mig", mkeys, err)) ||
              (rc = conf_string(d, m, "layout", false, &p->mig_layout, err))))
        return rc;
    if (label && sc->from_migparted && !p->from_at) {
        if (p->mig_layout || p->whole)
            return conf_errf(err, d,
                             p->mig_layout   ? conf_get(m, "layout")
                             : p->sharing_at ? p->sharing_at
                                             : p->node,
                             p->mig_layout ? "layout" : "sharing",
                             "pool '%s': its label %s=%s picks its configuration in %s; give "
                             "one or the other",
                             p->name, POOL_MIG_CONFIG_LABEL, label, sc->from_path);
        struct sharing_from out;
        if ((rc = sharing_from_load(sc->from_path, label, p->spec, &out, err)))
            return rc;
        if (out.mode != SHARE_MIG)
            p->whole = true; /* mig-enabled: false */
        else if (!(p->layout_own = strdup(out.layout)))
            return -ENOMEM;
        p->mig_layout = p->layout_own;
    }
    if (p->whole)
        return 0;
    if (!p->spec->mig_capable)
        return conf_errf(err, d, p->sharing_at ? p->sharing_at : p->node, "sharing",
                         "pool '%s': %s has no MIG profiles", p->name, p->spec->name);
    const char *layout = p->mig_layout ? p->mig_layout : sc->mig_layout;
    const struct conf_node *at =
        p->mig_layout ? (m ? conf_get(m, "layout") : NULL) : conf_get(cm, "layout");
    if (!layout)
        return conf_errf(err, d,
                         m               ? m
                         : p->sharing_at ? p->sharing_at
                                         : c,
                         "layout",
                         "pool '%s' has no MIG layout: give it mig.layout, a cluster.mig.layout, "
                         "a label %s with a mig-parted sharing_from, or sharing: none",
                         p->name, POOL_MIG_CONFIG_LABEL);
    struct mig_layout l;
    char msg[400];
    if (mig_layout_check(p->spec, layout, &l, msg, sizeof(msg)))
        return conf_errf(err, d, at ? at : c, "layout", "pool '%s' (%s): %s", p->name,
                         p->spec->name, msg);
    p->mig_layout = layout; /* every MIG pool names its layout (sim_init lays out by pool) */
    /* Its board's MIG speeds: the cluster's efficiency and speeds, then its own speeds. */
    if (!conf_get(m, "speeds") && strcmp(p->spec->name, sc->spec->name) == 0) {
        p->mig = sc->mig;
        return 0;
    }
    if (mig_knobs_init(&p->mig, p->spec))
        return conf_errf(err, d, c, "sharing", "%s has no MIG profiles", p->spec->name);
    mig_knobs_set_efficiency(&p->mig, sc->mig.efficiency);
    p->mig.reconfig_s = sc->mig.reconfig_s;
    p->mig.drain_grace_s = sc->mig.drain_grace_s;
    /* The cluster's speeds first (a profile of another board is skipped), then its own. */
    if ((rc = load_mig_speeds(d, conf_get(cm, "speeds"), &p->mig, p->spec, NULL, false, err)))
        return rc;
    return load_mig_speeds(d, conf_get(m, "speeds"), &p->mig, p->spec, NULL, true, err);
}

/*
 * Every pool's mode, before the knob blocks are read (load_sharing checks them against
 * the modes in use): its sharing_from, else its `sharing` (none / exclusive: whole
 * cards), else the cluster's. When every pool that shares at all shares by one mode
 * other than the cluster's, that mode becomes the cluster's (and pools left on the
 * cluster's exclusive mode take whole cards): the file means the same as one that set
 * cluster.sharing, and runs as such. Pools of two or more modes are a mixed fleet
 * (sc->mixed).
 */
static int resolve_pool_modes(struct scenario *sc, struct conf_err *err)
{
    static const char *const modes[] = {"none", "exclusive", "timeslice", "mps", "mig", NULL};
    const struct conf_doc *d = &sc->doc;
    int rc;
    for (uint32_t i = 0; sc->pools_given && i < sc->npools; i++) {
        struct pool_cfg *p = &sc->pools[i];
        if (p->from_at) {
            if ((rc = load_pool_from(sc, p, err)))
                return rc;
            continue;
        }
        if (!p->sharing_at)
            continue;
        int m = 0;
        if ((rc = conf_enum(d, p->node, "sharing", true, modes, &m, err)))
            return rc;
        if (m <= 1) {
            p->whole = true;
        } else {
            p->mode = (enum share_mode)(m - 1);
            p->own_mode = p->mode != sc->sharing;
        }
    }
    uint32_t shared = 0; /* modes of the pools that share (bit per mode) */
    for (uint32_t i = 0; i < sc->npools; i++) {
        enum share_mode m = scenario_pool_mode(sc, i);
        if (m != SHARE_EXCLUSIVE)
            shared |= 1u << m;
    }
    sc->mixed = shared & (shared - 1);
    sc->pools_moded = sc->mixed;
    if (sc->mixed || !shared || shared == 1u << sc->sharing)
        return 0;
    sc->pools_moded = true;
    /* One mode M, not the cluster's: the cluster's now. */
    enum share_mode one = shared & (1u << SHARE_TIMESLICE) ? SHARE_TIMESLICE
                          : shared & (1u << SHARE_MPS)     ? SHARE_MPS
                                                           : SHARE_MIG;
    for (uint32_t i = 0; i < sc->npools; i++) {
        struct pool_cfg *p = &sc->pools[i];
        if (scenario_pool_mode(sc, i) == SHARE_EXCLUSIVE)
            p->whole = true;
        p->own_mode = false;
    }
    sc->sharing = one;
    return 0;
}

/* Every pool's own settings (resolve_pool); the single-pool form has none. */
static int resolve_pools(struct scenario *sc, const struct conf_node *c, struct conf_err *err)
{
    int rc = 0;
    for (uint32_t i = 0; sc->pools_given && rc == 0 && i < sc->npools; i++)
        rc = resolve_pool(sc, c, &sc->pools[i], err);
    return rc;
}

/* The single-pool form: cluster.gpu, nodes, gpus_per_node, spec; one pool "default". */
static int load_single_pool(struct scenario *sc, const struct conf_node *c, struct conf_err *err)
{
    static const char *const skeys[] = {"tdp_w", "idle_w", "memory_gb", "sms", NULL};
    const struct conf_doc *d = &sc->doc;
    const char *gpu = "a100-sxm4-80gb";
    int rc;
    if ((rc = conf_string(d, c, "gpu", false, &gpu, err)))
        return rc;
    sc->spec = gpu_spec_find(gpu);
    if (!sc->spec) {
        char msg[256];
        gpu_spec_unknown_msg(msg, sizeof(msg), gpu);
        return conf_errf(err, d, conf_get(c, "gpu"), "gpu", "%s", msg);
    }
    /* cluster.spec: override the board's published numbers (models/gpu.c). */
    sc->spec_own = *sc->spec;
    sc->spec = &sc->spec_own;
    sc->gpu = sc->spec->name;
    const struct conf_node *sp = conf_get(c, "spec");
    if (sp) {
        int64_t mem = sc->spec_own.memory_gb, sms = sc->spec_own.sms;
        if ((rc = conf_check_keys(d, sp, "spec", skeys, err)) ||
            (rc = conf_double(d, sp, "tdp_w", false, 1, 5000, &sc->spec_own.tdp_w, err)) ||
            (rc = conf_double(d, sp, "idle_w", false, 0, 5000, &sc->spec_own.idle_w, err)) ||
            (rc = conf_int(d, sp, "memory_gb", false, 1, 4096, &mem, err)) ||
            (rc = conf_int(d, sp, "sms", false, 1, 4096, &sms, err)))
            return rc;
        if (sc->spec_own.idle_w > sc->spec_own.tdp_w)
            return conf_errf(err, d, sp, "idle_w", "expected idle_w <= tdp_w");
        sc->spec_own.memory_gb = (int)mem;
        sc->spec_own.sms = (int)sms;
    }
    if ((rc = get_u32(d, c, "nodes", true, 1, 1 << 16, &sc->nodes, err)))
        return rc;
    sc->gpus_per_node = 8;
    if ((rc = get_u32(d, c, "gpus_per_node", false, 1, 16, &sc->gpus_per_node, err)))
        return rc;
    sc->pools = calloc(1, sizeof(*sc->pools));
    if (!sc->pools)
        return -ENOMEM;
    sc->npools = 1;
    sc->pools[0] = (struct pool_cfg){.name = "default",
                                     .spec = sc->spec,
                                     .nodes = sc->nodes,
                                     .gpus_per_node = sc->gpus_per_node,
                                     .train_speed = sc->spec->train_speed,
                                     .infer_speed = sc->spec->infer_speed};
    return 0;
}

static int load_root(struct scenario *sc, struct conf_err *err)
{
    static const char *const keys[] = {"name",     "seed",    "duration", "sample_interval",
                                       "timezone", "cluster", "services", "training",
                                       "policy",   "output",  "cost",     NULL};
    static const char *const ckeys[] = {"gpu",  "nodes",       "gpus_per_node", "sharing",
                                        "mig",  "timeSlicing", "mps",           "faults",
                                        "spec", "pools",       "sharing_from",  NULL};
    static const char *const okeys[] = {"per_gpu_timeseries", "warmup", NULL};
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *root = d->root;
    int rc, sharing = SHARE_EXCLUSIVE;

    if (!root) {
        struct conf_node top = {.line = 1, .col = 1};
        return conf_errf(err, d, &top, NULL, "empty scenario (expected a mapping)");
    }
    if ((rc = conf_check_keys(d, root, NULL, keys, err)))
        return rc;
    sc->name = "unnamed";
    if ((rc = conf_string(d, root, "name", false, &sc->name, err)) ||
        (conf_get(root, "name") && (rc = check_plain_name(d, root, sc->name, err))))
        return rc;
    int64_t seed = 1;
    if ((rc = conf_int(d, root, "seed", false, 0, INT64_MAX, &seed, err)))
        return rc;
    sc->seed = (uint64_t)seed;
    if ((rc = conf_duration(d, root, "duration", true, SIM_SEC, &sc->duration, err)))
        return rc;
    sc->sample_interval = 60 * SIM_SEC;
    if ((rc = conf_duration(d, root, "sample_interval", false, SIM_SEC, &sc->sample_interval, err)))
        return rc;
    const char *tz = "UTC";
    if ((rc = conf_string(d, root, "timezone", false, &tz, err)))
        return rc;
    if (parse_tz(tz, &sc->tz_offset_min) < 0)
        return conf_errf(err, d, conf_get(root, "timezone"), "timezone",
                         "expected an offset like '+08:00' or 'UTC', got '%.40s'", tz);

    const struct conf_node *c = conf_get(root, "cluster");
    if (!c)
        return conf_errf(err, d, root, "cluster", "missing (expected a mapping)");
    if ((rc = conf_check_keys(d, c, "cluster", ckeys, err)))
        return rc;
    const struct conf_node *pl = conf_get(c, "pools");
    if (pl) {
        static const char *const single[] = {"gpu", "nodes", "gpus_per_node", "spec", NULL};
        for (size_t k = 0; single[k]; k++)
            if (conf_get(c, single[k]))
                return conf_errf(err, d, conf_get(c, single[k]), single[k],
                                 "give either cluster.pools or the single-pool keys (gpu, nodes, "
                                 "gpus_per_node, spec), not both");
        if ((rc = pool_cfg_load(d, pl, &sc->pools, &sc->npools, err)))
            return rc;
        sc->pools_given = true;
        sc->spec_own = *sc->pools[0].spec;
        sc->spec = &sc->spec_own;
        sc->gpu = sc->spec->name;
        sc->nodes = 0;
        for (uint32_t i = 0; i < sc->npools; i++)
            sc->nodes += sc->pools[i].nodes;
        sc->gpus_per_node = 0; /* the largest node */
        for (uint32_t i = 0; i < sc->npools; i++)
            if (sc->pools[i].gpus_per_node > sc->gpus_per_node)
                sc->gpus_per_node = sc->pools[i].gpus_per_node;
    } else if ((rc = load_single_pool(sc, c, err)))
        return rc;
    if (conf_get(c, "sharing_from")) {
        if ((rc = load_sharing_from(sc, c, err)))
            return rc;
    } else {
        if ((rc = conf_enum(d, c, "sharing", false, sharing_names, &sharing, err)))
            return rc;
        sc->sharing = (enum share_mode)sharing;
    }
    if ((rc = resolve_pool_modes(sc, err)) || (rc = load_sharing(sc, c, err)) ||
        (rc = resolve_pools(sc, c, err)))
        return rc;

    const struct conf_node *o = conf_get(root, "output");
    sc->per_gpu_timeseries = true;
    if (o && ((rc = conf_check_keys(d, o, "output", okeys, err)) ||
              (rc = conf_bool(d, o, "per_gpu_timeseries", false, &sc->per_gpu_timeseries, err)) ||
              (rc = conf_duration(d, o, "warmup", false, 0, &sc->warmup, err))))
        return rc;
    if (sc->warmup >= sc->duration)
        return conf_errf(err, d, conf_get(o, "warmup"), "warmup",
                         "expected a warm-up shorter than the duration");

    if ((rc = load_cost(sc, root, err)))
        return rc;
    if ((rc = load_services(sc, root, err)) || (rc = load_training(sc, root, err)) ||
        (rc = load_policy(sc, root, err)) || (rc = load_snapshot(sc, err)))
        return rc;

    /* Cross-checks. A `require` no pool meets can never be placed. */
    const struct conf_node *svn = conf_get(root, "services"), *trn = conf_get(root, "training");
    for (size_t i = 0; i < sc->nservices; i++)
        if (sc->services[i].place.require.given &&
            !pool_match_mask(sc->pools, sc->npools, &sc->services[i].place.require))
            return conf_errf(err, d, conf_get(svn->items[i], "require"), "require",
                             "no pool matches (service '%s' could never be placed)",
                             sc->services[i].name);
    if (sc->training.place.require.given &&
        !pool_match_mask(sc->pools, sc->npools, &sc->training.place.require))
        return conf_errf(err, d, conf_get(trn, "require"), "require",
                         "no pool matches (no training job could ever be placed)");
    uint32_t want = 0; /* cards: an LLM replica holds tensor_parallel of them */
    for (size_t i = 0; i < sc->nservices; i++)
        want += sc->services[i].replicas *
                (sc->services[i].kind == SVC_LLM ? sc->services[i].llm->tp : 1);
    const struct conf_node *p = conf_get(root, "policy");
    if (sc->policy.inference_gpus == 0)
        sc->policy.inference_gpus = want ? want : (uint32_t)sc->nservices;
    if (want > sc->policy.inference_gpus)
        return conf_errf(err, d, p ? p : root, "inference_gpus",
                         "services ask for %u replicas but the inference pool has %u GPUs", want,
                         sc->policy.inference_gpus);
    if (sc->nservices && sc->policy.inference_gpus < sc->nservices)
        return conf_errf(err, d, p ? p : root, "inference_gpus",
                         "expected at least one GPU per service (%zu services)", sc->nservices);
    return 0;
}

static int finish_load(struct scenario *sc, int rc, struct conf_err *err)
{
    if (rc == 0)
        rc = load_root(sc, err);
    if (rc && !err->msg[0]) /* a refusal without its own message: an allocation that failed */
        snprintf(err->msg, sizeof(err->msg), "%s: %s", sc->path ? sc->path : "scenario",
                 rc == -ENOMEM ? "out of memory" : strerror(rc < 0 ? -rc : rc));
    if (rc)
        scenario_release(sc);
    return rc;
}

int scenario_load(struct scenario *sc, const char *path, struct conf_err *err)
{
    memset(sc, 0, sizeof(*sc));
    sc->path = path;
    err->msg[0] = '\0';
    return finish_load(sc, conf_load_file(&sc->doc, path, err), err);
}

int scenario_load_string(struct scenario *sc, const char *name, const char *text,
                         struct conf_err *err)
{
    memset(sc, 0, sizeof(*sc));
    sc->path = name;
    err->msg[0] = '\0';
    return finish_load(sc, conf_load_string(&sc->doc, name, text, err), err);
}

int scenario_load_set(struct scenario *sc, const char *path, const char *text,
                      const char *const *sets, size_t nsets, struct conf_err *err)
{
    memset(sc, 0, sizeof(*sc));
    sc->path = path;
    err->msg[0] = '\0';
    int rc =
        text ? conf_load_string(&sc->doc, path, text, err) : conf_load_file(&sc->doc, path, err);
    if (rc == 0)
        rc = override_apply(&sc->doc, sets, nsets, err);
    return finish_load(sc, rc, err);
}

void scenario_release(struct scenario *sc)
{
    if (sc->policy.ops && sc->policy.ops->free_cfg)
        sc->policy.ops->free_cfg(sc->policy.cfg);
    free(sc->policy.warning);
    sc->policy.warning = NULL;
    sc->policy.cfg = NULL;
    for (size_t i = 0; sc->services && i < sc->nservices; i++) {
        free(sc->services[i].trace.path);
        free(sc->services[i].llm);
        placement_release(&sc->services[i].place);
    }
    free(sc->training.trace.path);
    sc->training.trace.path = NULL;
    free(sc->training.snapshot_path);
    sc->training.snapshot_path = NULL;
    free(sc->training.snap);
    sc->training.snap = NULL;
    sc->training.nsnap = 0;
    gpu_type_map_release(&sc->training.trace.gpu_types);
    placement_release(&sc->training.place);
    pool_cfg_release(sc->pools, sc->npools);
    sc->pools = NULL;
    sc->npools = 0;
    free(sc->from_layout);
    sc->from_layout = NULL;
    free(sc->from_path);
    sc->from_path = NULL;
    free(sc->services);
    sc->services = NULL;
    sc->nservices = 0;
    conf_release(&sc->doc);
}
