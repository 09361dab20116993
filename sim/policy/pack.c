/*
 * pack.c — the `timeslice` and `mps` policies: tenants bin-packed on shared cards.
 *
 * Both reproduce the NVIDIA device plugin's sharing, where a card is
 * advertised as `replicas` schedulable GPUs (cluster.timeSlicing.replicas or
 * cluster.mps.replicas) and the Kubernetes scheduler packs pods onto those
 * slots:
 *   timeslice  tenants take turns on the card (models/share.h); memory has no
 *              isolation unless cluster.timeSlicing.memory_quota is enforced,
 *              so the cluster's OOM rule applies (share_oom);
 *   mps        tenants run concurrently under a thread-percentage cap per
 *              class (services[].active_thread_percentage,
 *              training.active_thread_percentage, overridable here with
 *              `thread_pct`); each client is pinned to card memory / replicas
 *              (the k8s MPS plugin's per-client limit).
 *
 * One core, two ops tables. Placement: a tenant (an inference replica or one
 * gang member) goes to the card that scores best among those with a free slot
 * — most-allocated (most tenants; packs, leaves whole cards free) or
 * least-allocated (spreads) — ties, for a replica, to the node holding more
 * inference cards (node-compact), then to the lowest index. A gang takes one
 * member per distinct card, the g best cards. Optional limits:
 * `max_training_per_card`, `inference_spread` (replicas of one service on
 * distinct cards) and `check_memory` (default true: a careful scheduler sums
 * the tenants' memory requests and refuses a card the new tenant would overflow, and
 * under MPS a tenant above the per-client limit; false reproduces naive
 * time-slicing, where the cluster's OOM rule kills the overflowing tenant).
 *
 * Inference: policy.inference_gpus initial replicas (explicit per-service
 * counts first, the rest evenly, as `dedicated`), then the shared HPA loop
 * (pol_scaler) when policy.autoscale is given. Training: a BestEffortFIFO
 * queue; any queued job starts whenever its gang fits. No preemption. A job
 * that can never fit (more GPUs than cards; with check_memory, more memory
 * than a card or an MPS client has) is rejected at submission.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/common.h"
#include "sim/scenario.h"
#include "sim/sim.h"

struct pack_cfg {
    bool least;             /* pack: least-allocated (spread) instead of most-allocated */
    uint32_t max_train;     /* training members per card; 0 = only the slot limit */
    bool spread;            /* inference_spread: one replica of a service per card */
    bool check_memory;      /* refuse placements that would overflow memory */
    bool evict;             /* evict best-effort training when the HPA cannot place a replica */
    struct share_prio prio; /* share: inference-priority (prio.on) or equal-share */
};

struct pack {
    struct pol_fifo base; /* first: the pol_fifo_on_* callbacks take the state as a pol_fifo */
    struct pack_cfg cfg;
    uint32_t *cand;   /* scratch, ngpus entries */
    bool *held;       /* cards emptied of training for a replica the HPA could not place */
    uint32_t nheld;   /* cards held */
    uint64_t evicted; /* training jobs evicted for inference */
};

/* Memory slack for sums of GiB figures. */
#define PACK_MEM_EPS 1e-9

/*
 * Would card gpu take a tenant of this kind, owner, memory request and card
 * fraction (0: one slot of the card, 1 / its pool's slots) under the policy's
 * rules? A card of a pool of whole cards (sharing: none) takes one tenant.
 */
static bool card_fits(const struct sim *s, const struct pack *p, uint32_t gpu,
                      enum tenant_kind kind, uint32_t owner, double mem, double fraction)
{
    const struct cluster *c = &s->cl;
    const struct card *g = &c->cards[gpu];
    uint32_t slots = cluster_card_slots(c, gpu);
    double units = fraction > 0 ? fraction : 1.0 / slots;
    if (g->reconfiguring || g->nten >= slots)
        return false;
    /* Placement constraints (sim/pool_cfg.h): pools the replica or job may not use. */
    if (kind == TENANT_INFER ? !sim_svc_allows(s, owner, gpu) : !sim_job_allows(s, owner, gpu))
        return false;
    if (kind == TENANT_TRAIN && p->held && p->held[gpu])
        return false; /* kept for the replica it was emptied for */
    double used = 0, share = 0;
    uint32_t ntrain = 0;
    bool same = false;
    for (uint32_t i = 0; i < g->nten; i++) {
        const struct tenant *t = &c->tenants[g->ten[i]];
        used += tenant_mem_request(t);
        share += tenant_units(c, t);
        ntrain += t->kind == TENANT_TRAIN;
        same = same || (t->kind == TENANT_INFER && t->owner == owner);
    }
    if (kind == TENANT_TRAIN && p->cfg.max_train && ntrain >= p->cfg.max_train)
        return false;
    if (kind == TENANT_INFER && p->cfg.spread && same)
        return false;
    if (share + units > 1 + PACK_MEM_EPS)
        return false; /* fractions: the card's shares add up to at most one card */
    if (p->cfg.check_memory) {
        if (used + mem > c->mem_gib + PACK_MEM_EPS)
            return false;
        if (cluster_card_mode(c, gpu) == SHARE_MPS && mem > c->mem_gib / slots + PACK_MEM_EPS)
            return false;
    }
    return true;
}

/*
 * Inference priority: would a tenant of this kind on card gpu put a gang
 * member beside an inference replica? A capped member slows its whole gang
 * (it waits for its slowest member every step), so gangs keep off inference
 * cards and replicas off gang members; single-GPU jobs fill the rest.
 */
static bool gang_beside_inference(const struct sim *s, uint32_t gpu, enum tenant_kind kind,
                                  uint32_t gang)
{
    const struct card *g = &s->cl.cards[gpu];
    if (kind == TENANT_TRAIN)
        return gang > 1 && g->ninfer > 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        const struct tenant *t = &s->cl.tenants[g->ten[i]];
        if (t->kind == TENANT_TRAIN && s->tr.jobs[t->owner].spec.gpus > 1)
            return true;
    }
    return false;
}

/*
 * Is card a a better choice than card b for a tenant of this kind (gang: its
 * job's GPUs)? Held cards first (they were emptied for inference); under
 * inference priority, cards that keep gangs and replicas apart; then the
 * packing rule; then, for inference, the node holding more inference cards
 * (node-compact); then the lower card.
 */
static bool better(const struct sim *s, const struct pack *p, uint32_t a, uint32_t b,
                   enum tenant_kind kind, uint32_t owner, uint32_t gang)
{
    if (p->held && p->held[a] != p->held[b])
        return p->held[a];
    if (s->constrained) { /* its preferred pools first (sim/sim.h) */
        uint64_t pref =
            kind == TENANT_INFER ? s->svc_prefer[owner] : s->tr.jobs[owner].pools_prefer;
        bool pa = cluster_card_in(&s->cl, a, pref), pb = cluster_card_in(&s->cl, b, pref);
        if (pa != pb)
            return pa;
    }
    if (p->cfg.prio.on) {
        bool ma = gang_beside_inference(s, a, kind, gang),
             mb = gang_beside_inference(s, b, kind, gang);
        if (ma != mb)
            return mb;
    }
    uint32_t na = s->cl.cards[a].nten, nb = s->cl.cards[b].nten;
    if (na != nb)
        return p->cfg.least ? na < nb : na > nb;
    uint32_t node_a = s->cl.cards[a].node, node_b = s->cl.cards[b].node;
    if (kind == TENANT_INFER && node_a != node_b) {
        uint32_t ia = pol_node_inference_cards(&s->cl, node_a);
        uint32_t ib = pol_node_inference_cards(&s->cl, node_b);
        if (ia != ib)
            return ia > ib;
    }
    return a < b;
}

/*
 * The `count` best cards that fit, into p->base.gang, best first. Returns the
 * number found (< count: the gang does not fit now).
 */
static uint32_t pick_cards(const struct sim *s, struct pack *p, enum tenant_kind kind,
                           uint32_t owner, double mem, double fraction, uint32_t count)
{
    uint32_t n = 0;
    for (uint32_t g = 0; g < s->cl.ngpus; g++)
        if (card_fits(s, p, g, kind, owner, mem, fraction))
            p->cand[n++] = g;
    uint32_t k = 0;
    for (; k < count && k < n; k++) {
        uint32_t best = k;
        for (uint32_t i = k + 1; i < n; i++)
            if (better(s, p, p->cand[i], p->cand[best], kind, owner,
                       kind == TENANT_TRAIN ? count : 1))
                best = i;
        uint32_t t = p->cand[k];
        p->cand[k] = p->cand[best];
        p->cand[best] = t;
        p->base.gang[k] = p->cand[k];
    }
    return k;
}

/*
 * The cards of a tensor-parallel replica of svc (n members): every card that
 * takes a member is ranked as a one-card replica's would be (pick_cards);
 * the replica goes to the node of the best card that has n such cards, on
 * that node's n best. Returns n, or 0 when no node has n.
 */
static uint32_t pick_tp(const struct sim *s, struct pack *p, uint32_t svc, double mem,
                        double fraction, uint32_t n, uint32_t *cards)
{
    uint32_t m = pick_cards(s, p, TENANT_INFER, svc, mem, fraction, s->cl.ngpus);
    for (uint32_t i = 0; i < m; i++) {
        uint32_t node = s->cl.cards[p->base.gang[i]].node, got = 0;
        for (uint32_t k = i; k < m && got < n; k++)
            if (s->cl.cards[p->base.gang[k]].node == node)
                cards[got++] = p->base.gang[k];
        if (got == n)
            return n;
    }
    return 0;
}

/*
 * pol_pick_fn: the cards for a new replica of svc: the best card with a slot;
 * a tensor-parallel replica one slot on each of n cards of one node (pick_tp).
 */
static uint32_t pack_pick(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards)
{
    struct pack *p = ctx;
    const struct service_cfg *c = &s->sc->services[svc];
    double fraction = c->gpu_fraction > 0 ? c->gpu_fraction : 0; /* 0: one slot of the card */
    uint32_t n = pol_gang_size(s, svc);
    if (n > 1) {
        if (pick_tp(s, p, svc, c->mem_gib, fraction, n, cards) < n)
            return 0;
    } else {
        if (pick_cards(s, p, TENANT_INFER, svc, c->mem_gib, fraction, 1) < 1)
            return 0;
        cards[0] = p->base.gang[0];
    }
    for (uint32_t i = 0; i < n; i++)
        if (p->held && p->held[cards[i]]) {
            p->held[cards[i]] = false;
            p->nheld--;
        }
    return n;
}

static void release_holds(struct pack *p, uint32_t ngpus)
{
    for (uint32_t g = 0; g < ngpus && p->nheld; g++)
        if (p->held[g]) {
            p->held[g] = false;
            p->nheld--;
        }
}

/*
 * Could a replica of svc go on card gpu once its training tenants are gone?
 * (The slot, memory and spread rules of card_fits without the training.)
 */
static bool fits_without_training(const struct sim *s, const struct pack *p, uint32_t gpu,
                                  uint32_t svc)
{
    const struct cluster *c = &s->cl;
    const struct card *g = &c->cards[gpu];
    if (g->reconfiguring || p->held[gpu])
        return false;
    uint32_t left = 0, ntrain = 0;
    const struct service_cfg *sc = &s->sc->services[svc];
    double used = 0, mem = sc->mem_gib, share = 0;
    uint32_t slots = cluster_card_slots(c, gpu);
    double units = sc->gpu_fraction > 0 ? sc->gpu_fraction : 1.0 / slots;
    for (uint32_t i = 0; i < g->nten; i++) {
        const struct tenant *t = &c->tenants[g->ten[i]];
        if (t->kind == TENANT_TRAIN) {
            ntrain++;
            continue;
        }
        left++;
        used += tenant_mem_request(t);
        share += tenant_units(c, t);
        if (p->cfg.spread && t->owner == svc)
            return false;
    }
    if (ntrain == 0 || left >= slots || share + units > 1 + PACK_MEM_EPS)
        return false;
    if (p->cfg.check_memory && used + mem > c->mem_gib + PACK_MEM_EPS)
        return false;
    return true;
}

/*
 * Inference before best-effort training (share: inference-priority, evict):
 * after the HPA's tick, for the replicas it asked for but could not place
 * (beyond the cards already held for them), evict training jobs — the one
 * with the fewest GPUs and the least work since its checkpoint, among those
 * on a card that would then take a replica — gracefully (checkpoint within
 * the grace period, as a Kubernetes preemption of a lower-priority pod), and
 * hold their cards so that training does not take them back. The replicas
 * bind at the next HPA tick, when the victims have left (the pending pod
 * nominated to the node). Holds are dropped when the HPA no longer lacks
 * replicas.
 */
static void evict_for_inference(struct sim *s, struct pack *p)
{
    uint32_t lack = 0, svc = UINT32_MAX;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t want = p->base.ps.as[i].current, have = service_replicas(&s->svcs[i]);
        if (want > have) {
            lack += (want - have) * pol_gang_size(s, i); /* cards: a TP replica needs several */
            if (svc == UINT32_MAX)
                svc = i;
        }
    }
    if (lack == 0) {
        release_holds(p, s->cl.ngpus);
        return;
    }
    while (lack > p->nheld) {
        uint32_t best = UINT32_MAX;
        double best_lost = 0;
        for (uint32_t g = 0; g < s->cl.ngpus; g++) {
            if (!fits_without_training(s, p, g, svc))
                continue;
            const struct card *c = &s->cl.cards[g];
            for (uint32_t i = 0; i < c->nten; i++) {
                const struct tenant *t = &s->cl.tenants[c->ten[i]];
                if (t->kind != TENANT_TRAIN)
                    continue;
                const struct job *j = &s->tr.jobs[t->owner];
                if (j->state != JOB_RUNNING || j->stop_after || j->phase == PHASE_STOP)
                    continue; /* already leaving */
                double lost = j->done_us - j->ckpt_us;
                if (best == UINT32_MAX || j->spec.gpus < s->tr.jobs[best].spec.gpus ||
                    (j->spec.gpus == s->tr.jobs[best].spec.gpus && lost < best_lost)) {
                    best = t->owner;
                    best_lost = lost;
                }
            }
        }
        if (best == UINT32_MAX)
            return; /* nothing to evict: the scale-up waits */
        const struct job *j = &s->tr.jobs[best];
        for (uint32_t m = 0; m < j->spec.gpus && p->nheld < lack; m++) {
            uint32_t g = j->gpus[m];
            if (!p->held[g] && fits_without_training(s, p, g, svc)) {
                p->held[g] = true;
                p->nheld++;
            }
        }
        if (trainer_preempt(&s->tr, best, true) != 0)
            return;
        p->evicted++;
    }
}

static void pack_on_tick(struct sim *s, void *state)
{
    struct pack *p = state;
    pol_fifo_on_tick(s, state);
    if (p->cfg.evict && p->base.scaling)
        evict_for_inference(s, p);
}

/* Could job j ever run here (on an empty cluster)? */
static bool job_can_ever_fit(const struct sim *s, const struct pack *p, uint32_t j)
{
    const struct cluster *c = &s->cl;
    uint32_t g = s->tr.jobs[j].spec.gpus;
    double mem = trainer_job_mem_gib(&s->tr, &s->tr.jobs[j].spec, c->mem_gib);
    if (g == 0 || g > c->ngpus)
        return false;
    if (p->cfg.check_memory) {
        if (mem > c->mem_gib + PACK_MEM_EPS)
            return false;
        bool client_fits = false; /* MPS: some pool's per-client share holds it */
        for (uint32_t i = 0; i < c->npools && !client_fits; i++)
            client_fits = c->pools[i].mode != SHARE_MPS ||
                          mem <= c->mem_gib / c->pools[i].slots + PACK_MEM_EPS;
        if (!client_fits)
            return false;
    }
    return true;
}

/* One pass over the queue in order: start every job whose gang fits (BestEffortFIFO). */
static void start_pass(struct sim *s, struct pack *p)
{
    for (uint32_t i = 0; i < p->base.q.n;) {
        uint32_t j = p->base.q.v[i];
        const struct job *job = &s->tr.jobs[j];
        if (job->state != JOB_QUEUED) {
            jobq_remove_at(&p->base.q, i);
            continue;
        }
        uint32_t g = job->spec.gpus;
        double f = trainer_job_fraction(&job->spec); /* 0: one slot of each card */
        if (pick_cards(s, p, TENANT_TRAIN, j,
                       trainer_job_mem_gib(&s->tr, &job->spec, s->cl.mem_gib), f, g) == g &&
            trainer_start(&s->tr, j, p->base.gang) >= 0) {
            /* Started, or OOM-killed at its first allocation (FAILED): out of the queue. */
            jobq_remove_at(&p->base.q, i);
            continue;
        }
        i++;
    }
}

static void pack_pass(struct sim *s, struct pol_fifo *f)
{
    start_pass(s, (struct pack *)f);
}

static bool pack_can_fit(struct sim *s, struct pol_fifo *f, uint32_t j)
{
    return job_can_ever_fit(s, (const struct pack *)f, j);
}

static int pack_init(struct sim *s, void **state)
{
    struct pack *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    *state = p;
    const struct scenario *sc = s->sc;
    const struct pack_cfg *cfg = sc->policy.cfg;
    p->cfg = cfg ? *cfg : (struct pack_cfg){.check_memory = true};
    p->base.pass = pack_pass;
    p->base.can_fit = pack_can_fit;
    p->base.pick = pack_pick;
    uint32_t n = s->cl.ngpus ? s->cl.ngpus : 1;
    p->base.gang = calloc(n, sizeof(*p->base.gang));
    p->cand = calloc(n, sizeof(*p->cand));
    p->held = calloc(n, sizeof(*p->held));
    if (!p->base.gang || !p->cand || !p->held)
        return -ENOMEM;
    if (p->cfg.prio.on)
        cluster_set_prio(&s->cl, &p->cfg.prio, s->eng.now);

    /* Initial replicas: explicit counts first, the rest of inference_gpus by peak load. */
    int rc = pol_place_initial(s, pack_pick, p);
    if (rc)
        return rc;
    if (sc->policy.autoscale) {
        p->base.scaling = true; /* released by destroy even if init fails half-way */
        if ((rc = pol_scaler_init(&p->base.ps, s, NULL)))
            return rc;
    }
    return 0;
}

static void pack_destroy(void *state)
{
    struct pack *p = state;
    if (!p)
        return;
    pol_fifo_release(&p->base);
    free(p->cand);
    free(p->held);
    free(p);
}

static void pack_free_cfg(void *cfg)
{
    free(cfg);
}

/*
 * Tensor-parallel replicas under sharing (docs/policies.md "Tensor-parallel
 * LLM replicas"): a replica takes one slot on each of its cards and runs at
 * its slowest card's share. Refused where that is not an honest model: under
 * MPS, and with a gpu_fraction below one card.
 */
static int check_tp(const struct scenario *sc, enum share_mode mode, struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *list = d->root ? conf_get(d->root, "services") : NULL;
    for (size_t i = 0; i < sc->nservices; i++) {
        const struct service_cfg *c = &sc->services[i];
        if (c->kind != SVC_LLM || c->llm->tp < 2)
            continue;
        const struct conf_node *item = list && i < list->n ? list->items[i] : NULL;
        const struct conf_node *tpn = conf_get(conf_get(item, "llm"), "tensor_parallel");
        if (mode == SHARE_MPS)
            return conf_errf(err, d, tpn ? tpn : item, "tensor_parallel",
                             "service '%s': a tensor-parallel replica under MPS is not "
                             "modelled: MPS pins each client to card memory / mps.replicas "
                             "and caps its SMs, and tidesim has no measured model of a "
                             "tensor-parallel step (its all-reduces) between capped MPS "
                             "clients; use tensor_parallel: 1, or sharing: timeslice",
                             c->name);
        if (c->gpu_fraction > 0 && c->gpu_fraction < 1) {
            const struct conf_node *fn = conf_get(item, "gpu_fraction");
            return conf_errf(err, d, fn ? fn : item, "gpu_fraction",
                             "service '%s': a tensor-parallel replica (tensor_parallel: %u) "
                             "takes one time-slicing slot on each of its cards; a fraction of "
                             "a card per member is not modelled (its shards' memory and its "
                             "speed follow the slots, not the fraction): drop gpu_fraction "
                             "or use tensor_parallel: 1",
                             c->name, c->llm->tp);
        }
    }
    return 0;
}

/* Keys common to both tables; `what` is the sharing mode the policy needs. */
static int parse_common(struct scenario *sc, const struct conf_node *p, struct conf_err *err,
                        enum share_mode need, const char *policy, struct pack_cfg **out)
{
    static const char *const packs[] = {"most-allocated", "least-allocated", NULL};
    static const char *const shares[] = {"equal-share", "inference-priority", NULL};
    const struct conf_doc *d = &sc->doc;
    if (sc->mixed)
        return scenario_refuse_modes(
            sc, p, SHARE_BIT(need) | SHARE_BIT(SHARE_EXCLUSIVE),
            need == SHARE_MPS
                ? "it packs MPS clients by each card's replicas and places on pools of whole "
                  "cards, not on MIG instances or time-sliced cards (give those pools "
                  "sharing: none, or use policy mig-static or dedicated)"
                : "it packs time-slicing replicas by each card's replicas and places on pools of "
                  "whole cards, not on MIG instances or MPS cards (give those pools sharing: "
                  "none, or use policy mig-static or dedicated)",
            err);
    if (sc->sharing != need)
        return conf_errf(err, d, conf_get(p, "name"), "name",
                         "policy '%s' needs 'cluster.sharing: %s' (the cluster shares by %s)",
                         policy, share_mode_name(need), share_mode_name(sc->sharing));
    int rc = check_tp(sc, need, err);
    if (rc)
        return rc;
    struct pack_cfg *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->check_memory = true;
    int pack = 0, share = 0;
    int64_t max_train = 0;
    if ((rc = conf_enum(d, p, "pack", false, packs, &pack, err)) ||
        (rc = conf_int(d, p, "max_training_per_card", false, 0, 64, &max_train, err)) ||
        (rc = conf_bool(d, p, "inference_spread", false, &c->spread, err)) ||
        (rc = conf_bool(d, p, "check_memory", false, &c->check_memory, err)) ||
        (rc = conf_enum(d, p, "share", false, shares, &share, err))) {
        free(c);
        return rc;
    }
    /* Inference priority evicts best-effort training by default; equal share never does. */
    c->prio.on = share == 1;
    c->evict = c->prio.on && sc->policy.autoscale;
    if ((rc = conf_bool(d, p, "evict", false, &c->evict, err))) {
        free(c);
        return rc;
    }
    if (c->evict && !sc->policy.autoscale) {
        free(c);
        return conf_errf(err, d, conf_get(p, "evict"), "evict",
                         "eviction for inference needs 'autoscale' (it acts on replicas the HPA "
                         "asked for and could not place)");
    }
    static const char *const prio_only[] = {"inference_slice", "training_slice", NULL};
    for (const char *const *k = prio_only; !c->prio.on && *k; k++)
        if (conf_get(p, *k)) {
            free(c);
            return conf_errf(err, d, conf_get(p, *k), *k, "only with 'share: inference-priority'");
        }
    c->least = pack == 1;
    c->max_train = (uint32_t)max_train;
    *out = c;
    return 0;
}

/*
 * timeslice, share: inference-priority: while a card holds an inference
 * replica its contexts get weighted slices, inference_slice (default 10 ms,
 * MEDIUM) for inference and training_slice (default 2 ms, SHORT) for
 * training (models/share.h, docs/policies.md).
 */
static int timeslice_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    struct pack_cfg *c;
    int rc = parse_common(sc, p, err, SHARE_TIMESLICE, "timeslice", &c);
    if (rc)
        return rc;
    sim_time inf = 10 * SIM_MS, trn = 2 * SIM_MS;
    if ((rc = conf_duration(&sc->doc, p, "inference_slice", false, 1, &inf, err)) ||
        (rc = conf_duration(&sc->doc, p, "training_slice", false, 1, &trn, err))) {
        free(c);
        return rc;
    }
    c->prio.infer_slice_s = sim_time_to_sec(inf);
    c->prio.train_slice_s = sim_time_to_sec(trn);
    c->prio.train_cap = 1;
    sc->policy.cfg = c;
    return 0;
}

/*
 * mps: thread_pct {inference, training} (1..100) override the scenario's
 * active_thread_percentage per class, for every service / for training.
 */
static int mps_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    static const char *const tkeys[] = {"inference", "training", "training_shared", NULL};
    struct pack_cfg *c;
    int rc = parse_common(sc, p, err, SHARE_MPS, "mps", &c);
    if (rc)
        return rc;
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *t = conf_get(p, "thread_pct");
    double inf = 0, trn = 0, shared = 25;
    if (t && ((rc = conf_check_keys(d, t, "thread_pct", tkeys, err)) ||
              (rc = conf_double(d, t, "inference", false, 1, 100, &inf, err)) ||
              (rc = conf_double(d, t, "training", false, 1, 100, &trn, err)) ||
              (rc = conf_double(d, t, "training_shared", false, 1, 100, &shared, err)))) {
        free(c);
        return rc;
    }
    if (t && conf_get(t, "training_shared") && !c->prio.on) {
        free(c);
        return conf_errf(err, d, conf_get(t, "training_shared"), "training_shared",
                         "only with 'share: inference-priority'");
    }
    /* Inference priority: training's cap while an inference client shares its card. */
    c->prio.train_cap = shared / 100;
    if (inf > 0)
        for (size_t i = 0; i < sc->nservices; i++)
            sc->services[i].sm_cap = inf / 100;
    if (trn > 0)
        sc->training.run.sm_cap = trn / 100;
    sc->policy.cfg = c;
    return 0;
}

static const char *const timeslice_keys[] = {"pack",
                                             "max_training_per_card",
                                             "inference_spread",
                                             "check_memory",
                                             "share",
                                             "evict",
                                             "inference_slice",
                                             "training_slice",
                                             NULL};
static const char *const mps_keys[] = {"pack",
                                       "max_training_per_card",
                                       "inference_spread",
                                       "check_memory",
                                       "share",
                                       "evict",
                                       "thread_pct",
                                       NULL};

const struct policy_ops policy_timeslice = {
    .name = "timeslice",
    .keys = timeslice_keys,
    .parse = timeslice_parse,
    .free_cfg = pack_free_cfg,
    .init = pack_init,
    .on_submit = pol_fifo_on_submit,
    .on_finish = pol_fifo_on_finish,
    .on_requeue = pol_fifo_on_requeue,
    .on_tick = pack_on_tick,
    .destroy = pack_destroy,
};

const struct policy_ops policy_mps = {
    .name = "mps",
    .keys = mps_keys,
    .parse = mps_parse,
    .free_cfg = pack_free_cfg,
    .init = pack_init,
    .on_submit = pol_fifo_on_submit,
    .on_finish = pol_fifo_on_finish,
    .on_requeue = pol_fifo_on_requeue,
    .on_tick = pack_on_tick,
    .destroy = pack_destroy,
};
