/* test_adaptive_forecast.c — seasonal forecaster on a synthetic diurnal profile with a
 * known shape: 20 req/s at night, linear ramp 06:00–10:00 to 100, flat until
 * 18:00, down to 20 at 22:00. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "sim/policy/adaptive_forecast.h"

static double profile(sim_time t)
{
    double h = fmod((double)t / (double)SIM_HOUR, 24.0);
    if (h < 6)
        return 20;
    if (h < 10)
        return 20 + 20 * (h - 6);
    if (h < 18)
        return 100;
    if (h < 22)
        return 100 - 20 * (h - 18);
    return 20;
}

/* Observe scale × profile once a minute over [from, to). */
static void feed(struct forecast *f, sim_time from, sim_time to, double scale)
{
    for (sim_time t = from; t < to; t += SIM_MIN)
        cr_assert_eq(forecast_observe(f, t, scale * profile(t)), 0);
}

static struct forecast *make(double level_weight)
{
    struct forecast_cfg c;
    forecast_cfg_default(&c);
    c.level_weight = level_weight;
    struct forecast *f = forecast_create(&c);
    cr_assert_not_null(f);
    return f;
}

Test(forecast, morning_ramp_after_two_days)
{
    struct forecast *f = make(0);
    feed(f, 0, 2 * SIM_DAY + 6 * SIM_HOUR, 1.0);
    for (int m = 0; m <= 240; m += 15) { /* 06:00 .. 10:00 of day 2 */
        sim_time t = 2 * SIM_DAY + 6 * SIM_HOUR + m * SIM_MIN;
        double p;
        cr_assert_eq(forecast_predict(f, t, &p), 0);
        double want = profile(t) * 1.1;
        /* A slot mean of minutes 0..4 of a 20 req/s-per-hour ramp is 2/3 req/s
         * above the slot start: at most 3.4 % of the 20 req/s at 06:00. */
        cr_assert(fabs(p - want) / want < 0.034, "06:00 + %d min: %g vs %g", m, p, want);
    }
    /* Exactly: slot 08:00 holds minutes 0..4 ⇒ 60 + 2/3. */
    double p;
    cr_assert_eq(forecast_predict(f, 2 * SIM_DAY + 8 * SIM_HOUR + 2 * SIM_MIN, &p), 0);
    cr_assert_float_eq(p, (60.0 + 2.0 / 3) * 1.1, 1e-9);
    forecast_destroy(f);
}

Test(forecast, forecasting_ahead_leads_the_ramp)
{
    struct forecast *f = make(0);
    feed(f, 0, 2 * SIM_DAY + 5 * SIM_HOUR, 1.0);
    sim_time now = 2 * SIM_DAY + 5 * SIM_HOUR; /* still at the night level, 20 req/s */
    double ahead, peak;
    cr_assert_eq(forecast_predict(f, now + 2 * SIM_HOUR, &ahead), 0);
    cr_assert_gt(ahead, 2 * profile(now) * 1.1); /* the 07:00 load, ~40 req/s */
    cr_assert_eq(forecast_peak(f, now, now + 5 * SIM_HOUR, &peak), 0);
    cr_assert_float_eq(peak, 100 * 1.1, 1e-9); /* the ramp tops out by 10:00 */
    forecast_destroy(f);
}

Test(forecast, falls_back_to_recent_max_without_history)
{
    struct forecast *f = make(0);
    double p;
    cr_assert_eq(forecast_predict(f, SIM_HOUR, &p), -ENODATA);
    cr_assert_eq(forecast_observe(f, 0, 30), 0);
    cr_assert_eq(forecast_observe(f, 5 * SIM_MIN, 50), 0);
    cr_assert_eq(forecast_observe(f, 10 * SIM_MIN, 20), 0);
    cr_assert_eq(forecast_predict(f, 3 * SIM_HOUR, &p), 0);
    cr_assert_float_eq(p, 55, 1e-9);
    /* 70 min later the 50 has left the 12-slot window: max(20, 25) × 1.1. */
    cr_assert_eq(forecast_observe(f, 80 * SIM_MIN, 25), 0);
    cr_assert_eq(forecast_predict(f, 3 * SIM_HOUR, &p), 0);
    cr_assert_float_eq(p, 27.5, 1e-9);
    cr_assert_eq(forecast_observe(f, 79 * SIM_MIN, 25), -EINVAL);
    forecast_destroy(f);
}

Test(forecast, level_ratio_scales_the_seasonal_base)
{
    struct forecast *f = make(1.0);
    feed(f, 0, 2 * SIM_DAY, 1.0);
    feed(f, 2 * SIM_DAY, 2 * SIM_DAY + 5 * SIM_HOUR + SIM_MIN, 1.5); /* today runs 1.5× usual */
    double p;
    cr_assert_eq(forecast_predict(f, 2 * SIM_DAY + 8 * SIM_HOUR, &p), 0);
    cr_assert_float_eq(p, (60.0 + 2.0 / 3) * 1.5 * 1.1, 1e-9);
    forecast_destroy(f);
}

Test(forecast, keeps_only_the_last_days)
{
    struct forecast_cfg c;
    forecast_cfg_default(&c);
    c.days = 3;
    c.agg = FORECAST_MAX;
    c.margin = 0;
    struct forecast *f = forecast_create(&c);
    cr_assert_not_null(f);
    feed(f, 0, 7 * SIM_DAY, 2.0);                      /* a busy week */
    feed(f, 7 * SIM_DAY, 10 * SIM_DAY + SIM_MIN, 1.0); /* then three normal days */
    double p;
    cr_assert_eq(forecast_predict(f, 10 * SIM_DAY + 12 * SIM_HOUR, &p), 0);
    cr_assert_float_eq(p, 100, 1e-9); /* the busy week's 200 is forgotten */
    forecast_destroy(f);
    c.slot = 7 * SIM_MIN; /* does not divide a day */
    cr_assert_null(forecast_create(&c));
    forecast_destroy(NULL);
}

/* Weekends at 40 % of weekdays (days 5 and 6 of each week from t = 0). */
static double weekly_scale(sim_time t)
{
    int64_t d = t / SIM_DAY;
    return d % 7 >= 5 ? 0.4 : 1.0;
}

Test(forecast, weekly_forecasts_a_weekend_from_last_weekend)
{
    struct forecast_cfg c;
    forecast_cfg_default(&c);
    c.days = 8;
    c.margin = 0;
    struct forecast *daily = forecast_create(&c);
    c.weekly = true;
    struct forecast *weekly = forecast_create(&c);
    cr_assert(daily && weekly);
    /* Eight days, then the second week's weekend (days 12, 13) is forecast on day 12. */
    for (sim_time t = 0; t < 12 * SIM_DAY; t += SIM_MIN) {
        double r = weekly_scale(t) * profile(t);
        cr_assert_eq(forecast_observe(daily, t, r), 0);
        cr_assert_eq(forecast_observe(weekly, t, r), 0);
    }
    sim_time noon = 12 * SIM_DAY + 12 * SIM_HOUR;
    double pd, pw;
    cr_assert_eq(forecast_predict(daily, noon, &pd), 0);
    cr_assert_eq(forecast_predict(weekly, noon, &pw), 0);
    /* By hand: last weekend's noon was 0.4 × 100 = 40 req/s; the mean over the kept days
     * 4..11 (days 5, 6 weekend) is (6 × 100 + 2 × 40) / 8 = 85. */
    cr_expect_float_eq(pw, 40, 1e-9);
    cr_expect_float_eq(pd, 85, 1e-9);
    /* weekly without 8 days kept is refused */
    c.days = 7;
    cr_expect_null(forecast_create(&c));
    forecast_destroy(daily);
    forecast_destroy(weekly);
}
