/*
 * test_auto_replications.c — `tidesim run --replications auto --precision P`
 * adds seeds until the 95 % interval of every watched headline figure is
 * within P of its mean (or the cap), and says in /meta what it reached.
 *
 * The reference is the merged file's own /summary: X_ci95 / |X_mean| is
 * computed there by the merge (Student t over the replications), apart from
 * the driver's stopping rule, so the two must agree on the widest interval.
 */
#include <hdf5.h>
#include <math.h>

#include "tests/analysistest.h"
#include "tests/h5test.h"

static const char *const watched[] = {"util_busy", "slo_share", "p99_ms_worst_service",
                                      "training_gpu_hours"};

/* Replications in the file; *widest gets the largest ci95/|mean| of the watched metrics. */
static int64_t read_back(const char *path, double *target, double *reached, double *widest)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0, "%s", path);
    hid_t m = H5Gopen(f, "/meta", H5P_DEFAULT), s = H5Gopen(f, "/summary", H5P_DEFAULT);
    int64_t n = h5test_i64(m, "replications");
    *target = h5test_f64(m, "precision_target");
    *reached = h5test_f64(m, "precision_reached");
    *widest = 0;
    for (size_t k = 0; k < sizeof(watched) / sizeof(watched[0]); k++) {
        char mean[64], ci[64];
        snprintf(mean, sizeof(mean), "%s_mean", watched[k]);
        snprintf(ci, sizeof(ci), "%s_ci95", watched[k]);
        double mu = h5test_f64(s, mean), hw = h5test_f64(s, ci);
        if (isfinite(mu) && mu != 0 && isfinite(hw) && hw / fabs(mu) > *widest)
            *widest = hw / fabs(mu);
    }
    H5Gclose(m);
    H5Gclose(s);
    H5Fclose(f);
    return n;
}

Test(auto_replications, a_loose_target_stops_at_the_first_round)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small.yaml", pr.a, "--replications auto --precision 90%");
    double target, reached, widest;
    int64_t n = read_back(pr.a, &target, &reached, &widest);
    cr_expect_eq(n, 3, "%ld replications", (long)n);
    cr_expect_eq(target, 0.9);
    cr_expect(reached <= 0.9, "reached %.4f", reached);
    cr_expect(fabs(reached - widest) < 1e-9, "driver %.6f vs the file's own intervals %.6f",
              reached, widest);
    atest_rmdir(pr.dir);
}

Test(auto_replications, a_tighter_target_adds_seeds_until_it_is_met)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    /* After 3 seeds training GPU-hours spread ±67 % on this short scenario: 30 % needs more. */
    atest_sim("tests/data/scenarios/small.yaml", pr.a, "--replications auto --precision 30%");
    double target, reached, widest;
    int64_t n = read_back(pr.a, &target, &reached, &widest);
    cr_expect_gt(n, 3, "%ld replications", (long)n);
    cr_expect_lt(n, 40, "%ld replications: the cap, not the target, stopped it", (long)n);
    cr_expect(reached <= 0.3, "reached %.4f", reached);
    cr_expect(fabs(reached - widest) < 1e-9, "driver %.6f vs file %.6f", reached, widest);
    atest_rmdir(pr.dir);
}

Test(auto_replications, the_cap_stops_it_and_says_so)
{
    struct atest_pair pr;
    char cmd[512], *out = NULL;
    atest_pair_init(&pr);
    snprintf(cmd, sizeof(cmd),
             "%s run tests/data/scenarios/small.yaml -o %s --replications auto --precision 0.1%% "
             "--max-replications 5",
             atest_bin(), pr.a);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "not reached after 5 replications") != NULL, "%s", out);
    free(out);
    double target, reached, widest;
    cr_expect_eq(read_back(pr.a, &target, &reached, &widest), 5);
    cr_expect_gt(reached, 0.001);
    atest_rmdir(pr.dir);
}

Test(auto_replications, usage_errors)
{
    static const char *const bad[] = {"--replications auto", "--precision 1%",
                                      "--replications auto --precision 5",
                                      "--replications auto --precision 0",
                                      "--replications auto --precision 1% --max-replications 2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char cmd[512], *out = NULL;
        snprintf(cmd, sizeof(cmd), "%s run tests/data/scenarios/small.yaml -o /tmp/never.h5 %s",
                 atest_bin(), bad[i]);
        cr_expect_eq(atest_run(cmd, &out), 2, "%s: %s", bad[i], out);
        free(out);
        cr_expect(!atest_exists("/tmp/never.h5"));
    }
}
