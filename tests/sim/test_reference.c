/*
 * test_reference.c — every policy on its reference scenario (scenarios/reference/),
 * cut to two simulated hours: requests and GPU-seconds are conserved.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/simtest.h"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc((size_t)n + 64, 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    char *d = strstr(buf, "duration: 3d");
    cr_assert_not_null(d, "%s: no 'duration: 3d' to shorten", path);
    memcpy(d, "duration: 2h", 12);
    return buf;
}

static void check_policy(const char *policy)
{
    char path[256];
    snprintf(path, sizeof(path), "scenarios/reference/%s.yaml", policy);
    char *text = read_text(path);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, text, 1);
    cr_expect_str_eq(sc.policy.name, policy);
    simtest_expect_conserved(&s);
    cr_expect_leq(sim_util_useful(&s), sim_util_busy(&s) + 1e-12);
    cr_expect_leq(sim_util_busy(&s), 1.0 + 1e-12);
    simtest_free(&sc, &s);
    free(text);
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
