/* synth.c — synthetic diurnal arrivals (NHPP by thinning) and Poisson job submissions. */
#include "traces/synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "sim/core/rng.h"

static double weekly_factor(const struct rate_profile *p, sim_time t)
{
    int64_t day = t / SIM_DAY;
    double w = p->weekly[(size_t)(day % 7)];
    return w > 0 ? w : 1.0;
}

/* Knots at h:30 keeping every hourly mean (see synth.h); Gauss–Seidel, contraction 1/3. */
static void solve_knots(const double m[24], double v[24])
{
    for (size_t h = 0; h < 24; h++)
        v[h] = m[h];
    for (int it = 0; it < 60; it++)
        for (size_t h = 0; h < 24; h++) {
            double x = (8.0 * m[h] - v[(h + 23) % 24] - v[(h + 1) % 24]) / 6.0;
            v[h] = x > 0 ? x : 0;
        }
}

void rate_profile_prepare(struct rate_profile *p)
{
    if (p->shape == RATE_HOURLY && p->hourly_points)
        memcpy(p->knot, p->hourly, sizeof(p->knot));
    else if (p->shape == RATE_HOURLY)
        solve_knots(p->hourly, p->knot);
    p->prepared = true;
}

static const double *knots_of(const struct rate_profile *p, double tmp[24])
{
    if (p->prepared)
        return p->knot;
    if (p->hourly_points)
        return p->hourly;
    solve_knots(p->hourly, tmp);
    return tmp;
}

/* The daily shape at time t, before the weekly factor. */
static double base_at(const struct rate_profile *p, sim_time t)
{
    double h = (double)(t % SIM_DAY) / (double)SIM_HOUR; /* local hour, 0..24 */
    switch (p->shape) {
    case RATE_COSINE: {
        double trough = p->peak_rps * p->trough_ratio;
        double phase = 2.0 * M_PI * (h - p->peak_hour) / 24.0;
        return trough + (p->peak_rps - trough) * 0.5 * (1.0 + cos(phase));
    }
    case RATE_HOURLY: {
        double tmp[24];
        const double *v = knots_of(p, tmp);
        double x = p->hourly_points ? h : h - 0.5; /* knot i sits at i + 0.5 h (points: i h) */
        double fl = floor(x);
        size_t i = (size_t)((int)fl + 24) % 24;
        double frac = x - fl;
        return v[i] + (v[(i + 1) % 24] - v[i]) * frac;
    }
    case RATE_CONSTANT:
    default:
        return p->peak_rps;
    }
}

double rate_profile_at(const struct rate_profile *p, sim_time t)
{
    return base_at(p, t) * weekly_factor(p, t);
}

double rate_profile_left(const struct rate_profile *p, sim_time t)
{
    return base_at(p, t) * weekly_factor(p, t > 0 ? t - 1 : 0);
}

double rate_profile_max(const struct rate_profile *p)
{
    double m = 0, wmax = 0;
    for (size_t d = 0; d < 7; d++) {
        double w = p->weekly[d] > 0 ? p->weekly[d] : 1.0;
        if (w > wmax)
            wmax = w;
    }
    if (p->shape == RATE_HOURLY) {
        double tmp[24];
        const double *v = knots_of(p, tmp);
        for (size_t i = 0; i < 24; i++)
            if (v[i] > m)
                m = v[i];
    } else {
        m = p->peak_rps;
    }
    return m * wmax;
}

/*
 * Thinning against a piecewise-constant majorant: time is cut into cells of
 * SYNTH_CELL; within a cell the rate is taken as the straight line between
 * the profile's values at the cell's ends (for a diurnal profile and 1 s
 * cells the difference from the curve is ~1e-9 relative), candidates come at
 * the cell's larger end rate, and each is kept with probability rate/bound.
 * Crossing a cell edge restarts the candidate clock at the edge, which the
 * memoryless exponential allows. Acceptance is ~1, so an arrival costs about
 * one exponential and one uniform draw, with no trigonometry per request.
 */
#define SYNTH_CELL SIM_SEC

struct synth_arrivals {
    struct arrival_source base;
    struct arrival_source_ops ops; /* base.ops points here (no relocated tables) */
    struct rate_profile prof;
    struct rng rng;
    double t_us; /* candidate clock, µs (double: gaps are sub-µs at high rates) */
    sim_time end;
    bool thin;     /* false for constant profiles: one cell, every candidate kept */
    double gshape; /* Gamma candidate gaps with this shape; 0 = exponential (Poisson) */
    double gbound; /* Gamma path: one thinning bound for the whole profile, req/s */
    sim_time cell_start, cell_end;
    double r0, r1, bound; /* rate at the cell's ends and their max, req/s */
    double gap_us;        /* mean candidate gap in the cell, 1e6 / bound */
    double slope;         /* (r1 - r0) per µs across the cell */
    uint32_t sure;        /* a 32-bit thinning draw below this keeps the candidate for sure */
};

static void enter_cell(struct synth_arrivals *s, sim_time start)
{
    s->cell_start = start;
    if (!s->thin) {
        s->cell_end = s->end;
        s->r0 = s->r1 = s->bound = rate_profile_at(&s->prof, 0);
        s->gap_us = 1e6 / s->bound;
        return;
    }
    s->cell_end = start + SYNTH_CELL;
    s->r0 = rate_profile_at(&s->prof, start);
    /* The day's own weekly factor up to its midnight: a change does not bleed into
     * the cell before it. */
    s->r1 = rate_profile_left(&s->prof, s->cell_end);
    s->bound = s->r0 > s->r1 ? s->r0 : s->r1;
    s->gap_us = 1e6 / s->bound;
    s->slope = (s->r1 - s->r0) / (double)SYNTH_CELL;
    /* The rate is at least min(r0, r1) across the cell: a uniform u with
     * u·bound <= that keeps its candidate. 1e-9 of margin covers rounding. */
    double lo = (s->r0 < s->r1 ? s->r0 : s->r1) / s->bound * (1.0 - 1e-9);
    s->sure = lo > 0 ? (uint32_t)(lo * 4294967295.0) : 0;
}

/*
 * Bursty arrivals: a Gamma renewal process is not memoryless, so cells cannot
 * restart it; candidates come at the profile's global maximum and are thinned
 * against the exact rate (one rate evaluation per candidate).
 */
static int next_gamma(struct synth_arrivals *s, struct arrival *out)
{
    if (!(s->gbound > 0))
        return 1;
    double mean_gap_us = 1e6 / s->gbound;
    for (;;) {
        s->t_us += gsl_ran_gamma(s->rng.g, s->gshape, mean_gap_us / s->gshape);
        sim_time t = (sim_time)s->t_us;
        if (t >= s->end)
            return 1;
        if (s->thin && rng_uniform_pos(&s->rng) * s->gbound > rate_profile_at(&s->prof, t))
            continue;
        out->t = t;
        out->in_tokens = 0;
        out->out_tokens = 0;
        return 0;
    }
}

/*
 * Up to max thinned Poisson arrivals into buf[0..*n): 0, or 1 at the end. The
 * candidate clock and the cell's constants stay in registers within a cell
 * (one call per chunk, not a store and load of the clock per arrival).
 * next() is the chunk of one, so chunking changes no time
 * (tests/traces/test_traces_synth.c compares them).
 */
static int fill_poisson(struct synth_arrivals *s, sim_time *buf, uint32_t max, uint32_t *n)
{
    uint32_t k = 0;
    int rc = 0;
    while (k < max) {
        if (s->cell_start >= s->end) {
            rc = 1;
            break;
        }
        if (!(s->bound > 0)) {
            s->t_us = (double)s->cell_end;
            enter_cell(s, s->cell_end);
            continue;
        }
        const double cend = (double)s->cell_end, cstart = (double)s->cell_start;
        const double gap = s->gap_us, bound = s->bound, r0 = s->r0, slope = s->slope;
        const bool thin = s->thin;
        const uint32_t sure = s->sure;
        const sim_time end = s->end;
        double t_us = s->t_us;
        bool crossed = false;
        while (k < max) {
            double t = t_us + gap * rng_exp1(&s->rng);
            if (t >= cend) {
                crossed = true;
                break;
            }
            t_us = t;
            if (thin) {
                /* rng_uniform_pos(), unrolled: below `sure` the candidate is
                 * kept whatever r(t) is, and no floating point is needed. */
                uint32_t u;
                while ((u = rng_u32(&s->rng)) == 0)
                    ;
                if (u >= sure && u / 4294967296.0 * bound > r0 + slope * (t - cstart))
                    continue;
            }
            sim_time ti = (sim_time)t;
            if (ti >= end) {
                rc = 1;
                break;
            }
            buf[k++] = ti;
        }
        s->t_us = t_us;
        if (rc)
            break;
        if (crossed) {
            s->t_us = cend;
            enter_cell(s, s->cell_end);
        }
    }
    *n = k;
    return rc;
}

static int synth_arrivals_next(struct arrival_source *src, struct arrival *out,
                               struct trace_err *err)
{
    struct synth_arrivals *s = (struct synth_arrivals *)src;
    (void)err;
    out->in_tokens = 0;
    out->out_tokens = 0;
    if (s->gshape > 0)
        return next_gamma(s, out);
    uint32_t n;
    return fill_poisson(s, &out->t, 1, &n);
}

static int synth_arrivals_fill(struct arrival_source *src, sim_time *t, uint32_t max, uint32_t *n,
                               struct trace_err *err)
{
    struct synth_arrivals *s = (struct synth_arrivals *)src;
    struct arrival a;
    (void)err;
    if (!(s->gshape > 0)) /* as in synth_arrivals_next */
        return fill_poisson(s, t, max, n);
    for (*n = 0; *n < max; (*n)++) {
        int rc = next_gamma(s, &a);
        if (rc)
            return rc;
        t[*n] = a.t;
    }
    return 0;
}

static void synth_arrivals_destroy(struct arrival_source *src)
{
    struct synth_arrivals *s = (struct synth_arrivals *)src;
    rng_release(&s->rng);
    free(s);
}

struct arrival_source *synth_arrivals_create(const struct rate_profile *p, sim_time end,
                                             uint64_t seed, uint64_t stream_id)
{
    struct synth_arrivals *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (rng_init(&s->rng, seed, stream_id) < 0) {
        free(s);
        return NULL;
    }
    s->ops = (struct arrival_source_ops){synth_arrivals_next, synth_arrivals_destroy,
                                         synth_arrivals_fill};
    s->base.ops = &s->ops;
    s->prof = *p;
    rate_profile_prepare(&s->prof);
    s->end = end;
    s->thin = p->shape != RATE_CONSTANT;
    for (size_t d = 0; d < 7; d++)
        if (p->weekly[d] > 0 && p->weekly[d] != 1.0)
            s->thin = true;
    enter_cell(s, 0);
    /* A profile that is zero everywhere (peak_rps: 0) has no arrivals: say so at once
     * rather than skip a year of empty one-second cells one by one. */
    if (!(rate_profile_max(p) > 0))
        s->cell_start = s->end;
    return &s->base;
}

struct synth_jobs {
    struct job_source base;
    struct job_source_ops ops; /* base.ops points here (no relocated tables) */
    struct job_mix mix;
    struct rng rng;
    double cum[8]; /* cumulative normalised weights */
    double t_s;
    sim_time end;
    uint64_t next_id;
    uint32_t emitted_backlog;
};

static int synth_jobs_next(struct job_source *src, struct job_spec *out, struct trace_err *err)
{
    struct synth_jobs *s = (struct synth_jobs *)src;
    (void)err;
    sim_time t = 0;
    if (s->mix.nsizes == 0)
        return 1;
    if (s->emitted_backlog < s->mix.backlog) {
        s->emitted_backlog++;
    } else {
        if (s->mix.per_hour <= 0)
            return 1;
        s->t_s += rng_exponential(&s->rng, 3600.0 / s->mix.per_hour);
        t = sim_time_from_sec(s->t_s);
        if (t >= s->end)
            return 1;
    }
    double d = rng_lognormal_median_sigma(&s->rng, s->mix.median_s, s->mix.sigma);
    if (s->mix.max_s > 0 && d > s->mix.max_s)
        d = s->mix.max_s;
    if (!(d <= SIM_TIME_LIMIT_SEC)) /* a far lognormal tail (sigma up to 10): 100 years at most */
        d = SIM_TIME_LIMIT_SEC;
    if (d < 1.0)
        d = 1.0;
    double u = rng_uniform_pos(&s->rng);
    unsigned k = 0;
    while (k + 1 < s->mix.nsizes && u > s->cum[k])
        k++;
    memset(out, 0, sizeof(*out));
    out->id = s->next_id++;
    out->submit = t;
    out->work = sim_time_from_sec(d);
    out->gpus = s->mix.sizes[k];
    out->gpu_fraction = 1.0;
    out->outcome = JOB_LOG_COMPLETED;
    return 0;
}

static void synth_jobs_destroy(struct job_source *src)
{
    struct synth_jobs *s = (struct synth_jobs *)src;
    rng_release(&s->rng);
    free(s);
}

struct job_source *synth_jobs_create(const struct job_mix *m, sim_time end, uint64_t seed,
                                     uint64_t stream_id)
{
    struct synth_jobs *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (rng_init(&s->rng, seed, stream_id) < 0) {
        free(s);
        return NULL;
    }
    s->ops = (struct job_source_ops){synth_jobs_next, synth_jobs_destroy};
    s->base.ops = &s->ops;
    s->mix = *m;
    if (s->mix.nsizes > 8)
        s->mix.nsizes = 8;
    double total = 0, acc = 0;
    for (unsigned i = 0; i < s->mix.nsizes; i++)
        total += s->mix.weights[i];
    for (unsigned i = 0; i < s->mix.nsizes; i++) {
        acc += total > 0 ? s->mix.weights[i] / total : 1.0 / s->mix.nsizes;
        s->cum[i] = acc;
    }
    s->end = end;
    s->next_id = 1;
    return &s->base;
}

double rate_profile_mean(const struct rate_profile *p)
{
    double sum = 0;
    int n = 0;
    for (sim_time t = 0; t < 7 * SIM_DAY; t += SIM_MIN, n++)
        sum += rate_profile_at(p, t);
    return sum / n;
}

struct arrival_source *synth_arrivals_create_cv(const struct rate_profile *p, double cv,
                                                sim_time end, uint64_t seed, uint64_t stream_id)
{
    struct arrival_source *src = synth_arrivals_create(p, end, seed, stream_id);
    if (!src || cv <= 0 || cv == 1.0)
        return src;
    struct synth_arrivals *s = (struct synth_arrivals *)src;
    s->gbound = rate_profile_max(p);
    double pbar = s->thin && s->gbound > 0 ? rate_profile_mean(p) / s->gbound : 1.0;
    if (!(pbar > 0))
        pbar = 1.0;
    double c2 = (cv * cv - 1.0 + pbar) / pbar;
    if (c2 < 0.01)
        c2 = 0.01;
    s->gshape = 1.0 / c2;
    return src;
}

/*
 * Hourly means (req/s) of the ServeGen language m-small sample (Alibaba ServeGen,
 * github.com/alibaba/ServeGen @f891d118, data/language/m-small, Apache-2.0): the `rate`
 * column of all 43 chunk-*-trace.csv files summed per 600 s window, then averaged over the
 * six windows starting in [h:00, h+1:00) on all 14 days. Timestamps are seconds from local
 * midnight. Command:
 *   cat traces/data/servegen/language_m-small/chunk-N-trace.csv (all N) | awk -F, '{s[$1]+=$2}
 *     END{for(t in s){h=int((t%86400)/3600); hs[h]+=s[t]; hn[h]++} for(h=0;h<24;h++)
 *     printf "%.1f, ", hs[h]/hn[h]}'
 * Trough 775.2 at 05:00, peak 1709.4 at 20:00, mean 1174.4. RATE_HOURLY keeps each of
 * these as its hour's mean (knots at h:30, rate_profile_prepare).
 */
static const double servegen_hourly[24] = {
    985.4,  838.0,  861.3,  794.3,  838.6,  775.2,  803.8,  1003.7, 1192.5, 1238.4, 1321.2, 1284.2,
    1244.8, 1260.4, 1245.2, 1229.1, 1281.2, 1266.6, 1183.2, 1443.1, 1709.4, 1646.4, 1491.1, 1248.4,
};

/*
 * Day-of-trace factors of the same sample: summed rate per day d divided by the 14-day mean,
 * averaged over days d and d + 7 (the sample has two weeks; its first weekday is not
 * documented, so day 0 is the trace's first day, not a Monday).
 */
static const double servegen_weekly[7] = {0.939, 1.009, 1.061, 1.096, 0.934, 1.008, 0.953};

const double *synth_hourly_servegen(void)
{
    return servegen_hourly;
}

const double *synth_weekly_servegen(void)
{
    return servegen_weekly;
}

void rate_profile_servegen(struct rate_profile *p, double mean_rps, bool weekly)
{
    double sum = 0;
    memset(p, 0, sizeof(*p));
    p->shape = RATE_HOURLY;
    for (size_t i = 0; i < 24; i++)
        sum += servegen_hourly[i];
    for (size_t i = 0; i < 24; i++)
        p->hourly[i] = servegen_hourly[i] * mean_rps * 24.0 / sum;
    for (size_t d = 0; d < 7; d++)
        p->weekly[d] = weekly ? servegen_weekly[d] : 1.0;
    rate_profile_prepare(p);
    p->peak_rps = rate_profile_max(p);
}

/*
 * GPU-job statistics per cluster from AcmeTrace data/cluster_summary.csv (@6d6ac9cd, CC-BY-4.0;
 * Hu et al., NSDI 2024): avg_run_time_gpu, med_run_time_gpu (s), avg_gpu_num, max_gpu.
 */
static const struct acme_row {
    char name[8];
    double avg_run_s, med_run_s, avg_gpus, max_gpus;
} acme_rows[] = {
    {"Seren", 1414.335, 122.0, 5.68, 1024.0},   {"Kalos", 1259.689, 124.0, 26.77, 1024.0},
    {"Philly", 18006.055, 874.0, 1.928, 128.0}, {"Helios", 6651.681, 206.0, 3.716, 2048.0},
    {"PAI", 4787.109, 480.667, 0.683, 8.0},
};

static double mix_mean(const uint32_t *sizes, unsigned n, double r, double *w)
{
    double num = 0, den = 0, x = 1;
    for (unsigned i = 0; i < n; i++, x *= r) {
        w[i] = x;
        num += sizes[i] * x;
        den += x;
    }
    return num / den;
}

int job_mix_from_summary(struct job_mix *m, const char *cluster, double per_hour)
{
    const struct acme_row *row = NULL;
    for (size_t i = 0; i < sizeof(acme_rows) / sizeof(acme_rows[0]); i++)
        if (strcmp(acme_rows[i].name, cluster) == 0)
            row = &acme_rows[i];
    if (!row)
        return -EINVAL;
    memset(m, 0, sizeof(*m));
    m->per_hour = per_hour;
    m->median_s = row->med_run_s;
    m->sigma = sqrt(2.0 * log(row->avg_run_s / row->med_run_s));
    for (uint32_t g = 1; m->nsizes < 8 && g <= row->max_gpus; g *= 2)
        m->sizes[m->nsizes++] = g;
    double target = row->avg_gpus < 1.0 ? 1.0 : row->avg_gpus;
    double lo = 0, hi = 64;
    if (target <= 1.0) {
        for (unsigned i = 0; i < m->nsizes; i++)
            m->weights[i] = i == 0;
        return 0;
    }
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mix_mean(m->sizes, m->nsizes, mid, m->weights) < target)
            lo = mid;
        else
            hi = mid;
    }
    mix_mean(m->sizes, m->nsizes, 0.5 * (lo + hi), m->weights);
    return 0;
}
