/* test_serve.c — dynamic batching against a schedule computed by hand. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "sim/cluster.h"
#include "sim/core/engine.h"
#include "sim/serve.h"

struct list_source {
    struct arrival_source base;
    const sim_time *t;
    size_t n, i;
};

static int list_next(struct arrival_source *src, struct arrival *out, struct trace_err *err)
{
    struct list_source *l = (struct list_source *)src;
    (void)err;
    if (l->i == l->n)
        return 1;
    out->t = l->t[l->i++];
    out->in_tokens = out->out_tokens = 0;
    return 0;
}

static void list_destroy(struct arrival_source *src)
{
    free(src);
}

static const struct arrival_source_ops list_ops = {list_next, list_destroy, NULL};

static struct arrival_source *list_source(const sim_time *t, size_t n)
{
    struct list_source *l = calloc(1, sizeof(*l));
    l->base.ops = &list_ops;
    l->t = t;
    l->n = n;
    return &l->base;
}

/*
 * An engine, `cards` exclusive cards with one ready inference replica each
 * (replica k on card k, its index in ri[k] when ri is not NULL), and one
 * service fed the listed arrivals.
 */
static void serve_up(struct engine *e, struct cluster *cl, struct service *s,
                     const struct service_cfg *cfg, const sim_time *arr, size_t n, uint32_t cards,
                     uint32_t *ri)
{
    cr_assert_eq(engine_init(e), 0);
    cr_assert_eq(cluster_init(cl, 1, cards, gpu_spec_find("a100-sxm4-80gb"), SHARE_EXCLUSIVE, 1,
                              NULL, NULL, NULL, NULL, 0),
                 0);
    cr_assert_eq(service_init(s, 0, cfg, e, cl, list_source(arr, n), 1), 0);
    struct tenant_req req = {.kind = TENANT_INFER, .mem_gib = 8, .sm_cap = 1};
    for (uint32_t g = 0; g < cards; g++) {
        uint32_t tid;
        cr_assert_eq(cluster_place(cl, g, 0, &req, &tid), 0);
        cr_assert_eq(service_add_replica(s, tid, true, ri ? &ri[g] : NULL), 0);
    }
}

static void serve_down(struct engine *e, struct cluster *cl, struct service *s)
{
    service_release(s);
    cluster_release(cl);
    engine_release(e);
}

/*
 * One replica, max_batch 3, max_wait 2 ms, batch of n takes 4 + n ms.
 * Arrivals at 0, 1, 5, 5.5, 6, 6.2, 20 ms. By hand:
 *   t=2    deadline of req@0: batch {0, 1}        → done 8    (latencies 8, 7)
 *   t=8    3 waiting: batch {5, 5.5, 6}           → done 15   (10, 9.5, 9)
 *   t=15   deadline long passed: batch {6.2}      → done 20   (13.8)
 *   t=22   deadline of req@20: batch {20}         → done 27   (7)
 */
Test(serve, batching_schedule_by_hand)
{
    static const sim_time arr[] = {0, 1000, 5000, 5500, 6000, 6200, 20000};
    struct service_cfg cfg = {
        .name = "hand",
        .a_ms = 4,
        .b_ms = 1,
        .dist = DIST_DETERMINISTIC,
        .max_batch = 3,
        .max_wait = 2 * SIM_MS,
        .slo = 9 * SIM_MS,
        .slo_quantile = 0.99,
        .max_queue = 100,
    };
    struct engine e;
    struct cluster cl;
    struct service s;
    serve_up(&e, &cl, &s, &cfg, arr, 7, 1, NULL);
    engine_run(&e, 100 * SIM_MS);
    cluster_account_all(&cl, e.now);

    cr_expect_eq(s.tot.arrived, 7);
    cr_expect_eq(s.tot.served, 7);
    cr_expect_eq(s.tot.batches, 4);
    cr_expect_eq(s.h_win->total, 7);
    cr_expect_eq(s.h_win->min, 7000);
    cr_expect_eq(s.h_win->max, 13800);
    cr_expect_float_eq(s.h_win->sum, 64300.0, 1e-9);
    /* Within the 9 ms target: 7, 7, 8, 9 ms. */
    cr_expect_eq(s.tot.within_slo, 4);
    /* Waits: 2, 1, 3, 2.5, 2, 8.8, 2 ms. */
    cr_expect_float_eq(s.tot.wait_us, 21300.0, 1e-9);
    /* Busy 6 + 7 + 5 + 5 ms of 100 ms; allocated all 100 ms. */
    cr_expect_float_eq(card_busy_us(&cl.cards[0], false), 23000.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].acc[USE_INFER], 23000.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].acc[USE_IDLE], 77000.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].alloc_us, 100000.0, 1e-9);
    /* Events: one completion per batch, never one per request; no wake-ups
     * (the idle replica is reserved for each batch before it is due). */
    cr_expect_eq(e.processed, 4);

    serve_down(&e, &cl, &s);
}

Test(serve, queue_limit_drops_and_conserves)
{
    /* 50 arrivals in the first ms, one slow replica, at most 10 may wait. */
    static sim_time arr[50];
    for (int i = 0; i < 50; i++)
        arr[i] = i * 20;
    struct service_cfg cfg = {
        .name = "drop",
        .a_ms = 10,
        .b_ms = 0,
        .dist = DIST_DETERMINISTIC,
        .max_batch = 1,
        .max_wait = 0,
        .slo = 100 * SIM_MS,
        .slo_quantile = 0.99,
        .max_queue = 10,
    };
    struct engine e;
    struct cluster cl;
    struct service s;
    serve_up(&e, &cl, &s, &cfg, arr, 50, 1, NULL);
    engine_run(&e, 35 * SIM_MS); /* mid-way through the 4th request */
    service_sync(&s);
    /* t=0 starts req 0; reqs 1..10 wait; 11..49 find 10 waiting and are dropped. */
    cr_expect_eq(s.tot.arrived, 50);
    cr_expect_eq(s.tot.dropped, 39);
    cr_expect_eq(s.tot.served, 3);
    cr_expect_eq(s.in_service, 1);
    cr_expect_eq(service_waiting(&s), 7);
    cr_expect_eq(s.tot.arrived, s.tot.served + s.tot.dropped + s.in_service + service_waiting(&s));
    serve_down(&e, &cl, &s);
}

/* max_batch 3, max_wait 2 ms, a batch of n takes 4 + n ms (as in the hand schedule above). */
static const struct service_cfg resv_cfg = {
    .name = "resv",
    .a_ms = 4,
    .b_ms = 1,
    .dist = DIST_DETERMINISTIC,
    .max_batch = 3,
    .max_wait = 2 * SIM_MS,
    .slo = 9 * SIM_MS,
    .slo_quantile = 0.99,
    .max_queue = 100,
};

/*
 * One replica, arrivals at 0 and 1 ms: the batch {0, 1} is due at 2 ms and
 * the idle replica is reserved for it at t = 0. Until 2 ms the card is idle
 * and both requests wait; from 2 ms to 8 ms it serves them.
 */
Test(serve, reserved_batch_begins_at_its_start)
{
    static const sim_time arr[] = {0, 1000};
    struct engine e;
    struct cluster cl;
    struct service s;
    serve_up(&e, &cl, &s, &resv_cfg, arr, 2, 1, NULL);
    cr_expect(s.reps[0].reserved);

    engine_run(&e, 1500);
    cluster_account_all(&cl, e.now);
    service_sync(&s);
    cr_expect_float_eq(cl.cards[0].acc[USE_IDLE], 1500.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].acc[USE_INFER], 0.0, 1e-9);
    cr_expect_eq(s.tot.arrived, 2);
    cr_expect_eq(service_waiting(&s), 2);
    cr_expect_eq(s.in_service, 0);
    cr_expect_eq(s.tot.batches, 0);

    engine_run(&e, 5000);
    cluster_account_all(&cl, e.now);
    service_sync(&s);
    cr_expect_float_eq(cl.cards[0].acc[USE_IDLE], 2000.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].acc[USE_INFER], 3000.0, 1e-9);
    cr_expect_eq(service_waiting(&s), 0);
    cr_expect_eq(s.in_service, 2);
    cr_expect_eq(s.tot.batches, 1);
    cr_expect_float_eq(s.tot.wait_us, 3000.0, 1e-9); /* 2 + 1 ms */

    engine_run(&e, 20000);
    cluster_account_all(&cl, e.now);
    cr_expect_eq(s.tot.served, 2);
    cr_expect_float_eq(cl.cards[0].acc[USE_INFER], 6000.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].acc[USE_IDLE], 14000.0, 1e-9);
    cr_expect_eq(s.h_win->min, 7000);
    cr_expect_eq(s.h_win->max, 8000);
    serve_down(&e, &cl, &s);
}

/*
 * Two replicas, arrivals at 0, 1 and 30 ms. The first replica, added at
 * t = 0, is reserved for the batch {0, 1} due at 2 ms; the second for {30},
 * due at 32 ms. At 1.5 ms the first is removed (mode 0) or killed by a fault
 * (mode 1): the reservations are taken back and the second replica takes the
 * same batches at the same times, so nothing is lost and the latencies are
 * those of the hand schedule: 8, 7 ms, then 7 ms for {30}.
 */
static void reserved_replica_lost(int mode)
{
    static const sim_time arr[] = {0, 1000, 30000};
    struct engine e;
    struct cluster cl;
    struct service s;
    uint32_t ri[2];
    serve_up(&e, &cl, &s, &resv_cfg, arr, 3, 2, ri);
    cr_assert(s.reps[ri[0]].reserved && s.reps[ri[1]].reserved);
    cr_expect_eq(s.reps[ri[0]].batch_start, 2000);
    cr_expect_eq(s.reps[ri[1]].batch_start, 32000);
    cr_expect_eq(e.q.live, 2); /* two completions, no wake-up */
    engine_run(&e, 1500);
    if (mode == 0) {
        cr_expect_eq(service_pick_victim(&s), ri[0]); /* reserved, not begun: counts as idle */
        cr_assert_eq(service_remove_replica(&s, ri[0]), 0);
        cr_expect(s.reps[ri[0]].gone);
    } else {
        service_replica_down(&s, ri[0]);
    }
    cr_expect(s.reps[ri[1]].reserved);
    cr_expect_eq(s.reps[ri[1]].batch_start, 2000);
    engine_run(&e, 100000);
    cluster_account_all(&cl, e.now);
    service_sync(&s);
    cr_expect_eq(s.tot.served, 3);
    cr_expect_eq(s.tot.failed, 0);
    cr_expect_eq(s.tot.batches, 2);
    cr_expect_float_eq(s.tot.wait_us, 5000.0, 1e-9); /* 2 + 1 + 2 ms */
    cr_expect_eq(s.h_win->min, 7000);
    cr_expect_eq(s.h_win->max, 8000);
    cr_expect_float_eq(s.h_win->sum, 22000.0, 1e-9);
    /* Card 1 served both batches (6 + 5 ms); card 0 never served. */
    cr_expect_float_eq(cl.cards[1].acc[USE_INFER], 11000.0, 1e-9);
    cr_expect_float_eq(cl.cards[0].acc[USE_INFER], 0.0, 1e-9);
    if (mode == 0)
        cr_expect_float_eq(cl.cards[0].alloc_us, 1500.0, 1e-9);
    else
        cr_expect_float_eq(cl.cards[0].acc[USE_IDLE], 100000.0, 1e-9);
    serve_down(&e, &cl, &s);
}

Test(serve, reserved_replica_removed_before_start)
{
    reserved_replica_lost(0);
}

Test(serve, reserved_replica_killed_before_start_loses_nothing)
{
    reserved_replica_lost(1);
}

/*
 * Node-compact scale-down. 2 nodes × 4 cards; a training member holds card 2
 * (node 0); replicas r0..r3 were placed on cards 4, 5, 0, 1 in that order, so
 * the idle stack is r0 r1 r2 r3 (top). Removing two replicas:
 *   the old rule (most recently idle first) takes r3 and r2, cards 1 and 0:
 *     node 0 keeps the training card, node 1 both replicas: free 3 + 2, no
 *     whole node;
 *   node-compact takes the node with fewest occupied cards first: node 1 (2
 *     occupied) before node 0 (3): r1 (card 5, the more recently idle of the
 *     two) then r0 (card 4): node 1 is wholly free.
 */
Test(serve, scale_down_hands_back_whole_nodes)
{
    static const uint32_t cards[4] = {4, 5, 0, 1};
    struct engine e;
    struct cluster cl;
    struct service s;
    cr_assert_eq(engine_init(&e), 0);
    cr_assert_eq(cluster_init(&cl, 2, 4, gpu_spec_find("a100-sxm4-80gb"), SHARE_EXCLUSIVE, 1, NULL,
                              NULL, NULL, NULL, 0),
                 0);
    cr_assert_eq(service_init(&s, 0, &resv_cfg, &e, &cl, list_source(NULL, 0), 1), 0);
    struct tenant_req train = {.kind = TENANT_TRAIN, .mem_gib = 40, .sm_cap = 1};
    struct tenant_req req = {.kind = TENANT_INFER, .mem_gib = 8, .sm_cap = 1};
    uint32_t tid, ri[4];
    cr_assert_eq(cluster_place(&cl, 2, 0, &train, &tid), 0);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(cluster_place(&cl, cards[k], 0, &req, &tid), 0);
        cr_assert_eq(service_add_replica(&s, tid, true, &ri[k]), 0);
    }
    cr_assert_eq(cl.node_free[0], 1);
    cr_assert_eq(cl.node_free[1], 2);
    uint32_t v = service_pick_victim(&s);
    cr_expect_eq(s.reps[v].gpu, 5);
    cr_assert_eq(service_remove_replica(&s, v), 0);
    v = service_pick_victim(&s);
    cr_expect_eq(s.reps[v].gpu, 4);
    cr_assert_eq(service_remove_replica(&s, v), 0);
    cr_expect_eq(cl.node_free[1], 4, "node 1 should be wholly free");
    cr_expect_eq(cl.node_free[0], 1);
    /* The other two stay, on node 0: the most recently idle, r3 (card 1), goes next. */
    v = service_pick_victim(&s);
    cr_expect_eq(v, ri[3]);
    serve_down(&e, &cl, &s);
}
