/*
 * merge.h — merge the files of replications into one replicated results file.
 *
 * Layout (docs/results.md): /rep0000, /rep0001, ... each a full copy of one
 * replication's file (meta, summary, timeseries, services, jobs, gpus; its
 * /meta/replication set to its index), a top-level /meta (the first
 * replication's provenance plus `replications`, `seed_first`, `seed_last`,
 * `complete` = all replications complete, `sim_time_reached_s` = the least
 * reached, `events_processed` summed) and a top-level /summary holding, for
 * every numeric attribute X of the replications' /summary, X_mean, X_ci95
 * (half-width of the 95 % Student-t interval, NaN with fewer than 2 finite
 * values), X_sd and X_n, and `replications`.
 */
#ifndef TIDESIM_MERGE_H
#define TIDESIM_MERGE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Write the merge of parts[0..n) (results files of single runs, in
 * replication order) under a temporary name and rename it to `path` when
 * `complete`, else to "<path>.partial". The parts are left in place.
 * *written (may be NULL) receives a malloc'd copy of the name used.
 * Returns 0, or a negative code with err filled; a failure leaves no file.
 */
int merge_replications(const char *path, const char *const *parts, size_t n, bool complete,
                       char **written, char *err, size_t errlen);

/* What `--replications auto` adds to the merged /meta (NaN / NULL: not written). */
struct merge_extra {
    double precision_target;      /* target relative half-width of the 95 % intervals */
    double precision_reached;     /* the widest one reached */
    const char *precision_metric; /* the metric that had it */
};

/* merge_replications() with extra /meta attributes (extra may be NULL). */
int merge_replications_ex(const char *path, const char *const *parts, size_t n, bool complete,
                          const struct merge_extra *extra, char **written, char *err,
                          size_t errlen);

#endif
