/* sweep.c — a sweep file read, its points checked and run as processes (sweep.h). */
#include "sim/driver/sweep.h"

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
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/h5read.h"
#include "analysis/merge.h"
#include "analysis/sweepidx.h"
#include "sim/driver/dispatch.h"
#include "sim/driver/replicate.h"
#include "sim/output.h"
#include "sim/override.h"
#include "sim/scenario.h"
#include "sim/sim.h"

#ifndef TIDESIM_VERSION
#define TIDESIM_VERSION "unknown"
#endif
#ifndef TIDESIM_GIT
#define TIDESIM_GIT "unknown"
#endif

#define BASE_MAX ((size_t)16 << 20) /* bytes: the scenario loader's own limit */

/* ---- the sweep file ---------------------------------------------------------------------- */

/* A growable string. */
struct buf {
    char *s;
    size_t n, cap;
    bool nomem;
};

static void buf_put(struct buf *b, const char *s, size_t n)
{
    if (b->nomem)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 64) + n;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->nomem = true;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void buf_str(struct buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

/* A scalar as YAML text that reads back as the same scalar, in or out of a flow collection. */
static void put_scalar(struct buf *b, const struct conf_node *n)
{
    const char *v = n->value;
    size_t len = strlen(v);
    bool special = strpbrk(v, ",[]{}:#\"'\\\n\r\t&*!|>%@`") || (len && v[0] == ' ') ||
                   (len && v[len - 1] == ' ') || v[0] == '?' ||
                   (v[0] == '-' && (v[1] == 0 || v[1] == ' '));
    if (!n->quoted && !special) {
        buf_str(b, v); /* "" stays the empty scalar, as "key:" */
        return;
    }
    buf_put(b, "\"", 1);
    for (const char *p = v; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = *p;
            buf_put(b, esc, 2);
        } else if ((unsigned char)*p < 0x20) {
            snprintf(esc, sizeof(esc), "\\x%02x", (unsigned char)*p);
            buf_str(b, esc);
        } else {
            buf_put(b, p, 1);
        }
    }
    buf_put(b, "\"", 1);
}

/* Any node as flow YAML. */
static void put_node(struct buf *b, const struct conf_node *n, unsigned depth)
{
    if (depth > 64) {
        b->nomem = true;
        return;
    }
    if (n->kind == CONF_SCALAR) {
        put_scalar(b, n);
        return;
    }
    buf_str(b, n->kind == CONF_MAP ? "{" : "[");
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            buf_str(b, ", ");
        if (n->kind == CONF_MAP) {
            struct conf_node k = {.kind = CONF_SCALAR, .value = n->keys[i]};
            put_scalar(b, &k);
            buf_str(b, ": ");
        }
        put_node(b, n->items[i], depth + 1);
    }
    buf_str(b, n->kind == CONF_MAP ? "}" : "]");
}

static bool is_int_text(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        return false;
    *out = v;
    return true;
}

static int axis_add(struct sweep_axis *ax, const char *text, unsigned line, unsigned col)
{
    if (ax->n % 16 == 0) {
        size_t cap = ax->n + 16;
        char **v = realloc(ax->vals, cap * sizeof(*v));
        if (v)
            ax->vals = v;
        unsigned *l = realloc(ax->line, cap * sizeof(*l));
        if (l)
            ax->line = l;
        unsigned *c = realloc(ax->col, cap * sizeof(*c));
        if (c)
            ax->col = c;
        if (!v || !l || !c)
            return -ENOMEM;
    }
    if (!(ax->vals[ax->n] = strdup(text)))
        return -ENOMEM;
    ax->line[ax->n] = line;
    ax->col[ax->n] = col;
    ax->n++;
    return 0;
}

static int axis_range(struct sweep *sw, struct sweep_axis *ax, const struct conf_node *r,
                      struct conf_err *err)
{
    static const char *const keys[] = {"from", "to", "step", NULL};
    double from = 0, to = 0, step = 0;
    if (conf_check_keys(&sw->doc, r, ax->path, keys, err) ||
        conf_double(&sw->doc, r, "from", true, -HUGE_VAL, HUGE_VAL, &from, err) ||
        conf_double(&sw->doc, r, "to", true, -HUGE_VAL, HUGE_VAL, &to, err) ||
        conf_double(&sw->doc, r, "step", true, -HUGE_VAL, HUGE_VAL, &step, err))
        return -EINVAL;
    double span = (to - from) / step;
    if (step == 0 || !(span >= 0))
        return conf_errf(err, &sw->doc, conf_get(r, "step"), "step",
                         "expected a step that leads from %g to %g (non-zero, of the sign of "
                         "to - from)",
                         from, to);
    if (span > SWEEP_MAX_POINTS)
        return conf_errf(err, &sw->doc, r, ax->path, "the range has more than %d values",
                         SWEEP_MAX_POINTS);
    long long fi, ti, si;
    bool ints = is_int_text(conf_get(r, "from")->value, &fi) &&
                is_int_text(conf_get(r, "to")->value, &ti) &&
                is_int_text(conf_get(r, "step")->value, &si);
    size_t count = (size_t)floor(span + 1e-9) + 1;
    for (size_t i = 0; i < count; i++) {
        char text[64];
        if (ints)
            snprintf(text, sizeof(text), "%lld", fi + (long long)i * si);
        else
            snprintf(text, sizeof(text), "%.12g", from + (double)i * step);
        if (axis_add(ax, text, r->line, r->col))
            return conf_errf(err, &sw->doc, r, ax->path, "out of memory");
    }
    return 0;
}

static int axis_value(struct sweep *sw, struct sweep_axis *ax, const struct conf_node *v,
                      struct conf_err *err)
{
    struct buf b = {0};
    put_node(&b, v, 0);
    int rc = b.nomem ? -ENOMEM : axis_add(ax, b.s ? b.s : "", v->line, v->col);
    free(b.s);
    if (rc)
        return conf_errf(err, &sw->doc, v, ax->path,
                         "out of memory, or the value is nested too "
                         "deeply");
    return 0;
}

static int read_base(struct sweep *sw, const struct conf_node *at, struct conf_err *err)
{
    FILE *f = fopen(sw->base_path, "rb");
    if (!f)
        return conf_errf(err, &sw->doc, at, "base", "cannot open %s: %s", sw->base_path,
                         strerror(errno));
    struct buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.n <= BASE_MAX)
        buf_put(&b, chunk, n);
    bool bad = ferror(f);
    fclose(f);
    if (bad || b.nomem || b.n > BASE_MAX) {
        free(b.s);
        return conf_errf(err, &sw->doc, at, "base", "cannot read %s: %s", sw->base_path,
                         b.n > BASE_MAX ? "larger than 16 MiB" : strerror(bad ? EIO : ENOMEM));
    }
    sw->base_text = b.s ? b.s : strdup("");
    return sw->base_text ? 0 : -ENOMEM;
}

/* FNV-1a, 64 bits, continued from h. */
static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void sweep_hash(const char *const *parts, size_t n, char out[33])
{
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(parts[i]) + 1; /* with its NUL: parts cannot run into each other */
        h1 = fnv(h1, parts[i], len);
        h2 = fnv(h2 ^ (uint64_t)i, parts[i], len);
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

static void make_hash(struct sweep *sw)
{
    const char *parts[] = {"tidesim-sweep-1", sw->doc.text, sw->base_text, TIDESIM_VERSION,
                           TIDESIM_GIT};
    sweep_hash(parts, sizeof(parts) / sizeof(parts[0]), sw->hash);
}

int sweep_set_base(struct sweep *sw, const char *base, const struct conf_node *at,
                   struct conf_err *err)
{
    /* base: against the sweep file's folder unless absolute */
    const char *slash = strrchr(sw->path, '/');
    size_t dl = base[0] == '/' || !slash ? 0 : (size_t)(slash - sw->path) + 1;
    if (!(sw->base_path = malloc(dl + strlen(base) + 1))) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", sw->path);
        return -ENOMEM;
    }
    memcpy(sw->base_path, sw->path, dl);
    memcpy(sw->base_path + dl, base, strlen(base) + 1);
    return read_base(sw, at, err);
}

int sweep_add_axis(struct sweep *sw, const char *path, unsigned line, unsigned col,
                   const struct conf_node *v, struct conf_err *err)
{
    if (sw->naxes >= SWEEP_MAX_AXES) {
        struct conf_node at = {.line = line, .col = col};
        return conf_errf(err, &sw->doc, &at, path, "more than %d axes", SWEEP_MAX_AXES);
    }
    struct sweep_axis *ax = &sw->axes[sw->naxes++];
    ax->path = path;
    char probe[OVERRIDE_PATH_MAX + 8];
    struct conf_err serr;
    snprintf(probe, sizeof(probe), "%s=x", ax->path);
    if (strlen(ax->path) > OVERRIDE_PATH_MAX || override_check_syntax(probe, &serr)) {
        struct conf_node at = {.line = line, .col = col};
        return conf_errf(err, &sw->doc, &at, ax->path,
                         "expected a dotted scenario path, as --set takes (cluster.nodes, "
                         "services.chat.replicas)");
    }
    bool range = v->kind == CONF_MAP && (conf_get(v, "from") || conf_get(v, "step"));
    if (range)
        return axis_range(sw, ax, v, err);
    if (v->kind == CONF_SEQ) {
        if (v->n == 0)
            return conf_errf(err, &sw->doc, v, ax->path, "expected at least one value");
        for (size_t i = 0; i < v->n; i++)
            if (axis_value(sw, ax, v->items[i], err))
                return -EINVAL;
        return 0;
    }
    return axis_value(sw, ax, v, err);
}

int sweep_count(struct sweep *sw, const struct conf_node *at, struct conf_err *err)
{
    for (size_t a = 1; a < sw->nzip; a++)
        if (sw->axes[a].n != sw->axes[0].n) {
            struct conf_node k = {.line = sw->axes[a].line[0], .col = sw->axes[a].col[0]};
            return conf_errf(err, &sw->doc, &k, sw->axes[a].path,
                             "mode zip needs axes of one length: %zu value(s) here, %zu for '%s'",
                             sw->axes[a].n, sw->axes[0].n, sw->axes[0].path);
        }
    double np = sw->nzip ? (double)sw->axes[0].n : 1;
    for (size_t a = sw->nzip; a < sw->naxes; a++)
        np *= (double)sw->axes[a].n;
    if (np > SWEEP_MAX_POINTS)
        return conf_errf(err, &sw->doc, at, "axes", "the grid has %.0f points (at most %d)", np,
                         SWEEP_MAX_POINTS);
    sw->npoints = (size_t)np;
    return 0;
}

int sweep_load(struct sweep *sw, const char *path, struct conf_err *err)
{
    memset(sw, 0, sizeof(*sw));
    sw->reps = 1;
    int rc = conf_load_file(&sw->doc, path, err);
    if (rc)
        return rc;
    rc = -EINVAL;
    if (!(sw->path = strdup(path)))
        goto nomem;
    const struct conf_node *root = sw->doc.root;
    static const char *const keys[] = {"base", "axes", "mode", "replications", NULL};
    static const char *const modes[] = {"grid", "zip", NULL};
    const char *base = NULL;
    int mode = 0;
    int64_t reps = 1;
    if (!root) {
        snprintf(err->msg, sizeof(err->msg), "%s: empty sweep file (expected base: and axes:)",
                 path);
        goto fail;
    }
    if (conf_check_keys(&sw->doc, root, NULL, keys, err) ||
        conf_string(&sw->doc, root, "base", true, &base, err) ||
        conf_enum(&sw->doc, root, "mode", false, modes, &mode, err) ||
        conf_int(&sw->doc, root, "replications", false, 1, 9999, &reps, err))
        goto fail;
    sw->zip = mode == 1;
    sw->reps = (unsigned)reps;
    if ((rc = sweep_set_base(sw, base, conf_get(root, "base"), err)))
        goto fail;
    rc = -EINVAL;

    const struct conf_node *axes = conf_get(root, "axes");
    if (!axes || axes->kind != CONF_MAP || axes->n == 0) {
        conf_errf(err, &sw->doc, axes ? axes : root, "axes",
                  "expected a mapping of dotted scenario paths to values, e.g. "
                  "cluster.nodes: [4, 8]");
        goto fail;
    }
    if (axes->n > SWEEP_MAX_AXES) {
        conf_errf(err, &sw->doc, axes, "axes", "more than %d axes", SWEEP_MAX_AXES);
        goto fail;
    }
    for (size_t a = 0; a < axes->n; a++)
        if (sweep_add_axis(sw, axes->keys[a], axes->key_line[a], axes->key_col[a], axes->items[a],
                           err))
            goto fail;
    sw->nzip = sw->zip ? sw->naxes : 0;
    if (sw->zip)
        for (size_t a = 1; a < sw->naxes; a++)
            if (sw->axes[a].n != sw->axes[0].n) {
                struct conf_node at = {.line = axes->key_line[a], .col = axes->key_col[a]};
                conf_errf(err, &sw->doc, &at, sw->axes[a].path,
                          "mode zip needs axes of one length: %zu value(s) here, %zu for '%s'",
                          sw->axes[a].n, sw->axes[0].n, sw->axes[0].path);
                goto fail;
            }
    if (sweep_count(sw, axes, err))
        goto fail;
    make_hash(sw);
    return 0;
nomem:
    snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
    rc = -ENOMEM;
fail:
    sweep_release(sw);
    return rc;
}

void sweep_release(struct sweep *sw)
{
    for (size_t a = 0; a < sw->naxes; a++) {
        for (size_t i = 0; i < sw->axes[a].n; i++)
            free(sw->axes[a].vals[i]);
        free(sw->axes[a].vals);
        free(sw->axes[a].line);
        free(sw->axes[a].col);
    }
    free(sw->path);
    free(sw->base_path);
    free(sw->base_text);
    conf_release(&sw->doc);
    memset(sw, 0, sizeof(*sw));
}

size_t sweep_value_index(const struct sweep *sw, size_t p, size_t a)
{
    if (sw->nzip) {
        size_t inner = 1; /* points per value of the zipped block */
        for (size_t b = sw->nzip; b < sw->naxes; b++)
            inner *= sw->axes[b].n;
        if (a < sw->nzip)
            return p / inner;
        p %= inner;
    }
    for (size_t b = sw->naxes; b-- > a + 1;)
        p /= sw->axes[b].n;
    return p % sw->axes[a].n;
}

int sweep_point_sets(const struct sweep *sw, size_t p, char **sets)
{
    for (size_t a = 0; a < sw->naxes; a++) {
        const char *path = sw->axes[a].path, *v = sw->axes[a].vals[sweep_value_index(sw, p, a)];
        size_t n = strlen(path) + strlen(v) + 2;
        if (!(sets[a] = malloc(n))) {
            while (a--)
                free(sets[a]);
            return -ENOMEM;
        }
        snprintf(sets[a], n, "%s=%s", path, v);
    }
    return 0;
}

static void free_sets(char **sets, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(sets[i]);
}

int sweep_validate(const struct sweep *sw, struct conf_err *err)
{
    char *sets[SWEEP_MAX_AXES];
    for (size_t p = 0; p < sw->npoints; p++) {
        if (sweep_point_sets(sw, p, sets)) {
            snprintf(err->msg, sizeof(err->msg), "%s: out of memory", sw->path);
            return -ENOMEM;
        }
        struct scenario sc;
        struct conf_err serr;
        int rc = scenario_load_set(&sc, sw->base_path, sw->base_text, (const char *const *)sets,
                                   sw->naxes, &serr);
        if (rc == 0) {
            scenario_release(&sc);
            free_sets(sets, sw->naxes);
            continue;
        }
        /* The value to blame: the override the message names ("--set PATH=VALUE: ..."). */
        size_t blame = 0;
        for (size_t a = 0; a < sw->naxes; a++) {
            size_t n = strlen(sets[a]);
            if (!strncmp(serr.msg, "--set ", 6) && !strncmp(serr.msg + 6, sets[a], n) &&
                serr.msg[6 + n] == ':')
                blame = a;
        }
        const struct sweep_axis *ax = &sw->axes[blame];
        size_t vi = sweep_value_index(sw, p, blame);
        snprintf(err->msg, sizeof(err->msg),
                 "%.120s:%u:%u: axis %.80s value '%.60s' (point %zu): %.200s", sw->path,
                 ax->line[vi], ax->col[vi], ax->path, ax->vals[vi], p, serr.msg);
        free_sets(sets, sw->naxes);
        return -EINVAL;
    }
    return 0;
}

/* ---- running ---------------------------------------------------------------------------- */

struct point_ctx {
    const struct scenario *sc;
    volatile sig_atomic_t *interrupted;
    const char *who; /* message prefix */
};

/* One seed of a point into path: 0 complete, 130 interrupted (path.partial), 1 error. */
static int run_seed(void *ctx, uint64_t seed, const char *path)
{
    const struct point_ctx *c = ctx;
    char err[PATH_MAX + 256];
    struct sim_output *out = NULL;
    if (*c->interrupted)
        return 130;
    if (sim_output_open(&out, path, c->sc, err, sizeof(err))) {
        fprintf(stderr, "%s: %s\n", c->who, err);
        return 1;
    }
    struct sim_sink sink;
    sim_output_sink(out, &sink);
    struct sim s;
    if (sim_init(&s, c->sc, seed, &sink)) {
        sim_output_abort(out);
        if (*c->interrupted)
            return 130;
        fprintf(stderr, "%s: %s: %s\n", c->who, path, s.err);
        return 1;
    }
    int rc = sim_run(&s, c->interrupted);
    if (rc < 0) {
        if (s.sink_error)
            fprintf(stderr, "%s: cannot write %s: %s\n", c->who, path, strerror(-s.sink_error));
        else
            fprintf(stderr, "%s: %s: %s\n", c->who, path, s.err);
        sim_output_abort(out);
        sim_release(&s);
        return 1;
    }
    int wrc = sim_output_finish(out, &s, rc == 0, NULL, err, sizeof(err));
    sim_release(&s);
    if (wrc) {
        fprintf(stderr, "%s: %s\n", c->who, err);
        return 1;
    }
    return rc == 1 ? 130 : 0;
}

/* Point p's scenario (base + its overrides) into *sc; 0, or 1 with a message. */
static int point_scenario(const struct sweep *sw, size_t p, struct scenario *sc, const char *who)
{
    char *sets[SWEEP_MAX_AXES];
    if (sweep_point_sets(sw, p, sets))
        return 1;
    struct conf_err cerr;
    int rc = scenario_load_set(sc, sw->base_path, sw->base_text, (const char *const *)sets,
                               sw->naxes, &cerr);
    free_sets(sets, sw->naxes);
    if (rc) {
        fprintf(stderr, "%s: point %zu: %s\n", who, p, cerr.msg);
        return 1;
    }
    return 0;
}

int sweep_run_seed_here(const struct sweep *sw, size_t p, uint64_t seed_offset, const char *path,
                        volatile sig_atomic_t *interrupted, const char *who)
{
    struct scenario sc;
    if (point_scenario(sw, p, &sc, who))
        return 1;
    struct point_ctx ctx = {&sc, interrupted, who};
    int rc = run_seed(&ctx, sc.seed + seed_offset, path);
    scenario_release(&sc);
    return rc;
}

int sweep_run_point_here(const struct sweep *sw, size_t p, const char *path,
                         volatile sig_atomic_t *interrupted)
{
    const char *who = "tidesim sweep";
    if (sw->reps == 1)
        return sweep_run_seed_here(sw, p, 0, path, interrupted, who);
    struct scenario sc;
    if (point_scenario(sw, p, &sc, who))
        return 1;
    struct point_ctx ctx = {&sc, interrupted, who};
    /* Each seed into "<path>.tmp.<pid>.repNNNN" (an unfinished name), then merged. */
    size_t n = sw->reps, len = strlen(path) + 64;
    char **parts = calloc(n, sizeof(char *));
    int rc = parts ? 0 : 1;
    size_t made = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (!(parts[i] = malloc(len))) {
            rc = 1;
            break;
        }
        snprintf(parts[i], len, "%s.tmp.%ld.rep%04zu", path, (long)getpid(), i);
        rc = run_seed(&ctx, sc.seed + i, parts[i]);
        made += rc == 0;
    }
    if (!rc) {
        char err[PATH_MAX + 256];
        if (merge_replications(path, (const char *const *)parts, made, true, NULL, err,
                               sizeof(err))) {
            fprintf(stderr, "%s: %s\n", who, err);
            rc = 1;
        }
    }
    for (size_t i = 0; parts && i < n; i++) {
        if (parts[i]) {
            unlink(parts[i]);
            char partial[PATH_MAX + 80];
            snprintf(partial, sizeof(partial), "%s.partial", parts[i]);
            unlink(partial);
        }
        free(parts[i]);
    }
    free(parts);
    scenario_release(&sc);
    return rc;
}

/* The whole of a point, in its own process: its scenario, then one run or replications. */
static int run_point(const struct sweep *sw, size_t p, const char *path, unsigned jobs,
                     volatile sig_atomic_t *interrupted)
{
    struct scenario sc;
    if (point_scenario(sw, p, &sc, "tidesim sweep"))
        return 1;
    struct point_ctx ctx = {&sc, interrupted, "tidesim sweep"};
    int rc;
    if (sw->reps == 1) {
        rc = run_seed(&ctx, sc.seed, path);
    } else {
        struct replicate_opts ro = {.path = path,
                                    .seed = sc.seed,
                                    .reps = sw->reps,
                                    .max_reps = sw->reps,
                                    .jobs = jobs,
                                    .quiet = true,
                                    .interrupted = interrupted};
        rc = replicate_run(&ro, run_seed, &ctx);
    }
    scenario_release(&sc);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fmt_dur(char *b, size_t n, double s)
{
    long long t = (long long)(s + 0.5);
    if (t >= 3600)
        snprintf(b, n, "%lldh%02lldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(b, n, "%lldm%02llds", t / 60, t % 60);
    else
        snprintf(b, n, "%llds", t);
}

/* Is name one of this folder's point files or their leftovers ("point-NNNN.h5...")? */
static bool is_point_name(const char *name)
{
    if (strncmp(name, "point-", 6))
        return false;
    size_t d = 0;
    while (name[6 + d] >= '0' && name[6 + d] <= '9')
        d++;
    return d >= 4 && !strncmp(name + 6 + d, ".h5", 3);
}

/*
 * Remove what earlier runs left unfinished (temporary and partial files of
 * points and of the index) and, when `all`, every point file. Safe: the lock
 * says no other sweep writes into dir. Returns the number of complete-looking
 * point files seen (before removal).
 */
static size_t tidy(const char *dir, bool all)
{
    DIR *d = opendir(dir);
    size_t points = 0;
    if (!d)
        return 0;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        bool point = is_point_name(n);
        bool final = point && !strcmp(strstr(n, ".h5"), ".h5");
        bool leftover = (point && !final) || !strncmp(n, "index.h5.tmp.", 13);
        points += final;
        if (leftover || (all && point)) {
            snprintf(path, sizeof(path), "%s/%s", dir, n);
            unlink(path);
        }
    }
    closedir(d);
    return points;
}

struct slot {
    pid_t pid;
    size_t point;
    unsigned width; /* processes it may use */
    double started;
};

struct runner {
    const struct sweep *sw;
    const struct sweep_run_opts *o;
    char **files, **paths;
    const char **vals;
    bool *done;
    size_t *order; /* the points in the order they are handed out (sweep_point_order) */
    bool tty;
    size_t ndone, ntodo, finished; /* finished: points completed by this run */
    double t0;
};

static int write_index(const struct runner *r)
{
    const char *axes[SWEEP_MAX_AXES];
    for (size_t a = 0; a < r->sw->naxes; a++)
        axes[a] = r->sw->axes[a].path;
    struct sweepidx_desc d = {.dir = r->o->dir,
                              .npoints = r->sw->npoints,
                              .naxes = r->sw->naxes,
                              .axes = axes,
                              .values = r->vals,
                              .files = (const char *const *)r->files,
                              .done = r->done,
                              .replications = r->sw->reps,
                              .mode = r->sw->zip ? "zip" : "grid",
                              .hash = r->sw->hash,
                              .sweep_path = r->sw->path,
                              .sweep_text = r->sw->doc.text,
                              .base_path = r->sw->base_path,
                              .base_text = r->sw->base_text,
                              .version = TIDESIM_VERSION,
                              .git_commit = TIDESIM_GIT};
    char err[PATH_MAX + 600];
    if (sweepidx_write(&d, err, sizeof(err))) {
        fprintf(stderr, "tidesim sweep: %s\n", err);
        return 1;
    }
    return 0;
}

static void show(const struct runner *r, size_t running, size_t p, double took, bool ok)
{
    if (r->o->quiet)
        return;
    if (r->tty) {
        char eta[32] = "-";
        double el = now_s() - r->t0;
        if (r->finished > 0)
            fmt_dur(eta, sizeof(eta), el / (double)r->finished * (double)(r->ntodo - r->finished));
        fprintf(stderr, "\r  sweep: %zu/%zu points done, %zu running, ETA %s   ", r->ndone,
                r->sw->npoints, running, eta);
        return;
    }
    if (p == SIZE_MAX)
        return;
    fprintf(stderr, "tidesim sweep: point %zu %s (%zu/%zu done) in %.1f s:", p,
            ok ? "done" : "FAILED", r->ndone, r->sw->npoints, took);
    for (size_t a = 0; a < r->sw->naxes; a++)
        fprintf(stderr, " %s=%s", r->sw->axes[a].path, r->vals[p * r->sw->naxes + a]);
    fputc('\n', stderr);
}

/* The points' cost estimate and dispatch order: sweep.h. */
double sweep_point_cost(const struct sweep *sw, size_t p)
{
    struct scenario sc;
    char *sets[SWEEP_MAX_AXES];
    if (sweep_point_sets(sw, p, sets))
        return 0;
    struct conf_err cerr;
    int rc = scenario_load_set(&sc, sw->base_path, sw->base_text, (const char *const *)sets,
                               sw->naxes, &cerr);
    free_sets(sets, sw->naxes);
    if (rc)
        return 0;
    double run_s = (double)sc.duration / (double)SIM_SEC, cost = 0;
    for (size_t i = 0; i < sc.nservices; i++) {
        const struct service_cfg *s = &sc.services[i];
        if (!s->from_trace) {
            cost += rate_profile_mean(&s->arrivals) * run_s;
            continue;
        }
        struct stat st;
        double bytes = stat(s->trace.path, &st) == 0 ? (double)st.st_size : 0;
        double days = run_s / 86400.0;
        cost += bytes / 50.0 * s->trace.scale * (s->trace.loop && days > 1 ? days : 1);
    }
    cost += (double)scenario_gpus(&sc) * run_s / 10.0;
    scenario_release(&sc);
    return cost;
}

void sweep_point_order(const struct sweep *sw, const bool *done, size_t *order)
{
    size_t n = sw->npoints;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    double *cost = calloc(n ? n : 1, sizeof(*cost));
    if (!cost)
        return; /* no memory: grid order */
    for (size_t i = 0; i < n; i++)
        cost[i] = done && done[i] ? 0 : sweep_point_cost(sw, i);
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable */
        size_t v = order[i], j = i;
        for (; j > 0 && cost[order[j - 1]] < cost[v]; j--)
            order[j] = order[j - 1];
        order[j] = v;
    }
    free(cost);
}

static int run_all(struct runner *r)
{
    const struct sweep *sw = r->sw;
    unsigned jobs = r->o->jobs;
    if (jobs == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = nc > 0 ? (unsigned)nc : 1;
    }
    struct slot *sl = calloc(jobs, sizeof(*sl));
    if (!sl) {
        fprintf(stderr, "tidesim sweep: out of memory\n");
        return 1;
    }
    size_t next = 0, running = 0, pending = r->ntodo;
    unsigned used = 0;
    bool failed = false, stopping = false;
    pid_t self = getpid();
    while (true) {
        if (*r->o->interrupted && !stopping) {
            stopping = true;
            for (unsigned i = 0; i < jobs; i++)
                if (sl[i].pid > 0)
                    kill(sl[i].pid, SIGINT);
        }
        while (next < sw->npoints && r->done[r->order[next]])
            next++;
        if (!stopping && next < sw->npoints && used < jobs) {
            unsigned free_slots = jobs - used;
            unsigned width = 1;
            if (sw->reps > 1 && pending > 0 && free_slots / pending > 1)
                width = free_slots / (unsigned)pending;
            if (width > sw->reps)
                width = sw->reps;
            unsigned k = 0;
            while (sl[k].pid > 0)
                k++;
            fflush(NULL);
            size_t pt = r->order[next];
            pid_t pid = fork();
            if (pid < 0) {
                fprintf(stderr, "tidesim sweep: cannot start point %zu: %s\n", pt, strerror(errno));
                failed = stopping = true;
                continue;
            }
            if (pid == 0) {
                h5_rd_die_with_parent(self);
                _exit(run_point(sw, pt, r->paths[pt], width, r->o->interrupted));
            }
            sl[k] = (struct slot){pid, pt, width, now_s()};
            used += width;
            running++;
            pending--;
            next++;
            show(r, running, SIZE_MAX, 0, true);
            continue;
        }
        if (running == 0)
            break;
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (unsigned i = 0; i < jobs; i++) {
            if (sl[i].pid != pid)
                continue;
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            size_t p = sl[i].point;
            running--;
            used -= sl[i].width;
            sl[i].pid = 0;
            char partial[PATH_MAX];
            snprintf(partial, sizeof(partial), "%s.partial", r->paths[p]);
            unlink(partial); /* an interrupted point is run again from the start */
            if (code == 0 && sweepidx_point_complete(r->paths[p])) {
                r->done[p] = true;
                r->ndone++;
                r->finished++;
                show(r, running, p, now_s() - sl[i].started, true);
            } else if (code != 130 && !(code == -1 && stopping)) {
                if (!failed && r->tty && !r->o->quiet)
                    fputc('\n', stderr);
                if (!r->tty || r->o->quiet || !failed)
                    fprintf(stderr, "tidesim sweep: point %zu failed (exit status %d)\n", p, code);
                failed = stopping = true;
                for (unsigned j = 0; j < jobs; j++)
                    if (sl[j].pid > 0)
                        kill(sl[j].pid, SIGINT);
            }
        }
    }
    free(sl);
    if (r->tty && !r->o->quiet)
        fputc('\n', stderr);
    if (failed)
        return 1;
    return *r->o->interrupted && r->ndone < sw->npoints ? 130 : 0;
}

int sweep_task(void *ctx, const struct dispatch_task *t)
{
    const struct sweep_task_ctx *c = ctx;
    if (t->a >= c->sw->npoints)
        return 1;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/point-%04llu.h5", c->dir, (unsigned long long)t->a);
    return sweep_run_point_here(c->sw, (size_t)t->a, path, c->interrupted);
}

/* The points through a dispatcher (MPI ranks): one task per point, handed to the next free
 * worker; the master only hands out, collects and writes the index. */
static int run_all_dispatch(struct runner *r)
{
    const struct sweep *sw = r->sw;
    struct dispatch *d = r->o->d;
    size_t *at = calloc(d->slots, sizeof(*at));
    double *t0 = calloc(d->slots, sizeof(*t0));
    if (!at || !t0) {
        free(at);
        free(t0);
        fprintf(stderr, "tidesim sweep: out of memory\n");
        return 1;
    }
    size_t next = 0, running = 0;
    bool failed = false, stopping = false;
    while (true) {
        if (*r->o->interrupted && !stopping) {
            stopping = true;
            d->stop(d);
        }
        while (next < sw->npoints && r->done[r->order[next]])
            next++;
        if (!stopping && next < sw->npoints && running < d->slots) {
            size_t pt = r->order[next];
            struct dispatch_task t = {pt, 0};
            unsigned slot;
            int rc = d->start(d, &t, &slot);
            if (rc) {
                fprintf(stderr, "tidesim sweep: cannot start point %zu: %s\n", pt, strerror(-rc));
                failed = stopping = true;
                continue;
            }
            at[slot] = pt;
            t0[slot] = now_s();
            running++;
            next++;
            show(r, running, SIZE_MAX, 0, true);
            continue;
        }
        if (running == 0)
            break;
        unsigned slot;
        int code;
        int rc = d->wait(d, &slot, &code);
        if (rc == -EINTR)
            continue;
        if (rc)
            break;
        running--;
        size_t p = at[slot];
        char partial[PATH_MAX];
        snprintf(partial, sizeof(partial), "%s.partial", r->paths[p]);
        unlink(partial);
        if (code == 0 && sweepidx_point_complete(r->paths[p])) {
            r->done[p] = true;
            r->ndone++;
            r->finished++;
            show(r, running, p, now_s() - t0[slot], true);
        } else if (code != 130 && !(code == -1 && stopping)) {
            fprintf(stderr, "tidesim sweep: point %zu failed (exit status %d)\n", p, code);
            failed = stopping = true;
            d->stop(d);
        }
    }
    free(at);
    free(t0);
    if (r->tty && !r->o->quiet)
        fputc('\n', stderr);
    if (failed)
        return 1;
    return *r->o->interrupted && r->ndone < sw->npoints ? 130 : 0;
}

/* Create dir when missing (one level, as mkdir does). */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "tidesim sweep: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tidesim sweep: %s is not a folder\n", dir);
        return 1;
    }
    return 0;
}

/* Is the folder's earlier content this sweep's? 0 yes (or empty), 1 refused (message printed). */
static int check_owner(const struct sweep *sw, const char *dir, const char *index, bool force,
                       bool *wipe)
{
    char *hash = NULL;
    char err[PATH_MAX + 600];
    int rc = sweepidx_read_hash(index, &hash, err, sizeof(err));
    *wipe = false;
    if (rc == -ENOENT) {
        size_t stale = tidy(dir, false);
        if (stale == 0)
            return 0;
        if (!force) {
            fprintf(stderr,
                    "tidesim sweep: %s holds %zu point file(s) but no index: not this sweep's? "
                    "--force runs every point again (replacing them)\n",
                    dir, stale);
            return 1;
        }
        *wipe = true;
        return 0;
    }
    bool same = rc == 0 && !strcmp(hash, sw->hash);
    free(hash);
    if (same)
        return 0;
    if (!force) {
        if (rc)
            fprintf(stderr, "tidesim sweep: %s; --force replaces it\n", err);
        else
            fprintf(stderr,
                    "tidesim sweep: %s was made by another sweep file, base scenario or binary "
                    "(its hash differs from this sweep's %s); --force runs every point again\n",
                    index, sw->hash);
        return 1;
    }
    *wipe = true;
    return 0;
}

int sweep_run(const struct sweep *sw, const struct sweep_run_opts *o)
{
    if (make_dir(o->dir))
        return 1;
    char lockp[PATH_MAX], index[PATH_MAX];
    if (snprintf(lockp, sizeof(lockp), "%s/.sweep.lock", o->dir) >= (int)sizeof(lockp) - 32) {
        fprintf(stderr, "tidesim sweep: folder name too long: %s\n", o->dir);
        return 1;
    }
    snprintf(index, sizeof(index), "%s/index.h5", o->dir);
    int lock = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB)) {
        fprintf(stderr, "tidesim sweep: %s: %s\n", o->dir,
                lock < 0 ? strerror(errno) : "another sweep is running in this folder");
        if (lock >= 0)
            close(lock);
        return 1;
    }
    int status = 1;
    bool wipe;
    struct runner r = {.sw = sw, .o = o, .tty = isatty(STDERR_FILENO), .t0 = now_s()};
    if (check_owner(sw, o->dir, index, o->force, &wipe))
        goto out_lock;
    tidy(o->dir, wipe);
    if (wipe)
        unlink(index);
    r.files = calloc(sw->npoints, sizeof(char *));
    r.paths = calloc(sw->npoints, sizeof(char *));
    r.vals = calloc(sw->npoints * sw->naxes, sizeof(char *));
    r.done = calloc(sw->npoints, sizeof(bool));
    r.order = calloc(sw->npoints, sizeof(size_t));
    if (!r.files || !r.paths || !r.vals || !r.done || !r.order)
        goto nomem;
    for (size_t p = 0; p < sw->npoints; p++) {
        char name[64], path[PATH_MAX];
        snprintf(name, sizeof(name), "point-%04zu.h5", p);
        snprintf(path, sizeof(path), "%s/%s", o->dir, name);
        if (!(r.files[p] = strdup(name)) || !(r.paths[p] = strdup(path)))
            goto nomem;
        for (size_t a = 0; a < sw->naxes; a++)
            r.vals[p * sw->naxes + a] = sw->axes[a].vals[sweep_value_index(sw, p, a)];
        r.done[p] = sweepidx_point_complete(path) == 1;
        r.ndone += r.done[p];
    }
    r.ntodo = sw->npoints - r.ndone;
    if (write_index(&r))
        goto out;
    if (!o->quiet)
        fprintf(stderr,
                "tidesim sweep: %zu point(s) × %u replication(s); %zu complete, %zu to run%s\n",
                sw->npoints, sw->reps, r.ndone, r.ntodo, r.ntodo ? "" : ": nothing to do");
    if (r.ntodo > 1 && (o->d || o->jobs != 1))
        sweep_point_order(sw, r.done, r.order);
    else
        for (size_t p = 0; p < sw->npoints; p++)
            r.order[p] = p; /* one at a time: grid order, no estimate */
    status = r.ntodo ? (o->d ? run_all_dispatch(&r) : run_all(&r)) : 0;
    if (r.ntodo && write_index(&r) && status == 0)
        status = 1;
    if (!o->quiet || status)
        fprintf(stderr, "tidesim sweep: %s: %zu of %zu point(s) complete%s\n", index, r.ndone,
                sw->npoints,
                status == 130 ? " (interrupted; run the sweep again to finish it)" : "");
    goto out;
nomem:
    fprintf(stderr, "tidesim sweep: out of memory\n");
out:
    for (size_t p = 0; r.files && p < sw->npoints; p++)
        free(r.files[p]);
    for (size_t p = 0; r.paths && p < sw->npoints; p++)
        free(r.paths[p]);
    free(r.files);
    free(r.paths);
    free(r.vals);
    free(r.done);
    free(r.order);
out_lock:
    close(lock);
    return status;
}
