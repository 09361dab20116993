/*
 * kai_sched.h — the `kai` policy's run-time state and its scheduling actions
 * (sim/policy/kai_actions.c), shared by the adapter sim/policy/kai.c.
 *
 * One scheduling cycle ("session" in KAI) runs KAI's actions in KAI's order
 * (kai-scheduler docs/developer/action-framework.md):
 *   allocate       every pending job and replica, in queue order, without
 *                  disruption; a job that does not fit does not stop the ones
 *                  behind it (KAI pops the next job of the best queue);
 *   consolidation  a whole-card gang that does not fit although enough cards
 *                  are free in the cluster: move (checkpoint, restore
 *                  elsewhere) up to max_consolidation_preemptees running
 *                  training jobs off one node so that the gang fits there,
 *                  only when every moved job has a place to go;
 *   reclaim        a queue below its fair share evicts preemptible jobs of
 *                  queues above theirs (reclaimMinRuntime protects jobs that
 *                  started recently).
 * KAI's preempt action (within a queue, by PriorityClass) has nothing to do
 * here: all jobs of a queue share one class. Cards freed by an eviction are
 * "pipelined" to the workload they were taken for: a hold on the card keeps
 * everyone else off it until that workload is placed (or no longer pending).
 *
 * Units: GPU units (a whole card 1, a fraction its fraction); times µs.
 */
#ifndef TIDESIM_POLICY_KAI_SCHED_H
#define TIDESIM_POLICY_KAI_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/policy/common.h"
#include "sim/policy/kai_fairshare.h"
#include "sim/sim.h"

#define KAI_NO_GPU UINT32_MAX

struct kai_qdef {
    const char *name; /* points into the scenario document */
    int32_t parent;
    double quota, weight, limit; /* quota < -1.5: default (set at init) */
    int32_t priority;
    sim_time reclaim_min_runtime; /* < 0: not set on this queue (inherit) */
};

enum kai_resolve { KAI_RESOLVE_LCA, KAI_RESOLVE_QUEUE };

struct kai_manifest;

struct kai_pol_cfg {
    struct kai_qdef *q;
    uint32_t nq;
    struct kai_manifest *manifest; /* policy.manifests: owns the documents q's names point into */
    int32_t inf_queue;             /* leaf for replicas, -1 none */
    int32_t *train;                /* leaves for jobs without a known spec.queue */
    double *weights;               /* their assignment weights */
    uint32_t ntrain;
    double inf_fraction; /* GPU units of one replica */
    double k;            /* kValue */
    sim_time window, half_life;
    sim_time default_reclaim_min_runtime;  /* minruntime plugin, KAI default 0 */
    enum kai_resolve resolve;              /* reclaimResolveMethod, KAI default lca */
    uint32_t max_consolidation_preemptees; /* KAI default 16; 0 disables consolidation */
    sim_time hold_timeout;                 /* a hold nobody used is dropped after this */
};

/* Job states as the policy sees them. */
enum { KAI_JS_NONE, KAI_JS_PENDING, KAI_JS_RUNNING, KAI_JS_EVICTING };

/* Why a job is being evicted. */
enum { KAI_EV_RECLAIM = 1, KAI_EV_MOVE = 2 };

/* A hold ("pipelined" placement): card kept for one workload. */
enum { KAI_HOLD_NONE, KAI_HOLD_INFER, KAI_HOLD_TRAIN };

struct kai_hold {
    uint8_t kind;
    uint32_t owner; /* service (INFER) or job (TRAIN) */
    uint32_t count; /* INFER: replicas still to place on this card */
    sim_time since; /* when it was made */
};

struct kp {
    const struct kai_pol_cfg *cfg;
    uint32_t nq;
    struct kai_queue *q;
    struct kai_usage *use;
    double *alloc, *nonpre, *held, *pend, *wrr;
    struct jobq *pq; /* pending jobs per leaf, submission order */
    bool *leaf;
    uint8_t *job_st, *job_why;
    int32_t *job_q;
    sim_time *job_t0; /* LastStartTimestamp: last start by allocate */
    uint32_t njob;
    double *card_used;
    struct kai_hold *hold; /* per card */
    uint32_t *gang, *gang2;
    bool *mark; /* per card scratch */
    double capacity;
    sim_time last_t;
    struct pol_scaler ps;
    bool scaling;
    uint32_t *want; /* per service: replicas the HPA asked for that are not placed */
    bool busy, again;
    uint64_t reclaims, moves,
        held_starts; /* evictions by reclaim / consolidation; starts on a hold */
    /* Per-queue results (manifests): admissions, evictions, queueing delays of jobs. */
    sim_time *job_pend; /* per job: pending since */
    struct kai_qacct {
        uint64_t admissions, evictions;
        double *delays; /* s */
        size_t n, cap;
    } * qacct;
    double *qalloc; /* scratch for the queues report */
};

/* Per-queue results: job j of queue q started at now / is being evicted. */
void kai_acct_start(struct sim *s, struct kp *k, uint32_t j);
void kai_acct_evict(struct kp *k, uint32_t j);

/* GPU units of job j's request (its fraction under timeslice/MPS when < 1). */
double kai_job_units(const struct sim *s, const struct job *j);
/* GPU units of one inference replica. */
double kai_inf_units(const struct sim *s, const struct kp *k);

/*
 * GPU units of one card of a replica of svc: a tensor-parallel replica takes
 * whole cards (kai_inf_units does not apply to it), others kai_inf_units.
 * kai_svc_units: the units of the whole replica (its cards × that).
 */
double kai_card_units(const struct sim *s, const struct kp *k, uint32_t svc);
double kai_svc_units(const struct sim *s, const struct kp *k, uint32_t svc);

/* Per-card and per-leaf allocation, read from the cluster's tenants. */
void kai_measure(struct sim *s, struct kp *k);
/* Pending units per leaf (queued jobs; replicas the HPA wants for the inference leaf). */
void kai_pending_units(struct sim *s, struct kp *k);

/* Drop holds whose owner no longer waits (or that timed out). */
void kai_holds_expire(struct sim *s, struct kp *k);

/*
 * Card for a replica of svc (fraction u): a card held for svc first, else the
 * most allocated card with room that no one else holds. KAI_NO_GPU if none.
 */
uint32_t kai_pick_replica(struct sim *s, struct kp *k, uint32_t svc);

/*
 * The cards for a new replica of svc (a pol_pick_fn's answer): a tensor-
 * parallel replica's free cards of one node, those held for svc first; else
 * kai_pick_replica's card. Returns how many (the gang size), or 0.
 * kai_replica_placed uses up the holds of svc on the cards it took.
 */
uint32_t kai_pick_gang(struct sim *s, struct kp *k, uint32_t svc, uint32_t *cards);
void kai_replica_placed(struct kp *k, uint32_t svc, const uint32_t *cards, uint32_t n);

/* The actions, each over the state measured at its start. */
void kai_act_allocate(struct sim *s, struct kp *k);
void kai_act_consolidate(struct sim *s, struct kp *k);
void kai_act_reclaim(struct sim *s, struct kp *k);

#endif
