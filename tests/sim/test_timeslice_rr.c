/*
 * test_timeslice_rr.c — the whole simulator on one time-sliced card against
 * the slice-by-slice round-robin reference of tests/tsref.h (written apart
 * from the simulator): one inference replica (batches of one request,
 * deterministic 1 ms or 20 ms) beside one or two training jobs; mean request
 * latency and the training jobs' progress rate within 5 %.
 */
#include <math.h>
#include <stdio.h>

#include "tests/simtest.h"
#include "tests/tsref.h"

static void run_case(unsigned trainers, double a_ms, double rps, const char *duration,
                     double horizon_s)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: ts-rr\n"
             "duration: %s\n"
             "sample_interval: 10m\n"
             "cluster: { nodes: 1, gpus_per_node: 1, sharing: timeslice,\n"
             "           timeSlicing: { replicas: %u } }\n"
             "services:\n"
             "  - name: q\n"
             "    latency: { a_ms: %g, b_ms: 0, dist: deterministic }\n"
             "    batching: { max_batch: 1, max_wait: 0s }\n"
             "    memory_gb: 8\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: %g } }\n"
             "training:\n"
             "  backlog: %u\n"
             "  memory_gb_per_gpu: 20\n"
             "  checkpoint: { interval: none }\n"
             "  jobs:\n"
             "    synthetic:\n"
             "      per_hour: 0\n"
             "      duration: { lognormal: { median: 1000d, sigma: 0.01 } }\n"
             "      max_duration: 2000d\n"
             "      gpus: { 1: 1 }\n"
             "policy: { name: timeslice, inference_gpus: 1, max_training_per_card: 2 }\n",
             duration, trainers + 1, a_ms, rps, trainers);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    simtest_expect_conserved(&s);
    cr_assert_eq(s.tr.running, trainers, "expected %u jobs co-located", trainers);
    const struct service *sv = &s.svcs[0];
    cr_assert_gt(sv->tot.served, 2000u);
    double lat = (double)sv->h_total->sum / 1e6 / (double)sv->h_total->total;
    cluster_account_all(&s.cl, s.end);
    double train = s.cl.cards[0].acc[USE_USEFUL] / (double)s.end;

    struct share_knobs kn = sc.knobs;
    struct tsref r = {.t_inf = kn.ts_slice_s,
                      .t_train = kn.ts_slice_s,
                      .sw = share_ts_switch_s(&kn),
                      .k = trainers,
                      .lambda = rps,
                      .w = a_ms * 1e-3,
                      .horizon = horizon_s,
                      .seed = 777 + trainers};
    cr_assert_eq(tsref_run(&r), 0);
    double ref_lat = r.sojourn_sum / (double)r.batches, ref_train = r.train_s / r.elapsed;
    cr_expect(fabs(lat - ref_lat) / ref_lat < 0.05,
              "%u trainers, %g ms: simulator latency %.4f ms, reference %.4f ms", trainers, a_ms,
              lat * 1e3, ref_lat * 1e3);
    cr_expect(fabs(train - ref_train) / ref_train < 0.05,
              "%u trainers, %g ms: simulator training rate %.4f, reference %.4f", trainers, a_ms,
              train, ref_train);
    tsref_free(&r);
    simtest_free(&sc, &s);
}

Test(timeslice_rr, two_tenants_1ms)
{
    run_case(1, 1, 150, "30m", 1800);
}

Test(timeslice_rr, two_tenants_20ms)
{
    run_case(1, 20, 7, "4h", 14400);
}

Test(timeslice_rr, three_tenants_1ms)
{
    run_case(2, 1, 70, "30m", 1800);
}

Test(timeslice_rr, three_tenants_20ms)
{
    run_case(2, 20, 3, "6h", 21600);
}
