/*
 * hist.c — bucket bounds, quantiles, mean and merge of the log-bucketed
 * histogram. hist_record() and hist_bucket_of() are inline in hist.h.
 */
#include "sim/core/hist.h"

#include <math.h>
#include <string.h>

void hist_reset(struct hist *h)
{
    memset(h->counts, 0, sizeof h->counts);
    h->total = 0;
    h->sum = 0.0;
    /* Sentinels: the first hist_record() sets both; hist_min/max() hide them. */
    h->min = INT64_MAX;
    h->max = INT64_MIN;
}

int64_t hist_bucket_lo(uint32_t b)
{
    if (b < HIST_LINEAR)
        return (int64_t)b;
    if (b >= HIST_BUCKETS)
        return HIST_MAX_VALUE;
    uint32_t i = b - HIST_LINEAR;
    unsigned k = HIST_SUB_BITS + 1u + i / (1u << HIST_SUB_BITS); /* octave [2^k, 2^(k+1)) */
    uint64_t sub = (1u << HIST_SUB_BITS) + i % (1u << HIST_SUB_BITS);
    return (int64_t)(sub << (k - HIST_SUB_BITS));
}

int64_t hist_bucket_hi(uint32_t b)
{
    if (b < HIST_LINEAR)
        return (int64_t)b + 1;
    if (b >= HIST_BUCKETS)
        return HIST_MAX_VALUE;
    uint32_t i = b - HIST_LINEAR;
    unsigned k = HIST_SUB_BITS + 1u + i / (1u << HIST_SUB_BITS);
    return hist_bucket_lo(b) + ((int64_t)1 << (k - HIST_SUB_BITS));
}

double hist_bucket_mid(uint32_t b)
{
    int64_t lo = hist_bucket_lo(b);
    return (double)lo + (double)(hist_bucket_hi(b) - 1 - lo) / 2.0;
}

int64_t hist_min(const struct hist *h)
{
    return h->total ? h->min : 0;
}

int64_t hist_max(const struct hist *h)
{
    return h->total ? h->max : 0;
}

double hist_quantile(const struct hist *h, double q)
{
    if (h->total == 0)
        return 0.0;
    if (!(q > 0.0)) /* also NaN */
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    double r = ceil(q * (double)h->total);
    uint64_t rank = r < 1.0 ? 1 : (uint64_t)r;
    if (rank > h->total)
        rank = h->total;

    uint64_t seen = 0;
    uint32_t b = 0;
    for (; b < HIST_BUCKETS - 1; b++) {
        if (seen + h->counts[b] >= rank)
            break;
        seen += h->counts[b];
    }
    /*
     * Within the bucket, the values are taken as spread evenly over [lo, hi):
     * the j-th of its n values (j = rank - seen) sits at lo + (j - 1/2)/n of
     * its width. One-value buckets (below HIST_LINEAR) are exact.
     */
    int64_t lo = hist_bucket_lo(b), hi = hist_bucket_hi(b);
    double v = (double)lo;
    uint64_t n = h->counts[b];
    if (hi - lo > 1 && n > 0)
        v += ((double)(rank - seen) - 0.5) / (double)n * (double)(hi - lo);
    if (v < (double)h->min)
        v = (double)h->min;
    if (v > (double)h->max)
        v = (double)h->max;
    return v;
}

double hist_mean(const struct hist *h)
{
    return h->total ? h->sum / (double)h->total : 0.0;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (uint32_t b = 0; b < HIST_BUCKETS; b++)
        dst->counts[b] += src->counts[b];
    dst->total += src->total;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

void hist_subtract(struct hist *h, const struct hist *earlier)
{
    for (uint32_t b = 0; b < HIST_BUCKETS; b++)
        h->counts[b] -= earlier->counts[b];
    h->total -= earlier->total;
    h->sum -= earlier->sum;
    uint32_t first = HIST_BUCKETS, last = 0;
    for (uint32_t b = 0; b < HIST_BUCKETS; b++)
        if (h->counts[b]) {
            if (first == HIST_BUCKETS)
                first = b;
            last = b;
        }
    if (h->total) {
        int64_t lo = hist_bucket_lo(first), hi = hist_bucket_hi(last) - 1;
        h->min = lo > h->min ? lo : h->min;
        h->max = hi < h->max ? hi : h->max;
    }
}
