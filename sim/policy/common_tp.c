/*
 * common_tp.c — tensor-parallel LLM replicas in the policies: the cards of
 * one node per replica (services[].llm.tensor_parallel, docs/policies.md
 * "Tensor-parallel LLM replicas"). Declared in sim/policy/common.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/common.h"

uint32_t pol_gang_size(const struct sim *s, uint32_t svc)
{
    const struct service_cfg *c = s->svcs[svc].cfg;
    return c->kind == SVC_LLM ? c->llm->tp : 1;
}

/* A card with no tenant that is not being re-laid out. */
static bool card_free(const struct cluster *cl, uint32_t g)
{
    return cl->cards[g].nten == 0 && !cl->cards[g].reconfiguring;
}

bool pol_gang_fits(const struct sim *s, uint32_t svc, uint32_t g)
{
    const struct cluster *cl = &s->cl;
    if (g >= cl->ngpus || !card_free(cl, g) || !sim_svc_allows(s, svc, g))
        return false;
    uint32_t need = pol_gang_size(s, svc), node = cl->cards[g].node, got = 0;
    for (uint32_t k = cluster_node_first(cl, node); k < cluster_node_end(cl, node) && got < need;
         k++)
        got += card_free(cl, k);
    return got >= need;
}

uint32_t pol_gang_around(const struct sim *s, uint32_t svc, uint32_t g, uint32_t *cards)
{
    const struct cluster *cl = &s->cl;
    if (g >= cl->ngpus)
        return 0;
    const struct service_cfg *c = s->svcs[svc].cfg;
    struct tenant_req req = sim_replica_req(svc, c);
    uint32_t n = pol_gang_size(s, svc), node = cl->cards[g].node, got = 1;
    cards[0] = g;
    for (uint32_t k = cluster_node_first(cl, node); k < cluster_node_end(cl, node) && got < n; k++)
        if (k != g && cluster_can_place(cl, k, &req) == 0)
            cards[got++] = k;
    return got == n ? n : 0;
}

/* pol_pick_gang_masked over the nodes whose cards pass in() (NULL: every node). */
static uint32_t pick_gang_in(const struct sim *s, uint32_t svc, const bool *ok, uint32_t *cards,
                             bool (*in)(const struct sim *, uint32_t, uint32_t))
{
    const struct cluster *cl = &s->cl;
    uint32_t best = UINT32_MAX, best_inf = 0, best_free = 0, need = pol_gang_size(s, svc);
    for (uint32_t n = 0; n < cl->nodes; n++) {
        uint32_t f = 0;
        for (uint32_t g = cluster_node_first(cl, n); g < cluster_node_end(cl, n); g++)
            f += card_free(cl, g) && (!ok || ok[g]);
        if (f == 0 || f < need || (in && !in(s, svc, cluster_node_first(cl, n))))
            continue;
        uint32_t inf = pol_node_inference_cards(cl, n);
        if (best == UINT32_MAX || inf > best_inf || (inf == best_inf && f < best_free)) {
            best = n;
            best_inf = inf;
            best_free = f;
        }
    }
    if (best == UINT32_MAX)
        return 0;
    uint32_t got = 0;
    for (uint32_t g = cluster_node_first(cl, best); g < cluster_node_end(cl, best) && got < need;
         g++)
        if (card_free(cl, g) && (!ok || ok[g]))
            cards[got++] = g;
    return got;
}

uint32_t pol_pick_gang_masked(const struct sim *s, uint32_t svc, const bool *ok, uint32_t *cards)
{
    if (!s->constrained)
        return pick_gang_in(s, svc, ok, cards, NULL);
    /* Constraints (sim/sim.h): its preferred pools first, then any pool it may use (a node's
     * cards are all in one pool). */
    uint32_t n = pick_gang_in(s, svc, ok, cards, sim_svc_prefers);
    if (n && sim_svc_allows(s, svc, cards[0]))
        return n;
    return pick_gang_in(s, svc, ok, cards, sim_svc_allows);
}

uint32_t pol_pick_gang(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards)
{
    (void)ctx;
    return pol_pick_gang_masked(s, svc, NULL, cards);
}

/* ---- holds ---- */

int pol_holds_init(struct pol_holds *h, uint32_t ngpus)
{
    h->n = 0;
    h->ngpus = ngpus;
    h->owner = calloc(ngpus ? ngpus : 1, sizeof(*h->owner));
    h->ok = calloc(ngpus ? ngpus : 1, sizeof(*h->ok));
    return h->owner && h->ok ? 0 : -ENOMEM;
}

void pol_holds_release(struct pol_holds *h)
{
    free(h->owner);
    free(h->ok);
    h->owner = NULL;
    h->ok = NULL;
    h->n = 0;
}

void pol_hold(struct pol_holds *h, uint32_t g, uint32_t owner)
{
    if (g >= h->ngpus)
        return;
    h->n += h->owner[g] == 0;
    h->owner[g] = owner + 1;
}

void pol_unhold(struct pol_holds *h, uint32_t g)
{
    if (g < h->ngpus && h->owner[g]) {
        h->owner[g] = 0;
        h->n--;
    }
}

void pol_unhold_owner(struct pol_holds *h, uint32_t owner)
{
    for (uint32_t g = 0; g < h->ngpus && h->n; g++)
        if (h->owner[g] == owner + 1)
            pol_unhold(h, g);
}

uint32_t pol_held_count(const struct pol_holds *h, uint32_t owner)
{
    uint32_t k = 0;
    for (uint32_t g = 0; g < h->ngpus; g++)
        k += h->owner[g] == owner + 1;
    return k;
}

const bool *pol_holds_mask(struct pol_holds *h, uint32_t owner)
{
    for (uint32_t g = 0; g < h->ngpus; g++)
        h->ok[g] = h->owner[g] == 0 || h->owner[g] == owner + 1;
    return h->ok;
}

/* A free card ok[] allows, in a pool of mask. */
static bool usable(const struct cluster *c, const bool *ok, uint64_t mask, uint32_t g)
{
    return card_free(c, g) && ok[g] && (mask == POOL_ALL || cluster_card_in(c, g, mask));
}

struct usable_ctx {
    const struct cluster *c;
    const bool *ok;
    uint64_t mask;
};

static bool usable_at(const void *ctx, uint32_t g)
{
    const struct usable_ctx *u = ctx;
    return usable(u->c, u->ok, u->mask, g);
}

/* pol_find_gang_masked within the pools of mask (bits of cluster pools, POOL_ALL: all). */
static int find_gang_masked_in(const struct cluster *c, const bool *ok, uint32_t count,
                               uint32_t *out, uint64_t mask)
{
    if (!ok)
        return cluster_find_gang_in(c, count, out, mask);
    uint32_t total = 0;
    for (uint32_t g = 0; g < c->ngpus; g++)
        total += usable(c, ok, mask, g);
    if (count == 0 || count > total)
        return -ENOSPC;
    /* best fit: the node with the fewest allowed free cards that holds it */
    uint32_t best = UINT32_MAX, best_free = UINT32_MAX;
    for (uint32_t n = 0; n < c->nodes; n++) {
        uint32_t f = 0;
        for (uint32_t g = cluster_node_first(c, n); g < cluster_node_end(c, n); g++)
            f += usable(c, ok, mask, g);
        if (f >= count && f < best_free) {
            best = n;
            best_free = f;
        }
    }
    if (best != UINT32_MAX) {
        uint32_t k = 0;
        for (uint32_t g = cluster_node_first(c, best); k < count; g++)
            if (usable(c, ok, mask, g))
                out[k++] = g;
        return 0;
    }
    /* larger than a node: whole nodes of one pool */
    struct usable_ctx u = {c, ok, mask};
    return cluster_gang_whole_nodes(c, count, mask, usable_at, &u, out);
}

int pol_find_gang_masked(const struct cluster *c, const bool *ok, uint32_t count, uint32_t *out)
{
    return find_gang_masked_in(c, ok, count, out, POOL_ALL);
}

int pol_find_job_gang(const struct sim *s, uint32_t j, const bool *ok, uint32_t *out)
{
    if (!ok)
        return sim_find_gang(s, j, out);
    int pin = sim_pinned_gang(s, j, ok, out);
    if (pin <= 0)
        return pin;
    const struct job *jb = &s->tr.jobs[j];
    if (jb->pools_prefer != POOL_ALL &&
        find_gang_masked_in(&s->cl, ok, jb->spec.gpus, out, jb->pools_prefer & jb->pools_allow) ==
            0)
        return 0;
    return find_gang_masked_in(&s->cl, ok, jb->spec.gpus, out, jb->pools_allow);
}

/* ---- room on a node ---- */

static bool in_list(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/*
 * Card g can be freed: every tenant a training job that cost allows. Its jobs
 * not in chosen[0..nchosen) go to add[]; *c gets their cost. Returns how many,
 * or UINT32_MAX when the card cannot be freed.
 */
static uint32_t card_jobs(const struct sim *s, uint32_t g, pol_job_cost_fn cost, void *ctx,
                          const uint32_t *chosen, uint32_t nchosen, uint32_t *add, int64_t *c)
{
    const struct card *cd = &s->cl.cards[g];
    uint32_t m = 0;
    *c = 0;
    if (cd->reconfiguring)
        return UINT32_MAX;
    for (uint32_t i = 0; i < cd->nten; i++) {
        const struct tenant *t = &s->cl.tenants[cd->ten[i]];
        if (t->kind != TENANT_TRAIN)
            return UINT32_MAX;
        if (in_list(chosen, nchosen, t->owner) || in_list(add, m, t->owner))
            continue;
        int64_t k = cost(ctx, t->owner);
        if (k < 0)
            return UINT32_MAX;
        add[m++] = t->owner;
        *c += k;
    }
    return m;
}

/*
 * Cards of node (allowed, not in cards[0..got)) that come free once the jobs
 * chosen[0..nchosen) and add[0..m) have left, at most cap.
 */
static uint32_t freed_with(const struct sim *s, uint32_t node, const bool *ok,
                           const uint32_t *cards, uint32_t got, const uint32_t *chosen,
                           uint32_t nchosen, const uint32_t *add, uint32_t m, uint32_t cap)
{
    const struct cluster *c = &s->cl;
    uint32_t f = 0;
    for (uint32_t g = cluster_node_first(c, node); g < cluster_node_end(c, node) && f < cap; g++) {
        const struct card *cd = &c->cards[g];
        if (cd->nten == 0 || cd->reconfiguring || (ok && !ok[g]) || in_list(cards, got, g))
            continue;
        bool all = true;
        for (uint32_t i = 0; i < cd->nten && all; i++) {
            const struct tenant *t = &c->tenants[cd->ten[i]];
            all = t->kind == TENANT_TRAIN &&
                  (in_list(chosen, nchosen, t->owner) || in_list(add, m, t->owner));
        }
        f += all;
    }
    return f;
}

uint32_t pol_plan_room(const struct sim *s, uint32_t node, uint32_t n, const bool *ok,
                       pol_job_cost_fn cost, void *ctx, uint32_t *jobs, uint32_t *cards,
                       int64_t *total)
{
    const struct cluster *c = &s->cl;
    uint32_t per = c->per_node, got = 0, nchosen = 0, njobs = 0;
    uint32_t cap = per * (CARD_MAX_TENANTS + 1);
    uint32_t *chosen = malloc(2 * (size_t)cap * sizeof(*chosen)), *add = chosen + cap;
    *total = 0;
    if (!chosen)
        return UINT32_MAX;
    for (uint32_t g = cluster_node_first(c, node); g < cluster_node_end(c, node) && got < n; g++)
        if (card_free(c, g) && (!ok || ok[g]))
            cards[got++] = g;
    while (got < n) {
        /* The card whose jobs free the most needed cards per unit of cost (the fewest
         * jobs on ties, then the lowest card): a 4-GPU job freeing 4 cards beats four
         * 1-GPU jobs; one 1-GPU job beats a 4-GPU job when one card is missing. */
        uint32_t best = UINT32_MAX, best_f = 0, best_m = 0;
        int64_t best_k = 0, k;
        for (uint32_t g = cluster_node_first(c, node); g < cluster_node_end(c, node); g++) {
            if (c->cards[g].nten == 0 || (ok && !ok[g]) || in_list(cards, got, g))
                continue;
            uint32_t m = card_jobs(s, g, cost, ctx, chosen, nchosen, add, &k);
            if (m == UINT32_MAX)
                continue;
            uint32_t f = freed_with(s, node, ok, cards, got, chosen, nchosen, add, m, n - got);
            /* f / k better than best_f / best_k (a cost of 0 is best) */
            int64_t lhs = (int64_t)f * best_k, rhs = (int64_t)best_f * k;
            bool better = best == UINT32_MAX || lhs > rhs || (lhs == rhs && f > best_f) ||
                          (lhs == rhs && f == best_f && m < best_m);
            if (better) {
                best = g;
                best_f = f;
                best_k = k;
                best_m = m;
            }
        }
        if (best == UINT32_MAX) {
            free(chosen);
            return UINT32_MAX;
        }
        uint32_t m = card_jobs(s, best, cost, ctx, chosen, nchosen, add, &k);
        for (uint32_t i = 0; i < m; i++) {
            chosen[nchosen++] = add[i];
            if (cost(ctx, add[i]) > 0)
                jobs[njobs++] = add[i];
        }
        *total += k;
        /* Every card whose tenants are all chosen now comes free with it. */
        for (uint32_t g = cluster_node_first(c, node); g < cluster_node_end(c, node) && got < n;
             g++)
            if (c->cards[g].nten > 0 && (!ok || ok[g]) && !in_list(cards, got, g) &&
                card_jobs(s, g, cost, ctx, chosen, nchosen, add, &k) == 0)
                cards[got++] = g;
    }
    free(chosen);
    return njobs;
}

/* The node whose plan (pol_plan_room) costs least, then fewer jobs, then the lowest node, among
 * the nodes whose first card passes in(s, svc, card) (NULL: every node); UINT32_MAX if none. */
static uint32_t plan_best_in(const struct sim *s, uint32_t svc, uint32_t n, const bool *ok,
                             pol_job_cost_fn cost, void *ctx, uint32_t *jobs, uint32_t *cards,
                             uint32_t *njobs, bool (*in)(const struct sim *, uint32_t, uint32_t))
{
    const struct cluster *c = &s->cl;
    uint32_t cap = c->per_node * (CARD_MAX_TENANTS + 1), best = UINT32_MAX, best_n = 0;
    uint32_t *tj = malloc((size_t)cap * sizeof(*tj)), tc[LLM_MAX_TP];
    int64_t best_c = 0, k;
    *njobs = 0;
    if (!tj)
        return UINT32_MAX;
    for (uint32_t node = 0; node < c->nodes; node++) {
        if (in && !in(s, svc, cluster_node_first(c, node)))
            continue;
        uint32_t m = pol_plan_room(s, node, n, ok, cost, ctx, tj, tc, &k);
        if (m == UINT32_MAX)
            continue;
        if (best == UINT32_MAX || k < best_c || (k == best_c && m < best_n)) {
            best = node;
            best_c = k;
            best_n = m;
            memcpy(jobs, tj, m * sizeof(*tj));
            memcpy(cards, tc, n * sizeof(*tc));
        }
    }
    free(tj);
    *njobs = best_n;
    return best;
}

/* A node of a pool svc prefers and may use (a node's cards are all in one pool). */
static bool prefers_and_allows(const struct sim *s, uint32_t svc, uint32_t g)
{
    return sim_svc_prefers(s, svc, g) && sim_svc_allows(s, svc, g);
}

uint32_t pol_plan_best_for(const struct sim *s, uint32_t svc, const bool *ok, pol_job_cost_fn cost,
                           void *ctx, uint32_t *jobs, uint32_t *cards, uint32_t *njobs)
{
    uint32_t n = pol_gang_size(s, svc);
    if (!s->constrained)
        return plan_best_in(s, svc, n, ok, cost, ctx, jobs, cards, njobs, NULL);
    uint32_t node = plan_best_in(s, svc, n, ok, cost, ctx, jobs, cards, njobs, prefers_and_allows);
    if (node != UINT32_MAX)
        return node;
    return plan_best_in(s, svc, n, ok, cost, ctx, jobs, cards, njobs, sim_svc_allows);
}

/* ---- pools in cards ---- */

bool pol_any_tp(const struct sim *s)
{
    for (uint32_t i = 0; i < s->nsvcs; i++)
        if (pol_gang_size(s, i) > 1)
            return true;
    return false;
}

double pol_peak_cards(const struct sim *s, uint32_t i)
{
    double target = s->sc->policy.as.target_util > 0 ? s->sc->policy.as.target_util : 0.7;
    double reps = ceil(s->peak_rate[i] / (pol_replica_capacity(s->svcs[i].cfg) * target));
    return (reps < 1 ? 1 : reps) * pol_gang_size(s, i);
}

void pol_split_by_need(const struct sim *s, uint32_t cards, uint32_t *out)
{
    double tot = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        tot += pol_peak_cards(s, i);
    uint32_t used = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t n = pol_gang_size(s, i);
        double share = tot > 0 ? pol_peak_cards(s, i) / tot * cards : 0;
        out[i] = (uint32_t)floor(share / n + 1e-9);
        if (out[i] == 0)
            out[i] = 1;
        used += out[i] * n;
    }
    /* Cards left: a replica more to the service furthest below its share that fits them. */
    for (;;) {
        uint32_t best = UINT32_MAX;
        double best_d = 0;
        for (uint32_t i = 0; i < s->nsvcs; i++) {
            uint32_t n = pol_gang_size(s, i);
            double d = (tot > 0 ? pol_peak_cards(s, i) / tot * cards : 0) - (double)(out[i] * n);
            if (used + n <= cards && d > 0 && (best == UINT32_MAX || d > best_d)) {
                best = i;
                best_d = d;
            }
        }
        if (best == UINT32_MAX)
            break;
        out[best]++;
        used += pol_gang_size(s, best);
    }
}

uint32_t pol_pick_gang_held(const struct sim *s, struct pol_holds *h, uint32_t svc, uint32_t *cards)
{
    uint32_t n = 0;
    if (h->n) {
        for (uint32_t g = 0; g < s->cl.ngpus; g++)
            h->ok[g] = h->owner[g] == svc + 1;
        n = pol_pick_gang_masked(s, svc, h->ok, cards);
    }
    if (n == 0)
        n = pol_pick_gang_masked(s, svc, h->n ? pol_holds_mask(h, svc) : NULL, cards);
    return n;
}
