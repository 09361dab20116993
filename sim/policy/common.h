/*
 * common.h — pieces several policies share: a job queue, the per-service
 * autoscaler loop (Kubernetes HPA, sim/autoscale.h) and placement helpers.
 * Everything acts through the cluster API of sim/sim.h.
 */
#ifndef TIDESIM_POLICY_COMMON_H
#define TIDESIM_POLICY_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/autoscale.h"
#include "sim/sim.h"

/* A queue of job indices in arrival order (FIFO), with removal anywhere. */
struct jobq {
    uint32_t *v;
    uint32_t n, cap;
};

int jobq_push(struct jobq *q, uint32_t job);
/* Remove the entry at position i, keeping the order. */
void jobq_remove_at(struct jobq *q, uint32_t i);
/* Insert job keeping the queue sorted by job index (= submission order). Returns 0 or -ENOMEM. */
int jobq_insert_sorted(struct jobq *q, uint32_t job);

/*
 * Queue job j of a policy's queue q (sorted: in job order, jobq_insert_sorted), or, when
 * memory runs out, stop the run (sim_fail_oom: "out of memory queueing a training job"):
 * never a job rejected or dropped for it. Whether it was queued.
 */
bool pol_queue_job(struct sim *s, struct jobq *q, uint32_t j, bool sorted);

/*
 * Append the admission delay d (s) to a queue's list v[0..*n) of *cap, grown as needed, or,
 * when memory runs out, stop the run (sim_fail_oom): a delay not kept would change the
 * queue's figures (kueue's ClusterQueues, kai's queues).
 */
void pol_keep_delay(struct sim *s, double **v, size_t *n, size_t *cap, double d);
/* Remove job (if present). Returns true if it was there. */
bool jobq_remove(struct jobq *q, uint32_t job);
void jobq_release(struct jobq *q);

/*
 * Requests/s one replica of svc serves at 100 % busy on a full card, with full
 * batches: max_batch / (a + b·max_batch).
 */
double pol_replica_capacity(const struct service_cfg *c);

/*
 * Pick the cards for a new replica of svc: its pol_gang_size() cards, all of
 * one node, into cards[] (room for LLM_MAX_TP); returns how many (the gang
 * size), or 0 when there are none (the scale-up waits).
 */
typedef uint32_t (*pol_pick_fn)(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards);
/* A card was given back by a scale-down (the policy may backfill it). */
typedef void (*pol_freed_fn)(struct sim *s, void *ctx, uint32_t gpu);

/*
 * One HPA per service, fed every sample interval with two metrics, the larger
 * recommendation winning (HPA's multi-metric rule): the interval's arrival rate
 * over the per-replica capacity, and the replicas' measured busy time (which
 * also sees replicas slowed by a shared card or a MIG slice).
 */
struct pol_scaler {
    struct autoscale *as; /* one per service */
    uint32_t n;
    uint64_t scale_ups, scale_downs, blocked; /* replicas started / stopped / not placed */
};

/*
 * Set up an autoscaler per service from the scenario's policy.autoscale block
 * (min/max from the service's replicas {min, max} when given; initial = the
 * replicas placed at start). Returns 0 or -ENOMEM.
 */
int pol_scaler_init(struct pol_scaler *ps, struct sim *s, const uint32_t *initial);

/*
 * Replicas an elastic policy starts service i with: the service's fixed
 * count, else what its HPA wants at the first interval's mean rate
 * (s->first_rate) — a cluster that was running before t = 0, not a cold
 * start at the HPA minimum against full load.
 */
uint32_t pol_initial_replicas(const struct sim *s, uint32_t i);
void pol_scaler_release(struct pol_scaler *ps);

/*
 * Feed each service's rate over the interval that just closed, and act on the
 * HPA's answer: start replicas on cards from pick (with the scale-up delay),
 * or stop replicas (idle ones first) and report freed cards. Call from on_tick.
 * `forecast_rate` (may be NULL) overrides the observed rate per service (for
 * policies that scale ahead of the load).
 */
void pol_scaler_tick(struct pol_scaler *ps, struct sim *s, const double *forecast_rate,
                     pol_pick_fn pick, pol_freed_fn freed, void *ctx);

/*
 * pol_pick_fn for whole-card inference, node-compact: a free card (no tenant,
 * not re-laid out) on the node that already holds the most cards of inference,
 * then on the node with the fewest free cards (best fit), then the lowest
 * node; the node's lowest free card. UINT32_MAX when no card is free. ctx and
 * svc are unused. With sim_stop_replica's node-compact victims, inference
 * stays on as few nodes as it needs and whole nodes stay free for gangs.
 */
uint32_t pol_pick_compact(struct sim *s, void *ctx, uint32_t svc);

/* Cards of node n holding an inference tenant. */
uint32_t pol_node_inference_cards(const struct cluster *cl, uint32_t n);

/*
 * Split n replicas over the services in proportion to their peak arrival rate
 * (sized for peak), at least one each; out has one entry per service.
 */
void pol_split_by_peak(const struct sim *s, uint32_t n, uint32_t *out);

/*
 * Place every service's initial replicas: its `replicas` count when given, the
 * rest of policy.inference_gpus split over the other services in proportion to
 * their peak rate; each on the card pick() returns. Returns 0, -ENOSPC when
 * pick finds no card, or the placement's error.
 */
int pol_place_initial(struct sim *s, pol_pick_fn pick, void *ctx);

/* Arrival rate of service i over the sample interval just closed (req/s). */
double pol_interval_rate(const struct sim *s, uint32_t i);

/* Cards one replica of svc holds: its tensor-parallel degree (LLM), else 1. */
uint32_t pol_gang_size(const struct sim *s, uint32_t svc);

/* Whether a replica of svc can start on whole card g: g free, and its node has the gang's cards. */
bool pol_gang_fits(const struct sim *s, uint32_t svc, uint32_t g);

/*
 * Tensor-parallel replicas (sim/policy/common_tp.c). A replica of svc holds
 * pol_gang_size() cards of one node; the policies choose all of them and
 * start it with sim_start_replica_on.
 *
 * pol_gang_around: card g and the next cards of its node (in index order)
 * that take the replica's tenant (cluster_can_place), into cards; returns the
 * gang size, or 0 when the node has too few. The rule sim_start_replica
 * applies, for policies that choose only the first card.
 */
uint32_t pol_gang_around(const struct sim *s, uint32_t svc, uint32_t g, uint32_t *cards);

/*
 * pol_pick_gang_masked: the gang of a new replica of svc on free cards (no
 * tenant, not re-laid out) that ok[] allows (NULL: all), node-compact as
 * pol_pick_compact: the node holding the most inference cards, then the
 * fewest allowed free cards (best fit), then the lowest; its lowest allowed
 * free cards. Returns the gang size, or 0. With a gang of 1 it picks the card
 * pol_pick_compact picks. pol_pick_gang is the pol_pick_fn (ok all, ctx unused).
 */
uint32_t pol_pick_gang_masked(const struct sim *s, uint32_t svc, const bool *ok, uint32_t *cards);
uint32_t pol_pick_gang(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards);

/*
 * Holds: cards reserved for a replica being assembled (a tensor-parallel
 * replica waits for n cards of one node to come free). One owner per card
 * (the policy's id: a service, a workload); training is not placed on a held
 * card (pol_find_gang_masked with pol_holds_mask). pol_holds_init allocates
 * (0 or -ENOMEM); pol_holds_release frees. pol_holds_mask(h, owner) fills and
 * returns h->ok: the cards free of holds or held for owner (UINT32_MAX: for
 * no one); valid until the next call.
 */
struct pol_holds {
    uint32_t *owner; /* per card: owner + 1, 0 = not held */
    bool *ok;        /* scratch for pol_holds_mask */
    uint32_t n;      /* cards held */
    uint32_t ngpus;
};
int pol_holds_init(struct pol_holds *h, uint32_t ngpus);
void pol_holds_release(struct pol_holds *h);
void pol_hold(struct pol_holds *h, uint32_t g, uint32_t owner);
void pol_unhold(struct pol_holds *h, uint32_t g);
void pol_unhold_owner(struct pol_holds *h, uint32_t owner);
uint32_t pol_held_count(const struct pol_holds *h, uint32_t owner);
const bool *pol_holds_mask(struct pol_holds *h, uint32_t owner);
/*
 * A tensor-parallel replica of svc (its holds owner id = svc): the cards held
 * for it when they make a gang, else a gang among the cards not held for
 * others (pol_pick_gang_masked). The number of cards, 0 when none.
 */
uint32_t pol_pick_gang_held(const struct sim *s, struct pol_holds *h, uint32_t svc,
                            uint32_t *cards);

/*
 * cluster_find_gang restricted to the cards ok[] allows (NULL: all, exactly
 * cluster_find_gang): one node, best fit, when count fits a node, else whole
 * allowed free nodes. 0 and out[0..count), or -ENOSPC.
 */
int pol_find_gang_masked(const struct cluster *c, const bool *ok, uint32_t count, uint32_t *out);
/*
 * The cards for training job j: sim_find_gang (its preferred pools first, then
 * any pool it may use) restricted to the cards ok[] allows (NULL: exactly
 * sim_find_gang). 0 and out[0..spec.gpus), or -ENOSPC.
 */
int pol_find_job_gang(const struct sim *s, uint32_t j, const bool *ok, uint32_t *out);

/*
 * What a training job costs to take away for a replica: < 0 it may not be
 * taken, 0 it is leaving anyway (its cards come free without a decision),
 * else the cost (the policy's unit: GPUs, work lost).
 */
typedef int64_t (*pol_job_cost_fn)(void *ctx, uint32_t job);

/*
 * pol_plan_room: can node host n cards of a replica, counting what can be
 * freed? Free cards ok[] allows (NULL: all) first, then, greedily, the
 * allowed card whose training tenants not yet chosen free the most missing
 * cards per unit of cost (then the fewest jobs, then the lowest card): a
 * 4-GPU job on 4 cards beats four 1-GPU jobs, one 1-GPU job beats the 4-GPU
 * job when one card is missing. A card with a replica, or a job cost
 * refuses, cannot be freed; every card whose tenants are all chosen comes
 * free with them. Returns the jobs to take away (cost > 0)
 * into jobs[] (room for per_node × (CARD_MAX_TENANTS + 1)), the n cards into
 * cards[] and the summed cost into *total; UINT32_MAX when the node cannot
 * host the replica (or out of memory).
 */
uint32_t pol_plan_room(const struct sim *s, uint32_t node, uint32_t n, const bool *ok,
                       pol_job_cost_fn cost, void *ctx, uint32_t *jobs, uint32_t *cards,
                       int64_t *total);
/*
 * pol_plan_best_for: where to gather a replica of service svc (pol_gang_size cards): the node
 * whose plan costs least (then fewer jobs, then the lowest node); its jobs and cards as above,
 * their count in *njobs. Under pool constraints (cluster.pools, require/prefer) the nodes of
 * the pools it prefers first, then those of any pool it may use: never a node its placement
 * would refuse. Returns the node or UINT32_MAX.
 */
uint32_t pol_plan_best_for(const struct sim *s, uint32_t svc, const bool *ok, pol_job_cost_fn cost,
                           void *ctx, uint32_t *jobs, uint32_t *cards, uint32_t *njobs);

/*
 * Pools in cards with a tensor-parallel service. pol_any_tp: some service's
 * replicas hold several cards. pol_peak_cards: the cards service i needs at
 * its peak rate at the HPA's target (policy.autoscale.target, 0.7 when not
 * given): ceil(peak / (capacity × target)), at least 1, × its cards per
 * replica. pol_split_by_need: a pool of `cards` split over the services in
 * proportion to those needs, in replicas (floor of its share / cards per
 * replica, at least one each; cards left go a replica at a time to the
 * service furthest below its share). A split by peak rate (pol_split_by_peak)
 * would give a 70B service on 4 cards a fraction of one replica beside an 8B
 * chat; without a tensor-parallel service the policies keep that split.
 */
bool pol_any_tp(const struct sim *s);
double pol_peak_cards(const struct sim *s, uint32_t i);
void pol_split_by_need(const struct sim *s, uint32_t cards, uint32_t *out);

/*
 * What service i's HPA observes this interval, as a request rate against its
 * capacity (a->cfg): the larger of `rate` and the busy-time equivalent; for
 * an LLM service that scales on tokens/s or KV occupancy (llm.autoscale),
 * the rate that makes the HPA's ratio metric / target.
 */
double pol_hpa_load(const struct sim *s, uint32_t i, const struct autoscale *a, double rate);

/*
 * Start as many queued jobs as fit, in queue order, on whole free cards (gang
 * on one node when it fits, else whole nodes). strict: the head blocks the
 * rest (StrictFIFO); otherwise later jobs may start (BestEffortFIFO). Jobs
 * larger than max_gpus are rejected. Returns the number started.
 */
uint32_t pol_start_whole(struct sim *s, struct jobq *q, bool strict, uint32_t max_gpus);
/* The same on the cards ok[] allows only (NULL: all; pol_find_gang_masked). */
uint32_t pol_start_whole_masked(struct sim *s, struct jobq *q, bool strict, uint32_t max_gpus,
                                const bool *ok);

/*
 * The skeleton of a policy that keeps training in a FIFO started by its own
 * `pass` and (optionally) autoscales inference: embed it FIRST in the
 * policy's state so the pol_fifo_on_* callbacks can be used as its ops.
 */
struct pol_fifo {
    struct jobq q;
    struct pol_scaler ps;
    bool scaling;   /* ps is in use (policy.autoscale) */
    uint32_t *gang; /* cards chosen for a start, one per GPU of the cluster */
    bool in_start, again;
    /* One pass over q starting what fits (BestEffortFIFO). */
    void (*pass)(struct sim *s, struct pol_fifo *f);
    /* Could job j ever run here? (NULL: yes) Jobs that never can are rejected. */
    bool (*can_fit)(struct sim *s, struct pol_fifo *f, uint32_t j);
    pol_pick_fn pick; /* card for a new replica; its ctx is the pol_fifo */
};

/* Run pass until nothing more starts (re-entrant calls from callbacks just ask for another pass).
 */
void pol_fifo_start(struct sim *s, struct pol_fifo *f);
void pol_fifo_release(struct pol_fifo *f);
void pol_fifo_on_submit(struct sim *s, void *state, uint32_t j);
void pol_fifo_on_finish(struct sim *s, void *state, uint32_t j);
void pol_fifo_on_requeue(struct sim *s, void *state, uint32_t j);
void pol_fifo_on_tick(struct sim *s, void *state);

/*
 * policy.manifests: one path or a list of them (the scalars of mf, in order)
 * into *paths (calloc'd, the caller frees; the strings point into the
 * scenario document). 0, -ENOMEM, or a file:line:col error in err.
 */
int pol_manifest_paths(const struct conf_doc *d, const struct conf_node *mf, const char ***paths,
                       uint32_t *n, struct conf_err *err);

/*
 * MIG instances (sim/policy/common.c), shared by mig-static and kueue:
 *
 * pol_mig_slot_free: can card gpu, which has no MIG instances, take one more tenant of mem GiB
 * (a free slot, and the memory of its tenants plus mem fits the card)?
 *
 * pol_mig_smallest_free: the smallest free instance of card gpu that holds mem GiB (of the
 * profile named want when not NULL): its memory in MiB into *mib and its index, or -1. A card
 * without instances is one instance (index MIG_MAX_INSTANCES) of the card's memory / slots,
 * for a replica that names no profile.
 *
 * pol_mig_card: the card for a replica of svc whose smallest fitting free instance (of want)
 * is the smallest, among the cards its placement constraints and ok(s, ctx, g) (NULL: all)
 * allow, on the pools the service prefers first; ties: the lowest index. UINT32_MAX if none.
 *
 * pol_mig_profile_for: the instance profile one replica of svc takes on MIG pool `pool` — the
 * service's mig_profile when the pool's layout has it, else the smallest (memory) profile of
 * the pool's layout that holds the service's memory; NULL when none does or the pool is not
 * MIG. The layout is that of the pool's first card (a pool has one layout).
 *
 * pol_mig_count: how many instances of profile p the cards of pool `pool` have.
 */
bool pol_mig_slot_free(const struct cluster *c, uint32_t gpu, double mem);
int pol_mig_smallest_free(const struct cluster *c, uint32_t gpu, const char *want, double mem,
                          int *mib);
uint32_t pol_mig_card(struct sim *s, uint32_t svc, const char *want,
                      bool (*ok)(const struct sim *, void *, uint32_t), void *ctx);
const struct mig_profile *pol_mig_profile_for(const struct sim *s, uint32_t svc, uint32_t pool);
uint32_t pol_mig_count(const struct cluster *c, uint32_t pool, const struct mig_profile *p);

#endif
