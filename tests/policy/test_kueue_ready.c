/*
 * test_kueue_ready.c — the `kueue` policy's waitForPodsReady and
 * topology-aware admission on a schedule computed by hand.
 *
 * 2 nodes × 4 cards, no inference (training CQ nominal 8), no checkpoints,
 * sample interval 1 h (no tick in the first hour). At t = 0:
 *   J0: 3 GPUs, 330 s   best fit: node 0 (cards 0-2)
 *   J1: 3 GPUs, 10 h    node 1 (cards 4-6)
 *   J2: 2 GPUs, 1 h     quota 6 + 2 = 8 fits: admitted, but no node has 2 free
 *                       cards (card 3 and card 7 are alone): it holds quota
 * At t = 10 s J3: 1 GPU, 1 h: the quota is full (8 of 8), it waits.
 *
 * waitForPodsReady, timeout 5 m, backoff base 60 s:
 *   300 s  J2 is evicted (not placed 300 s after admission), its 2 GPUs of
 *          quota released: J3 is admitted and starts at once (card 3, the
 *          node with the fewest free cards first, node 0 before node 1).
 *   330 s  J0 ends: node 0 has cards 0-2 free, but J2 backs off until
 *          300 + 60 = 360 s (Kueue: base · 2^(count−1), count 1).
 *   360 s  J2 is admitted again and starts on node 0; ends 360 + 3600.
 * Without it: J2 holds its quota until J0 ends at 330 s, when both J2 (node 0)
 * and J3 start. With topology_aware: J2 is never admitted while it cannot be
 * placed, so J3 starts at 10 s and J2 at 330 s.
 */
#include "tests/polsubmit.h"

static void ready_run(const char *policy, double *start /* J0..J3 */, uint32_t *rejected)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ nodes: 2, gpus_per_node: 4 }", "", NULL, policy);
    uint32_t j0 = polsubmit_job(&s, 330, 3, NULL);
    uint32_t j1 = polsubmit_job(&s, 36000, 3, NULL);
    uint32_t j2 = polsubmit_job(&s, 3600, 2, NULL);
    cr_assert_eq(s.tr.jobs[j0].state, JOB_RUNNING);
    cr_assert_eq(s.tr.jobs[j1].state, JOB_RUNNING);
    cr_assert_eq(s.tr.jobs[j2].state, JOB_QUEUED);
    cr_assert_eq(engine_run(&s.eng, 10 * SIM_SEC), 0);
    uint32_t j3 = polsubmit_job(&s, 3600, 1, NULL);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    /* GPU-seconds conserved through evictions and requeues (every member at full speed). */
    polsubmit_check_conservation(&s, true);
    uint32_t ids[4] = {j0, j1, j2, j3};
    for (int i = 0; i < 4; i++)
        start[i] = sim_time_to_sec(s.tr.jobs[ids[i]].start);
    *rejected = s.tr.rejected;
    simtest_free(&sc, &s);
}

Test(policy_kueue_ready, unplaceable_gang_is_evicted_requeued_and_releases_quota)
{
    double st[4];
    uint32_t rej;
    ready_run("{ name: kueue, inference_gpus: 0,\n"
              "  wait_for_pods_ready: { timeout: 5m,\n"
              "    requeuing_strategy: { backoff_base_seconds: 60 } } }",
              st, &rej);
    cr_expect_float_eq(st[0], 0, 1e-9);
    cr_expect_float_eq(st[1], 0, 1e-9);
    cr_expect_float_eq(st[3], 300, 1e-6, "J3 should start when J2's quota is released: %f", st[3]);
    cr_expect_float_eq(st[2], 360, 1e-6, "J2 should start when its backoff ends: %f", st[2]);
    cr_expect_eq(rej, 0);
}

Test(policy_kueue_ready, without_it_the_gang_holds_its_quota)
{
    double st[4];
    uint32_t rej;
    ready_run("{ name: kueue, inference_gpus: 0 }", st, &rej);
    cr_expect_float_eq(st[2], 330, 1e-6, "J2: %f", st[2]);
    cr_expect_float_eq(st[3], 330, 1e-6, "J3 waits for quota: %f", st[3]);
}

Test(policy_kueue_ready, topology_aware_admits_only_what_it_can_place)
{
    double st[4];
    uint32_t rej;
    ready_run("{ name: kueue, inference_gpus: 0, topology_aware: true }", st, &rej);
    cr_expect_float_eq(st[3], 10, 1e-6, "J3: %f", st[3]);
    cr_expect_float_eq(st[2], 330, 1e-6, "J2: %f", st[2]);
}

/* backoffLimitCount 0: the first timeout deactivates the workload (the job is rejected). */
Test(policy_kueue_ready, backoff_limit_deactivates)
{
    double st[4];
    uint32_t rej;
    ready_run("{ name: kueue, inference_gpus: 0,\n"
              "  wait_for_pods_ready: { timeout: 5m,\n"
              "    requeuing_strategy: { backoff_limit_count: 0 } } }",
              st, &rej);
    cr_expect_eq(rej, 1);
    cr_expect_float_eq(st[3], 300, 1e-6, "J3: %f", st[3]);
    cr_expect(st[2] < 0, "J2 never starts: %f", st[2]);
}

Test(policy_kueue_ready, bad_keys_are_refused_with_their_place)
{
    static const char *const bad[][2] = {
        {"wait_for_pods_ready: { timeout: 5 }", "timeout"},
        {"wait_for_pods_ready: { requeuing_strategy: { timestamp: Now } }", "timestamp"},
        {"wait_for_pods_ready: { requeuing_strategy: { backoff_limit_count: -1 } }",
         "backoff_limit_count"},
        {"preemption: { borrow_within_cohort: { policy: Always } }", "policy"},
        {"preemption: { reclaim_within_cohort: Never, borrow_within_cohort: { policy: "
         "LowerPriority } }",
         "reclaim_within_cohort"},
        {"topology_aware: maybe", "topology_aware"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "name: bad\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 4 }\n"
                 "policy:\n  name: kueue\n  %s\n",
                 bad[i][0]);
        simtest_expect_rejected(yaml, bad[i][1], i);
    }
}
