/*
 * dedicated.c — the `dedicated` policy: one pod, one card.
 *
 * A fixed inference pool (policy.inference_gpus, sized for peak) holds the
 * services' replicas for the whole run; the rest of the cluster runs a strict
 * FIFO training queue (the head blocks: no backfilling), each job gang-placed
 * on whole cards of one node (best fit) or on whole free nodes. This is the
 * ~55 % utilisation baseline of DESIGN.md. A job larger than the training
 * pool can never run and is rejected at submission.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim/policy/common.h"
#include "sim/sim.h"

struct dedicated {
    uint32_t *fifo; /* job indices; head .. tail */
    uint32_t head, tail, cap;
    uint32_t pool; /* cards left for training */
    uint32_t next; /* next card for an initial replica */
    uint32_t *gang;
};

static int fifo_push(struct dedicated *d, uint32_t j)
{
    if (d->tail == d->cap) {
        if (d->head > 0) {
            for (uint32_t i = d->head; i < d->tail; i++)
                d->fifo[i - d->head] = d->fifo[i];
            d->tail -= d->head;
            d->head = 0;
        } else {
            uint32_t cap = d->cap ? 2 * d->cap : 256;
            uint32_t *f = realloc(d->fifo, cap * sizeof(*f));
            if (!f)
                return -ENOMEM;
            d->fifo = f;
            d->cap = cap;
        }
    }
    d->fifo[d->tail++] = j;
    return 0;
}

static void try_start(struct sim *s, struct dedicated *d)
{
    while (d->head < d->tail) {
        uint32_t j = d->fifo[d->head];
        const struct job *job = &s->tr.jobs[j];
        if (cluster_find_gang(&s->cl, job->spec.gpus, d->gang))
            return; /* strict FIFO: the head waits */
        int rc = trainer_start(&s->tr, j, d->gang);
        if (rc < 0)
            return;
        d->head++;
    }
}

/* pol_pick_fn: the next card of the pool. */
static uint32_t next_card(struct sim *s, void *ctx, uint32_t svc)
{
    struct dedicated *d = ctx;
    (void)svc;
    return d->next < s->cl.ngpus ? d->next++ : UINT32_MAX;
}

static int dedicated_init(struct sim *s, void **state)
{
    struct dedicated *d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    d->gang = calloc(s->cl.ngpus, sizeof(*d->gang));
    if (!d->gang) {
        free(d);
        return -ENOMEM;
    }
    *state = d;

    /* The pool is the first inference_gpus cards, in order. */
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
    if (s->tr.jobs[j].spec.gpus > d->pool || fifo_push(d, j)) {
        trainer_reject(&s->tr, j);
        return;
    }
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
    free(d->fifo);
    free(d->gang);
    free(d);
}

const struct policy_ops policy_dedicated = {
    .name = "dedicated",
    .init = dedicated_init,
    .on_submit = dedicated_on_submit,
    .on_finish = dedicated_on_finish,
    .on_tick = NULL,
    .destroy = dedicated_destroy,
};
