/*
 * test_tidal.c — the `tidal` policy on a small cluster with a known load,
 * against a schedule counted by hand: training holds every card inference
 * does not, at every sample interval; at the day edge exactly the missing
 * cards are reclaimed, from the jobs with the least work since their last
 * checkpoint; with an HPA inside the window, training also gets the cards of
 * the day target the load does not need; GPU-seconds are conserved.
 */
#include "tests/polsubmit.h"

#define HM(h, m) ((sim_time)(h)*SIM_HOUR + (sim_time)(m)*SIM_MIN)

/*
 * 2 nodes × 4 cards. Inference: 2 cards by night, 5 by day (09:00–22:00),
 * handed over 30 minutes early (08:30). Training: single-card jobs of 100 h
 * checkpointing every 3 h of running; a save takes 5 s + 1 GB / 2 GB/s =
 * 5.5 s, within the 30 s grace, so preemptions lose nothing.
 */
static const char *const yaml = "name: tidal-edge\n"
                                "duration: 2d\n"
                                "sample_interval: 1m\n"
                                "cluster: { nodes: 2, gpus_per_node: 4 }\n"
                                "services:\n"
                                "  - name: q\n"
                                "    latency: { a_ms: 1, b_ms: 0.1, dist: deterministic }\n"
                                "    arrivals: { synthetic: { shape: constant, rate_rps: 20 } }\n"
                                "training:\n"
                                "  checkpoint: { interval: 3h, state_gb_per_gpu: 1 }\n"
                                "  jobs: { synthetic: { per_hour: 0 } }\n"
                                "policy: { name: tidal, inference_gpus: 2, day_gpus: 5, day: "
                                "\"09:00-22:00\", lead: 30m }\n";

#define NJOBS         8
#define MAX_INTERVALS (2 * 24 * 60 + 1)

/* The per-interval series, as the results writer would see them. */
struct series {
    uint32_t n;
    sim_time t1[MAX_INTERVALS];
    double free_s[MAX_INTERVALS];     /* GPU-s with no tenant in the interval */
    uint32_t infer[MAX_INTERVALS];    /* cards holding a replica at its end */
    uint32_t train[MAX_INTERVALS];    /* cards holding a training member at its end */
    uint32_t queued[MAX_INTERVALS];   /* jobs queued at its end */
    uint64_t preempts[MAX_INTERVALS]; /* preemptions so far */
};

static int record(void *ctx, const struct sim *s, sim_time t0, sim_time t1)
{
    struct series *r = ctx;
    if (r->n == MAX_INTERVALS)
        return 0;
    uint32_t k = r->n++;
    r->t1[k] = t1;
    r->free_s[k] = 0;
    r->infer[k] = r->train[k] = 0;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct card *c = &s->cl.cards[g];
        r->free_s[k] += sim_time_to_sec(t1 - t0) - c->ialloc_us / 1e6;
        bool inf = false, tr = false;
        for (uint32_t i = 0; i < c->nten; i++) {
            inf |= s->cl.tenants[c->ten[i]].kind == TENANT_INFER;
            tr |= s->cl.tenants[c->ten[i]].kind == TENANT_TRAIN;
        }
        r->infer[k] += inf;
        r->train[k] += tr;
    }
    r->queued[k] = s->tr.queued;
    r->preempts[k] = s->tr.preemptions;
    return 0;
}

/*
 * Jobs 0..5 arrive 40 minutes apart from 00:00 and start at once on the six
 * cards inference does not hold; jobs 6 and 7 (03:20) wait: a backlog.
 * Checkpoints fall 3 h of running after each start, so at the 08:30
 * hand-over the work since the last checkpoint is, by hand (to within the
 * 60 s warm-up and the 5.5 s saves):
 *   job 0 (00:00): saved 06:00, 2 h 30 m    job 3 (02:00): saved 08:00, 30 m
 *   job 1 (00:40): saved 06:40, 1 h 50 m    job 4 (02:40): saved 05:40, 2 h 50 m
 *   job 2 (01:20): saved 07:20, 1 h 10 m    job 5 (03:20): saved 06:20, 2 h 10 m
 * The day target lacks 5 − 2 = 3 cards and none is free: jobs 3, 2, 1 (the
 * least work since a checkpoint, not the latest started: 4 and 5) are the
 * victims, and no other.
 */
static void build(struct scenario *sc, struct sim *s, struct series *r, const char *text)
{
    struct conf_err err;
    cr_assert_eq(scenario_load_string(sc, "tidal-edge.yaml", text, &err), 0, "%s", err.msg);
    struct sim_sink sink = {.interval = record, .ctx = r};
    cr_assert_eq(sim_init(s, sc, 1, &sink), 0, "%s", s->err);
    for (int k = 0; k < NJOBS; k++) {
        int at = k < 6 ? 40 * k : 200;
        cr_assert_eq(engine_run(&s->eng, HM(0, at)), 0);
        cr_assert_eq(polsubmit_job(s, 100 * 3600.0, 1, NULL), (uint32_t)k);
    }
}

static bool is_day(sim_time t) /* inference target by day: from the 08:30 hand-over to 22:00 */
{
    sim_time tod = t % SIM_DAY;
    return tod >= HM(8, 30) && tod < HM(22, 0);
}

Test(tidal_policy, training_holds_every_card_inference_does_not)
{
    struct scenario sc;
    struct sim s;
    struct series *r = calloc(1, sizeof(*r));
    cr_assert_not_null(r);
    build(&sc, &s, r, yaml);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_assert_eq(r->n, 2 * 24 * 60);
    uint32_t checked = 0;
    for (uint32_t k = 0; k < r->n; k++) {
        sim_time t1 = r->t1[k], tod = t1 % SIM_DAY;
        if (t1 <= HM(3, 20))
            continue; /* the jobs are still arriving */
        /*
         * At 22:00 three replicas stop; their cards are free until the next
         * reconcile, the sample tick at 22:01: at most 3 cards × 60 s.
         */
        if (tod == HM(22, 1)) {
            cr_expect_leq(r->free_s[k], 3 * 60.0 + 1e-6, "%.0f GPU-s free at 22:00", r->free_s[k]);
            continue;
        }
        cr_expect_leq(r->free_s[k], 1e-6, "interval ending day %d %02d:%02d: %.3f GPU-s free",
                      (int)(t1 / SIM_DAY), (int)(tod / SIM_HOUR), (int)(tod % SIM_HOUR / SIM_MIN),
                      r->free_s[k]);
        if (tod == HM(8, 30) || tod == HM(22, 0))
            continue; /* the edge itself: the hand-over under way */
        uint32_t want = is_day(t1) ? 5 : 2;
        cr_expect_eq(r->infer[k], want, "day %d %02d:%02d: %u inference cards, want %u",
                     (int)(t1 / SIM_DAY), (int)(tod / SIM_HOUR), (int)(tod % SIM_HOUR / SIM_MIN),
                     r->infer[k], want);
        cr_expect_eq(r->train[k], 8 - want, "day %d %02d:%02d: %u training cards, want %u",
                     (int)(t1 / SIM_DAY), (int)(tod / SIM_HOUR), (int)(tod % SIM_HOUR / SIM_MIN),
                     r->train[k], 8 - want);
        /* A backlog all along: 8 jobs, 6 cards by night, 3 by day. */
        cr_expect_eq(r->queued[k], NJOBS - (8 - want));
        checked++;
    }
    cr_expect_geq(checked, 2500);
    polsubmit_check_conservation(&s, true);
    simtest_free(&sc, &s);
    free(r);
}

Test(tidal_policy, day_edge_preempts_exactly_the_missing_cards_least_work_first)
{
    struct scenario sc;
    struct sim s;
    struct series *r = calloc(1, sizeof(*r));
    cr_assert_not_null(r);
    build(&sc, &s, r, yaml);
    cr_assert_eq(engine_run(&s.eng, HM(8, 29)), 0);
    cr_expect_eq(s.tr.preemptions, 0);
    cr_expect_eq(s.tr.running, 6);
    /* Just after the hand-over: the three victims saved (5.5 s) and left. */
    cr_assert_eq(engine_run(&s.eng, HM(8, 31)), 0);
    cr_expect_eq(s.tr.preemptions, 3, "%lu preemptions at the edge",
                 (unsigned long)s.tr.preemptions);
    static const uint32_t victim[NJOBS] = {0, 1, 1, 1, 0, 0, 0, 0};
    for (uint32_t j = 0; j < NJOBS; j++) {
        cr_expect_eq(s.tr.jobs[j].preemptions, victim[j], "job %u: %u preemptions", j,
                     s.tr.jobs[j].preemptions);
        cr_expect_float_eq(s.tr.jobs[j].lost_us, 0.0, 1e-9, "job %u lost work", j);
    }
    /* Inference has its five replicas up (60 s start) before the 09:00 edge. */
    cr_assert_eq(engine_run(&s.eng, HM(8, 59)), 0);
    uint32_t up = 0;
    for (uint32_t k = 0; k < s.svcs[0].nreps; k++)
        up += !s.svcs[0].reps[k].gone && !s.svcs[0].reps[k].draining && !s.svcs[0].reps[k].down;
    cr_expect_eq(up, 5);
    cr_expect_eq(s.tr.running, 3);
    /* Nothing more by day; the next hand-over again lacks exactly 3 cards. */
    cr_assert_eq(engine_run(&s.eng, SIM_DAY + HM(8, 29)), 0);
    cr_expect_eq(s.tr.preemptions, 3);
    cr_assert_eq(engine_run(&s.eng, SIM_DAY + HM(8, 31)), 0);
    cr_expect_eq(s.tr.preemptions, 6);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_expect_eq(s.tr.preemptions, 6);
    polsubmit_check_conservation(&s, true);
    simtest_free(&sc, &s);
    free(r);
}

/*
 * The same cluster and jobs with an HPA inside the window: 16 req/s of 100 ms
 * single-request batches; a replica serves 10 req/s, 7 at the 0.7 target, so
 * the HPA asks for ceil(16 / 7) = 3 replicas (a minute's Poisson count stays
 * within 14..21 req/s, which still gives 3). By day 3 < 5 replicas: 5 cards
 * train; by night the window caps inference at 2 (80 % busy): 6 train. At the
 * 08:30 hand-over inference lacks 3 − 2 = 1 card: one preemption, job 3 (the
 * least work since its checkpoint, as above).
 */
static const char *const yaml_hpa =
    "name: tidal-hpa\n"
    "duration: 2d\n"
    "sample_interval: 1m\n"
    "cluster: { nodes: 2, gpus_per_node: 4 }\n"
    "services:\n"
    "  - name: q\n"
    "    latency: { a_ms: 100, b_ms: 0, dist: deterministic }\n"
    "    batching: { max_batch: 1, max_wait: 0s }\n"
    "    arrivals: { synthetic: { shape: constant, rate_rps: 16 } }\n"
    "training:\n"
    "  checkpoint: { interval: 3h, state_gb_per_gpu: 1 }\n"
    "  jobs: { synthetic: { per_hour: 0 } }\n"
    "policy: { name: tidal, inference_gpus: 2, day_gpus: 5, day: \"09:00-22:00\", lead: 30m,\n"
    "          autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s } }\n";

Test(tidal_policy, hpa_inside_the_window_lends_what_the_load_does_not_need)
{
    struct scenario sc;
    struct sim s;
    struct series *r = calloc(1, sizeof(*r));
    cr_assert_not_null(r);
    build(&sc, &s, r, yaml_hpa);
    cr_assert_eq(engine_run(&s.eng, HM(8, 31)), 0);
    cr_expect_eq(s.tr.preemptions, 1);
    for (uint32_t j = 0; j < NJOBS; j++)
        cr_expect_eq(s.tr.jobs[j].preemptions, j == 3, "job %u: %u preemptions", j,
                     s.tr.jobs[j].preemptions);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_expect_eq(s.tr.preemptions, 2, "%lu preemptions", (unsigned long)s.tr.preemptions);
    uint32_t checked = 0;
    for (uint32_t k = 0; k < r->n; k++) {
        sim_time t1 = r->t1[k], tod = t1 % SIM_DAY;
        if (t1 <= HM(3, 20) || tod == HM(8, 30) || tod == HM(22, 0))
            continue;
        if (tod == HM(22, 1)) { /* one replica stops at 22:00: its card waits for the tick */
            cr_expect_leq(r->free_s[k], 60.0 + 1e-6);
            continue;
        }
        uint32_t want = is_day(t1) ? 3 : 2;
        cr_expect_leq(r->free_s[k], 1e-6, "interval ending %.0f s: %.3f GPU-s free",
                      sim_time_to_sec(t1), r->free_s[k]);
        cr_expect_eq(r->infer[k], want, "%.0f s: %u inference cards, want %u", sim_time_to_sec(t1),
                     r->infer[k], want);
        cr_expect_eq(r->train[k], 8 - want, "%.0f s: %u training cards", sim_time_to_sec(t1),
                     r->train[k]);
        checked++;
    }
    cr_expect_geq(checked, 2500);
    polsubmit_check_conservation(&s, true);
    simtest_free(&sc, &s);
    free(r);
}

/*
 * Without `day_gpus` the day pool is sized as a team sizes a CronHPA
 * schedule: the cards the peak needs at the HPA target. Two services on 2 × 4
 * cards, batches of 8 in a + 8b = 10 + 40 = 50 ms: 160 req/s a card. "a"
 * peaks at 300 req/s: ceil(300 / (160 × 0.7)) = ceil(2.68) = 3 cards; "b" at
 * 100 req/s: ceil(0.89) = 1 card. Day target 4 of 8 cards (the old default
 * was all 8, leaving training only the night); night pool 2 (1 each). With
 * `day_gpus: 0` the day takes every card, as before.
 */
Test(tidal_policy, default_day_pool_is_sized_from_the_peaks)
{
    static const char *const fmt =
        "name: tidal-peak\n"
        "duration: 1d\n"
        "sample_interval: 1m\n"
        "cluster: { nodes: 2, gpus_per_node: 4 }\n"
        "services:\n"
        "  - name: a\n"
        "    latency: { a_ms: 10, b_ms: 5, dist: deterministic }\n"
        "    batching: { max_batch: 8, max_wait: 5ms }\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 300 } }\n"
        "  - name: b\n"
        "    latency: { a_ms: 10, b_ms: 5, dist: deterministic }\n"
        "    batching: { max_batch: 8, max_wait: 5ms }\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 100 } }\n"
        "policy: { name: tidal, inference_gpus: 2, day: \"09:00-22:00\", lead: 30m%s }\n";
    const char *extra[] = {"", ", day_gpus: 0"};
    /* The split by peak (w_a = 300 / 400 = 0.75): 3 + 1 of 4, 6 + 2 of 8. */
    const uint32_t want_a[] = {3, 6}, want_b[] = {1, 2};
    for (int k = 0; k < 2; k++) {
        char text[2048];
        snprintf(text, sizeof(text), fmt, extra[k]);
        struct scenario sc;
        struct sim s;
        simtest_build(&sc, &s, text, 1);
        cr_expect_eq(service_replicas(&s.svcs[0]), 1u, "night pool at 00:00");
        cr_expect_eq(service_replicas(&s.svcs[1]), 1u);
        cr_assert_eq(engine_run(&s.eng, HM(12, 0)), 0);
        uint32_t ra = service_replicas(&s.svcs[0]), rb = service_replicas(&s.svcs[1]);
        cr_expect_eq(ra, want_a[k], "case %d: a has %u", k, ra);
        cr_expect_eq(rb, want_b[k], "case %d: b has %u", k, rb);
        simtest_free(&sc, &s);
    }
}

/* Cards of node n (4 a node) holding a replica / no tenant at all. */
static void node_use(const struct sim *s, uint32_t n, uint32_t *infer, uint32_t *empty)
{
    *infer = *empty = 0;
    for (uint32_t g = 4 * n; g < 4 * n + 4; g++) {
        const struct card *c = &s->cl.cards[g];
        bool inf = false;
        for (uint32_t i = 0; i < c->nten; i++)
            inf |= s->cl.tenants[c->ten[i]].kind == TENANT_INFER;
        *infer += inf;
        *empty += c->nten == 0;
    }
}

/*
 * Node-compact shrink (docs/policies.md "Node-compact inference"). 2 nodes × 4
 * cards, inference 3 cards by night and 4 by day (from the 08:30 hand-over to
 * 22:00). By hand:
 *   00:00  the night pool takes cards 0, 1, 2 (the lowest node, then the node
 *          already holding inference);
 *   jobs   1-GPU jobs arrive 40 minutes apart from 00:00: job 0 takes card 3
 *          (best fit: node 0's last card), jobs 1-4 cards 4-7. Work: job 0
 *          100 h; jobs 1, 2, 4 15 h (they end ~15:40, ~16:20, ~17:40); job 3 7 h.
 *   08:30  the day target lacks one card: the victim is job 3 on card 6 (30 min
 *          since its 08:00 checkpoint, the least; the table of the test above),
 *          so the day replica lands on node 1, card 6;
 *   ~15:40 job 3 restarts on job 1's card 4 and ends ~16:10; by 17:40 node 1
 *          holds the replica on card 6 and nothing else.
 *   22:00  the pool shrinks 4 -> 3. Card by card (the old rule: the lowest card
 *          of those with the fewest replicas) card 0 would go: inference on both
 *          nodes, no node free. Node-compact, the replica on the node with the
 *          fewest inference cards goes: card 6, and node 1 is wholly free.
 */
Test(tidal_policy, night_shrink_hands_back_a_whole_node)
{
    static const char *const text =
        "name: tidal-compact\n"
        "duration: 1d\n"
        "sample_interval: 1m\n"
        "cluster: { nodes: 2, gpus_per_node: 4 }\n"
        "services:\n"
        "  - name: q\n"
        "    latency: { a_ms: 1, b_ms: 0.1, dist: deterministic }\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 20 } }\n"
        "training:\n"
        "  checkpoint: { interval: 3h, state_gb_per_gpu: 1 }\n"
        "  jobs: { synthetic: { per_hour: 0 } }\n"
        "policy: { name: tidal, inference_gpus: 3, day_gpus: 4, day: \"09:00-22:00\", lead: "
        "30m }\n";
    static const double work_h[5] = {100, 15, 15, 7, 15};
    struct scenario sc;
    struct sim s;
    struct conf_err err;
    cr_assert_eq(scenario_load_string(&sc, "tidal-compact.yaml", text, &err), 0, "%s", err.msg);
    cr_assert_eq(sim_init(&s, &sc, 1, NULL), 0, "%s", s.err);
    uint32_t inf, empty;
    node_use(&s, 0, &inf, &empty);
    cr_expect_eq(inf, 3, "night pool on node 0: %u", inf);
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(engine_run(&s.eng, HM(0, 40 * k)), 0);
        cr_assert_eq(polsubmit_job(&s, work_h[k] * 3600.0, 1, NULL), (uint32_t)k);
    }
    for (int k = 0; k < 5; k++)
        cr_expect_eq(s.tr.jobs[k].gpus[0], (uint32_t)(3 + k), "job %d on card %u", k,
                     s.tr.jobs[k].gpus[0]);
    cr_assert_eq(engine_run(&s.eng, HM(8, 31)), 0);
    cr_expect_eq(s.tr.jobs[3].preemptions, 1);
    cr_expect_eq(s.tr.preemptions, 1);
    cr_assert_eq(engine_run(&s.eng, HM(21, 59)), 0);
    node_use(&s, 1, &inf, &empty);
    cr_expect_eq(inf, 1, "the day replica on node 1: %u", inf);
    cr_expect_eq(empty, 3, "jobs 1-4 done: %u empty cards on node 1", empty);
    cr_expect_eq(s.tr.done, 4, "%u jobs completed", s.tr.done);
    cr_assert_eq(engine_run(&s.eng, HM(22, 5)), 0);
    node_use(&s, 1, &inf, &empty);
    cr_expect_eq(empty, 4, "node 1 wholly free after the shrink: %u empty cards", empty);
    node_use(&s, 0, &inf, &empty);
    cr_expect_eq(inf, 3, "inference kept on node 0: %u cards", inf);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    polsubmit_check_conservation(&s, true);
    simtest_free(&sc, &s);
}

/*
 * With an HPA, a window bounds inference's cards in all, not each service's
 * split of them. Two services on 2 × 4 cards, batches of 8 in 10 + 8 × 5 =
 * 50 ms (160 req/s a card, 112 at the 0.7 target), cosines of peak 300 req/s
 * and trough 30: "a" peaks at 12:00, "b" at 00:00. Split by peak (equal), the
 * 4-card night pool is 2 + 2. At 01:00-03:00 "b" runs 282-260 req/s: its HPA
 * asks ceil(282 / 112) = 3 (2.3-2.5 over the hours, Poisson noise of a
 * minute's count ±6 % never reaches 2 or 4); "a" runs 48-70 req/s: 1. The asks
 * (4 cards) fit the window's 4: 1 + 3. A fixed split would cap "b" at 2
 * replicas, 88-94 % of their capacity.
 */
Test(tidal_policy, hpa_shares_the_window_by_the_asks_not_by_a_fixed_split)
{
    static const char *const text =
        "name: tidal-share\n"
        "duration: 2d\n"
        "sample_interval: 1m\n"
        "cluster: { nodes: 2, gpus_per_node: 4 }\n"
        "services:\n"
        "  - name: a\n"
        "    latency: { a_ms: 10, b_ms: 5, dist: deterministic }\n"
        "    batching: { max_batch: 8, max_wait: 5ms }\n"
        "    arrivals: { synthetic: { shape: cosine, peak_rps: 300, trough_ratio: 0.1, "
        "peak_hour: 12 } }\n"
        "  - name: b\n"
        "    latency: { a_ms: 10, b_ms: 5, dist: deterministic }\n"
        "    batching: { max_batch: 8, max_wait: 5ms }\n"
        "    arrivals: { synthetic: { shape: cosine, peak_rps: 300, trough_ratio: 0.1, "
        "peak_hour: 0 } }\n"
        "policy: { name: tidal, inference_gpus: 4, day_gpus: 6, day: \"09:00-22:00\", lead: 30m,\n"
        "          autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s } }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, text, 1);
    for (int d = 0; d < 2; d++)
        for (int h = 1; h <= 3; h++) {
            cr_assert_eq(engine_run(&s.eng, (sim_time)d * SIM_DAY + HM(h, 0)), 0);
            uint32_t ra = service_replicas(&s.svcs[0]), rb = service_replicas(&s.svcs[1]);
            cr_expect_eq(ra, 1u, "day %d %02d:00: a has %u replicas", d, h, ra);
            cr_expect_eq(rb, 3u, "day %d %02d:00: b has %u replicas", d, h, rb);
        }
    simtest_free(&sc, &s);
}
