/*
 * test_engine.c — the engine loop's stop rules (sim/core/engine.h): a set
 * interrupt flag stops the run right after the event that saw it set, however
 * many events are pending (issue 14: the flag used to be read once per 65,536
 * events, minutes at extreme rates), and an unset flag changes nothing.
 */
#include <criterion/criterion.h>

#include "sim/core/engine.h"

struct chain {
    struct engine *e;
    volatile sig_atomic_t *flag;
    uint64_t raise_at; /* set the flag in this event (1-based); 0 = never */
    uint64_t seen;
};

/* Each event schedules the next one 1 µs later: an endless stream of cheap events. */
static void tick(void *ctx, uint64_t arg)
{
    struct chain *c = ctx;
    c->seen++;
    if (c->raise_at && c->seen == c->raise_at)
        *c->flag = 1;
    engine_after(c->e, 1, tick, c, arg + 1, NULL);
}

Test(engine, interrupt_stops_right_after_the_event_that_raised_it)
{
    static const uint64_t at[] = {1, 2, 3, 1000, 65535, 65537, 200001};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        struct engine e;
        volatile sig_atomic_t flag = 0;
        cr_assert_eq(engine_init(&e), 0);
        struct chain c = {&e, &flag, at[i], 0};
        e.interrupt = &flag;
        cr_assert_eq(engine_at(&e, 0, tick, &c, 0, NULL), 0);
        int rc = engine_run(&e, 10 * SIM_SEC); /* ten million events if nothing stops it */
        cr_expect_eq(rc, 1, "raised at %llu", (unsigned long long)at[i]);
        cr_expect(e.interrupted);
        cr_expect_eq(e.processed, at[i], "raised at %llu, stopped after %llu events",
                     (unsigned long long)at[i], (unsigned long long)e.processed);
        cr_expect_eq(e.now, (sim_time)(at[i] - 1), "now = time of the last event handled");
        engine_release(&e);
    }
}

Test(engine, unset_flag_runs_to_the_end)
{
    struct engine e;
    volatile sig_atomic_t flag = 0;
    cr_assert_eq(engine_init(&e), 0);
    struct chain c = {&e, &flag, 0, 0};
    e.interrupt = &flag;
    cr_assert_eq(engine_at(&e, 0, tick, &c, 0, NULL), 0);
    /* Events at 0, 1, ..., 300000 µs: 300,001 of them, then now = until. */
    cr_expect_eq(engine_run(&e, 300000), 0);
    cr_expect_eq(e.processed, 300001);
    cr_expect_eq(e.now, 300000);
    cr_expect(!e.interrupted);
    engine_release(&e);
}
