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

struct sweep_run_opts {
    const char *dir; /* output folder (created if missing) */
    unsigned jobs;   /* processes at a time (0 = online cores) */
    bool force;      /* run again a folder made by another sweep/base/binary */
    bool quiet;      /* no progress */
    volatile sig_atomic_t *interrupted;
};

/*
 * Run the points without a complete results file, writing DIR/point-NNNN.h5
 * and DIR/index.h5 (at the start, marked incomplete, and at the end).
 * Prints progress and errors to stderr. Returns the exit status: 0 all
 * points complete, 1 error (a point failed, the folder belongs to another
 * sweep and !force, a write error), 130 interrupted.
 */
int sweep_run(const struct sweep *sw, const struct sweep_run_opts *o);

#endif
