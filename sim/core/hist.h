/*
 * hist.h — log-bucketed latency histogram (HdrHistogram-style).
 *
 * Values are non-negative integers (µs). Values below 128 have a bucket each;
 * above, every octave [2^k, 2^(k+1)) is cut into 64 equal sub-buckets, so a
 * bucket is at most 1/64 of its lower bound wide (quantiles are
 * interpolated within a bucket: hist_quantile). Values at or above HIST_MAX_VALUE
 * (2^40 µs ≈ 12.7 days) land in the last bucket, and negative values in
 * bucket 0. Mean is exact (sum kept separately, exact in a double up to
 * 2^53 µs in total); min and max are exact.
 *
 * A struct hist is plain data (~18 KiB): embed it or allocate it, then call
 * hist_reset() before use. After a reset, min = INT64_MAX and max = INT64_MIN
 * (sentinels that make hist_record() branch-free of the empty case); read
 * them through hist_min()/hist_max(), which return 0 for an empty histogram.
 */
#ifndef TIDESIM_CORE_HIST_H
#define TIDESIM_CORE_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS  6                     /* 64 sub-buckets per octave */
#define HIST_LINEAR    (2u << HIST_SUB_BITS) /* 128 exact buckets */
#define HIST_MAX_SHIFT 40                    /* octaves up to 2^40 */
#define HIST_BUCKETS   (HIST_LINEAR + (HIST_MAX_SHIFT - HIST_SUB_BITS - 1) * (1u << HIST_SUB_BITS))
#define HIST_MAX_VALUE ((int64_t)1 << HIST_MAX_SHIFT)

struct hist {
    uint64_t counts[HIST_BUCKETS];
    uint64_t total;
    double sum; /* exact sum of recorded values, for the mean */
    int64_t min, max;
};

void hist_reset(struct hist *h);

static inline uint32_t hist_bucket_of(int64_t v)
{
    if (v < (int64_t)HIST_LINEAR)
        return v < 0 ? 0u : (uint32_t)v;
    if (v >= HIST_MAX_VALUE)
        return HIST_BUCKETS - 1;
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)v); /* floor(log2 v) >= 7 */
    unsigned shift = k - HIST_SUB_BITS;
    return HIST_LINEAR + (k - HIST_SUB_BITS - 1) * (1u << HIST_SUB_BITS) +
           (uint32_t)(((uint64_t)v >> shift) - (1u << HIST_SUB_BITS));
}

/*
 * Record n values in two steps, for a batch: hist_count() each value (its
 * bucket only), then hist_add_totals() once with their count, exact sum, min
 * and max. The same histogram as n hist_record() calls, without a
 * floating-point add per value.
 */
static inline void hist_count(struct hist *h, int64_t v)
{
    h->counts[hist_bucket_of(v)]++;
}

static inline void hist_add_totals(struct hist *h, uint64_t n, int64_t sum, int64_t min,
                                   int64_t max)
{
    if (n == 0)
        return;
    h->total += n;
    h->sum += (double)sum;
    if (min < h->min)
        h->min = min;
    if (max > h->max)
        h->max = max;
}

static inline void hist_record(struct hist *h, int64_t v)
{
    hist_count(h, v);
    hist_add_totals(h, 1, v, v, v);
}

/*
 * Lowest value of bucket b, and one past its highest value: for every
 * 0 <= v < HIST_MAX_VALUE, hist_bucket_lo(b) <= v < hist_bucket_hi(b) with
 * b = hist_bucket_of(v), and hist_bucket_hi(b) == hist_bucket_lo(b + 1). The
 * last bucket's nominal range ends at HIST_MAX_VALUE although it also holds
 * larger values. b >= HIST_BUCKETS returns HIST_MAX_VALUE.
 */
int64_t hist_bucket_lo(uint32_t b);
int64_t hist_bucket_hi(uint32_t b);

/*
 * The value reported for bucket b: the midpoint of the integers it holds,
 * lo + (hi - 1 - lo) / 2 — exact for the one-value buckets below
 * HIST_LINEAR, within 1/128 relative of every value of the bucket above.
 */
double hist_bucket_mid(uint32_t b);

/* Smallest and largest recorded value, 0 for an empty histogram. */
int64_t hist_min(const struct hist *h);
int64_t hist_max(const struct hist *h);

/*
 * Value at quantile q in [0, 1] (clamped; NaN counts as 0), interpolated
 * within its bucket: rank k = ceil(q·total) (1 at q = 0) falls in bucket b,
 * holding n values of which it is the j-th; the values of b are taken as
 * spread evenly over [lo, hi), so the answer is lo + (j − ½)/n × (hi − lo),
 * clamped to [min, max]. One-value buckets (below HIST_LINEAR) give lo.
 *
 * Error bound: the answer lies in the bucket of the exact k-th smallest
 * value, so it is exact below HIST_LINEAR µs and errs by less than one bucket
 * width (< 1/64 relative) above. Unlike a bucket midpoint it moves with the
 * counts, so quantiles of different seeds differ and their intervals are
 * honest. Returns 0 for an empty histogram.
 */
double hist_quantile(const struct hist *h, double q);

/* Exact mean, 0 for an empty histogram. */
double hist_mean(const struct hist *h);

/* dst += src: counts, total, sum, min and max, as if dst had recorded src's values. */
void hist_merge(struct hist *dst, const struct hist *src);

/*
 * Take out of h what an earlier snapshot of it held (h = h − earlier, for a
 * window that begins at the snapshot). Counts, total and sum are exact; min
 * and max cannot be taken apart, so they are bounded by the remaining buckets.
 */
void hist_subtract(struct hist *h, const struct hist *earlier);

#endif
