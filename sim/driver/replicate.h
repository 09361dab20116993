/*
 * replicate.h — `tidesim run --replications R`: R seeds (seed, seed+1,
 * ...) simulated as separate forked processes, at most `jobs` at a time (0 =
 * one per online core), each into its own file "<path>.tmp.<pid>.repNNNN"
 * (pid: the parent's), then merged into one file (analysis/merge.h) and the
 * per-replication files deleted. Those names, like a single run's
 * "<path>.tmp.<pid>", say "unfinished": whatever a killed run leaves never
 * looks like a results file, and a merge takes only its own files (its pid),
 * never a dead run's.
 *
 * Workers die with the parent: each asks the kernel for SIGKILL when the
 * parent dies (Linux PR_SET_PDEATHSIG), so `kill -9` of the parent leaves
 * no simulation running.
 *
 * Room sim/driver/ (what runs many simulations): uses sim/, sim/core/,
 * analysis/ and the policy interface, no policy internals. Rule:
 * docs/architecture.md.
 *
 * Auto mode (precision > 0, `--replications auto --precision P`): first
 * `reps` replications, then, after each round, the precision of the
 * headline figures is measured (analysis/precision.h) and more seeds run
 * until it is at most `precision` or `max_reps` have run; the merged /meta
 * records precision_target, precision_reached and the metric that limited it.
 *
 * SIGINT/SIGTERM (the flag *interrupted set by the caller's handler): no
 * new replication starts, running ones are sent SIGINT and write their
 * partial files, and what exists is merged into "<path>.partial" with
 * /meta complete = 0. A replication that fails (exit status other than 0 or
 * 130) makes the whole run fail and leaves no file.
 */
#ifndef TIDESIM_DRIVER_REPLICATE_H
#define TIDESIM_DRIVER_REPLICATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Run one replication: simulate with `seed` into `path`; return 0, 130 (interrupted) or 1. */
typedef int (*replicate_fn)(void *ctx, uint64_t seed, const char *path);

struct replicate_opts {
    const char *path;  /* final results file */
    uint64_t seed;     /* seed of replication 0 */
    unsigned reps;     /* >= 1 (auto mode: the first round) */
    double precision;  /* > 0: auto mode, the target relative half-width; 0: exactly reps */
    unsigned max_reps; /* auto mode: at most this many (>= reps) */
    unsigned jobs;     /* concurrent processes; 0 = online cores */
    bool quiet;
    volatile sig_atomic_t *interrupted;
};

/* Run and merge; prints progress and errors to stderr. Returns the exit status (0, 1, 130). */
int replicate_run(const struct replicate_opts *o, replicate_fn run, void *ctx);

#endif
