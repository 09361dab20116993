/* test_ckpt.c — checkpoint intervals, costs and preemption loss (hand-computed). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "models/ckpt.h"

Test(ckpt, young_interval)
{
    /* C = 60 s, MTBF = 8 h: sqrt(2 x 60 x 28,800) = sqrt(3,456,000) = 1859.03 s. */
    cr_expect_float_eq(ckpt_young_interval(60.0, 8 * 3600.0), sqrt(2.0 * 60.0 * 28800.0), 1e-9);
    cr_expect_float_eq(ckpt_young_interval(60.0, 28800.0), 1859.032, 1e-3);
    cr_expect_float_eq(ckpt_young_interval(0.0, 28800.0), 0.0, 1e-12);
}

Test(ckpt, daly_interval)
{
    /* C = 60, M = 28,800: x = C/2M = 1/960; sqrt(2CM) (1 + sqrt(x)/3 + x/9) - C. */
    double x = 1.0 / 960.0;
    double want = 1859.0320061 * (1.0 + 0.0322748612 / 3.0 + x / 9.0) - 60.0;
    cr_expect_float_eq(ckpt_daly_interval(60.0, 28800.0), want, 1e-6);
    cr_expect_float_eq(ckpt_daly_interval(60.0, 28800.0), 1819.2472, 1e-3);
    /* C >= 2M: checkpoint every MTBF */
    cr_expect_float_eq(ckpt_daly_interval(100.0, 50.0), 50.0, 1e-12);
    /* Daly < Young + tiny corrections for small C/M */
    cr_expect_lt(ckpt_daly_interval(60.0, 28800.0), ckpt_young_interval(60.0, 28800.0));
}

Test(ckpt, interval_by_rule)
{
    /* The rule picks the formula: C = 60 s, M = 8 h as above. */
    cr_expect_float_eq(ckpt_interval(CKPT_RULE_YOUNG, 1800.0, 60.0, 28800.0), 1859.032, 1e-3);
    cr_expect_float_eq(ckpt_interval(CKPT_RULE_DALY, 1800.0, 60.0, 28800.0), 1819.2472, 1e-3);
    cr_expect_float_eq(ckpt_interval(CKPT_RULE_EVERY, 1800.0, 60.0, 28800.0), 1800.0, 1e-12);
    cr_expect_float_eq(ckpt_interval(CKPT_RULE_EVERY, 0.0, 60.0, 28800.0), 0.0, 1e-12);
    /* No failures to price (M = 0): no interval from either formula. */
    cr_expect_float_eq(ckpt_interval(CKPT_RULE_DALY, 1800.0, 60.0, 0.0), 0.0, 1e-12);
}

Test(ckpt, state_save_restore)
{
    struct ckpt_knobs k;
    ckpt_knobs_init(&k);
    cr_assert_eq(ckpt_knobs_check(&k), 0);
    /* 7e9 params x 14 B = 98 GB; x 16 B = 112 GB */
    cr_expect_float_eq(ckpt_state_bytes(&k, 7e9), 98e9, 1.0);
    k.bytes_per_param = CKPT_BYTES_PER_PARAM_FULL;
    cr_expect_float_eq(ckpt_state_bytes(&k, 7e9), 112e9, 1.0);
    ckpt_knobs_init(&k);
    /* 98 GB / 2 GB/s + 5 s = 54 s; 98 GB / 4 GB/s + 60 s = 84.5 s */
    cr_expect_float_eq(ckpt_save_s(&k, 98e9), 54.0, 1e-9);
    cr_expect_float_eq(ckpt_restore_s(&k, 98e9), 84.5, 1e-9);
    cr_expect_float_eq(ckpt_expected_loss_s(1800.0, 84.5), 984.5, 1e-9);
    k.write_gbps = 0.0;
    cr_expect_eq(ckpt_knobs_check(&k), -EINVAL);
}

Test(ckpt, graceful_preemption_fits_grace)
{
    struct ckpt_preempt r = ckpt_preempt_graceful(50 * 60.0, 20.0, 30.0);
    cr_expect(r.saved);
    cr_expect_float_eq(r.lost_s, 0.0, 1e-12);
    cr_expect_float_eq(r.spent_s, 20.0, 1e-12);
    /* exactly the grace period still fits */
    r = ckpt_preempt_graceful(600.0, 30.0, 30.0);
    cr_expect(r.saved);
    cr_expect_float_eq(r.lost_s, 0.0, 1e-12);
}

Test(ckpt, graceful_preemption_save_too_long)
{
    /* a 54 s save with 30 s grace: killed mid-save, the 50 minutes since the checkpoint are lost */
    struct ckpt_preempt r = ckpt_preempt_graceful(50 * 60.0, 54.0, CKPT_GRACE_S_DEFAULT);
    cr_expect_not(r.saved);
    cr_expect_float_eq(r.lost_s, 3000.0, 1e-12);
    cr_expect_float_eq(r.spent_s, 30.0, 1e-12);
}

Test(ckpt, hard_preemption_loses_since_last_checkpoint)
{
    struct ckpt_preempt r = ckpt_preempt_hard(50 * 60.0);
    cr_expect_not(r.saved);
    cr_expect_float_eq(r.lost_s, 3000.0, 1e-12);
    cr_expect_float_eq(r.spent_s, 0.0, 1e-12);
}
