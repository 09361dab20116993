/* plan.c — the smallest passing cluster per choice, by bisection or scan (plan.h). */
#include "sim/driver/plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/h5io.h"
#include "analysis/merge.h"
#include "analysis/results.h"
#include "analysis/stats.h"
#include "analysis/sweepidx.h"
#include "sim/driver/dispatch.h"
#include "sim/scenario.h"

#ifndef TIDESIM_VERSION
#define TIDESIM_VERSION "unknown"
#endif
#ifndef TIDESIM_GIT
#define TIDESIM_GIT "unknown"
#endif

#define WHO "tidesim plan"

/* ---- the plan file ------------------------------------------------------------------------ */

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
        } else if (!strcmp(k, "max-p99-ms")) {
            bad = parse_num(s, &pl->gates.max_p99_ms);
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

/* ---- probe files ------------------------------------------------------------------------ */

/* FNV-1a 32 bits of the point's overrides: the probe's identity in its file name. */
static uint32_t sets_hash(char *const *sets, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        for (const char *p = sets[i];; p++) {
            h ^= (unsigned char)*p;
            h *= 16777619u;
            if (!*p)
                break;
        }
    return h;
}

/*
 * "probes/NAME" of point p (no extension): NAME is each override's last path
 * component and value (letters, digits, '.', '-' kept, the rest '_'), cut to 80
 * characters, and 8 hex digits of the overrides' exact text.
 */
static int probe_stem(const struct plan *pl, size_t p, char *buf, size_t n)
{
    char *sets[SWEEP_MAX_AXES];
    if (sweep_point_sets(&pl->sw, p, sets))
        return -ENOMEM;
    char name[96] = "";
    size_t k = 0;
    for (size_t a = 0; a < pl->sw.naxes; a++) {
        if (pl->hidden & (1u << a))
            continue;
        const char *dot = strrchr(pl->sw.axes[a].path, '.');
        const char *leaf = dot ? dot + 1 : pl->sw.axes[a].path;
        const char *v = pl->sw.axes[a].vals[sweep_value_index(&pl->sw, p, a)];
        char part[200];
        snprintf(part, sizeof(part), "%s%s-%s", k ? "_" : "", leaf, v);
        for (const char *q = part; *q && k + 1 < 81; q++) {
            char c = *q;
            bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
            name[k++] = keep ? c : '_';
        }
        name[k] = 0;
    }
    uint32_t h = sets_hash(sets, pl->sw.naxes);
    for (size_t a = 0; a < pl->sw.naxes; a++)
        free(sets[a]);
    snprintf(buf, n, "probes/%s-%08x", name, h);
    return 0;
}

static int rep_path(const struct plan *pl, const char *dir, size_t p, unsigned r, char *buf,
                    size_t n)
{
    char stem[160];
    if (probe_stem(pl, p, stem, sizeof(stem)))
        return -ENOMEM;
    snprintf(buf, n, "%s/%s.rep%04u.h5", dir, stem, r);
    return 0;
}

int plan_task(void *ctx, const struct dispatch_task *t)
{
    const struct plan_task_ctx *c = ctx;
    if (t->a >= c->pl->sw.npoints || t->b >= c->pl->reps_max)
        return 1;
    char path[PATH_MAX];
    if (rep_path(c->pl, c->dir, (size_t)t->a, (unsigned)t->b, path, sizeof(path)))
        return 1;
    return sweep_run_seed_here(&c->pl->sw, (size_t)t->a, t->b, path, c->interrupted, WHO);
}

/* ---- the search ------------------------------------------------------------------------- */

enum verdict { V_NONE, V_PASS, V_FAIL, V_UNCLEAR };
static const char *const verdict_word[] = {"-", "PASS", "FAIL", "UNCLEAR"};

enum rep_state { R_MISSING, R_RUNNING, R_DONE };

struct probe {
    bool requested, settled, evaluating;
    unsigned want;                   /* seeds wanted now */
    unsigned char *rep;              /* [reps_max] enum rep_state */
    unsigned running, done, ran_now; /* ran_now: seeds run by this invocation */
    enum verdict v;
    struct check_item *items; /* the gates at the last evaluation (copies) */
    size_t nitems;
    double gpus, cost, days; /* means: GPUs, cost_total, measured days */
    char currency[16];
};

/* How a gate moves with size, from its verdicts at the range's two ends. */
enum gate_class { G_UP, G_DOWN, G_BOTH_PASS, G_BOTH_FAIL };

enum phase { PH_ENDS, PH_MID, PH_BISECT, PH_SCAN, PH_DONE };

struct csearch {
    enum phase phase;
    size_t lo, hi, mid, scan_next;
    int *cls; /* [ngates] enum gate_class */
    bool nonmono, lowest_passes;
    char why[512];
    size_t answer; /* size index, SIZE_MAX = none in the range */
    char note[512];
};

struct planner {
    const struct plan *pl;
    const struct plan_run_opts *o;
    struct dispatch *d;
    struct probe *pr;   /* [npoints] */
    struct csearch *cs; /* [nchoices] */
    size_t ngates;
    size_t running;
    struct dispatch_task *slot_task; /* [slots] */
    bool failed, stopping;
    int objective;
    double t0;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *size_text(const struct plan *pl, size_t i)
{
    return pl->sw.axes[pl->sw.naxes - 1].vals[i];
}

static const char *size_key(const struct plan *pl)
{
    return pl->sw.axes[pl->sw.naxes - 1].path;
}

/* "policy.name=kueue cluster.sharing=mig" of choice c (the base itself when no choices). */
static void choice_label(const struct plan *pl, size_t c, char *buf, size_t n)
{
    size_t p = plan_point(pl, c, 0), k = 0;
    buf[0] = 0;
    for (size_t a = 0; a < pl->nchoice_axes; a++) {
        int w = snprintf(buf + k, n - k, "%s%s=%s", a ? " " : "", pl->sw.axes[a].path,
                         pl->sw.axes[a].vals[sweep_value_index(&pl->sw, p, a)]);
        if (w < 0 || (size_t)w >= n - k)
            break;
        k += (size_t)w;
    }
    if (!pl->nchoice_axes)
        snprintf(buf, n, "base scenario");
}

/* Request probe (c, i): mark the seeds already on disk, queue the rest. */
static void request(struct planner *P, size_t c, size_t i)
{
    size_t p = plan_point(P->pl, c, i);
    struct probe *pr = &P->pr[p];
    if (pr->requested)
        return;
    pr->requested = true;
    pr->want = P->pl->reps_min;
    for (unsigned r = 0; r < P->pl->reps_max; r++) {
        char path[PATH_MAX];
        if (pr->rep[r] == R_MISSING && rep_path(P->pl, P->o->dir, p, r, path, sizeof(path)) == 0 &&
            sweepidx_point_complete(path) == 1) {
            pr->rep[r] = R_DONE;
            pr->done++;
        }
    }
}

/* The probe's seeds 0..want-1 all done? */
static bool seeds_ready(const struct planner *P, const struct probe *pr)
{
    for (unsigned r = 0; r < pr->want; r++)
        if (pr->rep[r] != R_DONE)
            return false;
    (void)P;
    return true;
}

/* A figure of a gate item for the table: shares as %, else in the item's unit. */
static void fig_text(char *buf, size_t n, const struct check_item *it, double v, bool sign)
{
    const char *u = it->unit;
    double sc = it->scale;
    bool share = !strcmp(it->gate, "min-util") || !strcmp(it->gate, "min-slo") ||
                 !strcmp(it->gate, "max-ckpt-overhead") || (sc == 100 && !strcmp(u, "%"));
    if (share) {
        snprintf(buf, n, sign ? "%+.2f pts" : "%.2f%%", v * 100);
        return;
    }
    if (!strcmp(u, "s")) {
        double a = fabs(v);
        const char *su = a >= 3600 ? "h" : a >= 60 ? "min" : "s";
        double d = a >= 3600 ? 3600 : a >= 60 ? 60 : 1;
        snprintf(buf, n, sign ? "%+.3g %s" : "%.3g %s", v / d, su);
        return;
    }
    snprintf(buf, n, sign ? "%+.4g%s%s" : "%.4g%s%s", v * sc, *u ? " " : "", u);
}

/*
 * Merge the probe's seeds into DIR/probes/NAME.h5 (when the merged file is
 * missing or holds another number of seeds) and judge its gates. 0, or 1
 * (a message printed).
 */
static int evaluate(struct planner *P, size_t p)
{
    const struct plan *pl = P->pl;
    struct probe *pr = &P->pr[p];
    char stem[160], merged[PATH_MAX], err[PATH_MAX + 1200];
    if (probe_stem(pl, p, stem, sizeof(stem)))
        return 1;
    snprintf(merged, sizeof(merged), "%s/%s.h5", P->o->dir, stem);
    struct results r;
    bool fresh = false;
    if (results_open(&r, merged, err, sizeof(err)) == 0) {
        fresh = r.complete && r.reps == pr->want;
        if (!fresh)
            results_release(&r);
    }
    if (!fresh) {
        char **parts = calloc(pr->want, sizeof(char *));
        int rc = parts ? 0 : -ENOMEM;
        for (unsigned k = 0; !rc && k < pr->want; k++) {
            if (!(parts[k] = malloc(PATH_MAX)))
                rc = -ENOMEM;
            else
                rep_path(pl, P->o->dir, p, k, parts[k], PATH_MAX);
        }
        if (!rc)
            rc = merge_replications(merged, (const char *const *)parts, pr->want, true, NULL, err,
                                    sizeof(err));
        for (unsigned k = 0; parts && k < pr->want; k++)
            free(parts[k]);
        free(parts);
        if (rc) {
            fprintf(stderr, WHO ": %s\n", rc == -ENOMEM ? "out of memory" : err);
            return 1;
        }
        if (results_open(&r, merged, err, sizeof(err))) {
            fprintf(stderr, WHO ": %s\n", err);
            return 1;
        }
    }
    struct check_list l;
    if (check_evaluate(&r, NULL, &pl->gates, &l, err, sizeof(err))) {
        fprintf(stderr, WHO ": %s: %s\n", pl->sw.path, err);
        check_list_release(&l);
        results_release(&r);
        return 1;
    }
    free(pr->items);
    pr->items = l.items;
    pr->nitems = l.n;
    l.items = NULL;
    P->ngates = l.n;
    const struct results_metric *c = results_table_find(&r.headline, "cost_total");
    pr->gpus = r.gpus;
    pr->cost = c && c->s.n ? c->s.mean : NAN;
    /* cost_total covers the measured window: the run less its warm-up */
    pr->days = (r.duration_s - (isfinite(r.warmup_s) ? r.warmup_s : 0)) / 86400;
    snprintf(pr->currency, sizeof(pr->currency), "%s", c && c->unit ? c->unit : "");
    results_release(&r);
    check_list_release(&l);

    /* The verdict: a gate failing with confidence settles it; all holding too; else more seeds. */
    size_t fails = 0, unclear = 0;
    unsigned need = pr->want;
    for (size_t k = 0; k < pr->nitems; k++) {
        const struct check_item *it = &pr->items[k];
        fails += it->status == CHECK_FAIL;
        if (it->status != CHECK_INCONCLUSIVE)
            continue;
        unclear++;
        /* Seeds for the interval to clear the bound at the spread measured:
         * n' = n (half-width / |mean - bound|)^2 (the t quantile still falls: errs low). */
        double hw = (it->hi - it->lo) / 2, gap = fabs(it->value - it->bound);
        unsigned want = pl->reps_max;
        if (isfinite(hw) && gap > 0) {
            double x = (double)pr->want * (hw / gap) * (hw / gap);
            want = x < (double)pl->reps_max ? (unsigned)ceil(x) : pl->reps_max;
        }
        if (want > need)
            need = want;
    }
    if (fails)
        pr->v = V_FAIL;
    else if (!unclear)
        pr->v = V_PASS;
    else if (pr->want < pl->reps_max) {
        pr->want = need > pr->want ? need : pr->want + 1;
        if (pr->want > pl->reps_max)
            pr->want = pl->reps_max;
        return 0; /* not settled: more seeds queued by the main loop */
    } else
        pr->v = V_UNCLEAR;
    pr->settled = true;
    if (!P->o->quiet) {
        char lab[512];
        choice_label(pl, p / pl->nsizes, lab, sizeof(lab));
        fprintf(stderr, WHO ": %s, %s=%s: %s after %u run(s)", lab, size_key(pl),
                size_text(pl, p % pl->nsizes), verdict_word[pr->v], pr->want);
        for (size_t k = 0; k < pr->nitems; k++)
            if (pr->items[k].status != CHECK_PASS) {
                fprintf(stderr, "; %s %s", pr->items[k].status == CHECK_FAIL ? "fails" : "unclear",
                        pr->items[k].gate);
            }
        fputc('\n', stderr);
    }
    return 0;
}

static bool item_pass(const struct probe *pr, size_t g)
{
    return pr->settled && g < pr->nitems && pr->items[g].status == CHECK_PASS;
}

static bool item_fail(const struct probe *pr, size_t g)
{
    return pr->settled && g < pr->nitems && pr->items[g].status == CHECK_FAIL;
}

/*
 * A contradiction of monotonicity among the settled probes of choice c (given
 * each gate's class): returns true and says which in cs->why.
 */
static bool contradiction(struct planner *P, size_t c)
{
    const struct plan *pl = P->pl;
    struct csearch *cs = &P->cs[c];
    for (size_t g = 0; g < P->ngates; g++) {
        for (size_t a = 0; a < pl->nsizes; a++) {
            const struct probe *pa = &P->pr[plan_point(pl, c, a)];
            if (!pa->settled)
                continue;
            for (size_t b = a + 1; b < pl->nsizes; b++) {
                const struct probe *pb = &P->pr[plan_point(pl, c, b)];
                if (!pb->settled)
                    continue;
                bool bad = false;
                const char *how = "";
                switch (cs->cls[g]) {
                case G_UP:
                    bad = item_pass(pa, g) && item_fail(pb, g);
                    how = "holds at the smaller size and fails at the larger";
                    break;
                case G_DOWN:
                    bad = item_fail(pa, g) && item_pass(pb, g);
                    how = "fails at the smaller size and holds at the larger";
                    break;
                case G_BOTH_PASS:
                    bad = (a == 0 && b < pl->nsizes - 1 && item_fail(pb, g)) ||
                          (b == pl->nsizes - 1 && a > 0 && item_fail(pa, g));
                    how = "holds at both ends of the range and fails between";
                    break;
                case G_BOTH_FAIL:
                    bad = (a == 0 && b < pl->nsizes - 1 && item_pass(pb, g)) ||
                          (b == pl->nsizes - 1 && a > 0 && item_pass(pa, g));
                    how = "fails at both ends of the range and holds between";
                    break;
                }
                if (bad) {
                    snprintf(cs->why, sizeof(cs->why),
                             "gate %s is not monotone in %s: it %s (%s=%s: %s, %s=%s: %s, with "
                             "confidence)",
                             pa->items[g].gate, size_key(pl), how, size_key(pl), size_text(pl, a),
                             verdict_word[item_pass(pa, g) ? V_PASS : V_FAIL], size_key(pl),
                             size_text(pl, b), verdict_word[item_pass(pb, g) ? V_PASS : V_FAIL]);
                    return true;
                }
            }
        }
    }
    return false;
}

static void finish(struct planner *P, size_t c, size_t answer, const char *note)
{
    struct csearch *cs = &P->cs[c];
    cs->phase = PH_DONE;
    cs->answer = answer;
    if (note && !cs->note[0])
        snprintf(cs->note, sizeof(cs->note), "%s", note);
}

static void start_scan(struct planner *P, size_t c)
{
    struct csearch *cs = &P->cs[c];
    cs->phase = PH_SCAN;
    cs->scan_next = 0;
}

/* All gates hold at probe p. */
static bool all_pass(const struct probe *pr)
{
    return pr->settled && pr->v == V_PASS;
}

/* Every needs-size gate holds at probe p. */
static bool up_pass(const struct planner *P, size_t c, const struct probe *pr)
{
    for (size_t g = 0; g < P->ngates; g++)
        if (P->cs[c].cls[g] == G_UP && !item_pass(pr, g))
            return false;
    return true;
}

/* Drive choice c's search as far as its settled probes allow; request the next probes. */
static void advance(struct planner *P, size_t c)
{
    const struct plan *pl = P->pl;
    struct csearch *cs = &P->cs[c];
    size_t m = pl->nsizes;
#define PR(i) (&P->pr[plan_point(pl, c, (i))])
    for (;;) {
        switch (cs->phase) {
        case PH_DONE:
            return;
        case PH_SCAN: {
            /* ascending; a few sizes ahead when workers are free */
            while (cs->scan_next < m && PR(cs->scan_next)->settled) {
                if (all_pass(PR(cs->scan_next)) && pl->search != PLAN_SCAN) {
                    finish(P, c, cs->scan_next, NULL);
                    return;
                }
                cs->scan_next++;
            }
            if (cs->scan_next >= m) {
                size_t ans = SIZE_MAX;
                for (size_t i = 0; i < m && ans == SIZE_MAX; i++)
                    if (all_pass(PR(i)))
                        ans = i;
                finish(P, c, ans, NULL);
                return;
            }
            size_t ahead = P->d->slots / pl->reps_min + 1;
            for (size_t i = cs->scan_next; i < m && i < cs->scan_next + ahead; i++)
                request(P, c, i);
            if (pl->search == PLAN_SCAN)
                for (size_t i = 0; i < m; i++)
                    request(P, c, i);
            return;
        }
        case PH_ENDS:
            request(P, c, 0);
            request(P, c, m - 1);
            if (!PR(0)->settled || !PR(m - 1)->settled)
                return;
            if (all_pass(PR(0))) {
                cs->lowest_passes = true;
                finish(P, c, 0,
                       "the smallest size of the range passes: the answer may lie below "
                       "it (widen the range down)");
                return;
            }
            for (size_t g = 0; g < P->ngates; g++) {
                bool p0 = item_pass(PR(0), g), p1 = item_pass(PR(m - 1), g);
                cs->cls[g] = !p0 && p1 ? G_UP : p0 && !p1 ? G_DOWN : p0 ? G_BOTH_PASS : G_BOTH_FAIL;
            }
            bool bothfail = false;
            for (size_t g = 0; g < P->ngates; g++)
                bothfail |= cs->cls[g] == G_BOTH_FAIL;
            if (bothfail) {
                if (m <= 2) {
                    finish(P, c, SIZE_MAX, NULL);
                    return;
                }
                cs->phase = PH_MID;
                cs->mid = (m - 1) / 2;
                continue;
            }
            cs->phase = PH_BISECT;
            cs->lo = 0;
            cs->hi = m - 1;
            continue;
        case PH_MID: {
            request(P, c, cs->mid);
            const struct probe *pm = PR(cs->mid);
            if (!pm->settled)
                return;
            /* A gate failing at both ends that does not fail (with confidence) in the middle
             * may hold somewhere between: scan rather than say "none". */
            for (size_t g = 0; g < P->ngates; g++)
                if (cs->cls[g] == G_BOTH_FAIL && !item_fail(pm, g)) {
                    snprintf(cs->why, sizeof(cs->why),
                             "gate %s fails at both ends of the range (%s=%s and %s) but %s at "
                             "%s=%s",
                             pm->items[g].gate, size_key(pl), size_text(pl, 0),
                             size_text(pl, m - 1),
                             item_pass(pm, g) ? "holds, with confidence," : "is unclear",
                             size_key(pl), size_text(pl, cs->mid));
                    cs->nonmono = true;
                    break;
                }
            if (cs->nonmono) {
                start_scan(P, c);
                continue;
            }
            finish(P, c, SIZE_MAX,
                   "a gate fails at both ends and in the middle of the range: no size passes "
                   "(if the gates are monotone in size)");
            return;
        }
        case PH_BISECT:
            if (contradiction(P, c)) {
                cs->nonmono = true;
                start_scan(P, c);
                continue;
            }
            if (cs->hi - cs->lo <= 1) {
                const struct probe *at = PR(cs->hi);
                if (all_pass(at)) {
                    finish(P, c, cs->hi, NULL);
                    return;
                }
                /* A needs-smallness gate fails where the needs-size ones first hold. */
                for (size_t g = 0; g < P->ngates; g++)
                    if (cs->cls[g] == G_DOWN && !item_pass(at, g)) {
                        char n[512];
                        snprintf(n, sizeof(n),
                                 "no size passes: at %s=%s, the smallest where the gates that "
                                 "need size hold, %s (which needs smallness) does not",
                                 size_key(pl), size_text(pl, cs->hi), at->items[g].gate);
                        finish(P, c, SIZE_MAX, n);
                        return;
                    }
                /* a holds-at-both-ends gate failing there: not monotone */
                snprintf(cs->why, sizeof(cs->why),
                         "a gate that holds at both ends of the range does not hold at %s=%s",
                         size_key(pl), size_text(pl, cs->hi));
                cs->nonmono = true;
                start_scan(P, c);
                continue;
            }
            cs->mid = cs->lo + (cs->hi - cs->lo) / 2;
            request(P, c, cs->mid);
            if (!PR(cs->mid)->settled)
                return;
            if (up_pass(P, c, PR(cs->mid)))
                cs->hi = cs->mid;
            else
                cs->lo = cs->mid;
            continue;
        }
    }
#undef PR
}

/* ---- running ---------------------------------------------------------------------------- */

/* The next seed to run: the first requested probe (in choice-major order) missing one. */
static bool next_task(struct planner *P, struct dispatch_task *t)
{
    for (size_t p = 0; p < P->pl->sw.npoints; p++) {
        struct probe *pr = &P->pr[p];
        if (!pr->requested || pr->settled)
            continue;
        for (unsigned r = 0; r < pr->want; r++)
            if (pr->rep[r] == R_MISSING) {
                t->a = p;
                t->b = r;
                return true;
            }
    }
    return false;
}

/* Evaluate every probe whose seeds are in; advance their searches; repeat until quiet. */
static int settle(struct planner *P)
{
    bool again = true;
    while (again) {
        again = false;
        for (size_t p = 0; p < P->pl->sw.npoints; p++) {
            struct probe *pr = &P->pr[p];
            if (!pr->requested || pr->settled || !seeds_ready(P, pr))
                continue;
            if (evaluate(P, p))
                return 1;
            if (!P->cs[p / P->pl->nsizes].cls) {
                P->cs[p / P->pl->nsizes].cls = calloc(P->ngates ? P->ngates : 1, sizeof(int));
                if (!P->cs[p / P->pl->nsizes].cls)
                    return 1;
            }
            again = true;
        }
        for (size_t c = 0; c < P->pl->nchoices; c++) {
            if (!P->cs[c].cls) {
                if (P->cs[c].phase == PH_ENDS || P->cs[c].phase == PH_SCAN)
                    advance(P, c); /* requests only: nothing settled yet */
                continue;
            }
            enum phase before = P->cs[c].phase;
            size_t lo = P->cs[c].lo, hi = P->cs[c].hi;
            advance(P, c);
            again |= before != P->cs[c].phase || lo != P->cs[c].lo || hi != P->cs[c].hi;
        }
        /* probes just requested whose seeds were all on disk already */
        for (size_t p = 0; p < P->pl->sw.npoints && !again; p++)
            again = P->pr[p].requested && !P->pr[p].settled && seeds_ready(P, &P->pr[p]);
    }
    return 0;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, WHO ": cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, WHO ": %s is not a folder\n", dir);
        return 1;
    }
    return 0;
}

/* Remove leftovers of interrupted runs in DIR/probes: temporary and partial files. */
static void tidy(const char *dir)
{
    char pd[PATH_MAX];
    snprintf(pd, sizeof(pd), "%s/probes", dir);
    DIR *d = opendir(pd);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        bool leftover = strstr(n, ".h5.tmp.") || (len > 8 && !strcmp(n + len - 8, ".partial"));
        if (leftover) {
            char p[PATH_MAX + 300];
            snprintf(p, sizeof(p), "%s/%s", pd, n);
            unlink(p);
        }
    }
    closedir(d);
}

/* Is the folder this plan's (same base scenario, binary and size key)? 0 yes, 1 refused. */
static int check_owner(const struct plan *pl, const char *index, bool force)
{
    char *hash = NULL;
    char err[PATH_MAX + 600];
    int rc = sweepidx_read_hash(index, &hash, err, sizeof(err));
    if (rc == -ENOENT)
        return 0;
    bool same = rc == 0 && !strcmp(hash, pl->hash);
    free(hash);
    if (same || force)
        return 0;
    if (rc)
        fprintf(stderr, WHO ": %s; --force replaces it\n", err);
    else
        fprintf(stderr,
                WHO ": %s was made for another base scenario, size key or binary (its hash "
                    "differs from this plan's %s): its probes would not be this plan's; --force "
                    "uses the folder all the same (old probe files are kept but not reused)\n",
                index, pl->hash);
    return 1;
}

/* ---- the index -------------------------------------------------------------------------- */

struct choice_row {
    char label[512], size[64], binding[160], margin[64], detail[640], below[400], method[640],
        note[512], currency[16];
    double size_value, gpus, cost30;
    unsigned runs, runs_now, probes;
    bool monotone;
};

/* Relative margin of item it: margin over |bound| (the margin itself for a bound of 0). */
static double rel_margin(const struct check_item *it)
{
    return fabs(it->bound) > 0 ? it->margin / fabs(it->bound) : it->margin;
}

static void row_of(const struct planner *P, size_t c, struct choice_row *row)
{
    const struct plan *pl = P->pl;
    const struct csearch *cs = &P->cs[c];
    memset(row, 0, sizeof(*row));
    choice_label(pl, c, row->label, sizeof(row->label));
    row->size_value = row->gpus = row->cost30 = NAN;
    row->monotone = !cs->nonmono;
    for (size_t i = 0; i < pl->nsizes; i++) {
        const struct probe *pr = &P->pr[plan_point(pl, c, i)];
        if (!pr->requested)
            continue;
        row->probes += pr->settled;
        row->runs += pr->settled ? pr->want : pr->done; /* the seeds the search used */
        row->runs_now += pr->ran_now;
    }
    if (pl->search == PLAN_SCAN)
        snprintf(row->method, sizeof(row->method), "scan (every size: search: scan)");
    else if (cs->nonmono)
        snprintf(row->method, sizeof(row->method), "scan: %s", cs->why);
    else if (cs->phase == PH_DONE && cs->lowest_passes)
        snprintf(row->method, sizeof(row->method), "ends of the range");
    else
        snprintf(row->method, sizeof(row->method), "bisection");
    snprintf(row->note, sizeof(row->note), "%s", cs->note);
    if (cs->phase != PH_DONE) {
        snprintf(row->size, sizeof(row->size), "(searching)");
        return;
    }
    /* The probe that explains the answer, and the settled probe just below it. */
    size_t at = cs->answer, below = SIZE_MAX;
    if (at != SIZE_MAX) {
        snprintf(row->size, sizeof(row->size), "%s", size_text(pl, at));
        row->size_value = pl->size_num[at];
        for (size_t j = 0; j < at; j++)
            if (P->pr[plan_point(pl, c, j)].settled)
                below = j;
    } else {
        snprintf(row->size, sizeof(row->size), "none");
        for (size_t j = pl->nsizes; j-- > 0 && at == SIZE_MAX;)
            if (P->pr[plan_point(pl, c, j)].settled)
                at = j; /* the largest size probed: how far off the gates are there */
    }
    if (at == SIZE_MAX)
        return;
    const struct probe *pa = &P->pr[plan_point(pl, c, at)];
    row->gpus = pa->gpus;
    if (isfinite(pa->cost) && pa->days > 0)
        row->cost30 = pa->cost / pa->days * 30;
    snprintf(row->currency, sizeof(row->currency), "%s", pa->currency);
    const struct probe *pb = below != SIZE_MAX ? &P->pr[plan_point(pl, c, below)] : NULL;
    size_t best = SIZE_MAX;
    for (size_t g = 0; g < pa->nitems; g++) {
        bool cand = cs->answer == SIZE_MAX
                        ? pa->items[g].status != CHECK_PASS
                        : !pb || (g < pb->nitems && pb->items[g].status != CHECK_PASS);
        if (!cand || !isfinite(pa->items[g].margin))
            continue;
        if (best == SIZE_MAX || rel_margin(&pa->items[g]) < rel_margin(&pa->items[best]))
            best = g;
    }
    if (best != SIZE_MAX) {
        const struct check_item *it = &pa->items[best];
        snprintf(row->binding, sizeof(row->binding), "%s", it->gate);
        fig_text(row->margin, sizeof(row->margin), it, it->margin, true);
        const char *m = strchr(it->msg, ':');
        snprintf(row->detail, sizeof(row->detail), "%s", m ? m + 2 : it->msg);
    }
    if (pb) {
        int k = snprintf(row->below, sizeof(row->below), "%s:", size_text(pl, below));
        for (size_t g = 0; g < pb->nitems && k > 0 && (size_t)k < sizeof(row->below); g++)
            if (pb->items[g].status != CHECK_PASS)
                k += snprintf(row->below + k, sizeof(row->below) - (size_t)k, " %s %s",
                              pb->items[g].status == CHECK_FAIL ? "fails" : "unclear",
                              pb->items[g].gate);
    }
}

struct index_ctx {
    const struct planner *P;
    bool done;
};

static int write_plan_group(long long file, void *vctx)
{
    const struct index_ctx *x = vctx;
    const struct planner *P = x->P;
    const struct plan *pl = P->pl;
    hid_t g = h5_group_create((hid_t)file, "plan");
    if (g < 0)
        return h5io_fail();
    /* The answer: the passing choice of least cost (or GPUs; ties: GPUs, then cost, then
     * the first). */
    struct choice_row *rows = calloc(pl->nchoices, sizeof(*rows));
    if (!rows) {
        H5Gclose(g);
        return -ENOMEM;
    }
    long long answer = -1;
    for (size_t c = 0; c < pl->nchoices; c++) {
        row_of(P, c, &rows[c]);
        if (!isfinite(rows[c].size_value))
            continue;
        if (answer < 0) {
            answer = (long long)c;
            continue;
        }
        const struct choice_row *a = &rows[answer], *b = &rows[c];
        double ka = P->objective == PLAN_GPUS ? a->gpus : a->cost30;
        double kb = P->objective == PLAN_GPUS ? b->gpus : b->cost30;
        double ta = P->objective == PLAN_GPUS ? a->cost30 : a->gpus;
        double tb = P->objective == PLAN_GPUS ? b->cost30 : b->gpus;
        if (kb < ka || (kb == ka && tb < ta))
            answer = (long long)c;
    }
    int rc = h5_attr_str(g, "objective", P->objective == PLAN_GPUS ? "gpus" : "cost");
    rc = rc ? rc : h5_attr_str(g, "size_key", size_key(pl));
    rc = rc ? rc : h5_attr_str(g, "gates", pl->gates_text);
    rc = rc ? rc : h5_attr_int(g, "replications_min", pl->reps_min);
    rc = rc ? rc : h5_attr_int(g, "replications_max", pl->reps_max);
    rc = rc ? rc : h5_attr_str(g, "search", pl->search == PLAN_SCAN ? "scan" : "bisect");
    rc = rc ? rc : h5_attr_int(g, "complete", x->done);
    rc = rc ? rc : h5_attr_int(g, "choices", (int64_t)pl->nchoices);
    rc = rc ? rc : h5_attr_int(g, "answer", answer);
    for (size_t c = 0; !rc && c < pl->nchoices; c++) {
        char name[32];
        snprintf(name, sizeof(name), "choice-%04zu", c);
        hid_t cg = h5_group_create(g, name);
        if (cg < 0) {
            rc = h5io_fail();
            break;
        }
        const struct choice_row *r = &rows[c];
        rc = h5_attr_str(cg, "label", r->label);
        rc = rc ? rc : h5_attr_str(cg, "size", r->size);
        rc = rc ? rc : h5_attr_double(cg, "size_value", r->size_value);
        rc = rc ? rc : h5_attr_double(cg, "gpus", r->gpus);
        rc = rc ? rc : h5_attr_double(cg, "cost_30d", r->cost30);
        rc = rc ? rc : h5_attr_str(cg, "currency", r->currency);
        rc = rc ? rc : h5_attr_str(cg, "binding_gate", r->binding);
        rc = rc ? rc : h5_attr_str(cg, "margin", r->margin);
        rc = rc ? rc : h5_attr_str(cg, "binding_detail", r->detail);
        rc = rc ? rc : h5_attr_str(cg, "below", r->below);
        rc = rc ? rc : h5_attr_int(cg, "runs", r->runs);
        rc = rc ? rc : h5_attr_int(cg, "runs_now", r->runs_now);
        rc = rc ? rc : h5_attr_int(cg, "probes", r->probes);
        rc = rc ? rc : h5_attr_str(cg, "search", r->method);
        rc = rc ? rc : h5_attr_int(cg, "monotone", r->monotone);
        rc = rc ? rc : h5_attr_str(cg, "note", r->note);
        H5Gclose(cg);
    }
    free(rows);
    H5Gclose(g);
    return rc;
}

static int write_index(const struct planner *P, bool done)
{
    const struct plan *pl = P->pl;
    size_t n = 0, na = 0;
    const char *axes[SWEEP_MAX_AXES];
    size_t axmap[SWEEP_MAX_AXES];
    for (size_t a = 0; a < pl->sw.naxes; a++)
        if (!(pl->hidden & (1u << a))) {
            axmap[na] = a;
            axes[na++] = pl->sw.axes[a].path;
        }
    for (size_t p = 0; p < pl->sw.npoints; p++)
        n += P->pr[p].nitems > 0;
    size_t cap = n ? n : 1;
    const char **vals = calloc(cap * na, sizeof(char *));
    char **files = calloc(cap, sizeof(char *));
    bool *isdone = calloc(cap, sizeof(bool));
    double *reps = calloc(cap, sizeof(double)), *verdict = calloc(cap, sizeof(double)),
           *choice = calloc(cap, sizeof(double)), *size = calloc(cap, sizeof(double));
    int rc = vals && files && isdone && reps && verdict && choice && size ? 0 : -ENOMEM;
    size_t k = 0;
    for (size_t p = 0; !rc && p < pl->sw.npoints; p++) {
        const struct probe *pr = &P->pr[p];
        if (!pr->nitems)
            continue;
        char stem[160];
        probe_stem(pl, p, stem, sizeof(stem));
        size_t len = strlen(stem) + 4;
        if (!(files[k] = malloc(len))) {
            rc = -ENOMEM;
            break;
        }
        snprintf(files[k], len, "%s.h5", stem);
        for (size_t a = 0; a < na; a++)
            vals[k * na + a] = pl->sw.axes[axmap[a]].vals[sweep_value_index(&pl->sw, p, axmap[a])];
        isdone[k] = true;
        reps[k] = pr->want;
        verdict[k] = pr->v == V_PASS ? 1 : pr->v == V_FAIL ? 0 : pr->v == V_UNCLEAR ? -1 : NAN;
        choice[k] = (double)(p / pl->nsizes);
        size[k] = pl->size_num[p % pl->nsizes];
        k++;
    }
    struct sweepidx_col extra[] = {
        {"replications", reps}, {"verdict", verdict}, {"choice", choice}, {"size", size}};
    struct index_ctx x = {P, done};
    struct sweepidx_desc d = {.dir = P->o->dir,
                              .npoints = n,
                              .naxes = na,
                              .axes = axes,
                              .values = vals,
                              .files = (const char *const *)files,
                              .done = isdone,
                              .replications = pl->reps_max,
                              .mode = "plan",
                              .hash = pl->hash,
                              .sweep_path = pl->sw.path,
                              .sweep_text = pl->sw.doc.text,
                              .base_path = pl->sw.base_path,
                              .base_text = pl->sw.base_text,
                              .version = TIDESIM_VERSION,
                              .git_commit = TIDESIM_GIT,
                              .kind = SWEEPIDX_KIND_PLAN,
                              .unfinished = !done,
                              .extra = extra,
                              .nextra = 4,
                              .write_more = write_plan_group,
                              .ctx = &x};
    char err[PATH_MAX + 600];
    if (!rc && n == 0) {
        /* nothing probed yet (interrupted at once): no index to write */
        rc = 0;
    } else if (!rc && sweepidx_write(&d, err, sizeof(err))) {
        fprintf(stderr, WHO ": %s\n", err);
        rc = -EIO;
    } else if (rc) {
        fprintf(stderr, WHO ": out of memory\n");
    }
    for (size_t i = 0; files && i < k; i++)
        free(files[i]);
    free(files);
    free(vals);
    free(isdone);
    free(reps);
    free(verdict);
    free(choice);
    free(size);
    return rc ? 1 : (n == 0 ? 2 : 0);
}

int plan_run(const struct plan *pl, const struct plan_run_opts *o)
{
    if (make_dir(o->dir))
        return 1;
    char probes[PATH_MAX], lockp[PATH_MAX], index[PATH_MAX];
    if (snprintf(probes, sizeof(probes), "%s/probes", o->dir) >= (int)sizeof(probes) - 200) {
        fprintf(stderr, WHO ": folder name too long: %s\n", o->dir);
        return 1;
    }
    if (make_dir(probes))
        return 1;
    snprintf(lockp, sizeof(lockp), "%s/.plan.lock", o->dir);
    snprintf(index, sizeof(index), "%s/index.h5", o->dir);
    int lock = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB)) {
        fprintf(stderr, WHO ": %s: %s\n", o->dir,
                lock < 0 ? strerror(errno) : "another plan is running in this folder");
        if (lock >= 0)
            close(lock);
        return 1;
    }
    int status = 1;
    struct planner P = {.pl = pl, .o = o, .t0 = now_s()};
    P.objective = o->objective >= 0 ? o->objective : (int)pl->objective;
    struct dispatch fork_d;
    bool own_d = !o->d;
    struct plan_task_ctx tctx = {pl, o->dir, o->interrupted};
    if (check_owner(pl, index, o->force))
        goto out_lock;
    tidy(o->dir);
    if (own_d && dispatch_fork_init(&fork_d, o->jobs, plan_task, &tctx)) {
        fprintf(stderr, WHO ": out of memory\n");
        goto out_lock;
    }
    P.d = own_d ? &fork_d : o->d;
    P.pr = calloc(pl->sw.npoints, sizeof(*P.pr));
    P.cs = calloc(pl->nchoices, sizeof(*P.cs));
    P.slot_task = calloc(P.d->slots, sizeof(*P.slot_task));
    bool nomem = !P.pr || !P.cs || !P.slot_task;
    for (size_t p = 0; !nomem && p < pl->sw.npoints; p++)
        nomem = !(P.pr[p].rep = calloc(pl->reps_max, 1));
    if (nomem) {
        fprintf(stderr, WHO ": out of memory\n");
        goto out;
    }
    for (size_t c = 0; c < pl->nchoices; c++) {
        P.cs[c].phase = pl->search == PLAN_SCAN ? PH_SCAN : PH_ENDS;
        P.cs[c].answer = SIZE_MAX;
    }
    if (!o->quiet)
        fprintf(stderr,
                WHO ": %zu choice(s) × %zu size(s) of %s; %u..%u seed(s) a probe; %s on %u %s\n",
                pl->nchoices, pl->nsizes, size_key(pl), pl->reps_min, pl->reps_max,
                pl->search == PLAN_SCAN ? "scan" : "bisection", P.d->slots, P.d->what);
    if (settle(&P)) {
        P.failed = true;
        goto write;
    }
    for (;;) {
        if (*o->interrupted && !P.stopping) {
            P.stopping = true;
            P.d->stop(P.d);
        }
        struct dispatch_task t;
        if (!P.stopping && !P.failed && P.running < P.d->slots && next_task(&P, &t)) {
            unsigned slot;
            int rc = P.d->start(P.d, &t, &slot);
            if (rc) {
                fprintf(stderr, WHO ": cannot start a run: %s\n", strerror(-rc));
                P.failed = P.stopping = true;
                continue;
            }
            P.pr[t.a].rep[t.b] = R_RUNNING;
            P.pr[t.a].running++;
            P.slot_task[slot] = t;
            P.running++;
            continue;
        }
        if (P.running == 0)
            break;
        unsigned slot;
        int code;
        int rc = P.d->wait(P.d, &slot, &code);
        if (rc == -EINTR)
            continue;
        if (rc)
            break;
        P.running--;
        t = P.slot_task[slot];
        struct probe *pr = &P.pr[t.a];
        pr->running--;
        char path[PATH_MAX];
        rep_path(pl, o->dir, (size_t)t.a, (unsigned)t.b, path, sizeof(path));
        if (code == 0 && sweepidx_point_complete(path) == 1) {
            pr->rep[t.b] = R_DONE;
            pr->done++;
            pr->ran_now++;
        } else {
            pr->rep[t.b] = R_MISSING;
            char partial[PATH_MAX + 16];
            snprintf(partial, sizeof(partial), "%s.partial", path);
            unlink(partial);
            if (code != 130 && !(code == -1 && P.stopping)) {
                fprintf(stderr, WHO ": run %s failed (exit status %d)\n", path, code);
                P.failed = P.stopping = true;
                P.d->stop(P.d);
            }
        }
        if (!P.stopping && settle(&P)) {
            P.failed = P.stopping = true;
            P.d->stop(P.d);
        }
    }
write:;
    bool done = true;
    for (size_t c = 0; c < pl->nchoices; c++)
        done &= P.cs[c].phase == PH_DONE;
    int wrc = write_index(&P, done);
    if (P.failed)
        status = 1;
    else if (!done)
        status = *o->interrupted ? 130 : 1;
    else
        status = wrc == 1 ? 1 : 0;
    if (!wrc) {
        char err[PATH_MAX + 600];
        if (planidx_print(stdout, index, err, sizeof(err)))
            fprintf(stderr, WHO ": %s\n", err);
    }
    if (status == 130)
        fprintf(stderr, WHO ": interrupted; the runs made are kept: run the plan again to go on\n");
    else if (!done && !P.failed)
        fprintf(stderr, WHO ": the search stopped before an answer\n");
out:
    for (size_t p = 0; P.pr && p < pl->sw.npoints; p++) {
        free(P.pr[p].rep);
        free(P.pr[p].items);
    }
    for (size_t c = 0; P.cs && c < pl->nchoices; c++)
        free(P.cs[c].cls);
    free(P.pr);
    free(P.cs);
    free(P.slot_task);
    if (own_d)
        dispatch_fork_release(&fork_d);
out_lock:
    close(lock);
    return status;
}
