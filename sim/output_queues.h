/*
 * output_queues.h — the per-queue part of the results file (/queues/<name>),
 * written when the policy reports queues (policy_ops.queues: the kueue policy
 * with manifests, today). docs/results.md "/queues".
 *
 * Per interval, /queues/<name>/timeseries: time_s, admitted_gpus,
 * borrowed_gpus, lent_gpus, nominal_gpus, pending (values at the interval's
 * end). At the end, attributes of /queues/<name> (each with "<key>.unit" and
 * "<key>.label"): nominal_gpus, admitted_mean_gpus, borrowed_mean_gpus,
 * lent_mean_gpus (means over the intervals), admissions, evictions,
 * delay_mean_s, delay_p50_s, delay_p99_s, delay_max_s (queueing delay of each
 * admission: from submission, or from the eviction that made it pending
 * again, to admission). Nothing is written when the policy has no queues, so
 * files of other set-ups are unchanged.
 *
 * Errors are negative errnos from the HDF5 writes (analysis/h5io.h).
 */
#ifndef TIDESIM_OUTPUT_QUEUES_H
#define TIDESIM_OUTPUT_QUEUES_H

#include <hdf5.h>

#include "sim/core/simtime.h"

struct sim;
struct queue_out;

/* Append the interval ending at t1; *q is created at the first call that finds queues. */
int queue_out_interval(struct queue_out **q, hid_t file, const struct sim *s, sim_time t1);

/* Write the summary attributes and close (q may be NULL: nothing to do). Frees q. */
int queue_out_finish(struct queue_out *q, const struct sim *s);

/* Free q without writing (after an error). NULL is a no-op. */
void queue_out_free(struct queue_out *q);

/* Shared with the results writer (sim/output.c): sort ascending; nearest-rank quantile q of
 * sorted v[0..n) (NaN when empty). */
void out_sort(double *v, size_t n);
double out_quantile_sorted(const double *v, size_t n, double q);
/* A fixed-length string attribute (sim/output.c says why: libhdf5 1.10 and H5Ocopy). */
int out_attr_fixed_str(hid_t obj, const char *name, const char *v);

#endif
