/* test_traces_limits.c — every reader range-checks what it takes from a file: GPU counts,
 * fractions, model sizes, tokens, rates, counts, times and durations (traces/source.h,
 * sim/core/simtime.h), with a PATH:LINE message naming the column; no time wraps. */
#include <criterion/criterion.h>
#include <string.h>

#include "traces/arrivals.h"
#include "traces/jobs.h"
#include "traces/synth.h"

/* Read jobs until the source fails; the message must be msg. */
static void expect_job_error(struct job_source *s, const char *err_open, const char *msg)
{
    struct trace_err e;
    struct job_spec j;
    int rc, n = 0;
    cr_assert_not_null(s, "%s", err_open);
    while ((rc = job_source_next(s, &j, &e)) == 0) {
        /* Whatever was accepted before the bad row is in range. */
        cr_assert(j.gpus >= 1 && j.gpus <= JOB_MAX_GPUS);
        cr_assert(j.work > 0 && j.work <= SIM_TIME_LIMIT);
        cr_assert(sim_time_in_range(j.submit));
        n++;
    }
    cr_assert_lt(rc, 0, "accepted %d jobs and ended cleanly; expected: %s", n, msg);
    cr_assert_str_eq(e.msg, msg);
    job_source_destroy(s);
}

Test(traces_limits, pai_gpu_request_and_times)
{
    struct trace_err e;
    /* Before: 1e22 % of a GPU became a 0-GPU job (a double to uint32 cast) that crashed kai. */
    expect_job_error(jobs_pai_task_create("tests/data/pai_huge_plan_gpu.csv", NULL, &e), e.msg,
                     "tests/data/pai_huge_plan_gpu.csv:2: column 'plan_gpu': expected a GPU "
                     "request in percent of a GPU, 0..6553600, got '1e22'");
    /* 1000 instances x 10000 % = 100,000 GPUs. */
    expect_job_error(jobs_pai_task_create("tests/data/pai_too_many_gpus.csv", NULL, &e), e.msg,
                     "tests/data/pai_too_many_gpus.csv:2: column 'plan_gpu': expected a request "
                     "of 0.001..65536 GPUs in all (inst_num x plan_gpu / 100), got '10000'");
    expect_job_error(jobs_pai_task_create("tests/data/pai_huge_end.csv", NULL, &e), e.msg,
                     "tests/data/pai_huge_end.csv:2: column 'end_time': expected a time in "
                     "seconds, at most 100 years, got '1e300'");
}

Test(traces_limits, helios_gpus_duration_and_submit)
{
    struct trace_err e;
    /* Before: 9e15 s x 1e6 overflowed int64 and the report showed -5.6e8 GPU-hours. */
    expect_job_error(jobs_helios_create("tests/data/helios_huge_duration.csv", NULL, &e), e.msg,
                     "tests/data/helios_huge_duration.csv:3: column 'duration': expected a "
                     "duration in seconds of at most 100 years, got '9000000000000000'");
    expect_job_error(jobs_helios_create("tests/data/helios_huge_gpus.csv", NULL, &e), e.msg,
                     "tests/data/helios_huge_gpus.csv:3: column 'gpu_num': expected a GPU count "
                     "0..65536, got '70000'");
    /* Origin: midnight of 2020-06-09; 9999-12-31 is 7,979 years later. */
    expect_job_error(jobs_helios_create("tests/data/helios_far_submit.csv", NULL, &e), e.msg,
                     "tests/data/helios_far_submit.csv:3: column 'submit_time': expected a "
                     "submit time within 100 years of the origin, got '9999-12-31 23:59:59'");
}

Test(traces_limits, generic_and_openb_fields)
{
    struct trace_err e;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    /* 9.2e12 s = 9.2e18 us: it used to fit int64 and wrap once an offset was added. */
    expect_job_error(jobs_csv_create("tests/data/jobs_huge_values.csv", &m, NULL, &e), e.msg,
                     "tests/data/jobs_huge_values.csv:3: column 'submit_s': expected a time in "
                     "seconds (at most 100 years), got '9200000000000'");
    expect_job_error(jobs_csv_create("tests/data/jobs_huge_gpus.csv", &m, NULL, &e), e.msg,
                     "tests/data/jobs_huge_gpus.csv:2: column 'gpus': expected a GPU count "
                     "1..65536, got '70000'");
    expect_job_error(jobs_csv_create("tests/data/jobs_tiny_fraction.csv", &m, NULL, &e), e.msg,
                     "tests/data/jobs_tiny_fraction.csv:2: column 'gpu_fraction': expected a GPU "
                     "fraction in [0.001, 1], got '1e-300'");
    expect_job_error(jobs_csv_create("tests/data/jobs_huge_params.csv", &m, NULL, &e), e.msg,
                     "tests/data/jobs_huge_params.csv:2: column 'params_b': expected a model "
                     "size in billions of parameters, 0..1000000, got '1e300'");
    expect_job_error(jobs_csv_create("tests/data/jobs_huge_duration.csv", &m, NULL, &e), e.msg,
                     "tests/data/jobs_huge_duration.csv:2: column 'duration_s': expected a "
                     "duration (at most 100 years), got '9000000000000'");
    /* Both stamps in range, but 3e9 - (-1e9) s = 127 years of run time. */
    expect_job_error(jobs_openb_create("tests/data/openb_huge_run.csv", NULL, &e), e.msg,
                     "tests/data/openb_huge_run.csv:3: column 'deletion_time': expected a run "
                     "time of at most 100 years, got '3000000000'");
}

Test(traces_limits, job_offsets_never_wrap)
{
    struct trace_err e;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    struct job_trace_opts o;
    job_trace_opts_init(&o);
    /* Before: row 2 (10.5 s) + this offset wrapped to a negative submit time. */
    o.offset = INT64_MAX - 5 * SIM_SEC;
    cr_assert_null(jobs_csv_create("tests/data/jobs_generic.csv", &m, &o, &e));
    cr_assert_str_eq(e.msg, "tests/data/jobs_generic.csv: offset and clip times must be within "
                            "100 years");
    /* In range, but row 2 ends up past 100 years: named at its line and column. */
    o.offset = SIM_TIME_LIMIT - 10 * SIM_SEC;
    expect_job_error(jobs_csv_create("tests/data/jobs_generic.csv", &m, &o, &e), e.msg,
                     "tests/data/jobs_generic.csv:3: column 'submit_s': expected a submit time "
                     "within 100 years of t = 0 once the offset is added, got '10.5'");
}

/* Read at most 100,000 arrivals: the source must fail with msg (a wrong source would emit
 * billions of arrivals or loop for ever at one instant). */
static void expect_arrival_error(struct arrival_source *s, const char *err_open, const char *msg)
{
    struct trace_err e;
    struct arrival a;
    int rc = 0;
    cr_assert_not_null(s, "%s", err_open);
    for (int n = 0; n < 100000 && (rc = arrival_source_next(s, &a, &e)) == 0; n++)
        cr_assert(sim_time_in_range(a.t) && a.in_tokens <= TRACE_MAX_TOKENS);
    cr_assert_lt(rc, 0, "no error after 100,000 arrivals; expected: %s", msg);
    cr_assert_str_eq(e.msg, msg);
    arrival_source_destroy(s);
}

Test(traces_limits, arrival_fields)
{
    struct trace_err e;
    expect_arrival_error(arrivals_azure_create("tests/data/azure_huge_tokens.csv", NULL, &e), e.msg,
                         "tests/data/azure_huge_tokens.csv:3: column 'ContextTokens': expected a "
                         "token count of at most 10000000, got '4000000000'");
    struct arrival_csv_map m = {"time_s", TFIELD_SEC, "in_tokens", "out_tokens"};
    expect_arrival_error(arrivals_csv_create("tests/data/arrivals_huge_time.csv", &m, NULL, &e),
                         e.msg,
                         "tests/data/arrivals_huge_time.csv:3: column 'time_s': expected a time "
                         "in seconds (at most 100 years), got '9200000000000'");
    /* Before: 1e19 s saturated to INT64_MAX us and the overlap test's + 600 s wrapped. */
    expect_arrival_error(arrivals_servegen_create("tests/data/servegen_huge_time.csv", NULL, &e),
                         e.msg,
                         "tests/data/servegen_huge_time.csv:3: column 'timestamp': expected a "
                         "window start in seconds, 0..100 years, got '1e19'");
    expect_arrival_error(arrivals_servegen_create("tests/data/servegen_huge_rate.csv", NULL, &e),
                         e.msg,
                         "tests/data/servegen_huge_rate.csv:2: column 'rate': expected a rate in "
                         "req/s, 0..1000000, got '1e300'");
    /* Weibull shape 0.001: mean Γ(1001) = ∞, gaps 0 · ∞: before, endless arrivals at t = 0.
     * Since, Weibull shapes below 0.1 are refused (sg_row): at 0.018 and 0.9 req/s a window
     * drew ~10^10 arrivals at one instant (the ServeGen fuzzer's timeout, kept under
     * tests/data/fuzz/arrivals_servegen/). */
    expect_arrival_error(
        arrivals_servegen_create("tests/data/servegen_tiny_weibull.csv", NULL, &e), e.msg,
        "tests/data/servegen_tiny_weibull.csv:1: column 'shape': expected a Weibull shape in "
        "[0.1, 1000000], got '0.001'");
    expect_arrival_error(
        arrivals_servegen_create("tests/data/servegen_small_weibull.csv", NULL, &e), e.msg,
        "tests/data/servegen_small_weibull.csv:2: column 'shape': expected a Weibull shape in "
        "[0.1, 1000000], got '0.018'");
    /* Gamma shape 1e-300: every draw U^(1/k) underflows to 0: before, endless arrivals at
     * t = 0 (the mean, k, is finite, so only the shape's own range catches it). */
    expect_arrival_error(
        arrivals_servegen_create("tests/data/servegen_tiny_gamma.csv", NULL, &e), e.msg,
        "tests/data/servegen_tiny_gamma.csv:2: column 'shape': expected a shape in [0.001, "
        "1000000], got '1e-300'");
    struct arrival_counts_map cm = {"minute", TFIELD_SEC, "requests", 0};
    expect_arrival_error(arrivals_counts_create("tests/data/counts_huge.csv", &cm, NULL, &e), e.msg,
                         "tests/data/counts_huge.csv:3: column 'requests': expected a count of "
                         "at most 1000000000 requests, got '2000000000'");
}

Test(traces_limits, arrival_options_in_range)
{
    struct trace_err e;
    struct trace_time_opts o;
    struct arrival_csv_map m = {"time_s", TFIELD_SEC, "in_tokens", "out_tokens"};
    const char *msg = "tests/data/arrivals_huge_time.csv: offset, loop period and clip times "
                      "must be within 100 years";
    trace_time_opts_init(&o);
    o.offset = INT64_MAX - 5 * SIM_SEC; /* before: t = 0 + offset, and t = 10 s wrapped */
    cr_assert_null(arrivals_csv_create("tests/data/arrivals_huge_time.csv", &m, &o, &e));
    cr_assert_str_eq(e.msg, msg);
    trace_time_opts_init(&o);
    o.loop = true;
    o.clip_end = SIM_DAY;
    o.loop_period = SIM_TIME_LIMIT + 1;
    cr_assert_null(arrivals_csv_create("tests/data/arrivals_huge_time.csv", &m, &o, &e));
    cr_assert_str_eq(e.msg, msg);
    /* The largest offset allowed still works: the first arrival at exactly 100 years. */
    trace_time_opts_init(&o);
    o.offset = SIM_TIME_LIMIT;
    struct arrival_source *s = arrivals_csv_create("tests/data/arrivals_huge_time.csv", &m, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct arrival a;
    cr_assert_eq(arrival_source_next(s, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(a.t, SIM_TIME_LIMIT);
    arrival_source_destroy(s);
}

Test(traces_limits, time_fields_bounded_at_100_years)
{
    int64_t us = 0;
    /* 100 Julian years = 3,155,760,000 s. */
    cr_assert_eq(tfield_time("3155760000", TFIELD_SEC, 0, &us), 0);
    cr_assert_eq(us, SIM_TIME_LIMIT);
    cr_assert_eq(tfield_time("-3155760000", TFIELD_SEC, 0, &us), 0);
    cr_assert_eq(us, -SIM_TIME_LIMIT);
    cr_assert_eq(tfield_time("3155760000000", TFIELD_MS, 0, &us), 0);
    cr_assert_eq(us, SIM_TIME_LIMIT);
    us = 7;
    cr_assert_eq(tfield_time("3155760001", TFIELD_SEC, 0, &us), -EINVAL);
    cr_assert_eq(tfield_time("3155760000.5", TFIELD_SEC, 0, &us), -EINVAL);
    cr_assert_eq(tfield_time("3155760000001", TFIELD_MS, 0, &us), -EINVAL);
    cr_assert_eq(tfield_time("3155760000000001", TFIELD_US, 0, &us), -EINVAL);
    cr_assert_eq(tfield_time("9223372036854775807", TFIELD_US, 0, &us), -EINVAL);
    cr_assert_eq(tfield_time("-9223372036854775808", TFIELD_SEC, 0, &us), -EINVAL);
    cr_assert_eq(us, 7); /* untouched by refusals */
    /* Wall clocks of any 4-digit year fit: 9999-12-31 is day 2,932,896. */
    cr_assert_eq(tfield_time("9999-12-31", TFIELD_WALL, 0, &us), 0);
    cr_assert_eq(us, (int64_t)2932896 * 86400 * 1000000);
}

Test(traces_limits, synthetic_durations_capped_at_100_years)
{
    /* A median of 10^12 s (31,700 years) with sigma 0: every job is capped at 100 years. */
    struct job_mix m = {.per_hour = 1, .median_s = 1e12, .sigma = 0, .nsizes = 1};
    m.sizes[0] = 1;
    m.weights[0] = 1;
    m.backlog = 3;
    struct job_source *s = synth_jobs_create(&m, SIM_DAY, 1, 2);
    cr_assert_not_null(s);
    struct job_spec j;
    struct trace_err e;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(job_source_next(s, &j, &e), 0);
        cr_assert_eq(j.work, SIM_TIME_LIMIT);
        cr_assert_eq(j.submit, 0);
    }
    job_source_destroy(s);
}

Test(traces_limits, clipped_away_counts_are_not_drawn, .timeout = 30)
{
    /* Row 1 holds 10^9 requests in the first minute, which clip_start = 1 h throws away; row
     * 2 holds 5 at 2 h. Before, the reader drew all 10^9 only to drop them (the counts fuzzer
     * timed out on such a row); now the first arrival kept is row 2's, at once. (The timeout
     * is a hang guard, not a measurement.) */
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.clip_start = SIM_HOUR;
    struct arrival_counts_map cm = {"minute", TFIELD_SEC, "requests", 0};
    struct arrival_source *s =
        arrivals_counts_create("tests/data/counts_clipped_huge.csv", &cm, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct arrival a;
    int n = 0;
    while (arrival_source_next(s, &a, &e) == 0) {
        cr_assert(a.t >= 2 * SIM_HOUR && a.t < 2 * SIM_HOUR + SIM_MIN, "arrival at %lld us",
                  (long long)a.t);
        n++;
    }
    cr_expect_eq(n, 5);
    arrival_source_destroy(s);
}

/* One run of path (a counts file, else ServeGen) at scale 2.5 with clip_start 1 h: its
 * arrivals before 2 h and from 2 h on, and the last one's time; every arrival is past the
 * clip. */
struct scaled_run {
    int between, later;
    sim_time last;
};

static struct scaled_run run_scaled_clipped(const char *path, bool counts, uint64_t seed)
{
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.clip_start = SIM_HOUR;
    o.scale = 2.5;
    o.seed = seed;
    struct arrival_counts_map cm = {"minute", TFIELD_SEC, "requests", 0};
    struct arrival_source *s =
        counts ? arrivals_counts_create(path, &cm, &o, &e) : arrivals_servegen_create(path, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct scaled_run r = {0, 0, 0};
    struct arrival a;
    while (arrival_source_next(s, &a, &e) == 0) {
        cr_assert(a.t >= SIM_HOUR, "arrival at %lld us", (long long)a.t);
        if (a.t < 2 * SIM_HOUR)
            r.between++;
        else
            r.later++;
        r.last = a.t;
    }
    arrival_source_destroy(s);
    return r;
}

Test(traces_limits, clipped_away_counts_are_not_drawn_when_scaled_up, .timeout = 60)
{
    /* The same file at scale 2.5: each arrival becomes 2 or 3, its copies spread uniformly up
     * to the next arrival. Row 1's last arrival (the largest of 10^9 uniforms over its
     * minute: ~60 s) thus sends copies over [~60 s, row 2's first arrival ~7,210 s), and
     * those past the clip are kept: per run 1.5 extra copies on average (2 or 3 copies, the
     * first at the arrival itself), each after 3,600 s with probability (7210 − 3600) /
     * (7210 − 60) = 0.505, so 0.757 arrivals in [1 h, 2 h) on average; row 2 gives 2 or 3
     * per request, 10 to 15 in its minute. Before, the reader drew all 10^9 arrivals first
     * (minutes per run); now it draws row 1's last one alone. Without it nothing would fall
     * in [1 h, 2 h). 400 seeds: the mean's standard deviation is about 0.04. (The timeout is
     * a hang guard, not a measurement.) */
    double mean = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        struct scaled_run r = run_scaled_clipped("tests/data/counts_clipped_huge.csv", true, seed);
        cr_assert(r.last < 2 * SIM_HOUR + SIM_MIN, "arrival at %lld us", (long long)r.last);
        cr_assert(r.later >= 10 && r.later <= 15, "seed %llu: %d arrivals of row 2",
                  (unsigned long long)seed, r.later);
        mean += r.between / 400.0;
    }
    cr_expect(mean > 0.757 - 0.2 && mean < 0.757 + 0.2, "mean %.3f copies of row 1 kept", mean);
}

/* The arrivals before 2 h (copies of the first window's last arrival) of a ServeGen file
 * at scale 2.5, clip 1 h, on average over 400 seeds. */
static double servegen_copies_kept(const char *path)
{
    double mean = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        struct scaled_run r = run_scaled_clipped(path, false, seed);
        cr_assert_gt(r.later, 0);
        mean += r.between / 400.0;
    }
    return mean;
}

Test(traces_limits, clipped_away_servegen_window_is_not_drawn_when_scaled_up, .timeout = 60)
{
    /* A ServeGen window of 10^6 req/s over [0, 600 s) (6·10^8 arrivals; Gamma 0.5, then
     * Weibull 0.3), all before clip_start = 1 h, then 1 req/s (Poisson) from 2 h. At scale 2.5
     * the copies of window 1's last arrival (~600 s, microseconds before its end) spread up
     * to window 2's first arrival, 7,200 s + U·X (X ~ Exp(1 s): 0.5 s on average), so as in
     * the counts case 1.5 × (7200.5 − 3600) / (7200.5 − 600) = 0.818 arrivals fall in [1 h,
     * 2 h) per run on average (standard deviation of the mean over 400 seeds ~0.034).
     * Before, the reader drew all 6·10^8 arrivals (about a minute per run); now it draws
     * the window's last arrival alone (sg_last_age). The timeout is a hang guard. */
    double g = servegen_copies_kept("tests/data/servegen_clipped_huge.csv");
    cr_expect(g > 0.818 - 0.15 && g < 0.818 + 0.15, "Gamma: mean %.3f copies kept", g);
    double w = servegen_copies_kept("tests/data/servegen_clipped_huge_weibull.csv");
    cr_expect(w > 0.818 - 0.15 && w < 0.818 + 0.15, "Weibull: mean %.3f copies kept", w);
}

/* A source over path (a counts file, else ServeGen) at the given scale and clip, seed. */
static struct arrival_source *open_clipped(const char *path, bool counts, double scale,
                                           sim_time clip, uint64_t seed)
{
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.clip_start = clip;
    o.scale = scale;
    o.seed = seed;
    struct arrival_counts_map cm = {"minute", TFIELD_SEC, "requests", 0};
    struct arrival_source *s =
        counts ? arrivals_counts_create(path, &cm, &o, &e) : arrivals_servegen_create(path, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    return s;
}

Test(traces_limits, servegen_window_cut_by_the_clip_starts_at_it, .timeout = 60)
{
    /* One window of 1,000 req/s over [0, 600 s), Gamma shape k = 0.25 (bursty: CV 2), clip
     * 300 s, so 3·10^5 arrivals before the clip. The first arrival kept comes after the
     * forward recurrence time of a stationary renewal process, whose mean is E[X²] / (2 E[X])
     * = (k + 1) / (2k) mean gaps = 2.5 × 1 ms (Cox, "Renewal Theory", ch. 5). Over 400 seeds
     * the residual's standard deviation is √8.75 ms ≈ 2.96 ms, so the mean's is 0.15 ms. A
     * reader that restarted the window at the clip (U · X) would give 0.5 ms; one that dropped
     * nothing would be as right, only slower: the test below is its hang guard. */
    double mean = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        struct arrival_source *s =
            open_clipped("tests/data/servegen_straddle_gamma.csv", false, 1.0, 300 * SIM_SEC, seed);
        struct arrival a;
        struct trace_err e;
        cr_assert_eq(arrival_source_next(s, &a, &e), 0);
        cr_assert_geq(a.t, 300 * SIM_SEC);
        mean += (double)(a.t - 300 * SIM_SEC) / 400.0;
        arrival_source_destroy(s);
    }
    cr_expect(mean > 2500 - 500 && mean < 2500 + 500, "mean residual %.0f us", mean);
}

Test(traces_limits, servegen_window_cut_by_the_clip_keeps_its_last_arrival_when_scaled_up,
     .timeout = 60)
{
    /* The same cut at scale 2.5 on a Poisson window (1,000 req/s): the superposed stream
     * is stationary, 2.5 arrivals per ms, so [300 s, 300.003 s) holds 7.5 on average. Of
     * these, the copies of the last arrival before the clip (1.5 per arrival beyond the
     * first, spread uniformly up to the next one, which the clip splits at U) make
     * 1.5 × E[1 − U] = 0.75: a reader that did not emit that arrival would give 6.75. Over
     * 1,000 seeds the mean's standard deviation is about 0.14. */
    double mean = 0;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        struct arrival_source *s = open_clipped("tests/data/servegen_straddle_poisson.csv", false,
                                                2.5, 300 * SIM_SEC, seed);
        struct arrival a;
        struct trace_err e;
        int n = 0;
        while (arrival_source_next(s, &a, &e) == 0 && a.t < 300 * SIM_SEC + 3 * SIM_MS) {
            cr_assert_geq(a.t, 300 * SIM_SEC);
            n++;
        }
        mean += n / 1000.0;
        arrival_source_destroy(s);
    }
    cr_expect(mean > 7.5 - 0.4 && mean < 7.5 + 0.4, "mean %.3f arrivals in 3 ms", mean);
}

Test(traces_limits, servegen_window_cut_by_the_clip_is_not_drawn_before_it, .timeout = 30)
{
    /* 10^6 req/s over [0, 600 s) cut at 500 s: 5·10^8 arrivals before the clip, which the
     * reader drew only to drop (7 s per input in the ServeGen fuzzer, about a minute here at
     * scale 1 and at 2.5). Now the first 1,000 kept come at once, within a second of the
     * clip. The timeout is a hang guard, not a measurement. */
    for (int k = 0; k < 2; k++) {
        struct arrival_source *s = open_clipped("tests/data/servegen_clipped_huge.csv", false,
                                                k ? 2.5 : 1.0, 500 * SIM_SEC, 7);
        struct arrival a;
        struct trace_err e;
        for (int i = 0; i < 1000; i++) {
            cr_assert_eq(arrival_source_next(s, &a, &e), 0);
            cr_assert(a.t >= 500 * SIM_SEC && a.t < 501 * SIM_SEC, "arrival at %lld us",
                      (long long)a.t);
        }
        arrival_source_destroy(s);
    }
}

Test(traces_limits, counts_interval_cut_by_the_clip_is_not_drawn_before_it, .timeout = 30)
{
    /* Row 1: 10^9 requests in [0, 60 s); the clip at 60 s − 10 µs keeps a fraction f =
     * 10 / 6·10^7 of them: Binomial(10^9, f), mean 166.7, sd 12.9. Before, the reader drew the
     * 10^9 − 167 before the clip only to drop them (minutes); now one binomial draw. Over 20
     * seeds the mean count is 166.7 ± 2.9 (sd); every arrival lies in [c, 60 s). Row 2 adds
     * its 5 at 2 h. */
    sim_time c = SIM_MIN - 10;
    double mean = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct arrival_source *s =
            open_clipped("tests/data/counts_clipped_huge.csv", true, 1.0, c, seed);
        struct arrival a;
        struct trace_err e;
        int n = 0, later = 0;
        while (arrival_source_next(s, &a, &e) == 0) {
            if (a.t >= 2 * SIM_HOUR) {
                later++;
                continue;
            }
            cr_assert(a.t >= c && a.t < SIM_MIN, "arrival at %lld us", (long long)a.t);
            n++;
        }
        cr_assert_eq(later, 5);
        cr_assert(n > 166.7 - 6 * 12.9 && n < 166.7 + 6 * 12.9, "seed %llu: %d kept",
                  (unsigned long long)seed, n);
        mean += n / 20.0;
        arrival_source_destroy(s);
    }
    cr_expect(mean > 166.7 - 12 && mean < 166.7 + 12, "mean %.1f kept", mean);
}

Test(traces_limits, servegen_windows_keep_their_rate_whatever_the_shape, .timeout = 60)
{
    /* 2,000 windows of 1 req/s, Weibull shape 0.16 (the smallest in ServeGen's sample, CV ~32):
     * 1,200,000 arrivals expected. A window starts at the stationary forward recurrence time
     * (U · length-biased gap), so its mean count is rate × 600 s exactly (renewal theory);
     * the start U · X used before gave ~1,670,000 (+39 %), for a window of ~600 heavy-tailed
     * gaps usually begins in a burst. Per seed the total's spread is a few per cent. */
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct trace_err e;
        struct trace_time_opts o;
        trace_time_opts_init(&o);
        o.seed = seed;
        struct arrival_source *s =
            arrivals_servegen_create("tests/data/servegen_heavy_low_rate.csv", &o, &e);
        cr_assert_not_null(s, "%s", e.msg);
        sim_time t[256];
        uint32_t k;
        uint64_t n = 0;
        while (arrival_source_fill(s, t, 256, &k, &e) == 0 && k > 0)
            n += k;
        n += k;
        arrival_source_destroy(s);
        cr_expect(n > 1200000 * 0.93 && n < 1200000 * 1.07, "seed %llu: %llu arrivals",
                  (unsigned long long)seed, (unsigned long long)n);
    }
}
