/* common.c — job queue, HPA loop per service, whole-card gang starts. */
#include "sim/policy/common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int jobq_push(struct jobq *q, uint32_t job)
{
    if (q->n == q->cap) {
        uint32_t cap = q->cap ? 2 * q->cap : 64;
        uint32_t *v = realloc(q->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n++] = job;
    return 0;
}

int jobq_insert_sorted(struct jobq *q, uint32_t job)
{
    int rc = jobq_push(q, job);
    if (rc)
        return rc;
    for (uint32_t i = q->n - 1; i > 0 && q->v[i - 1] > job; i--) {
        q->v[i] = q->v[i - 1];
        q->v[i - 1] = job;
    }
    return 0;
}

void jobq_remove_at(struct jobq *q, uint32_t i)
{
    if (i >= q->n)
        return;
    memmove(q->v + i, q->v + i + 1, (q->n - i - 1) * sizeof(*q->v));
    q->n--;
}

bool jobq_remove(struct jobq *q, uint32_t job)
{
    for (uint32_t i = 0; i < q->n; i++)
        if (q->v[i] == job) {
            jobq_remove_at(q, i);
            return true;
        }
    return false;
}

void jobq_release(struct jobq *q)
{
    free(q->v);
    memset(q, 0, sizeof(*q));
}

double pol_replica_capacity(const struct service_cfg *c)
{
    if (c->kind == SVC_LLM) /* at its TPOT SLO and mean lengths (sim/llm_conf.c) */
        return c->llm->cap_rps > 0 ? c->llm->cap_rps : 1;
    double ms = c->a_ms + c->b_ms * c->max_batch;
    return ms > 0 ? c->max_batch * 1e3 / ms : 1e9;
}

double pol_interval_rate(const struct sim *s, uint32_t i)
{
    sim_time span = s->eng.now - s->last_sample;
    if (span <= 0)
        return 0;
    return (double)s->svcs[i].win.arrived / sim_time_to_sec(span);
}

/* Service i's HPA settings: the policy's, with the service's own bounds, capped by the cluster. */
static struct autoscale_cfg service_as_cfg(const struct sim *s, uint32_t i)
{
    const struct service_cfg *c = &s->sc->services[i];
    struct autoscale_cfg a = s->sc->policy.as;
    a.capacity = pol_replica_capacity(c);
    if (c->min_replicas || c->max_replicas) {
        a.min_replicas = c->min_replicas;
        a.max_replicas = c->max_replicas ? c->max_replicas : a.max_replicas;
    }
    uint32_t room = 0; /* replicas the cards hold: each pool's cards × its slots */
    for (uint32_t k = 0; k < s->cl.npools; k++)
        room += s->cl.pools[k].ngpus * s->cl.pools[k].slots;
    if (a.max_replicas > room)
        a.max_replicas = room;
    if (a.min_replicas > a.max_replicas)
        a.min_replicas = a.max_replicas;
    return a;
}

uint32_t pol_initial_replicas(const struct sim *s, uint32_t i)
{
    if (s->sc->services[i].replicas)
        return s->sc->services[i].replicas;
    struct autoscale_cfg a = service_as_cfg(s, i);
    double rate = s->first_rate ? s->first_rate[i] : 0;
    const struct service_cfg *c = &s->sc->services[i];
    if (c->kind == SVC_LLM && c->llm->scale_metric == LLM_SCALE_TOKENS)
        /* What the HPA would see at that rate in steady state (pol_hpa_load): tokens/s =
         * rate × the mean output length, against the target per replica. */
        rate = rate * tok_mean(&c->llm->output) / c->llm->scale_target * a.capacity * a.target_util;
    return autoscale_replicas_for(&a, rate);
}

int pol_scaler_init(struct pol_scaler *ps, struct sim *s, const uint32_t *initial)
{
    memset(ps, 0, sizeof(*ps));
    ps->n = s->nsvcs;
    ps->as = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(*ps->as));
    if (!ps->as)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        struct autoscale_cfg a = service_as_cfg(s, i);
        a.initial = initial ? initial[i] : service_replicas(&s->svcs[i]);
        int rc = autoscale_init(&ps->as[i], &a, s->eng.now);
        if (rc)
            return rc;
    }
    return 0;
}

void pol_scaler_release(struct pol_scaler *ps)
{
    free(ps->as);
    memset(ps, 0, sizeof(*ps));
}

double pol_hpa_load(const struct sim *s, uint32_t i, const struct autoscale *a, double rate)
{
    const struct service_cfg *c = s->svcs[i].cfg;
    sim_time span = s->eng.now - s->last_sample;
    uint32_t reps = service_replicas(&s->svcs[i]);
    double cap_target = a->cfg.capacity * a->cfg.target_util;
    if (c->kind == SVC_LLM && c->llm->scale_metric == LLM_SCALE_TOKENS) {
        /* desired = ceil(tokens/s / target per replica): the rate that gives that ratio */
        double tps = span > 0 ? s->svcs[i].llm->win.tokens_out / sim_time_to_sec(span) : 0;
        return tps / c->llm->scale_target * cap_target;
    }
    if (c->kind == SVC_LLM && c->llm->scale_metric == LLM_SCALE_KV) {
        /* desired = ceil(current × occupancy / target), HPA's utilisation rule */
        double occ = llm_interval_kv(&s->svcs[i]);
        return isfinite(occ) ? occ / c->llm->scale_target * a->current * cap_target : 0;
    }
    /*
     * Two metrics, the larger recommendation wins (HPA's multi-metric rule):
     * the request rate, and the replicas' measured busy time, which also sees
     * replicas slowed by sharing their card.
     */
    if (span > 0 && reps > 0) {
        double util = s->svcs[i].win.busy_us / ((double)reps * (double)span);
        double equiv = util * reps * a->cfg.capacity;
        if (equiv > rate)
            rate = equiv;
    }
    return rate;
}

void pol_scaler_tick(struct pol_scaler *ps, struct sim *s, const double *forecast_rate,
                     pol_pick_fn pick, pol_freed_fn freed, void *ctx)
{
    for (uint32_t i = 0; i < ps->n; i++) {
        double rate = forecast_rate ? forecast_rate[i] : pol_interval_rate(s, i);
        rate = pol_hpa_load(s, i, &ps->as[i], rate);
        uint32_t want = (uint32_t)autoscale_observe(&ps->as[i], s->eng.now, rate);
        uint32_t have = service_replicas(&s->svcs[i]);
        while (have < want) {
            uint32_t cards[LLM_MAX_TP], n = pick(s, ctx, i, cards);
            if (n == 0 || sim_start_replica_on(s, i, cards, n, s->sc->policy.as.up_delay) != 0) {
                ps->blocked += want - have;
                break;
            }
            ps->scale_ups++;
            have++;
        }
        while (have > want) {
            uint32_t gpu;
            if (sim_stop_replica(s, i, &gpu))
                break;
            ps->scale_downs++;
            have--;
            if (freed)
                freed(s, ctx, gpu);
        }
    }
}

bool pol_queue_job(struct sim *s, struct jobq *q, uint32_t j, bool sorted)
{
    if ((sorted ? jobq_insert_sorted(q, j) : jobq_push(q, j)) == 0)
        return true;
    sim_fail_oom(s, "queueing a training job");
    return false;
}

void pol_keep_delay(struct sim *s, double **v, size_t *n, size_t *cap, double d)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        double *nv = realloc(*v, c * sizeof(*nv));
        if (!nv) {
            sim_fail_oom(s, "keeping the admission delays");
            return;
        }
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = d;
}

uint32_t pol_start_whole(struct sim *s, struct jobq *q, bool strict, uint32_t max_gpus)
{
    return pol_start_whole_masked(s, q, strict, max_gpus, NULL);
}

uint32_t pol_start_whole_masked(struct sim *s, struct jobq *q, bool strict, uint32_t max_gpus,
                                const bool *ok)
{
    uint32_t started = 0, *gang = malloc((s->cl.ngpus ? s->cl.ngpus : 1) * sizeof(*gang));
    if (!gang) {
        sim_fail_oom(s, "placing training jobs");
        return 0;
    }
    for (uint32_t i = 0; i < q->n;) {
        uint32_t j = q->v[i];
        const struct job *job = &s->tr.jobs[j];
        if (job->state != JOB_QUEUED) {
            jobq_remove_at(q, i);
            continue;
        }
        if (job->spec.gpus > max_gpus) {
            trainer_reject(&s->tr, j);
            jobq_remove_at(q, i);
            continue;
        }
        if (pol_find_job_gang(s, j, ok, gang) == 0 && trainer_start(&s->tr, j, gang) >= 0) {
            jobq_remove_at(q, i);
            started++;
            continue;
        }
        if (strict)
            break;
        i++;
    }
    free(gang);
    return started;
}

uint32_t pol_node_inference_cards(const struct cluster *cl, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t g = cluster_node_first(cl, n); g < cluster_node_end(cl, n); g++) {
        const struct card *cd = &cl->cards[g];
        bool inf = false;
        for (uint32_t t = 0; t < cd->nten && !inf; t++)
            inf = cl->tenants[cd->ten[t]].kind == TENANT_INFER;
        k += inf;
    }
    return k;
}

uint32_t pol_pick_compact(struct sim *s, void *ctx, uint32_t svc)
{
    (void)ctx;
    /* The first card of the node-compact gang (common_tp.c: the same node rule, and the
     * preferred pools first under constraints). */
    uint32_t cards[LLM_MAX_TP];
    return pol_pick_gang_masked(s, svc, NULL, cards) ? cards[0] : UINT32_MAX;
}

void pol_split_by_peak(const struct sim *s, uint32_t n, uint32_t *out)
{
    double tot = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        tot += s->peak_rate[i] + 1e-9;
    uint32_t given = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        double w = (s->peak_rate[i] + 1e-9) / tot;
        out[i] = (uint32_t)(w * n);
        if (out[i] == 0)
            out[i] = 1;
        given += out[i];
    }
    for (uint32_t i = 0; given < n && s->nsvcs; i = (i + 1) % s->nsvcs, given++)
        out[i]++;
}

void pol_fifo_start(struct sim *s, struct pol_fifo *f)
{
    if (f->in_start) {
        f->again = true;
        return;
    }
    f->in_start = true;
    do {
        f->again = false;
        f->pass(s, f);
    } while (f->again);
    f->in_start = false;
}

void pol_fifo_release(struct pol_fifo *f)
{
    jobq_release(&f->q);
    if (f->scaling)
        pol_scaler_release(&f->ps);
    free(f->gang);
    f->gang = NULL;
}

void pol_fifo_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct pol_fifo *f = state;
    if (f->can_fit && !f->can_fit(s, f, j)) {
        trainer_reject(&s->tr, j);
        return;
    }
    if (!pol_queue_job(s, &f->q, j, false))
        return;
    pol_fifo_start(s, f);
}

void pol_fifo_on_finish(struct sim *s, void *state, uint32_t j)
{
    (void)j;
    pol_fifo_start(s, state);
}

void pol_fifo_on_requeue(struct sim *s, void *state, uint32_t j)
{
    struct pol_fifo *f = state;
    if (!pol_queue_job(s, &f->q, j, false))
        return;
    pol_fifo_start(s, f);
}

void pol_fifo_on_tick(struct sim *s, void *state)
{
    struct pol_fifo *f = state;
    if (f->scaling)
        pol_scaler_tick(&f->ps, s, NULL, f->pick, NULL, f);
    pol_fifo_start(s, f);
}

int pol_place_initial(struct sim *s, pol_pick_fn pick, void *ctx)
{
    const struct scenario *sc = s->sc;
    uint32_t fixed = 0, flexible = 0; /* cards: a tensor-parallel replica holds several */
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        fixed += sc->services[i].replicas * pol_gang_size(s, i);
        flexible += sc->services[i].replicas == 0;
    }
    uint32_t pool = sc->policy.inference_gpus, spare = pool > fixed ? pool - fixed : 0;
    /* Weights: the peak rates; with a tensor-parallel service the cards each needs at its
     * peak (pol_peak_cards: a split by rate gives a 4-card replica a fraction of itself). */
    bool by_need = pol_any_tp(s);
    double tot = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        if (sc->services[i].replicas == 0)
            tot += by_need ? pol_peak_cards(s, i) : s->peak_rate[i] + 1e-9;
    uint32_t given = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t want = sc->services[i].replicas;
        if (want == 0) {
            double w = (by_need ? pol_peak_cards(s, i) : s->peak_rate[i] + 1e-9) / tot;
            want = --flexible == 0 ? spare - given : (uint32_t)(w * spare + 0.5);
            if (want == 0)
                want = 1;
            given += want;
            want = (want + pol_gang_size(s, i) - 1) / pol_gang_size(s, i); /* cards to replicas */
        }
        for (uint32_t k = 0; k < want; k++) {
            uint32_t cards[LLM_MAX_TP], n = pick(s, ctx, i, cards);
            if (n == 0)
                return -ENOSPC;
            int rc = sim_start_replica_on(s, i, cards, n, 0);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int pol_manifest_paths(const struct conf_doc *d, const struct conf_node *mf, const char ***paths,
                       uint32_t *n, struct conf_err *err)
{
    uint32_t k = mf->kind == CONF_SEQ ? (uint32_t)mf->n : 1;
    if (k == 0)
        return conf_errf(err, d, mf, "manifests", "expected a file path or a list of them");
    const char **v = calloc(k, sizeof *v);
    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < k; i++) {
        const struct conf_node *it = mf->kind == CONF_SEQ ? mf->items[i] : mf;
        if (it->kind != CONF_SCALAR || !it->value[0]) {
            free(v);
            return conf_errf(err, d, it, "manifests", "expected a file path or a list of them");
        }
        v[i] = it->value;
    }
    *paths = v;
    *n = k;
    return 0;
}

/* ---- MIG instances (common.h) ---- */

bool pol_mig_slot_free(const struct cluster *c, uint32_t gpu, double mem)
{
    const struct card *g = &c->cards[gpu];
    if (g->reconfiguring || g->nten >= cluster_card_slots(c, gpu))
        return false;
    double used = 0;
    for (uint32_t i = 0; i < g->nten; i++)
        used += c->tenants[g->ten[i]].st.mem_gib;
    return used + mem <= c->pools[g->pool].mem_gib;
}

int pol_mig_smallest_free(const struct cluster *c, uint32_t gpu, const char *want, double mem,
                          int *mib)
{
    const struct card *g = &c->cards[gpu];
    if (g->reconfiguring)
        return -1;
    if (cluster_card_mode(c, gpu) != SHARE_MIG) {
        const struct gpu_spec *spec = cluster_card_spec(c, gpu);
        if (want || !pol_mig_slot_free(c, gpu, mem))
            return -1;
        *mib = spec->memory_mib / (int)cluster_card_slots(c, gpu);
        return MIG_MAX_INSTANCES;
    }
    int best = -1;
    for (int k = 0; k < (int)g->layout.n; k++) {
        const struct mig_profile *p = g->layout.inst[k].profile;
        if (g->inst_tenant[k] != TENANT_NONE || (want && strcasecmp(p->name, want)) ||
            !mig_fits_memory(p, mem))
            continue;
        if (best < 0 || p->memory_mib < g->layout.inst[best].profile->memory_mib)
            best = k;
    }
    if (best >= 0)
        *mib = g->layout.inst[best].profile->memory_mib;
    return best;
}

uint32_t pol_mig_card(struct sim *s, uint32_t svc, const char *want,
                      bool (*ok)(const struct sim *, void *, uint32_t), void *ctx)
{
    const struct service_cfg *c = &s->sc->services[svc];
    uint32_t best = UINT32_MAX;
    int best_mib = 0;
    bool best_pref = false;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        if (ok && !ok(s, ctx, g))
            continue;
        int mib = 0;
        int k = pol_mig_smallest_free(&s->cl, g, want, c->mem_gib, &mib);
        if (k < 0 || !sim_svc_allows(s, svc, g)) /* placement constraints (sim/sim.h) */
            continue;
        bool pref = sim_svc_prefers(s, svc, g);
        if (best == UINT32_MAX || (pref && !best_pref) || (pref == best_pref && mib < best_mib)) {
            best = g;
            best_mib = mib;
            best_pref = pref;
        }
    }
    return best;
}

const struct mig_profile *pol_mig_profile_for(const struct sim *s, uint32_t svc, uint32_t pool)
{
    const struct cluster *c = &s->cl;
    if (pool >= c->npools || c->pools[pool].ngpus == 0 || c->pools[pool].mode != SHARE_MIG)
        return NULL;
    const struct card *g = &c->cards[c->pools[pool].first_gpu];
    const struct service_cfg *sc = &s->sc->services[svc];
    const char *want = sc->mig_profile && *sc->mig_profile ? sc->mig_profile : NULL;
    const struct mig_profile *best = NULL;
    for (size_t k = 0; k < g->layout.n; k++) {
        const struct mig_profile *p = g->layout.inst[k].profile;
        if ((want && strcasecmp(p->name, want)) || !mig_fits_memory(p, sc->mem_gib))
            continue;
        if (!best || p->memory_mib < best->memory_mib)
            best = p;
    }
    return best;
}

uint32_t pol_mig_count(const struct cluster *c, uint32_t pool, const struct mig_profile *p)
{
    uint32_t n = 0;
    if (pool >= c->npools)
        return 0;
    const struct cluster_pool *pl = &c->pools[pool];
    for (uint32_t g = pl->first_gpu; g < pl->first_gpu + pl->ngpus; g++)
        for (size_t k = 0; k < c->cards[g].layout.n; k++)
            n += c->cards[g].layout.inst[k].profile == p;
    return n;
}
