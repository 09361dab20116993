/*
 * kai.c — the `kai` policy: KAI Scheduler queues, fair share, its actions
 * (sim/policy/kai_actions.c: allocate, consolidation, reclaim) and fractional
 * GPUs (decisions by sim/policy/kai_fairshare.h).
 *
 * Queues form a tree (policy.queues, parents first); leaves hold workloads.
 * A training job goes to the leaf named by its spec.queue (trace logs carry
 * it), else to the training leaves by smooth weighted round-robin
 * (`assign_weights`, default equal). Inference replicas (HPA, policy.autoscale)
 * go to `inference_queue`: every replica the HPA asks for and no card takes
 * stays pending, as a pending pod does, until a cycle places it. Units: a job
 * asks spec.gpus cards, or its gpu_fraction when < 1; a replica asks
 * `gpu_fraction.inference` of a card. Fractions need `sharing: timeslice` or
 * `mps` (enough replicas per card); under `exclusive` every request takes
 * whole cards. Fractions are bin-packed (most-allocated card with room and a
 * free slot); KAI does not isolate memory, so the cluster's OOM rule applies.
 *
 * Each scheduling cycle (submit, finish, requeue, tick):
 *   1. usage history: every leaf's allocation since the last cycle is added
 *      to its decayed usage window (kai_usage_*), normalised to capacity;
 *   2. fair share (kai_fair_share) from quotas, weights, limits, priorities,
 *      requests (allocated + pending) and history (kValue);
 *   3. holds whose workload no longer waits are dropped;
 *   4. allocate, consolidation, reclaim (kai_sched.h).
 * Inference (priority 125) is non-preemptible and placed only within quota.
 *
 * Allocations are read from the cluster's tenants at each cycle, so they are
 * always what is on the cards; jobs being evicted (saving) hold their cards
 * but no longer count for reclaim decisions.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/kai_manifest.h"
#include "sim/policy/kai_sched.h"

#define EPS    1e-9
#define NO_GPU KAI_NO_GPU

/* ---- configuration ---- */

static const char *const kai_keys[] = {"queues",
                                       "inference_queue",
                                       "training_queues",
                                       "assign_weights",
                                       "gpu_fraction",
                                       "k_value",
                                       "usage_window",
                                       "half_life",
                                       "default_reclaim_min_runtime",
                                       "reclaim_resolve_method",
                                       "max_consolidation_preemptees",
                                       "hold_timeout",
                                       "manifests",
                                       NULL};

static void kai_free_cfg(void *p)
{
    struct kai_pol_cfg *c = p;
    if (!c)
        return;
    free(c->q);
    free(c->train);
    free(c->weights);
    kai_manifest_release(c->manifest);
    free(c->manifest);
    free(c);
}

/* policy.manifests: KAI Queue objects (sim/policy/kai_manifest.h) become the queue tree. */
static int parse_manifests(struct scenario *sc, const struct conf_node *mf, struct kai_pol_cfg *c,
                           struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    c->manifest = calloc(1, sizeof *c->manifest);
    if (!c->manifest)
        return -ENOMEM;
    const char **paths;
    uint32_t n;
    int rc = pol_manifest_paths(d, mf, &paths, &n, err); /* common.h */
    if (rc)
        return rc;
    rc = kai_manifest_load(c->manifest, paths, n, d, mf, err);
    free(paths);
    if (rc)
        return rc;
    c->q = c->manifest->q;
    c->nq = c->manifest->nq;
    c->manifest->q = NULL;
    if (c->manifest->warning && !sc->policy.warning) {
        sc->policy.warning = strdup(c->manifest->warning);
        if (!sc->policy.warning)
            return -ENOMEM;
    }
    return 0;
}

static int32_t qindex(const struct kai_pol_cfg *c, const char *name)
{
    for (uint32_t i = 0; i < c->nq; i++)
        if (!strcmp(c->q[i].name, name))
            return (int32_t)i;
    return -1;
}

static bool is_leaf(const struct kai_pol_cfg *c, int32_t i)
{
    for (uint32_t k = 0; k < c->nq; k++)
        if (c->q[k].parent == i)
            return false;
    return true;
}

static int parse_queues(const struct conf_doc *d, const struct conf_node *qs, struct kai_pol_cfg *c,
                        struct conf_err *err)
{
    static const char *const keys[] = {
        "name", "parent", "quota", "over_quota_weight", "limit", "priority", "reclaim_min_runtime",
        NULL};
    if (qs->kind != CONF_SEQ || qs->n == 0)
        return conf_errf(err, d, qs, "queues", "expected a list of queues");
    c->q = calloc(qs->n, sizeof(*c->q));
    if (!c->q)
        return -ENOMEM;
    for (size_t i = 0; i < qs->n; i++) {
        const struct conf_node *n = qs->items[i];
        struct kai_qdef *q = &c->q[i];
        const char *parent = NULL;
        int64_t prio = 0;
        q->weight = 1;
        q->limit = KAI_UNLIMITED;
        q->quota = 0;
        q->reclaim_min_runtime = -1;
        sim_time mr = -1;
        int rc;
        if ((rc = conf_check_keys(d, n, "queues[]", keys, err)) ||
            (rc = conf_string(d, n, "name", true, &q->name, err)) ||
            (rc = conf_string(d, n, "parent", false, &parent, err)) ||
            (rc = conf_double(d, n, "quota", false, -1, 1e9, &q->quota, err)) ||
            (rc = conf_double(d, n, "over_quota_weight", false, 0, 1e9, &q->weight, err)) ||
            (rc = conf_double(d, n, "limit", false, -1, 1e9, &q->limit, err)) ||
            (rc = conf_int(d, n, "priority", false, -1000000, 1000000, &prio, err)) ||
            (rc = conf_duration(d, n, "reclaim_min_runtime", false, 0, &mr, err)))
            return rc;
        q->reclaim_min_runtime = mr;
        q->priority = (int32_t)prio;
        c->nq = (uint32_t)i;
        if (qindex(c, q->name) >= 0)
            return conf_errf(err, d, conf_get(n, "name"), "name", "duplicate queue '%s'", q->name);
        q->parent = -1;
        if (parent) {
            q->parent = qindex(c, parent);
            if (q->parent < 0)
                return conf_errf(err, d, conf_get(n, "parent"), "parent",
                                 "expected the name of a queue listed before this one, got "
                                 "'%.40s'",
                                 parent);
        }
        c->nq = (uint32_t)i + 1;
    }
    return 0;
}

static int parse_leaf(const struct conf_doc *d, const struct conf_node *at, const char *key,
                      const struct kai_pol_cfg *c, const char *name, int32_t *out,
                      struct conf_err *err)
{
    int32_t i = qindex(c, name);
    if (i < 0 || !is_leaf(c, i))
        return conf_errf(err, d, at, key, "expected the name of a leaf queue, got '%.40s'", name);
    *out = i;
    return 0;
}

static int kai_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    static const char *const fkeys[] = {"inference", NULL};
    const struct conf_doc *d = &sc->doc;
    struct kai_pol_cfg *c = calloc(1, sizeof(*c));
    int rc;
    if (!c)
        return -ENOMEM;
    sc->policy.cfg = c;
    c->inf_fraction = 1;
    c->k = 1;                         /* KAI docs: kValue default 1 (time-based fair share) */
    c->window = 168 * 3600 * SIM_SEC; /* KAI default usage window, 1 week */
    c->half_life = 24 * 3600 * SIM_SEC;
    c->default_reclaim_min_runtime = 0;   /* minruntime plugin default "0s" */
    c->resolve = KAI_RESOLVE_LCA;         /* reclaimResolveMethod default */
    c->max_consolidation_preemptees = 16; /* KAI --max-consolidation-preemptees default */
    c->hold_timeout = 10 * 60 * SIM_SEC;  /* ours: a hold nobody takes within 10 min is dropped */
    if (sc->mixed)
        return scenario_refuse_modes(sc, p, SHARE_BIT(sc->sharing),
                                     "kai counts a card fraction in quota the same on every "
                                     "card, and its queues' quotas and fair shares are in those "
                                     "units: cards of different sharing modes (a MIG instance, "
                                     "a time-slicing replica, an MPS client) are not one unit",
                                     err);
    if (sc->sharing == SHARE_MIG)
        return conf_errf(err, d, p, "name",
                         "kai bin-packs fractions on shared cards: use sharing timeslice or mps "
                         "(or exclusive for whole cards), not mig");
    /* KAI counts a fraction of a card in quota the same on every card: a pool of whole cards
     * (a fraction there holds the card) would break that count. */
    for (uint32_t i = 0; sc->sharing != SHARE_EXCLUSIVE && i < sc->npools; i++)
        if (sc->pools[i].whole)
            return conf_errf(err, d, sc->pools[i].sharing_at, "sharing",
                             "pool '%s' takes whole cards (sharing: none), which policy 'kai' "
                             "does not support in a %s cluster (its quotas count card "
                             "fractions alike on every card); give the pool the cluster's mode",
                             sc->pools[i].name, share_mode_name(sc->sharing));
    const struct conf_node *qs = p ? conf_get(p, "queues") : NULL;
    const struct conf_node *mf = p ? conf_get(p, "manifests") : NULL;
    if (qs && mf)
        return conf_errf(err, d, mf, "manifests", "give queues or manifests, not both");
    if (mf) {
        if ((rc = parse_manifests(sc, mf, c, err)))
            return rc;
    } else if (qs) {
        if ((rc = parse_queues(d, qs, c, err)))
            return rc;
    } else {
        c->q = calloc(2, sizeof(*c->q));
        if (!c->q)
            return -ENOMEM;
        c->q[0] = (struct kai_qdef){"inference", -1, -2, 1, KAI_UNLIMITED, 1, -1};
        c->q[1] = (struct kai_qdef){"training", -1, -2, 1, KAI_UNLIMITED, 0, -1};
        c->nq = 2;
    }
    const struct conf_node *f = p ? conf_get(p, "gpu_fraction") : NULL;
    sim_time win = c->window, hl = c->half_life;
    if (p && ((rc = conf_check_keys(d, f, "gpu_fraction", fkeys, err)) ||
              (rc = conf_double(d, f, "inference", false, 0.01, 1, &c->inf_fraction, err)) ||
              (rc = conf_double(d, p, "k_value", false, 0, 100, &c->k, err)) ||
              (rc = conf_duration(d, p, "usage_window", false, KAI_HIST_BUCKETS, &win, err)) ||
              (rc = conf_duration(d, p, "half_life", false, 1, &hl, err))))
        return rc;
    c->window = win;
    c->half_life = hl;
    static const char *const methods[] = {"lca", "queue", NULL};
    int method = 0;
    int64_t maxp = c->max_consolidation_preemptees;
    if (p && ((rc = conf_duration(d, p, "default_reclaim_min_runtime", false, 0,
                                  &c->default_reclaim_min_runtime, err)) ||
              (rc = conf_enum(d, p, "reclaim_resolve_method", false, methods, &method, err)) ||
              (rc = conf_int(d, p, "max_consolidation_preemptees", false, 0, 64, &maxp, err)) ||
              (rc = conf_duration(d, p, "hold_timeout", false, SIM_SEC, &c->hold_timeout, err))))
        return rc;
    c->resolve = method == 1 ? KAI_RESOLVE_QUEUE : KAI_RESOLVE_LCA;
    c->max_consolidation_preemptees = (uint32_t)maxp;
    const char *iq = NULL;
    c->inf_queue = -1;
    if (p && (rc = conf_string(d, p, "inference_queue", false, &iq, err)))
        return rc;
    if (!iq && qindex(c, "inference") >= 0)
        iq = "inference";
    if (iq && (rc = parse_leaf(d, p ? p : NULL, "inference_queue", c, iq, &c->inf_queue, err)))
        return rc;
    if (sc->nservices && c->inf_queue < 0)
        return conf_errf(err, d, p, "inference_queue",
                         "missing (expected the leaf queue of the inference replicas)");
    c->train = calloc(c->nq, sizeof(*c->train));
    c->weights = calloc(c->nq, sizeof(*c->weights));
    if (!c->train || !c->weights)
        return -ENOMEM;
    const struct conf_node *tq = p ? conf_get(p, "training_queues") : NULL;
    if (tq) {
        if (tq->kind != CONF_SEQ || tq->n == 0 || tq->n > c->nq)
            return conf_errf(err, d, tq, "training_queues", "expected a list of leaf queues");
        for (size_t i = 0; i < tq->n; i++) {
            const struct conf_node *it = tq->items[i];
            if (it->kind != CONF_SCALAR)
                return conf_errf(err, d, it, "training_queues", "expected a queue name");
            if ((rc = parse_leaf(d, it, "training_queues", c, it->value, &c->train[i], err)))
                return rc;
        }
        c->ntrain = (uint32_t)tq->n;
    } else {
        for (uint32_t i = 0; i < c->nq; i++)
            if (is_leaf(c, (int32_t)i) && (int32_t)i != c->inf_queue)
                c->train[c->ntrain++] = (int32_t)i;
        if (c->ntrain == 0 && c->inf_queue >= 0)
            c->train[c->ntrain++] = c->inf_queue;
    }
    for (uint32_t i = 0; i < c->ntrain; i++)
        c->weights[i] = 1;
    const struct conf_node *w = p ? conf_get(p, "assign_weights") : NULL;
    if (w) {
        if (w->kind != CONF_SEQ || w->n != c->ntrain)
            return conf_errf(err, d, w, "assign_weights",
                             "expected one weight per training queue (%u)", c->ntrain);
        for (size_t i = 0; i < w->n; i++) {
            char *end;
            errno = 0;
            double v = w->items[i]->kind == CONF_SCALAR ? strtod(w->items[i]->value, &end) : -1;
            if (w->items[i]->kind != CONF_SCALAR || errno || *end || !(v >= 0) || v > 1e9)
                return conf_errf(err, d, w->items[i], "assign_weights",
                                 "expected a non-negative number");
            c->weights[i] = v;
        }
    }
    return 0;
}

/* ---- state ---- */

static int grow_jobs(struct kp *k, uint32_t j)
{
    if (j < k->njob)
        return 0;
    uint32_t n = k->njob ? 2 * k->njob : 256;
    while (n <= j)
        n *= 2;
    uint8_t *st = realloc(k->job_st, n);
    if (!st)
        return -ENOMEM;
    k->job_st = st;
    int32_t *q = realloc(k->job_q, n * sizeof(*q));
    if (!q)
        return -ENOMEM;
    k->job_q = q;
    uint8_t *why = realloc(k->job_why, n);
    if (!why)
        return -ENOMEM;
    k->job_why = why;
    sim_time *t0 = realloc(k->job_t0, n * sizeof(*t0));
    if (!t0)
        return -ENOMEM;
    k->job_t0 = t0;
    sim_time *pend = realloc(k->job_pend, n * sizeof(*pend));
    if (!pend)
        return -ENOMEM;
    k->job_pend = pend;
    for (uint32_t i = k->njob; i < n; i++)
        pend[i] = 0;
    memset(k->job_st + k->njob, KAI_JS_NONE, n - k->njob);
    memset(k->job_why + k->njob, 0, n - k->njob);
    for (uint32_t i = k->njob; i < n; i++)
        t0[i] = 0;
    k->njob = n;
    return 0;
}

static void update_shares(struct sim *s, struct kp *k)
{
    sim_time now = s->eng.now;
    for (uint32_t i = 0; i < k->nq; i++) {
        if (k->leaf[i] && now > k->last_t)
            kai_usage_add(&k->use[i], k->last_t, now, k->held[i]);
        k->q[i].hist = 0;
    }
    for (uint32_t i = k->nq; i-- > 0;) {
        if (k->leaf[i]) {
            k->q[i].hist = kai_usage_normalised(&k->use[i], now, k->capacity);
            k->q[i].request = k->held[i] + k->pend[i];
        }
        if (k->q[i].parent >= 0)
            k->q[k->q[i].parent].hist += k->q[i].hist;
    }
    kai_fair_share(k->q, k->nq, k->capacity, k->cfg->k);
}

static void cycle(struct sim *s, struct kp *k)
{
    if (k->busy) {
        k->again = true;
        return;
    }
    k->busy = true;
    unsigned passes = 0;
    do {
        k->again = false;
        kai_measure(s, k);
        kai_pending_units(s, k);
        update_shares(s, k);
        k->last_t = s->eng.now;
        kai_holds_expire(s, k);
        kai_act_allocate(s, k);
        kai_act_consolidate(s, k);
        kai_act_reclaim(s, k);
    } while (k->again && ++passes < 8); /* the next tick finishes what is left */
    k->busy = false;
}

static void enqueue(struct sim *s, struct kp *k, uint32_t j)
{
    struct jobq *q = &k->pq[k->job_q[j]];
    if (!pol_queue_job(s, q, j, false)) {
        k->job_st[j] = KAI_JS_NONE;
        return;
    }
    /* Keep submission order (a requeued job goes back to its place). */
    for (uint32_t i = q->n - 1; i > 0 && q->v[i - 1] > j; i--) {
        q->v[i] = q->v[i - 1];
        q->v[i - 1] = j;
    }
    k->job_st[j] = KAI_JS_PENDING;
    k->job_pend[j] = s->eng.now;
}

void kai_acct_start(struct sim *s, struct kp *k, uint32_t j)
{
    int32_t q = k->job_q[j];
    if (!k->qacct || q < 0)
        return;
    struct kai_qacct *a = &k->qacct[q];
    a->admissions++;
    pol_keep_delay(s, &a->delays, &a->n, &a->cap, sim_time_to_sec(s->eng.now - k->job_pend[j]));
}

void kai_acct_evict(struct kp *k, uint32_t j)
{
    if (k->qacct && k->job_q[j] >= 0)
        k->qacct[k->job_q[j]].evictions++;
}

/*
 * Per-queue results (manifests only; the built-in queues write none, as
 * before): GPU units allocated per queue now (a parent: its subtree), of
 * which above its deserved quota ("borrowed"), and "lent": the siblings'
 * use above their quotas spread over the siblings' unused quota in
 * proportion. Admissions, evictions and delays are training jobs'.
 */
static uint32_t kai_queues(const struct sim *s, void *state, struct pol_queue_stat *out,
                           uint32_t max)
{
    struct kp *k = state;
    if (!k || !k->cfg->manifest || !k->qalloc)
        return 0;
    const struct kai_pol_cfg *c = k->cfg;
    double *alloc = k->qalloc;
    for (uint32_t i = 0; i < k->nq; i++)
        alloc[i] = 0;
    for (uint32_t t = 0; t < s->cl.ntenants; t++) {
        const struct tenant *tn = &s->cl.tenants[t];
        if (!tn->used)
            continue;
        int32_t q;
        double u;
        if (tn->kind == TENANT_INFER) {
            q = c->inf_queue;
            u = kai_inf_units(s, k);
        } else {
            const struct job *j = &s->tr.jobs[tn->owner];
            bool known = tn->owner < k->njob && k->job_st[tn->owner] != KAI_JS_NONE &&
                         k->job_st[tn->owner] != KAI_JS_EVICTING;
            q = known ? k->job_q[tn->owner] : -1;
            u = kai_job_units(s, j) / j->spec.gpus;
        }
        if (q >= 0)
            alloc[q] += u;
    }
    for (uint32_t i = k->nq; i-- > 0;)
        if (c->q[i].parent >= 0)
            alloc[c->q[i].parent] += alloc[i];
    for (uint32_t i = 0; i < k->nq && i < max; i++) {
        const struct kai_qdef *d = &c->q[i];
        bool unl = d->quota < 0;
        double over = 0, unused = 0;
        for (uint32_t j = 0; j < k->nq; j++) {
            if (c->q[j].parent != d->parent || c->q[j].quota < 0)
                continue;
            over += alloc[j] > c->q[j].quota ? alloc[j] - c->q[j].quota : 0;
            unused += alloc[j] < c->q[j].quota ? c->q[j].quota - alloc[j] : 0;
        }
        double mine = !unl && alloc[i] < d->quota ? d->quota - alloc[i] : 0;
        uint32_t pending = 0;
        for (uint32_t j = 0; j < k->nq; j++) {
            int32_t a = (int32_t)j;
            while (a >= 0 && a != (int32_t)i)
                a = c->q[a].parent;
            if (a == (int32_t)i && k->leaf[j])
                pending += k->pq[j].n;
        }
        out[i] = (struct pol_queue_stat){
            .name = d->name,
            .nominal = unl ? INFINITY : d->quota,
            .admitted = alloc[i],
            .borrowed = !unl && alloc[i] > d->quota ? alloc[i] - d->quota : 0,
            .lent = unused > 0 && mine > 0 ? mine * (over < unused ? over / unused : 1.0) : 0,
            .pending = pending,
            .admissions = k->qacct[i].admissions,
            .evictions = k->qacct[i].evictions,
            .delays = k->qacct[i].delays,
            .ndelays = k->qacct[i].n};
    }
    return k->nq;
}

/* ---- autoscaler hook ---- */

/* The HPA's cards for a new replica: within quota, on cards held for it or with room. */
static uint32_t kai_pick(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards)
{
    struct kp *k = ctx;
    int32_t iq = k->cfg->inf_queue;
    double u = kai_svc_units(s, k, svc);
    kai_measure(s, k);
    if (iq < 0 || !kai_admissible(&k->q[iq], k->alloc[iq], k->nonpre[iq], u, KAI_PRIO_INFERENCE))
        return 0;
    uint32_t n = kai_pick_gang(s, k, svc, cards);
    kai_replica_placed(k, svc, cards, n); /* the replica asked for takes its place on the hold */
    return n;
}

/* ---- policy callbacks ---- */

static int kai_init(struct sim *s, void **state)
{
    struct kp *k = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    *state = k;
    const struct kai_pol_cfg *c = s->sc->policy.cfg;
    if (!c)
        return -EINVAL;
    k->cfg = c;
    k->nq = c->nq;
    k->capacity = s->cl.ngpus;
    k->q = calloc(c->nq, sizeof(*k->q));
    k->use = calloc(c->nq, sizeof(*k->use));
    k->alloc = calloc(c->nq, sizeof(double));
    k->nonpre = calloc(c->nq, sizeof(double));
    k->held = calloc(c->nq, sizeof(double));
    k->pend = calloc(c->nq, sizeof(double));
    k->qacct = calloc(c->nq, sizeof(*k->qacct));
    k->qalloc = calloc(c->nq, sizeof(double));
    k->wrr = calloc(c->nq, sizeof(double));
    k->pq = calloc(c->nq, sizeof(*k->pq));
    k->leaf = calloc(c->nq, sizeof(bool));
    k->card_used = calloc(s->cl.ngpus, sizeof(double));
    k->gang = calloc(s->cl.ngpus, sizeof(uint32_t));
    k->gang2 = calloc(2 * (size_t)s->cl.ngpus, sizeof(uint32_t));
    k->mark = calloc(s->cl.ngpus, sizeof(bool));
    k->hold = calloc(s->cl.ngpus, sizeof(*k->hold));
    k->want = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(uint32_t));
    if (!k->q || !k->use || !k->alloc || !k->nonpre || !k->held || !k->pend || !k->wrr || !k->pq ||
        !k->leaf || !k->card_used || !k->gang || !k->gang2 || !k->mark || !k->hold || !k->want ||
        !k->qacct || !k->qalloc)
        return -ENOMEM;
    double inf = s->sc->policy.inference_gpus;
    for (uint32_t i = 0; i < c->nq; i++) {
        const struct kai_qdef *d = &c->q[i];
        double quota = d->quota;
        if (quota < -1.5) /* defaults: inference_gpus for inference, the rest for training */
            quota = (int32_t)i == c->inf_queue ? inf : k->capacity - inf;
        k->q[i] = (struct kai_queue){.parent = d->parent,
                                     .quota = quota,
                                     .weight = d->weight,
                                     .limit = d->limit,
                                     .priority = d->priority};
        k->leaf[i] = is_leaf(c, (int32_t)i);
        int rc = kai_usage_init(&k->use[i], s->eng.now, c->window, c->half_life);
        if (rc)
            return rc;
    }
    /* Initial replicas: the service's count, else what the HPA wants for the first interval's
     * load (pol_initial_replicas), at least the count its fraction of a card needs for the load
     * at t = 0; 1 without HPA. */
    uint32_t *initial = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(*initial));
    if (!initial)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        const struct service_cfg *sc = &s->sc->services[i];
        uint32_t n = sc->replicas;
        if (n == 0 && s->sc->policy.autoscale)
            n = pol_initial_replicas(s, i);
        else if (n == 0)
            n = (sc->min_replicas || sc->max_replicas) ? sc->min_replicas
                                                       : s->sc->policy.as.min_replicas;
        if (n == 0 && !s->sc->policy.autoscale)
            n = 1;
        if (sc->replicas == 0 && s->sc->policy.autoscale && !sc->from_trace) {
            /* The run starts in steady state: as many replicas as the HPA would ask for the
             * load at t = 0 (rate / (capacity × target)), within its bounds; a fractional
             * replica counts at its fraction of a card (its speed when its card-mates are
             * busy: the HPA's busy metric scales it down within one window if too many). */
            double cap =
                pol_replica_capacity(sc) * s->sc->policy.as.target_util * kai_card_units(s, k, i);
            double want = cap > 0 ? ceil(rate_profile_at(&sc->arrivals, s->eng.now) / cap) : 0;
            uint32_t hi = sc->max_replicas ? sc->max_replicas : s->sc->policy.as.max_replicas;
            if (want > hi)
                want = hi;
            if (want > n)
                n = (uint32_t)want;
        }
        for (uint32_t r = 0; r < n; r++) {
            uint32_t cards[LLM_MAX_TP], m = kai_pick(s, k, i, cards);
            if (m == 0 || sim_start_replica_on(s, i, cards, m, 0) != 0)
                break;
            initial[i]++;
        }
    }
    int rc = 0;
    if (s->sc->policy.autoscale) {
        rc = pol_scaler_init(&k->ps, s, initial);
        k->scaling = rc == 0;
    }
    free(initial);
    return rc;
}

/* Leaf of a job: its spec.queue if it names a leaf, else smooth weighted round-robin. */
static int32_t job_leaf(struct kp *k, const struct job *j)
{
    const struct kai_pol_cfg *c = k->cfg;
    if (j->spec.queue[0]) {
        int32_t i = qindex(c, j->spec.queue);
        if (i >= 0 && k->leaf[i])
            return i;
    }
    double total = 0;
    int32_t best = -1;
    for (uint32_t i = 0; i < c->ntrain; i++) {
        k->wrr[i] += c->weights[i];
        total += c->weights[i];
        if (best < 0 || k->wrr[i] > k->wrr[best])
            best = (int32_t)i;
    }
    if (best < 0)
        return -1;
    k->wrr[best] -= total;
    return c->train[best];
}

static void kai_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct kp *k = state;
    const struct job *job = &s->tr.jobs[j];
    if (grow_jobs(k, j)) {
        sim_fail_oom(s, "holding a job's state");
        return;
    }
    int32_t q = job_leaf(k, job);
    /* A job of no GPU (the trainer refuses those; kept out here too) could never be placed. */
    if (q < 0 || job->spec.gpus == 0 || job->spec.gpus > s->cl.ngpus ||
        (kai_cap(&k->q[q]) < kai_job_units(s, job) - EPS)) {
        trainer_reject(&s->tr, j);
        return;
    }
    k->job_q[j] = q;
    enqueue(s, k, j);
    cycle(s, k);
}

static void kai_on_finish(struct sim *s, void *state, uint32_t j)
{
    struct kp *k = state;
    if (j < k->njob && k->job_st[j] != KAI_JS_NONE) {
        if (k->job_st[j] == KAI_JS_PENDING)
            jobq_remove(&k->pq[k->job_q[j]], j);
        k->job_st[j] = KAI_JS_NONE;
    }
    cycle(s, k);
}

static void kai_on_requeue(struct sim *s, void *state, uint32_t j)
{
    struct kp *k = state;
    if (j < k->njob && k->job_st[j] != KAI_JS_NONE && k->job_st[j] != KAI_JS_PENDING)
        enqueue(s, k, j);
    cycle(s, k);
}

static void kai_on_tick(struct sim *s, void *state)
{
    struct kp *k = state;
    if (k->scaling) {
        pol_scaler_tick(&k->ps, s, NULL, kai_pick, NULL, k);
        /* Replicas asked for and not placed stay pending (as pods do) until a cycle places them. */
        for (uint32_t i = 0; i < s->nsvcs && i < k->ps.n; i++) {
            uint32_t asked = autoscale_current(&k->ps.as[i]), have = service_replicas(&s->svcs[i]);
            k->want[i] = asked > have ? asked - have : 0;
        }
    }
    cycle(s, k);
}

static void kai_destroy(void *state)
{
    struct kp *k = state;
    if (!k)
        return;
    for (uint32_t i = 0; k->pq && i < k->nq; i++)
        jobq_release(&k->pq[i]);
    pol_scaler_release(&k->ps);
    free(k->q);
    free(k->use);
    free(k->alloc);
    free(k->nonpre);
    free(k->held);
    free(k->pend);
    free(k->wrr);
    free(k->pq);
    free(k->leaf);
    free(k->job_st);
    free(k->job_q);
    free(k->card_used);
    free(k->gang);
    free(k->gang2);
    free(k->mark);
    free(k->hold);
    free(k->want);
    free(k->job_why);
    free(k->job_t0);
    free(k->job_pend);
    for (uint32_t i = 0; k->qacct && i < k->nq; i++)
        free(k->qacct[i].delays);
    free(k->qacct);
    free(k->qalloc);
    free(k);
}

const struct policy_ops policy_kai = {
    .name = "kai",
    .keys = kai_keys,
    .parse = kai_parse,
    .free_cfg = kai_free_cfg,
    .init = kai_init,
    .on_submit = kai_on_submit,
    .on_finish = kai_on_finish,
    .on_requeue = kai_on_requeue,
    .on_tick = kai_on_tick,
    .destroy = kai_destroy,
    .queues = kai_queues,
};
