/*
 * kai_fairshare.h — KAI Scheduler queue semantics: fair share, reclaim, priorities,
 * fractional requests and time-based fair share (research notes §7.2;
 * kai-scheduler/KAI-Scheduler docs: queues, fairness, priority, gpu-sharing,
 * time-based-fairshare).
 *
 * Queues form a tree given as an array in which every parent precedes its
 * children (parent = -1 for top-level queues); only leaves hold jobs. Per
 * queue, in GPU units (double: a gpu-fraction request counts its fraction,
 * a MIG Xg slice X units, a whole GPU 1):
 *   quota    deserved GPUs; KAI_UNLIMITED (-1) = unlimited, 0 = none
 *   weight   overQuotaWeight, >= 0
 *   limit    KAI_UNLIMITED (-1) = no cap; 0 = nothing beyond quota; else the
 *            most the queue may hold (taken as max(limit, quota))
 *   priority queue priority: higher is served first for quota and over-quota
 *   request  GPUs requested (leaves: running + pending; parents: computed)
 *
 * Fair share (kai_fair_share), top-down: each level divides what its parent
 * got (the cluster for the top level) among siblings:
 *   1. in-quota: each queue gets min(quota, demand), where demand =
 *      min(request, cap); in priority order; if a priority level's quotas
 *      exceed what is left they are scaled down in proportion;
 *   2. over-quota: the remainder is water-filled, priority level by level, in
 *      proportion to the (time-adjusted, see below) weights, each queue capped
 *      at its demand; repeated until nothing is left or nobody can take more;
 *   3. leftover: anything still unplaced (e.g. adjusted weights of 0) is
 *      water-filled by the configured weights, so the split is work-conserving.
 *
 * Time-based fair share. Each queue carries hist = its decayed historical
 * usage normalised to cluster capacity (struct kai_usage computes it:
 * U = Σ usage·Δt·0.5^(age/half_life) over the window, divided by the same sum
 * for the whole capacity). Among siblings competing for over-quota, with
 * ŵ_i = w_i / Σ w (weight share) and û_i = hist_i / Σ hist (share of the
 * siblings' recent usage), the over-quota weight used in step 2 is
 *   w'_i = max(0, ŵ_i + k·(ŵ_i − û_i)).
 * Why this form: k = 0 gives plain KAI fair share; a queue that used exactly
 * its weight share keeps it; a heavy past user loses weight linearly in its
 * excess, scaled by kValue as KAI's docs describe ("kValue scales the penalty
 * on over-quota share"); in-quota allocation (step 1) is untouched, as in KAI;
 * when no sibling has history (Σ hist = 0) nothing changes. The exact KAI
 * formula is not in KAI's docs; this one is our choice.
 *
 * Reclaim bounds: kai_reclaimable is the over-quota use held by preemptible
 * workloads (priority < KAI_NONPREEMPTIBLE, i.e. < 100) above the queue's
 * fair share; a queue below its fair share may claim the gap. The policy's
 * reclaim action (sim/policy/kai_actions.c) applies KAI's per-victim
 * strategies on top (MaintainFairShare, GuaranteeDeservedQuota).
 *
 * Pure functions over caller-owned arrays: no allocation, no I/O, no globals.
 */
#ifndef TIDESIM_POLICY_KAI_FAIRSHARE_H
#define TIDESIM_POLICY_KAI_FAIRSHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/simtime.h"

#define KAI_UNLIMITED (-1.0)

/* Built-in PriorityClass values (KAI docs, docs/priority). */
#define KAI_PRIO_TRAIN             50
#define KAI_PRIO_BUILD_PREEMPTIBLE 75
#define KAI_PRIO_BUILD             100
#define KAI_PRIO_INFERENCE         125
#define KAI_NONPREEMPTIBLE         100 /* value >= this: non-preemptible, in-quota only */

struct kai_queue {
    int32_t parent;    /* index of the parent queue (< own index), or -1 */
    double quota;      /* deserved GPUs, or KAI_UNLIMITED */
    double weight;     /* overQuotaWeight, >= 0 */
    double limit;      /* KAI_UNLIMITED, 0 (= quota), or max GPUs */
    int32_t priority;  /* queue priority */
    double request;    /* input for leaves; computed for parents */
    double hist;       /* decayed historical usage / capacity, >= 0 (0: none) */
    double fair_share; /* output, GPUs */
};

/* Compute fair_share for every queue of q[0..n) from the cluster capacity
 * (GPUs) and kValue k (>= 0; 0 disables time-based fair share). Parents'
 * request is overwritten with the sum of their children's. Returns 0, or
 * -EINVAL (a parent not before its child, negative weight/request/capacity;
 * q unchanged). Invariants after success: Σ top-level shares <= capacity,
 * Σ children's shares <= parent's share, share <= min(request, cap). */
int kai_fair_share(struct kai_queue *q, uint32_t n, double capacity, double k);

/* The most queue q may hold: KAI_UNLIMITED limit ⇒ +inf; 0 ⇒ quota. */
double kai_cap(const struct kai_queue *q);

/* GPUs that may be reclaimed from q holding `allocated` GPUs, of which
 * `nonpreemptible` by workloads with priority >= KAI_NONPREEMPTIBLE: the part
 * above both its fair share and its quota, held by preemptible workloads. */
double kai_reclaimable(const struct kai_queue *q, double allocated, double nonpreemptible);

/* GPUs a queue holding `allocated` may claim by reclaim: max(0, fair_share − allocated). */
double kai_reclaim_need(const struct kai_queue *q, double allocated);

/* Whether a workload of `units` GPUs with this priority may be placed in q
 * holding `allocated` (of which `nonpreemptible`): a non-preemptible one
 * only within quota, any one only within the queue's cap. */
bool kai_admissible(const struct kai_queue *q, double allocated, double nonpreemptible,
                    double units, int32_t priority);

/* Whether a workload of this PriorityClass value may be preempted (< 100). */
bool kai_preemptible(int32_t priority);

/* PriorityClass value of a built-in class name ("train", "build-preemptible",
 * "build", "inference") into *value. Returns 0 or -ENOENT. */
int kai_priority_class(const char *name, int32_t *value);

/* GPU units of one pod's request: whole GPUs if gpus > 0; else the
 * gpu-fraction if > 0; else gpu-memory MiB / device MiB if > 0; else the MIG
 * slice's compute units (mig_g). Returns the units (> 0) or -EINVAL. */
struct kai_request {
    uint32_t gpus;     /* nvidia.com/gpu */
    double fraction;   /* gpu-fraction annotation, 0 < x <= 1 */
    double memory_mib; /* gpu-memory annotation */
    uint32_t mig_g;    /* mig-Xg.* resource: X */
};
double kai_request_units(const struct kai_request *r, double device_mib);

/*
 * Decayed usage history of one queue over a sliding window of
 * KAI_HIST_BUCKETS buckets (default window 168 h ⇒ 1 h buckets; KAI default
 * window 168 h). The window is the KAI_HIST_BUCKETS buckets ending with the
 * one holding `now`. Usage within a bucket is aged from the bucket's midpoint.
 * Plain data: embed and kai_usage_init().
 */
#define KAI_HIST_BUCKETS 168

struct kai_usage {
    sim_time bucket;                /* bucket width, µs */
    sim_time half_life;             /* µs, > 0 */
    sim_time start;                 /* time of init: history before it is empty */
    int64_t idx[KAI_HIST_BUCKETS];  /* absolute bucket number held by each slot, -1 none */
    double gpu_s[KAI_HIST_BUCKETS]; /* GPU-seconds in that bucket */
};

/* window / KAI_HIST_BUCKETS is the bucket width (window >= KAI_HIST_BUCKETS µs).
 * Returns 0 or -EINVAL. */
int kai_usage_init(struct kai_usage *u, sim_time now, sim_time window, sim_time half_life);

/* Record `gpus` held over [t0, t1) (t0 >= start, t0 <= t1). Parts older than
 * the window kept are dropped. */
void kai_usage_add(struct kai_usage *u, sim_time t0, sim_time t1, double gpus);

/* Decayed usage over the window ending at now, divided by the decayed
 * capacity-time of the same window (since start): 0 .. 1 if the queue never
 * held more than `capacity` GPUs. 0 if no time has passed. */
double kai_usage_normalised(const struct kai_usage *u, sim_time now, double capacity);

#endif
