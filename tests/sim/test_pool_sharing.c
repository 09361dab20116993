/*
 * test_pool_sharing.c — per-pool sharing settings in a mixed fleet (cluster.pools[].sharing,
 * mig, timeSlicing, mps and the nvidia.com/mig.config label), each against a hand count:
 *   - an A100 pool cut 3g.40gb+3g.40gb beside a pool of whole H100 cards (sharing: none)
 *     under mig-static: the replicas take the four A100 instances, a job that requires H100
 *     runs on whole H100 cards at 1.73 (models/gpu.c) and ends at work / 1.73;
 *   - the H100-80GB MIG table (`nvidia-smi mig -lgip` on an H100, jbarrow.ai field notes) and
 *     an H100 pool layout the driver would refuse, named at file:line:col;
 *   - per-pool time-slicing replicas: 4 tenants per card in a pool with replicas 4, 1 in a
 *     pool of whole cards;
 *   - the mig.config label picks each pool's mig-parted configuration; a pool's own
 *     sharing_from (a device-plugin file) gives its replicas;
 *   - pools of 8-GPU and 4-GPU nodes: an 8-GPU gang takes the 8-GPU node, 4-GPU gangs one
 *     4-GPU node each, and an 8-GPU gang with the 8-GPU node busy two whole 4-GPU nodes of
 *     one pool; node indices and end times by hand;
 *   - bad per-pool settings, each refused at file:line:col.
 */
#include <math.h>
#include <string.h>

#include "models/gpu.h"
#include "models/mig.h"
#include "tests/polsubmit.h"

/* Inference tenants on card g. */
static uint32_t infer_on(const struct sim *s, uint32_t g)
{
    uint32_t n = 0;
    const struct card *c = &s->cl.cards[g];
    for (uint32_t i = 0; i < c->nten; i++)
        n += s->cl.tenants[c->ten[i]].kind == TENANT_INFER;
    return n;
}

Test(pool_sharing, mig_a100_pool_beside_whole_h100_pool_under_mig_static)
{
    static const char *const cluster =
        "{ sharing: mig, pools: ["
        " { name: a100, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2,"
        "   mig: { layout: '3g.40gb+3g.40gb' } },"
        " { name: h100, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 2, sharing: none } ] }";
    static const char *const svc =
        "services:\n"
        "  - name: small\n"
        "    latency: { a_ms: 1.16, b_ms: 0.28 }\n"
        "    batching: { max_batch: 32, max_wait: 5ms }\n"
        "    replicas: 4\n"
        "    memory_gb: 10\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n";
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, cluster,
                    "  memory_gb_per_gpu: 30\n  require: { gpu: h100-sxm5-80gb }\n", svc,
                    "{ name: mig-static }");
    /* Cards 0-1: A100 with two 3g.40gb each; cards 2-3: whole H100s (MIG off). */
    cr_assert_eq(s.cl.npools, 2);
    cr_expect_eq(s.cl.pools[0].mode, SHARE_MIG);
    cr_expect_eq(s.cl.pools[1].mode, SHARE_EXCLUSIVE);
    cr_expect_eq(s.cl.pools[1].slots, 1u);
    for (uint32_t g = 0; g < 4; g++)
        cr_expect_eq(s.cl.cards[g].layout.n, g < 2 ? 2u : 0u, "card %u", g);
    cr_expect_str_eq(s.cl.cards[0].layout.inst[0].profile->name, "3g.40gb");
    /* Four replicas, four instances: 3g.40gb (39.25 GiB) is smaller than a whole H100 (80). */
    for (uint32_t g = 0; g < 4; g++)
        cr_expect_eq(infer_on(&s, g), g < 2 ? 2u : 0u, "card %u: %u replicas", g, infer_on(&s, g));
    for (uint32_t t = 0; t < s.cl.ntenants; t++)
        if (s.cl.tenants[t].used && s.cl.tenants[t].kind == TENANT_INFER)
            cr_expect_geq(s.cl.tenants[t].instance, 0, "a replica on a MIG instance");

    /* A: 2 GPUs, 3600 s of A100 work; B: 1 GPU, 1800 s, waits for A's cards. */
    uint32_t a = polsubmit_job(&s, 3600, 2, NULL), b = polsubmit_job(&s, 1800, 1, NULL);
    cr_expect_eq(s.tr.jobs[a].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[b].state, JOB_QUEUED, "both H100 cards are A's");
    cr_expect_eq(s.tr.jobs[a].gpus[0], 2u);
    cr_expect_eq(s.tr.jobs[a].gpus[1], 3u);
    cr_expect_float_eq(s.tr.jobs[a].rate, 1.73, 1e-12, "a whole H100: its training speed");
    for (uint32_t i = 0; i < 2; i++) {
        const struct card *c = &s.cl.cards[2 + i];
        cr_assert_eq(c->nten, 1u);
        cr_expect_eq(s.cl.tenants[c->ten[0]].instance, -1, "no MIG instance on a whole card");
    }
    engine_run(&s.eng, 2 * 3600 * SIM_SEC);
    /* H100 trains 1.73 × an A100 (models/gpu.c): A ends at 3600 / 1.73 = 2080.925 s; B then
     * runs 1800 / 1.73 = 1040.462 s on one H100, to 3121.387 s. */
    cr_expect(fabs(polsubmit_end_s(&s, a) - 3600 / 1.73) < 1e-5, "A %f", polsubmit_end_s(&s, a));
    cr_expect(fabs(polsubmit_end_s(&s, b) - 5400 / 1.73) < 1e-5, "B %f", polsubmit_end_s(&s, b));
    cr_expect_geq(s.tr.jobs[b].gpus[0], 2u, "B on an H100");
    simtest_free(&sc, &s);
}

/* H100-80GB, `nvidia-smi mig -lgip` (jbarrow.ai field notes): GiB, SMs, instances per card. */
Test(pool_sharing, h100_mig_table_and_a_bad_h100_pool_layout)
{
    static const struct {
        const char *name;
        double gib;
        int sms, max, compute, memory;
    } ref[] = {
        {"1g.10gb", 9.75, 16, 7, 1, 1},   {"1g.20gb", 19.625, 26, 4, 1, 2},
        {"2g.20gb", 19.625, 32, 3, 2, 2}, {"3g.40gb", 39.50, 60, 2, 3, 4},
        {"4g.40gb", 39.50, 64, 1, 4, 4},  {"7g.80gb", 79.25, 132, 1, 7, 8},
    };
    const struct gpu_spec *h = gpu_spec_find("h100-sxm5-80gb");
    for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
        const struct mig_profile *p = mig_profile_find(h, ref[i].name);
        cr_assert_not_null(p, "%s", ref[i].name);
        cr_expect_eq(p->memory_mib, (int)(ref[i].gib * 1024), "%s MiB", ref[i].name);
        cr_expect_eq(p->sms, ref[i].sms, "%s SMs", ref[i].name);
        cr_expect_eq(p->max_instances, ref[i].max, "%s max", ref[i].name);
        cr_expect_eq(p->compute_slices, ref[i].compute);
        cr_expect_eq(p->memory_slices, ref[i].memory);
    }
    /* 4g.40gb twice: 8 compute slices of 7, and one instance per card at most. */
    simtest_expect_rejected(
        "name: x\nduration: 1h\ncluster:\n  sharing: mig\n  pools:\n"
        "    - { name: a, gpu: a100-sxm4-80gb, nodes: 1, mig: { layout: 7g.80gb } }\n"
        "    - { name: h, gpu: h100-sxm5-80gb, nodes: 1, mig: { layout: '4g.40gb+4g.40gb' } }\n",
        "bad.yaml:7:64: 'layout': pool 'h' (h100-sxm5-80gb): 4g.40gb+4g.40gb: only 1 instance "
        "of 4g.40gb fits",
        0);
    /* An H100 pool's 3g.40gb runs at 60 of 132 SMs: 0.968 × 60 / 132 (models/mig.h). */
    struct scenario sc;
    struct sim s;
    simtest_build(
        &sc, &s,
        "name: x\nduration: 1h\ncluster:\n  sharing: mig\n  mig: { layout: '3g.40gb*2' }\n"
        "  pools:\n"
        "    - { name: a, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1 }\n"
        "    - { name: h, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 1 }\n"
        "policy: { name: mig-static }\n",
        1);
    const struct mig_profile *a3 = s.cl.cards[0].layout.inst[0].profile,
                             *h3 = s.cl.cards[1].layout.inst[0].profile;
    cr_expect_eq(a3->sms, 42);
    cr_expect_eq(h3->sms, 60, "the H100 pool's cards use the H100 table");
    cr_expect_float_eq(mig_knobs_speed(cluster_card_mig(&s.cl, 0), a3), 0.968 * 42 / 108, 1e-12);
    cr_expect_float_eq(mig_knobs_speed(cluster_card_mig(&s.cl, 1), h3), 0.968 * 60 / 132, 1e-12);
    simtest_free(&sc, &s);
}

Test(pool_sharing, per_pool_time_slicing_replicas)
{
    static const char *const yaml =
        "name: ts\nduration: 2h\n"
        "cluster:\n"
        "  sharing: timeslice\n"
        "  timeSlicing: { replicas: 2 }\n"
        "  pools:\n"
        "    - { name: four, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2,"
        " timeSlicing: { replicas: 4 } }\n"
        "    - { name: whole, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2, sharing: none }\n"
        "    - { name: two, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
        "services:\n"
        "  - name: q\n"
        "    latency: { a_ms: 5, b_ms: 1 }\n"
        "    replicas: 14\n"
        "    memory_gb: 5\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 20 } }\n"
        "policy: { name: timeslice }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    cr_expect_eq(s.cl.pools[0].slots, 4u);
    cr_expect_eq(s.cl.pools[1].slots, 1u);
    cr_expect_eq(s.cl.pools[2].slots, 2u, "the cluster's replicas");
    cr_expect_eq(s.cl.pools[1].mode, SHARE_EXCLUSIVE);
    /* 2 × 4 + 2 × 1 + 2 × 2 = 14 slots, 14 replicas: every slot taken, none more. */
    static const uint32_t want[] = {4, 4, 1, 1, 2, 2};
    for (uint32_t g = 0; g < 6; g++)
        cr_expect_eq(infer_on(&s, g), want[g], "card %u: %u replicas, expected %u", g,
                     infer_on(&s, g), want[g]);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    /* A replica alone on a whole card runs at the full card's speed (no switch loss). */
    uint32_t t = s.cl.cards[2].ten[0];
    cluster_set_active(&s.cl, t, s.eng.now, true, USE_INFER);
    cr_expect_float_eq(cluster_tenant_speed(&s.cl, t), 1.0, 1e-12);
    simtest_expect_conserved(&s);
    simtest_free(&sc, &s);
}

Test(pool_sharing, mig_config_label_picks_each_pools_configuration)
{
    static const char *const yaml =
        "name: lab\nduration: 1h\n"
        "cluster:\n"
        "  sharing_from: sharing/mig-parted-pools.yaml\n"
        "  pools:\n"
        "    - { name: infer, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
        " labels: { nvidia.com/mig.config: all-1g.10gb } }\n"
        "    - { name: mid, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 1,"
        " labels: { nvidia.com/mig.config: all-3g.40gb } }\n"
        "    - { name: train, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 1,"
        " labels: { nvidia.com/mig.config: all-disabled } }\n"
        "policy: { name: mig-static }\n";
    struct scenario sc;
    struct conf_err err;
    int rc = scenario_load_string(&sc, "tests/data/lab.yaml", yaml, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_expect_eq(sc.sharing, SHARE_MIG, "a configuration enables MIG");
    cr_expect_str_eq(sc.pools[0].mig_layout,
                     "1g.10gb+1g.10gb+1g.10gb+1g.10gb+1g.10gb+1g.10gb+1g.10gb");
    cr_expect_str_eq(sc.pools[1].mig_layout, "3g.40gb+3g.40gb");
    cr_expect(sc.pools[2].whole, "mig-enabled: false");
    struct sim s;
    cr_assert_eq(sim_init(&s, &sc, 1, NULL), 0, "%s", s.err);
    cr_expect_eq(s.cl.cards[0].layout.n, 7u);
    cr_expect_eq(s.cl.cards[1].layout.n, 2u);
    cr_expect_eq(s.cl.cards[1].layout.inst[0].profile->sms, 60, "the H100 table");
    cr_expect_eq(s.cl.cards[2].layout.n, 0u);
    cr_expect_eq(cluster_card_mode(&s.cl, 2), SHARE_EXCLUSIVE);
    simtest_free(&sc, &s);
}

Test(pool_sharing, pool_sharing_from_a_device_plugin_file)
{
    static const char *const yaml =
        "name: dp\nduration: 1h\n"
        "cluster:\n"
        "  sharing: timeslice\n"
        "  timeSlicing: { replicas: 2 }\n"
        "  pools:\n"
        "    - { name: ts4, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2,"
        " sharing_from: sharing/device-plugin-timeslicing.yaml }\n"
        "    - { name: ts2, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
        "    - { name: off, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 2,"
        " sharing_from: { file: sharing/mig-parted-pools.yaml, config: all-disabled } }\n"
        "policy: { name: timeslice }\n";
    struct scenario sc;
    struct conf_err err;
    cr_assert_eq(scenario_load_string(&sc, "tests/data/dp.yaml", yaml, &err), 0, "%s", err.msg);
    /* The file's replicas: 4 (its resources[0]); the cluster's 2; mig-enabled false: whole. */
    cr_expect_eq(sc.pools[0].slots, 4u);
    cr_expect_eq(sc.pools[1].slots, 0u, "the cluster's");
    cr_expect(sc.pools[2].whole);
    cr_expect(strstr(sc.warning, "flags") != NULL, "the file's unmodelled fields: %s", sc.warning);
    struct sim s;
    cr_assert_eq(sim_init(&s, &sc, 1, NULL), 0, "%s", s.err);
    cr_expect_eq(cluster_card_slots(&s.cl, 0), 4u);
    cr_expect_eq(cluster_card_slots(&s.cl, 2), 2u);
    cr_expect_eq(cluster_card_slots(&s.cl, 4), 1u);
    simtest_free(&sc, &s);
    /* A file of another mode than the cluster's. */
    struct scenario bad;
    const char *mps =
        "name: dp\nduration: 1h\ncluster:\n  sharing: mig\n  mig: { layout: 7g.80gb }\n  pools:\n"
        "    - { name: p, gpu: a100-sxm4-80gb, nodes: 1, sharing_from: "
        "sharing/device-plugin-mps.yaml "
        "}\n";
    cr_expect_lt(scenario_load_string(&bad, "tests/data/dp.yaml", mps, &err), 0);
    /* Its only pool shares by MPS (the file): the cluster's MIG settings have no MIG pool. */
    cr_expect(strstr(err.msg, "tests/data/dp.yaml:5:8: 'mig': only with 'sharing: mig' (no pool "
                              "shares so)") != NULL,
              "%s", err.msg);
}

Test(pool_sharing, bad_per_pool_settings_name_the_place)
{
#define P(EXTRA) "    - { name: p, gpu: a100-sxm4-80gb, nodes: 1" EXTRA " }\n"
#define Q        "    - { name: q, gpu: h100-sxm5-80gb, nodes: 1 }\n"
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        /* A profile the pool's board does not have. */
        {"cluster:\n  sharing: mig\n  pools:\n" P(", mig: { layout: 3g.20gb }") Q
         "  mig: { layout: 7g.80gb }\n",
         "bad.yaml:6:64: 'layout': pool 'p' (a100-sxm4-80gb): 3g.20gb: unknown profile "
         "'3g.20gb'"},
        {"cluster:\n  sharing: mig\n  pools:\n" P("") Q "  mig: { layout: '1g.5gb*7' }\n",
         "bad.yaml:8:18: 'layout': pool 'p' (a100-sxm4-80gb): 1g.5gb*7: unknown profile"},
        /* Settings that contradict the cluster's mode. */
        {"cluster:\n  sharing: mig\n  mig: { layout: 7g.80gb }\n  pools:\n" P(
             ", timeSlicing: { replicas: 4 }") Q,
         "bad.yaml:7:62: 'timeSlicing': pool 'p': only in a pool that shares by timeslice "
         "(this one shares by mig"},
        {"cluster:\n  sharing: timeslice\n  pools:\n" P(", sharing: mps, timeSlicing: { "
                                                        "replicas: 2 }") Q,
         "bad.yaml:6:76: 'timeSlicing': pool 'p': only in a pool that shares by timeslice "
         "(this one shares by mps"},
        {"cluster:\n  sharing: timeslice\n  pools:\n" P(", sharing: none, timeSlicing: { "
                                                        "replicas: 2 }") Q,
         "bad.yaml:6:77: 'timeSlicing': pool 'p' takes whole cards (sharing: none)"},
        {"cluster:\n  sharing: timeslice\n  pools:\n" P(", timeSlicing: { slice: 10ms }") Q,
         "bad.yaml:6:71: 'slice': set for the whole cluster (cluster.timeSlicing.slice)"},
        {"cluster:\n  sharing: mig\n  pools:\n" P("") Q, "'layout': pool 'p' has no MIG layout"},
        {"cluster:\n  sharing: mig\n  pools:\n" P(", mig: { layout: 7g.80gb, efficiency: 0.9 }") Q
         "  mig: { layout: 7g.80gb }\n",
         "bad.yaml:6:85: 'efficiency': set for the whole cluster (cluster.mig.efficiency)"},
        /* Policies that cannot take a pool of whole cards in a shared cluster. */
        {"cluster:\n  sharing: timeslice\n  pools:\n" P(", sharing: none") Q
         "policy: { name: kai }\n",
         "bad.yaml:6:58: 'sharing': pool 'p' takes whole cards (sharing: none), which policy "
         "'kai' does not support"},
        {"cluster:\n  sharing: mig\n  mig: { layout: 7g.80gb }\n  pools:\n" P(", sharing: none") Q
         "policy: { name: tidal, relayout: { day: '1g.10gb*7', night: 7g.80gb } }\n",
         "bad.yaml:9:34: 'relayout': policy 'tidal' re-lays out every card with one day and one "
         "night layout; pool 'p' has MIG settings of its own (sharing: none)"},
        {"cluster:\n  sharing: mig\n  mig: { layout: 7g.80gb }\n  pools:\n" P(", sharing: none") Q
         "policy: { name: mig-static, layouts: [ { nodes: 0, layout: '1g.10gb*7' } ] }\n",
         "'nodes': nodes 0-0 include pool 'p', which takes whole cards"},
    };
#undef P
#undef Q
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml), "name: x\nduration: 1h\n%s", cases[i].yaml);
        simtest_expect_rejected(yaml, cases[i].want, i);
    }
}

Test(pool_sharing, pools_of_different_node_sizes)
{
    static const char *const cluster =
        "{ pools: ["
        " { name: big, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 8 },"
        " { name: small, gpu: h100-sxm5-80gb, nodes: 2, gpus_per_node: 4 } ] }";
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, cluster, "", NULL, "{ name: dedicated }");
    /* Node 0: cards 0-7 (A100); node 1: 8-11, node 2: 12-15 (H100). */
    cr_assert_eq(s.cl.ngpus, 16u);
    cr_assert_eq(s.cl.nodes, 3u);
    cr_expect_eq(scenario_gpus(&sc), 16u);
    for (uint32_t g = 0; g < 16; g++)
        cr_expect_eq(s.cl.cards[g].node, g < 8 ? 0u : g < 12 ? 1u : 2u, "card %u", g);
    cr_expect_eq(cluster_node_cards(&s.cl, 0), 8u);
    cr_expect_eq(cluster_node_cards(&s.cl, 2), 4u);
    cr_expect_eq(cluster_node_first(&s.cl, 2), 12u);
    cr_expect_eq(s.cl.pools[1].first_gpu, 8u);
    cr_expect_eq(s.cl.pools[1].ngpus, 8u);

    /* A: 8 GPUs, 7200 s; B, C: 4 GPUs, 3600 s each; D: 8 GPUs, 3600 s (A100 work). */
    uint32_t a = polsubmit_job(&s, 7200, 8, NULL), b = polsubmit_job(&s, 3600, 4, NULL),
             c = polsubmit_job(&s, 3600, 4, NULL), d = polsubmit_job(&s, 3600, 8, NULL);
    /* A fits no 4-GPU node: the 8-GPU node. B and C: best fit, a 4-GPU node each. D waits. */
    for (uint32_t i = 0; i < 8; i++)
        cr_expect_eq(s.cl.cards[s.tr.jobs[a].gpus[i]].node, 0u);
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_eq(s.cl.cards[s.tr.jobs[b].gpus[i]].node, 1u);
        cr_expect_eq(s.cl.cards[s.tr.jobs[c].gpus[i]].node, 2u);
    }
    cr_expect_eq(s.tr.jobs[d].state, JOB_QUEUED);
    engine_run(&s.eng, 6 * 3600 * SIM_SEC);
    /* B and C end at 3600 / 1.73 = 2080.925 s on the H100s; then D, larger than a 4-GPU node
     * with the 8-GPU node still A's (to 7200 s), takes both whole 4-GPU nodes: cards 8-15,
     * ending at 2 × 2080.925 = 4161.850 s. */
    cr_expect(fabs(polsubmit_end_s(&s, b) - 3600 / 1.73) < 1e-5, "B %f", polsubmit_end_s(&s, b));
    cr_expect(fabs(polsubmit_end_s(&s, d) - 7200 / 1.73) < 1e-5, "D %f", polsubmit_end_s(&s, d));
    cr_expect(fabs(polsubmit_end_s(&s, a) - 7200) < 1e-5, "A %f", polsubmit_end_s(&s, a));
    for (uint32_t i = 0; i < 8; i++)
        cr_expect_eq(s.tr.jobs[d].gpus[i], 8 + i, "D on the 4-GPU nodes, card %u",
                     s.tr.jobs[d].gpus[i]);
    simtest_free(&sc, &s);
}

/*
 * Every policy on a pool of one 8-GPU node beside a pool of two 4-GPU nodes, 6 h: it runs,
 * serves and finishes jobs, and under the whole-card policies every gang sits on one
 * node, or (larger than a node) on whole nodes of one pool.
 */
Test(pool_sharing, every_policy_on_pools_of_different_node_sizes)
{
    static const struct {
        const char *name, *sharing, *policy;
        bool aligned; /* gangs node-aligned (whole-card placement) */
    } cases[] = {
        {"dedicated", "", "{ name: dedicated, inference_gpus: 2 }", true},
        {"timeslice", "  sharing: timeslice\n  timeSlicing: { replicas: 2 }\n",
         "{ name: timeslice, inference_gpus: 2 }", false},
        {"mps", "  sharing: mps\n  mps: { replicas: 2 }\n", "{ name: mps, inference_gpus: 2 }",
         false},
        {"mig-static", "  sharing: mig\n  mig: { layout: 7g.80gb }\n",
         "{ name: mig-static, inference_gpus: 2, layouts: [{ nodes: \"1-2\", layout: "
         "\"4g.40gb+3g.40gb\" }] }",
         false},
        {"kueue", "", "{ name: kueue, inference_gpus: 4 }", true},
        {"tidal", "", "{ name: tidal, inference_gpus: 2, day_gpus: 4, day: \"09:00-21:00\" }",
         true},
        {"kai", "  sharing: timeslice\n  timeSlicing: { replicas: 2 }\n",
         "{ name: kai, inference_gpus: 4 }", false},
        {"adaptive", "", "{ name: adaptive, inference_gpus: 2 }", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[2048];
        snprintf(yaml, sizeof(yaml),
                 "name: sizes-%s\nduration: 6h\nsample_interval: 5m\n"
                 "cluster:\n%s  pools:\n"
                 "    - { name: eight, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 8 }\n"
                 "    - { name: four, gpu: h100-sxm5-80gb, nodes: 2, gpus_per_node: 4 }\n"
                 "services:\n  - name: q\n    latency: { a_ms: 2, b_ms: 0.5 }\n"
                 "    slo: { p99_ms: 200 }\n    replicas: { count: 2, min: 1, max: 6 }\n"
                 "    arrivals: { synthetic: { peak_rps: 300, trough_ratio: 0.3, peak_hour: 3 } }\n"
                 "training:\n  backlog: 12\n  memory_gb_per_gpu: 30\n"
                 "  jobs: { synthetic: { per_hour: 2, duration: { lognormal: { median: 40m, "
                 "sigma: 0.5 } }, gpus: { 1: 0.4, 4: 0.3, 8: 0.3 } } }\n"
                 "policy: %s\n",
                 cases[i].name, cases[i].sharing, cases[i].policy);
        struct scenario sc;
        struct sim s;
        simtest_build(&sc, &s, yaml, 2);
        cr_assert_eq(s.cl.ngpus, 16u, "%s", cases[i].name);
        uint32_t bad = 0, samples = 0;
        for (sim_time t = 5 * SIM_MIN; t <= 6 * SIM_HOUR; t += 5 * SIM_MIN) {
            cr_assert_eq(engine_run(&s.eng, t), 0, "%s: %s", cases[i].name, s.err);
            for (uint32_t j = 0; cases[i].aligned && j < s.tr.njobs; j++) {
                const struct job *jb = &s.tr.jobs[j];
                if (jb->state != JOB_RUNNING)
                    continue;
                samples++;
                uint32_t on[3] = {0}, pool = cluster_pool_of_card(&s.cl, jb->gpus[0]), nodes = 0;
                for (uint32_t k = 0; k < jb->spec.gpus; k++) {
                    on[s.cl.cards[jb->gpus[k]].node]++;
                    bad += cluster_pool_of_card(&s.cl, jb->gpus[k]) != pool;
                }
                uint32_t part = 0; /* nodes the gang holds only in part */
                for (uint32_t n = 0; n < 3; n++) {
                    nodes += on[n] > 0;
                    part += on[n] > 0 && on[n] < cluster_node_cards(&s.cl, n);
                }
                bad += nodes > 1 && part > 1;
            }
        }
        cr_expect_eq(bad, 0u, "%s: %u gangs off one node / one pool's whole nodes", cases[i].name,
                     bad);
        cr_expect(!cases[i].aligned || samples > 0, "%s: no running job seen", cases[i].name);
        cr_expect_gt(s.tr.done, 0u, "%s: no training job finished", cases[i].name);
        cr_expect_gt(s.svcs[0].tot.served, 0u, "%s: nothing served", cases[i].name);
        simtest_free(&sc, &s);
    }
}
