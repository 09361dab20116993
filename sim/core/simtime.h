/*
 * simtime.h — simulated time.
 *
 * Simulated time is an int64_t count of microseconds since the start of the
 * run (t = 0 is midnight, local time of the scenario's time zone, on day 0).
 * No double clocks: event order must never depend on rounding. Doubles are
 * used only for rates and fractions, and converted with sim_time_from_sec().
 *
 * Range: every time or duration read from a file (scenario, trace, job log)
 * must lie within ±SIM_TIME_LIMIT (100 years). INT64_MAX µs is about 292,000
 * years, so sums and differences of a few in-range values can never wrap;
 * readers still combine them with the checked helpers below, which refuse
 * (return -ERANGE) instead of wrapping.
 */
#ifndef TIDESIM_CORE_SIMTIME_H
#define TIDESIM_CORE_SIMTIME_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

typedef int64_t sim_time; /* µs */

#define SIM_US       ((sim_time)1)
#define SIM_MS       ((sim_time)1000)
#define SIM_SEC      ((sim_time)1000000)
#define SIM_MIN      (60 * SIM_SEC)
#define SIM_HOUR     (60 * SIM_MIN)
#define SIM_DAY      (24 * SIM_HOUR)
#define SIM_YEAR     (365 * SIM_DAY + 6 * SIM_HOUR) /* Julian year, 365.25 days */
#define SIM_TIME_MAX INT64_MAX

/* Largest magnitude of a time or duration taken from input: 100 years (3.16e15 µs). */
#define SIM_TIME_LIMIT       (100 * SIM_YEAR)
#define SIM_TIME_LIMIT_YEARS 100
#define SIM_TIME_LIMIT_SEC   ((double)SIM_TIME_LIMIT / 1e6) /* 3,155,760,000 s */

static inline double sim_time_to_sec(sim_time t)
{
    return (double)t / 1e6;
}

/* Seconds (double) to µs, rounded to the nearest µs; saturates at SIM_TIME_MAX. */
static inline sim_time sim_time_from_sec(double s)
{
    double us = s * 1e6;
    if (!(us < 9.2e18))
        return SIM_TIME_MAX;
    if (us < -9.2e18)
        return -SIM_TIME_MAX;
    return (sim_time)llround(us);
}

/* Whether |t| <= SIM_TIME_LIMIT. */
static inline bool sim_time_in_range(sim_time t)
{
    return t >= -SIM_TIME_LIMIT && t <= SIM_TIME_LIMIT;
}

/* *out = a + b, or -ERANGE (and *out unchanged) when the sum would not fit in int64. */
static inline int sim_time_add_checked(sim_time a, sim_time b, sim_time *out)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return -ERANGE;
    *out = a + b;
    return 0;
}

/* *out = a - b, or -ERANGE (and *out unchanged) when the difference would not fit in int64. */
static inline int sim_time_sub_checked(sim_time a, sim_time b, sim_time *out)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
        return -ERANGE;
    *out = a - b;
    return 0;
}

/* *out = a · k, or -ERANGE (and *out unchanged) when the product would not fit in int64. */
static inline int sim_time_mul_checked(sim_time a, int64_t k, sim_time *out)
{
    if (a == 0 || k == 0) {
        *out = 0;
        return 0;
    }
    if ((a == -1 && k == INT64_MIN) || (k == -1 && a == INT64_MIN))
        return -ERANGE;
    if ((a > 0) == (k > 0) ? (a > 0 ? a > INT64_MAX / k : a < INT64_MAX / k)
                           : (a > 0 ? k < INT64_MIN / a : a < INT64_MIN / k))
        return -ERANGE;
    *out = a * k;
    return 0;
}

#endif
