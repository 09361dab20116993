/*
 * test_slo_share.c — the within-SLO share counts every request whose fate is
 * known (dropped and still-waiting requests are misses), the served-only
 * share is kept apart, and quantiles differ between seeds (interpolated, not
 * bucket midpoints). Numbers are read back from the results file and checked
 * against a hand count of its own /services counters.
 */
#include <hdf5.h>
#include <math.h>

#include "tests/analysistest.h"

static double attr_f64(hid_t obj, const char *name)
{
    double v = NAN;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    cr_assert_geq(a, 0, "attribute %s missing", name);
    cr_assert_geq(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
    H5Aclose(a);
    return v;
}

static int64_t attr_i64(hid_t obj, const char *name)
{
    int64_t v = -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    cr_assert_geq(a, 0, "attribute %s missing", name);
    cr_assert_geq(H5Aread(a, H5T_NATIVE_INT64, &v), 0);
    H5Aclose(a);
    return v;
}

Test(slo_share, overloaded_run_counts_drops_and_waiting_as_misses)
{
    char dir[64], out[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(out, sizeof(out), "%s/ov.h5", dir);
    atest_sim("tests/data/scenarios/overloaded.yaml", out, NULL);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t g = H5Gopen(f, "/services/chat", H5P_DEFAULT);
    hid_t s = H5Gopen(f, "/summary", H5P_DEFAULT);
    int64_t arrived = attr_i64(g, "arrived"), served = attr_i64(g, "served");
    int64_t dropped = attr_i64(g, "dropped"), failed = attr_i64(g, "failed");
    int64_t waiting = attr_i64(g, "waiting"), busy = attr_i64(g, "in_service");
    int64_t within = attr_i64(g, "within_slo");
    cr_assert_eq(arrived, served + dropped + failed + waiting + busy, "conservation");
    /* The scenario is built to drop and to end with a full queue. */
    cr_assert_gt(dropped, 1000);
    cr_assert_gt(waiting, 100);
    double hand = (double)within / (double)(served + dropped + failed + waiting);
    cr_expect_eq(attr_f64(g, "slo_share"), hand, "service share %.6f vs hand %.6f",
                 attr_f64(g, "slo_share"), hand);
    cr_expect_eq(attr_f64(g, "slo_share_served"), (double)within / (double)served);
    cr_expect_eq(attr_f64(s, "slo_share"), hand, "one service: summary = service");
    cr_expect_eq(attr_i64(s, "requests_within_slo"), within);
    cr_expect_eq(attr_i64(s, "requests_waiting"), waiting);
    /* Everything served made it (SLO 1 s, queue ~0.74 s), yet 4 % of arrivals did not. */
    cr_expect_eq(attr_f64(g, "slo_share_served"), 1.0);
    cr_expect_lt(attr_f64(g, "slo_share"), 0.97);
    H5Gclose(g);
    H5Gclose(s);
    H5Fclose(f);
    atest_rmdir(dir);
}

Test(slo_share, p99_differs_between_seeds)
{
    char dir[64], a[128], b[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(a, sizeof(a), "%s/a.h5", dir);
    snprintf(b, sizeof(b), "%s/b.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", a, "--seed 1");
    atest_sim("tests/data/scenarios/small.yaml", b, "--seed 2");
    double p[2];
    const char *files[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        hid_t f = H5Fopen(files[i], H5F_ACC_RDONLY, H5P_DEFAULT);
        cr_assert_geq(f, 0);
        hid_t g = H5Gopen(f, "/services/chat", H5P_DEFAULT);
        p[i] = attr_f64(g, "p99_ms");
        H5Gclose(g);
        H5Fclose(f);
    }
    cr_expect_neq(p[0], p[1], "p99 %.4f ms under both seeds", p[0]);
    atest_rmdir(dir);
}
