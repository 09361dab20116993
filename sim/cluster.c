/* cluster.c — cards, tenants, sharing speeds and per-state time accounting. */
#include "sim/cluster.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *use_state_name(enum use_state s)
{
    static const char *const names[USE_NSTATES] = {"training",      "inference", "checkpoint",
                                                   "restore",       "recompute", "overhead",
                                                   "reconfiguring", "idle"};
    return s < USE_NSTATES ? names[s] : "?";
}

static void account_span(struct card *g, sim_time now);

void cluster_account(struct card *g, sim_time now)
{
    if (__builtin_expect(g->pend_at <= now, 0)) {
        /* A deferred activation begins in this span (cluster_defer_active). */
        account_span(g, g->pend_at);
        g->rate[USE_IDLE] = 0;
        g->rate[g->pend_state] = 1;
        g->single = g->pend_state;
        g->pend_at = SIM_TIME_MAX;
    }
    account_span(g, now);
}

static void account_span(struct card *g, sim_time now)
{
    double dt = (double)(now - g->last);
    if (dt > 0 && g->single >= 0) {
        /* Whole card in one state (the exclusive hot path): one add, not eight. */
        g->acc[g->single] += dt;
        g->iacc[g->single] += dt;
        g->alloc_us += dt;
        g->ialloc_us += dt;
    } else if (dt > 0) {
        for (int k = 0; k < USE_NSTATES; k++) {
            double x = g->rate[k] * dt;
            g->acc[k] += x;
            g->iacc[k] += x;
        }
        g->alloc_us += g->alloc_rate * dt;
        g->ialloc_us += g->alloc_rate * dt;
    }
    g->last = now;
}

double card_busy_us(const struct card *g, bool interval)
{
    const double *a = interval ? g->iacc : g->acc;
    double b = 0;
    for (int k = 0; k < USE_NSTATES; k++)
        if (k != USE_IDLE && k != USE_RECONFIG)
            b += a[k];
    return b;
}

double card_useful_us(const struct card *g, bool interval)
{
    const double *a = interval ? g->iacc : g->acc;
    return a[USE_USEFUL] + a[USE_INFER];
}

static int grow_tenants(struct cluster *c)
{
    uint32_t cap = c->cap_tenants ? 2 * c->cap_tenants : 256;
    struct tenant *t = realloc(c->tenants, cap * sizeof(*t));
    if (!t)
        return -ENOMEM;
    memset(t + c->cap_tenants, 0, (cap - c->cap_tenants) * sizeof(*t));
    c->tenants = t;
    c->cap_tenants = cap;
    return 0;
}

static int tenant_alloc(struct cluster *c, uint32_t *id)
{
    if (c->free_tenant) {
        *id = c->free_tenant - 1;
        c->free_tenant = c->tenants[*id].next_free;
    } else {
        if (c->ntenants == c->cap_tenants && grow_tenants(c))
            return -ENOMEM;
        *id = c->ntenants++;
    }
    struct tenant *t = &c->tenants[*id];
    uint32_t gen = t->gen + 1;
    memset(t, 0, sizeof(*t));
    t->gen = gen;
    t->used = true;
    c->live_tenants++;
    return 0;
}

static void tenant_free(struct cluster *c, uint32_t id)
{
    c->tenants[id].used = false;
    c->tenants[id].next_free = c->free_tenant;
    c->free_tenant = id + 1;
    c->live_tenants--;
}

int cluster_init(struct cluster *c, uint32_t nodes, uint32_t per_node, const struct gpu_spec *spec,
                 enum share_mode mode, uint32_t slots, const struct share_knobs *knobs,
                 const struct mig_knobs *mig, const char *layout, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->nodes = nodes;
    c->per_node = per_node;
    c->ngpus = nodes * per_node;
    c->free_cards = c->ngpus;
    c->mode = mode;
    c->spec = spec;
    c->mem_gib = spec ? spec->memory_gb : 80;
    if (knobs)
        c->knobs = *knobs;
    else
        share_knobs_init(&c->knobs);
    if (mig)
        c->mig = *mig;
    c->slots = mode == SHARE_EXCLUSIVE ? 1 : mode == SHARE_MIG ? MIG_MAX_INSTANCES : slots;
    if (c->slots == 0)
        c->slots = 1;
    if (c->slots > CARD_MAX_TENANTS)
        c->slots = CARD_MAX_TENANTS;
    uint32_t maxten = CARD_MAX_TENANTS; /* any pool's slots (cluster_set_pools) */
    c->cards = calloc(c->ngpus, sizeof(*c->cards));
    c->node_free = calloc(nodes, sizeof(*c->node_free));
    c->node_first = calloc((size_t)nodes + 1, sizeof(*c->node_first));
    c->scratch = calloc(maxten + 1, sizeof(*c->scratch));
    c->speeds = calloc(maxten + 1, sizeof(*c->speeds));
    c->changed = calloc(maxten + 1, sizeof(*c->changed));
    if (!c->cards || !c->node_free || !c->node_first || !c->scratch || !c->speeds || !c->changed) {
        cluster_release(c);
        return -ENOMEM;
    }
    struct mig_layout l;
    memset(&l, 0, sizeof(l));
    if (mode == SHARE_MIG && layout && *layout) {
        int rc = mig_layout_check(spec, layout, &l, err, errlen);
        if (rc) {
            cluster_release(c);
            return -EINVAL;
        }
    }
    l.gpu = spec;
    for (uint32_t i = 0; i < c->ngpus; i++) {
        struct card *g = &c->cards[i];
        g->node = i / per_node;
        g->single = -1;
        g->pend_at = SIM_TIME_MAX;
        g->layout = l;
        for (int k = 0; k < MIG_MAX_INSTANCES; k++)
            g->inst_tenant[k] = TENANT_NONE;
    }
    for (uint32_t n = 0; n < nodes; n++)
        c->node_free[n] = per_node;
    for (uint32_t n = 0; n <= nodes; n++)
        c->node_first[n] = n * per_node;
    c->pools = calloc(1, sizeof(*c->pools));
    if (!c->pools) {
        cluster_release(c);
        return -ENOMEM;
    }
    c->npools = 1;
    c->pools[0] = (struct cluster_pool){.name = "default",
                                        .spec = spec,
                                        .nodes = nodes,
                                        .ngpus = c->ngpus,
                                        .train_speed = spec ? spec->train_speed : 1.0,
                                        .infer_speed = spec ? spec->infer_speed : 1.0,
                                        .mem_gib = c->mem_gib,
                                        .mode = c->mode,
                                        .slots = c->slots,
                                        .mig = c->mig};
    return 0;
}

/*
 * Pool i's sharing: the cluster's unless the pool takes whole cards or has a mode of its
 * own (a mixed fleet). Returns 0 with *l its cards' layout, 1 when they keep
 * cluster_init's, -EINVAL for an invalid layout.
 */
static int pool_sharing(const struct cluster *c, const struct pool_cfg *q, struct cluster_pool *p,
                        struct mig_layout *l)
{
    p->mode = q->whole ? SHARE_EXCLUSIVE : q->own_mode ? q->mode : c->mode;
    p->slots = p->mode == SHARE_EXCLUSIVE ? 1
               : p->mode == SHARE_MIG     ? MIG_MAX_INSTANCES
               : q->slots                 ? q->slots
                                          : c->slots;
    if (p->slots > CARD_MAX_TENANTS)
        p->slots = CARD_MAX_TENANTS;
    p->mig = q->mig.gpu ? q->mig : c->mig;
    memset(l, 0, sizeof(*l));
    l->gpu = q->spec;
    if (p->mode != SHARE_MIG && (c->mode == SHARE_MIG || q->own_mode))
        return 0; /* whole cards, or shared without MIG: no instances */
    if (p->mode != SHARE_MIG || !q->mig_layout)
        return 1; /* the card keeps the cluster's layout (or none) */
    char err[MIG_ERR_LEN];
    if (*q->mig_layout && mig_layout_check(q->spec, q->mig_layout, l, err, sizeof(err)))
        return -EINVAL;
    l->gpu = q->spec;
    return 0;
}

/*
 * Lay the (empty) cards out again for pools of their own node sizes: every
 * card a copy of cluster_init's first, node n with its pool's cards.
 * Returns 0, -EINVAL (more than 2^32 cards) or -ENOMEM (nothing changed).
 */
static int relay_nodes(struct cluster *c, const struct pool_cfg *pools, uint32_t n)
{
    uint64_t total = 0;
    uint32_t most = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += (uint64_t)pools[i].nodes * pools[i].gpus_per_node;
        most = pools[i].gpus_per_node > most ? pools[i].gpus_per_node : most;
    }
    if (total > UINT32_MAX)
        return -EINVAL;
    struct card *cards = calloc(total ? total : 1, sizeof(*cards));
    if (!cards)
        return -ENOMEM;
    struct card tmpl = c->cards[0];
    uint32_t g = 0, node = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < pools[i].nodes; k++, node++) {
            c->node_first[node] = g;
            c->node_free[node] = pools[i].gpus_per_node;
            for (uint32_t m = 0; m < pools[i].gpus_per_node; m++, g++) {
                cards[g] = tmpl;
                cards[g].node = node;
            }
        }
    c->node_first[node] = g;
    free(c->cards);
    c->cards = cards;
    c->ngpus = c->free_cards = g;
    c->per_node = most;
    return 0;
}

int cluster_set_pools(struct cluster *c, const struct pool_cfg *pools, uint32_t n)
{
    uint32_t nodes = 0;
    bool sizes = false; /* a pool's node size differs from cluster_init's */
    for (uint32_t i = 0; i < n; i++) {
        if (pools[i].gpus_per_node == 0)
            return -EINVAL;
        sizes |= pools[i].gpus_per_node != c->per_node;
        nodes += pools[i].nodes;
    }
    if (n == 0 || n > POOL_MAX || nodes != c->nodes || c->free_cards != c->ngpus)
        return -EINVAL;
    int rc = sizes ? relay_nodes(c, pools, n) : 0;
    if (rc)
        return rc;
    struct cluster_pool *p = calloc(n, sizeof(*p));
    struct mig_layout *lay = calloc(n, sizeof(*lay));
    int *own = calloc(n, sizeof(*own));
    if (!p || !lay || !own) {
        free(p);
        free(lay);
        free(own);
        return -ENOMEM;
    }
    uint32_t first = 0, slots = 1;
    double mem = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        const struct pool_cfg *q = &pools[i];
        p[i] = (struct cluster_pool){.name = q->name,
                                     .spec = q->spec,
                                     .first_node = first,
                                     .nodes = q->nodes,
                                     .first_gpu = c->node_first[first],
                                     .ngpus = q->nodes * q->gpus_per_node,
                                     .train_speed = q->train_speed,
                                     .infer_speed = q->infer_speed,
                                     .mem_gib = q->spec->memory_gb,
                                     .labels = q->labels,
                                     .nlabels = q->nlabels};
        own[i] = pool_sharing(c, q, &p[i], &lay[i]);
        if (own[i] < 0) {
            free(p);
            free(lay);
            free(own);
            return -EINVAL;
        }
        /* The single-pool form may override the board's memory (cluster.spec). */
        if (n == 1)
            p[i].mem_gib = c->mem_gib;
        if (p[i].mem_gib < mem)
            mem = p[i].mem_gib;
        if (p[i].mode != SHARE_MIG && p[i].slots > slots)
            slots = p[i].slots;
        first += q->nodes;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t g = p[i].first_gpu; g < p[i].first_gpu + p[i].ngpus; g++) {
            c->cards[g].pool = i;
            if (own[i] == 0) /* its own layout, or none (MIG off) */
                c->cards[g].layout = lay[i];
        }
    free(c->pools);
    free(lay);
    free(own);
    c->pools = p;
    c->npools = n;
    c->mem_gib = mem;
    /* The most tenants a card of any pool takes outside MIG (each card's own:
     * cluster_card_slots); a cluster of MIG or whole cards keeps cluster_init's. */
    if ((c->mode != SHARE_MIG && c->mode != SHARE_EXCLUSIVE) || slots > 1)
        c->slots = slots;
    return 0;
}

const char *cluster_node_label(const struct cluster *c, uint32_t n, const char *key)
{
    if (n >= c->nodes || !key)
        return NULL;
    const struct cluster_pool *p = &c->pools[cluster_pool_of_node(c, n)];
    for (uint32_t i = 0; i < p->nlabels; i++)
        if (strcmp(p->labels[i].key, key) == 0)
            return p->labels[i].value;
    return NULL;
}

void cluster_release(struct cluster *c)
{
    if (c->cards)
        for (uint32_t i = 0; i < c->ngpus; i++)
            free(c->cards[i].ten);
    free(c->cards);
    free(c->pools);
    free(c->node_free);
    free(c->node_first);
    free(c->tenants);
    free(c->scratch);
    free(c->speeds);
    free(c->changed);
    c->cards = NULL;
    c->node_free = NULL;
    c->node_first = NULL;
    c->tenants = NULL;
    c->scratch = NULL;
    c->speeds = NULL;
    c->changed = NULL;
}

void cluster_account_all(struct cluster *c, sim_time now)
{
    for (uint32_t i = 0; i < c->ngpus; i++)
        cluster_account(&c->cards[i], now);
}

void cluster_reset_interval(struct cluster *c)
{
    for (uint32_t i = 0; i < c->ngpus; i++) {
        memset(c->cards[i].iacc, 0, sizeof(c->cards[i].iacc));
        c->cards[i].ialloc_us = 0;
    }
}

static double inst_share(const struct card *g, int k)
{
    return g->layout.inst[k].profile->compute_slices / 7.0;
}

/*
 * Recompute the speeds of the card's tenants and its use rates, after
 * accounting up to now. Reports tenants whose speed changed.
 */
static void replan_rates(struct cluster *c, uint32_t gi, sim_time now);

static inline double capped(const struct tenant *t, double speed)
{
    return t->cap >= 0 && t->cap < speed ? t->cap : speed;
}

/* Recompute, then note whether the card is wholly in one state (for fast accounting). */
static void replan_card(struct cluster *c, uint32_t gi, sim_time now)
{
    struct card *g = &c->cards[gi];
    replan_rates(c, gi, now);
    g->single = -1;
    if (g->alloc_rate == 1.0)
        for (int k = 0; k < USE_NSTATES; k++)
            if (g->rate[k] == 1.0) {
                g->single = k;
                for (int m = 0; m < USE_NSTATES; m++)
                    if (m != k && g->rate[m] != 0)
                        g->single = -1;
                break;
            }
}

/* Time-slicing slice of tenant t: its own (inference priority) or the card's. */
static double ts_slice_of(const struct cluster *c, const struct tenant *t)
{
    return t->st.ts_slice_s > 0 ? t->st.ts_slice_s : c->knobs.ts_slice_s;
}

/*
 * What the card's continuously active tenants (all but those in a batch, and
 * `skip`) get alone, in total: 1 for one, Σ T_j / Σ (T_j + s) for several.
 * *n gets their count, *slice their mean slice.
 */
static double ts_continuous(const struct cluster *c, const struct card *g, uint32_t skip,
                            uint32_t *n, double *slice)
{
    double sw = share_ts_switch_s(&c->knobs), tsum = 0;
    uint32_t m = 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        const struct tenant *t = &c->tenants[g->ten[i]];
        if (g->ten[i] == skip || !t->st.active || t->ts_batch)
            continue;
        m++;
        tsum += ts_slice_of(c, t);
    }
    *n = m;
    *slice = m ? tsum / m : c->knobs.ts_slice_s;
    return m == 0 ? 0 : m == 1 ? 1.0 : tsum / (tsum + m * sw);
}

/*
 * Time-slicing speeds into c->speeds (card order): a tenant in a batch keeps
 * its fixed speed (cluster_ts_begin); the others share the turn by their
 * slices (share_speeds' rule among themselves) less the batches' debt rates.
 */
static void ts_speeds(struct cluster *c, const struct card *g)
{
    uint32_t m;
    double slice, total = ts_continuous(c, g, TENANT_NONE, &m, &slice), debt = 0;
    double sw = share_ts_switch_s(&c->knobs), turn = 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        const struct tenant *t = &c->tenants[g->ten[i]];
        if (t->st.active && t->ts_batch)
            debt += t->ts_rate;
        else if (t->st.active)
            turn += ts_slice_of(c, t) + sw;
    }
    double scale = total > 0 && debt < total ? (total - debt) / total : 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        const struct tenant *t = &c->tenants[g->ten[i]];
        if (!t->st.active)
            c->speeds[i] = 0;
        else if (t->ts_batch)
            c->speeds[i] = t->speed;
        else
            c->speeds[i] = (m == 1 ? 1.0 : ts_slice_of(c, t) / turn) * scale;
    }
}

static void replan_rates(struct cluster *c, uint32_t gi, sim_time now)
{
    struct card *g = &c->cards[gi];
    cluster_account(g, now);
    g->single = -1;
    memset(g->rate, 0, sizeof(g->rate));
    g->alloc_rate = 0;
    if (g->reconfiguring) {
        g->rate[USE_RECONFIG] = 1;
        g->alloc_rate = 1;
        return;
    }
    if (g->nten == 0)
        return;

    uint32_t nchanged = 0;
    enum share_mode mode = c->pools[g->pool].mode;
    if (mode == SHARE_MIG) {
        for (int k = 0; k < (int)g->layout.n; k++) {
            uint32_t tid = g->inst_tenant[k];
            if (tid == TENANT_NONE)
                continue;
            struct tenant *t = &c->tenants[tid];
            double share = inst_share(g, k);
            g->alloc_rate += share;
            t->speed = t->st.active ? t->st.slice_speed : 0;
            if (t->st.active) {
                double used = capped(t, t->speed);
                g->rate[t->state] += used;
                g->rate[USE_IDLE] += t->speed - used;
                g->rate[USE_OVERHEAD] += share > t->speed ? share - t->speed : 0;
            } else {
                g->rate[USE_IDLE] += share;
            }
        }
        return;
    }

    g->alloc_rate = 1;
    if (mode == SHARE_EXCLUSIVE) {
        struct tenant *t = &c->tenants[g->ten[0]];
        bool on = t->st.active && g->pend_at == SIM_TIME_MAX; /* deferred: idle until pend_at */
        t->speed = t->st.active ? 1.0 : 0.0;
        double used = on ? capped(t, 1.0) : 0;
        if (used > 0)
            g->rate[t->state] = used;
        g->rate[USE_IDLE] += 1 - used;
        return;
    }

    uint32_t nact = 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        c->scratch[i] = c->tenants[g->ten[i]].st;
        nact += c->scratch[i].active;
    }
    if (mode == SHARE_TIMESLICE)
        ts_speeds(c, g);
    else if (share_speeds(mode, &c->knobs, c->scratch, g->nten, c->speeds) != 0)
        for (uint32_t i = 0; i < g->nten; i++)
            c->speeds[i] = 0;
    double sum = 0, busy = 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        struct tenant *t = &c->tenants[g->ten[i]];
        double s = c->speeds[i];
        if (t->st.active) {
            double used = capped(t, s);
            g->rate[t->state] += used;
            g->rate[USE_IDLE] += s - used; /* waiting for slower gang members */
            sum += s;
            double u = t->st.demand < t->st.sm_cap ? t->st.demand : t->st.sm_cap;
            busy += mode == SHARE_MPS ? u : 0;
        }
        if (s != t->speed) {
            t->speed = s;
            c->changed[nchanged++] = g->ten[i];
        }
    }
    if (mode == SHARE_TIMESLICE)
        busy = nact ? 1.0 : 0.0;
    if (busy > 1)
        busy = 1;
    if (sum > 1) { /* overlapping batch estimates: never count more than the card */
        for (int k = 0; k < USE_NSTATES; k++)
            g->rate[k] /= sum;
        sum = busy = 1;
    }
    if (busy < sum)
        busy = sum;
    g->rate[USE_OVERHEAD] += busy - sum;
    g->rate[USE_IDLE] += 1 - busy;
    if (c->on_speed)
        for (uint32_t i = 0; i < nchanged; i++)
            c->on_speed(c->cb_ctx, c->changed[i]);
}

/* A batch ends: its context goes idle now (at the offset planned, if it ran its course). */
static void ts_end(struct tenant *t, sim_time now)
{
    t->ts_batch = false;
    t->ts_rate = 0;
    t->ts_idle_at = now;
    /* Cut short (a fault, a removal): where its slice stood is unknown. */
    t->ts_offset_s = now >= t->ts_end_at ? t->ts_end_offset_s : 0;
    if (now < t->ts_end_at)
        t->ts_idle_at = -1;
}

/*
 * Inference priority on card g (struct share_prio): training tenants capped
 * (MPS) or given the short slice (time-slicing) while an inference tenant is
 * on the card, back to their own cap / the card's slice when none is.
 */
static void apply_prio(struct cluster *c, struct card *g)
{
    bool held = c->prio.on && g->ninfer > 0;
    enum share_mode mode = c->pools[g->pool].mode;
    for (uint32_t i = 0; i < g->nten; i++) {
        struct tenant *t = &c->tenants[g->ten[i]];
        if (mode == SHARE_MPS)
            t->st.sm_cap = held && t->kind == TENANT_TRAIN && c->prio.train_cap < t->base_cap
                               ? c->prio.train_cap
                               : t->base_cap;
        else if (mode == SHARE_TIMESLICE)
            t->st.ts_slice_s = !held                     ? 0
                               : t->kind == TENANT_TRAIN ? c->prio.train_slice_s
                                                         : c->prio.infer_slice_s;
    }
}

static int find_instance(const struct cluster *c, const struct card *g, const struct tenant_req *r)
{
    const struct mig_profile *want = NULL;
    if (r->mig_profile && *r->mig_profile) {
        want = mig_profile_find(c->pools[g->pool].spec, r->mig_profile);
        if (!want)
            return -EINVAL;
    }
    int best = -1, too_small = 0;
    for (int k = 0; k < (int)g->layout.n; k++) {
        const struct mig_profile *p = g->layout.inst[k].profile;
        if (g->inst_tenant[k] != TENANT_NONE || (want && p != want))
            continue;
        if (!mig_fits_memory(p, r->mem_gib)) {
            too_small = 1;
            continue;
        }
        if (best < 0 || p->memory_mib < g->layout.inst[best].profile->memory_mib)
            best = k;
    }
    if (best >= 0)
        return best;
    return too_small ? -ENOSPC : -EBUSY;
}

int cluster_can_place(const struct cluster *c, uint32_t gpu, const struct tenant_req *r)
{
    if (gpu >= c->ngpus)
        return -EINVAL;
    const struct card *g = &c->cards[gpu];
    if (g->reconfiguring)
        return -EBUSY;
    if (c->pools[g->pool].mode == SHARE_MIG) {
        int k = find_instance(c, g, r);
        return k < 0 ? k : 0;
    }
    return g->nten < c->pools[g->pool].slots ? 0 : -EBUSY;
}

int cluster_place(struct cluster *c, uint32_t gpu, sim_time now, const struct tenant_req *r,
                  uint32_t *tid)
{
    int rc = cluster_can_place(c, gpu, r);
    if (rc)
        return rc;
    struct card *g = &c->cards[gpu];
    const struct cluster_pool *pl = &c->pools[g->pool];
    int inst = pl->mode == SHARE_MIG ? find_instance(c, g, r) : -1;
    if (g->nten == g->cap_ten) {
        uint32_t cap = g->cap_ten ? 2 * g->cap_ten : 2;
        uint32_t *t = realloc(g->ten, cap * sizeof(*t));
        if (!t)
            return -ENOMEM;
        g->ten = t;
        g->cap_ten = cap;
    }
    uint32_t id;
    if ((rc = tenant_alloc(c, &id)))
        return rc;
    struct tenant *t = &c->tenants[id];
    t->kind = r->kind;
    t->gpu = gpu;
    t->owner = r->owner;
    t->member = r->member;
    t->instance = inst;
    t->state = USE_USEFUL;
    t->cap = -1;
    share_tenant_init(&t->st);
    t->st.active = false;
    t->st.mem_gib = r->mem_gib;
    t->st.sm_cap = pl->mode == SHARE_MPS && r->sm_cap > 0 && r->sm_cap <= 1 ? r->sm_cap : 1.0;
    t->base_cap = t->st.sm_cap;
    t->fraction = r->fraction > 0 && r->fraction <= 1 ? r->fraction : 0;
    if (r->demand > 0 && r->demand <= 1)
        t->st.demand = r->demand;
    t->ts_idle_at = -1;
    /* k8s device plugin MPS: each replica gets 1/N of the memory (its README); time-slicing
     * with enforced quotas (HAMi): the memory it asked for. */
    t->st.mem_quota_gib = r->mem_quota_gib > 0 ? r->mem_quota_gib : 0;
    t->st.mem_limit_gib = pl->mode == SHARE_MPS
                              ? (c->mps_limit_gib > 0 ? c->mps_limit_gib : pl->mem_gib / pl->slots)
                          : pl->mode == SHARE_TIMESLICE && c->mem_quota ? t->st.mem_quota_gib
                                                                        : 0;
    if (inst >= 0) {
        t->st.group = inst;
        t->st.slice_speed = mig_knobs_speed(&pl->mig, g->layout.inst[inst].profile);
        g->inst_tenant[inst] = id;
    }

    /* Memory: does this allocation fail, or kill card-mates it did not kill before? */
    uint32_t victims[CARD_MAX_TENANTS + 1], nvict = 0;
    if (pl->mode != SHARE_MIG) {
        bool before[CARD_MAX_TENANTS + 1] = {false}, killed[CARD_MAX_TENANTS + 1] = {false};
        for (uint32_t i = 0; i < g->nten; i++)
            c->scratch[i] = c->tenants[g->ten[i]].st;
        double mem = c->pools[g->pool].mem_gib;
        share_oom(pl->mode, c->scratch, g->nten, mem, before);
        c->scratch[g->nten] = t->st;
        share_oom(pl->mode, c->scratch, g->nten + 1, mem, killed);
        if (killed[g->nten]) {
            tenant_free(c, id);
            return 1;
        }
        for (uint32_t i = 0; i < g->nten; i++)
            if (killed[i] && !before[i])
                victims[nvict++] = g->ten[i];
    }
    if (g->nten == 0) {
        c->free_cards--;
        c->node_free[g->node]--;
    }
    g->ten[g->nten++] = id;
    g->ninfer += r->kind == TENANT_INFER;
    apply_prio(c, g);
    replan_card(c, gpu, now);
    *tid = id;
    if (c->on_place)
        c->on_place(c->cb_ctx, id);
    for (uint32_t i = 0; i < nvict && c->on_oom; i++)
        c->on_oom(c->cb_ctx, victims[i]);
    return 0;
}

int cluster_remove(struct cluster *c, uint32_t tid, sim_time now)
{
    if (tid >= c->ntenants || !c->tenants[tid].used)
        return -EINVAL;
    if (c->on_leave)
        c->on_leave(c->cb_ctx, tid);
    struct tenant *t = &c->tenants[tid];
    struct card *g = &c->cards[t->gpu];
    uint32_t gpu = t->gpu;
    cluster_account(g, now);
    g->pend_at = SIM_TIME_MAX; /* a deferred activation not begun goes with its tenant */
    for (uint32_t i = 0; i < g->nten; i++)
        if (g->ten[i] == tid) {
            memmove(g->ten + i, g->ten + i + 1, (g->nten - i - 1) * sizeof(*g->ten));
            g->nten--;
            break;
        }
    if (t->instance >= 0)
        g->inst_tenant[t->instance] = TENANT_NONE;
    g->ninfer -= t->kind == TENANT_INFER;
    tenant_free(c, tid);
    apply_prio(c, g);
    if (g->nten == 0) {
        c->free_cards++;
        c->node_free[g->node]++;
    }
    replan_card(c, gpu, now);
    return 0;
}

void cluster_set_active_slow(struct cluster *c, uint32_t tid, sim_time now, bool active,
                             enum use_state state)
{
    struct tenant *t = &c->tenants[tid];
    struct card *g = &c->cards[t->gpu];
    cluster_account(g, now);
    g->pend_at = SIM_TIME_MAX; /* an explicit change overrides a deferred one */
    if (!active && t->ts_batch)
        ts_end(t, now);
    t->st.active = active;
    t->state = state;
    replan_card(c, t->gpu, now);
}

double cluster_ts_begin(struct cluster *c, uint32_t tid, sim_time now, double work_us)
{
    struct tenant *t = &c->tenants[tid];
    struct card *g = &c->cards[t->gpu];
    if (c->pools[g->pool].mode != SHARE_TIMESLICE || !(work_us > 0)) {
        cluster_set_active(c, tid, now, true, USE_INFER);
        double v = t->speed > 0 ? t->speed : 1e-9;
        return work_us / v > 1 ? work_us / v : 1;
    }
    cluster_account(g, now);
    if (t->ts_batch)
        ts_end(t, now);
    uint32_t k;
    double to, alone = ts_continuous(c, g, tid, &k, &to);
    double own = ts_slice_of(c, t);
    double gap = t->ts_idle_at < 0 ? -1 : sim_time_to_sec(now - t->ts_idle_at);
    double off = t->ts_offset_s < own ? t->ts_offset_s : own;
    struct share_ts_batch b;
    if (share_ts_batch(&c->knobs, work_us * 1e-6, own, k, to, gap, off, &b) != 0) {
        b.latency_s = work_us * 1e-6; /* unreachable with valid knobs: run unshared */
        b.debt_s = 0;
        b.end_offset_s = 0;
    }
    double lat = b.latency_s * 1e6 < 1 ? 1 : b.latency_s * 1e6;
    /* The debt, with what earlier batches left, paid over this batch up to what the others get. */
    double debt = b.debt_s * 1e6 + g->ts_carry_us, room = alone * lat;
    g->ts_carry_us = debt > room ? debt - room : 0;
    if (debt > room)
        debt = room;
    t->ts_batch = true;
    t->ts_rate = debt > 0 ? debt / lat : 0;
    t->ts_end_at = now + (sim_time)(lat + 0.5);
    t->ts_end_offset_s = b.end_offset_s;
    t->st.active = true;
    t->state = USE_INFER;
    t->speed = work_us / lat;
    g->pend_at = SIM_TIME_MAX;
    replan_card(c, t->gpu, now);
    return lat;
}

void cluster_ts_end(struct cluster *c, uint32_t tid, sim_time now)
{
    struct tenant *t = &c->tenants[tid];
    if (!t->ts_batch)
        return;
    cluster_account(&c->cards[t->gpu], now);
    ts_end(t, now);
    replan_card(c, t->gpu, now);
}

void cluster_set_prio(struct cluster *c, const struct share_prio *p, sim_time now)
{
    c->prio = *p;
    for (uint32_t i = 0; i < c->ngpus; i++)
        if (c->cards[i].nten) {
            apply_prio(c, &c->cards[i]);
            replan_card(c, i, now);
        }
}

bool cluster_defer_active(struct cluster *c, uint32_t tid, sim_time at, enum use_state state)
{
    struct tenant *t = &c->tenants[tid];
    struct card *g = &c->cards[t->gpu];
    if (c->pools[g->pool].mode != SHARE_EXCLUSIVE || t->cap >= 0 || t->st.active ||
        g->pend_at != SIM_TIME_MAX || g->single != USE_IDLE || at < g->last)
        return false;
    t->st.active = true;
    t->state = state;
    t->speed = 1.0;
    g->pend_at = at;
    g->pend_state = (int)state;
    return true;
}

void cluster_cancel_deferred(struct cluster *c, uint32_t tid)
{
    struct tenant *t = &c->tenants[tid];
    struct card *g = &c->cards[t->gpu];
    if (g->pend_at == SIM_TIME_MAX)
        return;
    g->pend_at = SIM_TIME_MAX;
    t->st.active = false;
    t->speed = 0.0;
}

void cluster_set_cap(struct cluster *c, uint32_t tid, sim_time now, double cap)
{
    struct tenant *t = &c->tenants[tid];
    if (t->cap == cap)
        return;
    t->cap = cap;
    replan_card(c, t->gpu, now);
}

uint32_t cluster_others_active(const struct cluster *c, uint32_t tid)
{
    const struct tenant *t = &c->tenants[tid];
    const struct card *g = &c->cards[t->gpu];
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nten; i++)
        n += g->ten[i] != tid && c->tenants[g->ten[i]].st.active;
    return n;
}

uint32_t cluster_fault_victims(const struct cluster *c, uint32_t tid, uint32_t *out)
{
    const struct tenant *t = &c->tenants[tid];
    const struct card *g = &c->cards[t->gpu];
    bool dies[CARD_MAX_TENANTS + 1] = {false};
    size_t self = 0;
    for (uint32_t i = 0; i < g->nten; i++) {
        c->scratch[i] = c->tenants[g->ten[i]].st;
        if (g->ten[i] == tid)
            self = i;
    }
    share_fault_victims(c->pools[g->pool].mode, c->scratch, g->nten, self, dies);
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nten; i++)
        if (dies[i])
            out[n++] = g->ten[i];
    return n;
}

int cluster_relayout_begin(struct cluster *c, uint32_t gpu, sim_time now, const char *layout,
                           char *err, size_t errlen)
{
    if (gpu >= c->ngpus)
        return -EINVAL;
    struct card *g = &c->cards[gpu];
    const struct gpu_spec *spec = c->pools[g->pool].spec;
    if (c->pools[g->pool].mode != SHARE_MIG)
        return -ENOTSUP; /* not MIG, or a pool of whole cards (MIG off) */
    if (g->nten || g->reconfiguring) {
        snprintf(err, errlen, "GPU %u: re-layout needs an empty card", gpu);
        return -EBUSY;
    }
    struct mig_layout l;
    memset(&l, 0, sizeof(l));
    if (layout && *layout && mig_layout_check(spec, layout, &l, err, errlen))
        return -EINVAL;
    l.gpu = spec;
    g->layout = l;
    for (int k = 0; k < MIG_MAX_INSTANCES; k++)
        g->inst_tenant[k] = TENANT_NONE;
    g->reconfiguring = true;
    c->free_cards--;
    c->node_free[g->node]--;
    replan_card(c, gpu, now);
    return 0;
}

void cluster_relayout_done(struct cluster *c, uint32_t gpu, sim_time now)
{
    struct card *g = &c->cards[gpu];
    if (!g->reconfiguring)
        return;
    g->reconfiguring = false;
    c->free_cards++;
    c->node_free[g->node]++;
    replan_card(c, gpu, now);
}

int cluster_find_gang(const struct cluster *c, uint32_t count, uint32_t *out)
{
    return cluster_find_gang_in(c, count, out, POOL_ALL);
}

uint32_t cluster_free_cards_in(const struct cluster *c, uint64_t mask)
{
    if (mask == POOL_ALL)
        return c->free_cards;
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->npools; i++)
        if ((mask >> i) & 1u)
            for (uint32_t k = c->pools[i].first_node;
                 k < c->pools[i].first_node + c->pools[i].nodes; k++)
                n += c->node_free[k];
    return n;
}

static bool card_free_in(const void *ctx, uint32_t g)
{
    const struct cluster *c = ctx;
    return c->cards[g].nten == 0 && !c->cards[g].reconfiguring;
}

int cluster_gang_whole_nodes(const struct cluster *c, uint32_t count, uint64_t mask,
                             cluster_card_fn usable, const void *ctx, uint32_t *out)
{
    for (uint32_t p = 0; p < c->npools; p++) {
        const struct cluster_pool *pl = &c->pools[p];
        uint32_t per = pl->nodes ? pl->ngpus / pl->nodes : 0;
        if (!((mask >> p) & 1u) || per == 0 || count <= per)
            continue;
        uint32_t need = (count + per - 1) / per, have = 0;
        for (uint32_t n = pl->first_node; n < pl->first_node + pl->nodes && have < need; n++) {
            bool whole = true;
            for (uint32_t g = cluster_node_first(c, n); g < cluster_node_end(c, n) && whole; g++)
                whole = usable(ctx, g);
            have += whole;
        }
        if (have < need)
            continue;
        uint32_t k = 0;
        for (uint32_t n = pl->first_node; n < pl->first_node + pl->nodes && k < count; n++) {
            bool whole = true;
            for (uint32_t g = cluster_node_first(c, n); g < cluster_node_end(c, n) && whole; g++)
                whole = usable(ctx, g);
            for (uint32_t g = cluster_node_first(c, n);
                 whole && g < cluster_node_end(c, n) && k < count; g++)
                out[k++] = g;
        }
        return 0;
    }
    return -ENOSPC;
}

int cluster_find_gang_in(const struct cluster *c, uint32_t count, uint32_t *out, uint64_t mask)
{
    if (count == 0 || count > c->free_cards)
        return -ENOSPC;
    uint32_t best = UINT32_MAX, best_free = UINT32_MAX;
    for (uint32_t n = 0; n < c->nodes; n++) {
        uint32_t f = c->node_free[n];
        if (f >= count && f < best_free && ((mask >> cluster_pool_of_node(c, n)) & 1u)) {
            best = n;
            best_free = f;
        }
    }
    if (best != UINT32_MAX) {
        uint32_t k = 0;
        for (uint32_t i = cluster_node_first(c, best); k < count; i++)
            if (c->cards[i].nten == 0 && !c->cards[i].reconfiguring)
                out[k++] = i;
        return 0;
    }
    return cluster_gang_whole_nodes(c, count, mask, card_free_in, c, out);
}
