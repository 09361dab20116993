/* test_hist.c — bucket geometry, quantiles, mean and merge of the latency histogram. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/hist.h"

static struct hist *hist_new(void)
{
    struct hist *h = malloc(sizeof *h);
    cr_assert_not_null(h);
    hist_reset(h);
    return h;
}

/* v lies in its bucket's [lo, hi), and the bucket midpoint is within 1% (in fact 1/128) of v. */
static void check_value(int64_t v)
{
    uint32_t b = hist_bucket_of(v);
    cr_assert_lt(b, HIST_BUCKETS);
    int64_t lo = hist_bucket_lo(b), hi = hist_bucket_hi(b);
    if (!(lo <= v && v < hi))
        cr_assert_fail("v=%lld in bucket %u = [%lld, %lld)", (long long)v, b, (long long)lo,
                       (long long)hi);
    double mid = hist_bucket_mid(b);
    if (v == 0) {
        cr_assert_eq(mid, 0.0);
        return;
    }
    double rel = fabs(mid - (double)v) / (double)v;
    if (rel > 0.01 || rel > 1.0 / 128)
        cr_assert_fail("v=%lld: midpoint %g off by %g", (long long)v, mid, rel);
}

Test(hist, every_small_value_in_its_bucket)
{
    for (int64_t v = 0; v < 100000; v++)
        check_value(v);
}

Test(hist, geometric_sweep_to_max_in_its_bucket)
{
    for (double x = 1.0; x < (double)HIST_MAX_VALUE; x *= 1.0007)
        check_value((int64_t)x);
    /* Octave edges, where an off-by-one would show. */
    for (int k = 7; k < HIST_MAX_SHIFT; k++) {
        int64_t p = (int64_t)1 << k;
        check_value(p - 1);
        check_value(p);
        check_value(p + 1);
    }
    check_value(HIST_MAX_VALUE - 1);
}

Test(hist, buckets_contiguous_increasing_and_narrow)
{
    cr_assert_eq(hist_bucket_lo(0), 0);
    cr_assert_eq(hist_bucket_hi(HIST_BUCKETS - 1), HIST_MAX_VALUE);
    for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
        int64_t lo = hist_bucket_lo(b), hi = hist_bucket_hi(b);
        cr_assert_lt(lo, hi);
        cr_assert_eq(hist_bucket_of(lo), b);
        cr_assert_eq(hist_bucket_of(hi - 1), b);
        if (b + 1 < HIST_BUCKETS)
            cr_assert_eq(hi, hist_bucket_lo(b + 1), "gap after bucket %u", b);
        if (b < HIST_LINEAR)
            cr_assert_eq(hi - lo, 1);
        else
            cr_assert_leq((hi - lo) * 64, lo, "bucket %u [%lld, %lld) wider than lo/64", b,
                          (long long)lo, (long long)hi);
    }
    /* Hand-computed edges: 128 starts the first octave (width 2), 256 the next (width 4). */
    cr_assert_eq(hist_bucket_of(128), 128u);
    cr_assert_eq(hist_bucket_hi(128), 130);
    cr_assert_eq(hist_bucket_of(256), 192u);
    cr_assert_eq(hist_bucket_hi(192), 260);
    cr_assert_eq(hist_bucket_of(1000), 128u + 64u + 64u + 61u); /* 1000 >> 3 = 125: [1000, 1008) */
    cr_assert_eq(hist_bucket_lo(hist_bucket_of(1007)), 1000);
    cr_assert_eq(hist_bucket_of(999), hist_bucket_of(1000) - 1);
}

Test(hist, out_of_range_values_clamp_to_end_buckets)
{
    cr_assert_eq(hist_bucket_of(-5), 0u);
    cr_assert_eq(hist_bucket_of(HIST_MAX_VALUE), HIST_BUCKETS - 1);
    cr_assert_eq(hist_bucket_of(INT64_MAX), HIST_BUCKETS - 1);
    struct hist *h = hist_new();
    hist_record(h, (int64_t)1 << 50);
    cr_assert_eq(hist_quantile(h, 0.5), (double)((int64_t)1 << 50), "clamped to max");
    free(h);
}

Test(hist, empty_histogram_reads_zero)
{
    struct hist *h = hist_new();
    cr_assert_eq(h->total, 0u);
    cr_assert_eq(h->min, INT64_MAX);
    cr_assert_eq(h->max, INT64_MIN);
    cr_assert_eq(hist_min(h), 0);
    cr_assert_eq(hist_max(h), 0);
    cr_assert_eq(hist_quantile(h, 0.99), 0.0);
    cr_assert_eq(hist_mean(h), 0.0);
    free(h);
}

Test(hist, quantiles_of_uniform_integers)
{
    struct hist *h = hist_new();
    for (int64_t v = 1; v <= 100000; v++)
        hist_record(h, v);
    /* Exact quantiles of 1..100000 by the ceil-rank rule: rank = value. */
    static const struct {
        double q, exact;
    } cases[] = {{0.5, 50000},   {0.9, 90000}, {0.99, 99000},
                 {0.999, 99900}, {0.001, 100}, {0.0001, 10}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = hist_quantile(h, cases[i].q);
        cr_assert_leq(fabs(got - cases[i].exact) / cases[i].exact, 0.01, "p%g: %g vs %g",
                      cases[i].q * 100, got, cases[i].exact);
    }
    cr_assert_eq(hist_quantile(h, 0.0), 1.0);
    /* Rank 100000 is the last of bucket [99328, 100352): interpolated past the max, clamped. */
    cr_assert_eq(hist_quantile(h, 1.0), 100000.0);
    /* Rank 99000 is the 185th of the 1024 values of [98816, 99840): 98816 + 184.5. */
    cr_assert_eq(hist_quantile(h, 0.99), 99000.5);
    cr_assert_eq(hist_quantile(h, 0.00001), 1.0, "linear buckets are exact");
    cr_assert_eq(hist_quantile(h, 0.00077), 77.0);
    cr_assert_eq(hist_min(h), 1);
    cr_assert_eq(hist_max(h), 100000);
    /* Mean exact: (1 + 100000) / 2. */
    cr_assert_eq(hist_mean(h), 50000.5);
    free(h);
}

Test(hist, quantile_picks_bucket_of_ceil_rank)
{
    struct hist *h = hist_new();
    /* 3 values at 10, 1 at 20: ranks 1..3 -> 10, rank 4 -> 20. */
    hist_record(h, 10);
    hist_record(h, 10);
    hist_record(h, 20);
    hist_record(h, 10);
    cr_assert_eq(hist_quantile(h, 0.75), 10.0); /* ceil(3.0) = 3 */
    cr_assert_eq(hist_quantile(h, 0.76), 20.0); /* ceil(3.04) = 4 */
    cr_assert_eq(hist_mean(h), 12.5);
    free(h);
}

Test(hist, merge_equals_recording_both)
{
    struct hist *a = hist_new(), *b = hist_new(), *both = hist_new();
    for (int64_t v = 0; v < 5000; v++) {
        int64_t x = v * v % 100003, y = 3 * v + 1000000;
        hist_record(a, x);
        hist_record(both, x);
        hist_record(b, y);
        hist_record(both, y);
    }
    hist_merge(a, b);
    cr_assert_eq(memcmp(a->counts, both->counts, sizeof a->counts), 0);
    cr_assert_eq(a->total, both->total);
    cr_assert_eq(a->sum, both->sum);
    cr_assert_eq(a->min, both->min);
    cr_assert_eq(a->max, both->max);
    cr_assert_eq(hist_quantile(a, 0.99), hist_quantile(both, 0.99));

    /* Merging an empty histogram changes nothing, and into an empty one copies. */
    struct hist *e = hist_new();
    hist_merge(a, e);
    cr_assert_eq(a->min, both->min);
    cr_assert_eq(a->max, both->max);
    hist_merge(e, b);
    cr_assert_eq(e->min, 1000000);
    cr_assert_eq(e->max, 3 * 4999 + 1000000);
    cr_assert_eq(e->total, 5000u);
    free(a);
    free(b);
    free(both);
    free(e);
}

Test(hist, batch_recording_equals_one_by_one)
{
    struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    cr_assert(a && b);
    hist_reset(a);
    hist_reset(b);
    /* Three batches of latencies, one empty; values across the linear and log ranges. */
    static const int64_t batch[3][5] = {{5, 900, 131072, 7, 1}, {0}, {HIST_MAX_VALUE + 3, 64}};
    static const uint32_t n[3] = {5, 0, 2};
    for (int k = 0; k < 3; k++) {
        int64_t sum = 0, mn = INT64_MAX, mx = INT64_MIN;
        for (uint32_t i = 0; i < n[k]; i++) {
            hist_record(a, batch[k][i]);
            hist_count(b, batch[k][i]);
            sum += batch[k][i];
            mn = batch[k][i] < mn ? batch[k][i] : mn;
            mx = batch[k][i] > mx ? batch[k][i] : mx;
        }
        hist_add_totals(b, n[k], sum, mn, mx);
    }
    cr_expect_eq(a->total, 7u);
    cr_expect_eq(b->total, a->total);
    cr_expect_eq(b->sum, a->sum);
    cr_expect_eq(hist_min(b), 1);
    cr_expect_eq(hist_max(b), HIST_MAX_VALUE + 3);
    cr_expect_eq(memcmp(a->counts, b->counts, sizeof(a->counts)), 0);
    free(a);
    free(b);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The stored sample of tests/data/latency_sample_us.txt (comment lines start with #). */
static size_t read_sample(int64_t *v, size_t cap)
{
    FILE *f = fopen("tests/data/latency_sample_us.txt", "r");
    cr_assert_not_null(f);
    char line[64];
    size_t n = 0;
    while (fgets(line, sizeof(line), f))
        if (line[0] != '#' && n < cap)
            v[n++] = strtoll(line, NULL, 10);
    fclose(f);
    return n;
}

Test(hist, interpolated_quantiles_within_a_bucket_of_exact_ones)
{
    static int64_t v[20000];
    size_t n = read_sample(v, 20000);
    cr_assert_eq(n, 20000u);
    struct hist *h = hist_new();
    for (size_t i = 0; i < n; i++)
        hist_record(h, v[i]);
    qsort(v, n, sizeof(v[0]), cmp_i64);
    static const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        size_t k = (size_t)ceil(qs[i] * (double)n); /* exact: the k-th smallest value */
        double exact = (double)v[k - 1];
        uint32_t b = hist_bucket_of(v[k - 1]);
        double width = (double)(hist_bucket_hi(b) - hist_bucket_lo(b));
        double got = hist_quantile(h, qs[i]);
        cr_expect_lt(fabs(got - exact), width, "p%g: %.1f vs exact %.0f (bucket width %.0f)",
                     qs[i] * 100, got, exact, width);
        cr_expect_lt(fabs(got - exact) / exact, 1.0 / 64, "p%g relative error", qs[i] * 100);
    }
    free(h);
}

Test(hist, interpolated_quantile_moves_with_the_counts)
{
    /*
     * The first 10,000 and the first 10,500 values of the sample: their exact
     * p99s (105,544 and 105,485 µs) lie in the same bucket [104448, 106496),
     * where a bucket midpoint would report 105,471.5 for both.
     */
    static int64_t v[20000];
    size_t n = read_sample(v, 20000);
    cr_assert_eq(n, 20000u);
    struct hist *a = hist_new(), *b = hist_new();
    for (size_t i = 0; i < 10500; i++) {
        if (i < 10000)
            hist_record(a, v[i]);
        hist_record(b, v[i]);
    }
    double pa = hist_quantile(a, 0.99), pb = hist_quantile(b, 0.99);
    cr_assert_eq(hist_bucket_of((int64_t)pa), hist_bucket_of((int64_t)pb));
    cr_assert_neq(pa, pb, "p99 %.1f for both", pa);
    cr_expect_lt(fabs(pa - 105544), 2048);
    cr_expect_lt(fabs(pb - 105485), 2048);
    free(a);
    free(b);
}
