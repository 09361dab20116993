/*
 * adaptive.c — the `adaptive` policy (ours): move capacity before the ramp.
 *
 * Each service's load is forecast from its own history (sim/policy/adaptive_forecast.h:
 * same time of day on previous days, with a safety margin; the recent maximum
 * before a day of history exists). Every sample interval the policy sizes
 * each service for the larger of the load it sees and the forecast peak over
 * the next `horizon` — long enough to checkpoint a training job and start a
 * replica — at a target utilisation, so replicas are ready when the morning
 * ramp arrives instead of after it (the reactive HPA lag that tidal and
 * kueue pay). Cards come from free cards first, then from training jobs
 * preempted gracefully (the least-progressed-since-checkpoint first, so
 * nothing is lost when the save fits the grace period). It scales down only
 * when the forecast stays low over horizon + the down window, and gives the
 * cards back to training, which it never starts on cards the forecast will
 * want back within the horizon. When a service misses its SLO quantile in an
 * interval anyway (inference pressure), it adds a replica per pressured
 * interval on top of the plan, and drops one per calm interval after.
 *
 * Simplifies: whole cards (exclusive sharing); one forecast per service,
 * no cross-service packing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/adaptive_forecast.h"
#include "sim/policy/common.h"

struct adaptive_pcfg {
    sim_time horizon; /* -1 = computed from checkpoint and start-up times */
    double margin;    /* least margin on the forecast */
    double margin_q;  /* quantile of its own past forecast errors that sets the margin */
    double target;    /* utilisation cap (sizing: target: the utilisation aimed at) */
    double level_weight;
    int sizing; /* SIZE_SLO or SIZE_TARGET */
    bool weekly;
    uint32_t history_days;
};

enum { SIZE_SLO, SIZE_TARGET };

/* Past forecast errors of one service: observed / forecast, a ring of a week of ticks. */
#define ERR_CAP 10080
struct errs {
    double *v;
    uint32_t head, n;
    uint32_t since; /* pushes since the margin was last computed */
    double margin;  /* cached: recomputed every 60 pushes (the errors move slowly) */
};

struct adaptive_state {
    struct adaptive_pcfg cfg;
    sim_time horizon;
    struct forecast **fc;
    uint32_t *want;  /* replicas wanted per service */
    uint32_t *boost; /* extra replicas after SLO pressure; decays one per calm interval */
    bool *pressed;   /* pressure seen in the interval being closed */
    struct jobq q;
    uint32_t *gang;
    uint32_t reserve; /* cards the forecast will want back within the horizon */
    uint64_t preempted;
    struct errs *err; /* per service */
    double *scratch;  /* ERR_CAP doubles for the quantile */
    /* Tensor-parallel replicas: cards held for a service's replica being gathered on one node
     * (owner: the service), and the jobs a plan preempts (common.h, pol_plan_best_for). */
    struct pol_holds holds;
    uint32_t *plan_jobs;
    struct sim *s;
};

static const char *const adaptive_keys[] = {"horizon",      "margin", "margin_quantile",
                                            "target",       "sizing", "level_weight",
                                            "history_days", "weekly", NULL};

static int adaptive_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    struct adaptive_pcfg *c = calloc(1, sizeof(*c));
    int rc;
    if (!c)
        return -ENOMEM;
    sc->policy.cfg = c;
    c->horizon = -1;
    c->margin = 0.02;
    c->margin_q = 0.95;
    c->target = 0.9;
    c->level_weight = 0.5;
    c->sizing = SIZE_SLO;
    c->weekly = true;
    int64_t days = 7;
    static const char *const sizings[] = {"slo", "target", NULL};
    if ((rc = conf_duration(d, p, "horizon", false, 0, &c->horizon, err)) ||
        (rc = conf_double(d, p, "margin", false, 0, 10, &c->margin, err)) ||
        (rc = conf_double(d, p, "margin_quantile", false, 0.5, 1, &c->margin_q, err)) ||
        (rc = conf_double(d, p, "target", false, 0.05, 1, &c->target, err)) ||
        (rc = conf_enum(d, p, "sizing", false, sizings, &c->sizing, err)) ||
        (rc = conf_double(d, p, "level_weight", false, 0, 1, &c->level_weight, err)) ||
        (rc = conf_bool(d, p, "weekly", false, &c->weekly, err)) ||
        (rc = conf_int(d, p, "history_days", false, 1, 27, &days, err)))
        return rc;
    c->history_days = (uint32_t)days;
    if (sc->mixed)
        return scenario_refuse_modes(sc, p, SHARE_BIT(SHARE_EXCLUSIVE),
                                     "'adaptive' sizes its inference pool in whole cards and "
                                     "places one replica per card (use sharing: none on every "
                                     "pool, or policy dedicated)",
                                     err);
    if (sc->sharing != SHARE_EXCLUSIVE)
        return conf_errf(err, d, p, "name",
                         "'adaptive' places whole cards: use sharing: exclusive");
    return 0;
}

/*
 * P(wait > t) in M/M/n with offered load a = λ/μ < n and service rate μ:
 * Erlang C · e^{−(nμ−λ)t}. Erlang B by its stable recursion, then C.
 */
static double mmn_wait_tail(uint32_t n, double a, double mu, double t)
{
    double b = 1;
    for (uint32_t k = 1; k <= n; k++)
        b = a * b / (k + a * b);
    double c = n * b / (n - a * (1 - b));
    return c * exp(-(n * mu - a * mu) * t);
}

/*
 * Replicas for `rate` (req/s). sizing: target — ceil(rate / (capacity ×
 * target)). sizing: slo — the fewest replicas whose SLO quantile holds in an
 * M/M/n model of the service at full batches (μ = max_batch / (a + b·max_batch),
 * the HPA's capacity): the wait may use what the SLO leaves after one full
 * batch and its max_wait, P(wait > that) <= (1 − quantile) / 2 (a factor 2
 * for batching's burstiness) — and never above `target` utilisation (the
 * larger count wins). Target sizing alone when one batch exceeds the SLO.
 */
/* The most replicas service i may have: replicas.max, else as many as the cards hold. */
static uint32_t replicas_cap(const struct sim *s, uint32_t i)
{
    const struct service_cfg *c = &s->sc->services[i];
    return c->max_replicas ? c->max_replicas : s->cl.ngpus / pol_gang_size(s, i);
}

static uint32_t replicas_for(const struct sim *s, const struct adaptive_state *st, uint32_t i,
                             double rate)
{
    const struct service_cfg *c = &s->sc->services[i];
    double mu = pol_replica_capacity(c), target = st->cfg.target;
    uint32_t lo = c->min_replicas ? c->min_replicas : 1;
    uint32_t hi = replicas_cap(s, i);
    double n = ceil(rate / (mu * target) - 1e-9);
    double budget =
        sim_time_to_sec(c->slo - c->max_wait) - (c->a_ms + c->b_ms * c->max_batch) / 1e3;
    /* An LLM service's capacity is already the rate its TPOT SLO holds at (sim/llm_conf.c,
     * llm_capacity_rps): the batch model's M/M/n wait below does not describe it. */
    if (st->cfg.sizing == SIZE_SLO && c->kind != SVC_LLM && budget > 0 && rate > 0) {
        double a = rate / mu, tail = (1 - c->slo_quantile) / 2;
        uint32_t k = (uint32_t)floor(a) + 1;
        while (k < hi && mmn_wait_tail(k, a, mu, budget) > tail)
            k++;
        n = k > n ? k : n; /* the SLO's count, but never above `target` utilisation */
    }
    if (!(n >= lo))
        return lo;
    return n > hi ? hi : (uint32_t)n;
}

/* Record observed / forecast for the service's margin (NaN and zero forecasts skipped). */
static void err_push(struct errs *e, double seen, double forecast)
{
    if (!(forecast > 0) || !(seen >= 0))
        return;
    e->v[(e->head + e->n) % ERR_CAP] = seen / forecast;
    e->since++;
    if (e->n < ERR_CAP)
        e->n++;
    else
        e->head = (e->head + 1) % ERR_CAP;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Margin: the margin_quantile of observed/forecast − 1, at least cfg.margin; until a
 * quarter day of errors is in, 15 % (or cfg.margin if larger). */
static double err_margin(const struct adaptive_state *st, struct errs *e)
{
    if (e->n < 1440 / 4)
        return st->cfg.margin > 0.15 ? st->cfg.margin : 0.15;
    if (e->since < 60 && e->margin >= 0)
        return e->margin;
    e->since = 0;
    for (uint32_t k = 0; k < e->n; k++)
        st->scratch[k] = e->v[(e->head + k) % ERR_CAP];
    qsort(st->scratch, e->n, sizeof(double), cmp_double);
    double q = st->scratch[(uint32_t)floor(st->cfg.margin_q * (e->n - 1))] - 1;
    e->margin = q > st->cfg.margin ? q : st->cfg.margin;
    return e->margin;
}

/* Preempt training gracefully until `need` more cards are on their way back. */
static void reclaim(struct sim *s, struct adaptive_state *st, uint32_t need)
{
    uint32_t coming = 0;
    for (uint32_t j = 0; j < s->tr.njobs; j++) {
        const struct job *jb = &s->tr.jobs[j];
        if (jb->state == JOB_RUNNING && (jb->stop_after || jb->phase == PHASE_STOP))
            coming += jb->spec.gpus;
    }
    while (coming < need) {
        /* The running job that loses least: least work since its checkpoint, then smallest. */
        uint32_t best = UINT32_MAX;
        double best_key = INFINITY;
        for (uint32_t j = 0; j < s->tr.njobs; j++) {
            const struct job *jb = &s->tr.jobs[j];
            if (jb->state != JOB_RUNNING || jb->stop_after || jb->phase == PHASE_STOP)
                continue;
            double key = (jb->done_us - jb->ckpt_us) + jb->spec.gpus * 1e3;
            if (key < best_key) {
                best_key = key;
                best = j;
            }
        }
        if (best == UINT32_MAX)
            return;
        coming += s->tr.jobs[best].spec.gpus;
        trainer_preempt(&s->tr, best, true);
        st->preempted++;
    }
}

static void start_training(struct sim *s, struct adaptive_state *st)
{
    for (uint32_t i = 0; i < st->q.n;) {
        uint32_t j = st->q.v[i];
        const struct job *jb = &s->tr.jobs[j];
        if (jb->state != JOB_QUEUED) {
            jobq_remove_at(&st->q, i);
            continue;
        }
        if (jb->spec.gpus > s->cl.ngpus) {
            trainer_reject(&s->tr, j);
            jobq_remove_at(&st->q, i);
            continue;
        }
        /* Keep the cards the forecast wants back soon. */
        if (s->cl.free_cards >= jb->spec.gpus + st->reserve &&
            pol_find_job_gang(s, j, st->holds.n ? pol_holds_mask(&st->holds, UINT32_MAX) : NULL,
                              st->gang) == 0 &&
            trainer_start(&s->tr, j, st->gang) >= 0) {
            jobq_remove_at(&st->q, i);
            continue;
        }
        i++;
    }
}

/*
 * pol_job_cost_fn for gathering a tensor-parallel replica's cards: a job
 * already stopping costs nothing; a running one what reclaim's order weighs
 * (its work since the checkpoint, µs, then its size).
 */
static int64_t tp_cost(void *ctx, uint32_t j)
{
    struct adaptive_state *st = ctx;
    const struct job *jb = &st->s->tr.jobs[j];
    if (jb->state != JOB_RUNNING)
        return -1;
    if (jb->stop_after || jb->phase == PHASE_STOP)
        return 0;
    return (int64_t)(jb->done_us - jb->ckpt_us) + (int64_t)jb->spec.gpus * 1000 + 1;
}

/*
 * The cards of a new tensor-parallel replica of svc: those held for it first
 * (one node), else free cards of one node no one else holds. Returns n or 0.
 */
static uint32_t pick_tp(struct sim *s, struct adaptive_state *st, uint32_t svc, uint32_t *cards)
{
    return pol_pick_gang_held(s, &st->holds, svc, cards); /* common.h */
}

/*
 * Gather cards for `lack` tensor-parallel replicas of svc beyond those held
 * already: per replica the node where the least training is lost
 * (pol_plan_best_for), its jobs preempted gracefully, its cards held for svc.
 */
static void gather_tp(struct sim *s, struct adaptive_state *st, uint32_t svc, uint32_t lack)
{
    uint32_t n = pol_gang_size(s, svc), cards[LLM_MAX_TP], njobs;
    uint32_t held = pol_held_count(&st->holds, svc) / n;
    for (; held < lack; held++) {
        const bool *ok = pol_holds_mask(&st->holds, UINT32_MAX);
        if (pol_plan_best_for(s, svc, ok, tp_cost, st, st->plan_jobs, cards, &njobs) == UINT32_MAX)
            return;
        for (uint32_t i = 0; i < n; i++)
            pol_hold(&st->holds, cards[i], svc);
        for (uint32_t i = 0; i < njobs; i++) {
            trainer_preempt(&s->tr, st->plan_jobs[i], true);
            st->preempted++;
        }
    }
}

/*
 * Place wanted replicas on free cards; reclaim training for the rest (a
 * tensor-parallel replica: the cards of one node, gather_tp).
 */
static void place(struct sim *s, struct adaptive_state *st)
{
    uint32_t short_total = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t have = service_replicas(&s->svcs[i]), tp = pol_gang_size(s, i) > 1;
        while (have < st->want[i]) {
            uint32_t cards[LLM_MAX_TP], n;
            if (tp) {
                n = pick_tp(s, st, i, cards);
            } else {
                uint32_t g = pol_pick_compact(s, NULL, i); /* node-compact (common.h) */
                cards[0] = g;
                n = g == UINT32_MAX ? 0 : 1;
            }
            if (n == 0 || sim_start_replica_on(s, i, cards, n, s->sc->policy.as.up_delay) != 0)
                break;
            for (uint32_t k = 0; k < n; k++)
                pol_unhold(&st->holds, cards[k]);
            have++;
        }
        if (!tp)
            short_total += st->want[i] - have;
        else if (have < st->want[i])
            gather_tp(s, st, i, st->want[i] - have);
        else
            pol_unhold_owner(&st->holds, i);
    }
    if (short_total)
        reclaim(s, st, short_total);
}

static int adaptive_init(struct sim *s, void **state)
{
    struct adaptive_state *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    *state = st;
    st->cfg = *(const struct adaptive_pcfg *)s->sc->policy.cfg;
    st->fc = calloc(s->nsvcs + 1, sizeof(*st->fc));
    st->want = calloc(s->nsvcs + 1, sizeof(*st->want));
    st->boost = calloc(s->nsvcs + 1, sizeof(*st->boost));
    st->pressed = calloc(s->nsvcs + 1, sizeof(*st->pressed));
    if (!st->boost || !st->pressed)
        return -ENOMEM;
    st->gang = calloc(s->cl.ngpus, sizeof(*st->gang));
    st->s = s;
    st->plan_jobs = calloc((size_t)s->cl.per_node * (CARD_MAX_TENANTS + 1), sizeof(*st->plan_jobs));
    if (!st->fc || !st->want || !st->gang || !st->plan_jobs ||
        pol_holds_init(&st->holds, s->cl.ngpus))
        return -ENOMEM;
    st->err = calloc(s->nsvcs + 1, sizeof(*st->err));
    st->scratch = malloc(ERR_CAP * sizeof(*st->scratch));
    if (!st->err || !st->scratch)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        if (!(st->err[i].v = malloc(ERR_CAP * sizeof(double))))
            return -ENOMEM;
        else
            st->err[i].margin = -1;
    struct forecast_cfg fc;
    forecast_cfg_default(&fc);
    fc.margin = 0; /* ours, from the forecast's own errors (err_margin) */
    fc.agg = FORECAST_MEAN;
    fc.level_weight = st->cfg.level_weight;
    fc.weekly = st->cfg.weekly;
    fc.days = st->cfg.history_days + (st->cfg.weekly ? 1 : 0);
    if (fc.weekly && fc.days < 8)
        fc.days = 8;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        if (!(st->fc[i] = forecast_create(&fc)))
            return -ENOMEM;
    if (st->cfg.horizon >= 0) {
        st->horizon = st->cfg.horizon;
    } else {
        /* Checkpoint the largest job, start a replica, and one sample interval of reaction. */
        const struct train_cfg *tc = &s->sc->training.run;
        double save = ckpt_save_s(&tc->knobs, tc->state_gb_per_gpu * 1e9 * 8);
        st->horizon = sim_time_from_sec(save) + s->sc->policy.as.up_delay + s->sc->sample_interval;
    }
    /* Start with the replicas the first interval's load needs (a cluster already running). */
    for (uint32_t i = 0; i < s->nsvcs; i++)
        st->want[i] = s->sc->services[i].replicas ? s->sc->services[i].replicas
                                                  : replicas_for(s, st, i, s->first_rate[i]);
    place(s, st);
    return 0;
}

static void adaptive_on_tick(struct sim *s, void *state)
{
    struct adaptive_state *st = state;
    sim_time now = s->eng.now, down = s->sc->policy.as.down_window;
    uint32_t future = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        double seen = pol_interval_rate(s, i), soon = 0, later = 0, before = 0;
        /* How far off was the forecast for the interval just seen (made without it)? */
        sim_time mid = now - (now - s->last_sample) / 2;
        if (now > s->last_sample && forecast_predict(st->fc[i], mid, &before) == 0)
            err_push(&st->err[i], seen, before);
        forecast_observe(st->fc[i], now, seen);
        double m = err_margin(st, &st->err[i]);
        if (forecast_peak(st->fc[i], now, now + st->horizon, &soon) < 0)
            soon = seen;
        if (forecast_peak(st->fc[i], now, now + st->horizon + down, &later) < 0)
            later = soon;
        soon *= 1 + m;
        later *= 1 + m;
        double up_rate = seen > soon ? seen : soon;
        if (!st->pressed[i] && st->boost[i])
            st->boost[i]--;
        st->pressed[i] = false;
        uint32_t up = replicas_for(s, st, i, up_rate) + st->boost[i];
        if (up > replicas_cap(s, i)) /* the boost never goes past replicas.max */
            up = replicas_cap(s, i);
        uint32_t keep = replicas_for(s, st, i, later > up_rate ? later : up_rate);
        uint32_t have = service_replicas(&s->svcs[i]);
        if (up > have)
            st->want[i] = up;
        else if (keep < have)
            st->want[i] = keep;
        else
            st->want[i] = have;
        while (service_replicas(&s->svcs[i]) > st->want[i] && sim_stop_replica(s, i, NULL) == 0)
            ;
        future += (keep > st->want[i] ? keep - st->want[i] : 0) * pol_gang_size(s, i); /* cards */
    }
    st->reserve = future;
    place(s, st);
    start_training(s, st);
}

/* The service is behind now: add a replica beyond the plan, from free cards or training. */
static void adaptive_on_pressure(struct sim *s, void *state, uint32_t svc)
{
    struct adaptive_state *st = state;
    if (st->boost[svc] < replicas_cap(s, svc)) /* more could never be used */
        st->boost[svc]++;
    st->pressed[svc] = true;
}

static void adaptive_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct adaptive_state *st = state;
    if (!pol_queue_job(s, &st->q, j, true))
        return;
    start_training(s, st);
}

static void adaptive_on_finish(struct sim *s, void *state, uint32_t j)
{
    (void)j;
    place(s, state);
    start_training(s, state);
}

static void adaptive_on_requeue(struct sim *s, void *state, uint32_t j)
{
    struct adaptive_state *st = state;
    if (!pol_queue_job(s, &st->q, j, true))
        return;
    place(s, st);
    start_training(s, st);
}

static void adaptive_destroy(void *state)
{
    struct adaptive_state *st = state;
    if (!st)
        return;
    for (uint32_t i = 0; st->fc && st->fc[i]; i++)
        forecast_destroy(st->fc[i]);
    free(st->fc);
    free(st->want);
    free(st->boost);
    free(st->pressed);
    free(st->gang);
    free(st->plan_jobs);
    pol_holds_release(&st->holds);
    for (uint32_t i = 0; st->err && st->err[i].v; i++)
        free(st->err[i].v);
    free(st->err);
    free(st->scratch);
    jobq_release(&st->q);
    free(st);
}

const struct policy_ops policy_adaptive = {
    .name = "adaptive",
    .keys = adaptive_keys,
    .parse = adaptive_parse,
    .free_cfg = free,
    .init = adaptive_init,
    .on_submit = adaptive_on_submit,
    .on_finish = adaptive_on_finish,
    .on_requeue = adaptive_on_requeue,
    .on_pressure = adaptive_on_pressure,
    .on_tick = adaptive_on_tick,
    .destroy = adaptive_destroy,
};
