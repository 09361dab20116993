/*
 * plan.h — `tidesim plan PLAN.yaml`: the capacity question answered. For
 * each choice (a policy, a sharing mode, any combination of scenario keys),
 * the smallest cluster size that passes every gate with confidence, found by
 * bisection where the gates are monotone in size and by a scan where they
 * are not. docs/plan.md is the user's guide.
 *
 * A plan file:
 *
 *   base: ../scenarios/default.yaml       # against the plan file's folder
 *   size: {key: cluster.nodes, from: 1, to: 8}   # or {key: K, values: [2, 4, 8]}
 *   choices:                              # optional; a grid (mode: zip pairs them)
 *     policy.name: [kueue, tidal]
 *   gates:                                # tidesim check's options without "--"
 *     min-slo: 99%
 *     max-p99-ms: 250
 *     min-training-gpu-h-per-day: 500
 *     max: {cost_total: 20000}
 *   replications: {min: 3, max: 10}      # seeds per probe: first, and at most
 *   set: {duration: 3d}                   # optional: fixed overrides of every probe
 *   objective: cost                       # or gpus: which choice is the answer
 *   search: bisect                        # or scan: every size of the range
 *
 * Confidence: every probe (a choice at a size) runs `min` seeds (seed, seed+1,
 * ...: the same seeds at every probe, so sizes differ only by size); its gates
 * are judged on their 95 % intervals by the gate code of `tidesim check
 * --confident` (analysis/check.h). A gate whose interval straddles its bound
 * gets more seeds, as many as its spread says it needs (at most `max`); a
 * probe still unclear at the cap counts as not passing.
 *
 * The search of one choice (sizes s_0 < ... < s_m-1):
 *   1. probe both ends. Each gate is classed by its verdicts there: needs
 *      size (fails at s_0, holds at s_m-1), needs smallness (the reverse: a
 *      utilisation floor, a cost ceiling), holds at both, fails at both.
 *   2. s_0 passes every gate: the answer is s_0. A gate failing at both ends:
 *      the middle is probed; failing there too, no size passes (if gates are
 *      monotone); holding there, the gate is not monotone: scan.
 *   3. else bisection on "every needs-size gate holds", then the answer is
 *      checked against every gate. Every probe is checked for a verdict that
 *      contradicts monotonicity (a needs-size gate holding at a smaller size
 *      and failing, with confidence, at a larger one; a holds-at-both gate
 *      failing in between; ...): one contradiction switches to a scan, and the
 *      table says so and why.
 *   4. scan: sizes in ascending order; the first that passes every gate.
 * Monotonicity can only be seen where probes were made: a gate that dips
 * between two probes that agree is not seen (search: scan rules it out).
 *
 * Files: DIR/probes/NAME.repNNNN.h5 (one seed of one probe: the truth, kept)
 * and DIR/probes/NAME.h5 (its seeds merged, as tidesim run --replications
 * writes them), NAME from the probe's overrides and a hash of them, so a
 * probe's files are found again whatever the plan file around it says: run
 * again with another gate, more choices or another cap, a plan reuses every
 * run it already has. DIR/index.h5: a sweep index (analysis/sweepidx.h, kind
 * SWEEPIDX_KIND_PLAN) of every probe, plus /plan, the answer table.
 *
 * Room sim/driver/.
 */
#ifndef TIDESIM_DRIVER_PLAN_H
#define TIDESIM_DRIVER_PLAN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/check.h"
#include "sim/driver/sweep.h"

enum plan_objective { PLAN_COST, PLAN_GPUS };
enum plan_search { PLAN_BISECT, PLAN_SCAN };

struct plan {
    struct sweep sw;     /* the choice axes, a hidden cost axis, the size axis last */
    size_t nchoice_axes; /* the first axes of sw */
    size_t cost_axis;    /* index of the added cost.pricing axis, or SIZE_MAX */
    uint32_t hidden;     /* bit a: axis a is a fixed override (set:, the cost axis), not a choice */
    size_t nchoices, nsizes;
    double *size_num; /* [nsizes] the size values as numbers, increasing */
    struct check_gates gates;
    char gates_text[1024]; /* "min-slo 99%, max-p99-ms 250" */
    unsigned reps_min, reps_max;
    enum plan_objective objective;
    enum plan_search search;
    char hash[33]; /* base text, binary, size key: what the probe files depend on */
};

/* Read and check a plan file (not its probes: plan_validate). 0, or < 0 with err. */
int plan_load(struct plan *pl, const char *path, struct conf_err *err);
void plan_release(struct plan *pl);

/* Load every probe's scenario (each choice at each size): the first bad one gives
 * "PLAN:line:col: axis PATH value 'V' (point P): ...". 0 or -EINVAL. */
int plan_validate(const struct plan *pl, struct conf_err *err);

/* Point of choice c at size index i (sweep point numbering). */
static inline size_t plan_point(const struct plan *pl, size_t c, size_t i)
{
    return c * pl->nsizes + i;
}

struct dispatch;

struct plan_run_opts {
    const char *dir; /* output folder (created if missing) */
    unsigned jobs;   /* forked workers (0 = online cores); unused with d */
    bool force;      /* use a folder made for another base scenario or binary */
    bool quiet;      /* no progress lines */
    int objective;   /* -1: the plan file's; else enum plan_objective */
    volatile sig_atomic_t *interrupted;
    struct dispatch *d; /* NULL: forked processes; else MPI ranks */
};

/*
 * Search, write DIR/index.h5 and print the answer table to stdout (progress
 * and errors to stderr). Returns 0 (searched: an answer or "none" for each
 * choice), 1 error, 130 interrupted (what ran is kept; run again to go on).
 */
int plan_run(const struct plan *pl, const struct plan_run_opts *o);

/* The worker side: task {point, replication} run into its probe's seed file. */
struct dispatch_task;
struct plan_task_ctx {
    const struct plan *pl;
    const char *dir;
    volatile sig_atomic_t *interrupted;
};
int plan_task(void *ctx, const struct dispatch_task *t);

#endif
