/*
 * test_pack.c — the `timeslice` and `mps` policies (sim/policy/pack.c):
 * schedules computed by hand from the sharing model (models/share.h), the
 * memory check against the cluster's OOM rule, bin-packing order, refusal of a
 * policy on the wrong sharing mode, and conservation on small runs.
 */
#include "tests/polsubmit.h"

#define TS2 "{ nodes: 1, gpus_per_node: 1, sharing: timeslice, timeSlicing: { replicas: 2 } }"

Test(pack, timeslice_two_jobs_share_a_card_and_the_third_waits)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, TS2, "  memory_gb_per_gpu: 30\n", NULL, "{ name: timeslice }");
    double o = sc.knobs.ts_overhead, r = (1 - o) / 2; /* 0.475 each while both run */
    uint32_t a = polsubmit_job(&s, 3600, 1, NULL), b = polsubmit_job(&s, 7200, 1, NULL),
             c = polsubmit_job(&s, 1800, 1, NULL);
    cr_expect_eq(s.tr.jobs[a].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[b].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[c].state, JOB_QUEUED, "a third tenant on a 2-replica card");
    cr_expect_eq(s.cl.cards[0].nten, 2);
    cr_expect_float_eq(s.tr.jobs[a].rate, r, 1e-12);
    engine_run(&s.eng, 30 * SIM_DAY);
    /* A: 3600 s at 0.475 = 7578.95 s; then C joins B (B has 3600 s left, C 1800 s). */
    double ta = 3600 / r, tc = ta + 1800 / r, tb = tc + 1800;
    cr_expect(fabs(polsubmit_end_s(&s, a) - ta) < 1e-5, "A %f, expected %f", polsubmit_end_s(&s, a),
              ta);
    cr_expect(fabs(sim_time_to_sec(s.tr.jobs[c].start) - ta) < 1e-5);
    cr_expect(fabs(polsubmit_end_s(&s, c) - tc) < 1e-5, "C %f, expected %f", polsubmit_end_s(&s, c),
              tc);
    cr_expect(fabs(polsubmit_end_s(&s, b) - tb) < 1e-5, "B %f, expected %f", polsubmit_end_s(&s, b),
              tb);
    simtest_free(&sc, &s);
}

#define TS4 "{ nodes: 1, gpus_per_node: 1, sharing: timeslice, timeSlicing: { replicas: 4 } }"

Test(pack, timeslice_memory_check_holds_back_what_would_oom)
{
    struct scenario sc;
    struct sim s;
    /* 30 + 30 GiB fit the 80 GiB card, a third 30 GiB does not: it waits for a card. */
    polsubmit_build(&sc, &s, TS4, "  memory_gb_per_gpu: 30\n", NULL, "{ name: timeslice }");
    uint32_t j[3];
    for (int i = 0; i < 3; i++)
        j[i] = polsubmit_job(&s, 3600, 1, NULL);
    cr_expect_eq(s.tr.jobs[j[2]].state, JOB_QUEUED);
    cr_expect_eq(s.cl.cards[0].nten, 2);
    engine_run(&s.eng, 30 * SIM_DAY);
    cr_expect_eq(s.tr.done, 3);
    cr_expect_eq(s.tr.failed, 0);
    /* Both first jobs end together at 3600/0.475; the third then runs alone for 3600 s. */
    double t1 = 3600 / ((1 - sc.knobs.ts_overhead) / 2);
    cr_expect(fabs(polsubmit_end_s(&s, j[2]) - (t1 + 3600)) < 1e-5);
    simtest_free(&sc, &s);
}

Test(pack, timeslice_without_memory_check_the_oom_rule_kills)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, TS4, "  memory_gb_per_gpu: 30\n", NULL,
                    "{ name: timeslice, check_memory: false }");
    uint32_t j[3];
    for (int i = 0; i < 3; i++)
        j[i] = polsubmit_job(&s, 3600, 1, NULL);
    cr_expect_eq(s.tr.jobs[j[0]].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j[1]].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j[2]].state, JOB_FAILED, "naive time-slicing: the third OOMs");
    cr_expect_eq(s.cl.cards[0].nten, 2);
    simtest_free(&sc, &s);
}

Test(pack, timeslice_rejects_jobs_that_can_never_fit)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, TS4, "  memory_gb_per_gpu: 90\n", NULL, "{ name: timeslice }");
    uint32_t j = polsubmit_job(&s, 60, 1, NULL), big = polsubmit_job(&s, 60, 2, NULL);
    cr_expect_eq(s.tr.jobs[j].state, JOB_REJECTED);
    cr_expect_eq(s.tr.jobs[big].state, JOB_REJECTED, "2 GPUs on a 1-card cluster");
    cr_expect_eq(s.cl.cards[0].nten, 0);
    simtest_free(&sc, &s);
}

#define TS_4CARDS "{ nodes: 1, gpus_per_node: 4, sharing: timeslice, timeSlicing: { replicas: 2 } }"

Test(pack, gang_members_go_to_the_most_or_least_allocated_distinct_cards)
{
    static const char *const pol[2] = {"{ name: timeslice }",
                                       "{ name: timeslice, pack: least-allocated }"};
    static const uint32_t want[2][2] = {{0, 1}, {1, 2}};
    for (int k = 0; k < 2; k++) {
        struct scenario sc;
        struct sim s;
        polsubmit_build(&sc, &s, TS_4CARDS, "  memory_gb_per_gpu: 10\n", NULL, pol[k]);
        uint32_t a = polsubmit_job(&s, 600, 1, NULL), b = polsubmit_job(&s, 600, 2, NULL);
        cr_expect_eq(s.tr.jobs[a].gpus[0], 0u);
        cr_assert_eq(s.tr.jobs[b].state, JOB_RUNNING);
        /* Most-allocated: card 0 (1 tenant) first, then card 1; least: two empty cards. */
        cr_expect_eq(s.tr.jobs[b].gpus[0], want[k][0], "%s: member 0 on %u", pol[k],
                     s.tr.jobs[b].gpus[0]);
        cr_expect_eq(s.tr.jobs[b].gpus[1], want[k][1], "%s: member 1 on %u", pol[k],
                     s.tr.jobs[b].gpus[1]);
        simtest_free(&sc, &s);
    }
}

Test(pack, max_training_per_card_and_inference_spread)
{
    static const char *const svc =
        "services:\n"
        "  - name: chat\n"
        "    latency: { a_ms: 1.16, b_ms: 0.28 }\n"
        "    batching: { max_batch: 32, max_wait: 5ms }\n"
        "    replicas: 2\n"
        "    memory_gb: 10\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n";
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, TS_4CARDS, "  memory_gb_per_gpu: 10\n", svc, "{ name: timeslice }");
    cr_expect_eq(s.svcs[0].reps[0].gpu, 0u);
    cr_expect_eq(s.svcs[0].reps[1].gpu, 0u, "packed: both replicas on card 0");
    simtest_free(&sc, &s);

    polsubmit_build(&sc, &s, TS_4CARDS, "  memory_gb_per_gpu: 10\n", svc,
                    "{ name: timeslice, inference_spread: true, max_training_per_card: 1 }");
    cr_expect_eq(s.svcs[0].reps[0].gpu, 0u);
    cr_expect_eq(s.svcs[0].reps[1].gpu, 1u, "spread: one replica per card");
    /* Cards 0 and 1 hold a replica each; one training member per card: 0, 1, 2, 3 then wait. */
    uint32_t j[5];
    for (int i = 0; i < 5; i++)
        j[i] = polsubmit_job(&s, 600, 1, NULL);
    for (uint32_t i = 0; i < 4; i++)
        cr_expect_eq(s.tr.jobs[j[i]].gpus[0], i);
    cr_expect_eq(s.tr.jobs[j[4]].state, JOB_QUEUED);
    simtest_free(&sc, &s);
}

Test(pack, policy_refuses_the_wrong_sharing_mode)
{
    struct scenario sc;
    struct conf_err err;
    const char *yaml = "name: x\nduration: 1h\ncluster: { nodes: 1 }\n"
                       "policy: { name: timeslice }\n";
    cr_expect_neq(scenario_load_string(&sc, "t.yaml", yaml, &err), 0);
    cr_expect(strstr(err.msg, "needs 'cluster.sharing: timeslice'") != NULL, "%s", err.msg);
    yaml = "name: x\nduration: 1h\ncluster: { nodes: 1, sharing: timeslice }\n"
           "policy: { name: mps }\n";
    cr_expect_neq(scenario_load_string(&sc, "t.yaml", yaml, &err), 0);
    cr_expect(strstr(err.msg, "needs 'cluster.sharing: mps'") != NULL, "%s", err.msg);
    yaml = "name: x\nduration: 1h\ncluster: { nodes: 1, sharing: timeslice }\n"
           "policy: { name: timeslice, pack: tightest }\n";
    cr_expect_neq(scenario_load_string(&sc, "t.yaml", yaml, &err), 0);
    cr_expect(strstr(err.msg, "pack") != NULL, "%s", err.msg);
}

#define MPS2 "{ nodes: 1, gpus_per_node: 1, sharing: mps, mps: { replicas: 2 } }"

Test(pack, mps_caps_give_the_share_model_speeds)
{
    struct scenario sc;
    struct sim s;
    /*
     * Caps 50 % each: u = 0.5 + 0.5 <= 1, no water-filling; k = 0.2:
     * speed = 0.5 / (1 + 0.2 · 0.5) = 0.5/1.1 while both run, 0.5 alone (capped).
     */
    polsubmit_build(&sc, &s, MPS2, "  memory_gb_per_gpu: 30\n  active_thread_percentage: 50\n",
                    NULL, "{ name: mps }");
    cr_expect_float_eq(sc.training.run.sm_cap, 0.5, 1e-12);
    uint32_t a = polsubmit_job(&s, 3600, 1, NULL), b = polsubmit_job(&s, 7200, 1, NULL);
    cr_expect_float_eq(s.tr.jobs[a].rate, 0.5 / 1.1, 1e-12);
    engine_run(&s.eng, 30 * SIM_DAY);
    double ta = 3600 * 1.1 / 0.5; /* 7920 s */
    double tb = ta + (7200 - 3600) / 0.5;
    cr_expect(fabs(polsubmit_end_s(&s, a) - ta) < 1e-5, "A %f vs %f", polsubmit_end_s(&s, a), ta);
    cr_expect(fabs(polsubmit_end_s(&s, b) - tb) < 1e-5, "B %f vs %f", polsubmit_end_s(&s, b), tb);
    simtest_free(&sc, &s);

    /* The policy's thread_pct overrides the class: 100 % each = water-filled 0.5 + 0.5, and
     * interference from a co-runner wanting 1: 0.5 / (1 + 0.2) = 0.41667. */
    polsubmit_build(&sc, &s, MPS2, "  memory_gb_per_gpu: 30\n  active_thread_percentage: 50\n",
                    NULL, "{ name: mps, thread_pct: { training: 100 } }");
    cr_expect_float_eq(sc.training.run.sm_cap, 1.0, 1e-12);
    a = polsubmit_job(&s, 3600, 1, NULL);
    b = polsubmit_job(&s, 3600, 1, NULL);
    cr_expect_float_eq(s.tr.jobs[a].rate, 0.5 / 1.2, 1e-12);
    cr_expect_float_eq(s.tr.jobs[b].rate, 0.5 / 1.2, 1e-12);
    simtest_free(&sc, &s);
}

Test(pack, mps_per_client_memory_limit)
{
    /* k8s MPS plugin: each client is pinned to 80/2 = 40 GiB; 50 GiB per GPU cannot fit. */
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, MPS2, "  memory_gb_per_gpu: 50\n", NULL, "{ name: mps }");
    uint32_t j = polsubmit_job(&s, 600, 1, NULL);
    cr_expect_eq(s.tr.jobs[j].state, JOB_REJECTED);
    cr_expect_eq(s.cl.cards[0].nten, 0);
    simtest_free(&sc, &s);
    polsubmit_build(&sc, &s, MPS2, "  memory_gb_per_gpu: 50\n", NULL,
                    "{ name: mps, check_memory: false }");
    j = polsubmit_job(&s, 600, 1, NULL);
    cr_expect_eq(s.tr.jobs[j].state, JOB_FAILED, "over its pinned limit: the client OOMs");
    cr_expect_eq(s.cl.cards[0].nten, 0);
    simtest_free(&sc, &s);
}

static const char *const small_run =
    "name: small\n"
    "duration: 1h\n"
    "sample_interval: 60s\n"
    "cluster: %s\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.2 }\n"
    "    batching: { max_batch: 32, max_wait: 5ms }\n"
    "    memory_gb: 16\n"
    "    active_thread_percentage: 40\n"
    "    arrivals: { synthetic: { peak_rps: 800, trough_ratio: 0.15, peak_hour: 1 } }\n"
    "training:\n"
    "  backlog: 6\n"
    "  memory_gb_per_gpu: %s\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 4, duration: { lognormal: { median: 30m, sigma: 1 } },\n"
    "                 gpus: { %s } }\n"
    "policy: { name: %s, inference_gpus: 2, autoscale: { target: 0.6, max: 6 } }\n";

static void conservation(const char *cluster, const char *mem, const char *gpus, const char *policy,
                         bool equal_speeds)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml), small_run, cluster, mem, gpus, policy);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 7);
    polsubmit_check_conservation(&s, equal_speeds);
    cr_log_info("%s: done %u running %u queued %u failed %u, replicas %u, served %lu dropped %lu, "
                "util alloc %.3f busy %.3f useful %.3f, oom %lu",
                policy, s.tr.done, s.tr.running, s.tr.queued, s.tr.failed,
                service_replicas(&s.svcs[0]), s.svcs[0].tot.served, s.svcs[0].tot.dropped,
                sim_util_allocated(&s), sim_util_busy(&s), sim_util_useful(&s), s.oom_kills);
    simtest_free(&sc, &s);
}

Test(pack, conservation_timeslice)
{
    const char *c = "{ nodes: 1, gpus_per_node: 4, sharing: timeslice, "
                    "timeSlicing: { replicas: 3 } }";
    /* 1-GPU jobs: each member's card counts exactly the job's progress. */
    conservation(c, "20", "1: 1.0", "timeslice", true);
    /* Gangs on cards with different loads: the faster members' cards count more. */
    conservation(c, "20", "1: 0.5, 2: 0.5", "timeslice", false);
}

Test(pack, conservation_mps)
{
    const char *c = "{ nodes: 1, gpus_per_node: 4, sharing: mps, mps: { replicas: 3 } }";
    conservation(c, "20", "1: 1.0", "mps", true);
}
