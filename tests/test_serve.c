/* test_serve.c — dynamic batching against a schedule computed by hand. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "sim/cluster.h"
#include "sim/engine.h"
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

static const struct arrival_source_ops list_ops = {list_next, list_destroy};

static int exclusive_cluster(struct cluster *cl)
{
    return cluster_init(cl, 1, 1, gpu_spec_find("a100-sxm4-80gb"), SHARE_EXCLUSIVE, 1, NULL, NULL,
                        NULL, NULL, 0);
}

static struct arrival_source *list_source(const sim_time *t, size_t n)
{
    struct list_source *l = calloc(1, sizeof(*l));
    l->base.ops = &list_ops;
    l->t = t;
    l->n = n;
    return &l->base;
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
    cr_assert_eq(engine_init(&e), 0);
    cr_assert_eq(exclusive_cluster(&cl), 0);
    cr_assert_eq(service_init(&s, 0, &cfg, &e, &cl, list_source(arr, 7), 1), 0);
    uint32_t tid;
    struct tenant_req req = {.kind = TENANT_INFER, .mem_gib = 8, .sm_cap = 1};
    cr_assert_eq(cluster_place(&cl, 0, 0, &req, &tid), 0);
    cr_assert_eq(service_add_replica(&s, tid, true, NULL), 0);
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
    /* Events: one wake or completion per batch, never one per request. */
    cr_expect_leq(e.processed, 8);

    service_release(&s);
    cluster_release(&cl);
    engine_release(&e);
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
    cr_assert_eq(engine_init(&e), 0);
    cr_assert_eq(exclusive_cluster(&cl), 0);
    cr_assert_eq(service_init(&s, 0, &cfg, &e, &cl, list_source(arr, 50), 1), 0);
    uint32_t tid;
    struct tenant_req req = {.kind = TENANT_INFER, .mem_gib = 8, .sm_cap = 1};
    cr_assert_eq(cluster_place(&cl, 0, 0, &req, &tid), 0);
    cr_assert_eq(service_add_replica(&s, tid, true, NULL), 0);
    engine_run(&e, 35 * SIM_MS); /* mid-way through the 4th request */
    service_sync(&s);
    /* t=0 starts req 0; reqs 1..10 wait; 11..49 find 10 waiting and are dropped. */
    cr_expect_eq(s.tot.arrived, 50);
    cr_expect_eq(s.tot.dropped, 39);
    cr_expect_eq(s.tot.served, 3);
    cr_expect_eq(s.in_service, 1);
    cr_expect_eq(service_waiting(&s), 7);
    cr_expect_eq(s.tot.arrived, s.tot.served + s.tot.dropped + s.in_service + service_waiting(&s));
    service_release(&s);
    cluster_release(&cl);
    engine_release(&e);
}
