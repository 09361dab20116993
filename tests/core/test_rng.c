/* test_rng.c — stream derivation, reproducibility, independence and distribution moments. */
#include <criterion/criterion.h>
#include <math.h>

#include "sim/core/rng.h"

enum { NDRAW = 200000 };

Test(rng, hash_and_mix_match_reference_vectors)
{
    /* FNV-1a 64 test vectors (http://www.isthe.com/chongo/tech/comp/fnv/). */
    cr_assert_eq(rng_stream_id(""), 0xcbf29ce484222325ULL);
    cr_assert_eq(rng_stream_id("a"), 0xaf63dc4c8601ec8cULL);
    cr_assert_eq(rng_stream_id("foobar"), 0x85944171f73967e8ULL);
    /* SplitMix64 (Steele et al. 2014) seeded with 0 and 1: its first outputs. */
    cr_assert_eq(rng_splitmix64(0), 0xe220a8397b1dcdafULL);
    cr_assert_eq(rng_splitmix64(1), 0x910a2dec89025cc1ULL);
    cr_assert_eq(rng_stream_seed(5, 9), rng_splitmix64(5 ^ rng_splitmix64(9)));
}

Test(rng, seed_fold_is_32_bits_and_never_zero)
{
    cr_assert_eq(rng_seed_fold32(0x0000000100000000ULL), 1ul);
    cr_assert_eq(rng_seed_fold32(0xffffffff00000000ULL), 0xfffffffful);
    cr_assert_eq(rng_seed_fold32(0x00000000deadbeefULL), 0xdeadbeeful);
    cr_assert_eq(rng_seed_fold32(0x12345678ab00cd00ULL), 0x12345678ul ^ 0xab00cd00ul);
    /* Folds to 0: replaced by the documented constant, not GSL's default 4357. */
    cr_assert_eq(rng_seed_fold32(0), 0x9e3779b9ul);
    cr_assert_eq(rng_seed_fold32(0x1234567812345678ULL), 0x9e3779b9ul);
}

Test(rng, generator_is_taus2_seeded_from_stream)
{
    struct rng r;
    uint64_t id = rng_stream_id("service/search/arrivals");
    cr_assert_eq(rng_init(&r, 42, id), 0);
    gsl_rng *ref = gsl_rng_alloc(gsl_rng_taus2);
    cr_assert_not_null(ref);
    gsl_rng_set(ref, rng_seed_fold32(rng_stream_seed(42, id)));
    cr_assert_str_eq(gsl_rng_name(r.g), "tidesim-taus2");
    /* The inline step, GSL's calls through our type and GSL's own taus2 agree. */
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq((unsigned long)rng_u32(&r), gsl_rng_get(ref));
        cr_assert_eq(gsl_rng_get(r.g), gsl_rng_get(ref));
        cr_assert_eq(gsl_rng_uniform(r.g), gsl_rng_uniform(ref));
        cr_assert_eq(rng_uniform(&r), gsl_rng_uniform(ref));
        cr_assert_eq(rng_uniform_pos(&r), gsl_rng_uniform_pos(ref));
    }
    gsl_rng_free(ref);
    rng_release(&r);
    cr_assert_null(r.g);
    rng_release(&r); /* released twice: harmless */
}

Test(rng, own_taus2_equals_gsl_taus2_for_any_seed)
{
    /* Seeding included: 0 (GSL maps it to 1), the small seeds whose LCG steps
     * fall below the components' minimums, and random 32-bit seeds. */
    gsl_rng *ours = gsl_rng_alloc(rng_taus2_type), *ref = gsl_rng_alloc(gsl_rng_taus2);
    cr_assert(ours && ref);
    unsigned long seeds[64] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 0xfffffffful, 0x80000000ul};
    uint64_t x = 99;
    for (int k = 14; k < 64; k++) {
        x = rng_splitmix64(x);
        seeds[k] = (unsigned long)(x & 0xffffffffu);
    }
    for (int k = 0; k < 64; k++) {
        gsl_rng_set(ours, seeds[k]);
        gsl_rng_set(ref, seeds[k]);
        for (int i = 0; i < 200; i++)
            cr_assert_eq(gsl_rng_get(ours), gsl_rng_get(ref), "seed %lu draw %d", seeds[k], i);
    }
    gsl_rng_free(ours);
    gsl_rng_free(ref);
}

Test(rng, same_seed_and_stream_same_sequence)
{
    struct rng a, b;
    cr_assert_eq(rng_init(&a, 1, rng_stream_id("x")), 0);
    cr_assert_eq(rng_init(&b, 1, rng_stream_id("x")), 0);
    for (int i = 0; i < 10000; i++)
        cr_assert_eq(rng_uniform_pos(&a), rng_uniform_pos(&b));
    rng_release(&a);
    rng_release(&b);
}

Test(rng, different_stream_or_seed_differs)
{
    struct rng a, b, c;
    cr_assert_eq(rng_init(&a, 1, rng_stream_id("x")), 0);
    cr_assert_eq(rng_init(&b, 1, rng_stream_id("y")), 0);
    cr_assert_eq(rng_init(&c, 2, rng_stream_id("x")), 0);
    int same_ab = 0, same_ac = 0;
    for (int i = 0; i < 1000; i++) {
        double x = rng_uniform_pos(&a);
        same_ab += x == rng_uniform_pos(&b);
        same_ac += x == rng_uniform_pos(&c);
    }
    cr_assert_eq(same_ab, 0);
    cr_assert_eq(same_ac, 0);
    rng_release(&a);
    rng_release(&b);
    rng_release(&c);
}

Test(rng, new_stream_does_not_shift_existing_one)
{
    enum { K = 2000 };
    double alone[K];
    struct rng a, a2, extra;
    cr_assert_eq(rng_init(&a, 77, rng_stream_id("training/arrivals")), 0);
    for (int i = 0; i < K; i++)
        alone[i] = rng_exponential(&a, 3.0);
    rng_release(&a);

    /* Same stream, now with a new component created and drawing in between. */
    cr_assert_eq(rng_init(&a2, 77, rng_stream_id("training/arrivals")), 0);
    for (int i = 0; i < K / 2; i++)
        cr_assert_eq(rng_exponential(&a2, 3.0), alone[i]);
    cr_assert_eq(rng_init(&extra, 77, rng_stream_id("service/new-one")), 0);
    for (int i = 0; i < 5000; i++)
        (void)rng_lognormal_mean_cv(&extra, 1.0, 0.7);
    for (int i = K / 2; i < K; i++)
        cr_assert_eq(rng_exponential(&a2, 3.0), alone[i]);
    rng_release(&a2);
    rng_release(&extra);
}

Test(rng, uniform_pos_open_interval_mean)
{
    struct rng r;
    cr_assert_eq(rng_init(&r, 5, rng_stream_id("u")), 0);
    double sum = 0.0;
    for (int i = 0; i < NDRAW; i++) {
        double u = rng_uniform_pos(&r);
        cr_assert(u > 0.0 && u < 1.0);
        sum += u;
    }
    double se = sqrt(1.0 / 12.0 / NDRAW);
    cr_assert_lt(fabs(sum / NDRAW - 0.5), 5 * se);
    rng_release(&r);
}

Test(rng, exponential_mean)
{
    const double mean = 3.5;
    struct rng r;
    cr_assert_eq(rng_init(&r, 9, rng_stream_id("exp")), 0);
    double sum = 0.0, sum2 = 0.0;
    for (int i = 0; i < NDRAW; i++) {
        double x = rng_exponential(&r, mean);
        cr_assert_geq(x, 0.0);
        sum += x;
        sum2 += x * x;
    }
    double m = sum / NDRAW;
    /* Exp(mean): sd = mean, so the standard error of the sample mean is mean/sqrt(N). */
    cr_assert_lt(fabs(m - mean), 5 * mean / sqrt(NDRAW), "mean %g", m);
    /* E[X^2] = 2 mean^2; Var[X^2] = 24 mean^4 - 4 mean^4 = 20 mean^4. */
    cr_assert_lt(fabs(sum2 / NDRAW - 2 * mean * mean), 5 * sqrt(20.0 / NDRAW) * mean * mean);
    rng_release(&r);
}

/*
 * Standard normal (inline ziggurat): mean, variance, and the share of draws
 * in ten bins from -inf to inf, each against Phi computed with libm's erfc
 * (independent of the generator), within 5 standard errors. The outer bins
 * lie beyond the ziggurat's base at 3.44, so its tail path is checked too.
 */
Test(rng, normal_moments_and_bins)
{
    enum { N = 2000000 };
    static const double edge[] = {-3.6, -2, -1, -0.5, 0, 0.5, 1, 2, 3.6};
    enum { NB = sizeof edge / sizeof edge[0] + 1 };
    uint64_t count[NB] = {0};
    struct rng r;
    cr_assert_eq(rng_init(&r, 21, rng_stream_id("normal")), 0);
    double sum = 0.0, sum2 = 0.0;
    for (int i = 0; i < N; i++) {
        double x = rng_normal1(&r);
        sum += x;
        sum2 += x * x;
        size_t b = 0;
        while (b < NB - 1 && x >= edge[b])
            b++;
        count[b]++;
    }
    cr_assert_lt(fabs(sum / N), 5 / sqrt(N), "mean %g", sum / N);
    cr_assert_lt(fabs(sum2 / N - 1), 5 * sqrt(2.0 / N), "variance %g", sum2 / N);
    for (size_t b = 0; b < NB; b++) {
        double lo = b == 0 ? 0 : 0.5 * erfc(-edge[b - 1] / sqrt(2.0));
        double hi = b == NB - 1 ? 1 : 0.5 * erfc(-edge[b] / sqrt(2.0));
        double p = hi - lo, share = (double)count[b] / N;
        cr_assert_lt(fabs(share - p), 5 * sqrt(p * (1 - p) / N) + 1e-12, "bin %zu: %g vs %g", b,
                     share, p);
    }
    cr_assert_gt(count[0], 0); /* the tail beyond r was drawn */
    rng_release(&r);
}

/* Sample mean and cv of n lognormal draws against (mean, cv), with 5-standard-error bounds. */
static void check_lognormal_mean_cv(double mean, double cv)
{
    struct rng r;
    cr_assert_eq(rng_init(&r, 13, rng_stream_id("lognormal")), 0);
    double sum = 0.0, sum2 = 0.0;
    for (int i = 0; i < NDRAW; i++) {
        double x = rng_lognormal_mean_cv(&r, mean, cv);
        cr_assert_gt(x, 0.0);
        sum += x;
        sum2 += x * x;
    }
    double m = sum / NDRAW;
    double sd = sqrt((sum2 - NDRAW * m * m) / (NDRAW - 1));
    cr_assert_lt(fabs(m - mean), 5 * cv * mean / sqrt(NDRAW), "cv=%g: mean %g", cv, m);

    /* Lognormal kurtosis k = e^{4s2} + 2e^{3s2} + 3e^{2s2} - 3; relative se of the sample
     * sd is about sqrt((k - 1) / 4N), of the mean cv/sqrt(N); the covariance is
     * positive and ignored, which only widens the bound. */
    double s2 = log1p(cv * cv);
    double k = exp(4 * s2) + 2 * exp(3 * s2) + 3 * exp(2 * s2) - 3;
    double rel_se = sqrt((k - 1) / (4.0 * NDRAW) + cv * cv / NDRAW);
    cr_assert_lt(fabs(sd / m - cv), 5 * rel_se * cv, "cv=%g: sample cv %g", cv, sd / m);
    rng_release(&r);
}

Test(rng, lognormal_mean_cv_moments)
{
    check_lognormal_mean_cv(10.0, 0.1);
    check_lognormal_mean_cv(10.0, 0.5);
    check_lognormal_mean_cv(250.0, 1.0);
}

Test(rng, lognormal_cv_zero_is_exact_and_draws_nothing)
{
    struct rng a, b;
    cr_assert_eq(rng_init(&a, 21, rng_stream_id("z")), 0);
    cr_assert_eq(rng_init(&b, 21, rng_stream_id("z")), 0);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(rng_lognormal_mean_cv(&a, 123.25, 0.0), 123.25);
    cr_assert_eq(rng_uniform_pos(&a), rng_uniform_pos(&b), "cv=0 advanced the stream");
    rng_release(&a);
    rng_release(&b);
}

Test(rng, lognormal_median_sigma)
{
    const double median = 7200.0, sigma = 1.2; /* the scenario's training-duration example */
    struct rng r;
    cr_assert_eq(rng_init(&r, 17, rng_stream_id("jobs")), 0);
    int below = 0;
    double sum_log = 0.0;
    for (int i = 0; i < NDRAW; i++) {
        double x = rng_lognormal_median_sigma(&r, median, sigma);
        below += x < median;
        sum_log += log(x);
    }
    /* Half the draws below the median (binomial se 0.5/sqrt(N)); mean of ln X = ln median. */
    cr_assert_lt(fabs((double)below / NDRAW - 0.5), 5 * 0.5 / sqrt(NDRAW));
    cr_assert_lt(fabs(sum_log / NDRAW - log(median)), 5 * sigma / sqrt(NDRAW));
    rng_release(&r);
}
