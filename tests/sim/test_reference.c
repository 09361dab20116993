/*
 * test_reference.c — every policy on its reference scenario of both brackets
 * (scenarios/reference/ and scenarios/reference/deep/), cut to thirty simulated
 * minutes (with --set, as a user would): requests and GPU-seconds are conserved.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/simtest.h"

static void check_file(const char *dir, const char *policy)
{
    char path[256];
    snprintf(path, sizeof(path), "scenarios/reference/%s%s.yaml", dir, policy);
    static const char *const sets[] = {"duration=30m", "output.warmup=10m"};
    struct scenario sc;
    struct sim s;
    struct conf_err err;
    int rc = scenario_load_set(&sc, path, NULL, sets, 2, &err);
    cr_assert_eq(rc, 0, "%s: %s", path, err.msg);
    rc = sim_init(&s, &sc, 1, NULL);
    cr_assert_eq(rc, 0, "%s: %s", path, s.err);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s: %s", path, s.err);
    cr_expect_str_eq(sc.policy.name, policy);
    simtest_expect_conserved(&s);
    cr_expect_leq(sim_util_useful(&s), sim_util_busy(&s) + 1e-12);
    cr_expect_leq(sim_util_busy(&s), 1.0 + 1e-12);
    simtest_free(&sc, &s);
}

static void check_policy(const char *policy)
{
    check_file("", policy);
    check_file("deep/", policy);
}

Test(reference, dedicated_conserves)
{
    check_policy("dedicated");
}
Test(reference, timeslice_conserves)
{
    check_policy("timeslice");
}
Test(reference, mps_conserves)
{
    check_policy("mps");
}
Test(reference, mig_static_conserves)
{
    check_policy("mig-static");
}
Test(reference, kueue_conserves)
{
    check_policy("kueue");
}
Test(reference, tidal_conserves)
{
    check_policy("tidal");
}
Test(reference, kai_conserves)
{
    check_policy("kai");
}
Test(reference, adaptive_conserves)
{
    check_policy("adaptive");
}
