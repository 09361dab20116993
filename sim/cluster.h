/*
 * cluster.h — the cards of the cluster, their tenants, sharing, and time accounting.
 *
 * A cluster is nodes of cards, numbered node-major (node n holds cards
 * [node_first[n], node_first[n + 1]); the nodes of one pool all have its
 * gpus_per_node cards, pools may differ), in one sharing mode (models/share.h;
 * a pool may take whole cards instead):
 *   exclusive  one tenant per card (nvidia.com/gpu: 1);
 *   timeslice  up to `slots` tenants per card (device-plugin replicas);
 *   mps        up to `slots` clients per card (<= 48);
 *   mig        the card's layout cut into instances, one tenant per instance.
 *
 * A tenant is an inference replica or one member of a training gang. The
 * cluster owns the tenants (stable ids until removed) and asks the sharing
 * model how fast each active tenant runs whenever the set of active tenants on
 * a card changes; tenants whose speed changed are reported through the
 * on_speed callback so their owner re-plans (SimGrid's "next occurring event").
 * Exclusive and MIG speeds never change while a tenant runs.
 *
 * Time accounting: every card splits its time, lazily, into the use states
 * below plus "free" (no tenant): useful training + inference + checkpoint +
 * restore + recompute + overhead + reconfiguring + idle + free = elapsed, for
 * every card. Useful = useful training + inference. Busy is
 * everything but idle and free; allocated is the card share handed to tenants
 * (1 for a card with any tenant, the instances' compute slices / 7 under MIG).
 * Useful counts delivered work at full-card speed: a time-sliced card running
 * two tenants is (1 − overhead) useful and `overhead` switch loss; MPS
 * interference and the SMs MIG leaves unused count as overhead.
 *
 * The cluster refuses impossible actions (a full card, a MIG instance too
 * small for the tenant's memory, re-layout of a card with tenants, an invalid
 * layout) with a negative code and leaves its state unchanged.
 */
#ifndef TIDESIM_CLUSTER_H
#define TIDESIM_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "models/gpu.h"
#include "models/mig.h"
#include "models/share.h"
#include "sim/core/evq.h"
#include "sim/core/simtime.h"
#include "sim/pool_cfg.h"

enum use_state {
    USE_USEFUL,    /* training work that counts */
    USE_INFER,     /* serving inference batches (useful) */
    USE_CKPT,      /* saving a checkpoint */
    USE_RESTORE,   /* loading a checkpoint, warming up */
    USE_RECOMPUTE, /* redoing work lost to a preemption or fault */
    USE_OVERHEAD,  /* context switches, MPS interference, SMs MIG leaves unused */
    USE_RECONFIG,  /* MIG re-layout: the card serves nothing */
    USE_IDLE,      /* allocated, not computing */
    USE_NSTATES
};

const char *use_state_name(enum use_state s);

enum tenant_kind { TENANT_INFER, TENANT_TRAIN };

#define TENANT_NONE UINT32_MAX

/* Most tenants one card holds (time-slicing replicas <= 64, MPS <= 48, MIG <= 7). */
#define CARD_MAX_TENANTS 64

struct tenant {
    enum tenant_kind kind;
    uint32_t gpu;
    uint32_t owner;       /* service index or job index */
    uint32_t member;      /* replica index or gang member index */
    int instance;         /* MIG instance on the card, -1 otherwise */
    enum use_state state; /* what it does while active */
    struct share_tenant st;
    double speed;               /* current effective speed, fraction of a full card */
    double cap;                 /* gang rate: work counted useful is at most this (< 0: none) */
    uint32_t gen;               /* bumped when the id is reused */
    struct evq_handle fault_ev; /* its pending fatal fault (sim/sim.c); zero when none */
    double base_cap;            /* MPS: its own thread-percentage cap (sm_cap before priority) */
    double fraction;            /* card fraction it asked for; 0 = one slot */
    /* Time-slicing batch (cluster_ts_begin): its speed is fixed at work/latency and the
     * card's other tenants lose ts_rate of card time per unit of time until it ends. */
    bool ts_batch;
    double ts_rate;
    sim_time ts_end_at;     /* when the batch is due to end */
    double ts_end_offset_s; /* time it will have used of its last slice then */
    sim_time ts_idle_at;    /* when its context last went idle; < 0 unknown */
    double ts_offset_s;     /* time used of its current slice when it went idle */
    uint32_t next_free;
    bool used;
};

struct card {
    uint32_t node;
    uint32_t pool; /* index in cluster.pools */
    uint32_t *ten; /* tenant ids on this card, in allocation order */
    uint32_t nten, cap_ten;
    struct mig_layout layout;                /* MIG only */
    uint32_t inst_tenant[MIG_MAX_INSTANCES]; /* tenant on each instance or TENANT_NONE */
    bool reconfiguring;
    double rate[USE_NSTATES]; /* current fractions of card time per state */
    double alloc_rate;        /* current allocated fraction */
    int single;    /* the one state at rate 1 with alloc_rate 1 (fast accounting), or -1 */
    sim_time last; /* time of the last accounting */
    /* A deferred activation (cluster_defer_active): at pend_at the card's one
     * tenant turns active in pend_state; SIM_TIME_MAX when none. */
    sim_time pend_at;
    int pend_state;
    uint32_t ninfer;    /* inference tenants on the card (inference priority) */
    double ts_carry_us; /* time-slicing debt its trainers could not pay yet (cluster_ts_begin) */
    double acc[USE_NSTATES], alloc_us;   /* µs since t = 0 */
    double iacc[USE_NSTATES], ialloc_us; /* µs in the current sample interval */
};

/*
 * Inference priority (issue 12; policies `timeslice` and `mps` with
 * `share: inference-priority`): while a card holds an inference tenant, its
 * training tenants are held back — under MPS their thread-percentage cap is
 * lowered to train_cap, under time-slicing their slice is train_slice_s and
 * the inference tenants' infer_slice_s (0 = the card's). Off: the device
 * plugin's equal share (every tenant its own static cap, equal slices).
 */
struct share_prio {
    bool on;
    double train_cap;     /* (0, 1] */
    double train_slice_s; /* > 0 */
    double infer_slice_s; /* >= 0 */
};

/* A tenant's speed changed (only under timeslice/MPS sharing). */
typedef void (*cluster_speed_fn)(void *ctx, uint32_t tenant);

/*
 * A node pool as the cluster sees it (sim/pool_cfg.h): nodes [first_node,
 * first_node + nodes) and cards [first_gpu, first_gpu + ngpus) of one board.
 * Its speeds scale what runs on it (a training member's work rate, an
 * inference batch's time) relative to the reference board (A100 = 1); the
 * sharing models' speeds stay fractions of the card. Strings and labels are
 * borrowed from the scenario.
 */
struct cluster_pool {
    const char *name;
    const struct gpu_spec *spec;
    uint32_t first_node, nodes, first_gpu, ngpus;
    double train_speed, infer_speed;
    double mem_gib; /* card memory of its board */
    const struct pool_label *labels;
    uint32_t nlabels;
    /* How its cards are shared: the cluster's mode, or SHARE_EXCLUSIVE for a pool of whole
     * cards (`sharing: none`: MIG off, one tenant per card); its tenants per card (slots);
     * under MIG the speeds of its board's profiles. */
    enum share_mode mode;
    uint32_t slots;
    struct mig_knobs mig;
};

struct cluster {
    struct card *cards;
    uint32_t ngpus, nodes, per_node; /* per_node: the largest node's cards */
    uint32_t *node_first;            /* nodes + 1 entries: node n's first card, then the end */
    uint32_t free_cards;             /* cards with no tenant and not reconfiguring */
    uint32_t *node_free;             /* such cards per node */
    enum share_mode mode; /* the cluster's mode; a pool may take whole cards (pools[].mode) */
    uint32_t slots;       /* tenants per card: 1, timeslice/MPS replicas (the most of any
                             pool's: each card's own is cluster_card_slots) */
    const struct gpu_spec *spec; /* the first pool's board (each card's: cluster_card_spec) */
    struct share_knobs knobs;
    struct mig_knobs mig;
    double mem_gib;       /* card memory (the smallest of the pools': what policies pack to) */
    double mps_limit_gib; /* MPS pinned memory limit per client, 0 = card / slots */
    /* Time-slicing memory quotas (cluster.timeSlicing.memory_quota: enforced, HAMi-style):
     * each tenant is limited to the memory it asked for (tenant_req.mem_quota_gib, else
     * mem_gib). Off: the device plugin, which does not isolate memory. */
    bool mem_quota;
    struct share_prio prio;
    struct cluster_pool *pools; /* owned; one pool "default" unless cluster_set_pools */
    uint32_t npools;
    struct tenant *tenants;
    uint32_t ntenants, cap_tenants, free_tenant; /* free list, 1-based; 0 = none */
    uint32_t live_tenants;
    cluster_speed_fn on_speed; /* a tenant's speed changed (timeslice/MPS) */
    cluster_speed_fn on_place; /* a tenant was placed (for fault draws) */
    cluster_speed_fn on_leave; /* a tenant is about to leave its card (its id still valid) */
    /* A placement's memory overflow OOM-killed this card-mate (time-slicing without quotas,
     * share_oom): the owner must take it off the card; cluster_place does not remove it. */
    cluster_speed_fn on_oom;
    void *cb_ctx;
    /* scratch for share_speeds */
    struct share_tenant *scratch;
    double *speeds;
    uint32_t *changed;
};

/*
 * Set up the cards. mode/slots/knobs as above; layout (MIG only) is the text
 * of every card's initial layout (NULL or "" = no instances). Returns 0,
 * -ENOMEM, or -EINVAL (invalid layout: err filled).
 */
int cluster_init(struct cluster *c, uint32_t nodes, uint32_t per_node, const struct gpu_spec *spec,
                 enum share_mode mode, uint32_t slots, const struct share_knobs *knobs,
                 const struct mig_knobs *mig, const char *layout, char *err, size_t errlen);
void cluster_release(struct cluster *c);

/*
 * Split the cards into the scenario's pools (in order, whole nodes each; the
 * scenario checked that their nodes add up to the cluster's), each node with
 * its pool's gpus_per_node cards (the cards are laid out again when the sizes
 * differ from cluster_init's), and give each pool its own sharing settings
 * (pool_cfg.whole, slots, mig_layout, mig; unset: the cluster's). Call it on
 * empty cards. The cluster borrows names and labels. Returns 0, -EINVAL
 * (nodes or node size do not match, an invalid layout: nothing changed) or
 * -ENOMEM.
 */
int cluster_set_pools(struct cluster *c, const struct pool_cfg *pools, uint32_t n);

/* How card g is shared: its pool's mode (the cluster's, or exclusive for whole cards). */
static inline enum share_mode cluster_card_mode(const struct cluster *c, uint32_t g)
{
    return c->pools[c->cards[g].pool].mode;
}

/* Tenants card g holds at most (1 for whole cards, the pool's replicas, MIG: 7). */
static inline uint32_t cluster_card_slots(const struct cluster *c, uint32_t g)
{
    return c->pools[c->cards[g].pool].slots;
}

/* Board of card g (its MIG profile table). */
static inline const struct gpu_spec *cluster_card_spec(const struct cluster *c, uint32_t g)
{
    return c->pools[c->cards[g].pool].spec;
}

/* MIG speeds of card g's board. */
static inline const struct mig_knobs *cluster_card_mig(const struct cluster *c, uint32_t g)
{
    return &c->pools[c->cards[g].pool].mig;
}

/* Node n's cards: [cluster_node_first, cluster_node_end), cluster_node_cards of them. */
static inline uint32_t cluster_node_first(const struct cluster *c, uint32_t n)
{
    return c->node_first[n];
}
static inline uint32_t cluster_node_end(const struct cluster *c, uint32_t n)
{
    return c->node_first[n + 1];
}
static inline uint32_t cluster_node_cards(const struct cluster *c, uint32_t n)
{
    return c->node_first[n + 1] - c->node_first[n];
}

/* Pool of card g / of node n (index into c->pools). */
static inline uint32_t cluster_pool_of_card(const struct cluster *c, uint32_t g)
{
    return c->cards[g].pool;
}
static inline uint32_t cluster_pool_of_node(const struct cluster *c, uint32_t n)
{
    return c->cards[c->node_first[n]].pool;
}

/* Board of node n (models/gpu.h). */
static inline const struct gpu_spec *cluster_board_of_node(const struct cluster *c, uint32_t n)
{
    return c->pools[cluster_pool_of_node(c, n)].spec;
}

/* Value of node n's label `key`, or NULL when the node does not carry it. */
const char *cluster_node_label(const struct cluster *c, uint32_t n, const char *key);

/* Whether card g is in one of the pools of mask (bit i = pool i). */
static inline bool cluster_card_in(const struct cluster *c, uint32_t g, uint64_t mask)
{
    return (mask >> c->cards[g].pool) & 1u;
}

/* Speed of card g's board relative to the reference board, for training / inference. */
static inline double cluster_card_train_speed(const struct cluster *c, uint32_t g)
{
    return c->pools[c->cards[g].pool].train_speed;
}
static inline double cluster_card_infer_speed(const struct cluster *c, uint32_t g)
{
    return c->pools[c->cards[g].pool].infer_speed;
}

/* Bring card g's accounting up to now. */
void cluster_account(struct card *g, sim_time now);

/* Bring every card up to now; start a new interval (zero the interval totals). */
void cluster_account_all(struct cluster *c, sim_time now);
void cluster_reset_interval(struct cluster *c);

/* What a tenant needs from a card. */
struct tenant_req {
    enum tenant_kind kind;
    uint32_t owner, member;
    double mem_gib;          /* memory it allocates */
    double mem_quota_gib;    /* memory it asked for (its quota when enforced); 0 = mem_gib */
    double fraction;         /* card fraction it asked for, (0, 1]; 0 = one slot (1 / slots) */
    double sm_cap;           /* MPS active thread percentage / 100 (1 = uncapped) */
    double demand;           /* fraction of the SMs its kernels fill alone, (0, 1]; 0 = 1 */
    const char *mig_profile; /* MIG: instance profile wanted (NULL = any free instance) */
};

/*
 * Would card `gpu` take this tenant now? 0 if yes; -EBUSY (no free slot or
 * instance of that profile, reconfiguring), -ENOSPC (MIG instance memory too
 * small), -EINVAL (bad card). Nothing changes.
 */
int cluster_can_place(const struct cluster *c, uint32_t gpu, const struct tenant_req *r);

/*
 * Place a tenant (idle, not active) and return its id in *tid. Returns 0;
 * 1 when placed but immediately OOM-killed (time-slicing/MPS memory: no
 * isolation, over its pinned limit or its enforced quota; the tenant is
 * already removed, *tid untouched); or the refusal of cluster_can_place
 * (nothing changed). Under time-slicing without quotas a tenant over its
 * request whose excess overflows the card kills its card-mates instead
 * (share_oom): it is placed (returns 0) and on_oom is called for each of
 * them, after on_place; they stay on the card until their owner removes them.
 */
int cluster_place(struct cluster *c, uint32_t gpu, sim_time now, const struct tenant_req *r,
                  uint32_t *tid);

/* Remove a tenant (on_leave is called first). -EINVAL for a stale id, nothing changed. */
int cluster_remove(struct cluster *c, uint32_t tid, sim_time now);

void cluster_set_active_slow(struct cluster *c, uint32_t tid, sim_time now, bool active,
                             enum use_state state);

/* Mark a tenant active in a state, or idle (active = false); re-plans the card. */
static inline void cluster_set_active(struct cluster *c, uint32_t tid, sim_time now, bool active,
                                      enum use_state state)
{
    struct tenant *t = &c->tenants[tid];
    struct card *g = &c->cards[t->gpu];
    if (c->pools[g->pool].mode == SHARE_EXCLUSIVE && t->cap < 0 && g->single >= 0) {
        /* Fast path (inline: twice per batch): one tenant, the card wholly in one state. */
        cluster_account(g, now);
        g->pend_at = SIM_TIME_MAX; /* an explicit change overrides a deferred one */
        g->rate[g->single] = 0;
        t->st.active = active;
        t->state = state;
        t->speed = active ? 1.0 : 0.0;
        g->single = active ? (int)state : USE_IDLE;
        g->rate[g->single] = 1;
        return;
    }
    cluster_set_active_slow(c, tid, now, active, state);
}

/*
 * Exclusive cards only: tenant tid (idle) turns active in `state` at time
 * `at` (> now), without an event: the card's accounting switches state when
 * it passes `at`. The tenant reads as active from now on (it is committed to
 * work that starts at `at`); until then the card counts as idle. Returns
 * false, changing nothing, when the card is not on the exclusive fast path
 * (sharing, MIG, a capped tenant) or already has a deferred activation.
 */
bool cluster_defer_active(struct cluster *c, uint32_t tid, sim_time at, enum use_state state);

/* Take back a deferred activation that has not begun (its time is still ahead). */
void cluster_cancel_deferred(struct cluster *c, uint32_t tid);

/*
 * A gang member whose gang runs slower than its card lets it (it waits for the
 * slowest member at every step): count at most `cap` of its speed as work and
 * the rest as idle. cap < 0 removes the limit. Speeds do not change.
 */
void cluster_set_cap(struct cluster *c, uint32_t tid, sim_time now, double cap);

/*
 * Time-slicing: tenant tid (idle or active) begins an inference batch of
 * work_us µs at full-card speed now. It turns active in USE_INFER; the batch's
 * latency (ready to done) comes from share_ts_batch() with the card's other
 * active tenants, the time since its context went idle and the slice offset it
 * left at; its speed is fixed at work/latency until cluster_ts_end (or until
 * it goes idle or leaves), and the other tenants pay the batch's debt over it
 * (what they cannot pay — a batch shorter than its debt — is carried to the
 * card's next batch). Returns the latency in µs (>= 1). Other modes: just
 * makes it active and returns work / its speed.
 */
double cluster_ts_begin(struct cluster *c, uint32_t tid, sim_time now, double work_us);

/* The batch ended (it also ends when the tenant goes idle or leaves); re-plans the card. */
void cluster_ts_end(struct cluster *c, uint32_t tid, sim_time now);

/* Set the inference-priority rule and apply it to every card (caps and slices). */
void cluster_set_prio(struct cluster *c, const struct share_prio *p, sim_time now);

/* The memory a tenant asked for (what a scheduler sums), GiB: its quota, else what it allocates. */
static inline double tenant_mem_request(const struct tenant *t)
{
    return t->st.mem_quota_gib > 0 ? t->st.mem_quota_gib : t->st.mem_gib;
}

/* The card share a tenant asked for: its fraction, else one slot of its card (1 / slots). */
static inline double tenant_units(const struct cluster *c, const struct tenant *t)
{
    return t->fraction > 0 ? t->fraction : 1.0 / cluster_card_slots(c, t->gpu);
}

static inline double cluster_tenant_speed(const struct cluster *c, uint32_t tid)
{
    return c->tenants[tid].speed;
}

/* Active tenants on the tenant's card other than itself. */
uint32_t cluster_others_active(const struct cluster *c, uint32_t tid);

/*
 * Blast radius of a fatal fault in tenant tid: the ids of the tenants that die
 * (itself included) into out (room for the card's tenants). Returns the count.
 */
uint32_t cluster_fault_victims(const struct cluster *c, uint32_t tid, uint32_t *out);

/*
 * Begin a MIG re-layout of an empty card: -EBUSY if it has tenants or is
 * reconfiguring, -EINVAL (err filled) if the layout is invalid, -ENOTSUP if
 * not in MIG mode. On success the card is out of service (USE_RECONFIG) until
 * cluster_relayout_done() is called (the caller schedules it after
 * mig_reconfig_seconds()).
 */
int cluster_relayout_begin(struct cluster *c, uint32_t gpu, sim_time now, const char *layout,
                           char *err, size_t errlen);
void cluster_relayout_done(struct cluster *c, uint32_t gpu, sim_time now);

/*
 * Cards with no tenant (and not reconfiguring), for whole-card gang placement:
 * on one node, the one with the fewest free cards that holds count; else, for
 * a gang larger than a node, whole free nodes of one pool
 * (cluster_gang_whole_nodes). Fills out[0..count). Returns 0 or -ENOSPC
 * (nothing written).
 */
int cluster_find_gang(const struct cluster *c, uint32_t count, uint32_t *out);

/* The same within the pools of mask (bit i = pool i). */
int cluster_find_gang_in(const struct cluster *c, uint32_t count, uint32_t *out, uint64_t mask);

/* A predicate on card g for a gang search (ctx: the caller's). */
typedef bool (*cluster_card_fn)(const void *ctx, uint32_t g);

/*
 * Whole nodes for a gang larger than a node: in the first pool of mask (pool
 * order) whose nodes are smaller than count and that has enough nodes all of
 * whose cards pass usable, its lowest such nodes, as many as count needs (the
 * last one in part). A gang never spans pools. Fills out[0..count). Returns 0
 * or -ENOSPC (nothing written).
 */
int cluster_gang_whole_nodes(const struct cluster *c, uint32_t count, uint64_t mask,
                             cluster_card_fn usable, const void *ctx, uint32_t *out);

/* Free cards (no tenant, not reconfiguring) in the pools of mask. */
uint32_t cluster_free_cards_in(const struct cluster *c, uint64_t mask);

/* Derived per-card figures (µs since t = 0, or the current interval). */
double card_busy_us(const struct card *g, bool interval);
double card_useful_us(const struct card *g, bool interval);

#endif
