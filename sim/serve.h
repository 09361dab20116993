/*
 * serve.h — an inference service: arrivals, dynamic batching, replicas.
 *
 * Requests are data, batches are events. Waiting requests are their arrival
 * timestamps in a ring buffer, drawn lazily from the arrival source: at most
 * max_batch arrivals ahead of the clock are drawn, so the time at which a
 * batch fills is known without an event per request. A replica takes a batch
 * when it is idle and either max_batch requests wait or the oldest has waited
 * max_wait (Triton-style dynamic batching); the service schedules one wake-up
 * event for that moment and one completion event per running batch.
 *
 * Reservations (exclusive cards): when a replica is idle and the next batch is
 * due later, the batch it will take is already known (its arrivals are drawn),
 * so instead of a wake-up event the replica is reserved for it: its completion
 * event is scheduled at once, the card's switch to inference is deferred to the
 * start (cluster_defer_active), and the start itself — removing the requests
 * from the queue, counting the wait and the batch — is applied lazily when the
 * service next syncs, in time order with the arrivals. Reservations are taken
 * in start order, so batches start at the same times and draw the same service
 * times as with a wake-up event; only which idle replica serves may differ.
 * Anything that changes the replicas (removal, fault) first takes back the
 * reservations not yet begun, then re-plans. This saves one event per batch
 * that finds an idle replica (~0.3 per request in an M/M/8 at ρ = 0.9). Latency
 * of each request = batch completion − arrival, recorded into log-bucketed
 * histograms (sim/core/hist.h) and counted against the SLO exactly.
 *
 * Batch service time = (a + b·n) · jitter / speed, jitter of mean 1
 * (deterministic, exponential or lognormal with a CV), speed the replica's
 * fraction of a full GPU (1 in exclusive mode).
 *
 * Conservation: arrived = served + in_service + waiting + dropped + failed at any time.
 *
 * A `kind: llm` service is served token by token instead (sim/llm.h): every
 * function below dispatches to it, and the counters and histograms here keep
 * their meaning (latency = end to end, waiting = until admission; waiting
 * requests are those at the router and in the replicas' queues).
 */
#ifndef TIDESIM_SERVE_H
#define TIDESIM_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/cluster.h"
#include "sim/core/engine.h"
#include "sim/core/hist.h"
#include "sim/core/rng.h"
#include "sim/scenario.h"
#include "traces/source.h"

struct replica {
    uint32_t gpu;
    uint32_t tid;       /* its tenant on the card (sim/cluster.h) */
    double speed;       /* current speed while a batch runs, fraction of a full GPU */
    double fixed_scale; /* factor on the fixed batch cost a: g(φ, s) on a MIG instance of
                           speed s, else 1 (models/latency.h) */
    double board;       /* its card's inference speed vs the reference board (A100 = 1) */
    double bw_factor;   /* memory-bound service on a MIG instance: memory share / SM speed of
                           the instance (its speed is rescaled by it); else 1 */
    double work_left;   /* µs of the running batch left at full speed */
    sim_time since;     /* when work_left was last brought up to date */
    bool busy;
    bool down;     /* killed by a fault, restarting */
    bool draining; /* leaves its card when its batch completes */
    bool gone;     /* removed; the slot may be reused */
    bool reserved; /* holds a batch that starts at batch_start (> now at reservation) */
    uint32_t batch_n;
    sim_time batch_start, batch_end;
    sim_time *batch_arrivals; /* max_batch entries */
    int64_t batch_arr_sum;    /* their sum: waits and latencies add up without a loop */
    struct evq_handle done;
};

struct service_stats {
    uint64_t arrived, served, dropped, within_slo;
    uint64_t failed; /* lost in a batch whose replica was killed */
    uint64_t batches;
    double wait_us; /* sum over served requests of (batch start − arrival) */
    double busy_us; /* replica time spent on completed batches (HPA utilisation) */
};

struct llm_svc;

struct service {
    uint32_t index;
    const struct service_cfg *cfg;
    uint64_t prefer_pools; /* pools it prefers (scale-downs leave them last); POOL_ALL: none */
    /* Per pool (cluster.pools), whole run: requests served by replicas there and those within
     * the SLO (batch services; NULL for LLM services). Owned. */
    uint64_t *pool_served, *pool_within;
    struct llm_svc *llm;  /* kind: llm (sim/llm.h), owned; NULL for the batch kind */
    struct rng start_rng; /* replica start-up draws (cfg->startup) */
    struct engine *eng;
    struct cluster *cl;
    struct arrival_source *src; /* owned */
    bool src_done;
    int src_error; /* negative code once the source failed */
    struct trace_err src_err;
    struct rng rng; /* service-time jitter */
    double jitter_sigma, jitter_mu;

    /* Drawn, not yet started requests: ring[(head + i) & mask], i < len, sorted. */
    sim_time *ring;
    uint64_t mask, head, len;
    uint64_t narrived; /* entries from head with time <= last pull (the queue) */

    struct replica *reps;
    uint32_t nreps, cap_reps; /* replica slots, gone ones included */
    uint32_t live_reps;       /* serving or starting */
    uint32_t *idle;           /* stack of idle replica indices */
    uint32_t nidle;
    uint32_t in_service; /* requests in running batches */
    uint32_t
        hot; /* replica just done whose card still reads inference (on_batch_done), or UINT32_MAX */

    /* Reserved replicas in start order: resv[(resv_head + i) & (cap_reps - 1)], i < resv_len;
     * together they hold the first resv_req requests of the ring. */
    uint32_t *resv;
    uint32_t resv_head, resv_len;
    uint64_t resv_req;

    struct evq_handle wake;
    sim_time wake_at;

    struct service_stats tot, win; /* since t = 0 / since the interval started */
    struct hist *h_total, *h_win;  /* latency (batch end − arrival), µs */
    struct hist *q_total, *q_win;  /* waiting time (batch start − arrival), µs */
    uint64_t win_arrived_mark;
};

/*
 * Set up a service; takes ownership of src (destroyed on failure too).
 * Returns 0 or -ENOMEM.
 */
int service_init(struct service *s, uint32_t index, const struct service_cfg *cfg,
                 struct engine *eng, struct cluster *cl, struct arrival_source *src, uint64_t seed);
void service_release(struct service *s);

/*
 * Add a replica running as tenant tid (already placed on its card); its index
 * goes to *ri (may be NULL). A replica that is not `ready` holds its card but
 * serves only after service_replica_up() (pod start + model load). Returns 0
 * or -ENOMEM.
 */
int service_add_replica(struct service *s, uint32_t tid, bool ready, uint32_t *ri);

/*
 * The same for a replica on several tenants (an LLM replica's tensor-parallel
 * cards, tids[0] its first); the batch kind takes n = 1 only (-EINVAL else).
 * -ENOSPC when an LLM replica does not fit the memory it was placed on.
 */
int service_add_replica_gang(struct service *s, const uint32_t *tids, uint32_t n, bool ready,
                             uint32_t *ri);

/*
 * Take replica ri out of service: an idle or starting replica leaves its card
 * now; a busy one finishes its batch first (draining). Returns 0, or -EINVAL
 * if it is already gone or draining.
 */
int service_remove_replica(struct service *s, uint32_t ri);

/*
 * A replica to remove, or UINT32_MAX if none. Node-compact: the replica on
 * the node with the fewest occupied cards, then on the card with the fewest
 * tenants, so that scale-downs hand back whole nodes (the Kubernetes
 * ReplicaSet controller's default ranks the other way, spreading; a platform
 * team gets this order with controller.kubernetes.io/pod-deletion-cost set
 * from node occupancy). Among equals: idle first (one reserved for a batch
 * not yet begun counts as idle; the most recently idle first), then starting
 * or down, then busy (it drains its batch).
 */
uint32_t service_pick_victim(const struct service *s);

/* The card changed the replica's speed: re-plan its running batch. */
void service_on_speed(struct service *s, uint32_t replica);

/*
 * A fatal fault killed replica ri: its running batch is lost (the requests
 * count as failed) and it serves nothing until service_replica_up(). A
 * draining replica (service_remove_replica on a busy one) leaves its card at
 * once instead (gone). No-op on a replica already down.
 */
void service_replica_down(struct service *s, uint32_t replica);
void service_replica_up(struct service *s, uint32_t replica);

/* Replicas serving or starting (not draining, not gone). */
static inline uint32_t service_replicas(const struct service *s)
{
    return s->live_reps;
}

/* Requests waiting (arrived, not started) at the last update. */
static inline uint64_t service_waiting(const struct service *s)
{
    return s->narrived;
}

/* Pull arrivals up to now (so counters are current) without starting batches. */
void service_sync(struct service *s);

/*
 * Serving capacity at the SLO now, req/s: over the live replicas (not down,
 * not draining), each one's throughput with the largest batch (<= max_batch)
 * whose service time at the replica's speed — its card share in its last
 * batch (1 before the first), its MIG slice's fixed-cost factor — fits
 * within the SLO target. Time-slice
 * waits and queueing are left out: an upper bound at the SLO, the figure
 * "headroom" divides by the load.
 */
double service_capacity_rps(const struct service *s);

/* Start a new interval: merge the window histogram into the total and clear it. */
void service_reset_interval(struct service *s);

#endif
