/*
 * dedicated.c — the `dedicated` policy: one pod, one card.
 *
 * A fixed inference pool (policy.inference_gpus, sized for peak) holds the
 * services' replicas for the whole run; the rest of the cluster runs a FIFO
 * training queue, each job gang-placed on whole cards of one node (best fit)
 * or on whole free nodes. `queueing` is Kueue's ClusterQueue
 * queueingStrategy: BestEffortFIFO (default, as Kueue's): a job that does not
 * fit now does not block the jobs behind it; StrictFIFO: the head waits and
 * everything behind it waits too (no backfilling). This is the baseline the
 * design starts from (clusters idle at ~50-60 %). A job larger than the
 * training pool can never run and is rejected at submission.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim/policy/common.h"
#include "sim/scenario.h"
#include "sim/sim.h"

struct dedicated_cfg {
    bool strict; /* queueing: StrictFIFO */
};

struct dedicated {
    struct jobq q; /* queued jobs in submission order */
    bool strict;
    uint32_t pool; /* cards left for training */
    uint32_t next; /* next card for an initial replica */
};

static void try_start(struct sim *s, struct dedicated *d)
{
    pol_start_whole(s, &d->q, d->strict, d->pool);
}

/*
 * pol_pick_fn: the next card of the pool (that a tensor-parallel replica can
 * start on) and, for a tensor-parallel replica, the next free cards of its
 * node (pol_gang_around): whole nodes first, compact by construction.
 */
static uint32_t next_card(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards)
{
    struct dedicated *d = ctx;
    if (s->constrained) /* the pools it prefers, else may use (sim.h) */
        return pol_pick_gang(s, NULL, svc, cards);
    if (pol_gang_size(s, svc) > 1 || (d->next < s->cl.ngpus && s->cl.cards[d->next].nten))
        while (d->next < s->cl.ngpus && !pol_gang_fits(s, svc, d->next))
            d->next++;
    return d->next < s->cl.ngpus ? pol_gang_around(s, svc, d->next++, cards) : 0;
}

static int dedicated_init(struct sim *s, void **state)
{
    struct dedicated *d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    *state = d;
    const struct dedicated_cfg *cfg = s->sc->policy.cfg;
    d->strict = cfg && cfg->strict;

    /* The pool is the first inference_gpus cards, in order (whole nodes first). */
    int rc = pol_place_initial(s, next_card, d);
    if (rc)
        return rc;
    uint32_t pool = s->sc->policy.inference_gpus;
    d->pool = s->cl.ngpus - pool;
    return 0;
}

static void dedicated_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct dedicated *d = state;
    if (s->tr.jobs[j].spec.gpus > d->pool) {
        trainer_reject(&s->tr, j);
        return;
    }
    if (!pol_queue_job(s, &d->q, j, false))
        return;
    try_start(s, d);
}

static void dedicated_on_finish(struct sim *s, void *state, uint32_t j)
{
    (void)j;
    try_start(s, state);
}

static void dedicated_destroy(void *state)
{
    struct dedicated *d = state;
    if (!d)
        return;
    jobq_release(&d->q);
    free(d);
}

static int dedicated_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    static const char *const strategies[] = {"BestEffortFIFO", "StrictFIFO", NULL};
    struct dedicated_cfg *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    sc->policy.cfg = c;
    int strategy = 0;
    int rc = conf_enum(&sc->doc, p, "queueing", false, strategies, &strategy, err);
    if (rc)
        return rc;
    c->strict = strategy == 1;
    return 0;
}

static void dedicated_free_cfg(void *cfg)
{
    free(cfg);
}

static const char *const dedicated_keys[] = {"queueing", NULL};

const struct policy_ops policy_dedicated = {
    .name = "dedicated",
    .keys = dedicated_keys,
    .parse = dedicated_parse,
    .free_cfg = dedicated_free_cfg,
    .init = dedicated_init,
    .on_submit = dedicated_on_submit,
    .on_finish = dedicated_on_finish,
    .on_tick = NULL,
    .destroy = dedicated_destroy,
};
