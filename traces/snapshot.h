/*
 * snapshot.h — a warm start: the training jobs running in the cluster "now",
 * read from a CSV snapshot (training.snapshot, docs/scenario.md "Warm start").
 *
 * Room traces/ (workload sources): includes only sim/core/ and traces/; knows
 * no simulation. The cluster's geometry comes in as plain numbers
 * (struct snap_geom) so that every row is checked against it here, with the
 * file:line and the column of the first bad value.
 *
 * Units: times are µs (sim_time). `remaining` is run time still needed at full
 * speed on the reference board (A100 = 1, as a job log's duration); `started`
 * is how long before t = 0 the job started; `ckpt_age` is the progress since
 * its last checkpoint at t = 0 (a hard loss right after t = 0 loses that much).
 *
 * Invariants of a loaded row: 1 <= gpus <= JOB_MAX_GPUS; remaining in
 * (0, SIM_TIME_LIMIT]; 0 <= ckpt_age <= started; node given => gpus fit that
 * node together with the rows before it on the node; pool given => node (if
 * any) lies in the pool; ids are distinct.
 */
#ifndef TIDESIM_SNAPSHOT_H
#define TIDESIM_SNAPSHOT_H

#include <stdint.h>

#include "traces/source.h"

/* Rows one snapshot may hold (each is a running job; far above any cluster's pods). */
#define SNAPSHOT_MAX_JOBS 100000u

/* The cluster a snapshot is checked against: pools of whole nodes, pool_per_node cards each. */
struct snap_geom {
    uint32_t npools;
    const char *const *pool_names; /* npools names */
    const uint32_t *pool_first_node, *pool_nodes;
    const uint32_t *pool_per_node; /* cards per node of each pool */
};

struct snap_job {
    uint64_t id;
    char queue[32];   /* the job's queue (kueue LocalQueue, kai queue); "" = the default */
    int32_t priority; /* as a job log's priority column; 0 when not given */
    uint32_t gpus;    /* whole GPUs */
    int32_t pool;     /* index into the geometry's pools; -1 = any */
    int64_t node;     /* cluster-wide node index; -1 = the policy places the job */
    sim_time started, remaining, ckpt_age;
    int64_t line; /* its line in the file, for messages */
};

/*
 * Read the snapshot at path into *out (malloc'd array of *n rows; the caller
 * frees it; NULL when there are none). Returns 0, or a negative code with err
 * filled ("PATH:LINE: column 'X': expected ..., got '...'", or a row-level
 * "PATH:LINE: ..." for a node that would be over-full) and *out NULL.
 */
int snapshot_load(const char *path, const struct snap_geom *g, struct snap_job **out, uint32_t *n,
                  struct trace_err *err);

#endif
