/*
 * autoscale.h — inference replica autoscaling with Kubernetes HPA semantics.
 *
 * Models the HorizontalPodAutoscaler loop for one inference service whose
 * metric is utilisation = arrival rate / (replicas × per-replica capacity):
 *
 *   ratio   = rate / (current × capacity × target_util)
 *   raw     = current                         if |ratio − 1| <= tolerance
 *           = ceil(rate / (capacity × target)) otherwise (= ceil(current × ratio))
 *   raw     = clamp(raw, min_replicas, max_replicas)
 *   desired = raw                                    if raw >= current (scale up at once)
 *           = max(raw values recommended in (now − down_window, now])   otherwise
 *
 * (HPA algorithm and defaults, kubernetes.io "Horizontal Pod Autoscaling":
 * tolerance 0.1, scaleDown stabilizationWindowSeconds 300, scaleUp 0.)
 * "current" is the replica count asked for so far (HPA's spec.replicas), which
 * includes replicas still starting. The HPA's scale-up rate policies (100 % or 4
 * pods per 15 s) are not modelled: a scale-up is asked for in one step.
 *
 * Replicas asked for become ready up_delay µs later (pod start + model load);
 * a scale-down first cancels replicas still starting (the newest first), then
 * removes ready ones at once. autoscale_ready() counts ready replicas.
 *
 * Units: times in µs (sim_time), rates in requests/s, capacity in requests/s
 * per replica at 100 % utilisation.
 *
 * Memory is bounded: the stabilisation window is kept as a monotone deque of
 * (time, raw) pairs with strictly decreasing raw values (an older value not
 * larger than a newer one can never be the window maximum), at most
 * AUTOSCALE_RING entries. If it overflows, the newest entry absorbs the new
 * one keeping the larger value, so scale-down can only be later, never
 * earlier, than exact HPA. Pending scale-ups are likewise at most
 * AUTOSCALE_RING batches; on overflow the newest batch grows and keeps its
 * (later) ready time.
 *
 * Invariants: min_replicas <= ready <= current <= max_replicas after each call
 * (ready may lag current only by the replicas still starting).
 *
 * struct autoscale is plain data: embed it, autoscale_init() it; nothing to
 * release. No I/O, no globals.
 */
#ifndef TIDESIM_AUTOSCALE_H
#define TIDESIM_AUTOSCALE_H

#include <stdint.h>

#include "sim/core/simtime.h"

#define AUTOSCALE_RING 64

struct autoscale_cfg {
    double capacity;       /* req/s one replica serves at 100 % utilisation, > 0 */
    double target_util;    /* target utilisation, 0 < x <= 1; HPA example default 0.7 */
    double tolerance;      /* no change while |ratio − 1| <= tolerance; HPA default 0.1 */
    uint32_t min_replicas; /* >= 0 */
    uint32_t max_replicas; /* >= min_replicas, >= 1 */
    uint32_t initial;      /* replicas ready at init; clamped into [min, max] */
    sim_time up_delay;     /* µs from asking to ready (pod start + model load), >= 0 */
    sim_time down_window;  /* µs scale-down stabilisation window, >= 0; HPA default 300 s */
};

struct autoscale_rec {
    sim_time t;
    uint32_t n;
};

struct autoscale {
    struct autoscale_cfg cfg;
    uint32_t current; /* replicas asked for (HPA spec.replicas) */
    uint32_t ready;   /* replicas whose start delay has elapsed, as of last_t */
    sim_time last_t;  /* time of the last call, calls must not go back */
    /* Stabilisation window: deque of raw recommendations, strictly decreasing n. */
    struct autoscale_rec win[AUTOSCALE_RING];
    uint32_t win_head, win_len;
    /* Pending scale-ups: (ready time, replica count), ready times non-decreasing. */
    struct autoscale_rec pend[AUTOSCALE_RING];
    uint32_t pend_head, pend_len;
};

/* Fill cfg with the defaults: target 0.7, tolerance 0.1, min 1, max 1000000,
 * initial 1, up_delay 60 s, down_window 300 s; capacity 1 req/s (set it). */
void autoscale_cfg_default(struct autoscale_cfg *cfg);

/* Initialise a at time `now` with cfg (copied) and cfg->initial replicas
 * ready. Returns 0, or -EINVAL for an invalid cfg (a is then left zeroed). */
int autoscale_init(struct autoscale *a, const struct autoscale_cfg *cfg, sim_time now);

/* One HPA evaluation at time now with the observed arrival rate (req/s, >= 0).
 * Returns the replica count now asked for (>= 0), or -EINVAL if now is before
 * the previous call or rate is negative / not finite (state unchanged). */
int autoscale_observe(struct autoscale *a, sim_time now, double rate);

/* Replicas ready at time now (>= previous call time); promotes pending
 * replicas whose delay has elapsed. Returns the count, or -EINVAL if now is
 * before the previous call (state unchanged). */
int autoscale_ready(struct autoscale *a, sim_time now);

/* Time at which the next pending replica becomes ready, or SIM_TIME_MAX if
 * none is starting. Lets the engine schedule a wake-up. */
sim_time autoscale_next_ready(const struct autoscale *a);

/* Replica count asked for (ready + starting). */
uint32_t autoscale_current(const struct autoscale *a);

/*
 * Replicas cfg's HPA wants at a steady `rate` (req/s): ceil(rate / (capacity
 * × target)) clamped into [min_replicas, max_replicas] — what it would have
 * settled on had the load been running before t = 0.
 */
uint32_t autoscale_replicas_for(const struct autoscale_cfg *cfg, double rate);

#endif
