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
    double margin;
    double target;
    uint32_t history_days;
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
};

static const char *const adaptive_keys[] = {"horizon", "margin", "target", "history_days", NULL};

static int adaptive_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    const struct conf_doc *d = &sc->doc;
    struct adaptive_pcfg *c = calloc(1, sizeof(*c));
    int rc;
    if (!c)
        return -ENOMEM;
    sc->policy.cfg = c;
    c->horizon = -1;
    c->margin = 0.15;
    c->target = sc->policy.as.target_util;
    int64_t days = 7;
    if ((rc = conf_duration(d, p, "horizon", false, 0, &c->horizon, err)) ||
        (rc = conf_double(d, p, "margin", false, 0, 10, &c->margin, err)) ||
        (rc = conf_double(d, p, "target", false, 0.05, 1, &c->target, err)) ||
        (rc = conf_int(d, p, "history_days", false, 1, 28, &days, err)))
        return rc;
    c->history_days = (uint32_t)days;
    if (sc->sharing != SHARE_EXCLUSIVE)
        return conf_errf(err, d, p, "name",
                         "'adaptive' places whole cards: use sharing: exclusive");
    return 0;
}

static uint32_t replicas_for(const struct sim *s, uint32_t i, double rate, double target)
{
    const struct service_cfg *c = &s->sc->services[i];
    double cap = pol_replica_capacity(c) * target;
    uint32_t n = (uint32_t)ceil(rate / cap);
    uint32_t lo = c->min_replicas ? c->min_replicas : 1;
    uint32_t hi = c->max_replicas ? c->max_replicas : s->cl.ngpus;
    return n < lo ? lo : n > hi ? hi : n;
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
            cluster_find_gang(&s->cl, jb->spec.gpus, st->gang) == 0 &&
            trainer_start(&s->tr, j, st->gang) >= 0) {
            jobq_remove_at(&st->q, i);
            continue;
        }
        i++;
    }
}

/* Place wanted replicas on free cards; reclaim training for the rest. */
static void place(struct sim *s, struct adaptive_state *st)
{
    uint32_t short_total = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t have = service_replicas(&s->svcs[i]);
        while (have < st->want[i]) {
            uint32_t g = pol_pick_compact(s, NULL, i); /* node-compact (common.h) */
            if (g == UINT32_MAX || sim_start_replica(s, i, g, s->sc->policy.as.up_delay) != 0)
                break;
            have++;
        }
        short_total += st->want[i] - have;
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
    if (!st->fc || !st->want || !st->gang)
        return -ENOMEM;
    struct forecast_cfg fc;
    forecast_cfg_default(&fc);
    fc.margin = st->cfg.margin;
    fc.days = st->cfg.history_days;
    fc.agg = FORECAST_MAX;
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
    /* Start with the inference pool split like dedicated. */
    uint32_t pool = s->sc->policy.inference_gpus;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t n =
            s->sc->services[i].replicas ? s->sc->services[i].replicas : pool / (uint32_t)s->nsvcs;
        st->want[i] = n ? n : 1;
    }
    place(s, st);
    return 0;
}

static void adaptive_on_tick(struct sim *s, void *state)
{
    struct adaptive_state *st = state;
    sim_time now = s->eng.now, down = s->sc->policy.as.down_window;
    uint32_t future = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        double seen = pol_interval_rate(s, i), soon = 0, later = 0;
        forecast_observe(st->fc[i], now, seen);
        if (forecast_peak(st->fc[i], now, now + st->horizon, &soon) < 0)
            soon = seen * (1 + st->cfg.margin);
        if (forecast_peak(st->fc[i], now, now + st->horizon + down, &later) < 0)
            later = soon;
        double up_rate = seen * (1 + st->cfg.margin) > soon ? seen * (1 + st->cfg.margin) : soon;
        if (!st->pressed[i] && st->boost[i])
            st->boost[i]--;
        st->pressed[i] = false;
        uint32_t up = replicas_for(s, i, up_rate, st->cfg.target) + st->boost[i];
        uint32_t keep = replicas_for(s, i, later > up_rate ? later : up_rate, st->cfg.target);
        uint32_t have = service_replicas(&s->svcs[i]);
        if (up > have)
            st->want[i] = up;
        else if (keep < have)
            st->want[i] = keep;
        else
            st->want[i] = have;
        while (service_replicas(&s->svcs[i]) > st->want[i] && sim_stop_replica(s, i, NULL) == 0)
            ;
        future += keep > st->want[i] ? keep - st->want[i] : 0;
    }
    st->reserve = future;
    place(s, st);
    start_training(s, st);
}

/* The service is behind now: add a replica beyond the plan, from free cards or training. */
static void adaptive_on_pressure(struct sim *s, void *state, uint32_t svc)
{
    struct adaptive_state *st = state;
    (void)s;
    st->boost[svc]++;
    st->pressed[svc] = true;
}

static void adaptive_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct adaptive_state *st = state;
    jobq_insert_sorted(&st->q, j);
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
    jobq_insert_sorted(&st->q, j);
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
