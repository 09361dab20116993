/*
 * stats.h — the statistics of replications: mean, sample standard deviation
 * and the 95 % confidence interval of the mean (Student t), and the Welch
 * interval of a difference of two means, or the paired interval of runs that
 * share their seeds.
 *
 * Replications of a scenario differ only in their seed, so their headline
 * metrics are independent, identically distributed samples; with R of them
 * the 95 % interval of the mean is mean ± t(0.975, R-1) · sd / sqrt(R)
 * (sd with the R-1 denominator). NaN inputs (a metric undefined in one
 * replication, e.g. no job completed) are skipped. Pure functions, no state.
 */
#ifndef TIDESIM_STATS_H
#define TIDESIM_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct stats_summary {
    size_t n;    /* finite values used; 0 = metric absent */
    double mean; /* NaN when n = 0 */
    double sd;   /* sample standard deviation (n-1); NaN when n < 2 */
    double ci95; /* half-width of the 95 % interval of the mean; NaN when n < 2 */
};

/* The p-quantile of Student's t with df degrees of freedom (GSL). NaN for df <= 0. */
double stats_t_quantile(double p, double df);

/* Summarize v[0..n) (NaN skipped) into *out. Never fails. */
void stats_summarize(const double *v, size_t n, struct stats_summary *out);

/* A summary of one known value (a single run): n = 1, no interval. */
void stats_single(double v, struct stats_summary *out);

struct stats_diff {
    double diff;      /* b.mean - a.mean (paired: mean of b_i - a_i) */
    double ci95;      /* half-width at the confidence asked (95 % by default); NaN without CI */
    double df;        /* degrees of freedom: Welch–Satterthwaite, or pairs - 1 (NaN without CI) */
    bool has_ci;      /* both sides have n >= 2 (paired: at least 2 pairs) */
    bool significant; /* has_ci and the interval excludes 0 */
    bool paired;      /* from matched pairs (common random numbers) rather than Welch */
    size_t npairs;    /* pairs used when paired */
};

/*
 * Welch's 95 % interval of b - a. With zero variance on both sides the
 * interval has width 0, so any non-zero difference is significant and an
 * exact tie is not. Never fails.
 */
void stats_welch(const struct stats_summary *a, const struct stats_summary *b,
                 struct stats_diff *out);

/* The same at two-sided confidence level conf in (0, 1) (0.95 = stats_welch). */
void stats_welch_conf(const struct stats_summary *a, const struct stats_summary *b, double conf,
                      struct stats_diff *out);

/*
 * Paired interval of b - a from n matched pairs (a[i], b[i]): runs that
 * share a seed share their random streams (common random numbers), so the
 * differences d_i = b[i] - a[i] are independent across seeds and their mean
 * has interval mean(d) ± t(1 - (1-conf)/2, k-1) · sd(d) / sqrt(k) over the k
 * pairs with both values finite. Because both runs see the same arrivals and
 * job stream, sd(d) is far below the spread of either side, so the interval
 * is much tighter than Welch's. Zero variance: width 0 (exact tie not
 * significant). Fewer than 2 pairs: no CI. Never fails.
 */
void stats_paired(const double *a, const double *b, size_t n, double conf, struct stats_diff *out);

#endif
