/* plan_file.c — a plan file read and checked (plan.h). */
#include "sim/driver/plan.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario.h"

#ifndef TIDESIM_VERSION
#define TIDESIM_VERSION "unknown"
#endif
#ifndef TIDESIM_GIT
#define TIDESIM_GIT "unknown"
#endif

/* A share: "99%" or a fraction 0..1. */
static int parse_share(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return -EINVAL;
    if (!strcmp(end, "%")) {
        *out = v / 100;
        return v <= 100 ? 0 : -EINVAL;
    }
    if (*end || v > 1)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_num(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0)
        return -EINVAL;
    *out = v;
    return 0;
}

static void gates_text_add(struct plan *pl, const char *key, const char *val)
{
    size_t k = strlen(pl->gates_text);
    snprintf(pl->gates_text + k, sizeof(pl->gates_text) - k, "%s%s %s", k ? ", " : "", key, val);
}

static int load_gates(struct plan *pl, const struct conf_node *g, struct conf_err *err)
{
    const struct conf_doc *doc = &pl->sw.doc;
    static const char *const keys[] = {"min-util",
                                       "util-kind",
                                       "min-slo",
                                       "max-ckpt-overhead",
                                       "max-p99-ms",
                                       "max-ttft-p99",
                                       "max-tpot-p99",
                                       "max-queue-delay",
                                       "min-training-gpu-h-per-day",
                                       "backlog-drained-by",
                                       "min",
                                       "max",
                                       NULL};
    if (!g || g->kind != CONF_MAP || g->n == 0)
        return conf_errf(err, doc, g ? g : doc->root, "gates",
                         "expected a mapping of tidesim check's gates, e.g. min-slo: 99%%");
    if (conf_check_keys(doc, g, "gates", keys, err))
        return -EINVAL;
    check_gates_init(&pl->gates);
    pl->gates.confident = true;
    size_t ngates = 0;
    for (size_t i = 0; i < g->n; i++) {
        const char *k = g->keys[i];
        const struct conf_node *v = g->items[i];
        if (!strcmp(k, "min") || !strcmp(k, "max")) {
            if (v->kind != CONF_MAP || v->n == 0)
                return conf_errf(err, doc, v, k,
                                 "expected a mapping of /summary keys to bounds, e.g. "
                                 "cost_total: 20000");
            for (size_t j = 0; j < v->n; j++) {
                const struct conf_node *b = v->items[j];
                char kv[256];
                if (b->kind != CONF_SCALAR)
                    return conf_errf(err, doc, b, v->keys[j], "expected a value");
                snprintf(kv, sizeof(kv), "%s=%s", v->keys[j], b->value);
                int rc = check_add_bound(&pl->gates, kv, k[1] == 'i' ? 1 : -1);
                if (rc)
                    return conf_errf(err, doc, b, v->keys[j],
                                     rc == -ENOSPC ? "too many gates (at most %d)"
                                                   : "expected KEY: VALUE (at most %d gates)",
                                     CHECK_MAX_BOUNDS);
                char name[160];
                snprintf(name, sizeof(name), "%s %s", k, v->keys[j]);
                gates_text_add(pl, name, b->value);
                ngates++;
            }
            continue;
        }
        if (v->kind != CONF_SCALAR)
            return conf_errf(err, doc, v, k, "expected a value");
        const char *s = v->value;
        int bad = 0;
        const char *want = "";
        if (!strcmp(k, "util-kind")) {
            if (!strcmp(s, "busy"))
                pl->gates.util_kind = CHECK_UTIL_BUSY;
            else if (!strcmp(s, "allocated"))
                pl->gates.util_kind = CHECK_UTIL_ALLOCATED;
            else if (!strcmp(s, "useful"))
                pl->gates.util_kind = CHECK_UTIL_USEFUL;
            else
                return conf_errf(err, doc, v, k, "expected busy, allocated or useful, got '%s'", s);
            continue;
        } else if (!strcmp(k, "min-util") || !strcmp(k, "min-slo") ||
                   !strcmp(k, "max-ckpt-overhead")) {
            double *dst = !strcmp(k, "min-util")  ? &pl->gates.min_util
                          : !strcmp(k, "min-slo") ? &pl->gates.min_slo
                                                  : &pl->gates.max_ckpt_overhead;
            bad = parse_share(s, dst);
            want = "a fraction 0..1 or a percentage (99%)";
        } else if (!strcmp(k, "max-p99-ms") || !strcmp(k, "max-ttft-p99") ||
                   !strcmp(k, "max-tpot-p99")) {
            double *dst = !strcmp(k, "max-p99-ms")     ? &pl->gates.max_p99_ms
                          : !strcmp(k, "max-ttft-p99") ? &pl->gates.max_ttft_p99_ms
                                                       : &pl->gates.max_tpot_p99_ms;
            bad = parse_num(s, dst);
            want = "a non-negative number of ms";
        } else if (!strcmp(k, "min-training-gpu-h-per-day")) {
            bad = parse_num(s, &pl->gates.min_train_gpuh_day);
            want = "a non-negative number of GPU-hours";
        } else {
            sim_time t;
            bad = conf_parse_duration(s, &t);
            if (!bad)
                *(!strcmp(k, "max-queue-delay") ? &pl->gates.max_queue_delay_s
                                                : &pl->gates.backlog_by_s) = sim_time_to_sec(t);
            want = "a duration with a unit (90min, 2h, 1d)";
        }
        if (bad)
            return conf_errf(err, doc, v, k, "expected %s, got '%s'", want, s);
        gates_text_add(pl, k, s);
        ngates++;
    }
    if (ngates == 0)
        return conf_errf(err, doc, g, "gates", "no gate given (util-kind alone gates nothing)");
    return 0;
}

/* The size axis from `size: {key, from, to, step}` or `{key, values}`. */
static int load_size(struct plan *pl, const struct conf_node *sz, struct conf_err *err)
{
    struct sweep *sw = &pl->sw;
    static const char *const keys[] = {"key", "from", "to", "step", "values", NULL};
    if (!sz || sz->kind != CONF_MAP)
        return conf_errf(err, &sw->doc, sz ? sz : sw->doc.root, "size",
                         "expected {key: cluster.nodes, from: 2, to: 16} or {key: K, values: "
                         "[...]}");
    if (conf_check_keys(&sw->doc, sz, "size", keys, err))
        return -EINVAL;
    const char *key = "cluster.nodes";
    if (conf_get(sz, "key") && conf_string(&sw->doc, sz, "key", true, &key, err))
        return -EINVAL;
    const struct conf_node *vals = conf_get(sz, "values");
    int rc;
    if (vals) {
        if (conf_get(sz, "from") || conf_get(sz, "to") || conf_get(sz, "step"))
            return conf_errf(err, &sw->doc, vals, "values",
                             "give either values or from/to/step, not both");
        if (vals->kind != CONF_SEQ)
            return conf_errf(err, &sw->doc, vals, "values", "expected a list of sizes");
        rc = sweep_add_axis(sw, key, vals->line, vals->col, vals, err);
    } else {
        if (!conf_get(sz, "from") || !conf_get(sz, "to"))
            return conf_errf(err, &sw->doc, sz, "size", "expected from: and to: (or values:)");
        /* The range without `key`, and with step 1 when none is given. */
        struct conf_node r = {.kind = CONF_MAP, .line = sz->line, .col = sz->col};
        const char *rk[3];
        struct conf_node *ri[3];
        unsigned rl[3], rcl[3];
        struct conf_node one = {.kind = CONF_SCALAR, .value = "1"};
        static const char *const names[] = {"from", "to", "step"};
        for (size_t i = 0; i < 3; i++) {
            const struct conf_node *n = conf_get(sz, names[i]);
            rk[r.n] = names[i];
            ri[r.n] = n ? (struct conf_node *)n : &one;
            rl[r.n] = n ? n->line : sz->line;
            rcl[r.n] = n ? n->col : sz->col;
            r.n++;
        }
        r.keys = rk;
        r.items = ri;
        r.key_line = rl;
        r.key_col = rcl;
        rc = sweep_add_axis(sw, key, sz->line, sz->col, &r, err);
    }
    if (rc)
        return rc;
    const struct sweep_axis *ax = &sw->axes[sw->naxes - 1];
    pl->nsizes = ax->n;
    pl->size_num = calloc(ax->n, sizeof(double));
    if (!pl->size_num)
        return -ENOMEM;
    for (size_t i = 0; i < ax->n; i++) {
        char *end;
        errno = 0;
        double v = strtod(ax->vals[i], &end);
        struct conf_node at = {.line = ax->line[i], .col = ax->col[i]};
        sim_time t;
        if ((errno || end == ax->vals[i] || *end || !isfinite(v)) &&
            conf_parse_duration(ax->vals[i], &t) == 0)
            v = sim_time_to_sec(t), end = (char *)"", errno = 0; /* a duration: its seconds */
        if (errno || end == ax->vals[i] || *end || !isfinite(v))
            return conf_errf(err, &sw->doc, &at, key,
                             "a size is a number or a duration (the plan looks for the "
                             "smallest); got '%s'",
                             ax->vals[i]);
        if (i && !(v > pl->size_num[i - 1]))
            return conf_errf(err, &sw->doc, &at, key,
                             "sizes must increase: %s after %s (write the range upwards)",
                             ax->vals[i], ax->vals[i - 1]);
        pl->size_num[i] = v;
    }
    return 0;
}

/* Has the base scenario a cost block? -1 when it does not load (plan_validate says why). */
static int base_has_cost(const struct sweep *sw)
{
    struct scenario sc;
    struct conf_err e;
    if (scenario_load_set(&sc, sw->base_path, sw->base_text, NULL, 0, &e))
        return -1;
    int on = sc.cost.on;
    scenario_release(&sc);
    return on;
}

int plan_load(struct plan *pl, const char *path, struct conf_err *err)
{
    memset(pl, 0, sizeof(*pl));
    struct sweep *sw = &pl->sw;
    pl->cost_axis = SIZE_MAX;
    pl->reps_min = 3;
    pl->reps_max = 10;
    sw->reps = 1;
    int rc = conf_load_file(&sw->doc, path, err);
    if (rc)
        return rc;
    rc = -EINVAL;
    if (!(sw->path = strdup(path))) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        rc = -ENOMEM;
        goto fail;
    }
    const struct conf_node *root = sw->doc.root;
    static const char *const keys[] = {"base", "size",         "choices",   "mode",   "gates",
                                       "set",  "replications", "objective", "search", NULL};
    static const char *const modes[] = {"grid", "zip", NULL};
    static const char *const objectives[] = {"cost", "gpus", NULL};
    static const char *const searches[] = {"bisect", "scan", NULL};
    const char *base = NULL;
    int mode = 0, obj = 0, search = 0;
    if (!root) {
        snprintf(err->msg, sizeof(err->msg), "%s: empty plan file (expected base:, size:, gates:)",
                 path);
        goto fail;
    }
    if (conf_check_keys(&sw->doc, root, NULL, keys, err) ||
        conf_string(&sw->doc, root, "base", true, &base, err) ||
        conf_enum(&sw->doc, root, "mode", false, modes, &mode, err) ||
        conf_enum(&sw->doc, root, "objective", false, objectives, &obj, err) ||
        conf_enum(&sw->doc, root, "search", false, searches, &search, err))
        goto fail;
    pl->objective = obj == 1 ? PLAN_GPUS : PLAN_COST;
    pl->search = search == 1 ? PLAN_SCAN : PLAN_BISECT;
    const struct conf_node *reps = conf_get(root, "replications");
    if (reps && reps->kind == CONF_MAP) {
        static const char *const rk[] = {"min", "max", NULL};
        int64_t lo = 3, hi = 10;
        if (conf_check_keys(&sw->doc, reps, "replications", rk, err) ||
            conf_int(&sw->doc, reps, "min", false, 2, 1000, &lo, err) ||
            conf_int(&sw->doc, reps, "max", false, 2, 1000, &hi, err))
            goto fail;
        if (hi < lo) {
            conf_errf(err, &sw->doc, conf_get(reps, "max"), "max",
                      "expected at least min (%lld), got %lld", (long long)lo, (long long)hi);
            goto fail;
        }
        pl->reps_min = (unsigned)lo;
        pl->reps_max = (unsigned)hi;
    } else if (reps) {
        int64_t r = 3;
        if (conf_int(&sw->doc, root, "replications", false, 2, 1000, &r, err))
            goto fail;
        pl->reps_min = pl->reps_max = (unsigned)r;
    }
    if ((rc = sweep_set_base(sw, base, conf_get(root, "base"), err)))
        goto fail;
    rc = -EINVAL;
    const struct conf_node *ch = conf_get(root, "choices");
    if (ch) {
        if (ch->kind != CONF_MAP || ch->n == 0) {
            conf_errf(err, &sw->doc, ch, "choices",
                      "expected a mapping of dotted scenario paths to values, e.g. "
                      "policy.name: [kueue, tidal]");
            goto fail;
        }
        for (size_t a = 0; a < ch->n; a++)
            if (sweep_add_axis(sw, ch->keys[a], ch->key_line[a], ch->key_col[a], ch->items[a], err))
                goto fail;
    } else if (mode) {
        conf_errf(err, &sw->doc, conf_get(root, "mode"), "mode",
                  "mode zip pairs choices; no "
                  "choices: given");
        goto fail;
    }
    pl->nchoice_axes = sw->naxes;
    sw->zip = mode == 1;
    sw->nzip = sw->zip ? sw->naxes : 0;
    /* set: fixed overrides of every probe (one value each), e.g. duration: 3d */
    const struct conf_node *fixed = conf_get(root, "set");
    if (fixed && (fixed->kind != CONF_MAP || fixed->n == 0)) {
        conf_errf(err, &sw->doc, fixed, "set",
                  "expected a mapping of dotted scenario paths to one value each, e.g. "
                  "duration: 3d");
        goto fail;
    }
    for (size_t a = 0; fixed && a < fixed->n; a++) {
        if (fixed->items[a]->kind == CONF_SEQ) {
            conf_errf(err, &sw->doc, fixed->items[a], fixed->keys[a],
                      "set: takes one value per key (several values: choices:)");
            goto fail;
        }
        pl->hidden |= 1u << sw->naxes;
        if (sweep_add_axis(sw, fixed->keys[a], fixed->key_line[a], fixed->key_col[a],
                           fixed->items[a], err))
            goto fail;
    }
    /* Prices for the table: a base without a cost block is priced at the default list
     * price (docs/scenario.md "cost"), through the same --set as any override. */
    int cost = base_has_cost(sw);
    if (cost == 0) {
        static const struct conf_node od = {.kind = CONF_SCALAR, .value = "on_demand"};
        pl->cost_axis = sw->naxes;
        pl->hidden |= 1u << sw->naxes;
        if (sweep_add_axis(sw, "cost.pricing", root->line, root->col, &od, err))
            goto fail;
    }
    if (load_size(pl, conf_get(root, "size"), err))
        goto fail;
    if (load_gates(pl, conf_get(root, "gates"), err))
        goto fail;
    if (sweep_count(sw, root, err))
        goto fail;
    pl->nchoices = sw->npoints / pl->nsizes;
    const char *parts[] = {"tidesim-plan-1", sw->base_text, TIDESIM_VERSION, TIDESIM_GIT,
                           sw->axes[sw->naxes - 1].path};
    sweep_hash(parts, sizeof(parts) / sizeof(parts[0]), pl->hash);
    memcpy(sw->hash, pl->hash, sizeof(pl->hash));
    return 0;
fail:
    plan_release(pl);
    return rc;
}

void plan_release(struct plan *pl)
{
    sweep_release(&pl->sw);
    free(pl->size_num);
    memset(pl, 0, sizeof(*pl));
}

int plan_validate(const struct plan *pl, struct conf_err *err)
{
    return sweep_validate(&pl->sw, err);
}
