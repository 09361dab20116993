/*
 * test_headroom.c — serving headroom: capacity at the SLO over the load.
 *
 * By hand: 4 whole-card replicas (dedicated), Poisson arrivals at 200 req/s.
 *  - a = 10 ms, b = 0, max_batch 1: each replica serves 100 req/s, so the
 *    capacity column is 400 req/s in every interval and the headroom ≈ 2.
 *  - a = 10 ms, b = 10 ms, max_batch 8, SLO p99 50 ms: a full batch takes
 *    90 ms > 50 ms, so the largest batch within the SLO is 4 (10 + 40 ms):
 *    4 / 50 ms = 80 req/s per replica, 320 req/s in all (the full-batch
 *    figure, 4 × 8 / 90 ms = 356 req/s, would overstate it): headroom ≈ 1.6.
 * headroom_min and headroom_peak are checked against the file's own columns.
 */
#include <hdf5.h>
#include <math.h>

#include "tests/analysistest.h"
#include "tests/h5test.h"

static void run_case(const char *latency, double cap_expected, double head_expected)
{
    char dir[64], yaml[128], out[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(yaml, sizeof(yaml), "%s/h.yaml", dir);
    snprintf(out, sizeof(out), "%s/h.h5", dir);
    FILE *f = fopen(yaml, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "name: headroom\n"
            "duration: 20m\n"
            "sample_interval: 60s\n"
            "cluster: { nodes: 1, gpus_per_node: 4 }\n"
            "services:\n"
            "  - name: q\n"
            "    %s\n"
            "    slo: { p99_ms: 50 }\n"
            "    replicas: 4\n"
            "    arrivals: { synthetic: { shape: constant, rate_rps: 200 } }\n"
            "policy: { name: dedicated, inference_gpus: 4 }\n",
            latency);
    fclose(f);
    atest_sim(yaml, out, NULL);

    hid_t file = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(file, 0);
    hid_t g = H5Gopen(file, "/services/q", H5P_DEFAULT);
    hid_t cap = H5Dopen(file, "/services/q/timeseries/capacity_rps", H5P_DEFAULT);
    hid_t rate = H5Dopen(file, "/services/q/timeseries/rate_rps", H5P_DEFAULT);
    cr_assert(cap >= 0 && rate >= 0);
    double c[20], r[20];
    cr_assert_geq(H5Dread(cap, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c), 0);
    cr_assert_geq(H5Dread(rate, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, r), 0);
    double lo = INFINITY, peak_rate = 0, at_peak = NAN;
    for (int i = 0; i < 20; i++) {
        cr_expect(fabs(c[i] - cap_expected) < 1e-6, "interval %d: capacity %.3f", i, c[i]);
        double h = c[i] / r[i];
        lo = h < lo ? h : lo;
        if (r[i] > peak_rate) {
            peak_rate = r[i];
            at_peak = h;
        }
    }
    double hmin = h5test_f64(g, "headroom_min"), hpeak = h5test_f64(g, "headroom_peak");
    cr_expect_float_eq(hmin, lo, 1e-12);
    cr_expect_float_eq(hpeak, at_peak, 1e-12);
    cr_expect(fabs(hmin - head_expected) / head_expected < 0.05, "headroom %.3f, by hand %.3f",
              hmin, head_expected);
    hid_t s = H5Gopen(file, "/summary", H5P_DEFAULT);
    cr_expect_float_eq(h5test_f64(s, "headroom_min_worst_service"), hmin, 1e-12);
    H5Gclose(s);
    H5Dclose(cap);
    H5Dclose(rate);
    H5Gclose(g);
    H5Fclose(file);
    atest_rmdir(dir);
}

Test(headroom, whole_batches_within_the_slo)
{
    run_case("latency: { a_ms: 10, b_ms: 0, dist: deterministic }\n"
             "    batching: { max_batch: 1, max_wait: 0s }",
             400, 2.0);
}

Test(headroom, the_slo_caps_the_batch)
{
    run_case("latency: { a_ms: 10, b_ms: 10, dist: deterministic }\n"
             "    batching: { max_batch: 8, max_wait: 5ms }",
             320, 1.6);
}
