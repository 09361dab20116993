/*
 * engine.h — the discrete-event engine: a clock and a queue of pending events.
 *
 * Room sim/core/ (the kernel): includes nothing of ours; knows no cluster,
 * scenario or policy. traces/ may use it. Rule: docs/architecture.md.
 *
 * The engine pops the earliest event, advances the clock to its time and
 * calls its handler with the context pointer it was scheduled with. It knows
 * nothing of GPUs. Handlers schedule further events through engine_at() and
 * engine_after(). Time never goes backwards: scheduling in the past is a bug
 * and is clamped to now (asserted in debug builds).
 */
#ifndef TIDESIM_CORE_ENGINE_H
#define TIDESIM_CORE_ENGINE_H

#include <assert.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/core/evq.h"

struct engine;

/* Called about once per wall-clock second during engine_run() (may be NULL). */
typedef void (*engine_progress_fn)(void *ctx, const struct engine *e);

struct engine {
    struct evq q;
    sim_time now;
    uint64_t processed;                     /* events handled */
    const volatile sig_atomic_t *interrupt; /* stop when *interrupt != 0 (may be NULL) */
    bool interrupted;                       /* set when a run stopped on *interrupt */
    bool stop;                              /* a handler asks the run to stop (error) */
    engine_progress_fn progress;
    void *progress_ctx;
};

/* Returns 0 or -ENOMEM. */
int engine_init(struct engine *e);
void engine_release(struct engine *e);

/* Schedule fn(ctx, arg) at absolute time t (>= now). out may be NULL. Returns 0 or -ENOMEM. */
static inline int engine_at(struct engine *e, sim_time t, evq_fn fn, void *ctx, uint64_t arg,
                            struct evq_handle *out)
{
    assert(t >= e->now);
    if (t < e->now)
        t = e->now;
    return evq_push(&e->q, t, fn, ctx, arg, out);
}

static inline int engine_after(struct engine *e, sim_time dt, evq_fn fn, void *ctx, uint64_t arg,
                               struct evq_handle *out)
{
    return engine_at(e, e->now + dt, fn, ctx, arg, out);
}

/* Cancel a pending event; stale handles are ignored. Clears *h. Returns true if it was pending. */
bool engine_cancel(struct engine *e, struct evq_handle *h);

/*
 * Run events with time <= until, then set now = until. Returns 0, 1 when
 * stopped early by *interrupt, or 2 when a handler set e->stop (in both cases
 * now = time of the last event handled). *interrupt is read after every
 * event, so a signal is acted on as soon as the event running ends; the
 * progress callback's clock is read about every 20 ms of wall time.
 */
int engine_run(struct engine *e, sim_time until);

#endif
