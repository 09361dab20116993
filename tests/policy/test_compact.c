/*
 * test_compact.c — node-compact placement of inference replicas and the
 * fragmentation metric (free cards no queued gang can use), on a case
 * counted by hand.
 *
 * 2 nodes × 4 cards, `dedicated` with one replica (card 0, node 0). At t = 0:
 *   J0: 4 GPUs, 10 h   only node 1 has 4 free cards: cards 4-7
 *   J1: 4 GPUs, 10 h   queued (node 0 has 3 free cards, it needs 4 on one node)
 *   J2: 1 GPU, 1.5 h   BestEffortFIFO: passes J1, best fit on node 0: card 1
 * Fragmented (sampled at each interval's end, 1 h intervals): at 1 h cards 2-3
 * (2: J1 needs 4 on a node), at 2 h and 3 h cards 1-3 (3, J2 ended at 1.5 h).
 * Over the 3 h: (2 + 3 + 3) / 3 = 8/3 GPUs on average, 8/3 / 8 = 1/3 of the
 * GPU-time. With nothing queued the figure is 0.
 */
#include <hdf5.h>
#include <stdio.h>
#include <unistd.h>

#include "analysis/h5read.h"
#include "sim/output.h"
#include "sim/policy/common.h"
#include "tests/polsubmit.h"

static const char yaml[] = "name: frag\n"
                           "duration: 3h\n"
                           "sample_interval: 1h\n"
                           "cluster: { nodes: 2, gpus_per_node: 4 }\n"
                           "services:\n"
                           "  - name: q\n"
                           "    latency: { a_ms: 1, b_ms: 0 }\n"
                           "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"
                           "training:\n"
                           "  jobs: { synthetic: { per_hour: 0 } }\n"
                           "  checkpoint: { interval: none }\n"
                           "policy: { name: dedicated, inference_gpus: 1 }\n";

Test(compact, fragmented_cards_by_hand_per_interval_and_overall)
{
    char dir[] = "/tmp/tidesim-frag-XXXXXX", path[64], err[512];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/f.h5", dir);
    struct scenario sc;
    struct conf_err cerr;
    cr_assert_eq(scenario_load_string(&sc, "frag.yaml", yaml, &cerr), 0, "%s", cerr.msg);
    struct sim_output *o;
    cr_assert_eq(sim_output_open(&o, path, &sc, err, sizeof(err)), 0, "%s", err);
    struct sim_sink sink;
    sim_output_sink(o, &sink);
    struct sim s;
    cr_assert_eq(sim_init(&s, &sc, 1, &sink), 0, "%s", s.err);
    cr_expect_eq(sim_output_fragmented_gpus(&s), 0, "nothing queued: no fragmentation");
    /* Node-compact placement: a new replica would go to node 0, which holds inference. */
    cr_expect_eq(pol_pick_compact(&s, NULL, 0), 1);
    uint32_t j0 = polsubmit_job(&s, 36000, 4, NULL);
    uint32_t j1 = polsubmit_job(&s, 36000, 4, NULL);
    uint32_t j2 = polsubmit_job(&s, 5400, 1, NULL);
    cr_assert_eq(s.tr.jobs[j0].state, JOB_RUNNING);
    cr_assert_eq(s.tr.jobs[j0].gpus[0], 4);
    cr_assert_eq(s.tr.jobs[j1].state, JOB_QUEUED);
    cr_assert_eq(s.tr.jobs[j2].state, JOB_RUNNING);
    cr_assert_eq(s.tr.jobs[j2].gpus[0], 1);
    cr_expect_eq(sim_output_fragmented_gpus(&s), 2);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_expect_eq(sim_output_fragmented_gpus(&s), 3);
    cr_assert_eq(sim_output_finish(o, &s, true, NULL, err, sizeof(err)), 0, "%s", err);
    sim_release(&s);
    scenario_release(&sc);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t sum = H5Gopen2(f, "summary", H5P_DEFAULT);
    double mean = -1, share = -1;
    char *unit = NULL;
    cr_assert_eq(h5_read_attr_double(sum, "gpus_fragmented_mean", &mean), 0);
    cr_assert_eq(h5_read_attr_double(sum, "share_fragmented", &share), 0);
    cr_assert_eq(h5_read_attr_str(sum, "gpus_fragmented_mean.unit", &unit), 0);
    cr_expect_str_eq(unit, "GPUs");
    free(unit);
    cr_expect_float_eq(mean, 8.0 / 3.0, 1e-9);
    cr_expect_float_eq(share, 1.0 / 3.0, 1e-9);
    H5Gclose(sum);
    hid_t ds = H5Dopen2(f, "timeseries/gpus_fragmented", H5P_DEFAULT);
    cr_assert_geq(ds, 0);
    double v[3] = {-1, -1, -1};
    hid_t sp = H5Dget_space(ds);
    cr_expect_eq(H5Sget_simple_extent_npoints(sp), 3);
    H5Sclose(sp);
    cr_assert_geq(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    cr_expect_float_eq(v[0], 2, 1e-9);
    cr_expect_float_eq(v[1], 3, 1e-9);
    cr_expect_float_eq(v[2], 3, 1e-9);
    H5Dclose(ds);
    H5Fclose(f);
    unlink(path);
    rmdir(dir);
}
