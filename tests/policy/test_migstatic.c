/*
 * test_migstatic.c — the `mig-static` policy (sim/policy/migstatic.c):
 * training on the largest free instance at its speed factor (MIG_EFFICIENCY ×
 * SMs / 108, by hand), per-node-group layouts applied at t = 0 without
 * re-layout time, inference on the smallest instance, refusal of a replica
 * whose profile a card lacks (state unchanged), key validation, conservation.
 */
#include "tests/polsubmit.h"

/* A100-SXM4-80GB: 108 SMs; 3g = 42 SMs, 7g = 98 SMs; efficiency 0.968 (models/mig.h). */
#define SPEED_3G (0.968 * 42 / 108)
#define SPEED_7G (0.968 * 98 / 108)
#define SPEED_1G (0.968 * 14 / 108)

Test(migstatic, one_gpu_jobs_run_at_the_3g_speed_and_the_third_waits)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(
        &sc, &s, "{ nodes: 1, gpus_per_node: 1, sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } }",
        "  memory_gb_per_gpu: 30\n", NULL, "{ name: mig-static }");
    uint32_t a = polsubmit_job(&s, 3600, 1, NULL), b = polsubmit_job(&s, 1800, 1, NULL),
             c = polsubmit_job(&s, 3600, 1, NULL);
    cr_expect_eq(s.tr.jobs[a].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[b].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[c].state, JOB_QUEUED, "both instances are taken");
    cr_expect_float_eq(s.tr.jobs[a].rate, SPEED_3G, 1e-12);
    cr_expect_str_eq(s.tr.jobs[a].spec.mig_profile, "", "the job's spec is left as submitted");
    engine_run(&s.eng, 30 * SIM_DAY);
    /* A: 3600/0.3764 = 9563.6 s; B: 4781.8 s, then C on B's instance until 4781.8 + 9563.6. */
    cr_expect(fabs(polsubmit_end_s(&s, a) - 3600 / SPEED_3G) < 1e-5, "A %f",
              polsubmit_end_s(&s, a));
    cr_expect(fabs(polsubmit_end_s(&s, b) - 1800 / SPEED_3G) < 1e-5);
    cr_expect(fabs(polsubmit_end_s(&s, c) - 5400 / SPEED_3G) < 1e-5, "C %f",
              polsubmit_end_s(&s, c));
    simtest_free(&sc, &s);
}

static const char *const svc1g = "services:\n"
                                 "  - name: small\n"
                                 "    latency: { a_ms: 1.16, b_ms: 0.28 }\n"
                                 "    batching: { max_batch: 32, max_wait: 5ms }\n"
                                 "    replicas: 2\n"
                                 "    memory_gb: 5\n"
                                 "    mig_profile: 1g.10gb\n"
                                 "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n";

Test(migstatic, node_group_layouts_inference_small_training_large)
{
    struct scenario sc;
    struct sim s;
    /* Node 0: seven 1g.10gb; node 1 keeps the cluster layout, one 7g.80gb. */
    polsubmit_build(&sc, &s,
                    "{ nodes: 2, gpus_per_node: 1, sharing: mig, mig: { layout: '7g.80gb' } }",
                    "  memory_gb_per_gpu: 30\n", svc1g,
                    "{ name: mig-static, layouts: [ { nodes: '0', layout: '1g.10gb*7' } ] }");
    cr_expect_eq(s.cl.cards[0].layout.n, 7);
    cr_expect_eq(s.cl.cards[1].layout.n, 1);
    cr_expect_eq(s.relayouts, 0, "applied at t = 0, not as a re-layout");
    cr_expect_eq(s.cl.cards[0].reconfiguring, false);
    cr_expect_eq(s.svcs[0].reps[0].gpu, 0u);
    cr_expect_eq(s.svcs[0].reps[1].gpu, 0u);
    /* Training (30 GiB) fits no 1g: it takes the 7g on card 1 at the 7g speed. */
    uint32_t j = polsubmit_job(&s, 3600, 1, NULL);
    cr_assert_eq(s.tr.jobs[j].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j].gpus[0], 1u);
    cr_expect_float_eq(s.tr.jobs[j].rate, SPEED_7G, 1e-12);
    simtest_free(&sc, &s);

    /* A small job asking a 1g.10gb explicitly goes to card 0, at the 1g speed. */

    polsubmit_build(&sc, &s,
                    "{ nodes: 2, gpus_per_node: 1, sharing: mig, mig: { layout: '7g.80gb' } }",
                    "  memory_gb_per_gpu: 5\n", svc1g,
                    "{ name: mig-static, layouts: [ { nodes: 0, layout: '1g.10gb*7' } ] }");
    j = polsubmit_job(&s, 3600, 1, "1g.10gb");
    cr_assert_eq(s.tr.jobs[j].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j].gpus[0], 0u);
    cr_expect_float_eq(s.tr.jobs[j].rate, SPEED_1G, 1e-12);
    /* Without a profile a gang needs one profile on g cards: card 0 has only 1g, card 1 only
     * 7g, so a 2-GPU job can never run (rejected); a 1-GPU job takes the largest, the 7g. */
    uint32_t g2 = polsubmit_job(&s, 600, 2, NULL), g1 = polsubmit_job(&s, 600, 1, NULL);
    cr_expect_eq(s.tr.jobs[g2].state, JOB_REJECTED);
    cr_expect_eq(s.tr.jobs[g1].gpus[0], 1u);
    cr_expect_float_eq(s.tr.jobs[g1].rate, SPEED_7G, 1e-12);
    simtest_free(&sc, &s);
}

/*
 * `use:` reserves a node group for one kind of workload. Node 0 (7g.80gb) is
 * kept for inference, node 1 (3g.40gb+3g.40gb) for training: a replica that
 * would otherwise take the smallest instance (a 3g on node 1) goes to node 0,
 * and a 30 GiB 1-GPU job that would otherwise take the largest instance (the
 * 7g on node 0) runs on a 3g at the 3g speed; a 2-GPU job (one member per
 * card) can never run: only one training card exists, so it is rejected.
 */
Test(migstatic, use_reserves_node_groups_for_inference_or_training)
{
    static const char *const svc =
        "services:\n"
        "  - name: chat\n"
        "    latency: { a_ms: 1.16, b_ms: 0.28 }\n"
        "    batching: { max_batch: 32, max_wait: 5ms }\n"
        "    replicas: 1\n"
        "    memory_gb: 5\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n";
    struct scenario sc;
    struct sim s;
    polsubmit_build(
        &sc, &s, "{ nodes: 2, gpus_per_node: 1, sharing: mig, mig: { layout: '7g.80gb' } }",
        "  memory_gb_per_gpu: 30\n", svc,
        "{ name: mig-static, layouts: [ { nodes: 0, layout: '7g.80gb', use: inference },"
        " { nodes: 1, layout: '3g.40gb+3g.40gb', use: training } ] }");
    cr_assert_eq(s.svcs[0].nreps, 1u);
    cr_expect_eq(s.svcs[0].reps[0].gpu, 0u, "the replica is on the inference node");
    uint32_t a = polsubmit_job(&s, 3600, 1, NULL), b = polsubmit_job(&s, 3600, 1, NULL),
             c = polsubmit_job(&s, 3600, 1, NULL), g2 = polsubmit_job(&s, 600, 2, NULL);
    cr_expect_eq(s.tr.jobs[a].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[a].gpus[0], 1u);
    cr_expect_float_eq(s.tr.jobs[a].rate, SPEED_3G, 1e-12);
    cr_expect_eq(s.tr.jobs[b].gpus[0], 1u);
    cr_expect_eq(s.tr.jobs[c].state, JOB_QUEUED, "the 7g on node 0 is not for training");
    cr_expect_eq(s.tr.jobs[g2].state, JOB_REJECTED);
    simtest_free(&sc, &s);

    /* Without `use`, the same layouts put the replica on the smallest instance (a 3g of
     * node 1) and send the 1-GPU job to the largest, the 7g of node 0. */
    polsubmit_build(&sc, &s,
                    "{ nodes: 2, gpus_per_node: 1, sharing: mig, mig: { layout: '7g.80gb' } }",
                    "  memory_gb_per_gpu: 30\n", svc,
                    "{ name: mig-static, layouts: [ { nodes: 0, layout: '7g.80gb' },"
                    " { nodes: 1, layout: '3g.40gb+3g.40gb' } ] }");
    cr_expect_eq(s.svcs[0].reps[0].gpu, 1u);
    a = polsubmit_job(&s, 3600, 1, NULL);
    cr_expect_eq(s.tr.jobs[a].gpus[0], 0u);
    cr_expect_float_eq(s.tr.jobs[a].rate, SPEED_7G, 1e-12);
    simtest_free(&sc, &s);
}

Test(migstatic, replica_asking_a_profile_the_card_lacks_is_refused_state_unchanged)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(
        &sc, &s, "{ nodes: 2, gpus_per_node: 1, sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } }",
        "  memory_gb_per_gpu: 30\n", svc1g,
        "{ name: mig-static, layouts: [ { nodes: 0-0, layout: '1g.10gb*7' } ] }");
    const struct card *c1 = &s.cl.cards[1];
    uint32_t live = s.cl.live_tenants, nreps = s.svcs[0].nreps, reps = service_replicas(&s.svcs[0]);
    cr_expect_eq(sim_place_replica(&s, 0, 1), -EBUSY, "card 1 has no 1g.10gb");
    cr_expect_eq(c1->nten, 0);
    cr_expect_eq(s.cl.live_tenants, live);
    cr_expect_eq(s.svcs[0].nreps, nreps);
    cr_expect_eq(service_replicas(&s.svcs[0]), reps);
    for (int k = 0; k < 2; k++)
        cr_expect_eq(c1->inst_tenant[k], TENANT_NONE);
    simtest_free(&sc, &s);

    /* With every card 3g.40gb+3g.40gb the policy cannot place its initial 1g replicas. */
    struct conf_err err;
    const char *yaml = "name: x\nduration: 1h\n"
                       "cluster: { nodes: 1, gpus_per_node: 1, sharing: mig,"
                       " mig: { layout: '3g.40gb+3g.40gb' } }\n"
                       "services:\n"
                       "  - name: small\n"
                       "    latency: { a_ms: 1.16, b_ms: 0.28 }\n"
                       "    batching: { max_batch: 32, max_wait: 5ms }\n"
                       "    mig_profile: 1g.10gb\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"
                       "policy: { name: mig-static }\n";
    cr_assert_eq(scenario_load_string(&sc, "t.yaml", yaml, &err), 0, "%s", err.msg);
    cr_expect_neq(sim_init(&s, &sc, 1, NULL), 0);
    cr_expect(strstr(s.err, "mig-static") != NULL, "%s", s.err);
    scenario_release(&sc);
}

Test(migstatic, layouts_key_is_validated)
{
    static const char *const bad[][2] = {
        {"[ { nodes: '0-2', layout: '7g.80gb' } ]", "within 0-1"},
        {"[ { nodes: '0', layout: '4g.40gb+4g.40gb' } ]", "4g.40gb"},
        {"[ { nodes: 0, layout: '7g.80gb' }, { nodes: '0-1', layout: '7g.80gb' } ]", "overlap"},
        {"[ { nodes: 'x', layout: '7g.80gb' } ]", "nodes"},
        {"[ { nodes: 1, layout: '7g.80gb', size: 3 } ]", "size"},
        {"'7g.80gb'", "list"},
        {"[ { nodes: 1, layout: '7g.80gb', use: serving } ]", "inference"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "name: x\nduration: 1h\n"
                 "cluster: { nodes: 2, sharing: mig, mig: { layout: '7g.80gb' } }\n"
                 "policy: { name: mig-static, layouts: %s }\n",
                 bad[i][0]);
        struct scenario sc;
        struct conf_err err;
        cr_expect_neq(scenario_load_string(&sc, "t.yaml", yaml, &err), 0, "accepted %s", bad[i][0]);
        cr_expect(strstr(err.msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], err.msg);
    }
    struct scenario sc;
    struct conf_err err;
    cr_expect_neq(scenario_load_string(&sc, "t.yaml",
                                       "name: x\nduration: 1h\ncluster: { nodes: 1 }\n"
                                       "policy: { name: mig-static }\n",
                                       &err),
                  0);
    cr_expect(strstr(err.msg, "needs 'cluster.sharing: mig'") != NULL, "%s", err.msg);
}

Test(migstatic, conservation)
{
    static const char *const yaml =
        "name: small\n"
        "duration: 1h\n"
        "sample_interval: 60s\n"
        "cluster: { nodes: 2, gpus_per_node: 2, sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } "
        "}\n"
        "services:\n"
        "  - name: chat\n"
        "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.2 }\n"
        "    batching: { max_batch: 32, max_wait: 5ms }\n"
        "    memory_gb: 8\n"
        "    arrivals: { synthetic: { peak_rps: 300, trough_ratio: 0.15, peak_hour: 1 } }\n"
        "training:\n"
        "  backlog: 6\n"
        "  memory_gb_per_gpu: 20\n"
        "  jobs:\n"
        "    synthetic: { per_hour: 4, duration: { lognormal: { median: 30m, sigma: 1 } },\n"
        "                 gpus: { 1: 0.5, 2: 0.5 } }\n"
        "policy:\n"
        "  name: mig-static\n"
        "  inference_gpus: 2\n"
        "  autoscale: { target: 0.6, max: 6 }\n"
        "  layouts: [ { nodes: 0, layout: '1g.10gb*7' } ]\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 7);
    /* Every gang runs on one profile: members at equal speeds, useful = work exactly. */
    polsubmit_check_conservation(&s, true);
    cr_log_info("mig-static: done %u running %u queued %u rejected %u, replicas %u, served %lu "
                "dropped %lu, util alloc %.3f busy %.3f useful %.3f",
                s.tr.done, s.tr.running, s.tr.queued, s.tr.rejected, service_replicas(&s.svcs[0]),
                s.svcs[0].tot.served, s.svcs[0].tot.dropped, sim_util_allocated(&s),
                sim_util_busy(&s), sim_util_useful(&s));
    simtest_free(&sc, &s);
}
