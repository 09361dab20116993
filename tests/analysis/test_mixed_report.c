/*
 * test_mixed_report.c — results and report of a fleet whose pools share by different
 * modes (scenarios/mixed-fleet-modes.yaml: an A100 pool under MIG, an H100 pool
 * time-sliced by 2): /meta sharing is "mixed", each /pools/<name> has its own sharing
 * and slots (the scenario's), and the report header names each pool's mode; a one-mode
 * fleet's file (scenarios/mixed-fleet-mig.yaml) has none of the new attributes and its
 * header is as before.
 */
#include <math.h>

#include "analysis/results.h"
#include "tests/analysistest.h"

Test(mixed_report, pools_of_different_modes_in_results_and_report)
{
    char dir[64], f[128], g[128], err[256], cmd[512], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/modes.h5", dir);
    snprintf(g, sizeof(g), "%s/mig.h5", dir);
    atest_sim("scenarios/mixed-fleet-modes.yaml", f, "--set duration=2h");
    atest_sim("scenarios/mixed-fleet-mig.yaml", g, "--set duration=1h");

    struct results r;
    cr_assert_eq(results_open(&r, f, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(r.sharing, "mixed");
    cr_assert_eq(r.npools, 2u);
    cr_expect_str_eq(r.pools[0].name, "a100-mig");
    cr_expect_str_eq(r.pools[0].sharing, "mig");
    cr_expect_str_eq(r.pools[1].sharing, "timeslice");
    results_release(&r);
    /* slots: 7 on MIG (instances bound it), the pool's replicas (2) time-sliced. */
    snprintf(cmd, sizeof(cmd), "h5dump -a /pools/h100-ts/slots %s", f);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "(0): 2"), "%s", out);
    free(out);

    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), f);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "cluster: 24 GPUs in 2 pools: a100-mig 16 x a100-sxm4-80gb mig, "
                          "h100-ts 8 x h100-sxm5-80gb timeslice (mixed)"),
              "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s report %s --format json", atest_bin(), f);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"sharing\": \"mixed\""), "%s", out);
    cr_expect(strstr(out, "\"pool_sharing\": {\n    \"a100-mig\": \"mig\",\n    \"h100-ts\": "
                          "\"timeslice\"\n  },"),
              "%s", out);
    free(out);

    /* One mode (MIG pool beside whole cards): no per-pool mode anywhere. */
    cr_assert_eq(results_open(&r, g, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(r.sharing, "mig");
    cr_assert_eq(r.npools, 2u);
    cr_expect_null(r.pools[0].sharing);
    results_release(&r);
    snprintf(cmd, sizeof(cmd), "h5dump -a /pools/a100-mig/slots %s", g);
    cr_expect_neq(atest_run(cmd, NULL), 0, "no slots attribute in a one-mode file");
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), g);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "a100-mig 16 x a100-sxm4-80gb, h100 16 x h100-sxm5-80gb (mig);"), "%s",
              out);
    free(out);
    atest_rmdir(dir);
}
