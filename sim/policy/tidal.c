/*
 * tidal.c — the `tidal` policy: inference follows a day/night schedule, training
 * holds every card inference does not.
 *
 * Reproduces the day/night ("tidal") schedules GPU platforms run with
 * CronHPA-style fixed replica counts: by day (default 09:00–22:00 local) the
 * services run `day_gpus` cards' worth of replicas; by night they shrink to
 * the `inference_gpus` pool. Training keeps a pool all day and runs, in every
 * phase, on any card inference does not hold: by night it also gets the cards
 * inference lends. Before a day window opens (by `lead`: checkpoint save +
 * MIG re-layout + replica start) the policy reclaims only what the day target
 * lacks: as many training cards as the missing replicas need beyond the free
 * ones, taken from the jobs with the least work since their last checkpoint
 * (tidal_pick_victims), preempted gracefully (checkpoint within the grace
 * period), so the cards are back at the edge and the least work is redone.
 * With `relayout` under MIG sharing, an emptied card is re-laid out for the
 * use it goes to (the day layout when inference lacks it, e.g. 1g.10gb×7 for
 * many small replicas; otherwise the night layout, e.g. 7g.80gb for training),
 * paying the re-layout time during which it serves nothing.
 *
 * With `policy.autoscale` given, each service's HPA (sim/autoscale.h) runs
 * inside the window: it asks for replicas between its minimum and the phase's
 * target, and the cards it does not ask for train; when it asks for more, the
 * missing cards are reclaimed by the same rule, in any phase.
 *
 * Simplifies: without `autoscale` replica counts are a fixed schedule;
 * training starts in queue order on whole free cards (BestEffortFIFO); an
 * emptied card is assumed to take `room` replicas (1, or the instances of the
 * day layout / of the initial MIG layout), whatever the service.
 *
 * Reconcile states: NIGHT (night target, training everywhere else), HANDOVER
 * (lead before a day edge: day target; victims preempted for what it lacks),
 * DAY (day target; should it lack cards, e.g. with lead 0, the same rule).
 * Invariant after a reconcile: no card is free while a queued job fits on it,
 * unless inference still lacks cards it could not get.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/common.h"
#include "sim/policy/tidal_window.h"

struct tidal_pcfg {
    struct tidal_cfg win;
    uint32_t day_gpus;      /* cards for inference by day (0 = all) */
    bool day_from_peak;     /* day_gpus absent: sized from the services' peaks */
    sim_time lead;          /* -1 = computed */
    const char *day_layout; /* MIG layouts at the edges (NULL = keep) */
    const char *night_layout;
};

enum tidal_phase { PH_NIGHT, PH_HANDOVER, PH_DAY };

struct tidal_state {
    struct tidal_pcfg cfg;
    struct jobq q;
    sim_time lead;
    enum tidal_phase phase;
    uint32_t *day_target, *night_target; /* replicas per service */
    uint8_t *layout;                     /* per card: 0 initial/night, 1 day (MIG) */
    uint32_t per_card;                   /* replicas a card holds in the day layout */
    uint32_t room;                       /* replicas an emptied card takes (day layout) */
    bool hpa;                            /* policy.autoscale: HPA inside the window's bound */
    struct pol_scaler ps;                /* one HPA per service (hpa only) */
    uint32_t *want;                      /* replicas each HPA asks for (UINT32_MAX: no HPA) */
    uint32_t *target;                    /* scratch: this pass's target per service */
    bool busy, again;                    /* reconcile running / asked again meanwhile */
    struct tidal_victim *cand;           /* scratch for the hand-over: candidates, */
    uint32_t *cand_job;                  /* their jobs, */
    bool *take;                          /* and the choice */
    uint32_t cand_cap;
    struct evq_handle ev;
    struct sim *s;
    /* Tensor-parallel replicas: cards held for a service's replica being gathered on one node
     * (owner: the service), and the jobs a plan preempts (common.h, pol_plan_best_for). */
    struct pol_holds holds;
    uint32_t *plan_jobs;
};

/*
 * The default day pool, as a team sizes a CronHPA day schedule: the cards the
 * services need at their peak rate at the HPA's target utilisation (whole-card
 * capacity, policy.autoscale.target, 0.7 by default), cards of a tensor-parallel
 * replica counted, at least the night pool and at most the cluster. Before,
 * the default was every card: training then ran only at night.
 */
static uint32_t peak_cards(const struct sim *s)
{
    uint64_t cards = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        cards += (uint64_t)pol_peak_cards(s, i); /* common.h */
    if (cards < s->sc->policy.inference_gpus)
        cards = s->sc->policy.inference_gpus;
    return cards > s->cl.ngpus ? s->cl.ngpus : (uint32_t)cards;
}

static const char *const tidal_keys[] = {"day", "day_gpus", "lead", "relayout", NULL};

/* "HH:MM-HH:MM" → minutes. */
static int parse_window(const char *w, int32_t *a, int32_t *b)
{
    unsigned h1, m1, h2, m2;
    char tail;
    if (sscanf(w, "%u:%u-%u:%u%c", &h1, &m1, &h2, &m2, &tail) != 4 || h1 > 23 || h2 > 24 ||
        m1 > 59 || m2 > 59)
        return -EINVAL;
    *a = (int32_t)(h1 * 60 + m1);
    *b = (int32_t)((h2 % 24) * 60 + m2);
    return 0;
}

static int tidal_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    static const char *const rkeys[] = {"day", "night", NULL};
    const struct conf_doc *d = &sc->doc;
    struct tidal_pcfg *c = calloc(1, sizeof(*c));
    int rc;
    if (!c)
        return -ENOMEM;
    sc->policy.cfg = c;
    if (sc->mixed)
        return scenario_refuse_modes(sc, p, SHARE_BIT(sc->sharing),
                                     "tidal sizes its day and night inference pools in "
                                     "replicas per card of one kind (a whole card, a slot or "
                                     "the instances of one layout), and cards of different "
                                     "modes hold different numbers",
                                     err);
    tidal_cfg_default(&c->win);
    c->win.window_tz_min = c->win.sim_tz_min = sc->tz_offset_min;
    c->lead = -1;
    const char *day = NULL;
    if ((rc = conf_string(d, p, "day", false, &day, err)))
        return rc;
    if (day && parse_window(day, &c->win.day_start_min, &c->win.day_end_min))
        return conf_errf(err, d, conf_get(p, "day"), "day",
                         "expected a window like '09:00-22:00', got '%.40s'", day);
    int64_t g = 0;
    if ((rc = conf_int(d, p, "day_gpus", false, 0, scenario_gpus(sc), &g, err)) ||
        (rc = conf_duration(d, p, "lead", false, 0, &c->lead, err)))
        return rc;
    c->day_gpus = (uint32_t)g;
    c->day_from_peak = conf_get(p, "day_gpus") == NULL;
    const struct conf_node *r = conf_get(p, "relayout");
    if (r) {
        if (sc->sharing != SHARE_MIG)
            return conf_errf(err, d, r, "relayout", "only with 'cluster.sharing: mig'");
        if ((rc = conf_check_keys(d, r, "relayout", rkeys, err)) ||
            (rc = conf_string(d, r, "day", true, &c->day_layout, err)) ||
            (rc = conf_string(d, r, "night", true, &c->night_layout, err)))
            return rc;
        /* One day and one night layout for every card: pools of their own MIG settings (whole
         * cards, their own layout, another board) would each need their own. */
        for (uint32_t i = 0; i < sc->npools; i++)
            if (sc->pools[i].whole || sc->pools[i].mig_at ||
                strcmp(sc->pools[i].spec->name, sc->spec->name) ||
                (sc->from_migparted && pool_label(&sc->pools[i], POOL_MIG_CONFIG_LABEL)))
                return conf_errf(err, d, r, "relayout",
                                 "policy 'tidal' re-lays out every card with one day and one "
                                 "night layout; pool '%s' has MIG settings of its own (%s), "
                                 "which relayout does not support",
                                 sc->pools[i].name,
                                 sc->pools[i].whole    ? "sharing: none"
                                 : sc->pools[i].mig_at ? "mig"
                                 : strcmp(sc->pools[i].spec->name, sc->spec->name)
                                     ? "another board"
                                     : "a mig.config label");
        struct mig_layout l;
        char msg[400];
        if (mig_layout_check(sc->spec, c->day_layout, &l, msg, sizeof(msg)))
            return conf_errf(err, d, conf_get(r, "day"), "day", "%s", msg);
        if (mig_layout_check(sc->spec, c->night_layout, &l, msg, sizeof(msg)))
            return conf_errf(err, d, conf_get(r, "night"), "night", "%s", msg);
    }
    return 0;
}

static enum tidal_phase phase_at(const struct tidal_state *st, sim_time t)
{
    if (tidal_is_day(&st->cfg.win, t))
        return PH_DAY;
    return tidal_training_allowed(&st->cfg.win, t, st->lead) ? PH_NIGHT : PH_HANDOVER;
}

/*
 * A card that takes one more replica of svc now, or UINT32_MAX. With
 * `relayout`, only a card in the layout of the current use (want: 1 day,
 * 0 night), so that a free card is re-laid out before it serves.
 */
static uint32_t pick_card(struct sim *s, const struct tidal_state *st, uint32_t svc, uint8_t want)
{
    const struct service_cfg *c = &s->sc->services[svc];
    struct tenant_req req = {.kind = TENANT_INFER,
                             .owner = svc,
                             .mem_gib = c->mem_gib,
                             .sm_cap = c->sm_cap,
                             .mig_profile = c->mig_profile};
    /*
     * Placement constraints (sim/sim.h): its preferred pools first, then any it may use.
     * Whole cards go node-compact, as every policy's inference (docs/policies.md
     * "Node-compact inference"): the node already holding the most inference cards, then
     * the node with the fewest free cards, then the lowest card. MIG instances keep card
     * order (they fill the instances of one card before the next).
     */
    for (int pass = s->constrained ? 0 : 1; pass < 2; pass++) {
        uint32_t best = UINT32_MAX, best_inf = 0, best_free = 0;
        uint32_t node = UINT32_MAX, node_inf = 0;
        for (uint32_t g = 0; g < s->cl.ngpus; g++) {
            const struct card *cd = &s->cl.cards[g];
            if (!sim_svc_allows(s, svc, g) || (pass == 0 && !sim_svc_prefers(s, svc, g)))
                continue;
            /* Exclusive-style use of whole cards, unless MIG instances split them. */
            bool whole = cluster_card_mode(&s->cl, g) != SHARE_MIG;
            if (whole && cd->nten)
                continue;
            if (st->cfg.day_layout && st->layout[g] != want)
                continue;
            if (cluster_can_place(&s->cl, g, &req) != 0)
                continue;
            bool training = false;
            for (uint32_t k = 0; k < cd->nten; k++)
                training |= s->cl.tenants[cd->ten[k]].kind == TENANT_TRAIN;
            if (training)
                continue;
            if (!whole)
                return g; /* MIG instances: card order */
            if (cd->node != node) {
                node = cd->node;
                node_inf = pol_node_inference_cards(&s->cl, node);
            }
            uint32_t nfree = s->cl.node_free[node];
            if (best == UINT32_MAX || node_inf > best_inf ||
                (node_inf == best_inf && nfree < best_free)) {
                best = g;
                best_inf = node_inf;
                best_free = nfree;
            }
        }
        if (best != UINT32_MAX)
            return best;
    }
    return UINT32_MAX;
}

static void schedule_next(struct tidal_state *st);

/* Replicas of service i on card g. */
static uint32_t on_card(const struct sim *s, uint32_t g, uint32_t i)
{
    const struct card *cd = &s->cl.cards[g];
    uint32_t n = 0;
    for (uint32_t k = 0; k < cd->nten; k++) {
        const struct tenant *t = &s->cl.tenants[cd->ten[k]];
        n += t->kind == TENANT_INFER && t->owner == i && !s->svcs[i].reps[t->member].draining &&
             !s->svcs[i].reps[t->member].gone;
    }
    return n;
}

/*
 * Shrink each service to its target, emptying whole cards first (the cards
 * with the fewest replicas), and among those the card on the node holding
 * the fewest inference cards (node-compact, as sim_stop_replica's victims),
 * so freed cards come back as whole nodes where they can and can run
 * training gangs or be re-laid out.
 */
static void scale_down(struct sim *s, const uint32_t *target)
{
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t have = service_replicas(&s->svcs[i]);
        while (have > target[i]) {
            uint32_t best = UINT32_MAX, best_n = UINT32_MAX, best_inf = UINT32_MAX;
            uint32_t node = UINT32_MAX, node_inf = 0;
            for (uint32_t g = 0; g < s->cl.ngpus; g++) {
                uint32_t n = on_card(s, g, i);
                if (n == 0 || n > best_n)
                    continue;
                if (s->cl.cards[g].node != node) {
                    node = s->cl.cards[g].node;
                    node_inf = pol_node_inference_cards(&s->cl, node);
                }
                if (n < best_n || node_inf < best_inf) {
                    best = g;
                    best_n = n;
                    best_inf = node_inf;
                }
            }
            if (best == UINT32_MAX)
                break;
            uint32_t k = sim_stop_replicas_on(s, best, have - target[i]);
            if (k == 0)
                break;
            have -= k;
        }
    }
}

/* Work since job j's last checkpoint, µs at full speed: what a preemption may cost. */
static double work_since_ckpt(const struct job *j, sim_time now)
{
    if (j->phase != PHASE_RUN)
        return 0; /* restoring: nothing new; saving: the save under way keeps it */
    double done = j->done_us + (double)(now - j->since) * j->rate;
    if (done > (double)j->spec.work)
        done = (double)j->spec.work;
    return done > j->ckpt_us ? done - j->ckpt_us : 0;
}

static bool job_stopping(const struct job *j)
{
    return j->state == JOB_RUNNING && (j->stop_after || j->phase == PHASE_STOP);
}

/* Replicas the one-card services lack to reach their targets (tensor-parallel: gather_tp). */
static uint64_t missing_replicas(const struct sim *s, const uint32_t *target)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t have = service_replicas(&s->svcs[i]);
        if (pol_gang_size(s, i) == 1)
            m += have < target[i] ? target[i] - have : 0;
    }
    return m;
}

/*
 * The cards of a new tensor-parallel replica of svc (whole cards, never MIG):
 * those held for it first (one node), else free cards of one node no one else
 * holds, node-compact. Returns n or 0.
 */
static uint32_t pick_tp(struct sim *s, struct tidal_state *st, uint32_t svc, uint32_t *cards)
{
    return pol_pick_gang_held(s, &st->holds, svc, cards); /* common.h */
}

static void scale_up(struct sim *s, struct tidal_state *st, const uint32_t *target, uint8_t want)
{
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t have = service_replicas(&s->svcs[i]);
        while (have < target[i]) {
            uint32_t cards[LLM_MAX_TP], n;
            if (pol_gang_size(s, i) > 1) {
                n = pick_tp(s, st, i, cards);
            } else {
                cards[0] = pick_card(s, st, i, want);
                n = cards[0] == UINT32_MAX ? 0 : 1;
            }
            if (n == 0 || sim_start_replica_on(s, i, cards, n, s->sc->policy.as.up_delay) != 0)
                break;
            for (uint32_t k = 0; k < n; k++)
                pol_unhold(&st->holds, cards[k]);
            have++;
        }
    }
}

/* pol_job_cost_fn: a job stopping costs nothing, a running one its work since the checkpoint. */
static int64_t tp_cost(void *ctx, uint32_t j)
{
    struct tidal_state *st = ctx;
    const struct job *job = &st->s->tr.jobs[j];
    if (job->state != JOB_RUNNING)
        return -1;
    if (job_stopping(job))
        return 0;
    return (int64_t)work_since_ckpt(job, st->s->eng.now) + 1;
}

/*
 * Cards for the replicas tensor-parallel services lack: per replica beyond
 * those already gathering, the node where the least work is lost
 * (pol_plan_best_for), its jobs preempted gracefully and its cards held for the
 * service; a service that lacks none gives its holds back. Returns true if
 * it preempted.
 */
static bool gather_tp(struct sim *s, struct tidal_state *st, const uint32_t *target, bool allowed)
{
    bool preempted = false;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint32_t n = pol_gang_size(s, i), have = service_replicas(&s->svcs[i]), cards[LLM_MAX_TP];
        if (n == 1)
            continue;
        if (have >= target[i] || !allowed) {
            pol_unhold_owner(&st->holds, i);
            continue;
        }
        for (uint32_t held = pol_held_count(&st->holds, i) / n; held < target[i] - have; held++) {
            uint32_t njobs;
            const bool *ok = pol_holds_mask(&st->holds, UINT32_MAX);
            if (pol_plan_best_for(s, i, ok, tp_cost, st, st->plan_jobs, cards, &njobs) ==
                UINT32_MAX)
                break;
            for (uint32_t k = 0; k < n; k++)
                pol_hold(&st->holds, cards[k], i);
            for (uint32_t k = 0; k < njobs; k++)
                preempted |= trainer_preempt(&s->tr, st->plan_jobs[k], true) == 0;
        }
    }
    return preempted;
}

/* Whether job j has a member on a card held for a tensor-parallel replica. */
static bool on_held(const struct sim *s, const struct tidal_state *st, uint32_t j)
{
    const struct job *job = &s->tr.jobs[j];
    for (uint32_t m = 0; st->holds.n && m < job->spec.gpus; m++)
        if (st->holds.owner[job->gpus[m]])
            return true;
    return false;
}

/*
 * MIG re-layout of the free cards: to the day layout as many as inference
 * still lacks (`need_cards`, counting cards already re-laid out for it);
 * a free card in the day layout that inference does not need goes back to the
 * night layout for training. Returns the cards now being re-laid out for the
 * day.
 */
static uint32_t relayout_free(struct sim *s, struct tidal_state *st, uint32_t need_cards,
                              bool inference_lacks)
{
    uint32_t to_day = 0;
    char err[256];
    for (uint32_t g = 0; g < s->cl.ngpus; g++)
        to_day += s->cl.cards[g].reconfiguring && st->layout[g] == 1;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct card *cd = &s->cl.cards[g];
        if (cd->nten || cd->reconfiguring)
            continue;
        uint8_t want;
        if (st->layout[g] == 0 && to_day < need_cards)
            want = 1;
        else if (st->layout[g] == 1 && !inference_lacks)
            want = 0;
        else
            continue;
        if (sim_mig_relayout(s, g, want ? st->cfg.day_layout : st->cfg.night_layout, err,
                             sizeof(err)) == 0) {
            st->layout[g] = want;
            to_day += want;
        }
    }
    return to_day;
}

static int grow_scratch(struct tidal_state *st, uint32_t n)
{
    if (n <= st->cand_cap)
        return 0;
    uint32_t cap = st->cand_cap ? st->cand_cap : 64;
    while (cap < n)
        cap *= 2;
    struct tidal_victim *c = realloc(st->cand, cap * sizeof(*c));
    if (!c)
        return -ENOMEM;
    st->cand = c;
    uint32_t *j = realloc(st->cand_job, cap * sizeof(*j));
    if (!j)
        return -ENOMEM;
    st->cand_job = j;
    bool *t = realloc(st->take, cap * sizeof(*t));
    if (!t)
        return -ENOMEM;
    st->take = t;
    st->cand_cap = cap;
    return 0;
}

/*
 * Preempt (gracefully) running training jobs holding `need` cards, those with
 * the least work since their checkpoint first, never more cards than a gang
 * forces (tidal_pick_victims). Returns the cards they will give back.
 */
static uint32_t reclaim(struct sim *s, struct tidal_state *st, uint32_t need)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < s->tr.njobs; j++) {
        const struct job *job = &s->tr.jobs[j];
        if (job->state != JOB_RUNNING || job_stopping(job))
            continue;
        if (grow_scratch(st, n + 1))
            return 0; /* out of memory: inference waits for cards to free up */
        st->cand[n] = (struct tidal_victim){.gpus = job->spec.gpus,
                                            .work_us = work_since_ckpt(job, s->eng.now)};
        st->cand_job[n++] = j;
    }
    if (n == 0 || tidal_pick_victims(st->cand, n, need, st->take) < 0)
        return 0;
    uint32_t freed = 0;
    for (uint32_t k = 0; k < n; k++)
        if (st->take[k] && trainer_preempt(&s->tr, st->cand_job[k], true) == 0)
            freed += st->cand[k].gpus;
    return freed;
}

/*
 * With an HPA inside the windows, a window bounds the cards inference holds in
 * all, not each service's share of them: the services' troughs need not fall
 * in the same hours (a search service rising before dawn while chat is at its
 * lowest), and a platform team sets the night node pool, not a fixed split of
 * it. Each service gets what its HPA asks while the asks fit the window's cards
 * (bound[] split by peak, summed in cards); when they do not, the cards are
 * shared in proportion to the asks (at least one replica each that asks one),
 * the remainder to the earliest services. target[i] <= want[i] always.
 */
static void share_window(const struct sim *s, const uint32_t *want, const uint32_t *bound,
                         uint32_t *target)
{
    uint64_t cards = 0, asked = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint64_t g = pol_gang_size(s, i);
        cards += (uint64_t)bound[i] * g;
        asked += (uint64_t)want[i] * g;
    }
    uint64_t given = 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        uint64_t g = pol_gang_size(s, i);
        if (asked <= cards) {
            target[i] = want[i];
            continue;
        }
        uint64_t c = (uint64_t)((double)cards * (double)want[i] * (double)g / (double)asked);
        uint64_t r = c / g;
        if (r == 0 && want[i] > 0)
            r = 1;
        target[i] = (uint32_t)r;
        given += r * g;
    }
    for (uint32_t i = 0; asked > cards && i < s->nsvcs; i++) {
        uint64_t g = pol_gang_size(s, i);
        while (target[i] < want[i] && given + g <= cards) {
            target[i]++;
            given += g;
        }
    }
}

/*
 * One pass: inference to the phase's target, the cards it lacks reclaimed
 * from training (outside the night), training on every card left. Returns
 * true when it preempted (cards may have been released at once: another pass
 * gives them to inference first).
 */
static bool reconcile_pass(struct sim *s, struct tidal_state *st)
{
    st->phase = phase_at(st, s->eng.now);
    bool inference_time = st->phase != PH_NIGHT;
    uint8_t want = inference_time ? 1 : 0;
    const uint32_t *bound = inference_time ? st->day_target : st->night_target;
    uint32_t *target = st->target;
    if (st->hpa)
        share_window(s, st->want, bound, target);
    else
        for (uint32_t i = 0; i < s->nsvcs; i++)
            target[i] = st->want[i] < bound[i] ? st->want[i] : bound[i];

    scale_down(s, target);
    scale_up(s, st, target, want);
    uint64_t missing = missing_replicas(s, target);
    uint64_t lack = (missing + st->room - 1) / st->room; /* cards */
    uint32_t coming = 0;
    if (st->cfg.day_layout)
        coming = relayout_free(s, st, inference_time ? (uint32_t)lack : 0,
                               inference_time && missing > 0);
    for (uint32_t j = 0; j < s->tr.njobs; j++)
        if (job_stopping(&s->tr.jobs[j]) && !on_held(s, st, j))
            coming += s->tr.jobs[j].spec.gpus;
    lack = lack > coming ? lack - coming : 0;

    /* By night only an HPA can ask for more than inference holds. */
    bool preempted = gather_tp(s, st, target, inference_time || st->hpa);
    /* By night only an HPA can ask for more than inference holds. */
    if ((inference_time || st->hpa) && lack > 0) {
        uint32_t freed = reclaim(s, st, (uint32_t)lack);
        preempted = preempted || freed > 0;
        lack = lack > freed ? lack - freed : 0;
    }
    if (!preempted && (st->phase == PH_NIGHT || lack == 0))
        pol_start_whole_masked(s, &st->q, false, s->cl.ngpus,
                               st->holds.n ? pol_holds_mask(&st->holds, UINT32_MAX) : NULL);
    return preempted;
}

/* Reconcile until stable; calls from callbacks it causes ask for another pass. */
static void reconcile(struct sim *s, struct tidal_state *st)
{
    if (st->busy) {
        st->again = true;
        return;
    }
    st->busy = true;
    do {
        st->again = false;
        if (reconcile_pass(s, st))
            st->again = true;
    } while (st->again);
    st->busy = false;
}

static void on_edge(void *ctx, uint64_t arg)
{
    struct tidal_state *st = ctx;
    (void)arg;
    st->ev.slot = 0;
    reconcile(st->s, st);
    schedule_next(st);
}

static void schedule_next(struct tidal_state *st)
{
    sim_time now = st->s->eng.now, t = tidal_next_edge(&st->cfg.win, now);
    sim_time h = tidal_handover_start(&st->cfg.win, now, st->lead);
    if (h > now && h < t)
        t = h;
    if (t < st->s->sc->duration)
        engine_at(&st->s->eng, t, on_edge, st, 0, &st->ev);
}

static int tidal_init(struct sim *s, void **state)
{
    struct tidal_state *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    *state = st;
    st->s = s;
    st->cfg = *(const struct tidal_pcfg *)s->sc->policy.cfg;
    st->day_target = calloc(s->nsvcs + 1, sizeof(uint32_t));
    st->night_target = calloc(s->nsvcs + 1, sizeof(uint32_t));
    st->want = calloc(s->nsvcs + 1, sizeof(uint32_t));
    st->target = calloc(s->nsvcs + 1, sizeof(uint32_t));
    st->layout = calloc(s->cl.ngpus, 1);
    st->plan_jobs = calloc((size_t)s->cl.per_node * (CARD_MAX_TENANTS + 1), sizeof(*st->plan_jobs));
    if (!st->day_target || !st->night_target || !st->want || !st->target || !st->layout ||
        !st->plan_jobs || pol_holds_init(&st->holds, s->cl.ngpus))
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nsvcs; i++)
        st->want[i] = UINT32_MAX; /* the window's target, until an HPA says otherwise */
    st->per_card = 1;
    if (st->cfg.day_layout) {
        struct mig_layout l;
        char err[256];
        if (mig_layout_check(s->sc->spec, st->cfg.day_layout, &l, err, sizeof(err)) == 0)
            st->per_card = (uint32_t)l.n;
    }
    /* Replicas an emptied card takes: one whole card, a day-layout card, or an initial MIG card. */
    st->room = st->per_card;
    if (!st->cfg.day_layout && s->cl.mode == SHARE_MIG && s->cl.ngpus && s->cl.cards[0].layout.n)
        st->room = (uint32_t)s->cl.cards[0].layout.n;
    if (st->room == 0)
        st->room = 1;
    uint32_t day = st->cfg.day_from_peak ? peak_cards(s)
                   : st->cfg.day_gpus    ? st->cfg.day_gpus
                                         : s->cl.ngpus;
    pol_split_by_peak(s, day * st->per_card, st->day_target);
    uint32_t night = s->sc->policy.inference_gpus;
    if (st->cfg.day_layout) {
        struct mig_layout l;
        char err[256];
        uint32_t k = 1;
        if (mig_layout_check(s->sc->spec, st->cfg.night_layout, &l, err, sizeof(err)) == 0)
            k = (uint32_t)l.n;
        night *= k;
    }
    pol_split_by_peak(s, night, st->night_target);
    if (pol_any_tp(s)) { /* whole cards (MIG refuses tensor parallelism): split by card need */
        pol_split_by_need(s, day, st->day_target);
        pol_split_by_need(s, night, st->night_target);
    }
    /* Lead: the longest checkpoint a job of the largest size would write, a re-layout, a start. */
    if (st->cfg.lead >= 0) {
        st->lead = st->cfg.lead;
    } else {
        const struct train_cfg *tc = &s->sc->training.run;
        double save = ckpt_save_s(&tc->knobs, tc->state_gb_per_gpu * 1e9 * 8);
        double relay = st->cfg.day_layout ? mig_reconfig_seconds(&s->cl.mig) : 0;
        st->lead = tidal_lead_time(sim_time_from_sec(save), sim_time_from_sec(relay),
                                   s->sc->policy.as.up_delay);
    }
    reconcile(s, st);
    if (s->sc->policy.autoscale) {
        /* The HPAs start from the night replicas just placed. */
        int rc = pol_scaler_init(&st->ps, s, NULL);
        if (rc)
            return rc;
        st->hpa = true;
        for (uint32_t i = 0; i < s->nsvcs; i++)
            st->want[i] = service_replicas(&s->svcs[i]);
    }
    schedule_next(st);
    return 0;
}

static void tidal_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct tidal_state *st = state;
    if (!pol_queue_job(s, &st->q, j, true))
        return;
    reconcile(s, st);
}

static void tidal_on_event(struct sim *s, void *state, uint32_t x)
{
    (void)x;
    reconcile(s, state);
}

static void tidal_on_requeue(struct sim *s, void *state, uint32_t j)
{
    struct tidal_state *st = state;
    if (!pol_queue_job(s, &st->q, j, true))
        return;
    reconcile(s, st);
}

/*
 * Each service's HPA sees the interval just closed, with the metrics of
 * pol_scaler_tick (sim/policy/common.h): the arrival rate, or the replicas'
 * measured busy time if it asks for more (HPA's multi-metric rule). What it
 * asks for is capped by the window's target in reconcile_pass.
 */
static void hpa_observe(struct sim *s, struct tidal_state *st)
{
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        struct autoscale *a = &st->ps.as[i];
        double rate = pol_hpa_load(s, i, a, pol_interval_rate(s, i));
        int n = autoscale_observe(a, s->eng.now, rate);
        if (n >= 0)
            st->want[i] = (uint32_t)n;
    }
}

static void tidal_on_tick(struct sim *s, void *state)
{
    struct tidal_state *st = state;
    if (st->hpa)
        hpa_observe(s, st);
    reconcile(s, st);
}

static void tidal_destroy(void *state)
{
    struct tidal_state *st = state;
    if (!st)
        return;
    jobq_release(&st->q);
    if (st->hpa)
        pol_scaler_release(&st->ps);
    free(st->want);
    free(st->target);
    free(st->cand);
    free(st->cand_job);
    free(st->take);
    free(st->day_target);
    free(st->night_target);
    free(st->layout);
    free(st->plan_jobs);
    pol_holds_release(&st->holds);
    free(st);
}

const struct policy_ops policy_tidal = {
    .name = "tidal",
    .keys = tidal_keys,
    .parse = tidal_parse,
    .free_cfg = free,
    .init = tidal_init,
    .on_submit = tidal_on_submit,
    .on_finish = tidal_on_event,
    .on_requeue = tidal_on_requeue,
    .on_card_ready = tidal_on_event,
    .on_tick = tidal_on_tick,
    .destroy = tidal_destroy,
};
