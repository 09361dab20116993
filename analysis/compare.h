/*
 * compare.h — side-by-side comparison of results files: each headline metric
 * (and each service's p99 and SLO share) of every file, and the difference of
 * every file to the first with Welch's 95 % interval when both are
 * replicated, marked significant when the interval excludes 0. Single runs
 * give the difference without an interval, said plainly.
 */
#ifndef TIDESIM_COMPARE_H
#define TIDESIM_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct results;

/*
 * Print the comparison of r[0..n) (n >= 2; r[0] is the baseline) as text or
 * Markdown. Returns 0, -EINVAL when n < 2, -ENOMEM.
 */
int compare_write(FILE *out, const struct results *const *r, size_t n, bool markdown);

/* Number of (metric, file) differences to the baseline found significant by the last rules. */
size_t compare_count_significant(const struct results *const *r, size_t n);

#endif
