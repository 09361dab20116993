/*
 * plan_search.h — the state of one `tidesim plan` search, shared by the search
 * (plan.c) and the index writer (plan_index.c). Private to sim/driver/.
 */
#ifndef TIDESIM_DRIVER_PLAN_SEARCH_H
#define TIDESIM_DRIVER_PLAN_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/check.h"
#include "sim/driver/dispatch.h"
#include "sim/driver/plan.h"

enum verdict { V_NONE, V_PASS, V_FAIL, V_UNCLEAR };
extern const char *const plan_verdict_word[];

enum rep_state { R_MISSING, R_RUNNING, R_DONE };

struct probe {
    bool requested, settled, evaluating;
    unsigned want;                   /* seeds wanted now */
    unsigned char *rep;              /* [reps_max] enum rep_state */
    unsigned running, done, ran_now; /* ran_now: seeds run by this invocation */
    enum verdict v;
    struct check_item *items; /* the gates at the last evaluation (copies) */
    size_t nitems;
    double gpus, cost, days; /* means: GPUs, cost_total, measured days */
    char currency[16];
};

/* How a gate moves with size, from its verdicts at the range's two ends. */
enum gate_class { G_UP, G_DOWN, G_BOTH_PASS, G_BOTH_FAIL };

enum phase { PH_ENDS, PH_MID, PH_BISECT, PH_SCAN, PH_DONE };

struct csearch {
    enum phase phase;
    size_t lo, hi, mid, scan_next;
    int *cls; /* [ngates] enum gate_class */
    bool nonmono, lowest_passes;
    char why[512];
    size_t answer; /* size index, SIZE_MAX = none in the range */
    char note[512];
};

struct planner {
    const struct plan *pl;
    const struct plan_run_opts *o;
    struct dispatch *d;
    struct probe *pr;   /* [npoints] */
    struct csearch *cs; /* [nchoices] */
    size_t ngates;
    size_t running;
    struct dispatch_task *slot_task; /* [slots] */
    bool failed, stopping;
    int objective;
    double t0;
};

/* The size value's text of size index i, and the size key. */
const char *plan_size_text(const struct plan *pl, size_t i);
const char *plan_size_key(const struct plan *pl);

/* "policy.name=kueue cluster.sharing=mig" of choice c ("base scenario" without choices). */
void plan_choice_label(const struct plan *pl, size_t c, char *buf, size_t n);

/* A figure of a gate item for the table: shares in % (or percentage points with sign). */
void plan_fig_text(char *buf, size_t n, const struct check_item *it, double v, bool sign);

/* "probes/NAME" of point p (no extension). 0 or -ENOMEM. */
int plan_probe_stem(const struct plan *pl, size_t p, char *buf, size_t n);

/* Write DIR/index.h5 of the search so far (done: every choice answered). 0 written, 1 error,
 * 2 nothing to write (no probe settled). */
int plan_write_index(const struct planner *P, bool done);

#endif
