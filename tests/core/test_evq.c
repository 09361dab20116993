/* test_evq.c — ordering, FIFO ties, cancellation, compaction and isolation of the event queue. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/core/evq.h"
#include "sim/core/rng.h"

static void noop(void *ctx, uint64_t arg)
{
    (void)ctx;
    (void)arg;
}

static void count_call(void *ctx, uint64_t arg)
{
    *(uint64_t *)ctx += arg;
}

static struct evq_handle push_ok(struct evq *q, sim_time t, uint64_t arg)
{
    struct evq_handle h = {0, 0};
    cr_assert_eq(evq_push(q, t, noop, NULL, arg, &h), 0);
    cr_assert_neq(h.slot, 0u);
    return h;
}

/* Key order: (time, seq) strictly increasing. */
static bool key_after(sim_time t, uint64_t seq, sim_time pt, uint64_t pseq)
{
    return t > pt || (t == pt && seq > pseq);
}

Test(evq, pops_mixed_times_in_order)
{
    /* Hand-sorted reference: the arg is the rank of each time. */
    static const sim_time times[] = {500,           -7, 30, 2 * SIM_DAY, 0, 31, INT64_MAX - 1,
                                     INT64_MIN + 1, 29};
    static const uint64_t rank[] = {6, 1, 4, 7, 2, 5, 8, 0, 3};
    struct evq q;
    cr_assert_eq(evq_init(&q, 0), 0);
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        push_ok(&q, times[i], rank[i]);
    cr_assert_eq(evq_size(&q), 9u);

    struct evq_event ev;
    for (uint64_t r = 0; r < 9; r++) {
        cr_assert(evq_pop(&q, &ev));
        cr_assert_eq(ev.arg, r, "pop %llu returned rank %llu", (unsigned long long)r,
                     (unsigned long long)ev.arg);
    }
    cr_assert_not(evq_pop(&q, &ev));
    cr_assert_eq(evq_size(&q), 0u);
    evq_release(&q);
}

Test(evq, equal_times_pop_in_push_order)
{
    struct evq q;
    cr_assert_eq(evq_init(&q, 4), 0); /* small hint: forces growth too */
    /* 300 events at t=100 interleaved with events at 50 and 200. */
    for (uint64_t i = 0; i < 300; i++) {
        push_ok(&q, 100, i);
        if (i % 7 == 0)
            push_ok(&q, 200, 1000 + i);
        if (i % 11 == 0)
            push_ok(&q, 50, 2000 + i);
    }
    struct evq_event ev;
    uint64_t next = 0, pseq = 0;
    sim_time pt = INT64_MIN;
    while (evq_pop(&q, &ev)) {
        cr_assert(key_after(ev.time, ev.seq, pt, pseq));
        if (ev.time == 100) {
            cr_assert_eq(ev.arg, next, "FIFO broken: got %llu, expected %llu",
                         (unsigned long long)ev.arg, (unsigned long long)next);
            next++;
        } else if (ev.time == 50) {
            cr_assert_eq(next, 0u, "t=50 popped after a t=100 event");
        } else {
            cr_assert_eq(ev.time, 200);
            cr_assert_eq(next, 300u, "t=200 popped before the t=100 run ended");
        }
        pt = ev.time;
        pseq = ev.seq;
    }
    cr_assert_eq(next, 300u);
    evq_release(&q);
}

Test(evq, pop_returns_callback_context_and_argument)
{
    struct evq q;
    uint64_t sum = 0;
    cr_assert_eq(evq_init(&q, 0), 0);
    cr_assert_eq(evq_push(&q, 5, count_call, &sum, 40, NULL), 0);
    cr_assert_eq(evq_push(&q, 6, count_call, &sum, 2, NULL), 0);
    struct evq_event ev;
    while (evq_pop(&q, &ev))
        ev.fn(ev.ctx, ev.arg);
    cr_assert_eq(sum, 42u);
    evq_release(&q);
}

Test(evq, cancelled_event_never_fires)
{
    struct evq q;
    cr_assert_eq(evq_init(&q, 0), 0);
    push_ok(&q, 10, 1);
    struct evq_handle h = push_ok(&q, 20, 2);
    push_ok(&q, 30, 3);
    cr_assert(evq_is_pending(&q, h));
    cr_assert(evq_cancel(&q, h));
    cr_assert_not(evq_is_pending(&q, h));
    cr_assert_eq(evq_size(&q), 2u);

    struct evq_event ev;
    cr_assert(evq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 1u);
    cr_assert(evq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 3u);
    cr_assert_not(evq_pop(&q, &ev));
    evq_release(&q);
}

Test(evq, stale_handles_do_not_cancel)
{
    struct evq q;
    struct evq_event ev;
    cr_assert_eq(evq_init(&q, 0), 0);

    struct evq_handle zero = {0, 0};
    cr_assert_not(evq_cancel(&q, zero));
    cr_assert_not(evq_is_pending(&q, zero));
    struct evq_handle wild = {12345, 1};
    cr_assert_not(evq_cancel(&q, wild));

    /* Already fired. */
    struct evq_handle fired = push_ok(&q, 1, 1);
    cr_assert(evq_pop(&q, &ev));
    cr_assert_not(evq_is_pending(&q, fired));
    cr_assert_not(evq_cancel(&q, fired));

    /* Already cancelled. */
    struct evq_handle twice = push_ok(&q, 2, 2);
    cr_assert(evq_cancel(&q, twice));
    cr_assert_not(evq_cancel(&q, twice));
    /* A never-issued handle on the now free slot (its next generation) is not pending. */
    struct evq_handle forged = {twice.slot, twice.seq + 1};
    cr_assert_not(evq_is_pending(&q, forged));
    cr_assert_not(evq_cancel(&q, forged));

    /* Slot reused: the new event takes the freed slot, the old handle must not touch it. */
    struct evq_handle reuse = push_ok(&q, 3, 3);
    cr_assert_eq(reuse.slot, twice.slot, "LIFO free list should hand back the freed slot");
    cr_assert_neq(reuse.seq, twice.seq);
    cr_assert_not(evq_cancel(&q, twice));
    cr_assert_not(evq_cancel(&q, fired));
    cr_assert(evq_is_pending(&q, reuse));
    cr_assert_eq(evq_size(&q), 1u);
    cr_assert(evq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 3u);
    cr_assert_not(evq_is_pending(&q, reuse));
    evq_release(&q);
}

Test(evq, peek_time_skips_cancelled)
{
    struct evq q;
    struct evq_event ev;
    cr_assert_eq(evq_init(&q, 0), 0);
    cr_assert_eq(evq_peek_time(&q), SIM_TIME_MAX);
    struct evq_handle a = push_ok(&q, 70, 1);
    push_ok(&q, 90, 2);
    struct evq_handle c = push_ok(&q, 80, 3);
    cr_assert_eq(evq_peek_time(&q), 70);
    cr_assert_eq(evq_peek_time(&q), 70, "peek must not consume");
    cr_assert(evq_cancel(&q, a));
    cr_assert_eq(evq_peek_time(&q), 80);
    cr_assert(evq_cancel(&q, c));
    cr_assert_eq(evq_peek_time(&q), 90);
    cr_assert(evq_pop(&q, &ev));
    cr_assert_eq(ev.time, 90);
    cr_assert_eq(evq_peek_time(&q), SIM_TIME_MAX);
    evq_release(&q);
}

struct big {
    struct evq_handle *h;
    unsigned char *cancelled, *popped;
};

Test(evq, million_random_events_with_cancellations)
{
    enum { N = 1000000 };
    struct evq q;
    struct rng r;
    struct big b = {calloc(N, sizeof *b.h), calloc(N, 1), calloc(N, 1)};
    cr_assert(b.h && b.cancelled && b.popped);
    cr_assert_eq(rng_init(&r, 7, rng_stream_id("test/evq/million")), 0);
    cr_assert_eq(evq_init(&q, 0), 0);

    /* Times in [0, 200000): many ties, so seq ordering is exercised too. */
    for (uint64_t i = 0; i < N; i++) {
        sim_time t = (sim_time)(rng_uniform_pos(&r) * 200000.0);
        cr_assert_eq(evq_push(&q, t, noop, NULL, i, &b.h[i]), 0);
    }
    size_t ncancel = 0;
    for (uint64_t i = 0; i < N; i++) {
        if (rng_uniform_pos(&r) < 0.3) {
            cr_assert(evq_cancel(&q, b.h[i]));
            b.cancelled[i] = 1;
            ncancel++;
        }
    }
    cr_assert_gt(ncancel, N * 29 / 100);
    cr_assert_lt(ncancel, N * 31 / 100);
    cr_assert_eq(evq_size(&q), N - ncancel);

    struct evq_event ev;
    size_t npop = 0;
    sim_time pt = INT64_MIN;
    uint64_t pseq = 0;
    while (evq_pop(&q, &ev)) {
        if (npop > 0 && !key_after(ev.time, ev.seq, pt, pseq))
            cr_assert_fail("out of order at pop %zu", npop);
        if (b.cancelled[ev.arg] || b.popped[ev.arg])
            cr_assert_fail("event %llu popped though cancelled or already popped",
                           (unsigned long long)ev.arg);
        b.popped[ev.arg] = 1;
        pt = ev.time;
        pseq = ev.seq;
        npop++;
    }
    cr_assert_eq(npop, N - ncancel);
    cr_assert_eq(evq_size(&q), 0u);
    rng_release(&r);
    evq_release(&q);
    free(b.h);
    free(b.cancelled);
    free(b.popped);
}

/* After any cancel, compaction guarantees n <= max(2 * live, 1024). */
static size_t heap_bound(const struct evq *q)
{
    return 2 * q->live > 1024 ? 2 * q->live : 1024;
}

Test(evq, compaction_bounds_heap_and_keeps_order)
{
    enum { N = 20000, KEEP_EVERY = 10 };
    struct evq q;
    struct rng r;
    struct evq_handle *h = calloc(N, sizeof *h);
    cr_assert(h);
    cr_assert_eq(rng_init(&r, 3, rng_stream_id("test/evq/compact")), 0);
    cr_assert_eq(evq_init(&q, 0), 0);
    for (uint64_t i = 0; i < N; i++)
        h[i] = push_ok(&q, (sim_time)(rng_uniform_pos(&r) * 1e6), i);

    /* Cancel 90%: without compaction the heap would keep all N entries. */
    for (uint64_t i = 0; i < N; i++) {
        if (i % KEEP_EVERY != 0)
            cr_assert(evq_cancel(&q, h[i]));
        cr_assert_leq(q.n, heap_bound(&q), "heap bloated: n=%zu live=%zu", q.n, q.live);
    }
    cr_assert_eq(evq_size(&q), N / KEEP_EVERY);
    for (uint64_t i = 0; i < N; i += KEEP_EVERY)
        cr_assert(evq_is_pending(&q, h[i]));

    /* A cancel-heavy steady state: push one, cancel one, 200k times. */
    for (uint64_t i = 0; i < 200000; i++) {
        struct evq_handle x = push_ok(&q, (sim_time)(rng_uniform_pos(&r) * 1e6), N + i);
        cr_assert(evq_cancel(&q, x));
        cr_assert_leq(q.n, heap_bound(&q));
    }

    struct evq_event ev;
    size_t npop = 0;
    sim_time pt = INT64_MIN;
    uint64_t pseq = 0;
    while (evq_pop(&q, &ev)) {
        cr_assert_eq(ev.arg % KEEP_EVERY, 0u);
        cr_assert_lt(ev.arg, (uint64_t)N);
        if (npop > 0)
            cr_assert(key_after(ev.time, ev.seq, pt, pseq));
        pt = ev.time;
        pseq = ev.seq;
        npop++;
    }
    cr_assert_eq(npop, N / KEEP_EVERY);
    rng_release(&r);
    evq_release(&q);
    free(h);
}

/* One step of a deterministic script: push (with a time from the rng) or pop. */
static void script_step(struct evq *q, struct rng *r, uint64_t step, uint64_t *log, size_t *nlog)
{
    struct evq_event ev;
    if (step % 3 == 2) {
        if (evq_pop(q, &ev))
            log[(*nlog)++] = ev.arg;
    } else {
        sim_time t = (sim_time)(rng_uniform_pos(r) * 1000.0);
        cr_assert_eq(evq_push(q, t, noop, NULL, step, NULL), 0);
    }
}

Test(evq, interleaved_queues_are_independent)
{
    enum { STEPS = 30000 };
    uint64_t *alone = calloc(STEPS, sizeof *alone), *la = calloc(STEPS, sizeof *la),
             *lb = calloc(STEPS, sizeof *lb);
    cr_assert(alone && la && lb);
    size_t n_alone = 0, na = 0, nb = 0;
    struct evq q, qa, qb;
    struct rng r, ra, rb;
    uint64_t sid = rng_stream_id("test/evq/script");

    cr_assert_eq(evq_init(&q, 0), 0);
    cr_assert_eq(rng_init(&r, 11, sid), 0);
    for (uint64_t s = 0; s < STEPS; s++)
        script_step(&q, &r, s, alone, &n_alone);

    cr_assert_eq(evq_init(&qa, 0), 0);
    cr_assert_eq(evq_init(&qb, 0), 0);
    cr_assert_eq(rng_init(&ra, 11, sid), 0);
    cr_assert_eq(rng_init(&rb, 11, sid), 0);
    for (uint64_t s = 0; s < STEPS; s++) {
        script_step(&qa, &ra, s, la, &na);
        script_step(&qb, &rb, s, lb, &nb);
    }
    cr_assert_eq(na, n_alone);
    cr_assert_eq(nb, n_alone);
    cr_assert_gt(n_alone, (size_t)(STEPS / 4));
    for (size_t i = 0; i < n_alone; i++) {
        cr_assert_eq(la[i], alone[i]);
        cr_assert_eq(lb[i], alone[i]);
    }
    rng_release(&r);
    rng_release(&ra);
    rng_release(&rb);
    evq_release(&q);
    evq_release(&qa);
    evq_release(&qb);
    free(alone);
    free(la);
    free(lb);
}

Test(evq, sequence_limit_refuses_push_and_keeps_queue)
{
    struct evq q;
    struct evq_event ev;
    cr_assert_eq(evq_init(&q, 0), 0);
    push_ok(&q, 5, 1);
    /* Pretend the queue has issued all but one of its 2^40 seqs. */
    q.next_seq = EVQ_MAX_SEQ - 1;
    struct evq_handle last = push_ok(&q, 4, 2);
    cr_assert_eq(last.seq, EVQ_MAX_SEQ - 1);
    struct evq_handle none = {0, 0};
    cr_assert_eq(evq_push(&q, 3, noop, NULL, 3, &none), -EOVERFLOW);
    cr_assert_eq(none.slot, 0u, "a refused push leaves the handle alone");
    cr_assert_eq(evq_size(&q), 2u);
    cr_assert(evq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 2u);
    cr_assert_eq(ev.seq, EVQ_MAX_SEQ - 1);
    cr_assert(evq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 1u);
    cr_assert_not(evq_pop(&q, &ev));
    evq_release(&q);
}

Test(evq, records_are_16_bytes_and_families_fill_a_cache_line)
{
    struct evq q;
    cr_assert_eq(sizeof(struct evq_entry), 16u);
    cr_assert_eq(evq_init(&q, 1000), 0);
    for (size_t i = 1; i < 1000; i += 4)
        cr_assert_eq((uintptr_t)&q.heap[i] % 64, 0u, "family at %zu straddles lines", i);
    /* Still aligned after the heap grew. */
    for (uint64_t i = 0; i < 5000; i++)
        push_ok(&q, (sim_time)(i * 7919 % 1000), i);
    for (size_t i = 1; i < q.cap; i += 4)
        cr_assert_eq((uintptr_t)&q.heap[i] % 64, 0u);
    evq_release(&q);
}
