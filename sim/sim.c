/* sim.c — build one run from a scenario, run it, close its metrics intervals. */
#include "sim/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/power.h"
#include "sim/llm.h"
#include "traces/synth.h"

static uint64_t match_mask(const struct scenario *sc, const struct pool_match *m)
{
    return m->given ? pool_match_mask(sc->pools, sc->npools, m) : POOL_ALL;
}

/*
 * The pools a job log's GPU type allows (cluster.pools with an openb or PAI
 * log): each '|'-separated type through training.jobs.trace.gpu_types, then
 * the built-in table (sim/pool_cfg.h); a type naming no board allows every
 * pool. An unknown type stops the run with the log's file:line.
 */
static int job_type_pools(struct sim *s, const struct job *jb, uint64_t *mask)
{
    const struct scenario *sc = s->sc;
    const char *t = jb->spec.gpu_type;
    *mask = 0;
    while (*t) {
        const char *bar = strchr(t, '|');
        size_t n = bar ? (size_t)(bar - t) : strlen(t);
        char one[sizeof(jb->spec.gpu_type)];
        snprintf(one, sizeof(one), "%.*s", (int)n, t);
        const char *board = NULL;
        if (gpu_type_lookup(&sc->training.trace.gpu_types, one, &board)) {
            snprintf(s->err, sizeof(s->err),
                     "%s:%lld: column '%s': unknown GPU type '%s' (map it onto a board or 'any' "
                     "in training.jobs.trace.gpu_types, e.g. {%s: a100-sxm4-80gb}; "
                     "docs/scenario.md lists the built-in names)",
                     sc->training.trace.path, (long long)jb->spec.line,
                     sc->training.trace.format == JOBFMT_PAI ? "gpu_type" : "gpu_spec", one, one);
            return -EINVAL;
        }
        if (!board) {
            *mask = POOL_ALL;
            return 0;
        }
        struct pool_match m = {.gpu = board, .given = true};
        *mask |= pool_match_mask(sc->pools, sc->npools, &m);
        t += n + (bar != NULL);
    }
    if (*mask == 0 && !jb->spec.gpu_type[0])
        *mask = POOL_ALL;
    return 0;
}

/*
 * A job's pools (training.require / prefer, its log GPU type). One that no
 * pool it may use can ever hold (more GPUs than they have, or none) is
 * rejected here, at submission, and counted, instead of waiting forever in
 * the policy's queue. False when it was rejected (or the run must stop).
 */
static bool job_constrain(struct sim *s, uint32_t j)
{
    const struct scenario *sc = s->sc;
    struct job *jb = &s->tr.jobs[j];
    /* A warm start's job keeps the pool its snapshot row names. */
    jb->pools_allow =
        match_mask(sc, &sc->training.place.require) & (jb->snap ? jb->pools_allow : POOL_ALL);
    if (s->map_types) {
        uint64_t t = POOL_ALL;
        if (job_type_pools(s, jb, &t)) {
            s->event_error = -EINVAL;
            s->eng.stop = true;
            trainer_reject(&s->tr, j);
            return false;
        }
        jb->pools_allow &= t;
    }
    uint64_t pref = match_mask(sc, &sc->training.place.prefer) & jb->pools_allow;
    jb->pools_prefer = pref ? pref : POOL_ALL;
    uint64_t cards = 0;
    for (uint32_t p = 0; p < s->cl.npools; p++)
        if ((jb->pools_allow >> p) & 1u)
            cards += s->cl.pools[p].ngpus;
    if (jb->spec.gpus <= cards)
        return true;
    s->unplaceable++;
    trainer_reject(&s->tr, j);
    return false;
}

static void on_job_submit(void *ctx, uint32_t j)
{
    struct sim *s = ctx;
    if (s->constrained && !job_constrain(s, j))
        return;
    s->pol->on_submit(s, s->pol_state, j);
}

int sim_pinned_gang(const struct sim *s, uint32_t j, const bool *ok, uint32_t *out)
{
    const struct job *jb = &s->tr.jobs[j];
    if (jb->pin_node == UINT32_MAX || jb->start >= 0)
        return 1;
    const struct cluster *c = &s->cl;
    uint32_t k = 0;
    for (uint32_t g = cluster_node_first(c, jb->pin_node);
         g < cluster_node_end(c, jb->pin_node) && k < jb->spec.gpus; g++)
        if (c->cards[g].nten == 0 && !c->cards[g].reconfiguring && (!ok || ok[g]) &&
            cluster_card_in(c, g, jb->pools_allow))
            out[k++] = g;
    return k == jb->spec.gpus ? 0 : -ENOSPC;
}

int sim_find_gang(const struct sim *s, uint32_t j, uint32_t *out)
{
    const struct job *jb = &s->tr.jobs[j];
    int pin = sim_pinned_gang(s, j, NULL, out);
    if (pin <= 0)
        return pin;
    if (jb->pools_prefer != POOL_ALL &&
        cluster_find_gang_in(&s->cl, jb->spec.gpus, out, jb->pools_prefer & jb->pools_allow) == 0)
        return 0;
    return cluster_find_gang_in(&s->cl, jb->spec.gpus, out, jb->pools_allow);
}

/* Services' pool masks from their require / prefer (sim/pool_cfg.h). */
static int constrain_services(struct sim *s)
{
    const struct scenario *sc = s->sc;
    bool any = sc->training.place.require.given || sc->training.place.prefer.given;
    for (size_t i = 0; i < sc->nservices; i++)
        any = any || sc->services[i].place.require.given || sc->services[i].place.prefer.given;
    /* A mixed fleet reads the GPU types of an openb or PAI log (the single-pool form never:
     * its results stay those of a fleet of one board). */
    s->map_types =
        sc->pools_given && sc->training.from_trace &&
        (sc->training.trace.format == JOBFMT_OPENB || sc->training.trace.format == JOBFMT_PAI);
    any = any || s->map_types;
    s->constrained = any;
    if (!any)
        return 0;
    size_t n = sc->nservices ? sc->nservices : 1;
    s->svc_allow = calloc(n, sizeof(*s->svc_allow));
    s->svc_prefer = calloc(n, sizeof(*s->svc_prefer));
    if (!s->svc_allow || !s->svc_prefer)
        return -ENOMEM;
    for (size_t i = 0; i < sc->nservices; i++) {
        s->svc_allow[i] = match_mask(sc, &sc->services[i].place.require);
        uint64_t pref = match_mask(sc, &sc->services[i].place.prefer) & s->svc_allow[i];
        s->svc_prefer[i] = pref ? pref : POOL_ALL;
    }
    return 0;
}

static void on_job_finish(void *ctx, uint32_t j)
{
    struct sim *s = ctx;
    s->pol->on_finish(s, s->pol_state, j);
}

static void on_job_requeue(void *ctx, uint32_t j)
{
    struct sim *s = ctx;
    if (s->pol->on_requeue)
        s->pol->on_requeue(s, s->pol_state, j);
    else
        s->pol->on_submit(s, s->pol_state, j);
}

/* A card changed a tenant's speed: tell its owner. */
static void on_tenant_speed(void *ctx, uint32_t tid)
{
    struct sim *s = ctx;
    const struct tenant *t = &s->cl.tenants[tid];
    if (t->kind == TENANT_INFER)
        service_on_speed(&s->svcs[t->owner], t->member);
    else
        trainer_on_speed(&s->tr, t->owner);
}

/*
 * Fault clocks. A tenant that is up carries exactly one pending fatal-fault
 * event, its handle kept on the tenant (t->fault_ev), drawn exponential with
 * mean 1 / fault_rate_per_h when it comes up:
 *   - a training member is up from its placement until it leaves its card
 *     (a fault kills its job: it leaves, and its next placement draws anew);
 *   - an inference replica is up while it serves: from being ready (placed
 *     without a start-up delay, or at the end of it) until it goes down or
 *     leaves. A replica down — starting, or restarting after a fault — holds
 *     its slot but runs no CUDA context: it cannot fault, nor die of a
 *     card-mate's fault; its clock starts again when it is up.
 * The clock is cancelled when the tenant goes down or leaves and re-drawn only
 * when it comes up again (exponential gaps: a fresh draw has the same law as
 * the rest of the old one). So faults are Poisson with mean rate × tenant-time
 * up, in every sharing mode (docs/models.md "Faults").
 */
static void on_fault(void *ctx, uint64_t arg);

/* Event arg naming one tenant incarnation: its id and generation. */
static uint64_t tenant_arg(const struct sim *s, uint32_t tid)
{
    return (uint64_t)tid | (uint64_t)s->cl.tenants[tid].gen << 32;
}

/* The tenant an event arg names, or NULL if it has left (its id may be reused). */
static struct tenant *arg_tenant(struct sim *s, uint64_t arg)
{
    uint32_t tid = (uint32_t)arg, gen = (uint32_t)(arg >> 32);
    if (tid >= s->cl.ntenants || !s->cl.tenants[tid].used || s->cl.tenants[tid].gen != gen)
        return NULL;
    return &s->cl.tenants[tid];
}

/* A replica starting or restarting: no CUDA context (see above). */
static bool tenant_down(const struct sim *s, uint32_t tid)
{
    const struct tenant *t = &s->cl.tenants[tid];
    return t->kind == TENANT_INFER && s->svcs[t->owner].reps[t->member].down;
}

void sim_fail_oom(struct sim *s, const char *what)
{
    if (s->event_error)
        return; /* the first error stands */
    s->event_error = -ENOMEM;
    snprintf(s->err, sizeof(s->err), "out of memory %s", what);
    s->eng.stop = true;
}

/* An event could not be scheduled: stop the run (sim_run reports s->err). */
static void event_failed(struct sim *s)
{
    sim_fail_oom(s, "in the event queue");
}

static void fault_clock_start(struct sim *s, uint32_t tid)
{
    double rate = s->cl.knobs.fault_rate_per_h;
    if (!(rate > 0))
        return;
    struct tenant *t = &s->cl.tenants[tid];
    engine_cancel(&s->eng, &t->fault_ev); /* one clock per tenant, whatever the caller did */
    double dt = rng_exponential(&s->fault_rng, 3600.0 / rate);
    if (engine_at(&s->eng, s->eng.now + sim_time_from_sec(dt), on_fault, s, tenant_arg(s, tid),
                  &t->fault_ev))
        event_failed(s);
}

static void fault_clock_stop(struct sim *s, uint32_t tid)
{
    engine_cancel(&s->eng, &s->cl.tenants[tid].fault_ev);
}

/* cluster on_place: a training member is up from its placement (replicas: sim_start_replica). */
static void on_tenant_placed(void *ctx, uint32_t tid)
{
    struct sim *s = ctx;
    if (s->cl.tenants[tid].kind == TENANT_TRAIN)
        fault_clock_start(s, tid);
}

/* cluster on_leave: the tenant's clock goes with it. */
static void on_tenant_leave(void *ctx, uint32_t tid)
{
    fault_clock_stop(ctx, tid);
}

/*
 * A replica's start-up or restart delay is over. The arg names the tenant
 * incarnation, not the replica slot: a replica removed during its delay
 * leaves a stale event, even if its slot (or tenant id) was reused since.
 */
static void on_replica_up(void *ctx, uint64_t arg)
{
    struct sim *s = ctx;
    struct tenant *t = arg_tenant(s, arg);
    if (!t || t->kind != TENANT_INFER)
        return;
    struct service *sv = &s->svcs[t->owner];
    uint32_t ri = t->member;
    if (!sv->reps[ri].down)
        return;
    service_replica_up(sv, ri);
    if (sv->reps[ri].down)
        return;
    if (sv->llm) /* every card of a tensor-parallel replica runs again */
        for (uint32_t i = 0; i < sv->llm->reps[ri].ntp; i++)
            fault_clock_start(s, sv->llm->reps[ri].tids[i]);
    else
        fault_clock_start(s, (uint32_t)arg);
}

/* A tenant's fault clock ran out. */
static void on_fault(void *ctx, uint64_t arg)
{
    struct sim *s = ctx;
    struct tenant *t = arg_tenant(s, arg);
    if (!t)
        return; /* cannot happen: leaving cancels the clock */
    t->fault_ev = (struct evq_handle){0};
    sim_inject_fault(s, (uint32_t)arg);
}

/*
 * A fatal fault in a tenant: the sharing mode decides who dies (MIG: its
 * instance; MPS and time-slicing: the whole card), except replicas already
 * down. Training members are killed (their job restarts from its last
 * checkpoint); replicas go down and are up again after the restart delay.
 * Every victim's clock stops first: a kill may requeue a job whose policy
 * places it again at once, reusing the victims' tenant ids.
 */
int sim_inject_fault(struct sim *s, uint32_t tid)
{
    if (tid >= s->cl.ntenants || !s->cl.tenants[tid].used)
        return -EINVAL;
    if (tenant_down(s, tid))
        return 0;
    uint32_t victims[CARD_MAX_TENANTS + 1];
    struct tenant vt[CARD_MAX_TENANTS + 1];
    uint32_t all = cluster_fault_victims(&s->cl, tid, victims), n = 0;
    for (uint32_t i = 0; i < all; i++)
        if (!tenant_down(s, victims[i])) {
            victims[n] = victims[i];
            vt[n++] = s->cl.tenants[victims[i]];
        }
    s->faults++;
    s->fault_victims += n;
    uint32_t pool = cluster_pool_of_card(&s->cl, s->cl.tenants[tid].gpu);
    if (s->pool_faults) {
        s->pool_faults[pool]++;
        s->pool_fault_victims[pool] += n;
    }
    for (uint32_t i = 0; i < n; i++)
        fault_clock_stop(s, victims[i]);
    for (uint32_t i = 0; i < n; i++) {
        const struct tenant *cur = &s->cl.tenants[victims[i]];
        if (!cur->used || cur->gen != vt[i].gen)
            continue; /* left with an earlier victim (its gang) */
        if (vt[i].kind == TENANT_TRAIN) {
            trainer_kill(&s->tr, vt[i].owner);
            continue;
        }
        struct service *sv = &s->svcs[vt[i].owner];
        service_replica_down(sv, vt[i].member);
        if (!sv->reps[vt[i].member].gone &&
            engine_at(&s->eng, s->eng.now + s->sc->restart_delay, on_replica_up, s,
                      tenant_arg(s, victims[i]), NULL))
            event_failed(s);
    }
    return (int)n;
}

/*
 * A card-mate's memory overflow OOM-killed this tenant (cluster on_oom:
 * time-slicing without quotas). It dies at once, in an event of its own (the
 * placement that killed it may be inside a policy's or the trainer's loop): a
 * training member kills its job (restart from the last checkpoint, queued
 * again, as a fault); a replica loses its batch and leaves its card (its
 * restart in place would fail again while the card is full; the HPA or the
 * policy places a new one).
 */
static void on_oom_kill(void *ctx, uint64_t arg)
{
    struct sim *s = ctx;
    struct tenant *t = arg_tenant(s, arg);
    if (!t)
        return; /* left meanwhile (its gang died with an earlier victim) */
    s->oom_kills++;
    fault_clock_stop(s, (uint32_t)arg);
    if (t->kind == TENANT_TRAIN) {
        trainer_kill(&s->tr, t->owner);
        return;
    }
    struct service *sv = &s->svcs[t->owner];
    uint32_t ri = t->member;
    service_replica_down(sv, ri);
    if (!sv->reps[ri].gone)
        service_remove_replica(sv, ri);
}

static void on_tenant_oom(void *ctx, uint32_t tid)
{
    struct sim *s = ctx;
    if (engine_at(&s->eng, s->eng.now, on_oom_kill, s, tenant_arg(s, tid), NULL))
        event_failed(s);
}

/* The warm-up snapshot: card time by state and allocation, service counters and histograms. */
static int take_warm(struct sim *s, sim_time now)
{
    size_t w = USE_NSTATES + 1;
    s->warm.acc = malloc((size_t)s->cl.ngpus * w * sizeof(double));
    s->warm.tot = malloc((s->nsvcs ? s->nsvcs : 1) * sizeof(*s->warm.tot));
    s->warm.h = malloc((s->nsvcs ? s->nsvcs : 1) * sizeof(*s->warm.h));
    s->warm.q = malloc((s->nsvcs ? s->nsvcs : 1) * sizeof(*s->warm.q));
    s->warm.llm = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(*s->warm.llm));
    s->warm.ttft = malloc((s->nsvcs ? s->nsvcs : 1) * sizeof(*s->warm.ttft));
    s->warm.tpot = malloc((s->nsvcs ? s->nsvcs : 1) * sizeof(*s->warm.tpot));
    if (!s->warm.acc || !s->warm.tot || !s->warm.h || !s->warm.q || !s->warm.llm || !s->warm.ttft ||
        !s->warm.tpot)
        return -ENOMEM;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct card *c = &s->cl.cards[g];
        for (int k = 0; k < USE_NSTATES; k++)
            s->warm.acc[g * w + (size_t)k] = c->acc[k];
        s->warm.acc[g * w + USE_NSTATES] = c->alloc_us;
    }
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        s->warm.tot[i] = s->svcs[i].tot;
        s->warm.h[i] = *s->svcs[i].h_total; /* + the interval being closed, not merged yet */
        hist_merge(&s->warm.h[i], s->svcs[i].h_win);
        s->warm.q[i] = *s->svcs[i].q_total;
        hist_merge(&s->warm.q[i], s->svcs[i].q_win);
        const struct llm_svc *ls = s->svcs[i].llm;
        if (!ls)
            continue;
        s->warm.llm[i] = ls->tot;
        s->warm.ttft[i] = *ls->ttft_tot;
        hist_merge(&s->warm.ttft[i], ls->ttft_win);
        s->warm.tpot[i] = *ls->tpot_tot;
        hist_merge(&s->warm.tpot[i], ls->tpot_win);
    }
    s->warm.at = now;
    return 0;
}

/* Close the metrics interval [last_sample, now). */
static void close_interval(struct sim *s)
{
    sim_time now = s->eng.now;
    if (now <= s->last_sample && s->nsamples > 0)
        return;
    cluster_account_all(&s->cl, now);
    for (uint32_t i = 0; i < s->nsvcs; i++)
        service_sync(&s->svcs[i]);
    if (s->sc->warmup > 0 && s->warm.at == 0 && now >= s->sc->warmup && take_warm(s, now)) {
        snprintf(s->err, sizeof(s->err), "out of memory for the warm-up snapshot");
        s->eng.stop = true;
    }
    if (s->sink.interval && !s->sink_error) {
        s->sink_error = s->sink.interval(s->sink.ctx, s, s->last_sample, now);
        if (s->sink_error) {
            snprintf(s->err, sizeof(s->err), "cannot write the results file (HDF5 error)");
            s->eng.stop = true;
        }
    }
    for (uint32_t i = 0; s->pol->on_pressure && i < s->nsvcs; i++) {
        const struct service *sv = &s->svcs[i];
        double share = sv->win.served ? (double)sv->win.within_slo / (double)sv->win.served : 1;
        uint64_t room = (uint64_t)service_replicas(sv) * sv->cfg->max_batch;
        /* An SLO below a lone request's service time is not pressure more replicas relieve. */
        bool reachable = (sv->cfg->a_ms + sv->cfg->b_ms) * 1e3 < (double)sv->cfg->slo;
        if ((reachable && share < sv->cfg->slo_quantile) || service_waiting(sv) > room)
            s->pol->on_pressure(s, s->pol_state, i);
    }
    if (s->pol->on_tick)
        s->pol->on_tick(s, s->pol_state);
    cluster_reset_interval(&s->cl);
    for (uint32_t i = 0; i < s->nsvcs; i++)
        service_reset_interval(&s->svcs[i]);
    s->nsamples++;
    s->last_sample = now;
}

static void on_sample(void *ctx, uint64_t arg)
{
    struct sim *s = ctx;
    (void)arg;
    close_interval(s);
    sim_time next = s->eng.now + s->sc->sample_interval;
    if (next > s->sc->duration)
        next = s->sc->duration;
    if (next > s->eng.now)
        engine_at(&s->eng, next, on_sample, s, 0, &s->sample_ev);
}

/* Open a service's arrival trace; on failure s->err names the file and the problem. */
static int open_arrival_trace(struct sim *s, const struct service_cfg *c, uint64_t stream,
                              struct arrival_source **out)
{
    const struct arrival_trace_cfg *t = &c->trace;
    struct trace_time_opts o;
    struct trace_err err = {{0}};
    trace_time_opts_init(&o);
    o.tz_s = s->sc->tz_offset_min * 60;
    o.origin = t->origin;
    o.offset = t->offset;
    o.scale = t->scale;
    o.loop = t->loop;
    o.loop_period = t->loop_period;
    o.clip_end = s->sc->duration;
    o.seed = s->seed;
    o.stream_id = stream;
    o.skip_bad = t->skip_bad;
    o.tokens = c->kind == SVC_LLM; /* ServeGen clients' dataset.json lengths */
    switch (t->format) {
    case ARRFMT_AZURE:
        *out = arrivals_azure_create(t->path, &o, &err);
        break;
    case ARRFMT_SERVEGEN:
        *out = arrivals_servegen_dir_create(t->path, &o, &err);
        break;
    case ARRFMT_CSV:
        *out = arrivals_csv_create(t->path, &t->csv, &o, &err);
        break;
    case ARRFMT_COUNTS:
    default:
        *out = arrivals_counts_create(t->path, &t->counts, &o, &err);
        break;
    }
    if (*out)
        return 0;
    snprintf(s->err, sizeof(s->err), "%s", err.msg[0] ? err.msg : "cannot open the trace");
    return -EINVAL;
}

static int open_job_trace(struct sim *s, struct job_source **out)
{
    const struct job_trace_cfg *t = &s->sc->training.trace;
    struct job_trace_opts o;
    struct trace_err err = {{0}};
    job_trace_opts_init(&o);
    o.tz_s = s->sc->tz_offset_min * 60;
    o.origin = t->origin;
    o.offset = t->offset;
    o.clip_end = s->sc->duration;
    o.reorder_window = t->reorder_window;
    o.skip_bad = t->skip_bad;
    switch (t->format) {
    case JOBFMT_OPENB:
        *out = jobs_openb_create(t->path, &o, &err);
        break;
    case JOBFMT_PAI:
        *out = jobs_pai_task_create(t->path, &o, &err);
        break;
    case JOBFMT_HELIOS:
        *out = jobs_helios_create(t->path, &o, &err);
        break;
    case JOBFMT_CSV:
    default:
        *out = jobs_csv_create(t->path, &t->csv, &o, &err);
        break;
    }
    if (*out)
        return 0;
    snprintf(s->err, sizeof(s->err), "%s", err.msg[0] ? err.msg : "cannot open the job log");
    return -EINVAL;
}

/*
 * A service's load as the policies size for it, from a fresh copy of its
 * arrival stream (the same trace or synthetic stream and seed: the same
 * arrivals): *first = the mean rate over [0, span) (span = the sample
 * interval), *peak = the highest mean rate of any such interval of the run.
 * Synthetic: the profile's maximum; a ServeGen folder: the highest 600 s
 * window of its summed client rates (× scale) in the run's span, read from
 * the files without generating; any other trace: one counting pass.
 */
static int service_rates(struct sim *s, const struct service_cfg *c, uint64_t stream, sim_time span,
                         double *first, double *peak)
{
    struct arrival_source *src;
    *first = *peak = 0;
    if (span <= 0)
        return 0;
    bool sg = c->from_trace && c->trace.format == ARRFMT_SERVEGEN;
    bool count_peak = c->from_trace && !sg;
    if (!c->from_trace)
        *peak = rate_profile_max(&c->arrivals);
    if (sg) {
        double *rates = NULL;
        size_t nwin = 0, nfiles = 0;
        struct trace_err e = {{0}};
        if (servegen_dir_rates(c->trace.path, &rates, &nwin, &nfiles, &e) == 0) {
            double origin = c->trace.origin ? strtod(c->trace.origin, NULL) : 0;
            double scale = c->trace.scale > 0 ? c->trace.scale : 1;
            double end = origin + sim_time_to_sec(s->sc->duration);
            for (size_t w = 0; w < nwin; w++) {
                double t0 = (double)w * 600.0;
                if ((c->trace.loop || (t0 + 600 > origin && t0 < end)) && rates[w] * scale > *peak)
                    *peak = rates[w] * scale;
            }
            free(rates);
        }
    }
    if (c->from_trace) {
        int rc = open_arrival_trace(s, c, stream, &src);
        if (rc)
            return rc;
    } else {
        src = synth_arrivals_create_cv(&c->arrivals, c->burst_cv, s->sc->duration, s->seed, stream);
        if (!src)
            return -ENOMEM;
    }
    sim_time t[1024];
    uint64_t count = 0, first_n = 0;
    int64_t bucket = 0;
    struct trace_err err = {{0}};
    double secs = sim_time_to_sec(span);
    for (bool more = true; more;) {
        uint32_t n = 0;
        int rc = arrival_source_fill(src, t, 1024, &n, &err);
        if (rc < 0) {
            snprintf(s->err, sizeof(s->err), "%s", err.msg[0] ? err.msg : "cannot read the trace");
            arrival_source_destroy(src);
            return rc;
        }
        for (uint32_t k = 0; k < n; k++) {
            int64_t b = t[k] / span;
            if (!count_peak && b > 0) {
                more = false; /* the first interval is all a synthetic or ServeGen source needs */
                break;
            }
            if (b != bucket) {
                if (bucket == 0)
                    first_n = count;
                if ((double)count / secs > *peak)
                    *peak = (double)count / secs;
                bucket = b;
                count = 0;
            }
            count++;
        }
        if (rc)
            more = false;
    }
    if (bucket == 0)
        first_n = count;
    if (count_peak && (double)count / secs > *peak)
        *peak = (double)count / secs;
    arrival_source_destroy(src);
    *first = (double)first_n / secs;
    if (*first > *peak)
        *peak = *first;
    return 0;
}

static int build_services(struct sim *s)
{
    const struct scenario *sc = s->sc;
    char name[160];
    s->svcs = calloc(sc->nservices ? sc->nservices : 1, sizeof(*s->svcs));
    s->first_rate = calloc(sc->nservices ? sc->nservices : 1, sizeof(*s->first_rate));
    s->peak_rate = calloc(sc->nservices ? sc->nservices : 1, sizeof(*s->peak_rate));
    if (!s->svcs || !s->first_rate || !s->peak_rate)
        return -ENOMEM;
    sim_time span = sc->sample_interval < sc->duration ? sc->sample_interval : sc->duration;
    for (uint32_t i = 0; i < sc->nservices; i++) {
        const struct service_cfg *c = &sc->services[i];
        snprintf(name, sizeof(name), "service/%s/arrivals", c->name);
        struct arrival_source *src;
        if (c->from_trace) {
            int rc = open_arrival_trace(s, c, rng_stream_id(name), &src);
            if (rc)
                return rc;
        } else {
            src = synth_arrivals_create_cv(&c->arrivals, c->burst_cv, sc->duration, s->seed,
                                           rng_stream_id(name));
            if (!src)
                return -ENOMEM;
        }
        int rc = service_init(&s->svcs[i], i, c, &s->eng, &s->cl, src, s->seed);
        if (rc)
            return rc;
        if (s->svc_prefer)
            s->svcs[i].prefer_pools = s->svc_prefer[i];
        s->nsvcs++;
        if ((rc = service_rates(s, c, rng_stream_id(name), span, &s->first_rate[i],
                                &s->peak_rate[i])))
            return rc;
    }
    return 0;
}

/*
 * A warm start (training.snapshot): submit the snapshot's jobs at t = 0, after
 * the policy's init and before any other job, each through the policy like
 * any job (its quota, queues and pools count it); the gang finders put a job
 * with a node there (sim_pinned_gang). A job the policy does not start at
 * once, or starts elsewhere than its node, stops the run: the snapshot says
 * it holds its cards now. Returns 0 or a negative code with s->err filled.
 */
static int seed_snapshot(struct sim *s)
{
    const struct training_cfg *t = &s->sc->training;
    for (uint32_t i = 0; i < t->nsnap; i++) {
        const struct snap_job *r = &t->snap[i];
        struct job_spec spec = {.id = r->id,
                                .submit = 0,
                                .work = r->remaining,
                                .gpus = r->gpus,
                                .gpu_fraction = 1.0,
                                .priority = r->priority,
                                .line = r->line};
        memcpy(spec.queue, r->queue, sizeof(spec.queue));
        uint64_t pools = r->pool >= 0 ? (uint64_t)1 << r->pool : POOL_ALL;
        int64_t id =
            trainer_submit_snapshot(&s->tr, &spec, (double)r->ckpt_age, r->ckpt_age < r->started,
                                    r->node >= 0 ? (uint32_t)r->node : UINT32_MAX, pools);
        if (id < 0) {
            snprintf(s->err, sizeof(s->err), "%s:%lld: job %llu: %s", t->snapshot_path,
                     (long long)r->line, (unsigned long long)r->id,
                     id == -ENOMEM ? "out of memory" : "cannot be submitted");
            return (int)id;
        }
        const struct job *jb = &s->tr.jobs[id];
        const char *why = NULL;
        if (jb->state == JOB_REJECTED)
            why = "the policy rejects it: it could never run here (no queue of its name, more "
                  "GPUs than its queue or pools can hold, or more memory than a shared "
                  "card's share: training.memory_gb_per_gpu)";
        else if (jb->state == JOB_FAILED)
            why = "OOM-killed at its placement (training.memory_gb_per_gpu over the card's "
                  "share)";
        else if (jb->state != JOB_RUNNING)
            why = "the policy did not start it at t = 0 (its queue's quota full, its pool "
                  "ruled out by training.require, or its cards taken by the services' "
                  "initial replicas?)";
        for (uint32_t g = 0; !why && r->node >= 0 && g < jb->spec.gpus; g++)
            if (s->cl.cards[jb->gpus[g]].node != (uint32_t)r->node)
                why = "the policy placed it off its node (policies timeslice, mps and "
                      "mig-static choose their own cards: leave 'node' empty)";
        if (why) {
            snprintf(s->err, sizeof(s->err), "%s:%lld: job %llu: %s", t->snapshot_path,
                     (long long)r->line, (unsigned long long)r->id, why);
            return -EINVAL;
        }
        if (s->event_error) {
            snprintf(s->err, sizeof(s->err), "%s: cannot seed the snapshot", t->snapshot_path);
            return s->event_error;
        }
    }
    return 0;
}

int sim_init(struct sim *s, const struct scenario *sc, uint64_t seed, const struct sim_sink *sink)
{
    int rc;
    memset(s, 0, sizeof(*s));
    s->sc = sc;
    s->seed = seed;
    if (sink)
        s->sink = *sink;
    s->pol = policy_find(sc->policy.name);
    if (!s->pol) {
        snprintf(s->err, sizeof(s->err), "unknown policy '%s'", sc->policy.name);
        return -EINVAL;
    }
    if ((rc = engine_init(&s->eng)) ||
        (rc = rng_init(&s->fault_rng, seed, rng_stream_id("faults"))))
        goto fail;
    /* With cluster.pools every MIG pool names its own layout (cluster_set_pools). */
    rc = cluster_init(&s->cl, sc->nodes, sc->gpus_per_node, sc->spec, sc->sharing, sc->slots,
                      &sc->knobs, &sc->mig, sc->pools_given ? NULL : sc->mig_layout, s->err,
                      sizeof(s->err));
    if (rc == -EINVAL)
        goto fail_msg;
    if (rc)
        goto fail;
    if (sc->npools && (rc = cluster_set_pools(&s->cl, sc->pools, sc->npools)))
        goto fail;
    s->pool_faults = calloc(s->cl.npools, sizeof(*s->pool_faults));
    s->pool_fault_victims = calloc(s->cl.npools, sizeof(*s->pool_fault_victims));
    if (!s->pool_faults || !s->pool_fault_victims) {
        rc = -ENOMEM;
        goto fail;
    }
    s->cl.mps_limit_gib = sc->mps_mem_limit_gib;
    s->cl.mem_quota = sc->ts_mem_quota;
    s->cl.on_speed = on_tenant_speed;
    s->cl.on_place = on_tenant_placed;
    s->cl.on_leave = on_tenant_leave;
    s->cl.on_oom = on_tenant_oom;
    s->cl.cb_ctx = s;
    if ((rc = constrain_services(s)) || (rc = build_services(s)))
        goto fail_src;

    struct job_source *jobs = NULL;
    if (sc->training.from_trace) {
        if ((rc = open_job_trace(s, &jobs)))
            goto fail_msg;
    } else if (sc->training.synthetic) {
        struct job_mix mix = sc->training.mix;
        mix.backlog = sc->training.backlog;
        jobs = synth_jobs_create(&mix, sc->duration, seed, rng_stream_id("training/jobs"));
        if (!jobs) {
            rc = -ENOMEM;
            goto fail;
        }
    }
    if ((rc = trainer_init(&s->tr, &s->eng, &s->cl, jobs, &sc->training.run)))
        goto fail;
    s->tr.skip_services = sc->training.from_trace && !sc->training.trace.include_services;
    s->tr.on_submit = on_job_submit;
    s->tr.on_finish = on_job_finish;
    s->tr.on_requeue = on_job_requeue;
    s->tr.cb_ctx = s;

    s->in_init = true;
    rc = s->pol->init(s, &s->pol_state);
    s->in_init = false;
    if (rc) {
        if (rc == -ENOMEM || !s->err[0]) /* else the policy said why */
            snprintf(s->err, sizeof(s->err), "policy '%s' could not start (%s)", s->pol->name,
                     rc == -ENOMEM ? "out of memory" : strerror(-rc));
        goto fail_msg;
    }
    if ((rc = seed_snapshot(s)))
        goto fail_msg;
    if ((rc = trainer_begin(&s->tr)))
        goto fail;
    rc = engine_at(&s->eng, sc->sample_interval < sc->duration ? sc->sample_interval : sc->duration,
                   on_sample, s, 0, &s->sample_ev);
    if (rc)
        goto fail;
    return 0;
fail_src:
    if (rc != -ENOMEM && s->err[0])
        goto fail_msg;
fail:
    snprintf(s->err, sizeof(s->err), "cannot build the run: %s",
             rc == -ENOMEM ? "out of memory" : "invalid setup");
fail_msg:
    sim_release(s);
    return rc;
}

int sim_place_replica(struct sim *s, uint32_t svc, uint32_t gpu)
{
    return sim_start_replica(s, svc, gpu, 0);
}

/*
 * The start-up delay of a replica of c (cfg->startup): fixed + what it loads
 * over a lognormal load bandwidth drawn from the service's own stream; or
 * the policy's delay when the service has no start-up model.
 */
static sim_time startup_delay(struct service *sv, sim_time policy_delay)
{
    const struct startup_cfg *u = &sv->cfg->startup;
    if (!u->on)
        return policy_delay;
    double bw = rng_lognormal_median_sigma(&sv->start_rng, u->bw_median_gbps, u->bw_sigma);
    double load_s = bw > 0 ? u->model_gb / bw : 0;
    return u->fixed + sim_time_from_sec(load_s < 1e7 ? load_s : 1e7);
}

struct tenant_req sim_replica_req(uint32_t svc, const struct service_cfg *c)
{
    return (struct tenant_req){
        .kind = TENANT_INFER,
        .owner = svc,
        .mem_gib = c->mem_used_gib > 0 ? c->mem_used_gib : c->mem_gib,
        .mem_quota_gib = c->mem_gib,
        .fraction = c->gpu_fraction,
        .sm_cap = c->sm_cap,
        .demand = c->demand,
        .mig_profile = c->mig_profile,
    };
}

int sim_start_replica(struct sim *s, uint32_t svc, uint32_t gpu, sim_time delay)
{
    if (svc >= s->nsvcs)
        return -EINVAL;
    const struct service_cfg *c = s->svcs[svc].cfg;
    struct tenant_req req = sim_replica_req(svc, c);
    /* A tensor-parallel LLM replica: gpu and the next cards of its node that take a tenant. */
    uint32_t n = c->kind == SVC_LLM ? c->llm->tp : 1, cards[LLM_MAX_TP];
    if (gpu >= s->cl.ngpus)
        return -EINVAL;
    if (!sim_svc_allows(s, svc, gpu))
        return -EPERM; /* a pool its constraints rule out (sim/pool_cfg.h) */
    cards[0] = gpu;
    uint32_t got = 1, node = s->cl.cards[gpu].node;
    for (uint32_t g = cluster_node_first(&s->cl, node);
         g < cluster_node_end(&s->cl, node) && got < n; g++)
        if (g != gpu && cluster_can_place(&s->cl, g, &req) == 0)
            cards[got++] = g;
    if (got < n)
        return -EBUSY;
    return sim_start_replica_on(s, svc, cards, n, delay);
}

int sim_start_replica_on(struct sim *s, uint32_t svc, const uint32_t *cards, uint32_t n,
                         sim_time delay)
{
    return sim_start_replica_on_profile(s, svc, cards, n, delay, NULL);
}

int sim_start_replica_on_profile(struct sim *s, uint32_t svc, const uint32_t *cards, uint32_t n,
                                 sim_time delay, const char *mig_profile)
{
    if (svc >= s->nsvcs || !cards)
        return -EINVAL;
    struct service *sv = &s->svcs[svc];
    const struct service_cfg *c = sv->cfg;
    struct tenant_req req = sim_replica_req(svc, c);
    if (mig_profile)
        req.mig_profile = mig_profile;
    uint32_t tids[LLM_MAX_TP], ri;
    if (n != (c->kind == SVC_LLM ? c->llm->tp : 1))
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        if (cards[i] >= s->cl.ngpus || s->cl.cards[cards[i]].node != s->cl.cards[cards[0]].node)
            return -EINVAL; /* a replica's cards are on one node */
        for (uint32_t k = 0; k < i; k++)
            if (cards[k] == cards[i])
                return -EINVAL;
    }
    for (uint32_t i = 0; i < n; i++) {
        int rc = cluster_place(&s->cl, cards[i], s->eng.now, &req, &tids[i]);
        if (rc == 1)
            s->oom_kills++;
        if (rc == -ENOMEM)
            sim_fail_oom(s, "placing a replica on its cards");
        if (rc) {
            for (uint32_t k = 0; k < i; k++)
                cluster_remove(&s->cl, tids[k], s->eng.now);
            return rc;
        }
    }
    if (s->in_init)
        delay = 0;
    else if (delay > 0 || c->startup.on)
        delay = startup_delay(sv, delay);
    int rc = service_add_replica_gang(sv, tids, n, delay <= 0, &ri);
    if (rc == -ENOMEM)
        sim_fail_oom(s, "adding a replica");
    if (rc) {
        for (uint32_t k = 0; k < n; k++)
            cluster_remove(&s->cl, tids[k], s->eng.now);
        return rc;
    }
    if (delay <= 0)
        for (uint32_t k = 0; k < n; k++)
            fault_clock_start(s, tids[k]);
    else if (engine_at(&s->eng, s->eng.now + delay, on_replica_up, s, tenant_arg(s, tids[0]), NULL))
        event_failed(s);
    return 0;
}

int sim_stop_replica(struct sim *s, uint32_t svc, uint32_t *gpu)
{
    if (svc >= s->nsvcs)
        return -EINVAL;
    struct service *sv = &s->svcs[svc];
    uint32_t ri = service_pick_victim(sv);
    if (ri == UINT32_MAX)
        return -ENOENT;
    if (gpu)
        *gpu = sv->reps[ri].gpu;
    return service_remove_replica(sv, ri);
}

uint32_t sim_stop_replicas_on(struct sim *s, uint32_t gpu, uint32_t max)
{
    uint32_t n = 0;
    const struct card *g = &s->cl.cards[gpu];
    for (uint32_t k = g->nten; k-- > 0 && n < max;) {
        if (k >= g->nten)
            continue;
        const struct tenant *t = &s->cl.tenants[g->ten[k]];
        if (t->kind != TENANT_INFER)
            continue;
        if (service_remove_replica(&s->svcs[t->owner], t->member) == 0)
            n++;
    }
    return n;
}

static void on_relayout_done(void *ctx, uint64_t arg)
{
    struct sim *s = ctx;
    cluster_relayout_done(&s->cl, (uint32_t)arg, s->eng.now);
    s->relayouts++;
    if (s->pol->on_card_ready)
        s->pol->on_card_ready(s, s->pol_state, (uint32_t)arg);
}

int sim_mig_relayout(struct sim *s, uint32_t gpu, const char *layout, char *err, size_t errlen)
{
    int rc = cluster_relayout_begin(&s->cl, gpu, s->eng.now, layout, err, errlen);
    if (rc)
        return rc;
    sim_time d = sim_time_from_sec(mig_reconfig_seconds(&s->cl.mig));
    return engine_at(&s->eng, s->eng.now + d, on_relayout_done, s, gpu, NULL);
}

/* The first source error, as a message. */
static int source_error(struct sim *s)
{
    for (uint32_t i = 0; i < s->nsvcs; i++)
        if (s->svcs[i].src_error) {
            snprintf(s->err, sizeof(s->err), "%s", s->svcs[i].src_err.msg);
            return s->svcs[i].src_error;
        }
    if (s->tr.src_error) {
        snprintf(s->err, sizeof(s->err), "%s", s->tr.src_err.msg);
        return s->tr.src_error;
    }
    if (s->sink_error)
        return s->sink_error;
    if (s->event_error)
        return s->event_error; /* s->err says so */
    snprintf(s->err, sizeof(s->err), "the run stopped on an internal error");
    return -EIO;
}

int sim_run(struct sim *s, const volatile sig_atomic_t *interrupt)
{
    s->eng.interrupt = interrupt;
    int rc = engine_run(&s->eng, s->sc->duration);
    if (rc == 2)
        return source_error(s);
    s->interrupted = rc == 1;
    s->end = s->eng.now;
    close_interval(s); /* the last, possibly partial, interval */
    if (s->eng.stop)
        return source_error(s);
    trainer_sync(&s->tr);
    return s->interrupted ? 1 : 0;
}

void sim_release(struct sim *s)
{
    if (s->pol && s->pol->destroy)
        s->pol->destroy(s->pol_state);
    s->pol_state = NULL;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        service_release(&s->svcs[i]);
    free(s->svcs);
    free(s->first_rate);
    free(s->peak_rate);
    free(s->svc_allow);
    free(s->svc_prefer);
    s->svc_allow = s->svc_prefer = NULL;
    s->svcs = NULL;
    s->first_rate = s->peak_rate = NULL;
    s->nsvcs = 0;
    trainer_release(&s->tr);
    cluster_release(&s->cl);
    engine_release(&s->eng);
    rng_release(&s->fault_rng);
    free(s->pool_faults);
    free(s->pool_fault_victims);
    s->pool_faults = s->pool_fault_victims = NULL;
    free(s->warm.acc);
    free(s->warm.tot);
    free(s->warm.h);
    free(s->warm.q);
    free(s->warm.llm);
    free(s->warm.ttft);
    free(s->warm.tpot);
    memset(&s->warm, 0, sizeof(s->warm));
}

sim_time sim_window_start(const struct sim *s)
{
    return s->warm.acc && s->warm.at < s->end ? s->warm.at : 0;
}

double sim_window_card_us(const struct sim *s, uint32_t g, int k)
{
    const struct card *c = &s->cl.cards[g];
    double v = k < USE_NSTATES ? c->acc[k] : c->alloc_us;
    if (sim_window_start(s) > 0)
        v -= s->warm.acc[(size_t)g * (USE_NSTATES + 1) + (size_t)k];
    return v;
}

/* GPU-time of cards [g0, g1) in the window: 0 allocated, 1 busy (every state but idle and
 * re-layout), 2 useful. */
static double range_sum(const struct sim *s, int which, uint32_t g0, uint32_t g1)
{
    double a = 0;
    for (uint32_t g = g0; g < g1; g++) {
        if (which == 0) {
            a += sim_window_card_us(s, g, USE_NSTATES);
        } else if (which == 1) {
            double b = 0; /* per card first, as card_busy_us() sums */
            for (int k = 0; k < USE_NSTATES; k++)
                if (k != USE_IDLE && k != USE_RECONFIG)
                    b += sim_window_card_us(s, g, k);
            a += b;
        } else {
            a += sim_window_card_us(s, g, USE_USEFUL) + sim_window_card_us(s, g, USE_INFER);
        }
    }
    return a;
}

static double window_sum(const struct sim *s, int which)
{
    return range_sum(s, which, 0, s->cl.ngpus);
}

double sim_pool_gpu_us(const struct sim *s, uint32_t p, int which)
{
    const struct cluster_pool *pl = &s->cl.pools[p];
    return range_sum(s, which, pl->first_gpu, pl->first_gpu + pl->ngpus);
}

static double sum_cards(const struct sim *s, int which)
{
    double len = (double)(s->end - sim_window_start(s));
    return len > 0 ? window_sum(s, which) / ((double)s->cl.ngpus * len) : 0;
}

double sim_util_allocated(const struct sim *s)
{
    return sum_cards(s, 0);
}

double sim_util_busy(const struct sim *s)
{
    return sum_cards(s, 1);
}

double sim_util_useful(const struct sim *s)
{
    return sum_cards(s, 2);
}

double sim_energy_kwh(const struct sim *s)
{
    if (s->cl.npools > 1) {
        double kwh = 0;
        for (uint32_t p = 0; p < s->cl.npools; p++)
            kwh += sim_pool_energy_kwh(s, p);
        return kwh;
    }
    double len = sim_time_to_sec(s->end - sim_window_start(s));
    double busy_s = sum_cards(s, 1) * s->cl.ngpus * len;
    double gpu_s = (double)s->cl.ngpus * len;
    const struct gpu_spec *g = s->sc->spec;
    return power_kwh(g->idle_w, gpu_s) + power_kwh(g->tdp_w - g->idle_w, busy_s);
}

double sim_pool_energy_kwh(const struct sim *s, uint32_t p)
{
    const struct cluster_pool *pl = &s->cl.pools[p];
    double len = sim_time_to_sec(s->end - sim_window_start(s));
    double busy_s = sim_pool_gpu_us(s, p, 1) / 1e6;
    double gpu_s = (double)pl->ngpus * len;
    const struct gpu_spec *g = s->cl.npools == 1 ? s->sc->spec : pl->spec;
    return power_kwh(g->idle_w, gpu_s) + power_kwh(g->tdp_w - g->idle_w, busy_s);
}

void sim_window_service(const struct sim *s, uint32_t svc, struct service_stats *st, struct hist *h,
                        struct hist *q)
{
    const struct service *sv = &s->svcs[svc];
    *st = sv->tot;
    *h = *sv->h_total;
    if (q)
        *q = *sv->q_total;
    if (sim_window_start(s) == 0)
        return;
    const struct service_stats *w = &s->warm.tot[svc];
    st->arrived -= w->arrived;
    st->served -= w->served;
    st->dropped -= w->dropped;
    st->within_slo -= w->within_slo;
    st->failed -= w->failed;
    st->batches -= w->batches;
    st->wait_us -= w->wait_us;
    st->busy_us -= w->busy_us;
    hist_subtract(h, &s->warm.h[svc]);
    if (q)
        hist_subtract(q, &s->warm.q[svc]);
}

void sim_window_llm(const struct sim *s, uint32_t svc, struct llm_counts *c, struct hist *ttft,
                    struct hist *tpot)
{
    const struct llm_svc *ls = s->svcs[svc].llm;
    if (!ls)
        return;
    *c = ls->tot;
    *ttft = *ls->ttft_tot;
    *tpot = *ls->tpot_tot;
    if (sim_window_start(s) == 0)
        return;
    const struct llm_counts *w = &s->warm.llm[svc];
    c->tokens_out -= w->tokens_out;
    c->tokens_in -= w->tokens_in;
    c->kv_token_us -= w->kv_token_us;
    c->kv_cap_us -= w->kv_cap_us;
    c->preemptions -= w->preemptions;
    c->swaps -= w->swaps;
    c->rejected_long -= w->rejected_long;
    c->truncated -= w->truncated;
    hist_subtract(ttft, &s->warm.ttft[svc]);
    hist_subtract(tpot, &s->warm.tpot[svc]);
}
