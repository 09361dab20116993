/* synth.c — synthetic diurnal arrivals (NHPP by thinning) and Poisson job submissions. */
#include "traces/synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"

static double weekly_factor(const struct rate_profile *p, sim_time t)
{
    int64_t day = t / SIM_DAY;
    double w = p->weekly[(size_t)(day % 7)];
    return w > 0 ? w : 1.0;
}

double rate_profile_at(const struct rate_profile *p, sim_time t)
{
    double base;
    double h = (double)(t % SIM_DAY) / (double)SIM_HOUR; /* local hour, 0..24 */

    switch (p->shape) {
    case RATE_COSINE: {
        double trough = p->peak_rps * p->trough_ratio;
        double phase = 2.0 * M_PI * (h - p->peak_hour) / 24.0;
        base = trough + (p->peak_rps - trough) * 0.5 * (1.0 + cos(phase));
        break;
    }
    case RATE_HOURLY: {
        size_t i = (size_t)h % 24;
        double frac = h - floor(h);
        base = p->hourly[i] + (p->hourly[(i + 1) % 24] - p->hourly[i]) * frac;
        break;
    }
    case RATE_CONSTANT:
    default:
        base = p->peak_rps;
        break;
    }
    return base * weekly_factor(p, t);
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
        for (size_t i = 0; i < 24; i++)
            if (p->hourly[i] > m)
                m = p->hourly[i];
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
    struct rate_profile prof;
    struct rng rng;
    double t_us;         /* candidate clock, µs (double: gaps are sub-µs at high rates) */
    sim_time end;
    bool thin;           /* false for constant profiles: one cell, every candidate kept */
    sim_time cell_start, cell_end;
    double r0, r1, bound; /* rate at the cell's ends and their max, req/s */
};

static void enter_cell(struct synth_arrivals *s, sim_time start)
{
    s->cell_start = start;
    if (!s->thin) {
        s->cell_end = s->end;
        s->r0 = s->r1 = s->bound = rate_profile_at(&s->prof, 0);
        return;
    }
    s->cell_end = start + SYNTH_CELL;
    s->r0 = rate_profile_at(&s->prof, start);
    s->r1 = rate_profile_at(&s->prof, s->cell_end);
    s->bound = s->r0 > s->r1 ? s->r0 : s->r1;
}

static int synth_arrivals_next(struct arrival_source *src, struct arrival *out,
                               struct trace_err *err)
{
    struct synth_arrivals *s = (struct synth_arrivals *)src;
    (void)err;
    for (;;) {
        if (s->cell_start >= s->end)
            return 1;
        if (!(s->bound > 0)) {
            s->t_us = (double)s->cell_end;
            enter_cell(s, s->cell_end);
            continue;
        }
        double t = s->t_us + rng_exponential(&s->rng, 1e6 / s->bound);
        if (t >= (double)s->cell_end) {
            s->t_us = (double)s->cell_end;
            enter_cell(s, s->cell_end);
            continue;
        }
        s->t_us = t;
        if (s->thin) {
            double frac = (t - (double)s->cell_start) / (double)(s->cell_end - s->cell_start);
            double r = s->r0 + (s->r1 - s->r0) * frac;
            if (rng_uniform_pos(&s->rng) * s->bound > r)
                continue;
        }
        out->t = (sim_time)t;
        if (out->t >= s->end)
            return 1;
        out->in_tokens = 0;
        out->out_tokens = 0;
        return 0;
    }
}

static void synth_arrivals_destroy(struct arrival_source *src)
{
    struct synth_arrivals *s = (struct synth_arrivals *)src;
    rng_release(&s->rng);
    free(s);
}

static const struct arrival_source_ops synth_arrivals_ops = {
    .next = synth_arrivals_next,
    .destroy = synth_arrivals_destroy,
};

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
    s->base.ops = &synth_arrivals_ops;
    s->prof = *p;
    s->end = end;
    s->thin = p->shape != RATE_CONSTANT;
    for (size_t d = 0; d < 7; d++)
        if (p->weekly[d] > 0 && p->weekly[d] != 1.0)
            s->thin = true;
    enter_cell(s, 0);
    return &s->base;
}

struct synth_jobs {
    struct job_source base;
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

static const struct job_source_ops synth_jobs_ops = {
    .next = synth_jobs_next,
    .destroy = synth_jobs_destroy,
};

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
    s->base.ops = &synth_jobs_ops;
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
