/*
 * perday.h — per-day figures of a results file (single or replicated), from
 * its time series: is a mean over the run a steady state or the average of a
 * trend (fragmentation building up, a backlog draining, a cold start)?
 *
 * Day d covers simulated time [d·24 h, (d+1)·24 h); an interval counts in the
 * day its end falls in (an interval that ends exactly at midnight counts in
 * the day it closes). Per day and replication:
 *   busy, allocated — mean of util_busy / util_allocated over the day's
 *                     intervals, weighted by their length;
 *   slo             — Σ within_slo / Σ (served + dropped + failed) over every
 *                     service and the day's intervals (NaN when none);
 *   train_gpu_h     — Σ share_training × GPUs × interval length / 3600.
 * The last day may be partial (its length is kept in day_h).
 */
#ifndef TIDESIM_PERDAY_H
#define TIDESIM_PERDAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/results.h"

struct perday {
    size_t ndays, reps;
    double *day_h; /* hours of each day that the run covers (24 but the last) */
    /* [day * reps + rep] */
    double *busy, *alloc, *slo, *train_gpu_h;
};

/* Read path's per-day figures. 0, or a negative code with err filled. Release with perday_release.
 */
int perday_read(const char *path, struct perday *out, char *err, size_t errlen);
/* The same for a file results_open (or results_open_image) has read: its file read again. */
int perday_read_results(const struct results *r, struct perday *out, char *err, size_t errlen);
void perday_release(struct perday *p);

/*
 * One row per day: hours, busy %, allocated %, within SLO %, training GPU-h
 * (means with 95 % Student-t half-widths over replications). 0 or -ENOMEM.
 */
int perday_print(FILE *out, const struct perday *p, bool md, int indent);

/*
 * For `compare`: one row per day, busy % and within SLO % of each file
 * r[0..n) (A, B, ...) side by side. Prints nothing when a file's time series cannot be
 * read or no file covers two days. 0 or -ENOMEM.
 */
int perday_print_side_by_side(FILE *out, const struct results *const *r, size_t n, bool md,
                              int indent);

#endif
