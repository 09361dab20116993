/*
 * sweep.h — `tidesim sweep SWEEP.yaml`: many runs of one base scenario, each
 * point the base plus `--set` overrides (sim/override.h), run as forked
 * processes, each into its own results file, listed by an index file
 * (analysis/sweepidx.h). docs/sweeps.md is the user's guide.
 *
 * A sweep file:
 *
 *   base: ../scenarios/default.yaml     # resolved against the sweep file's folder
 *   mode: grid                          # grid (default): every combination; zip: i-th with i-th
 *   replications: 3                     # seeds per point (default 1)
 *   axes:
 *     cluster.nodes: {from: 4, to: 16, step: 4}
 *     policy.name: [kueue, kai, tidal]
 *
 * Axis keys are the dotted paths of --set; values are a list (any YAML
 * value: a scalar, or a flow list/mapping, which is passed on as YAML) or a
 * range {from, to, step} (inclusive of `to` when the steps land on it;
 * integers when all three are integers). A scalar is a one-value axis.
 * Grid order: the first axis varies slowest (nested loops in file order).
 * Every point keeps the base's seed (points differ only in their axis
 * values: common random numbers); replications take seed, seed+1, ...
 *
 * Room sim/driver/: uses sim/ (scenario, override, output), analysis/ and
 * the replication driver.
 */
#ifndef TIDESIM_DRIVER_SWEEP_H
#define TIDESIM_DRIVER_SWEEP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/conf.h"

#define SWEEP_MAX_POINTS 100000
#define SWEEP_MAX_AXES   32

struct sweep_axis {
    const char *path; /* dotted scenario path (in the doc) */
    size_t n;         /* values */
    char **vals;      /* the values as --set text (malloc'd) */
    unsigned *line, *col;
};

struct sweep {
    char *path; /* the sweep file, as given (malloc'd) */
    struct conf_doc doc;
    char *base_path; /* resolved (malloc'd) */
    char *base_text; /* the base scenario's text (malloc'd) */
    bool zip;
    size_t nzip; /* leading axes zipped together (zip: all; a plan: its choice axes); the
                  * axes after them form a grid, the last varying fastest */
    unsigned reps;
    struct sweep_axis axes[SWEEP_MAX_AXES];
    size_t naxes, npoints;
    char hash[33]; /* hex: sweep text, base text, version and git id */
};

/*
 * Read and check a sweep file (not its points: sweep_validate). Returns 0, or
 * a negative code with err "file:line:col: ..." and sw released.
 */
int sweep_load(struct sweep *sw, const char *path, struct conf_err *err);

void sweep_release(struct sweep *sw);

/* Pieces of sweep_load for files of the same family (sim/driver/plan.h): */

/* Resolve `base` against sw->path's folder and read it into sw->base_text. 0 or < 0 (err). */
int sweep_set_base(struct sweep *sw, const char *base, const struct conf_node *at,
                   struct conf_err *err);

/* Append an axis: path (at line:col of sw->doc) with the values of node v (a list, a range
 * {from, to, step} or one value). 0 or < 0 (err). */
int sweep_add_axis(struct sweep *sw, const char *path, unsigned line, unsigned col,
                   const struct conf_node *v, struct conf_err *err);

/* Set sw->npoints from the axes and sw->nzip (zipped axes of one length). 0 or < 0 (err). */
int sweep_count(struct sweep *sw, const struct conf_node *at, struct conf_err *err);

/* 32 hex digits of a 128-bit FNV-1a of the strings parts[0..n) (each with its NUL). */
void sweep_hash(const char *const *parts, size_t n, char out[33]);

/* Index of axis a's value in point p. */
size_t sweep_value_index(const struct sweep *sw, size_t p, size_t a);

/*
 * The --set strings of point p into sets[0..naxes) (malloc'd each; the
 * caller frees them). Returns 0 or -ENOMEM.
 */
int sweep_point_sets(const struct sweep *sw, size_t p, char **sets);

/*
 * Load every point's scenario (base + overrides) as `tidesim run --set`
 * would. The first bad point gives "SWEEP:line:col: axis PATH value 'V'
 * (point P): <the scenario's message>" at the value to blame (the axis whose
 * override the message names, else the first axis). Returns 0 or -EINVAL.
 */
int sweep_validate(const struct sweep *sw, struct conf_err *err);

/*
 * A rough cost of point p, in requests: what it offers its services (a synthetic profile's
 * mean rate × the run; a trace's size in bytes / 50 × its scale, times the days it loops) plus
 * one request per 10 s of run per card (replicas and jobs that tick without requests).
 * Requests are data and batches events (docs/architecture.md), so a run's time follows its
 * requests above all. 0 when the point does not load (validation says why).
 */
double sweep_point_cost(const struct sweep *sw, size_t p);

/*
 * order[0..npoints): the points the costliest first by sweep_point_cost (longest processing
 * time first, R. L. Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math.
 * 17(2), 1969: the last points to finish are cheap ones, so workers end together); equal
 * estimates, and points done (done[p], done may be NULL), keep grid order among themselves.
 * Only the order of running changes: a point's datasets are the same whatever runs beside it.
 */
void sweep_point_order(const struct sweep *sw, const bool *done, size_t *order);

struct dispatch;

struct sweep_run_opts {
    const char *dir; /* output folder (created if missing) */
    unsigned jobs;   /* processes at a time (0 = online cores) */
    bool force;      /* run again a folder made by another sweep/base/binary */
    bool quiet;      /* no progress */
    volatile sig_atomic_t *interrupted;
    /* Where points run: NULL = forked processes here (-j); else an MPI dispatcher
     * (sim/driver/dispatch.h), each point a task run in a rank's own process. */
    struct dispatch *d;
};

/*
 * Run point p (all its replications, one after the other) in this process,
 * into path: the task an MPI rank runs. Returns 0, 130 (interrupted) or 1.
 */
int sweep_run_point_here(const struct sweep *sw, size_t p, const char *path,
                         volatile sig_atomic_t *interrupted);

/*
 * Run seed `seed_offset` (0 = the scenario's seed) of point p in this process,
 * into path. Returns 0, 130 (interrupted: path.partial) or 1. `who` prefixes
 * messages ("tidesim sweep").
 */
int sweep_run_seed_here(const struct sweep *sw, size_t p, uint64_t seed_offset, const char *path,
                        volatile sig_atomic_t *interrupted, const char *who);

/* The worker side of an MPI sweep: task {point, 0} run into DIR/point-NNNN.h5. */
struct dispatch_task;
struct sweep_task_ctx {
    const struct sweep *sw;
    const char *dir;
    volatile sig_atomic_t *interrupted;
};
int sweep_task(void *ctx, const struct dispatch_task *t);

/*
 * Run the points without a complete results file, writing DIR/point-NNNN.h5
 * and DIR/index.h5 (at the start, marked incomplete, and at the end).
 * Prints progress and errors to stderr. Returns the exit status: 0 all
 * points complete, 1 error (a point failed, the folder belongs to another
 * sweep and !force, a write error), 130 interrupted.
 */
int sweep_run(const struct sweep *sw, const struct sweep_run_opts *o);

#endif
