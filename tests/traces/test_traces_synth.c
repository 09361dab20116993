/* test_traces_synth.c — synthetic generators: ServeGen profile, burstiness, Acme job mixes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "traces/synth.h"

Test(traces_synth, servegen_profile_shape)
{
    const double *h = synth_hourly_servegen();
    size_t lo = 0, hi = 0;
    double sum = 0;
    for (size_t i = 0; i < 24; i++) {
        lo = h[i] < h[lo] ? i : lo;
        hi = h[i] > h[hi] ? i : hi;
        sum += h[i];
    }
    cr_assert_eq(lo, 5);
    cr_assert_eq(hi, 20);
    /* The 14-day mean of the summed rate is 1174.4 req/s (awk over the 43 files). */
    cr_assert(fabs(sum / 24.0 - 1174.4) < 0.2, "mean %f", sum / 24.0);
    struct rate_profile p;
    rate_profile_servegen(&p, 100.0, false);
    cr_assert(fabs(rate_profile_mean(&p) - 100.0) < 1e-6);
    double w = 0;
    for (size_t d = 0; d < 7; d++)
        w += synth_weekly_servegen()[d];
    cr_assert(fabs(w - 7.0) < 0.01);
}

Test(traces_synth, empirical_hourly_rate_matches_profile)
{
    struct rate_profile p;
    rate_profile_servegen(&p, 2.0, false);
    const sim_time days = 28;
    struct arrival_source *s = synth_arrivals_create(&p, days * SIM_DAY, 42, 7);
    cr_assert_not_null(s);
    uint64_t cnt[24] = {0};
    struct arrival a;
    struct trace_err e;
    while (arrival_source_next(s, &a, &e) == 0)
        cnt[(a.t % SIM_DAY) / SIM_HOUR]++;
    arrival_source_destroy(s);
    size_t lo = 0, hi = 0;
    for (size_t h = 0; h < 24; h++) {
        /* Every hour's simulated mean is the sample's hourly mean (issue: within 3 %; here
         * also within 5 sigma of Poisson noise, ~0.6 % at 28 days of 2 req/s). */
        double expect = p.hourly[h] * 3600.0 * (double)days;
        cr_assert(fabs((double)cnt[h] - expect) < 5 * sqrt(expect), "hour %zu: %llu vs %f", h,
                  (unsigned long long)cnt[h], expect);
        cr_assert_lt(fabs((double)cnt[h] / expect - 1), 0.03);
        lo = cnt[h] < cnt[lo] ? h : lo;
        hi = cnt[h] > cnt[hi] ? h : hi;
    }
    cr_assert_eq(lo, 5);
    cr_assert_eq(hi, 20);
}

Test(traces_synth, hourly_curve_keeps_every_hourly_mean)
{
    /* The rate integrated over each hour (1 s steps, trapezoid) equals the given mean. */
    struct rate_profile p;
    rate_profile_servegen(&p, 1174.4, false);
    for (size_t h = 0; h < 24; h++) {
        double sum = 0;
        for (sim_time t = (sim_time)h * SIM_HOUR; t < (sim_time)(h + 1) * SIM_HOUR; t += SIM_SEC)
            sum += 0.5 * (rate_profile_at(&p, t) + rate_profile_at(&p, t + SIM_SEC));
        double mean = sum / 3600.0;
        cr_expect_lt(fabs(mean / p.hourly[h] - 1), 1e-9, "hour %zu: %.6f vs %.6f", h, mean,
                     p.hourly[h]);
    }
    /* A sharp step: knots solved exactly, none clamped, means kept. */
    struct rate_profile q = {.shape = RATE_HOURLY};
    for (size_t h = 0; h < 24; h++)
        q.hourly[h] = h >= 8 && h < 20 ? 100 : 40;
    rate_profile_prepare(&q);
    for (size_t h = 0; h < 24; h++) {
        double sum = 0;
        for (int k = 0; k < 3600; k++)
            sum += rate_profile_at(&q, (sim_time)h * SIM_HOUR + k * SIM_SEC + SIM_SEC / 2);
        cr_expect_lt(fabs(sum / 3600 / q.hourly[h] - 1), 1e-6, "step hour %zu", h);
    }
}

Test(traces_synth, weekly_change_does_not_bleed_before_midnight)
{
    /* Flat 1,000 req/s on day 0, three times that on day 1: the last second of day 0 holds
     * 1,000 arrivals (sd 32), not the ~2,000 of a line drawn to day 1's rate. (At 100,000
     * req/s this test drew 8.6e9 arrivals: minutes, and far longer under the sanitizers.) */
    struct rate_profile p = {.shape = RATE_HOURLY, .weekly = {1, 3, 1, 1, 1, 1, 1}};
    for (size_t h = 0; h < 24; h++)
        p.hourly[h] = 1e3;
    rate_profile_prepare(&p);
    cr_assert_eq(rate_profile_left(&p, SIM_DAY), 1e3);
    cr_assert_eq(rate_profile_at(&p, SIM_DAY), 3e3);
    struct arrival_source *s = synth_arrivals_create(&p, SIM_DAY + SIM_SEC, 3, 1);
    cr_assert_not_null(s);
    struct arrival a;
    struct trace_err e;
    uint64_t last = 0, first = 0;
    while (arrival_source_next(s, &a, &e) == 0) {
        last += a.t >= SIM_DAY - SIM_SEC && a.t < SIM_DAY;
        first += a.t >= SIM_DAY;
    }
    arrival_source_destroy(s);
    cr_expect_lt(fabs((double)last - 1e3), 5 * sqrt(1e3), "last second of day 0: %llu",
                 (unsigned long long)last);
    cr_expect_lt(fabs((double)first - 3e3), 5 * sqrt(3e3), "first second of day 1: %llu",
                 (unsigned long long)first);
}

static double gap_cv(struct arrival_source *s, uint64_t *n)
{
    struct arrival a;
    struct trace_err e;
    double sum = 0, sum2 = 0;
    sim_time last = -1;
    *n = 0;
    while (arrival_source_next(s, &a, &e) == 0) {
        if (last >= 0) {
            double g = (double)(a.t - last);
            sum += g;
            sum2 += g * g;
        }
        last = a.t;
        (*n)++;
    }
    double m = sum / (double)(*n - 1);
    return sqrt(sum2 / (double)(*n - 1) - m * m) / m;
}

Test(traces_synth, burstiness_cv)
{
    struct rate_profile p = {.shape = RATE_CONSTANT, .peak_rps = 50.0};
    uint64_t n;
    struct arrival_source *s = synth_arrivals_create_cv(&p, 2.0, 4000 * SIM_SEC, 1, 2);
    double cv = gap_cv(s, &n);
    arrival_source_destroy(s);
    /* Gamma renewal, shape 1/4: CV 2; 200,000 gaps expected. */
    cr_assert(fabs(cv - 2.0) < 0.1, "cv %f", cv);
    cr_assert(fabs((double)n - 200000.0) < 5 * 2.0 * sqrt(200000.0), "n %llu",
              (unsigned long long)n);

    /* Diurnal cosine profile: thinning compensation keeps CV near the target on average. */
    struct rate_profile c = {
        .shape = RATE_COSINE, .peak_rps = 4.0, .trough_ratio = 0.5, .peak_hour = 20};
    s = synth_arrivals_create_cv(&c, 2.0, 2 * SIM_DAY, 3, 4);
    cv = gap_cv(s, &n);
    arrival_source_destroy(s);
    cr_assert(fabs(cv - 2.0) < 0.3, "cv %f", cv);
    /* Mean rate 3.0 req/s over 2 days = 518,400 arrivals. */
    cr_assert(fabs((double)n - 518400.0) < 5 * 2.0 * sqrt(518400.0), "n %llu",
              (unsigned long long)n);
}

Test(traces_synth, job_mix_from_acme_summary)
{
    struct job_mix m;
    cr_assert_eq(job_mix_from_summary(&m, "Helios", 10.0), 0);
    /* sigma = sqrt(2 ln(6651.681 / 206)) = 2.63622 (python3 math.sqrt(2*math.log(...))). */
    cr_assert(fabs(m.sigma - 2.63622) < 1e-4);
    cr_assert_float_eq(m.median_s, 206.0, 0);
    cr_assert_eq(m.nsizes, 8);
    double num = 0, den = 0;
    for (unsigned i = 0; i < m.nsizes; i++) {
        num += m.sizes[i] * m.weights[i];
        den += m.weights[i];
    }
    cr_assert(fabs(num / den - 3.716) < 1e-6, "mean gpus %f", num / den);
    cr_assert_eq(job_mix_from_summary(&m, "PAI", 1.0), 0);
    cr_assert_eq(m.nsizes, 4); /* max 8 GPUs: 1, 2, 4, 8 */
    cr_assert_float_eq(m.weights[0], 1.0, 0);
    cr_assert_eq(job_mix_from_summary(&m, "Nope", 1.0), -EINVAL);
}

/*
 * Drawing in chunks (the serving hot path) gives exactly the times next()
 * gives one by one, to the end of the stream: for the thinned Poisson
 * generator, the Gamma (bursty) one, and chunk sizes that do not divide the
 * stream.
 */
static void expect_fill_matches_next(struct arrival_source *a, struct arrival_source *b)
{
    static const uint32_t chunks[] = {1, 7, 64, 3, 200};
    sim_time buf[200];
    struct arrival one;
    struct trace_err err;
    uint64_t total = 0;
    for (size_t k = 0;; k++) {
        uint32_t want = chunks[k % 5], n = 0;
        int rc = arrival_source_fill(b, buf, want, &n, &err);
        cr_assert(rc == 0 || rc == 1);
        cr_assert(rc == 1 || n == want);
        for (uint32_t i = 0; i < n; i++) {
            cr_assert_eq(arrival_source_next(a, &one, &err), 0);
            cr_assert_eq(one.t, buf[i], "arrival %llu", (unsigned long long)(total + i));
        }
        total += n;
        if (rc == 1)
            break;
    }
    cr_expect_eq(arrival_source_next(a, &one, &err), 1); /* both ended together */
    cr_expect_gt(total, 1000);
    arrival_source_destroy(a);
    arrival_source_destroy(b);
}

Test(traces_synth, chunked_draws_equal_single_draws)
{
    struct rate_profile p = {
        .shape = RATE_COSINE, .peak_rps = 50, .trough_ratio = 0.2, .peak_hour = 14};
    expect_fill_matches_next(synth_arrivals_create(&p, SIM_HOUR, 5, 6),
                             synth_arrivals_create(&p, SIM_HOUR, 5, 6));
    expect_fill_matches_next(synth_arrivals_create_cv(&p, 2.0, SIM_HOUR, 5, 6),
                             synth_arrivals_create_cv(&p, 2.0, SIM_HOUR, 5, 6));
}
