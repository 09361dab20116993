/*
 * test_pools.c — node pools of a mixed fleet (cluster.pools) and placement
 * constraints (require / prefer), each against a hand computation:
 *   - a job that requires H100 never touches an A100 card over a whole run;
 *   - a service preferring H100 spills to A100 when the H100 pool is full, gives the
 *     A100 replica back first, and returns to H100 when a card there frees;
 *   - one job's completion time on H100 is its A100 work / 1.73 (models/gpu.c), or /
 *     the pool's own speed override;
 *   - cost of a two-board fleet (tests/data/scenarios/cost_pools.yaml) by hand;
 *   - the single-pool form and the same cluster written as cluster.pools give the same
 *     datasets (h5diff, /meta and /pools excluded);
 *   - a job no allowed pool can hold is rejected at submission and counted.
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/gpu.h"
#include "sim/policy/common.h"
#include "tests/analysistest.h"
#include "tests/h5test.h"
#include "tests/simtest.h"

#define TWO_POOLS(A100_NODES, H100_NODES, PER)                                                     \
    "cluster:\n"                                                                                   \
    "  pools:\n"                                                                                   \
    "    - { name: a100, gpu: a100-sxm4-80gb, nodes: " #A100_NODES ", gpus_per_node: " #PER " }\n" \
    "    - { name: h100, gpu: h100-sxm5-80gb, nodes: " #H100_NODES ", gpus_per_node: " #PER        \
    ", labels: { tier: premium } }\n"

Test(pools, job_requiring_h100_never_lands_on_a100)
{
    static const char *yaml = "name: req\nduration: 12h\nsample_interval: 10m\n" TWO_POOLS(
        2, 1, 4) "training:\n"
                 "  backlog: 30\n"
                 "  require: { gpu: h100-sxm5-80gb }\n"
                 "  jobs:\n"
                 "    synthetic: { per_hour: 4, duration: { lognormal: { median: 1h, sigma: 0.5 "
                 "} }, gpus: { 1: 0.5, 2: 0.3, 4: 0.2 } }\n"
                 "policy: { name: dedicated }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    cr_assert_eq(s.cl.npools, 2);
    /* Cards 0..7 are the A100 pool (pools in file order, node-major), 8..11 the H100s. */
    for (uint32_t g = 0; g < s.cl.ngpus; g++)
        cr_assert_eq(cluster_pool_of_card(&s.cl, g), g < 8 ? 0u : 1u);
    /* The pool API of sim/cluster.h: nodes 0-1 A100 without labels, node 2 H100 premium. */
    for (uint32_t n = 0; n < 3; n++) {
        cr_expect_eq(cluster_pool_of_node(&s.cl, n), n < 2 ? 0u : 1u);
        cr_expect_str_eq(cluster_board_of_node(&s.cl, n)->name,
                         n < 2 ? "a100-sxm4-80gb" : "h100-sxm5-80gb");
        const char *tier = cluster_node_label(&s.cl, n, "tier");
        if (n < 2)
            cr_expect_null(tier);
        else
            cr_expect_str_eq(tier, "premium");
    }
    cr_expect_null(cluster_node_label(&s.cl, 2, "zone"));
    cr_expect_null(cluster_node_label(&s.cl, 3, "tier"), "no node 3");
    double h100_alloc = 0;
    for (uint32_t g = 0; g < s.cl.ngpus; g++) {
        if (g < 8)
            cr_expect_eq(s.cl.cards[g].alloc_us, 0.0, "A100 card %u held a tenant for %.0f us", g,
                         s.cl.cards[g].alloc_us);
        else
            h100_alloc += s.cl.cards[g].alloc_us;
    }
    cr_expect_gt(h100_alloc, 0.9 * 4 * 12 * 3600e6, "the H100 pool was busy");
    cr_expect_gt(s.tr.done, 10u, "jobs completed");
    simtest_expect_conserved(&s);
    simtest_free(&sc, &s);
}

Test(pools, service_preferring_h100_spills_to_a100_and_comes_back)
{
    /* 2 H100 cards (node 1: cards 2, 3) and 2 A100 (node 0: cards 0, 1). */
    static const char *yaml =
        "name: pref\nduration: 1h\n" TWO_POOLS(1, 1, 2) "services:\n"
                                                        "  - name: chat\n"
                                                        "    latency: { a_ms: 5, b_ms: 1 }\n"
                                                        "    slo: { p99_ms: 100 }\n"
                                                        "    replicas: 1\n"
                                                        "    prefer: { gpu: h100-sxm5-80gb }\n"
                                                        "    arrivals: { synthetic: { shape: "
                                                        "constant, rate_rps: 10 } }\n"
                                                        "policy: { name: dedicated, "
                                                        "inference_gpus: 4 }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    const struct cluster *cl = &s.cl;
    uint32_t at[8], n = 0, g = 0;
    /* The initial replica goes to the preferred pool. */
    for (uint32_t k = 0; k < cl->ngpus; k++)
        if (cl->cards[k].nten)
            at[n++] = k;
    cr_assert_eq(n, 1);
    cr_expect_eq(cluster_pool_of_card(cl, at[0]), 1u, "initial replica on card %u", at[0]);
    /* Scale up: the second H100 card, then (H100 full) an A100 card. */
    g = pol_pick_compact(&s, NULL, 0);
    cr_assert_neq(g, UINT32_MAX);
    cr_expect_eq(cluster_pool_of_card(cl, g), 1u);
    cr_assert_eq(sim_start_replica(&s, 0, g, 0), 0);
    uint32_t h2 = g;
    g = pol_pick_compact(&s, NULL, 0);
    cr_assert_neq(g, UINT32_MAX);
    cr_expect_eq(cluster_pool_of_card(cl, g), 0u, "spill-over to A100: card %u", g);
    cr_assert_eq(sim_start_replica(&s, 0, g, 0), 0);
    uint32_t spill = g;
    /* An H100 card frees (its replica leaves, as a card a training job gives back). */
    cr_assert_eq(sim_stop_replicas_on(&s, h2, 1), 1u);
    /* The next scale-up goes back to H100 ... */
    g = pol_pick_compact(&s, NULL, 0);
    cr_expect_eq(g, h2, "back to the freed H100 card %u, got %u", h2, g);
    cr_assert_eq(sim_start_replica(&s, 0, g, 0), 0);
    /* ... and the next scale-down gives back the A100 replica first. */
    uint32_t gone = UINT32_MAX;
    cr_assert_eq(sim_stop_replica(&s, 0, &gone), 0);
    cr_expect_eq(gone, spill, "scale-down removed card %u, expected the A100 card %u", gone, spill);
    for (uint32_t k = 0; k < cl->ngpus; k++)
        if (cluster_pool_of_card(cl, k) == 0)
            cr_expect_eq(cl->cards[k].nten, 0u, "A100 card %u still serves", k);
    simtest_free(&sc, &s);
}

/* One 1-GPU job of `work` s alone on a one-card pool of `pool`; its end time, µs. */
static sim_time one_job_end(const char *pool, double work_s)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "name: speed\nduration: 3h\ncluster:\n  pools:\n    - %s\n"
             "training:\n  checkpoint: { interval: none }\n"
             "  jobs: { synthetic: { per_hour: 0 } }\npolicy: { name: dedicated }\n",
             pool);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    struct job_spec js = {
        .id = 1, .submit = 0, .work = sim_time_from_sec(work_s), .gpus = 1, .gpu_fraction = 1.0};
    cr_assert_geq(trainer_submit(&s.tr, &js), 0);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_assert_eq(s.tr.done, 1u);
    sim_time end = s.tr.jobs[0].end;
    simtest_free(&sc, &s);
    return end;
}

Test(pools, same_job_runs_faster_on_h100_by_the_documented_factor)
{
    const struct gpu_spec *h = gpu_spec_find("h100-sxm5-80gb");
    cr_assert_float_eq(h->train_speed, 1.73, 1e-12, "docs/models.md: 1.73");
    cr_assert_float_eq(gpu_spec_find("a100-sxm4-80gb")->train_speed, 1.0, 0);
    sim_time a = one_job_end("{ name: a, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1 }", 3600);
    sim_time b = one_job_end("{ name: h, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 1 }", 3600);
    sim_time c = one_job_end("{ name: h, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 1, "
                             "speed: { training: 2.5 } }",
                             3600);
    /* By hand: 3,600 s of A100 work; 3.6e9 µs / 1.73 = 2,080,924,855.5 µs, rounded up to the
     * next µs by the trainer; the override 2.5: 1.44e9 µs. */
    cr_expect_eq(a, (sim_time)3600000000);
    cr_expect_eq(b, (sim_time)2080924856, "H100 end %lld us", (long long)b);
    cr_expect_eq(c, (sim_time)1440000000);
}

Test(pools, two_board_cost_by_hand)
{
    char dir[64], out[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(out, sizeof(out), "%s/c.h5", dir);
    atest_sim("tests/data/scenarios/cost_pools.yaml", out, NULL);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t s = H5Gopen(f, "/summary", H5P_DEFAULT);
    /* GPU-hours: 8 x 2 h at $2 + 8 x 2 h at $5 = 32 + 80 = $112. Energy: every card busy, A100
     * 400 W, H100 700 W: (8 x 400 + 8 x 700) W x 2 h = 17.6 kWh at $0.10 = $1.76. */
    cr_expect_float_eq(h5test_f64(s, "cost_gpu"), 112.0, 1e-9);
    cr_expect_float_eq(h5test_f64(s, "energy_kwh"), 17.6, 1e-9);
    cr_expect_float_eq(h5test_f64(s, "cost_energy"), 1.76, 1e-9);
    cr_expect_float_eq(h5test_f64(s, "cost_total"), 113.76, 1e-9);
    /* Training work done in reference (A100) GPU-hours: 8 x 2 h on A100 + 8 x 2 h x 1.73 on H100
     * = 16 + 27.68 = 43.68; no inference, so the whole cost is training's: 113.76 / 43.68. */
    cr_expect_float_eq(h5test_f64(s, "training_gpu_hours"), 43.68, 1e-6);
    cr_expect_float_eq(h5test_f64(s, "cost_per_training_gpu_hour"), 113.76 / 43.68, 1e-9);
    H5Gclose(s);
    hid_t a = H5Gopen(f, "/pools/a100", H5P_DEFAULT), h = H5Gopen(f, "/pools/h100", H5P_DEFAULT);
    cr_assert(a >= 0 && h >= 0);
    cr_expect_float_eq(h5test_f64(a, "cost_gpu"), 32.0, 1e-9);
    cr_expect_float_eq(h5test_f64(h, "cost_gpu"), 80.0, 1e-9);
    cr_expect_float_eq(h5test_f64(a, "energy_kwh"), 6.4, 1e-9);
    cr_expect_float_eq(h5test_f64(h, "energy_kwh"), 11.2, 1e-9);
    cr_expect_float_eq(h5test_f64(a, "training_gpu_hours"), 16.0, 1e-9);
    cr_expect_float_eq(h5test_f64(h, "training_gpu_hours"), 27.68, 1e-9);
    cr_expect_float_eq(h5test_f64(h, "util_busy"), 1.0, 1e-12);
    H5Gclose(a);
    H5Gclose(h);
    H5Fclose(f);
    atest_rmdir(dir);
}

Test(pools, single_pool_forms_give_identical_datasets)
{
    /* scenarios/default.yaml cut to 6 h, run as written and with its cluster rewritten as
     * one pool: every dataset but the provenance (/meta) and the new /pools must match. */
    char dir[64], a[128], b[128], yaml[160], cmd[1024], *txt = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(a, sizeof(a), "%s/single.h5", dir);
    snprintf(b, sizeof(b), "%s/pools.h5", dir);
    snprintf(yaml, sizeof(yaml), "%s/default-pools.yaml", dir);
    snprintf(cmd, sizeof(cmd),
             "sed -e 's/^  gpu: a100-sxm4-80gb$/  pools:\\n    - name: main\\n      gpu: "
             "a100-sxm4-80gb/' -e 's/^  nodes: 4$/      nodes: 4/' -e 's/^  gpus_per_node: "
             "8$/      gpus_per_node: 8/' scenarios/default.yaml > %s && grep -q '^  pools:' %s",
             yaml, yaml);
    cr_assert_eq(atest_run(cmd, &txt), 0, "%s", txt);
    free(txt);
    atest_sim("scenarios/default.yaml", a, "--set duration=6h");
    /* The copy lives elsewhere: its synthetic sources need no paths. */
    atest_sim(yaml, b, "--set duration=6h");
    snprintf(cmd, sizeof(cmd), "h5diff -q --exclude-path /meta --exclude-path /pools %s %s", a, b);
    cr_expect_eq(atest_run(cmd, &txt), 0, "datasets differ: %s", txt);
    free(txt);
    /* and the pools form did write /pools/main */
    hid_t f = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    cr_expect_gt(H5Lexists(f, "/pools/main", H5P_DEFAULT), 0);
    H5Fclose(f);
    atest_rmdir(dir);
}

Test(pools, job_that_fits_nowhere_is_reported_at_submission)
{
    /* Jobs may only use the 4 premium cards: an 8-GPU job can never run. */
    static const char *yaml = "name: nofit\nduration: 2h\n" TWO_POOLS(
        2, 1, 4) "training:\n"
                 "  checkpoint: { interval: none }\n"
                 "  require: { labels: { tier: premium } }\n"
                 "  jobs: { synthetic: { per_hour: 0 } }\n"
                 "policy: { name: dedicated }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    struct job_spec big = {.id = 1, .work = 600 * SIM_SEC, .gpus = 8, .gpu_fraction = 1.0};
    struct job_spec fits = {.id = 2, .work = 600 * SIM_SEC, .gpus = 4, .gpu_fraction = 1.0};
    cr_assert_geq(trainer_submit(&s.tr, &big), 0);
    cr_assert_geq(trainer_submit(&s.tr, &fits), 0);
    /* At submission (t = 0), before any event ran. */
    cr_expect_eq(s.tr.jobs[0].state, JOB_REJECTED);
    cr_expect_eq(s.unplaceable, 1u);
    cr_expect_eq(s.tr.jobs[1].state, JOB_RUNNING);
    cr_expect_geq(s.tr.jobs[1].gpus[0], 8u, "on the premium (H100) cards");
    cr_assert_eq(sim_run(&s, NULL), 0);
    cr_expect_eq(s.tr.done, 1u);
    cr_expect_eq(s.tr.rejected, 1u);
    simtest_free(&sc, &s);
}

Test(pools, bad_pool_input_names_the_place)
{
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {"name: x\nduration: 1h\ncluster:\n  gpu: a100-sxm4-80gb\n  pools: [{ name: a, gpu: "
         "a100-sxm4-80gb, nodes: 1 }]\n",
         "test.yaml:4:8: 'gpu': give either cluster.pools"},
        {"name: x\nduration: 1h\ncluster:\n  pools:\n    - { name: a, gpu: b200, nodes: 1 }\n",
         "unknown GPU 'b200'"},
        {"name: x\nduration: 1h\ncluster:\n  pools:\n    - { name: a, gpu: a100-sxm4-80gb, "
         "nodes: 1 }\n    - { name: a, gpu: h100-sxm5-80gb, nodes: 1 }\n",
         "pool 'a' is named twice"},
        {"name: x\nduration: 1h\ncluster:\n  pools:\n    - { name: a, gpu: a100-sxm4-80gb, "
         "nodes: 1, gpus_per_node: 17 }\n",
         "test.yaml:5:64: 'gpus_per_node': expected an integer in [1, 16]"},
        {"name: x\nduration: 1h\ncluster:\n  pools:\n    - { name: a, gpu: a100-sxm4-80gb, "
         "nodes: 1, sharing: vgpu }\n",
         "test.yaml:5:58: 'sharing': expected one of: none, exclusive, timeslice, mps, mig"},
        {"name: x\nduration: 1h\ncluster:\n  pools:\n    - { name: a, gpu: a100-sxm4-80gb, "
         "nodes: 1, faults: { restart: 1m } }\n",
         "test.yaml:5:57: 'faults': set for the whole cluster"},
        {"name: x\nduration: 1h\n" TWO_POOLS(1, 1, 8) "training:\n  require: { labels: { "
                                                      "tier: gold } }\n  jobs: { synthetic: "
                                                      "{ per_hour: 1 } }\n",
         "'require': no pool matches"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct scenario sc;
        struct conf_err err;
        int rc = scenario_load_string(&sc, "test.yaml", cases[i].yaml, &err);
        cr_expect_lt(rc, 0, "case %zu accepted", i);
        if (rc < 0)
            cr_expect(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
        else
            scenario_release(&sc);
    }
}

/* A mixed fleet reading an openb log's gpu_spec (tests/data/openb_gpu_types.csv). */
static const char *types_yaml(const char *map)
{
    static char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "name: types\nduration: 3h\n" TWO_POOLS(1, 1, 4) "training:\n"
                                                              "  checkpoint: { interval: none }\n"
                                                              "  jobs:\n"
                                                              "    trace:\n"
                                                              "      format: openb\n"
                                                              "      path: openb_gpu_types.csv\n"
                                                              "%s"
                                                              "policy: { name: dedicated }\n",
             map);
    return yaml;
}

Test(pools, trace_gpu_types_map_onto_pools)
{
    /* V100M16 pinned to H100 by the user's map; "H100" by the built-in table; "" and
     * "P100|T4" (boards not simulated) anywhere; "K80" (line 6) is unknown: the run stops
     * with the log's file:line. */
    struct scenario sc;
    struct sim s;
    struct conf_err err;
    const char *yaml = types_yaml("      gpu_types: { V100M16: h100-sxm5-80gb, K80: any }\n");
    cr_assert_eq(scenario_load_string(&sc, "tests/data/t.yaml", yaml, &err), 0, "%s", err.msg);
    cr_assert_eq(sim_init(&s, &sc, 1, NULL), 0, "%s", s.err);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_assert_eq(s.tr.njobs, 5u);
    for (uint32_t j = 0; j < s.tr.njobs; j++) {
        const struct job *jb = &s.tr.jobs[j];
        cr_expect_neq(jb->start, (sim_time)-1, "job %u never ran", j);
        bool on_h100 = cluster_pool_of_card(&s.cl, jb->gpus[0]) == 1;
        if (j == 1 || j == 2)
            cr_expect(on_h100, "job %u (%s) on card %u", j, jb->spec.gpu_type, jb->gpus[0]);
        if (j == 1 || j == 2)
            cr_expect_eq(jb->pools_allow, UINT64_C(2));
        else
            cr_expect_eq(jb->pools_allow, POOL_ALL, "job %u", j);
    }
    simtest_free(&sc, &s);

    yaml = types_yaml("");
    cr_assert_eq(scenario_load_string(&sc, "tests/data/t.yaml", yaml, &err), 0, "%s", err.msg);
    cr_assert_eq(sim_init(&s, &sc, 1, NULL), 0, "%s", s.err);
    cr_expect_lt(sim_run(&s, NULL), 0);
    cr_expect(strstr(s.err, "openb_gpu_types.csv:6: column 'gpu_spec': unknown GPU type 'K80'"),
              "%s", s.err);
    simtest_free(&sc, &s);
}

Test(pools, report_check_and_compare_per_pool)
{
    /* The two-board cost file, both pools 100 % busy: A100 pool $32 of GPU-hours + 6.4 kWh x
     * $0.10 = $32.64, H100 pool $80 + 11.2 kWh x $0.10 = $81.12. */
    char dir[64], out[128], cmd[512], *txt = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(out, sizeof(out), "%s/c.h5", dir);
    atest_sim("tests/data/scenarios/cost_pools.yaml", out, NULL);
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), out);
    cr_assert_eq(atest_run(cmd, &txt), 0, "%s", txt);
    cr_expect(strstr(txt, "16 GPUs in 2 pools: a100 8 x a100-sxm4-80gb, h100 8 x h100-sxm5-80gb"),
              "%s", txt);
    cr_expect(strstr(txt, "node pools"), "%s", txt);
    free(txt);
    /* check --pool: the H100 pool's cost, its training work 27.68 A100 GPU-h in 2 h. */
    snprintf(cmd, sizeof(cmd), "%s check %s --pool h100 --max cost_total=81.13 --min-util 0.99",
             atest_bin(), out);
    cr_expect_eq(atest_run(cmd, &txt), 0, "%s", txt);
    free(txt);
    snprintf(cmd, sizeof(cmd), "%s check %s --pool a100 --max cost_total=32.63", atest_bin(), out);
    cr_expect_eq(atest_run(cmd, &txt), 1, "A100 pool cost 32.64 > 32.63: %s", txt);
    free(txt);
    snprintf(cmd, sizeof(cmd), "%s check %s --pool h100 --min-training-gpu-h-per-day 332",
             atest_bin(), out);
    cr_expect_eq(atest_run(cmd, &txt), 0, "27.68 GPU-h in 2 h = 332.16 a day: %s", txt);
    free(txt);
    snprintf(cmd, sizeof(cmd), "%s check %s --pool b200 --min-util 0.5", atest_bin(), out);
    cr_expect_eq(atest_run(cmd, &txt), 2, "%s", txt);
    cr_expect(strstr(txt, "no pool 'b200'"), "%s", txt);
    free(txt);
    /* Replications merge the /pools groups (H5Ocopy: fixed-length strings, no crash). */
    char rep[160];
    snprintf(rep, sizeof(rep), "%s/rep.h5", dir);
    atest_sim("tests/data/scenarios/cost_pools.yaml", rep, "--replications 2");
    snprintf(cmd, sizeof(cmd), "%s check %s --pool a100 --max cost_total=32.65", atest_bin(), rep);
    cr_expect_eq(atest_run(cmd, &txt), 0, "%s", txt);
    free(txt);
    snprintf(cmd, sizeof(cmd), "%s compare %s %s --pool a100 --format json", atest_bin(), out, out);
    cr_expect_eq(atest_run(cmd, &txt), 0, "%s", txt);
    cr_expect(strstr(txt, "\"cost_total\""), "%s", txt);
    free(txt);
    atest_rmdir(dir);
}

/*
 * Every policy over a 6 h run, sampled every 5 minutes: two pools of the same board told
 * apart by labels (so MIG works too); training requires the premium pool (node 2), the
 * service the standard one (nodes 0-1). No tenant is ever on a pool it may not use, and
 * both still get work done.
 */
Test(pools, every_policy_keeps_require_over_a_run)
{
    static const struct {
        const char *name, *sharing, *policy;
    } cases[] = {
        {"dedicated", "", "{ name: dedicated, inference_gpus: 2 }"},
        {"timeslice", "  sharing: timeslice\n  timeSlicing: { replicas: 2 }\n",
         "{ name: timeslice, inference_gpus: 2 }"},
        {"mps", "  sharing: mps\n  mps: { replicas: 2 }\n", "{ name: mps, inference_gpus: 2 }"},
        {"mig-static", "  sharing: mig\n  mig: { layout: 7g.80gb }\n",
         "{ name: mig-static, inference_gpus: 2, layouts: [{ nodes: \"0-1\", layout: "
         "\"4g.40gb+3g.40gb\" }] }"},
        {"kueue", "", "{ name: kueue, inference_gpus: 4 }"},
        {"tidal", "", "{ name: tidal, inference_gpus: 2, day_gpus: 4, day: \"09:00-21:00\" }"},
        {"kai", "  sharing: timeslice\n  timeSlicing: { replicas: 2 }\n",
         "{ name: kai, inference_gpus: 4 }"},
        {"adaptive", "", "{ name: adaptive, inference_gpus: 2 }"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[2048];
        snprintf(yaml, sizeof(yaml),
                 "name: req-%s\nduration: 6h\nsample_interval: 5m\n"
                 "cluster:\n%s  pools:\n"
                 "    - { name: std, gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 4, labels: { "
                 "tier: std } }\n"
                 "    - { name: prem, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 4, labels: { "
                 "tier: premium } }\n"
                 "services:\n  - name: q\n    latency: { a_ms: 2, b_ms: 0.5 }\n"
                 "    slo: { p99_ms: 200 }\n    replicas: { count: 2, min: 1, max: 6 }\n"
                 "    require: { labels: { tier: std } }\n"
                 "    arrivals: { synthetic: { peak_rps: 300, trough_ratio: 0.3, peak_hour: 3 } }\n"
                 "training:\n  backlog: 12\n  memory_gb_per_gpu: 30\n"
                 "  require: { labels: { tier: premium } }\n"
                 "  jobs: { synthetic: { per_hour: 2, duration: { lognormal: { median: 40m, "
                 "sigma: 0.5 } }, gpus: { 1: 0.6, 2: 0.4 } } }\n"
                 "policy: %s\n",
                 cases[i].name, cases[i].sharing, cases[i].policy);
        struct scenario sc;
        struct sim s;
        simtest_build(&sc, &s, yaml, 2);
        uint32_t bad = 0;
        for (sim_time t = 5 * SIM_MIN; t <= 6 * SIM_HOUR; t += 5 * SIM_MIN) {
            cr_assert_eq(engine_run(&s.eng, t), 0, "%s: %s", cases[i].name, s.err);
            for (uint32_t id = 0; id < s.cl.ntenants; id++) {
                const struct tenant *tn = &s.cl.tenants[id];
                if (!tn->used)
                    continue;
                uint32_t pool = cluster_pool_of_card(&s.cl, tn->gpu);
                bad += tn->kind == TENANT_TRAIN ? pool != 1 : pool != 0;
            }
        }
        cr_expect_eq(bad, 0u, "%s: %u tenant-samples on a pool they may not use", cases[i].name,
                     bad);
        cr_expect_gt(s.tr.done, 0u, "%s: no training job finished", cases[i].name);
        cr_expect_gt(s.svcs[0].tot.served, 0u, "%s: nothing served", cases[i].name);
        simtest_free(&sc, &s);
    }
}
