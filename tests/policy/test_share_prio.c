/*
 * test_share_prio.c — inference priority under the `mps` and `timeslice`
 * policies (sim/policy/pack.c, sim/cluster.c): training's cap / slice changes
 * exactly when an inference tenant arrives on or leaves its card, and best-
 * effort training is evicted for a replica the HPA could not place. Expected
 * values computed by hand from models/share.h.
 */
#include "tests/polsubmit.h"

#define MPS2 "{ nodes: 1, gpus_per_node: 1, sharing: mps, mps: { replicas: 2 } }"
#define TS2  "{ nodes: 1, gpus_per_node: 1, sharing: timeslice, timeSlicing: { replicas: 2 } }"

/* One light service (one initial replica, never busy unless the test makes it). */
#define SVC                                                     \
    "services:\n"                                               \
    "  - name: q\n"                                             \
    "    latency: { a_ms: 40, b_ms: 0, dist: deterministic }\n" \
    "    batching: { max_batch: 1, max_wait: 0s }\n"            \
    "    arrivals: { synthetic: { shape: constant, rate_rps: 0.001 } }\n"

/* The training tenant on card 0. */
static const struct tenant *train_tenant(const struct sim *s)
{
    const struct card *g = &s->cl.cards[0];
    for (uint32_t i = 0; i < g->nten; i++)
        if (s->cl.tenants[g->ten[i]].kind == TENANT_TRAIN)
            return &s->cl.tenants[g->ten[i]];
    cr_assert_fail("no training tenant on card 0");
    return NULL;
}

Test(share_prio, mps_training_capped_only_while_inference_shares_the_card)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, MPS2, "  memory_gb_per_gpu: 30\n", SVC,
                    "{ name: mps, inference_gpus: 1, share: inference-priority,\n"
                    "  thread_pct: { training_shared: 25 } }");
    cr_assert_eq(s.cl.cards[0].ninfer, 1u);
    uint32_t j = polsubmit_job(&s, 3600, 1, NULL);
    cr_assert_eq(s.tr.jobs[j].state, JOB_RUNNING);
    const struct tenant *t = train_tenant(&s);
    double k = sc.knobs.mps_interference; /* 0.2 */
    /* Replica placed, idle: training capped at 25 % of the threads, no co-runner: 0.25. */
    cr_expect_float_eq(t->st.sm_cap, 0.25, 1e-12);
    cr_expect_float_eq(s.tr.jobs[j].rate, 0.25, 1e-12);
    /* The replica serves a batch: SMs 1 + 0.25 > 1, max-min gives training its 0.25 and
     * inference 0.75; interference 1 + k·(co-runner's u). */
    uint32_t rt = s.svcs[0].reps[0].tid;
    cluster_set_active(&s.cl, rt, s.eng.now, true, USE_INFER);
    cr_expect_float_eq(s.tr.jobs[j].rate, 0.25 / (1 + k * 1.0), 1e-12);
    cr_expect_float_eq(cluster_tenant_speed(&s.cl, rt), 0.75 / (1 + k * 0.25), 1e-12);
    cluster_set_active(&s.cl, rt, s.eng.now, false, USE_INFER);
    /* The replica leaves: training back to its own 100 %, alone at speed 1. */
    cr_assert_eq(sim_stop_replica(&s, 0, NULL), 0);
    cr_expect_eq(s.cl.cards[0].ninfer, 0u);
    cr_expect_float_eq(t->st.sm_cap, 1.0, 1e-12);
    cr_expect_float_eq(s.tr.jobs[j].rate, 1.0, 1e-12);
    /* A replica arrives again: capped again. */
    cr_assert_eq(sim_place_replica(&s, 0, 0), 0);
    cr_expect_float_eq(t->st.sm_cap, 0.25, 1e-12);
    cr_expect_float_eq(s.tr.jobs[j].rate, 0.25, 1e-12);
    simtest_free(&sc, &s);
}

Test(share_prio, mps_equal_share_keeps_static_caps)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, MPS2, "  memory_gb_per_gpu: 30\n", SVC,
                    "{ name: mps, inference_gpus: 1, share: equal-share }");
    uint32_t j = polsubmit_job(&s, 3600, 1, NULL);
    const struct tenant *t = train_tenant(&s);
    cr_expect_float_eq(t->st.sm_cap, 1.0, 1e-12);
    cr_expect_float_eq(s.tr.jobs[j].rate, 1.0, 1e-12); /* the idle replica takes nothing */
    uint32_t rt = s.svcs[0].reps[0].tid;
    cluster_set_active(&s.cl, rt, s.eng.now, true, USE_INFER);
    double k = sc.knobs.mps_interference;
    cr_expect_float_eq(s.tr.jobs[j].rate, 0.5 / (1 + k), 1e-12); /* equal halves */
    simtest_free(&sc, &s);
}

Test(share_prio, timeslice_weighted_slices_follow_inference)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, TS2, "  memory_gb_per_gpu: 30\n", SVC,
                    "{ name: timeslice, inference_gpus: 1, share: inference-priority,\n"
                    "  inference_slice: 10ms, training_slice: 2ms }");
    uint32_t j = polsubmit_job(&s, 3600, 1, NULL);
    const struct tenant *t = train_tenant(&s);
    uint32_t rt = s.svcs[0].reps[0].tid;
    cr_expect_float_eq(t->st.ts_slice_s, 0.002, 1e-15);
    cr_expect_float_eq(s.cl.tenants[rt].st.ts_slice_s, 0.010, 1e-15);
    cr_expect_float_eq(s.tr.jobs[j].rate, 1.0, 1e-12); /* work-conserving: the replica is idle */
    /* A 40 ms batch at an unknown phase: half a 2 ms training slice + s, then 40 ms in 10 ms
     * slices with 3 interruptions of 2 ms + 2s (one trainer). */
    double sw = share_ts_switch_s(&sc.knobs);
    double lat = cluster_ts_begin(&s.cl, rt, s.eng.now, 40000);
    double want = (0.001 + sw + 0.040 + 3 * (0.002 + 2 * sw)) * 1e6;
    cr_expect(fabs(lat - want) < 1e-6, "latency %f us, expected %f us", lat, want);
    /* Meanwhile training pays the batch's debt, (w + 2s·4 visits) over the latency. */
    double rate = 1 - (40000 + 2 * sw * 1e6 * 4) / lat;
    cr_expect(fabs(s.tr.jobs[j].rate - rate) < 1e-9, "training %f, expected %f", s.tr.jobs[j].rate,
              rate);
    cluster_set_active(&s.cl, rt, s.eng.now, false, USE_INFER); /* the batch ends, as serve does */
    cr_expect(!s.cl.tenants[rt].ts_batch);
    cr_expect_float_eq(s.tr.jobs[j].rate, 1.0, 1e-12);
    /* The replica leaves: the card's own slices again. */
    cr_assert_eq(sim_stop_replica(&s, 0, NULL), 0);
    cr_expect_float_eq(t->st.ts_slice_s, 0.0, 1e-15);
    simtest_free(&sc, &s);
}

/*
 * Eviction: two exclusive-like cards (one slot each). The replica is on card 0, a
 * 1-GPU job on card 1. Load 120 req/s against 100 req/s per replica at target 0.7
 * makes the HPA ask for 2 at the first tick (1 h, the sample interval here): nothing
 * is free, so the job is evicted (graceful; it saves within the grace period) and
 * card 1 held; the second replica binds at the next tick (2 h), ready 60 s later.
 */
static void eviction_case(bool prio, uint32_t *replicas, uint32_t *preempted, bool *job_running,
                          uint32_t *card1_infer)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s,
                    "{ nodes: 1, gpus_per_node: 2, sharing: timeslice, timeSlicing: { replicas: 1 "
                    "} }",
                    "  memory_gb_per_gpu: 30\n",
                    "services:\n"
                    "  - name: q\n"
                    "    latency: { a_ms: 10, b_ms: 0, dist: deterministic }\n"
                    "    batching: { max_batch: 1, max_wait: 0s }\n"
                    "    replicas: { min: 1, max: 2 }\n"
                    "    arrivals: { synthetic: { shape: constant, rate_rps: 120 } }\n",
                    prio ? "{ name: timeslice, inference_gpus: 1, share: inference-priority,\n"
                           "  autoscale: { target: 0.7, scale_up_delay: 60s } }"
                         : "{ name: timeslice, inference_gpus: 1, share: equal-share,\n"
                           "  autoscale: { target: 0.7, scale_up_delay: 60s } }");
    uint32_t j = polsubmit_job(&s, 100 * 3600, 1, NULL);
    cr_assert_eq(s.tr.jobs[j].state, JOB_RUNNING);
    cr_assert_eq(s.tr.jobs[j].gpus[0], 1u);
    engine_run(&s.eng, 3 * SIM_HOUR + 1);
    *replicas = service_replicas(&s.svcs[0]);
    *preempted = s.tr.jobs[j].preemptions;
    *job_running = s.tr.jobs[j].state == JOB_RUNNING;
    *card1_infer = s.cl.cards[1].ninfer;
    simtest_free(&sc, &s);
}

Test(share_prio, eviction_frees_a_card_for_the_replica_the_hpa_could_not_place)
{
    uint32_t reps, pre, inf1;
    bool running;
    eviction_case(true, &reps, &pre, &running, &inf1);
    cr_expect_eq(reps, 2u, "the HPA's second replica is placed");
    cr_expect_eq(pre, 1u, "exactly one eviction");
    cr_expect(!running, "the evicted job waits (its card is held for inference)");
    cr_expect_eq(inf1, 1u, "the replica took the evicted job's card");
    /* The device plugin's equal share never evicts: the replica stays unplaced. */
    eviction_case(false, &reps, &pre, &running, &inf1);
    cr_expect_eq(reps, 1u);
    cr_expect_eq(pre, 0u);
    cr_expect(running);
    cr_expect_eq(inf1, 0u);
}

Test(share_prio, priority_keys_are_refused_where_they_mean_nothing)
{
    const char *base = "name: bad\nduration: 1h\n"
                       "cluster: { nodes: 1, gpus_per_node: 1, sharing: %s }\n"
                       "policy: { name: %s, %s }\n";
    char y[512];
    snprintf(y, sizeof(y), base, "timeslice", "timeslice", "training_slice: 1ms");
    simtest_expect_rejected(y, "only with 'share: inference-priority'", 0);
    snprintf(y, sizeof(y), base, "mps", "mps", "thread_pct: { training_shared: 20 }");
    simtest_expect_rejected(y, "only with 'share: inference-priority'", 1);
    snprintf(y, sizeof(y), base, "mps", "mps", "share: inference-priority, evict: true");
    simtest_expect_rejected(y, "needs 'autoscale'", 2);
    snprintf(y, sizeof(y), base, "mps", "mps", "share: fair");
    simtest_expect_rejected(y, "equal-share", 3);
}

/* Where a gang and a single-GPU job go on 3 MPS cards with one replica on card 0. */
static void placement_case(const char *share, uint32_t *gang_on_0, uint32_t *single_gpu)
{
    struct scenario sc;
    struct sim s;
    char pol[256];
    snprintf(pol, sizeof(pol), "{ name: mps, inference_gpus: 1, share: %s }", share);
    polsubmit_build(&sc, &s, "{ nodes: 1, gpus_per_node: 3, sharing: mps, mps: { replicas: 2 } }",
                    "  memory_gb_per_gpu: 30\n", SVC, pol);
    cr_assert_eq(s.cl.cards[0].ninfer, 1u, "the replica is on card 0");
    uint32_t gang = polsubmit_job(&s, 3600, 2, NULL);
    cr_assert_eq(s.tr.jobs[gang].state, JOB_RUNNING);
    *gang_on_0 = s.tr.jobs[gang].gpus[0] == 0 || s.tr.jobs[gang].gpus[1] == 0;
    uint32_t one = polsubmit_job(&s, 3600, 1, NULL);
    cr_assert_eq(s.tr.jobs[one].state, JOB_RUNNING);
    *single_gpu = s.tr.jobs[one].gpus[0];
    simtest_free(&sc, &s);
}

Test(share_prio, gangs_keep_off_inference_cards_under_priority)
{
    uint32_t on0, single;
    /* Priority: a capped member would throttle its whole gang, so the gang takes cards 1
     * and 2 and the single-GPU job fills the slot beside the replica. */
    placement_case("inference-priority", &on0, &single);
    cr_expect_eq(on0, 0u);
    cr_expect_eq(single, 0u);
    /* Equal share, most-allocated: the gang's first member goes beside the replica. */
    placement_case("equal-share", &on0, &single);
    cr_expect_eq(on0, 1u);
}
