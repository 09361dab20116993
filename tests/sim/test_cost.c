/*
 * test_cost.c — the cost block against a hand count (tests/data/scenarios/cost.yaml):
 * 4 GPUs × 2 h at 2 USD = 16 USD; energy: two training cards busy (400 W each) and
 * two inference cards half busy (50 + 350 × 0.5 = 225 W each): 1,250 W × 2 h =
 * 2.5 kWh at 0.10 USD = 0.25 USD. Inference holds 1 of the 3 busy cards' worth of
 * GPU-time, so a third of 16.25 USD over 720,000 requests within SLO (100 req/s × 2 h)
 * is 7.52 USD per million; two thirds over the training GPU-hours done. (The inference
 * share is from the arrivals' mean, so it holds to the Poisson noise, < 0.5 %.)
 */
#include <hdf5.h>
#include <math.h>

#include "tests/analysistest.h"
#include "tests/h5test.h"

Test(cost, totals_and_unit_costs_by_hand)
{
    char dir[64], out[128], cmd[512], *txt = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(out, sizeof(out), "%s/c.h5", dir);
    atest_sim("tests/data/scenarios/cost.yaml", out, NULL);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t s = H5Gopen(f, "/summary", H5P_DEFAULT);
    cr_expect_float_eq(h5test_f64(s, "cost_gpu"), 16.0, 1e-9);
    cr_expect_float_eq(h5test_f64(s, "cost_energy"), 0.25, 1e-3);
    double total = h5test_f64(s, "cost_total");
    cr_expect_float_eq(total, 16.25, 1e-3);
    /* Poisson arrivals: about 720,000 within SLO (±0.4 % at 3σ) */
    double within = (double)h5test_i64(s, "requests_within_slo");
    cr_expect(fabs(within / 720000 - 1) < 0.004, "%.0f within SLO", within);
    double inf_share = 1.0 / 3, busy_inf = 100 * 0.010 * 2 * 3600 / 7200.0; /* cards */
    cr_expect(fabs(busy_inf - 1.0) < 1e-12);
    double per_m = h5test_f64(s, "cost_per_million_within_slo");
    cr_expect(fabs(per_m - total * inf_share / (within / 1e6)) / per_m < 0.005, "%.4f", per_m);
    double th = h5test_f64(s, "training_gpu_hours");
    cr_expect(th > 3.9 && th <= 4.0, "training %.4f GPU-h", th);
    cr_expect(fabs(h5test_f64(s, "cost_per_training_gpu_hour") - total * 2 / 3 / th) < 0.01);
    H5Gclose(s);
    H5Fclose(f);
    /* report prints the currency as the unit */
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), out);
    cr_assert_eq(atest_run(cmd, &txt), 0, "%s", txt);
    cr_expect(strstr(txt, "USD/1M requests") != NULL, "%s", txt);
    free(txt);
    /* reserved pricing without a reserved price is refused at load */
    snprintf(cmd, sizeof(cmd),
             "%s validate tests/data/scenarios/cost.yaml --set cost.pricing=reserved", atest_bin());
    cr_expect_eq(atest_run(cmd, &txt), 1, "%s", txt);
    cr_expect(strstr(txt, "gpu_hour_reserved") != NULL, "%s", txt);
    free(txt);
    atest_rmdir(dir);
}
