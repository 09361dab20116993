/*
 * migstatic.c — the `mig-static` policy: one fixed MIG layout per card.
 *
 * Reproduces a cluster partitioned once by the operator (nvidia-mig-parted
 * per node label, the GPU operator's "mixed" strategy): every card keeps the
 * layout of cluster.mig.layout, or of its node group given by the policy key
 *     layouts: [{nodes: "0-3", layout: "1g.10gb*7"}, {nodes: 4, layout: "7g.80gb"}]
 * (node ranges inclusive, 0-based, not overlapping; nodes outside every group
 * keep cluster.mig.layout). A group may be reserved with `use: inference` or
 * `use: training` (default any): a node pool labelled for one kind of
 * workload, as a team does with a nodeSelector on the MIG-partitioned nodes
 * it keeps for serving. The group layouts are applied directly at t = 0
 * (cluster_relayout_begin + _done at the same instant), not with
 * sim_mig_relayout: a static layout is configured before the workload starts
 * (node provisioning), so charging a drain + re-creation time would bias
 * mig-static against the policies that start from cluster.mig.layout; no
 * re-layout ever happens during the run.
 *
 * Inference: each replica goes on the smallest free instance that holds its
 * memory (of the service's mig_profile when set), on the card whose such
 * instance is smallest (ties: lowest index) — small instances for inference,
 * the large ones stay free for training. policy.inference_gpus initial
 * replicas (explicit per-service counts first, the rest evenly), then the
 * shared HPA loop when policy.autoscale is given, with a replica's capacity
 * scaled by its instance's speed factor and up to one replica per instance.
 *
 * Training: a BestEffortFIFO queue. A job with spec.mig_profile gets that
 * profile; otherwise a job of g GPUs gets g instances of the largest profile
 * (most compute slices, then most memory) that holds training.memory_gb_per_gpu
 * and is free on g distinct cards (lowest card indices), one member per card;
 * the gang runs at the speed of that profile (models/mig.h). A job that no
 * layout of the cluster could ever hold is rejected at submission.
 *
 * Pools (cluster.pools) may have their own layouts and boards (each card's
 * profiles are its board's: a profile name is looked up per card, and a gang
 * takes instances of one board's profile) or whole cards (`sharing: none`,
 * MIG off). A whole card counts as one instance of the card's memory at full
 * speed: a replica takes one only when no MIG instance holds it (instances
 * are smaller), and a training job without spec.mig_profile takes whole cards
 * first (larger than any instance), then the largest profile as above.
 *
 * A mixed fleet (pools of several modes, docs/policies.md): a card of a
 * time-sliced or MPS pool is taken by its own mode, as the device plugin
 * advertises it: `slots` (its replicas) places of 1/slots of the card (memory
 * ranks it as card / slots), each a replica or a training member, while the
 * memory of its tenants fits the card (time-slicing does not isolate memory:
 * a placement that would overflow it is not made). The sharing model
 * (models/share.h) gives the tenants their speeds; the HPA sizes a replica
 * there at 1/slots of a card (every place taken).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/policy/common.h"
#include "sim/scenario.h"
#include "sim/sim.h"

/* What a node group's instances may hold (`use:`); ANY by default. */
enum migs_use { USE_ANY, USE_INFERENCE, USE_TRAINING };

struct migs_group {
    uint32_t first, last; /* node range, inclusive */
    const char *layout;   /* points into the scenario document */
    enum migs_use use;
};

struct migs_cfg {
    struct migs_group *g;
    uint32_t n;
};

struct migs {
    struct pol_fifo base; /* first: the pol_fifo_on_* callbacks take the state as a pol_fifo */
};

/* May card gpu hold a tenant of this kind (training or not) under the groups' `use`? */
static bool card_allows(const struct sim *s, uint32_t gpu, bool training)
{
    const struct migs_cfg *cfg = s->sc->policy.cfg;
    uint32_t node = s->cl.cards[gpu].node;
    for (uint32_t i = 0; cfg && i < cfg->n; i++)
        if (node >= cfg->g[i].first && node <= cfg->g[i].last)
            return cfg->g[i].use == USE_ANY ||
                   cfg->g[i].use == (training ? USE_TRAINING : USE_INFERENCE);
    return true;
}

/*
 * A card without MIG instances: a whole card (a pool with sharing: none, MIG off: one
 * tenant, the card's memory), or in a mixed fleet a time-sliced / MPS card (its slots).
 */
static bool whole_card(const struct cluster *c, uint32_t gpu)
{
    return cluster_card_mode(c, gpu) != SHARE_MIG;
}

/* Does card gpu have an instance of p (free_only: a free one)? */
static bool card_has(const struct cluster *c, uint32_t gpu, const struct mig_profile *p,
                     bool free_only)
{
    const struct card *g = &c->cards[gpu];
    if (free_only && g->reconfiguring)
        return false;
    for (size_t k = 0; k < g->layout.n; k++)
        if (g->layout.inst[k].profile == p && (!free_only || g->inst_tenant[k] == TENANT_NONE))
            return true;
    return false;
}

/* pol_mig_card's filter: the node groups' `use` lets inference on card g. */
static bool infer_allowed(const struct sim *s, void *ctx, uint32_t g)
{
    (void)ctx;
    return card_allows(s, g, false);
}

/* The card for a replica of svc (common.h, pol_mig_card); UINT32_MAX if none. */
static uint32_t migs_card(struct sim *s, uint32_t svc)
{
    const struct service_cfg *c = &s->sc->services[svc];
    const char *want = c->mig_profile && *c->mig_profile ? c->mig_profile : NULL;
    return pol_mig_card(s, svc, want, infer_allowed, NULL);
}

/* pol_pick_fn: one instance (tensor parallelism is refused under MIG at load). */
static uint32_t migs_pick(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards)
{
    (void)ctx;
    uint32_t g = migs_card(s, svc);
    return g == UINT32_MAX ? 0 : pol_gang_around(s, svc, g, cards);
}

/* Is profile a larger than b (compute slices, then memory)? */
static bool larger(const struct mig_profile *a, const struct mig_profile *b)
{
    if (a->compute_slices != b->compute_slices)
        return a->compute_slices > b->compute_slices;
    return a->memory_mib > b->memory_mib;
}

/*
 * Cards (lowest first) with an instance of p into gang; returns how many, at
 * most count (free_only: free instances only).
 */
static uint32_t cards_with(const struct sim *s, uint32_t j, const struct mig_profile *p,
                           bool free_only, uint32_t count, uint32_t *gang)
{
    uint32_t n = 0;
    for (uint32_t g = 0; g < s->cl.ngpus && n < count; g++)
        if (card_allows(s, g, true) && card_has(&s->cl, g, p, free_only) && sim_job_allows(s, j, g))
            gang[n++] = g;
    return n;
}

/* What job_profile returns for a gang of whole cards (no MIG instance). */
static const struct mig_profile whole_cards = {.name = "whole card"};

/*
 * Whole cards (lowest first) job j may use into gang; returns how many, at
 * most count (free_only: empty ones only).
 */
static uint32_t whole_cards_for(const struct sim *s, uint32_t j, double mem, bool free_only,
                                uint32_t count, uint32_t *gang)
{
    uint32_t n = 0;
    for (uint32_t g = 0; g < s->cl.ngpus && n < count; g++) {
        const struct card *cd = &s->cl.cards[g];
        if (whole_card(&s->cl, g) && card_allows(s, g, true) && sim_job_allows(s, j, g) &&
            mem <= s->cl.pools[cd->pool].mem_gib &&
            (!free_only || pol_mig_slot_free(&s->cl, g, mem)))
            gang[n++] = g;
    }
    return n;
}

/*
 * The profile job j runs on (&whole_cards: whole cards), if its gang fits now
 * (free_only) or could ever fit the layouts (!free_only); cards into gang.
 * NULL when it does not. Each MIG board of the pools has its own table; a
 * gang takes instances of one board's profile.
 */
static const struct mig_profile *job_profile(const struct sim *s, uint32_t j, bool free_only,
                                             uint32_t *gang)
{
    const struct job *job = &s->tr.jobs[j];
    const struct cluster *c = &s->cl;
    double mem = s->tr.cfg.mem_gib_per_gpu;
    uint32_t g = job->spec.gpus;
    if (g == 0 || g > c->ngpus)
        return NULL;
    if (!job->spec.mig_profile[0] && whole_cards_for(s, j, mem, free_only, g, gang) == g)
        return &whole_cards;
    const struct mig_profile *best = NULL;
    for (uint32_t b = 0; b < c->npools; b++) {
        bool seen = c->pools[b].mode != SHARE_MIG;
        for (uint32_t e = 0; e < b && !seen; e++) /* each board once */
            seen = c->pools[e].mode == SHARE_MIG && c->pools[e].spec == c->pools[b].spec;
        if (seen)
            continue;
        const struct gpu_spec *board = c->pools[b].spec;
        if (job->spec.mig_profile[0]) {
            const struct mig_profile *p = mig_profile_find(board, job->spec.mig_profile);
            if (p && mig_fits_memory(p, mem) && cards_with(s, j, p, free_only, g, gang) == g)
                return p;
            continue;
        }
        size_t n;
        const struct mig_profile *tab = mig_profiles(board, &n);
        for (size_t i = 0; i < n; i++) {
            const struct mig_profile *p = &tab[i];
            if (!mig_fits_memory(p, mem) || (best && !larger(p, best)))
                continue;
            if (cards_with(s, j, p, free_only, g, gang) == g)
                best = p;
        }
    }
    if (best)
        cards_with(s, j, best, free_only, g, gang);
    return best;
}

/* Start job j on the instances of p on gang: the profile is set on the spec only for the call. */
static int start_on(struct sim *s, uint32_t j, const struct mig_profile *p, const uint32_t *gang)
{
    struct job *job = &s->tr.jobs[j];
    if (job->spec.mig_profile[0] || p == &whole_cards)
        return trainer_start(&s->tr, j, gang);
    size_t len = strlen(p->name);
    if (len >= sizeof(job->spec.mig_profile))
        return -EINVAL;
    memcpy(job->spec.mig_profile, p->name, len + 1);
    int rc = trainer_start(&s->tr, j, gang);
    memset(job->spec.mig_profile, 0, sizeof(job->spec.mig_profile));
    return rc;
}

static void start_pass(struct sim *s, struct migs *m)
{
    for (uint32_t i = 0; i < m->base.q.n;) {
        uint32_t j = m->base.q.v[i];
        if (s->tr.jobs[j].state != JOB_QUEUED) {
            jobq_remove_at(&m->base.q, i);
            continue;
        }
        const struct mig_profile *p = job_profile(s, j, true, m->base.gang);
        if (p && start_on(s, j, p, m->base.gang) >= 0) {
            jobq_remove_at(&m->base.q, i);
            continue;
        }
        i++;
    }
}

static void migs_pass(struct sim *s, struct pol_fifo *f)
{
    start_pass(s, (struct migs *)f);
}

static bool migs_can_fit(struct sim *s, struct pol_fifo *f, uint32_t j)
{
    return job_profile(s, j, false, f->gang) != NULL;
}

/* Apply the node groups' layouts at t = 0 (see the header comment for why not sim_mig_relayout). */
static int apply_layouts(struct sim *s, const struct migs_cfg *cfg)
{
    struct cluster *c = &s->cl;
    char err[MIG_ERR_LEN];
    for (uint32_t i = 0; cfg && i < cfg->n; i++)
        for (uint32_t node = cfg->g[i].first; node <= cfg->g[i].last && node < c->nodes; node++)
            for (uint32_t gpu = cluster_node_first(c, node); gpu < cluster_node_end(c, node);
                 gpu++) {
                int rc =
                    cluster_relayout_begin(c, gpu, s->eng.now, cfg->g[i].layout, err, sizeof(err));
                if (rc)
                    return rc;
                cluster_relayout_done(c, gpu, s->eng.now);
            }
    return 0;
}

/*
 * pol_scaler sizes a replica as a whole card: under MIG a replica has its
 * instance's speed (capacity × speed factor), and a card holds up to 7
 * replicas (max = the instances that could hold one, within the configured
 * maximum).
 */
static void fit_scaler(const struct sim *s, struct autoscale *a, uint32_t svc)
{
    const struct service_cfg *c = &s->sc->services[svc];
    const char *want = c->mig_profile && *c->mig_profile ? c->mig_profile : NULL;
    double speed = 0;
    uint32_t fit = 0;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        if (!card_allows(s, g, false))
            continue;
        if (whole_card(&s->cl, g)) { /* one replica at full speed, if it names no profile */
            /* A time-sliced / MPS card of a mixed fleet: slots replicas at 1/slots. */
            uint32_t k = cluster_card_slots(&s->cl, g);
            double v = 1.0 / k;
            if (k > 1 && !sim_svc_allows(s, svc, g)) /* not where its constraints forbid */
                continue;
            if (!want && c->mem_gib <= s->cl.pools[s->cl.cards[g].pool].mem_gib) {
                fit += k;
                speed = speed == 0 || speed > v ? v : speed;
            }
            continue;
        }
        const struct mig_layout *l = &s->cl.cards[g].layout;
        const struct mig_profile *small = NULL;
        for (size_t k = 0; k < l->n; k++) {
            const struct mig_profile *p = l->inst[k].profile;
            if ((want && strcasecmp(p->name, want)) || !mig_fits_memory(p, c->mem_gib))
                continue;
            fit++;
            if (!small || p->memory_mib < small->memory_mib)
                small = p;
        }
        /* The speed of the smallest instance that holds it: where migs_pick puts replicas. */
        double v = small ? mig_knobs_speed(cluster_card_mig(&s->cl, g), small) : 0;
        if (v > 0 && (speed == 0 || v < speed))
            speed = v;
    }
    if (speed > 0)
        a->cfg.capacity = pol_replica_capacity(c) * speed;
    uint32_t max = c->max_replicas ? c->max_replicas : s->sc->policy.as.max_replicas;
    if (max > fit)
        max = fit;
    if (max >= a->cfg.min_replicas && max > 0)
        a->cfg.max_replicas = max;
}

static int migs_init(struct sim *s, void **state)
{
    struct migs *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    *state = m;
    m->base.pass = migs_pass;
    m->base.can_fit = migs_can_fit;
    m->base.pick = migs_pick;
    const struct scenario *sc = s->sc;
    m->base.gang = calloc(s->cl.ngpus ? s->cl.ngpus : 1, sizeof(*m->base.gang));
    if (!m->base.gang)
        return -ENOMEM;
    int rc = apply_layouts(s, sc->policy.cfg);
    if (rc)
        return rc;

    /* Initial replicas: explicit counts first, the rest of inference_gpus by peak load. */
    if ((rc = pol_place_initial(s, migs_pick, m)))
        return rc;
    if (sc->policy.autoscale) {
        m->base.scaling = true;
        if ((rc = pol_scaler_init(&m->base.ps, s, NULL)))
            return rc;
        for (uint32_t i = 0; i < s->nsvcs; i++)
            fit_scaler(s, &m->base.ps.as[i], i);
    }
    return 0;
}

static void migs_destroy(void *state)
{
    struct migs *m = state;
    if (!m)
        return;
    pol_fifo_release(&m->base);
    free(m);
}

static void migs_free_cfg(void *cfg)
{
    struct migs_cfg *c = cfg;
    if (!c)
        return;
    free(c->g);
    free(c);
}

/* "3", "0-3": a node range within [0, nodes). Returns 0 or -EINVAL. */
static int parse_nodes(const char *text, uint32_t nodes, uint32_t *first, uint32_t *last)
{
    char *end;
    errno = 0;
    unsigned long a = strtoul(text, &end, 10), b;
    if (errno || end == text || *text == '-' || *text == '+')
        return -EINVAL;
    if (*end == '-') {
        const char *q = end + 1;
        if (*q == '-' || *q == '+')
            return -EINVAL;
        b = strtoul(q, &end, 10);
        if (errno || end == q)
            return -EINVAL;
    } else {
        b = a;
    }
    if (*end || a > b || b >= nodes)
        return -EINVAL;
    *first = (uint32_t)a;
    *last = (uint32_t)b;
    return 0;
}

static int migs_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    static const char *const gkeys[] = {"nodes", "layout", "use", NULL};
    const struct conf_doc *d = &sc->doc;
    if (sc->mixed && !scenario_uses(sc, SHARE_MIG))
        return scenario_refuse_modes(sc, p, SHARE_BIT(SHARE_MIG),
                                     "mig-static places on MIG instances and needs a MIG pool",
                                     err);
    if (!sc->mixed && sc->sharing != SHARE_MIG)
        return conf_errf(err, d, conf_get(p, "name"), "name",
                         "policy 'mig-static' needs 'cluster.sharing: mig' (the cluster shares "
                         "by %s)",
                         share_mode_name(sc->sharing));
    const struct conf_node *l = conf_get(p, "layouts");
    if (!l)
        return 0;
    if (l->kind != CONF_SEQ)
        return conf_errf(err, d, l, "layouts", "expected a list of {nodes, layout}");
    struct migs_cfg *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->g = calloc(l->n ? l->n : 1, sizeof(*c->g));
    if (!c->g) {
        free(c);
        return -ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < l->n && !rc; i++) {
        const struct conf_node *it = l->items[i];
        struct migs_group *g = &c->g[i];
        const struct conf_node *nn = conf_get(it, "nodes");
        char msg[MIG_ERR_LEN];
        struct mig_layout ml;
        if ((rc = conf_check_keys(d, it, "layouts", gkeys, err)) ||
            (rc = conf_string(d, it, "layout", true, &g->layout, err)))
            break;
        if (!nn || nn->kind != CONF_SCALAR ||
            parse_nodes(nn->value, sc->nodes, &g->first, &g->last)) {
            rc = conf_errf(err, d, nn ? nn : it, "nodes",
                           "expected a node or a range 'a-b' within 0-%u", sc->nodes - 1);
            break;
        }
        static const char *const uses[] = {"any", "inference", "training", NULL};
        int use = USE_ANY;
        if ((rc = conf_enum(d, it, "use", false, uses, &use, err)))
            break;
        g->use = (enum migs_use)use;
        /* Checked on the board of every pool the group's nodes are in; whole-card pools have
         * MIG off. The single-pool form: the cluster's board. */
        uint32_t first = 0;
        for (uint32_t k = 0; sc->pools_given && k < sc->npools && !rc; k++) {
            const struct pool_cfg *pc = &sc->pools[k];
            uint32_t last = first + pc->nodes - 1;
            if (g->first <= last && first <= g->last) {
                if (pc->whole)
                    rc = conf_errf(err, d, nn, "nodes",
                                   "nodes %u-%u include pool '%s', which takes whole cards "
                                   "(sharing: none): no MIG layout there",
                                   g->first, g->last, pc->name);
                else if (scenario_pool_mode(sc, k) != SHARE_MIG)
                    rc = conf_errf(err, d, nn, "nodes",
                                   "nodes %u-%u include pool '%s', which shares by %s: no MIG "
                                   "layout there",
                                   g->first, g->last, pc->name,
                                   share_mode_name(scenario_pool_mode(sc, k)));
                else if (mig_layout_check(pc->spec, g->layout, &ml, msg, sizeof(msg)))
                    rc = conf_errf(err, d, conf_get(it, "layout"), "layout", "pool '%s' (%s): %s",
                                   pc->name, pc->spec->name, msg);
            }
            first += pc->nodes;
        }
        if (rc)
            break;
        if (!sc->pools_given && mig_layout_check(sc->spec, g->layout, &ml, msg, sizeof(msg))) {
            rc = conf_errf(err, d, conf_get(it, "layout"), "layout", "%s", msg);
            break;
        }
        for (size_t k = 0; k < i; k++)
            if (g->first <= c->g[k].last && c->g[k].first <= g->last) {
                rc = conf_errf(err, d, nn, "nodes", "nodes %u-%u overlap an earlier group (%u-%u)",
                               g->first, g->last, c->g[k].first, c->g[k].last);
                break;
            }
        c->n++;
    }
    if (rc) {
        migs_free_cfg(c);
        return rc;
    }
    sc->policy.cfg = c;
    return 0;
}

static const char *const migs_keys[] = {"layouts", NULL};

const struct policy_ops policy_mig_static = {
    .name = "mig-static",
    .keys = migs_keys,
    .parse = migs_parse,
    .free_cfg = migs_free_cfg,
    .init = migs_init,
    .on_submit = pol_fifo_on_submit,
    .on_finish = pol_fifo_on_finish,
    .on_requeue = pol_fifo_on_requeue,
    .on_tick = pol_fifo_on_tick,
    .destroy = migs_destroy,
};
