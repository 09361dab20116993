/* arrivals.c — inference trace adapters over csvstream, time handling, merging. */
#include "traces/arrivals.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "sim/core/rng.h"
#include "traces/csvstream.h"
#include "traces/tokens.h"

#define SERVEGEN_WINDOW (600 * SIM_SEC) /* ServeGen README: 600 s windows */
#define SG_MIN_SHAPE    0.001           /* inter-arrival shape (Gamma k, Weibull k) */
#define SG_MIN_WEIBULL  0.1             /* Weibull k (sg_row) */
#define SG_MAX_SHAPE    1e6
/* A clipped-away ServeGen window with more expected arrivals than this has its last arrival
 * drawn alone (sg_last_age) at scale > 1; a smaller one is drawn whole. A window the clip
 * cuts, with more expected arrivals before the clip than this, starts at the clip
 * (sg_straddle); so does a counts interval (acnt_straddle). */
#define SG_AGE_MIN_ARRIVALS 1e4

/* Limits named in messages (traces/source.h, sim/core/simtime.h). */
#define LIMIT_YEARS_TEXT "100"
_Static_assert(SIM_TIME_LIMIT_YEARS == 100, "LIMIT_YEARS_TEXT names SIM_TIME_LIMIT");

void trace_time_opts_init(struct trace_time_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->scale = 1.0;
}

/* ---- raw readers: records in trace time (before loop/scale/offset/clip) ---- */

struct astats {
    uint64_t skipped, rows;
    struct trace_err first;
    bool skip_bad;
};

struct araw;

struct araw_ops {
    int (*next)(struct araw *r, struct arrival *out, struct trace_err *err);
    int (*rewind)(struct araw *r, struct trace_err *err);
    void (*destroy)(struct araw *r);
};

struct araw {
    struct araw_ops ops; /* copied in: no relocated tables in the library */
    struct astats *st;
    sim_time skip_before; /* trace time before which nothing is kept (a hint for generators) */
    /* At scale > 1 the copies of each arrival spread up to the next one (tsrc_superpose), so
     * the last arrival before skip_before reaches past it: a reader that can draw that last
     * arrival alone sets keeps_last, and then tsrc sets skip_before at every scale and
     * keep_last at scale > 1; a reader without it gets no hint at scale > 1. */
    bool keeps_last, keep_last;
};

/* A malformed row: counted and skipped (returns 0) or returned as the error. */
static int bad_row(struct astats *st, int rc, const struct trace_err *e, struct trace_err *err)
{
    if (rc == -EINVAL && st->skip_bad) {
        if (st->skipped++ == 0)
            st->first = *e;
        return 0;
    }
    *err = *e;
    return rc;
}

static int origin_parse(const char *origin, enum tfield_unit unit, int32_t tz, int64_t *us)
{
    return tfield_time(origin, unit, tz, us);
}

/* Local midnight (in tz) of the day holding `us`, as µs UTC. */
static int64_t local_midnight(int64_t us, int32_t tz_s)
{
    int64_t local = us + (int64_t)tz_s * 1000000;
    int64_t day = local >= 0 ? local / SIM_DAY : -((-local + SIM_DAY - 1) / SIM_DAY);
    return day * SIM_DAY - (int64_t)tz_s * 1000000;
}

/*
 * Trace time of field col: us − origin, within ±SIM_TIME_LIMIT (a stamp
 * centuries from the origin would wrap the run's clock once loop shifts and
 * offsets are added). Returns 0 or -EINVAL with e filled.
 */
static int trace_time(const struct csvstream *cs, int col, int64_t us, int64_t origin, sim_time *t,
                      struct trace_err *e)
{
    if (sim_time_sub_checked(us, origin, t) < 0 || !sim_time_in_range(*t))
        return csvstream_field_error(cs, e, (size_t)col,
                                     "a time within " LIMIT_YEARS_TEXT " years of the origin");
    return 0;
}

/* Remember the previous time field for "goes backwards" messages. */
struct lastref {
    bool have;
    int64_t us, line;
    char text[48];
};

static int check_monotonic(struct lastref *l, const struct csvstream *cs, int col, int64_t us,
                           struct trace_err *e)
{
    if (l->have && us < l->us) {
        char got[48];
        snprintf(got, sizeof(got), "%.40s", csvstream_field(cs, (size_t)col));
        return csvstream_error(cs, e,
                               "column '%s': timestamp goes backwards ('%s' after '%s' at "
                               "line %lld)",
                               csvstream_colname(cs, (size_t)col), got, l->text,
                               (long long)l->line);
    }
    l->have = true;
    l->us = us;
    l->line = csvstream_line(cs);
    snprintf(l->text, sizeof(l->text), "%.40s", csvstream_field(cs, (size_t)col));
    return 0;
}

static const char *unit_expect(enum tfield_unit u)
{
    switch (u) {
    case TFIELD_WALL:
        return "a wall-clock time YYYY-MM-DD HH:MM:SS[.fffffff]";
    case TFIELD_MS:
        return "a time in milliseconds (at most " LIMIT_YEARS_TEXT " years)";
    case TFIELD_US:
        return "a time in microseconds (at most " LIMIT_YEARS_TEXT " years)";
    case TFIELD_SEC:
    default:
        return "a time in seconds (at most " LIMIT_YEARS_TEXT " years)";
    }
}

static int parse_tokens(const struct csvstream *cs, int col, uint32_t *out, struct trace_err *e)
{
    int64_t v;
    if (col < 0) {
        *out = 0;
        return 0;
    }
    if (tfield_i64(csvstream_field(cs, (size_t)col), &v) < 0 || v < 0)
        return csvstream_field_error(cs, e, (size_t)col, "a non-negative integer token count");
    if (v > TRACE_MAX_TOKENS)
        return csvstream_field_error(cs, e, (size_t)col, "a token count of at most 10000000");
    *out = (uint32_t)v;
    return 0;
}

static int need_col(const struct csvstream *cs, const char *name, struct trace_err *err)
{
    int c = csvstream_col(cs, name);
    if (c < 0) {
        char have[256] = "";
        size_t o = 0;
        for (size_t i = 0; i < csvstream_ncols(cs) && o + 2 < sizeof(have); i++) {
            int w = snprintf(have + o, sizeof(have) - o, "%s%s", i ? "," : "",
                             csvstream_colname(cs, i));
            if (w < 0)
                break;
            o += (size_t)w;
        }
        snprintf(err->msg, sizeof(err->msg), "%s:1: missing column '%s' (header: %.200s)",
                 csvstream_path(cs), name, have);
    }
    return c;
}

/* -- per-request CSV -- */

struct acsv {
    struct araw base;
    struct csvstream *cs;
    int ct, ci, co;
    enum tfield_unit unit;
    int32_t tz;
    bool origin_set;
    int64_t origin;
    struct lastref last;
};

static int acsv_row(struct acsv *r, struct arrival *out, struct trace_err *e)
{
    int64_t us;
    if (tfield_time(csvstream_field(r->cs, (size_t)r->ct), r->unit, r->tz, &us) < 0)
        return csvstream_field_error(r->cs, e, (size_t)r->ct, unit_expect(r->unit));
    if (parse_tokens(r->cs, r->ci, &out->in_tokens, e) < 0 ||
        parse_tokens(r->cs, r->co, &out->out_tokens, e) < 0)
        return -EINVAL;
    if (check_monotonic(&r->last, r->cs, r->ct, us, e) < 0)
        return -EINVAL;
    if (!r->origin_set) {
        r->origin = r->unit == TFIELD_WALL ? local_midnight(us, r->tz) : 0;
        r->origin_set = true;
    }
    return trace_time(r->cs, r->ct, us, r->origin, &out->t, e);
}

static int acsv_next(struct araw *raw, struct arrival *out, struct trace_err *err)
{
    struct acsv *r = (struct acsv *)raw;
    for (;;) {
        int rc = csvstream_next(r->cs, err);
        if (rc != 0)
            return rc;
        r->base.st->rows++;
        struct trace_err e;
        rc = acsv_row(r, out, &e);
        if (rc == 0)
            return 0;
        rc = bad_row(r->base.st, rc, &e, err);
        if (rc < 0)
            return rc;
    }
}

static int acsv_rewind(struct araw *raw, struct trace_err *err)
{
    struct acsv *r = (struct acsv *)raw;
    r->last.have = false;
    return csvstream_rewind(r->cs, err);
}

static void acsv_destroy(struct araw *raw)
{
    struct acsv *r = (struct acsv *)raw;
    csvstream_destroy(r->cs);
    free(r);
}

static struct araw *acsv_create(const char *path, const struct arrival_csv_map *m,
                                const struct trace_time_opts *o, struct trace_err *err)
{
    struct csvstream_opts co = {.header = true};
    struct acsv *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return NULL;
    }
    r->base.ops = (struct araw_ops){acsv_next, acsv_rewind, acsv_destroy};
    r->cs = csvstream_open(path, &co, err);
    if (!r->cs)
        goto fail;
    if (!m->time_col || (r->ct = need_col(r->cs, m->time_col, err)) < 0)
        goto fail;
    r->ci = r->co = -1;
    if (m->in_col && (r->ci = need_col(r->cs, m->in_col, err)) < 0)
        goto fail;
    if (m->out_col && (r->co = need_col(r->cs, m->out_col, err)) < 0)
        goto fail;
    r->unit = m->unit;
    r->tz = o->tz_s;
    if (o->origin && *o->origin) {
        if (origin_parse(o->origin, m->unit, o->tz_s, &r->origin) < 0) {
            snprintf(err->msg, sizeof(err->msg), "origin: expected %s, got '%.60s'",
                     unit_expect(m->unit), o->origin);
            goto fail;
        }
        r->origin_set = true;
    }
    return &r->base;
fail:
    acsv_destroy(&r->base);
    return NULL;
}

/* -- ServeGen per-window client file -- */

enum sg_pattern { SG_NONE, SG_GAMMA, SG_WEIBULL };

struct asg {
    struct araw base;
    struct csvstream *cs;
    struct rng rng;
    bool rng_live;
    int64_t origin;
    struct lastref last;
    enum sg_pattern pat;
    double shape, gscale; /* gap = draw(shape, 1) · gscale µs */
    double nt, w_end;     /* next arrival, window end (µs, trace time) */
    bool last_only;       /* nt is a clipped-away window's last arrival: the window ends */
    bool resume;          /* nt is the last arrival before the clip; then resume_at */
    double resume_at;
    struct tok_servegen *tok; /* the client's token PMFs (o->tokens), or NULL */
    struct rng tok_rng;       /* their draws */
};

static double sg_draw(struct asg *r)
{
    if (r->pat == SG_GAMMA)
        return gsl_ran_gamma(r->rng.g, r->shape, 1.0) * r->gscale;
    return gsl_ran_weibull(r->rng.g, 1.0, r->shape) * r->gscale;
}

/*
 * The age (time back to the last arrival) of a stationary renewal process at a fixed time,
 * drawn alone, and in *gap the gap that spans that time: the age has the equilibrium density
 * (1 − F(a)) / μ, which is U · X̃ with X̃ the length-biased gap (density x f(x) / μ) and U
 * uniform on (0, 1); the forward recurrence time is (1 − U) · X̃, with the same law (Cox,
 * "Renewal Theory", 1962, ch. 5; Ross, "Stochastic Processes", 2nd ed., §3.4). Length-biased
 * Gamma(k, 1) is Gamma(k + 1, 1); length-biased Weibull(1, k) is G^(1/k) with G ~ Gamma(1 +
 * 1/k, 1) (X = E^(1/k), E ~ Exp(1), and x f(x) turns e^-y into y^(1/k) e^-y). A window starts
 * its process this way (sg_row), so the draws at its end (sg_last_age) and at a clip inside
 * it (sg_straddle) are exact; SG_AGE_MIN_ARRIVALS only decides when drawing alone pays.
 */
static double sg_age(struct asg *r, double *gap)
{
    /* Two draws in their own statements: C leaves the order of operands open. */
    if (r->pat == SG_GAMMA) {
        double g = gsl_ran_gamma(r->rng.g, r->shape + 1.0, 1.0);
        double u = rng_uniform_pos(&r->rng);
        *gap = g * r->gscale;
        return u * g * r->gscale;
    }
    /* In logs: at a shape near 0.006 G^(1/k) overflows while gscale is ~1e-300. */
    double g = gsl_ran_gamma(r->rng.g, 1.0 + 1.0 / r->shape, 1.0);
    double x = exp(log(g) / r->shape + log(r->gscale));
    *gap = x;
    return rng_uniform_pos(&r->rng) * x;
}

static double sg_last_age(struct asg *r)
{
    double gap;
    return sg_age(r, &gap);
}

/*
 * A window the clip cuts at c = skip_before, with more than SG_AGE_MIN_ARRIVALS expected
 * arrivals in [w0, c): the arrivals before c are not drawn (at 10^6 req/s that was up to 6·10^8
 * draws to drop; the ServeGen fuzzer found one taking 7 s). The window's process being
 * stationary from its start (sg_row), the gap that spans c is the length-biased gap X̃, split at U
 * (Cox, "Renewal Theory", ch. 5, as sg_last_age): the last arrival before c is at c − U·X̃
 * and the first after it at c + (1 − U)·X̃. The first after c starts the window's draws again;
 * the last before it is emitted only at scale > 1 (keep_last), where its copies reach past c.
 */
static void sg_straddle(struct asg *r, double c)
{
    double gap, age = sg_age(r, &gap);
    double after = c + (gap - age);
    r->nt = after;
    if (r->base.keep_last && c - age >= r->w_end - (double)SERVEGEN_WINDOW) {
        r->nt = c - age;
        r->resume = true;
        r->resume_at = after;
    }
}

static int sg_row(struct asg *r, struct trace_err *e)
{
    const struct csvstream *cs = r->cs;
    double ts, rate, shape = 0, scale = 0;
    if (tfield_f64(csvstream_field(cs, 0), &ts) < 0 || ts < 0 || ts > SIM_TIME_LIMIT_SEC)
        return csvstream_field_error(cs, e, 0,
                                     "a window start in seconds, 0.." LIMIT_YEARS_TEXT " years");
    if (tfield_f64(csvstream_field(cs, 1), &rate) < 0 || rate < 0 || rate > TRACE_MAX_RATE)
        return csvstream_field_error(cs, e, 1, "a rate in req/s, 0..1000000");
    const char *p = csvstream_field(cs, 3);
    enum sg_pattern pat;
    if (*p == '\0')
        pat = SG_NONE;
    else if (strcmp(p, "Gamma") == 0)
        pat = SG_GAMMA;
    else if (strcmp(p, "Weibull") == 0)
        pat = SG_WEIBULL;
    else
        return csvstream_field_error(cs, e, 3, "'Gamma', 'Weibull' or empty");
    if (pat != SG_NONE) {
        /* ServeGen's fitted shapes span 0.01..364 (traces/data/servegen). Below 0.001 a
         * Gamma draw underflows to 0 for good: endless arrivals at one instant. Weibull
         * shapes there span 0.16..2.3; below 0.1 the mean gap rests on gaps of probability
         * ~e^(-1/k), so a window draws ~e^(1/k) arrivals before its rate shows: at k = 0.018
         * and 0.9 req/s about 10^10 at one instant (a ServeGen fuzzer timeout). At k = 0.1 a
         * window of 600 nominal arrivals draws ~2,100 (median of 40), at k = 0.16 ~840. */
        bool weibull = pat == SG_WEIBULL;
        if (tfield_f64(csvstream_field(cs, 4), &shape) < 0 ||
            !(shape >= (weibull ? SG_MIN_WEIBULL : SG_MIN_SHAPE)) || shape > SG_MAX_SHAPE)
            return csvstream_field_error(cs, e, 4,
                                         weibull ? "a Weibull shape in [0.1, 1000000]"
                                                 : "a shape in [0.001, 1000000]");
        if (tfield_f64(csvstream_field(cs, 5), &scale) < 0 || !(scale > 0))
            return csvstream_field_error(cs, e, 5, "a positive scale");
    }
    int64_t us = sim_time_from_sec(ts); /* <= SIM_TIME_LIMIT: + a window cannot wrap */
    if (r->last.have && us >= r->last.us && us < r->last.us + SERVEGEN_WINDOW)
        return csvstream_error(cs, e,
                               "column 'timestamp': window at %.40s s overlaps the previous one "
                               "(windows are 600 s)",
                               csvstream_field(cs, 0));
    if (check_monotonic(&r->last, cs, 0, us, e) < 0)
        return -EINVAL;
    sim_time tw;
    if (trace_time(cs, 0, us, r->origin, &tw, e) < 0)
        return -EINVAL;
    double w0 = (double)tw;
    r->w_end = w0 + (double)SERVEGEN_WINDOW;
    r->pat = rate > 0 ? pat : SG_NONE;
    r->resume = false;
    /* Clipped away: do not draw. At scale > 1 the window's last arrival is still needed (its
     * copies spread up to the next arrival, past the clip): a window of few arrivals is drawn
     * whole; in a larger one the last arrival is drawn alone (sg_last_age). */
    bool clipped = r->w_end <= (double)r->base.skip_before;
    if (clipped && !r->base.keep_last)
        r->pat = SG_NONE;
    r->last_only = clipped && r->base.keep_last && rate * 600.0 > SG_AGE_MIN_ARRIVALS;
    if (r->pat != SG_NONE) {
        /* Mean of one unit-scale draw: Gamma k·1, Weibull Γ(1 + 1/k). */
        double mean = r->pat == SG_GAMMA ? shape : tgamma(1.0 + 1.0 / shape);
        /* A Weibull shape below ~0.006 has a mean beyond DBL_MAX: the gaps would be
         * 0 · ∞ and the window would emit arrivals at one instant for ever. */
        if (!isfinite(mean) || !(mean > 0))
            return csvstream_field_error(cs, e, 4, "a shape whose mean gap is finite");
        r->shape = shape;
        r->gscale = 1e6 / (rate * mean);
        double c = (double)r->base.skip_before;
        if (r->last_only) {
            r->nt = r->w_end - sg_last_age(r);
        } else if (c > w0 && c < r->w_end && rate * (c - w0) / 1e6 > SG_AGE_MIN_ARRIVALS) {
            sg_straddle(r, c);
        } else {
            /* The stationary start: the first arrival comes after the forward recurrence
             * time, U · X̃ (length-biased gap), so that a window holds rate × 600 s arrivals
             * on average whatever its shape. U · X, the start before, gave a window of few
             * heavy-tailed gaps more: Weibull 0.16 at 1 req/s replayed ~+38 %. */
            double gap;
            r->nt = w0 + sg_age(r, &gap);
        }
        if (r->last_only && !(r->nt >= w0))
            r->pat = SG_NONE; /* no arrival in the window (chance ~e^-10^4) */
    }
    return 0;
}

static int asg_next(struct araw *raw, struct arrival *out, struct trace_err *err)
{
    struct asg *r = (struct asg *)raw;
    for (;;) {
        if (r->pat != SG_NONE && r->nt < r->w_end) {
            out->t = (sim_time)r->nt;
            out->in_tokens = out->out_tokens = 0;
            if (r->tok) /* the file's own clock: trace time + origin, s */
                tok_servegen_draw(r->tok, (r->nt + (double)r->origin) / 1e6, &r->tok_rng,
                                  &out->in_tokens, &out->out_tokens);
            if (r->resume) {
                r->resume = false;
                r->nt = r->resume_at;
            } else {
                r->nt = r->last_only ? r->w_end : r->nt + sg_draw(r);
            }
            return 0;
        }
        r->pat = SG_NONE;
        int rc = csvstream_next(r->cs, err);
        if (rc != 0)
            return rc;
        r->base.st->rows++;
        struct trace_err e;
        rc = sg_row(r, &e);
        if (rc < 0 && (rc = bad_row(r->base.st, rc, &e, err)) < 0)
            return rc;
    }
}

static int asg_rewind(struct araw *raw, struct trace_err *err)
{
    struct asg *r = (struct asg *)raw;
    r->last.have = false;
    r->pat = SG_NONE;
    return csvstream_rewind(r->cs, err);
}

static void asg_destroy(struct araw *raw)
{
    struct asg *r = (struct asg *)raw;
    csvstream_destroy(r->cs);
    if (r->rng_live)
        rng_release(&r->rng);
    if (r->tok) {
        tok_servegen_free(r->tok);
        rng_release(&r->tok_rng);
    }
    free(r);
}

/* The client's <client>-dataset.json beside <client>-trace.csv, if there is one. */
static int sg_tokens_open(struct asg *r, const char *path, const struct trace_time_opts *o,
                          struct trace_err *err)
{
    static const char suffix[] = "-trace.csv";
    size_t n = strlen(path), k = sizeof(suffix) - 1;
    if (n < k || strcmp(path + n - k, suffix) != 0)
        return 0;
    char ds[4096];
    if (n - k + sizeof("-dataset.json") > sizeof(ds))
        return 0;
    snprintf(ds, sizeof(ds), "%.*s-dataset.json", (int)(n - k), path);
    FILE *f = fopen(ds, "rb");
    if (!f)
        return 0; /* no token data for this client: lengths stay unknown */
    fclose(f);
    r->tok = tok_servegen_load(ds, err);
    if (!r->tok)
        return -EINVAL;
    if (rng_init(&r->tok_rng, o->seed, rng_splitmix64(o->stream_id ^ 0x70c3e5)) < 0) {
        tok_servegen_free(r->tok);
        r->tok = NULL;
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return -ENOMEM;
    }
    return 0;
}

static struct araw *asg_create(const char *path, const struct trace_time_opts *o,
                               struct trace_err *err)
{
    struct csvstream_opts co = {.columns = "timestamp,rate,cv,pattern,shape,scale"};
    struct asg *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return NULL;
    }
    r->base.ops = (struct araw_ops){asg_next, asg_rewind, asg_destroy};
    r->base.keeps_last = true;
    if (rng_init(&r->rng, o->seed, o->stream_id) < 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        goto fail;
    }
    r->rng_live = true;
    r->cs = csvstream_open(path, &co, err);
    if (!r->cs)
        goto fail;
    if (o->origin && *o->origin && origin_parse(o->origin, TFIELD_SEC, 0, &r->origin) < 0) {
        snprintf(err->msg, sizeof(err->msg), "origin: expected seconds, got '%.60s'", o->origin);
        goto fail;
    }
    if (o->tokens && sg_tokens_open(r, path, o, err) < 0)
        goto fail;
    return &r->base;
fail:
    asg_destroy(&r->base);
    return NULL;
}

/* -- per-interval counts -- */

struct acnt {
    struct araw base;
    struct csvstream *cs;
    struct rng rng;
    bool rng_live;
    int ct, cc;
    enum tfield_unit unit;
    int32_t tz;
    bool origin_set;
    int64_t origin;
    sim_time interval;
    struct lastref last;
    int64_t remaining, w0;
    double u; /* last sorted uniform in [0, 1) */
};

static int acnt_row(struct acnt *r, struct trace_err *e)
{
    int64_t us, n;
    if (tfield_time(csvstream_field(r->cs, (size_t)r->ct), r->unit, r->tz, &us) < 0)
        return csvstream_field_error(r->cs, e, (size_t)r->ct, unit_expect(r->unit));
    if (tfield_i64(csvstream_field(r->cs, (size_t)r->cc), &n) < 0 || n < 0)
        return csvstream_field_error(r->cs, e, (size_t)r->cc, "a non-negative integer count");
    if (n > TRACE_MAX_COUNT)
        return csvstream_field_error(r->cs, e, (size_t)r->cc,
                                     "a count of at most 1000000000 requests");
    if (r->last.have && us >= r->last.us && us < r->last.us + r->interval)
        return csvstream_error(
            r->cs, e, "column '%s': interval at '%.40s' overlaps the previous one",
            csvstream_colname(r->cs, (size_t)r->ct), csvstream_field(r->cs, (size_t)r->ct));
    if (check_monotonic(&r->last, r->cs, r->ct, us, e) < 0)
        return -EINVAL;
    if (!r->origin_set) {
        r->origin = r->unit == TFIELD_WALL ? local_midnight(us, r->tz) : 0;
        r->origin_set = true;
    }
    if (trace_time(r->cs, r->ct, us, r->origin, &r->w0, e) < 0)
        return -EINVAL;
    r->remaining = n;
    r->u = 0;
    return 0;
}

/*
 * An interval the clip cuts at c = skip_before, with more than SG_AGE_MIN_ARRIVALS expected
 * arrivals before c: those are not drawn (a row may hold 10^9). Of m uniforms on the interval,
 * the number below the cut's fraction f is Binomial(m, f), and the rest are uniform above f:
 * the draws go on from u = f. At scale > 1 the last of the k below f (f · V^(1/k)) is
 * emitted first, for its copies reach past c. Exact in distribution. True when out holds
 * that arrival.
 */
static bool acnt_straddle(struct acnt *r, struct arrival *out)
{
    int64_t c = r->base.skip_before;
    if (r->remaining <= 0 || c <= r->w0 || c >= r->w0 + r->interval)
        return false;
    double f = (double)(c - r->w0) / (double)r->interval;
    if ((double)r->remaining * f <= SG_AGE_MIN_ARRIVALS)
        return false;
    /* remaining <= TRACE_MAX_COUNT (10^9) fits unsigned int */
    unsigned int k = gsl_ran_binomial(r->rng.g, f, (unsigned int)r->remaining);
    r->remaining -= k;
    r->u = f;
    if (k == 0 || !r->base.keep_last)
        return false;
    double top = f * pow(rng_uniform_pos(&r->rng), 1.0 / (double)k);
    out->t = r->w0 + (sim_time)(top * (double)r->interval);
    out->in_tokens = out->out_tokens = 0;
    return true;
}

static int acnt_next(struct araw *raw, struct arrival *out, struct trace_err *err)
{
    struct acnt *r = (struct acnt *)raw;
    for (;;) {
        if (r->remaining > 0) {
            /* Next of m sorted uniforms above u: 1 − (1 − u)·V^(1/m). */
            double v = rng_uniform_pos(&r->rng);
            r->u = 1.0 - (1.0 - r->u) * pow(v, 1.0 / (double)r->remaining);
            r->remaining--;
            out->t = r->w0 + (sim_time)(r->u * (double)r->interval);
            out->in_tokens = out->out_tokens = 0;
            return 0;
        }
        int rc = csvstream_next(r->cs, err);
        if (rc != 0)
            return rc;
        r->base.st->rows++;
        struct trace_err e;
        rc = acnt_row(r, &e);
        if (rc < 0 && (rc = bad_row(r->base.st, rc, &e, err)) < 0)
            return rc;
        /* An interval wholly before what the clip keeps: its arrivals are not drawn (a row
         * may hold 10^9 requests; drawing them only to drop them took minutes). At scale > 1
         * its last arrival is still needed (its copies spread up to the next arrival, past
         * the clip): the largest of m uniforms is V^(1/m), one draw. */
        if (rc == 0 && r->w0 + r->interval <= r->base.skip_before) { /* both within 100 y */
            int64_t m = r->remaining;
            r->remaining = 0;
            if (m > 0 && r->base.keep_last) {
                double top = pow(rng_uniform_pos(&r->rng), 1.0 / (double)m);
                out->t = r->w0 + (sim_time)(top * (double)r->interval);
                out->in_tokens = out->out_tokens = 0;
                return 0;
            }
        } else if (rc == 0 && acnt_straddle(r, out)) {
            return 0;
        }
    }
}

static int acnt_rewind(struct araw *raw, struct trace_err *err)
{
    struct acnt *r = (struct acnt *)raw;
    r->last.have = false;
    r->remaining = 0;
    return csvstream_rewind(r->cs, err);
}

static void acnt_destroy(struct araw *raw)
{
    struct acnt *r = (struct acnt *)raw;
    csvstream_destroy(r->cs);
    if (r->rng_live)
        rng_release(&r->rng);
    free(r);
}

/* ---- the public source: loop, scale, offset, clip over a raw reader ---- */

struct tsrc {
    struct arrival_source base;
    struct arrival_source_ops ops; /* base.ops points here */
    struct araw *raw;
    struct trace_time_opts o;
    struct astats st;
    struct rng rng;
    bool rng_live;
    char path[256];
    sim_time shift, max_raw;
    uint64_t pass_n;
    bool done;
    struct arrival peek;
    bool have_peek;
    struct arrival *extra;
    size_t nextra, iextra, cap_extra;
};

static int time_wraps(const struct tsrc *s, struct trace_err *err)
{
    snprintf(err->msg, sizeof(err->msg),
             "%s: an arrival time overflows once the loop shift and offset are added", s->path);
    return -ERANGE;
}

static int tsrc_fetch(struct tsrc *s, struct arrival *a, struct trace_err *err)
{
    for (;;) {
        bool superposed = s->o.scale > 1.0;
        s->raw->skip_before = !superposed || s->raw->keeps_last
                                  ? s->o.clip_start - s->o.offset - s->shift
                                  : INT64_MIN;
        s->raw->keep_last = superposed;
        int rc = s->raw->ops.next(s->raw, a, err);
        if (rc == 0) {
            s->pass_n++;
            if (a->t > s->max_raw)
                s->max_raw = a->t;
            /* |a->t| <= SIM_TIME_LIMIT and shift < clip_end + period: checked all the same. */
            if (sim_time_add_checked(a->t, s->shift, &a->t) < 0)
                return time_wraps(s, err);
            return 0;
        }
        if (rc < 0 || !s->o.loop || s->pass_n == 0)
            return rc;
        sim_time period = s->o.loop_period;
        if (period <= 0)
            period = (s->max_raw / SIM_DAY + 1) * SIM_DAY;
        if (period <= s->max_raw) {
            snprintf(err->msg, sizeof(err->msg),
                     "%s: loop period %.0f s is not longer than the trace span %.0f s", s->path,
                     sim_time_to_sec(period), sim_time_to_sec(s->max_raw));
            return -EINVAL;
        }
        if (s->shift + period + s->o.offset >= s->o.clip_end)
            return 1;
        s->shift += period;
        s->pass_n = 0;
        rc = s->raw->ops.rewind(s->raw, err);
        if (rc < 0)
            return rc;
    }
}

static int cmp_time(const void *a, const void *b)
{
    sim_time x = ((const struct arrival *)a)->t, y = ((const struct arrival *)b)->t;
    return (x > y) - (x < y);
}

/* k > 1: the record and its extra copies, spread over the gap to the next record. */
static int tsrc_superpose(struct tsrc *s, struct trace_err *err)
{
    int rc;
    if (!s->have_peek) {
        rc = tsrc_fetch(s, &s->peek, err);
        if (rc != 0)
            return rc;
    }
    struct arrival a = s->peek;
    rc = tsrc_fetch(s, &s->peek, err);
    if (rc < 0)
        return rc;
    s->have_peek = rc == 0;
    double gap = s->have_peek ? (double)(s->peek.t - a.t) : 0.0;
    double k = s->o.scale;
    size_t n = (size_t)floor(k);
    if (rng_uniform_pos(&s->rng) < k - floor(k))
        n++;
    s->extra[0] = a;
    for (size_t i = 1; i < n; i++) {
        s->extra[i] = a;
        s->extra[i].t = a.t + (sim_time)(rng_uniform_pos(&s->rng) * gap);
    }
    qsort(s->extra + 1, n - 1, sizeof(*s->extra), cmp_time);
    s->nextra = n;
    s->iextra = 0;
    return 0;
}

static int tsrc_next(struct arrival_source *src, struct arrival *out, struct trace_err *err)
{
    struct tsrc *s = (struct tsrc *)src;
    if (s->done)
        return 1;
    for (;;) {
        struct arrival a;
        int rc;
        if (s->iextra < s->nextra) {
            a = s->extra[s->iextra++];
        } else if (s->o.scale > 1.0) {
            rc = tsrc_superpose(s, err);
            if (rc != 0) {
                s->done = rc == 1;
                return rc;
            }
            continue;
        } else {
            rc = tsrc_fetch(s, &a, err);
            if (rc != 0) {
                s->done = rc == 1;
                return rc;
            }
            if (s->o.scale < 1.0 && rng_uniform_pos(&s->rng) >= s->o.scale)
                continue;
        }
        if (sim_time_add_checked(a.t, s->o.offset, &a.t) < 0) {
            s->done = true;
            return time_wraps(s, err);
        }
        if (a.t < s->o.clip_start)
            continue;
        if (s->o.clip_end > 0 && a.t >= s->o.clip_end) {
            s->done = true;
            return 1;
        }
        *out = a;
        return 0;
    }
}

static void tsrc_destroy(struct arrival_source *src)
{
    struct tsrc *s = (struct tsrc *)src;
    if (s->raw)
        s->raw->ops.destroy(s->raw);
    if (s->rng_live)
        rng_release(&s->rng);
    free(s->extra);
    free(s);
}

/* Check the options and allocate the wrapper (raw attached by the caller). */
static struct tsrc *tsrc_new(const char *path, const struct trace_time_opts *o,
                             struct trace_err *err)
{
    struct trace_time_opts def;
    if (!o) {
        trace_time_opts_init(&def);
        o = &def;
    }
    double k = o->scale == 0 ? 1.0 : o->scale;
    if (!(k > 0) || k > 1e4) {
        snprintf(err->msg, sizeof(err->msg), "%s: scale: expected a factor in (0, 10000], got %g",
                 path, k);
        return NULL;
    }
    if (o->loop && o->clip_end <= 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: loop needs an end time (clip_end)", path);
        return NULL;
    }
    if (!sim_time_in_range(o->offset) || !sim_time_in_range(o->clip_start) ||
        !sim_time_in_range(o->clip_end) || o->loop_period < 0 || o->loop_period > SIM_TIME_LIMIT) {
        snprintf(err->msg, sizeof(err->msg),
                 "%s: offset, loop period and clip times must be within " LIMIT_YEARS_TEXT " years",
                 path);
        return NULL;
    }
    struct tsrc *s = calloc(1, sizeof(*s));
    if (!s || rng_init(&s->rng, o->seed, rng_splitmix64(o->stream_id ^ 0x5ca1e)) < 0) {
        free(s);
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return NULL;
    }
    s->rng_live = true;
    s->ops = (struct arrival_source_ops){tsrc_next, tsrc_destroy, NULL};
    s->base.ops = &s->ops;
    s->o = *o;
    s->o.scale = k;
    s->st.skip_bad = o->skip_bad;
    snprintf(s->path, sizeof(s->path), "%s", path);
    if (k > 1.0) {
        s->cap_extra = (size_t)ceil(k) + 1;
        s->extra = calloc(s->cap_extra, sizeof(*s->extra));
        if (!s->extra) {
            tsrc_destroy(&s->base);
            snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
            return NULL;
        }
    }
    return s;
}

static struct arrival_source *tsrc_attach(struct tsrc *s, struct araw *raw)
{
    if (!raw) {
        tsrc_destroy(&s->base);
        return NULL;
    }
    s->raw = raw;
    raw->st = &s->st;
    return &s->base;
}

struct arrival_source *arrivals_csv_create(const char *path, const struct arrival_csv_map *m,
                                           const struct trace_time_opts *o, struct trace_err *err)
{
    struct tsrc *s = tsrc_new(path, o, err);
    if (!s)
        return NULL;
    return tsrc_attach(s, acsv_create(path, m, &s->o, err));
}

struct arrival_source *arrivals_azure_create(const char *path, const struct trace_time_opts *o,
                                             struct trace_err *err)
{
    /* Azure LLM inference trace 2023 (AzurePublicDataset, AzureLLMInferenceDataset2023.md). */
    const struct arrival_csv_map m = {
        .time_col = "TIMESTAMP",
        .unit = TFIELD_WALL,
        .in_col = "ContextTokens",
        .out_col = "GeneratedTokens",
    };
    return arrivals_csv_create(path, &m, o, err);
}

struct arrival_source *arrivals_servegen_create(const char *path, const struct trace_time_opts *o,
                                                struct trace_err *err)
{
    struct tsrc *s = tsrc_new(path, o, err);
    if (!s)
        return NULL;
    return tsrc_attach(s, asg_create(path, &s->o, err));
}

struct arrival_source *arrivals_counts_create(const char *path, const struct arrival_counts_map *m,
                                              const struct trace_time_opts *o,
                                              struct trace_err *err)
{
    struct tsrc *s = tsrc_new(path, o, err);
    if (!s)
        return NULL;
    struct csvstream_opts co = {.header = true};
    struct acnt *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return tsrc_attach(s, NULL);
    }
    r->base.ops = (struct araw_ops){acnt_next, acnt_rewind, acnt_destroy};
    r->base.keeps_last = true;
    r->unit = m->unit;
    r->tz = s->o.tz_s;
    r->interval = m->interval > 0 ? m->interval : 60 * SIM_SEC;
    if (r->interval > SIM_TIME_LIMIT) {
        snprintf(err->msg, sizeof(err->msg),
                 "%s: count interval must be at most " LIMIT_YEARS_TEXT " years", path);
        free(r);
        return tsrc_attach(s, NULL);
    }
    if (rng_init(&r->rng, s->o.seed, s->o.stream_id) < 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        goto fail;
    }
    r->rng_live = true;
    r->cs = csvstream_open(path, &co, err);
    if (!r->cs || !m->time_col || !m->count_col ||
        (r->ct = need_col(r->cs, m->time_col, err)) < 0 ||
        (r->cc = need_col(r->cs, m->count_col, err)) < 0)
        goto fail;
    if (s->o.origin && *s->o.origin) {
        if (origin_parse(s->o.origin, m->unit, s->o.tz_s, &r->origin) < 0) {
            snprintf(err->msg, sizeof(err->msg), "origin: expected %s, got '%.60s'",
                     unit_expect(m->unit), s->o.origin);
            goto fail;
        }
        r->origin_set = true;
    }
    return tsrc_attach(s, &r->base);
fail:
    acnt_destroy(&r->base);
    return tsrc_attach(s, NULL);
}

/* ---- merge ---- */

struct amerge {
    struct arrival_source base;
    struct arrival_source_ops ops; /* base.ops points here */
    struct arrival_source **srcs;
    struct arrival *head;
    size_t *heap;
    size_t n, nheap;
    bool primed;
};

static bool merge_less(const struct amerge *m, size_t a, size_t b)
{
    return m->head[a].t < m->head[b].t || (m->head[a].t == m->head[b].t && a < b);
}

static void merge_down(struct amerge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < m->nheap && merge_less(m, m->heap[l], m->heap[best]))
            best = l;
        if (r < m->nheap && merge_less(m, m->heap[r], m->heap[best]))
            best = r;
        if (best == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

static int merge_next(struct arrival_source *src, struct arrival *out, struct trace_err *err)
{
    struct amerge *m = (struct amerge *)src;
    if (!m->primed) {
        for (size_t i = 0; i < m->n; i++) {
            int rc = arrival_source_next(m->srcs[i], &m->head[i], err);
            if (rc < 0)
                return rc;
            if (rc == 0)
                m->heap[m->nheap++] = i;
        }
        for (size_t i = m->nheap / 2; i-- > 0;)
            merge_down(m, i);
        m->primed = true;
    }
    if (m->nheap == 0)
        return 1;
    size_t i = m->heap[0];
    *out = m->head[i];
    int rc = arrival_source_next(m->srcs[i], &m->head[i], err);
    if (rc < 0)
        return rc;
    if (rc == 1)
        m->heap[0] = m->heap[--m->nheap];
    merge_down(m, 0);
    return 0;
}

static void merge_destroy(struct arrival_source *src)
{
    struct amerge *m = (struct amerge *)src;
    for (size_t i = 0; i < m->n; i++)
        arrival_source_destroy(m->srcs[i]);
    free(m->srcs);
    free(m->head);
    free(m->heap);
    free(m);
}

struct arrival_source *arrivals_merge_create(struct arrival_source **srcs, size_t n)
{
    struct amerge *m = calloc(1, sizeof(*m));
    size_t k = n ? n : 1;
    if (m) {
        m->srcs = calloc(k, sizeof(*m->srcs));
        m->head = calloc(k, sizeof(*m->head));
        m->heap = calloc(k, sizeof(*m->heap));
    }
    if (!m || !m->srcs || !m->head || !m->heap) {
        for (size_t i = 0; i < n; i++)
            arrival_source_destroy(srcs[i]);
        if (m) {
            free(m->srcs);
            free(m->head);
            free(m->heap);
            free(m);
        }
        return NULL;
    }
    m->ops = (struct arrival_source_ops){merge_next, merge_destroy, NULL};
    m->base.ops = &m->ops;
    memcpy(m->srcs, srcs, n * sizeof(*srcs));
    m->n = n;
    return &m->base;
}

uint64_t arrivals_skipped(const struct arrival_source *src)
{
    if (!src)
        return 0;
    if (src->ops->next == tsrc_next)
        return ((const struct tsrc *)src)->st.skipped;
    uint64_t n = 0;
    if (src->ops->next == merge_next) {
        const struct amerge *m = (const struct amerge *)src;
        for (size_t i = 0; i < m->n; i++)
            n += arrivals_skipped(m->srcs[i]);
    }
    return n;
}

uint64_t arrivals_rows(const struct arrival_source *src)
{
    if (!src)
        return 0;
    if (src->ops->next == tsrc_next)
        return ((const struct tsrc *)src)->st.rows;
    uint64_t n = 0;
    if (src->ops->next == merge_next) {
        const struct amerge *m = (const struct amerge *)src;
        for (size_t i = 0; i < m->n; i++)
            n += arrivals_rows(m->srcs[i]);
    }
    return n;
}

const char *arrivals_first_skip(const struct arrival_source *src)
{
    if (src && src->ops->next == tsrc_next) {
        const struct tsrc *s = (const struct tsrc *)src;
        return s->st.skipped ? s->st.first.msg : "";
    }
    if (src && src->ops->next == merge_next) {
        const struct amerge *m = (const struct amerge *)src;
        for (size_t i = 0; i < m->n; i++) {
            const char *f = arrivals_first_skip(m->srcs[i]);
            if (*f)
                return f;
        }
    }
    return "";
}

/* ---- ServeGen folders ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

int servegen_dir_list(const char *dir, char ***paths, size_t *n, struct trace_err *err)
{
    DIR *d = opendir(dir);
    *paths = NULL;
    *n = 0;
    if (!d) {
        snprintf(err->msg, sizeof(err->msg), "%s: cannot open folder: %s", dir, strerror(errno));
        return -errno;
    }
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, "-trace.csv"))
            continue;
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            char **p = realloc(*paths, nc * sizeof(*p));
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            *paths = p;
            cap = nc;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = -ENOMEM;
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        (*paths)[(*n)++] = p;
    }
    closedir(d);
    if (rc == 0 && *n == 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: no '*-trace.csv' ServeGen client files", dir);
        rc = -ENOENT;
    }
    if (rc < 0) {
        if (rc == -ENOMEM)
            snprintf(err->msg, sizeof(err->msg), "%s: out of memory", dir);
        for (size_t i = 0; i < *n; i++)
            free((*paths)[i]);
        free(*paths);
        *paths = NULL;
        *n = 0;
        return rc;
    }
    qsort(*paths, *n, sizeof(**paths), cmp_str);
    return 0;
}

static void free_list(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

struct arrival_source *arrivals_servegen_dir_create(const char *dir,
                                                    const struct trace_time_opts *o,
                                                    struct trace_err *err)
{
    char **paths;
    size_t n;
    struct trace_time_opts def;
    if (!o) {
        trace_time_opts_init(&def);
        o = &def;
    }
    if (servegen_dir_list(dir, &paths, &n, err) < 0)
        return NULL;
    struct arrival_source **srcs = calloc(n, sizeof(*srcs));
    if (!srcs) {
        free_list(paths, n);
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", dir);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        struct trace_time_opts c = *o;
        const char *base = strrchr(paths[i], '/');
        c.stream_id = rng_splitmix64(o->stream_id ^ rng_stream_id(base ? base + 1 : paths[i]));
        srcs[i] = arrivals_servegen_create(paths[i], &c, err);
        if (!srcs[i]) {
            for (size_t j = 0; j < i; j++)
                arrival_source_destroy(srcs[j]);
            free(srcs);
            free_list(paths, n);
            return NULL;
        }
    }
    free_list(paths, n);
    struct arrival_source *m = arrivals_merge_create(srcs, n);
    free(srcs);
    if (!m)
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", dir);
    return m;
}

int servegen_dir_rates(const char *dir, double **rates, size_t *nwin, size_t *nfiles,
                       struct trace_err *err)
{
    char **paths;
    size_t n, cap = 0;
    *rates = NULL;
    *nwin = 0;
    *nfiles = 0;
    int rc = servegen_dir_list(dir, &paths, &n, err);
    if (rc < 0)
        return rc;
    struct csvstream_opts co = {.columns = "timestamp,rate,cv,pattern,shape,scale"};
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct csvstream *cs = csvstream_open(paths[i], &co, err);
        if (!cs) {
            rc = -EINVAL;
            break;
        }
        while ((rc = csvstream_next(cs, err)) == 0) {
            double ts, rate;
            if (tfield_f64(csvstream_field(cs, 0), &ts) < 0 || ts < 0 || ts > 1e9) {
                rc = csvstream_field_error(cs, err, 0, "a window start in seconds, 0..1000000000");
                break;
            }
            if (tfield_f64(csvstream_field(cs, 1), &rate) < 0 || rate < 0 ||
                rate > TRACE_MAX_RATE) {
                rc = csvstream_field_error(cs, err, 1, "a rate in req/s, 0..1000000");
                break;
            }
            size_t w = (size_t)(ts / 600.0);
            if (w >= cap) {
                size_t nc = cap ? cap : 2048;
                while (nc <= w)
                    nc *= 2;
                double *p = realloc(*rates, nc * sizeof(*p));
                if (!p) {
                    snprintf(err->msg, sizeof(err->msg), "%s: out of memory", dir);
                    rc = -ENOMEM;
                    break;
                }
                memset(p + cap, 0, (nc - cap) * sizeof(*p));
                *rates = p;
                cap = nc;
            }
            (*rates)[w] += rate;
            if (w + 1 > *nwin)
                *nwin = w + 1;
        }
        if (rc == 1)
            rc = 0;
        csvstream_destroy(cs);
        if (rc == 0)
            (*nfiles)++;
    }
    free_list(paths, n);
    if (rc < 0) {
        free(*rates);
        *rates = NULL;
        *nwin = 0;
    }
    return rc;
}
