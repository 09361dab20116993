/*
 * kai_actions.c — KAI Scheduler's actions for the `kai` policy: allocate
 * (non-blocking), consolidation, reclaim with reclaimMinRuntime, and holds
 * for the workloads an eviction freed cards for (sim/policy/kai_sched.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/kai_sched.h"

#define EPS 1e-9

/* ---- units and measurements ---- */

static bool fractional(const struct sim *s)
{
    return s->cl.mode == SHARE_TIMESLICE || s->cl.mode == SHARE_MPS;
}

double kai_job_units(const struct sim *s, const struct job *j)
{
    if (fractional(s) && j->spec.gpus == 1 && j->spec.gpu_fraction > 0 && j->spec.gpu_fraction < 1)
        return j->spec.gpu_fraction;
    return j->spec.gpus;
}

double kai_inf_units(const struct sim *s, const struct kp *k)
{
    return fractional(s) ? k->cfg->inf_fraction : 1.0;
}

double kai_card_units(const struct sim *s, const struct kp *k, uint32_t svc)
{
    return pol_gang_size(s, svc) > 1 ? 1.0 : kai_inf_units(s, k);
}

double kai_svc_units(const struct sim *s, const struct kp *k, uint32_t svc)
{
    return pol_gang_size(s, svc) * kai_card_units(s, k, svc);
}

void kai_measure(struct sim *s, struct kp *k)
{
    memset(k->card_used, 0, s->cl.ngpus * sizeof(*k->card_used));
    for (uint32_t i = 0; i < k->nq; i++)
        k->alloc[i] = k->nonpre[i] = k->held[i] = 0;
    for (uint32_t t = 0; t < s->cl.ntenants; t++) {
        const struct tenant *tn = &s->cl.tenants[t];
        if (!tn->used)
            continue;
        double u;
        int32_t q;
        bool evicting = false;
        if (tn->kind == TENANT_INFER) {
            u = kai_card_units(s, k, tn->owner);
            q = k->cfg->inf_queue;
        } else {
            const struct job *j = &s->tr.jobs[tn->owner];
            u = kai_job_units(s, j) / j->spec.gpus;
            bool known = tn->owner < k->njob && k->job_st[tn->owner] != KAI_JS_NONE;
            q = known ? k->job_q[tn->owner] : -1;
            evicting = known && k->job_st[tn->owner] == KAI_JS_EVICTING;
        }
        k->card_used[tn->gpu] += u;
        if (q < 0)
            continue;
        k->held[q] += u;
        if (evicting)
            continue;
        k->alloc[q] += u;
        if (tn->kind == TENANT_INFER)
            k->nonpre[q] += u;
    }
}

void kai_pending_units(struct sim *s, struct kp *k)
{
    for (uint32_t i = 0; i < k->nq; i++) {
        k->pend[i] = 0;
        for (uint32_t n = 0; n < k->pq[i].n; n++)
            k->pend[i] += kai_job_units(s, &s->tr.jobs[k->pq[i].v[n]]);
    }
    if (k->cfg->inf_queue >= 0)
        for (uint32_t i = 0; i < s->nsvcs; i++)
            k->pend[k->cfg->inf_queue] += k->want[i] * kai_svc_units(s, k, i);
}

/* ---- holds ---- */

static void hold_clear(struct kai_hold *h)
{
    *h = (struct kai_hold){.kind = KAI_HOLD_NONE};
}

void kai_holds_expire(struct sim *s, struct kp *k)
{
    uint32_t *left = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(*left));
    for (uint32_t i = 0; left && i < s->nsvcs; i++)
        left[i] = k->want[i] * pol_gang_size(s, i); /* a tensor-parallel replica: its cards */
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        struct kai_hold *h = &k->hold[g];
        if (h->kind == KAI_HOLD_NONE)
            continue;
        if (s->eng.now - h->since > k->cfg->hold_timeout) {
            hold_clear(h);
            continue;
        }
        if (h->kind == KAI_HOLD_INFER) {
            /* Never hold more replicas than the HPA still wants. */
            uint32_t c = left ? (h->count < left[h->owner] ? h->count : left[h->owner]) : 0;
            if (left)
                left[h->owner] -= c;
            h->count = c;
            if (c == 0)
                hold_clear(h);
        } else {
            uint8_t st = h->owner < k->njob ? k->job_st[h->owner] : KAI_JS_NONE;
            if (st != KAI_JS_PENDING && st != KAI_JS_EVICTING)
                hold_clear(h);
        }
    }
    free(left);
}

/* Card g is free (no tenant) and not held for anyone but (kind, owner). */
static bool free_for(const struct sim *s, const struct kp *k, uint32_t g, uint8_t kind,
                     uint32_t owner)
{
    const struct card *c = &s->cl.cards[g];
    if (c->nten != 0 || c->reconfiguring)
        return false;
    const struct kai_hold *h = &k->hold[g];
    return h->kind == KAI_HOLD_NONE || (h->kind == kind && h->owner == owner);
}

static bool held_by(const struct kp *k, uint32_t g, uint8_t kind, uint32_t owner)
{
    return k->hold[g].kind == kind && k->hold[g].owner == owner;
}

static bool ok_at(const void *ctx, uint32_t g)
{
    return ((const bool *)ctx)[g];
}

/*
 * Whole cards for a gang of `count` among the cards ok[] allows: within one
 * node when one holds it (the node with the most cards held for job `owner`,
 * then the fewest free: best fit), else whole nodes of one pool (as
 * cluster_find_gang). Fills out[0..count). Returns true if found.
 */
static bool gang_in(const struct sim *s, const struct kp *k, const bool *ok, uint32_t count,
                    uint32_t owner, uint32_t *out)
{
    const struct cluster *c = &s->cl;
    if (count == 0)
        return false;
    uint32_t best = UINT32_MAX, best_free = 0, best_held = 0;
    for (uint32_t n = 0; n < c->nodes; n++) {
        uint32_t f = 0, h = 0;
        for (uint32_t g = cluster_node_first(c, n); g < cluster_node_end(c, n); g++) {
            f += ok[g];
            h += ok[g] && held_by(k, g, KAI_HOLD_TRAIN, owner);
        }
        if (f < count)
            continue;
        if (best == UINT32_MAX || h > best_held || (h == best_held && f < best_free)) {
            best = n;
            best_free = f;
            best_held = h;
        }
    }
    if (best == UINT32_MAX)
        return cluster_gang_whole_nodes(c, count, POOL_ALL, ok_at, ok, out) == 0;
    uint32_t m = 0;
    for (int pass = 0; pass < 2; pass++) /* held cards first */
        for (uint32_t g = cluster_node_first(c, best); g < cluster_node_end(c, best) && m < count;
             g++)
            if (ok[g] && held_by(k, g, KAI_HOLD_TRAIN, owner) == (pass == 0))
                out[m++] = g;
    return true;
}

/* Most allocated card with room for u and a free slot, held for (kind, owner) first. */
static uint32_t pack_card(struct sim *s, struct kp *k, double u, const struct tenant_req *r,
                          uint8_t kind, uint32_t owner)
{
    uint32_t best = KAI_NO_GPU;
    bool best_held = false;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct kai_hold *h = &k->hold[g];
        bool mine = h->kind == kind && h->owner == owner;
        if (h->kind != KAI_HOLD_NONE && !mine)
            continue;
        if (k->card_used[g] + u > 1 + EPS || cluster_can_place(&s->cl, g, r) != 0)
            continue;
        if (r->kind == TENANT_INFER ? !sim_svc_allows(s, owner, g) : !sim_job_allows(s, owner, g))
            continue; /* placement constraints (sim/sim.h) */
        if (best == KAI_NO_GPU || (mine && !best_held) ||
            (mine == best_held && k->card_used[g] > k->card_used[best])) {
            best = g;
            best_held = mine;
        }
    }
    return best;
}

/*
 * Cards for a tensor-parallel replica of svc: free cards of one node that no
 * one else holds; the node with the most cards held for svc first, then
 * node-compact (pol_pick_gang_masked). Returns the gang size, or 0.
 */
static uint32_t pick_tp(struct sim *s, struct kp *k, uint32_t svc, uint32_t *cards)
{
    const struct cluster *c = &s->cl;
    uint32_t n = pol_gang_size(s, svc), best = UINT32_MAX, best_h = 0;
    for (uint32_t g = 0; g < c->ngpus; g++)
        k->mark[g] = free_for(s, k, g, KAI_HOLD_INFER, svc);
    for (uint32_t node = 0; node < c->nodes; node++) {
        uint32_t f = 0, h = 0;
        for (uint32_t g = cluster_node_first(c, node); g < cluster_node_end(c, node); g++) {
            f += k->mark[g];
            h += k->mark[g] && held_by(k, g, KAI_HOLD_INFER, svc);
        }
        if (f >= n && h > best_h) {
            best = node;
            best_h = h;
        }
    }
    if (best == UINT32_MAX)
        return pol_pick_gang_masked(s, svc, k->mark, cards);
    uint32_t m = 0;
    for (int pass = 0; pass < 2; pass++) /* held cards first */
        for (uint32_t g = cluster_node_first(c, best); g < cluster_node_end(c, best) && m < n; g++)
            if (k->mark[g] && held_by(k, g, KAI_HOLD_INFER, svc) == (pass == 0))
                cards[m++] = g;
    return m;
}

uint32_t kai_pick_gang(struct sim *s, struct kp *k, uint32_t svc, uint32_t *cards)
{
    if (pol_gang_size(s, svc) > 1)
        return pick_tp(s, k, svc, cards);
    uint32_t g = kai_pick_replica(s, k, svc);
    return g == KAI_NO_GPU ? 0 : pol_gang_around(s, svc, g, cards);
}

void kai_replica_placed(struct kp *k, uint32_t svc, const uint32_t *cards, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        struct kai_hold *h = &k->hold[cards[i]];
        if (h->kind == KAI_HOLD_INFER && h->owner == svc && --h->count == 0)
            hold_clear(h);
    }
}

uint32_t kai_pick_replica(struct sim *s, struct kp *k, uint32_t svc)
{
    const struct service_cfg *c = s->svcs[svc].cfg;
    struct tenant_req r = {.kind = TENANT_INFER,
                           .owner = svc,
                           .mem_gib = c->mem_gib,
                           .sm_cap = c->sm_cap,
                           .mig_profile = c->mig_profile};
    return pack_card(s, k, kai_inf_units(s, k), &r, KAI_HOLD_INFER, svc);
}

/* Start a pending replica of svc (HPA scale-up delay). Returns true if placed. */
static bool start_replica(struct sim *s, struct kp *k, uint32_t svc)
{
    uint32_t cards[LLM_MAX_TP], n = kai_pick_gang(s, k, svc, cards);
    if (n == 0 || sim_start_replica_on(s, svc, cards, n, s->sc->policy.as.up_delay) != 0)
        return false;
    kai_replica_placed(k, svc, cards, n);
    k->want[svc]--;
    return true;
}

/* Start queued job j on cards free for it (its held cards first). Returns true if started. */
static bool place_job(struct sim *s, struct kp *k, uint32_t j)
{
    const struct job *job = &s->tr.jobs[j];
    double u = kai_job_units(s, job);
    uint32_t n = 1;
    if (u < 1) {
        struct tenant_req r = {.kind = TENANT_TRAIN,
                               .owner = j,
                               .mem_gib = s->tr.cfg.mem_gib_per_gpu,
                               .sm_cap = s->tr.cfg.sm_cap};
        uint32_t g = pack_card(s, k, u, &r, KAI_HOLD_TRAIN, j);
        if (g == KAI_NO_GPU)
            return false;
        k->gang[0] = g;
    } else {
        for (uint32_t g = 0; g < s->cl.ngpus; g++)
            k->mark[g] = free_for(s, k, g, KAI_HOLD_TRAIN, j) && sim_job_allows(s, j, g);
        n = job->spec.gpus;
        int pin = sim_pinned_gang(s, j, k->mark, k->gang); /* a warm start's node */
        if (pin < 0 || (pin > 0 && !gang_in(s, k, k->mark, n, j, k->gang)))
            return false;
    }
    bool on_hold = false;
    for (uint32_t i = 0; i < n; i++)
        on_hold |= held_by(k, k->gang[i], KAI_HOLD_TRAIN, j);
    k->job_st[j] = KAI_JS_RUNNING;
    int rc = trainer_start(&s->tr, j, k->gang);
    if (rc < 0) {
        k->job_st[j] = KAI_JS_PENDING;
        return false;
    }
    k->job_t0[j] = s->eng.now;
    kai_acct_start(s, k, j);
    k->held_starts += on_hold;
    for (uint32_t g = 0; g < s->cl.ngpus; g++)
        if (held_by(k, g, KAI_HOLD_TRAIN, j))
            hold_clear(&k->hold[g]);
    return true; /* rc 1: OOM-killed, on_finish forgot it */
}

/* ---- allocate ---- */

/*
 * KAI's queue order (proportion plugin, queue_order.go): a queue within its
 * fair share before one above it; then one whose next job keeps it within its
 * deserved quota; then the higher queue priority; then the smaller allocated
 * share of its fair share; then the lower index (creation order).
 */
static bool queue_before(const struct kp *k, int32_t a, double ua, int32_t b, double ub)
{
    const struct kai_queue *qa = &k->q[a], *qb = &k->q[b];
    bool over_a = k->alloc[a] > qa->fair_share + EPS, over_b = k->alloc[b] > qb->fair_share + EPS;
    if (over_a != over_b)
        return !over_a;
    bool st_a = qa->quota < 0 || k->alloc[a] + ua <= qa->quota + EPS;
    bool st_b = qb->quota < 0 || k->alloc[b] + ub <= qb->quota + EPS;
    if (st_a != st_b)
        return st_a;
    if (qa->priority != qb->priority)
        return qa->priority > qb->priority;
    double ra = qa->fair_share > EPS ? k->alloc[a] / qa->fair_share : HUGE_VAL;
    double rb = qb->fair_share > EPS ? k->alloc[b] / qb->fair_share : HUGE_VAL;
    if (ra != rb)
        return ra < rb;
    return a < b;
}

struct alloc_state {
    uint32_t *cur;     /* per leaf: next queued job to try */
    double *fail_w;    /* per leaf: fewest whole cards a job failed with this cycle */
    double *fail_f;    /* per leaf: smallest fraction that failed */
    bool *svc_failed;  /* per service: a replica found no card this cycle */
    uint32_t next_svc; /* next service with pending replicas to try */
};

/* Skip jobs no easier than one that failed (KAI's scheduling signatures). */
static bool harder_than_failed(const struct alloc_state *a, int32_t q, double u)
{
    return u >= 1 ? u >= a->fail_w[q] - EPS : u >= a->fail_f[q] - EPS;
}

/* The next candidate of leaf q: a replica (svc >= 0) or a job (*job), its units; false if none. */
static bool next_candidate(struct sim *s, struct kp *k, struct alloc_state *a, int32_t q,
                           int32_t *svc, uint32_t *job, double *u)
{
    *svc = -1;
    if (q == k->cfg->inf_queue) {
        for (uint32_t i = 0; i < s->nsvcs; i++)
            if (k->want[i] > 0 && !a->svc_failed[i]) {
                *svc = (int32_t)i;
                *u = kai_svc_units(s, k, i);
                return true;
            }
    }
    struct jobq *pq = &k->pq[q];
    while (a->cur[q] < pq->n) {
        *job = pq->v[a->cur[q]];
        *u = kai_job_units(s, &s->tr.jobs[*job]);
        if (!harder_than_failed(a, q, *u))
            return true;
        a->cur[q]++;
    }
    return false;
}

void kai_act_allocate(struct sim *s, struct kp *k)
{
    struct alloc_state a = {.cur = calloc(k->nq, sizeof(uint32_t)),
                            .fail_w = malloc(k->nq * sizeof(double)),
                            .fail_f = malloc(k->nq * sizeof(double)),
                            .svc_failed = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(bool))};
    if (!a.cur || !a.fail_w || !a.fail_f || !a.svc_failed) {
        sim_fail_oom(s, "allocating cards to queues");
        goto out;
    }
    for (uint32_t i = 0; i < k->nq; i++)
        a.fail_w[i] = a.fail_f[i] = HUGE_VAL;
    kai_measure(s, k);
    for (;;) {
        int32_t best = -1, bsvc = -1;
        uint32_t bjob = 0;
        double bu = 0;
        for (uint32_t i = 0; i < k->nq; i++) {
            int32_t svc = -1;
            uint32_t job = 0;
            double u = 0;
            if (!k->leaf[i] || !next_candidate(s, k, &a, (int32_t)i, &svc, &job, &u))
                continue;
            if (best < 0 || queue_before(k, (int32_t)i, u, best, bu)) {
                best = (int32_t)i;
                bsvc = svc;
                bjob = job;
                bu = u;
            }
        }
        if (best < 0)
            break;
        struct kai_queue *q = &k->q[best];
        if (bsvc >= 0) {
            if (!kai_admissible(q, k->alloc[best], k->nonpre[best], bu, KAI_PRIO_INFERENCE) ||
                !start_replica(s, k, (uint32_t)bsvc))
                a.svc_failed[bsvc] = true;
        } else if (kai_admissible(q, k->alloc[best], k->nonpre[best], bu, KAI_PRIO_TRAIN) &&
                   place_job(s, k, bjob)) {
            jobq_remove_at(&k->pq[best], a.cur[best]);
        } else {
            double *f = bu >= 1 ? &a.fail_w[best] : &a.fail_f[best];
            if (bu < *f)
                *f = bu;
            a.cur[best]++;
        }
        kai_measure(s, k);
    }
out:
    free(a.cur);
    free(a.fail_w);
    free(a.fail_f);
    free(a.svc_failed);
}

/* ---- consolidation ---- */

/* Running job j lies wholly on node n, whole cards, and may be moved. */
static bool movable_on(const struct sim *s, const struct kp *k, uint32_t j, uint32_t n)
{
    const struct job *job = &s->tr.jobs[j];
    if (j >= k->njob || k->job_st[j] != KAI_JS_RUNNING || job->state != JOB_RUNNING ||
        kai_job_units(s, job) < 1)
        return false;
    /* Not one restoring right now: it has just been (re)placed. */
    if (job->phase == PHASE_RESTORE)
        return false;
    for (uint32_t m = 0; m < job->spec.gpus; m++)
        if (s->cl.cards[job->gpus[m]].node != n)
            return false;
    return true;
}

/*
 * Plan to free `need` more cards of node n for gang j by moving jobs off n:
 * the smallest movable jobs first (fewest GPUs checkpointed and restored),
 * each re-placed on cards free outside n (KAI commits a consolidation only if
 * every moved pod has somewhere to go). Fills movers[0..*nm) and their
 * destinations dest[] (concatenated gangs). Returns the GPUs moved, or
 * UINT32_MAX if there is no plan.
 */
static uint32_t plan_node(struct sim *s, struct kp *k, uint32_t n, uint32_t need, uint32_t *movers,
                          uint32_t *nm, uint32_t *dest)
{
    const struct cluster *c = &s->cl;
    uint32_t max = k->cfg->max_consolidation_preemptees;
    uint32_t cand[64], nc = 0;
    for (uint32_t g = cluster_node_first(c, n); g < cluster_node_end(c, n); g++) {
        const struct card *cd = &c->cards[g];
        if (cd->nten != 1 || k->hold[g].kind != KAI_HOLD_NONE)
            continue;
        const struct tenant *tn = &c->tenants[cd->ten[0]];
        if (tn->kind != TENANT_TRAIN || !movable_on(s, k, tn->owner, n))
            continue;
        bool dup = false;
        for (uint32_t i = 0; i < nc; i++)
            dup |= cand[i] == tn->owner;
        if (!dup && nc < 64)
            cand[nc++] = tn->owner;
    }
    /* Sort by GPUs (then job index) ascending. */
    for (uint32_t i = 1; i < nc; i++)
        for (uint32_t j = i; j > 0; j--) {
            uint32_t a = cand[j - 1], b = cand[j];
            uint32_t ga = s->tr.jobs[a].spec.gpus, gb = s->tr.jobs[b].spec.gpus;
            if (ga < gb || (ga == gb && a < b))
                break;
            cand[j - 1] = b;
            cand[j] = a;
        }
    uint32_t freed = 0, moved = 0;
    *nm = 0;
    for (uint32_t i = 0; i < nc && freed < need && *nm < max; i++) {
        movers[(*nm)++] = cand[i];
        freed += s->tr.jobs[cand[i]].spec.gpus;
    }
    if (freed < need)
        return UINT32_MAX;
    /* Destinations: free unheld cards off node n, largest mover first. */
    bool *ok = k->mark;
    for (uint32_t g = 0; g < c->ngpus; g++)
        ok[g] = c->cards[g].node != n && free_for(s, k, g, KAI_HOLD_NONE, 0);
    uint32_t at = 0;
    for (uint32_t i = *nm; i-- > 0;) {
        uint32_t gpus = s->tr.jobs[movers[i]].spec.gpus;
        if (!gang_in(s, k, ok, gpus, movers[i], dest + at))
            return UINT32_MAX;
        for (uint32_t m = 0; m < gpus; m++)
            ok[dest[at + m]] = false;
        at += gpus;
        moved += gpus;
    }
    return moved;
}

/* Consolidate for gang j (whole cards, within one node). Returns true if committed. */
static bool consolidate_for(struct sim *s, struct kp *k, uint32_t j)
{
    const struct cluster *c = &s->cl;
    uint32_t gpus = s->tr.jobs[j].spec.gpus;
    uint32_t free_total = 0;
    for (uint32_t g = 0; g < c->ngpus; g++)
        free_total += free_for(s, k, g, KAI_HOLD_TRAIN, j);
    if (free_total < gpus) /* IsEnoughGPUsAllocatableForJob */
        return false;
    uint32_t best_n = UINT32_MAX, best_cost = UINT32_MAX, best_nm = 0;
    uint32_t movers[64], best_movers[64], nm;
    uint32_t *dest = k->gang2, *best_dest = k->gang2 + c->ngpus;
    for (uint32_t n = 0; n < c->nodes; n++) {
        uint32_t f = 0;
        for (uint32_t g = cluster_node_first(c, n); g < cluster_node_end(c, n); g++)
            f += free_for(s, k, g, KAI_HOLD_TRAIN, j);
        if (f >= gpus || f + cluster_node_cards(c, n) < gpus) /* allocate placed it / cannot */
            continue;
        uint32_t cost = plan_node(s, k, n, gpus - f, movers, &nm, dest);
        if (cost < best_cost) {
            best_cost = cost;
            best_n = n;
            best_nm = nm;
            memcpy(best_movers, movers, nm * sizeof(*movers));
            memcpy(best_dest, dest, cost * sizeof(*dest));
        }
    }
    if (best_n == UINT32_MAX)
        return false;
    /* Commit: the gang holds its node's cards, each mover its destination. */
    uint32_t at = 0, held = 0;
    for (uint32_t i = best_nm; i-- > 0;) {
        uint32_t m = best_movers[i], mg = s->tr.jobs[m].spec.gpus;
        for (uint32_t x = 0; x < mg; x++)
            k->hold[best_dest[at + x]] = (struct kai_hold){KAI_HOLD_TRAIN, m, 0, s->eng.now};
        at += mg;
    }
    for (uint32_t g = cluster_node_first(c, best_n); g < cluster_node_end(c, best_n) && held < gpus;
         g++)
        if (free_for(s, k, g, KAI_HOLD_TRAIN, j)) {
            k->hold[g] = (struct kai_hold){KAI_HOLD_TRAIN, j, 0, s->eng.now};
            held++;
        }
    for (uint32_t i = 0; i < best_nm; i++) {
        const struct job *mj = &s->tr.jobs[best_movers[i]];
        for (uint32_t x = 0; x < mj->spec.gpus && held < gpus; x++, held++)
            k->hold[mj->gpus[x]] = (struct kai_hold){KAI_HOLD_TRAIN, j, 0, s->eng.now};
    }
    for (uint32_t i = 0; i < best_nm; i++) {
        uint32_t m = best_movers[i];
        k->job_st[m] = KAI_JS_EVICTING;
        kai_acct_evict(k, m);
        k->job_why[m] = KAI_EV_MOVE;
        k->moves++;
        trainer_preempt(&s->tr, m, true);
    }
    return true;
}

void kai_act_consolidate(struct sim *s, struct kp *k)
{
    if (k->cfg->max_consolidation_preemptees == 0)
        return;
    kai_measure(s, k);
    uint32_t per = s->cl.per_node;
    for (uint32_t q = 0; q < k->nq; q++) {
        if (!k->leaf[q])
            continue;
        uint32_t failed = UINT32_MAX; /* fewest GPUs a consolidation failed for */
        for (uint32_t i = 0; i < k->pq[q].n; i++) {
            uint32_t j = k->pq[q].v[i];
            const struct job *job = &s->tr.jobs[j];
            uint32_t gpus = job->spec.gpus;
            if (gpus < 2 || gpus > per || kai_job_units(s, job) < 1 || gpus >= failed)
                continue;
            if (!kai_admissible(&k->q[q], k->alloc[q], k->nonpre[q], gpus, KAI_PRIO_TRAIN))
                continue;
            bool has_hold = false;
            for (uint32_t g = 0; g < s->cl.ngpus && !has_hold; g++)
                has_hold = held_by(k, g, KAI_HOLD_TRAIN, j);
            if (has_hold)
                continue; /* already consolidated for: waiting for the movers */
            if (!consolidate_for(s, k, j))
                failed = gpus;
        }
    }
}

/* ---- reclaim ---- */

/* Queue path from the top level down to q (at most 64 entries); returns its length. */
static uint32_t qpath(const struct kp *k, int32_t q, int32_t *out)
{
    uint32_t n = 0;
    for (int32_t i = q; i >= 0 && n < k->nq && n < 64; i = k->q[i].parent)
        n++;
    uint32_t at = n;
    for (int32_t i = q; i >= 0 && at > 0; i = k->q[i].parent)
        out[--at] = i;
    return n;
}

/*
 * reclaimMinRuntime for a reclaimer of queue p taking from victim queue v
 * (minruntime plugin, resolver.go): "queue" walks up from v to the first
 * queue that sets it; "lca" starts one step below the lowest common ancestor
 * on v's side and walks up from there; different top-level queues use v's
 * top-level queue. Unset everywhere: default_reclaim_min_runtime.
 */
static sim_time reclaim_min_runtime(const struct kp *k, int32_t p, int32_t v)
{
    const struct kai_pol_cfg *c = k->cfg;
    int32_t pp[64], vp[64];
    uint32_t lp = qpath(k, p, pp), lv = qpath(k, v, vp);
    int32_t from = v;
    if (c->resolve == KAI_RESOLVE_LCA) {
        if (lp == 0 || lv == 0 || pp[0] != vp[0]) {
            sim_time t = lv ? c->q[vp[0]].reclaim_min_runtime : -1;
            return t >= 0 ? t : c->default_reclaim_min_runtime;
        }
        uint32_t lca = 0;
        for (uint32_t i = 0; i < lp && i < lv && pp[i] == vp[i]; i++)
            lca = i;
        if (lca + 1 < lv)
            lca++;
        from = vp[lca];
    }
    for (int32_t i = from; i >= 0; i = c->q[i].parent)
        if (c->q[i].reclaim_min_runtime >= 0)
            return c->q[i].reclaim_min_runtime;
    return c->default_reclaim_min_runtime;
}

/*
 * Victim of leaf v for a reclaimer of leaf p: the job started last among the
 * running ones of at most `room` units not protected by reclaimMinRuntime
 * (KAI's victim order: reverse job order). UINT32_MAX if none.
 */
static uint32_t pick_victim(struct sim *s, struct kp *k, int32_t p, int32_t v, double room)
{
    sim_time mr = reclaim_min_runtime(k, p, v);
    uint32_t best = UINT32_MAX;
    for (uint32_t j = 0; j < s->tr.njobs && j < k->njob; j++) {
        const struct job *job = &s->tr.jobs[j];
        if (k->job_q[j] != v || k->job_st[j] != KAI_JS_RUNNING || job->state != JOB_RUNNING ||
            kai_job_units(s, job) > room + EPS)
            continue;
        if (s->eng.now < k->job_t0[j] + mr)
            continue; /* protected */
        /* Not a job (re)started at this very instant: evicting it at once would
         * livelock allocate and reclaim at one simulated time. */
        if (job->phase == PHASE_RESTORE && job->since == s->eng.now)
            continue;
        if (best == UINT32_MAX || k->job_t0[j] > k->job_t0[best] ||
            (k->job_t0[j] == k->job_t0[best] && j > best))
            best = j;
    }
    return best;
}

/* Allocation of queue q: its own (leaf) or its leaves' (parent). */
static double subtree_alloc(const struct kp *k, int32_t q)
{
    if (k->leaf[q])
        return k->alloc[q];
    double a = 0;
    for (uint32_t i = (uint32_t)q + 1; i < k->nq; i++)
        if (k->q[i].parent == q)
            a += subtree_alloc(k, (int32_t)i);
    return a;
}

/*
 * Whether reclaimer leaf p (asking r units) may take a job of leaf v
 * (proportion plugin, reclaimable/strategies.go), compared at the levelled
 * queues (the two ancestors just below their lowest common ancestor):
 * MaintainFairShare — the victim's queue is above its fair share; or
 * GuaranteeDeservedQuota — the reclaimer stays within its deserved quota and
 * the victim's queue is above its own. Checked before the job is taken (so
 * the last victim may take its queue below the bound, as in KAI).
 */
static bool fits_reclaim_strategy(const struct kp *k, int32_t p, int32_t v, double r)
{
    int32_t pp[64], vp[64];
    uint32_t lp = qpath(k, p, pp), lv = qpath(k, v, vp), i = 0;
    while (i + 1 < lp && i + 1 < lv && pp[i] == vp[i])
        i++;
    int32_t rq = pp[i], vq = vp[i];
    const struct kai_queue *R = &k->q[rq], *V = &k->q[vq];
    double va = subtree_alloc(k, vq);
    if (va > V->fair_share + EPS)
        return true;
    bool starved = R->quota < 0 || subtree_alloc(k, rq) + r <= R->quota + EPS;
    return starved && V->quota >= 0 && va > V->quota + EPS;
}

/*
 * The leaf to take a victim from for reclaimer leaf p (asking r units): KAI's
 * victim order is the reverse queue order, so the most over-served leaf
 * (allocated / fair share) among those the strategies allow. -1 if none.
 */
static int32_t victim_queue(struct kp *k, int32_t p, double r, uint64_t tried)
{
    int32_t v = -1;
    double best_r = 0;
    for (uint32_t i = 0; i < k->nq; i++) {
        if (!k->leaf[i] || (int32_t)i == p || (i < 64 && (tried >> i & 1)) ||
            !(k->alloc[i] - k->nonpre[i] > EPS) || !fits_reclaim_strategy(k, p, (int32_t)i, r))
            continue;
        double ratio = k->alloc[i] / (k->q[i].fair_share > EPS ? k->q[i].fair_share : EPS);
        if (v < 0 || ratio > best_r) {
            v = (int32_t)i;
            best_r = ratio;
        }
    }
    return v;
}

/* A victim for reclaimer leaf p asking r units: its leaf in *vq; UINT32_MAX if none. */
static uint32_t find_victim(struct sim *s, struct kp *k, int32_t p, double r, int32_t *vq)
{
    uint64_t tried = 0;
    for (uint32_t n = 0; n < k->nq; n++) {
        int32_t v = victim_queue(k, p, r, tried);
        if (v < 0)
            return UINT32_MAX;
        uint32_t j = pick_victim(s, k, p, v, HUGE_VAL); /* KAI evicts whole jobs */
        if (j != UINT32_MAX) {
            *vq = v;
            return j;
        }
        if (v < 64)
            tried |= (uint64_t)1 << v;
        else
            return UINT32_MAX;
    }
    return UINT32_MAX;
}

static void evict(struct sim *s, struct kp *k, int32_t v, uint32_t j)
{
    k->job_st[j] = KAI_JS_EVICTING;
    kai_acct_evict(k, j);
    k->job_why[j] = KAI_EV_RECLAIM;
    k->alloc[v] -= kai_job_units(s, &s->tr.jobs[j]);
    k->reclaims++;
    trainer_preempt(&s->tr, j, true);
}

/* Replicas of fraction u card g can take once job j's members leave it. */
static uint32_t places_after(const struct sim *s, const struct kp *k, uint32_t g, uint32_t j,
                             double u)
{
    const struct card *c = &s->cl.cards[g];
    const struct job *job = &s->tr.jobs[j];
    uint32_t others = 0;
    for (uint32_t i = 0; i < c->nten; i++) {
        const struct tenant *tn = &s->cl.tenants[c->ten[i]];
        others += !(tn->kind == TENANT_TRAIN && tn->owner == j);
    }
    double used = k->card_used[g] - (others < c->nten ? kai_job_units(s, job) / job->spec.gpus : 0);
    uint32_t slots = cluster_card_slots(&s->cl, g);
    uint32_t by_slot = slots > others ? slots - others : 0;
    double by_room = floor((1 - used) / u + EPS);
    return by_room < by_slot ? (uint32_t)(by_room > 0 ? by_room : 0) : by_slot;
}

/* Job j may be taken by reclaimer leaf p asking r units (as find_victim's checks). */
static bool reclaimable(struct sim *s, struct kp *k, int32_t p, uint32_t j, double r)
{
    const struct job *job = &s->tr.jobs[j];
    if (j >= k->njob || k->job_st[j] != KAI_JS_RUNNING || job->state != JOB_RUNNING)
        return false;
    int32_t v = k->job_q[j];
    if (v < 0 || v == p || !k->leaf[v] || !fits_reclaim_strategy(k, p, v, r))
        return false;
    if (s->eng.now < k->job_t0[j] + reclaim_min_runtime(k, p, v))
        return false; /* protected */
    return !(job->phase == PHASE_RESTORE && job->since == s->eng.now);
}

struct tp_ctx {
    struct sim *s;
    struct kp *k;
    int32_t p; /* reclaimer leaf */
    double r;  /* units it asks */
};

/* pol_job_cost_fn: a job reclaim may take costs its GPUs. */
static int64_t tp_cost(void *ctx, uint32_t j)
{
    struct tp_ctx *c = ctx;
    return reclaimable(c->s, c->k, c->p, j, c->r) ? (int64_t)c->s->tr.jobs[j].spec.gpus : -1;
}

/*
 * Reclaim for a tensor-parallel replica of svc, one decision per replica:
 * the node where the fewest GPUs of training must leave for n cards (then
 * the fewest jobs, then the lowest node); those jobs are evicted together
 * and the n cards held for the replica. A replica never takes cards of two
 * nodes, so card-by-card reclaim (the rule of one-card replicas) would evict
 * jobs on nodes that never gather n free cards. *covered counts the cards
 * held for svc, *covered_u their units.
 */
static void reclaim_tp(struct sim *s, struct kp *k, uint32_t svc, uint32_t *covered,
                       double *covered_u)
{
    int32_t iq = k->cfg->inf_queue;
    uint32_t n = pol_gang_size(s, svc), cards[LLM_MAX_TP], njobs;
    struct tp_ctx ctx = {s, k, iq, (double)n};
    uint32_t *jobs = malloc((size_t)s->cl.per_node * (CARD_MAX_TENANTS + 1) * sizeof(*jobs));
    if (!jobs) {
        sim_fail_oom(s, "reclaiming cards for inference");
        return;
    }
    while (k->want[svc] * n > *covered) {
        double need = kai_reclaim_need(&k->q[iq], k->alloc[iq] + *covered_u);
        if (ctx.r > need + EPS ||
            !kai_admissible(&k->q[iq], k->alloc[iq] + *covered_u, k->nonpre[iq] + *covered_u, ctx.r,
                            KAI_PRIO_INFERENCE))
            break;
        for (uint32_t g = 0; g < s->cl.ngpus; g++)
            k->mark[g] = k->hold[g].kind == KAI_HOLD_NONE;
        if (pol_plan_best_for(s, svc, k->mark, tp_cost, &ctx, jobs, cards, &njobs) == UINT32_MAX)
            break;
        for (uint32_t i = 0; i < n; i++)
            k->hold[cards[i]] = (struct kai_hold){KAI_HOLD_INFER, svc, 1, s->eng.now};
        for (uint32_t i = 0; i < njobs; i++)
            evict(s, k, k->job_q[jobs[i]], jobs[i]);
        *covered += n;
        *covered_u += ctx.r;
    }
    free(jobs);
}

/* Reclaim for the inference leaf: cards for the replicas the HPA wants and nothing can take. */
static void reclaim_inference(struct sim *s, struct kp *k)
{
    int32_t iq = k->cfg->inf_queue;
    double u = kai_inf_units(s, k);
    uint32_t *covered = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(*covered));
    if (!covered) {
        sim_fail_oom(s, "reclaiming cards for inference");
        return;
    }
    double covered_u = 0;
    for (uint32_t g = 0; g < s->cl.ngpus; g++)
        if (k->hold[g].kind == KAI_HOLD_INFER) {
            covered[k->hold[g].owner] += k->hold[g].count;
            covered_u += k->hold[g].count * kai_card_units(s, k, k->hold[g].owner);
        }
    for (uint32_t svc = 0; svc < s->nsvcs; svc++) {
        if (pol_gang_size(s, svc) > 1) { /* covered[svc]: cards held for it */
            reclaim_tp(s, k, svc, &covered[svc], &covered_u);
            continue;
        }
        while (k->want[svc] > covered[svc]) {
            /* Within its fair share and (non-preemptible) within quota. */
            double need = kai_reclaim_need(&k->q[iq], k->alloc[iq] + covered_u);
            if (u > need + EPS || !kai_admissible(&k->q[iq], k->alloc[iq] + covered_u,
                                                  k->nonpre[iq] + covered_u, u, KAI_PRIO_INFERENCE))
                goto out;
            int32_t v = -1;
            uint32_t j = find_victim(s, k, iq, u, &v);
            if (j == UINT32_MAX)
                goto out;
            const struct job *job = &s->tr.jobs[j];
            for (uint32_t m = 0; m < job->spec.gpus && k->want[svc] > covered[svc]; m++) {
                uint32_t g = job->gpus[m];
                if (k->hold[g].kind != KAI_HOLD_NONE)
                    continue;
                uint32_t c = places_after(s, k, g, j, u), left = k->want[svc] - covered[svc];
                c = c < left ? c : left;
                if (c == 0)
                    continue;
                k->hold[g] = (struct kai_hold){KAI_HOLD_INFER, svc, c, s->eng.now};
                covered[svc] += c;
                covered_u += c * u;
            }
            evict(s, k, v, j);
        }
    }
out:
    free(covered);
}

/*
 * Reclaim for training leaf q: each pending job in order, while the queue
 * with it stays within its fair share (KAI tries every pending job of a
 * reclaiming queue); the victims' cards are held for the job.
 */
static void reclaim_training(struct sim *s, struct kp *k, uint32_t q)
{
    double pledged = 0, fail = HUGE_VAL;
    for (uint32_t i = 0; i < k->pq[q].n; i++) {
        uint32_t pj = k->pq[q].v[i];
        double hu = kai_job_units(s, &s->tr.jobs[pj]);
        if (hu > kai_reclaim_need(&k->q[q], k->alloc[q] + pledged) + EPS)
            return; /* it would go above its fair share */
        if (hu >= fail - EPS)
            continue; /* no easier than one that found no victims */
        double have = 0;
        for (uint32_t g = 0; g < s->cl.ngpus; g++)
            have += held_by(k, g, KAI_HOLD_TRAIN, pj) ? 1 : 0;
        if (hu < 1 && have > 0)
            have = hu;
        double want = hu - have;
        while (want > EPS) {
            int32_t v = -1;
            uint32_t j = find_victim(s, k, (int32_t)q, hu, &v);
            if (j == UINT32_MAX)
                break;
            const struct job *job = &s->tr.jobs[j];
            for (uint32_t m = 0; m < job->spec.gpus; m++)
                if (k->hold[job->gpus[m]].kind == KAI_HOLD_NONE)
                    k->hold[job->gpus[m]] = (struct kai_hold){KAI_HOLD_TRAIN, pj, 0, s->eng.now};
            want -= kai_job_units(s, job);
            evict(s, k, v, j);
        }
        if (want > EPS)
            fail = hu;
        else
            pledged += hu;
    }
}

void kai_act_reclaim(struct sim *s, struct kp *k)
{
    kai_measure(s, k);
    for (uint32_t q = 0; q < k->nq; q++) {
        if (!k->leaf[q])
            continue;
        if ((int32_t)q == k->cfg->inf_queue)
            reclaim_inference(s, k);
        reclaim_training(s, k, q);
    }
}
