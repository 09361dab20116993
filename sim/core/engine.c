/* engine.c — clock + event loop over the 4-ary heap of evq.c. */
#include "sim/core/engine.h"

#include <assert.h>
#include <time.h>

int engine_init(struct engine *e)
{
    e->now = 0;
    e->processed = 0;
    e->interrupt = NULL;
    e->interrupted = false;
    e->stop = false;
    e->progress = NULL;
    e->progress_ctx = NULL;
    return evq_init(&e->q, 1024);
}

void engine_release(struct engine *e)
{
    evq_release(&e->q);
}

bool engine_cancel(struct engine *e, struct evq_handle *h)
{
    bool was = evq_cancel(&e->q, *h);
    h->slot = 0;
    h->seq = 0;
    return was;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int engine_run(struct engine *e, sim_time until)
{
    struct evq_event ev;
    double next_report = e->progress ? wall_seconds() + 1.0 : 0;

    for (;;) {
        /* Check the interrupt flag and the progress clock every 64k events. */
        for (unsigned burst = 0; burst < 65536u; burst++) {
            if (!evq_pop_until(&e->q, until, &ev))
                goto done;
            e->now = ev.time;
            e->processed++;
            ev.fn(ev.ctx, ev.arg);
            if (e->stop)
                return 2;
        }
        if (e->interrupt && *e->interrupt) {
            e->interrupted = true;
            return 1;
        }
        if (e->progress) {
            double w = wall_seconds();
            if (w >= next_report) {
                e->progress(e->progress_ctx, e);
                next_report = w + 1.0;
            }
        }
    }
done:
    if (e->interrupt && *e->interrupt) {
        e->interrupted = true;
        return 1;
    }
    e->now = until;
    return 0;
}
