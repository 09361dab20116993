/*
 * compare.h — side-by-side comparison of results files: each headline metric
 * (and each service's p99 and SLO share) of every file, and the difference of
 * every file to the first with a 95 % interval, marked significant when the
 * interval excludes 0. Runs that share seeds share their random streams
 * (common random numbers: the same arrivals and job stream under each
 * policy), so replications are paired by seed and the interval is that of
 * the paired differences; files without two shared seeds fall back to
 * Welch's interval. Single runs give the difference without an interval,
 * said plainly.
 */
#ifndef TIDESIM_COMPARE_H
#define TIDESIM_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/stats.h"

struct results;
struct results_metric;

/*
 * The difference b - a of one metric (a of file ra, b of file rb; either may
 * be NULL or absent: no CI) at two-sided confidence conf: paired by seed when
 * the files share at least two seeds at which both values are finite
 * (out->paired), else Welch. Never fails.
 */
void compare_diff(const struct results *ra, const struct results_metric *a,
                  const struct results *rb, const struct results_metric *b, double conf,
                  struct stats_diff *out);

/*
 * Print the comparison of r[0..n) (n >= 2; r[0] is the baseline) as text or
 * Markdown. Returns 0, -EINVAL when n < 2, -ENOMEM.
 */
int compare_write(FILE *out, const struct results *const *r, size_t n, bool markdown);

/* The same, each file named by labels[f] (NULL or a NULL entry: its path) in the header:
 * the points of a sweep or plan index ("point 3 (policy.name=kueue cluster.nodes=4)"). */
int compare_write_labeled(FILE *out, const struct results *const *r, const char *const *labels,
                          size_t n, bool markdown);

/* Number of (metric, file) differences to the baseline found significant by the last rules. */
size_t compare_count_significant(const struct results *const *r, size_t n);

#endif
