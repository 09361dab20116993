/*
 * test_slo_share.c — the within-SLO share counts every request whose fate is
 * known (dropped and still-waiting requests are misses), the served-only
 * share is kept apart, and quantiles differ between seeds (interpolated, not
 * bucket midpoints). Numbers are read back from the results file and checked
 * against a hand count of its own /services counters.
 */
#include "tests/analysistest.h"
#include "tests/h5test.h"

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
    int64_t arrived = h5test_i64(g, "arrived"), served = h5test_i64(g, "served");
    int64_t dropped = h5test_i64(g, "dropped"), failed = h5test_i64(g, "failed");
    int64_t waiting = h5test_i64(g, "waiting"), busy = h5test_i64(g, "in_service");
    int64_t within = h5test_i64(g, "within_slo");
    cr_assert_eq(arrived, served + dropped + failed + waiting + busy, "conservation");
    /* The scenario is built to drop and to end with a full queue. */
    cr_assert_gt(dropped, 1000);
    cr_assert_gt(waiting, 100);
    double hand = (double)within / (double)(served + dropped + failed + waiting);
    cr_expect_eq(h5test_f64(g, "slo_share"), hand, "service share %.6f vs hand %.6f",
                 h5test_f64(g, "slo_share"), hand);
    cr_expect_eq(h5test_f64(g, "slo_share_served"), (double)within / (double)served);
    cr_expect_eq(h5test_f64(s, "slo_share"), hand, "one service: summary = service");
    cr_expect_eq(h5test_i64(s, "requests_within_slo"), within);
    cr_expect_eq(h5test_i64(s, "requests_waiting"), waiting);
    /* Everything served made it (SLO 1 s, queue ~0.74 s), yet 4 % of arrivals did not. */
    cr_expect_eq(h5test_f64(g, "slo_share_served"), 1.0);
    cr_expect_lt(h5test_f64(g, "slo_share"), 0.97);
    H5Gclose(g);
    H5Gclose(s);
    H5Fclose(f);
    atest_rmdir(dir);
}

Test(slo_share, p99_differs_between_seeds)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small.yaml", pr.a, "--seed 1");
    atest_sim("tests/data/scenarios/small.yaml", pr.b, "--seed 2");
    double p[2];
    const char *files[2] = {pr.a, pr.b};
    for (int i = 0; i < 2; i++) {
        hid_t f = H5Fopen(files[i], H5F_ACC_RDONLY, H5P_DEFAULT);
        cr_assert_geq(f, 0);
        hid_t g = H5Gopen(f, "/services/chat", H5P_DEFAULT);
        p[i] = h5test_f64(g, "p99_ms");
        H5Gclose(g);
        H5Fclose(f);
    }
    cr_expect_neq(p[0], p[1], "p99 %.4f ms under both seeds", p[0]);
    atest_rmdir(pr.dir);
}
