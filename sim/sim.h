/*
 * sim.h — one simulation run: everything hangs off struct sim (no globals),
 * so any number of runs can live in one process.
 *
 * Room sim/ (the cluster world and one run): uses sim/core/, models/,
 * traces/, the policy interface sim/policy/policy.h and analysis/h5io.h;
 * never the driver, the CLI or a policy's internals. Rule: docs/architecture.md.
 *
 * sim_init() builds the run from a validated scenario and a seed: cluster,
 * services with their arrival sources, the trainer with its job source, the
 * policy, and the sampler that closes a metrics interval every
 * sample_interval. sim_run() runs to the scenario's duration (or until
 * interrupted). The metrics are then read from the struct; a sink (below)
 * sees each interval as it closes, e.g. the results writer of sim/output.h.
 */
#ifndef TIDESIM_SIM_H
#define TIDESIM_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/cluster.h"
#include "sim/core/engine.h"
#include "sim/policy/policy.h"
#include "sim/core/rng.h"
#include "sim/llm.h"
#include "sim/scenario.h"
#include "sim/serve.h"
#include "sim/train.h"

/*
 * An observer of the run's metrics intervals, such as the results writer
 * (sim/output.h): interval() is called when [t0, t1) has just been closed,
 * before the policy's tick. A non-zero return stops the run (s->err names a
 * results-file error). The sim knows nothing else of its observer.
 */
struct sim_sink {
    int (*interval)(void *ctx, const struct sim *s, sim_time t0, sim_time t1);
    void *ctx;
};

struct sim {
    const struct scenario *sc;
    uint64_t seed;
    struct engine eng;
    struct cluster cl;
    struct service *svcs;
    uint32_t nsvcs;
    /*
     * Per service: its mean arrival rate (req/s) over the first metrics
     * interval, counted from a second copy of its arrival stream (the same
     * seed, so the same arrivals). Elastic policies size their initial
     * replicas with it, as a cluster that was already running would be.
     */
    double *first_rate;
    /* Per service: the highest mean arrival rate of any metrics interval of the
     * run (synthetic: the profile's maximum; a trace: read from it at set-up).
     * Fixed splits (dedicated, tidal's windows) size by it. */
    double *peak_rate;
    struct trainer tr;
    /*
     * Placement constraints (sim/pool_cfg.h): per service the pools it may use
     * (require) and prefers (prefer, within those); POOL_ALL: any. Jobs carry
     * theirs (struct job), set at submission. constrained: any constraint at all.
     */
    uint64_t *svc_allow, *svc_prefer;
    bool constrained;
    bool map_types;       /* jobs' log GPU types map onto pools (sim.c job_type_pools) */
    uint64_t unplaceable; /* jobs rejected at submission: no pool they may use can hold them */
    const struct policy_ops *pol;
    void *pol_state;

    struct rng fault_rng;   /* fatal-fault draws (clocks on the tenants: sim.c) */
    uint64_t faults;        /* fatal faults, one per clock that ran out (or injection) */
    uint64_t fault_victims; /* tenants they killed (replicas already down excluded) */
    /* The same per pool (cl.npools entries): the faults of tenants on its cards, and the
     * tenants they killed (a fault kills only on its own card). */
    uint64_t *pool_faults, *pool_fault_victims;
    int event_error; /* -ENOMEM when a fault or restart event could not be queued */
    uint64_t oom_kills;
    uint64_t relayouts;
    bool in_init; /* the policy's init runs: replicas it starts are up at t = 0 */

    struct evq_handle sample_ev;
    uint64_t nsamples;    /* intervals closed */
    sim_time last_sample; /* end of the last closed interval */
    struct sim_sink sink; /* interval() NULL: keep results in memory only */
    int sink_error;

    /*
     * The warm-up snapshot (output.warmup): the counters at the end of the
     * first metrics interval that reaches the warm-up, so that headline
     * figures cover [warm_at, end] only. warm_at = 0 and no arrays: none.
     */
    struct sim_warm {
        sim_time at;
        double *acc; /* per card: acc[USE_NSTATES] then alloc_us (USE_NSTATES + 1 each) */
        struct service_stats *tot; /* per service */
        struct hist *h;            /* per service: latency histogram so far */
        struct hist *q;            /* per service: waiting-time histogram so far */
        /* LLM services (sim/llm.h): per service, NULL-free only for them. */
        struct llm_counts *llm;
        struct hist *ttft, *tpot;
    } warm;

    sim_time end; /* time reached (duration, or less when interrupted) */
    bool interrupted;
    char err[512]; /* message of the error that stopped the run */
};

/*
 * Build a run. The scenario must outlive the sim. sink may be NULL (no
 * observer). Returns 0, or a negative code with s->err filled (and
 * everything released).
 */
int sim_init(struct sim *s, const struct scenario *sc, uint64_t seed, const struct sim_sink *sink);

/*
 * Run to the scenario's duration. Returns 0; 1 when interrupted (s->end = time
 * reached); a negative code when a trace failed or memory ran out (s->err).
 */
int sim_run(struct sim *s, const volatile sig_atomic_t *interrupt);

/*
 * Memory ran out during the run (`what`: "queueing a training job"): stop it, with
 * "out of memory <what>" in s->err and -ENOMEM from sim_run. Never carry on with a result
 * the allocation would have changed (a job rejected or left waiting). The first error stands.
 */
void sim_fail_oom(struct sim *s, const char *what);

void sim_release(struct sim *s);

/*
 * Cluster API for policies: put a replica of service svc on card gpu (a free
 * slot or MIG instance of the service's profile). Returns 0; 1 when the
 * replica was OOM-killed at its first allocation (time-slicing/MPS memory);
 * or the cluster's refusal (-EBUSY, -ENOSPC, -EINVAL) with nothing changed.
 */
int sim_place_replica(struct sim *s, uint32_t svc, uint32_t gpu);

/*
 * Scale up: place a replica of svc on gpu that serves after `delay` (pod
 * start + model load; 0 = at once; replicas started by the policy's init are
 * up at once: the run starts in steady state). Same returns as sim_place_replica.
 * A tensor-parallel LLM replica takes gpu and the next cards of its node that
 * take a tenant (-EBUSY when the node has too few); policies choose all its
 * cards with sim_start_replica_on.
 */
int sim_start_replica(struct sim *s, uint32_t svc, uint32_t gpu, sim_time delay);

/*
 * Start a replica of svc on exactly the cards cards[0..n) (caller's array),
 * all of one node: n must be the replica's tensor-parallel degree (1 for a
 * batch service); each card takes one tenant (a slot on a shared card).
 * Policies that choose a tensor-parallel replica's cards themselves use it
 * (sim/policy/common_tp.c). Same delay rule and returns as
 * sim_start_replica; -EINVAL for a wrong n, a card out of range, a repeated
 * card or cards on two nodes. On failure nothing is changed.
 */
int sim_start_replica_on(struct sim *s, uint32_t svc, const uint32_t *cards, uint32_t n,
                         sim_time delay);
/* The same with the MIG instance profile each card's tenant takes (NULL: the service's
 * mig_profile, else the smallest free instance holding it): a policy that charged the replica
 * one instance of a profile (kueue's nvidia.com/mig-<profile> quota) places it on that one. */
int sim_start_replica_on_profile(struct sim *s, uint32_t svc, const uint32_t *cards, uint32_t n,
                                 sim_time delay, const char *mig_profile);

/* The tenant request of one card of a replica of service svc (configuration c). */
struct tenant_req sim_replica_req(uint32_t svc, const struct service_cfg *c);

/*
 * Placement constraints for policies (sim/pool_cfg.h, docs/scenario.md).
 * sim_svc_allows: whether card g is in a pool service svc may use (sim_job_allows: job j).
 * sim_svc_prefers: whether it is in a pool svc prefers (true for every card
 * when svc prefers nothing). sim_find_gang: whole free cards for job j as
 * cluster_find_gang picks them, in its preferred pools first, then in any
 * pool it may use; 0 or -ENOSPC.
 */
static inline bool sim_svc_allows(const struct sim *s, uint32_t svc, uint32_t g)
{
    return !s->svc_allow || cluster_card_in(&s->cl, g, s->svc_allow[svc]);
}
/* Whether card g is in a pool training job j may use. */
static inline bool sim_job_allows(const struct sim *s, uint32_t j, uint32_t g)
{
    return cluster_card_in(&s->cl, g, s->tr.jobs[j].pools_allow);
}
static inline bool sim_svc_prefers(const struct sim *s, uint32_t svc, uint32_t g)
{
    return !s->svc_prefer || cluster_card_in(&s->cl, g, s->svc_prefer[svc]);
}
int sim_find_gang(const struct sim *s, uint32_t j, uint32_t *out);
/*
 * A warm start's job with a node (trainer_submit_snapshot) that has not started
 * yet: the node's lowest free cards that ok[] (NULL: all) and its pools allow,
 * into out[0..spec.gpus); 0, or -ENOSPC when the node has too few. 1: job j
 * has no node to keep (the caller chooses). Every gang finder asks it first.
 */
int sim_pinned_gang(const struct sim *s, uint32_t j, const bool *ok, uint32_t *out);

/*
 * Scale down: take one replica of svc out (an idle one first; a busy one
 * drains its batch first). *gpu (may be NULL) gets its card. Returns 0,
 * -ENOENT when svc has no replica left, -EINVAL for a bad svc.
 */
int sim_stop_replica(struct sim *s, uint32_t svc, uint32_t *gpu);

/* Stop up to max replicas (of any service) on card gpu (busy ones drain). Returns how many. */
uint32_t sim_stop_replicas_on(struct sim *s, uint32_t gpu, uint32_t max);

/*
 * Re-layout MIG card gpu (empty) to `layout`: the card serves nothing for
 * mig_reconfig_seconds(), then policy->on_card_ready is called. Returns 0 or
 * the cluster's refusal (-EBUSY: not empty; -EINVAL: invalid layout, err
 * filled; -ENOTSUP: not MIG) with nothing changed.
 */
int sim_mig_relayout(struct sim *s, uint32_t gpu, const char *layout, char *err, size_t errlen);

/*
 * Test and what-if hook: a fatal fault in tenant tid now (as if its fault
 * clock ran out). The sharing mode decides who dies; replicas already down
 * (starting or restarting) neither fault nor die. Returns the number of
 * tenants that died (0, counting no fault, when tid is a replica down), or
 * -EINVAL for a stale id.
 */
int sim_inject_fault(struct sim *s, uint32_t tid);

/*
 * The measured window [sim_window_start(s), end]: the whole run, or after the
 * warm-up snapshot (output.warmup). Headline figures cover it.
 */
sim_time sim_window_start(const struct sim *s);

/* GPU-time of card g in state k (k = USE_NSTATES: allocated) within the window, µs. */
double sim_window_card_us(const struct sim *s, uint32_t g, int k);

/*
 * Cluster-wide utilisation over the window: allocated, busy and useful
 * GPU-time / (GPUs × window length).
 */
double sim_util_allocated(const struct sim *s);
double sim_util_busy(const struct sim *s);
double sim_util_useful(const struct sim *s);

/* Energy within the window, kWh: idle + (TDP − idle) × busy per card (models/power.h). */
double sim_energy_kwh(const struct sim *s);

/*
 * Pool p (index into s->cl.pools) within the window: its allocated (which =
 * 0), busy (1) or useful (2) GPU-time in µs, as the cluster-wide
 * utilisations count it; its energy in kWh at its board's power.
 */
double sim_pool_gpu_us(const struct sim *s, uint32_t p, int which);
double sim_pool_energy_kwh(const struct sim *s, uint32_t p);

/*
 * Service svc's counters, latency histogram (into *h) and waiting-time
 * histogram (into *q, unless q is NULL) within the window; the caller
 * provides the histograms.
 */
void sim_window_service(const struct sim *s, uint32_t svc, struct service_stats *st, struct hist *h,
                        struct hist *q);

/*
 * An LLM service's token counters and its TTFT and TPOT histograms within the
 * window (sim/llm.h); the caller provides them. No-op for a batch service.
 */
void sim_window_llm(const struct sim *s, uint32_t svc, struct llm_counts *c, struct hist *ttft,
                    struct hist *tpot);

#endif
