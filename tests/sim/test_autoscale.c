/* test_autoscale.c — HPA recommendation, start delay, stabilisation window, clamps. */
#include <criterion/criterion.h>
#include <errno.h>

#include "sim/autoscale.h"

/* capacity 10 req/s at 100 %, target 0.7 ⇒ 7 req/s per replica at target. */
static struct autoscale_cfg cfg_10(void)
{
    struct autoscale_cfg c;
    autoscale_cfg_default(&c);
    c.capacity = 10.0;
    c.initial = 2;
    return c;
}

Test(autoscale, defaults_are_hpa_defaults)
{
    struct autoscale_cfg c;
    autoscale_cfg_default(&c);
    cr_assert_float_eq(c.target_util, 0.7, 1e-12);
    cr_assert_float_eq(c.tolerance, 0.1, 1e-12);
    cr_assert_eq(c.down_window, 300 * SIM_SEC);
    cr_assert_eq(c.up_delay, 60 * SIM_SEC);
}

Test(autoscale, step_up_desired_at_once_ready_after_delay)
{
    struct autoscale a;
    struct autoscale_cfg c = cfg_10();
    cr_assert_eq(autoscale_init(&a, &c, 0), 0);
    cr_assert_eq(autoscale_observe(&a, 0, 14.0), 2); /* 14 / (2 × 7) = 1 */
    cr_assert_eq(autoscale_ready(&a, 0), 2);
    /* 70 req/s ⇒ ceil(70 / 7) = 10 replicas (exactly 10: no spurious 11th). */
    cr_assert_eq(autoscale_observe(&a, 60 * SIM_SEC, 70.0), 10);
    cr_assert_eq(autoscale_current(&a), 10);
    cr_assert_eq(autoscale_next_ready(&a), 120 * SIM_SEC);
    cr_assert_eq(autoscale_ready(&a, 120 * SIM_SEC - 1), 2);
    cr_assert_eq(autoscale_ready(&a, 120 * SIM_SEC), 10);
    cr_assert_eq(autoscale_next_ready(&a), SIM_TIME_MAX);
    /* 71 req/s: ratio 71/70 within tolerance, stays 10. 100 req/s ⇒ ceil(14.29) = 15. */
    cr_assert_eq(autoscale_observe(&a, 135 * SIM_SEC, 71.0), 10);
    cr_assert_eq(autoscale_observe(&a, 150 * SIM_SEC, 100.0), 15);
    cr_assert_eq(autoscale_ready(&a, 209 * SIM_SEC), 10);
    cr_assert_eq(autoscale_ready(&a, 210 * SIM_SEC), 15);
}

Test(autoscale, step_down_only_after_stabilisation_window)
{
    struct autoscale a;
    struct autoscale_cfg c = cfg_10();
    cr_assert_eq(autoscale_init(&a, &c, 0), 0);
    /* HPA sync every 15 s; 70 req/s from 60 s to 195 s, then 14 req/s. */
    for (sim_time t = 0; t <= 600 * SIM_SEC; t += 15 * SIM_SEC) {
        double rate = (t >= 60 * SIM_SEC && t <= 195 * SIM_SEC) ? 70.0 : 14.0;
        int n = autoscale_observe(&a, t, rate);
        /* Last 10-recommendation at 195 s leaves the window (t − 300 s, t] at t = 495 s. */
        int want = t < 60 * SIM_SEC ? 2 : t < 495 * SIM_SEC ? 10 : 2;
        cr_assert_eq(n, want, "t=%lld s: %d replicas, want %d", (long long)(t / SIM_SEC), n, want);
    }
    cr_assert_eq(autoscale_ready(&a, 600 * SIM_SEC), 2);
}

Test(autoscale, tolerance_band)
{
    struct autoscale a;
    struct autoscale_cfg c = cfg_10();
    c.initial = 10;
    c.down_window = 0; /* see the raw recommendation */
    c.up_delay = 0;
    cr_assert_eq(autoscale_init(&a, &c, 0), 0);
    /* At 10 replicas the target load is 70 req/s; |ratio − 1| <= 0.1 is 63..77 req/s. */
    cr_assert_eq(autoscale_observe(&a, 1, 76.9), 10);
    cr_assert_eq(autoscale_observe(&a, 2, 63.1), 10);
    cr_assert_eq(autoscale_observe(&a, 3, 78.0), 12); /* ceil(78 / 7 = 11.14) */
    /* Now 12 replicas: band 75.6..92.4 req/s. */
    cr_assert_eq(autoscale_observe(&a, 4, 76.0), 12);
    cr_assert_eq(autoscale_observe(&a, 5, 62.0), 9); /* ratio 0.738; ceil(8.86) */
    cr_assert_eq(autoscale_ready(&a, 5), 9);
}

Test(autoscale, min_max_clamps)
{
    struct autoscale a;
    struct autoscale_cfg c = cfg_10();
    c.min_replicas = 2;
    c.max_replicas = 5;
    c.initial = 0; /* clamped up to min */
    c.down_window = 0;
    cr_assert_eq(autoscale_init(&a, &c, 0), 0);
    cr_assert_eq(autoscale_ready(&a, 0), 2);
    cr_assert_eq(autoscale_observe(&a, 1, 1000.0), 5);
    cr_assert_eq(autoscale_observe(&a, 2, 0.0), 2);
    cr_assert_eq(autoscale_ready(&a, 2), 2);
}

Test(autoscale, scale_down_cancels_starting_replicas_first)
{
    struct autoscale a;
    struct autoscale_cfg c = cfg_10();
    c.down_window = 0;
    cr_assert_eq(autoscale_init(&a, &c, 0), 0);
    cr_assert_eq(autoscale_observe(&a, 0, 70.0), 10);           /* 8 starting, ready at 60 s */
    cr_assert_eq(autoscale_observe(&a, 10 * SIM_SEC, 35.0), 5); /* cancel 5 of the 8 */
    cr_assert_eq(autoscale_ready(&a, 59 * SIM_SEC), 2);
    cr_assert_eq(autoscale_ready(&a, 60 * SIM_SEC), 5);
    cr_assert_eq(autoscale_observe(&a, 70 * SIM_SEC, 7.0), 1); /* ready ones removed now */
    cr_assert_eq(autoscale_ready(&a, 70 * SIM_SEC), 1);
}

Test(autoscale, rejects_bad_input_unchanged)
{
    struct autoscale a;
    struct autoscale_cfg c = cfg_10();
    c.target_util = 0;
    cr_assert_eq(autoscale_init(&a, &c, 0), -EINVAL);
    c = cfg_10();
    cr_assert_eq(autoscale_init(&a, &c, 100), 0);
    cr_assert_eq(autoscale_observe(&a, 99, 70.0), -EINVAL);
    cr_assert_eq(autoscale_observe(&a, 100, -1.0), -EINVAL);
    cr_assert_eq(autoscale_current(&a), 2);
}

/* With more distinct decreasing recommendations than the ring holds, the
 * window maximum is never below the exact one (scale-down never early), and it
 * is exact while the ring does not overflow. */
Test(autoscale, bounded_window_is_conservative)
{
    static const uint32_t sizes[] = {40, 200};
    for (unsigned s = 0; s < 2; s++) {
        uint32_t n = sizes[s];
        struct autoscale a;
        struct autoscale_cfg c = cfg_10();
        c.initial = n;
        c.max_replicas = 10000;
        c.tolerance = 0;
        c.down_window = 1000 * SIM_SEC; /* longer than the whole run */
        cr_assert_eq(autoscale_init(&a, &c, 0), 0);
        for (uint32_t k = 0; k < n; k++) {
            /* raw recommendation n − k, strictly decreasing */
            int got = autoscale_observe(&a, (sim_time)k * SIM_SEC, 7.0 * (double)(n - k));
            cr_assert_eq(got, (int)n, "k=%u: %d", k, got);
        }
        /* All n recommendations are in the window: the max is still n. */
        cr_assert_eq(autoscale_observe(&a, (sim_time)n * SIM_SEC, 7.0), (int)n);
        /* Past the window from the first, exact would give n − 1 after 1 more second. */
        int later = autoscale_observe(&a, 1000 * SIM_SEC + 1, 7.0);
        if (n <= AUTOSCALE_RING)
            cr_assert_eq(later, (int)n - 1);
        else
            cr_assert_geq(later, (int)n - 1);
    }
}
