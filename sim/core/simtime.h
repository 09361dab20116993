/*
 * simtime.h — simulated time.
 *
 * Simulated time is an int64_t count of microseconds since the start of the
 * run (t = 0 is midnight, local time of the scenario's time zone, on day 0).
 * No double clocks: event order must never depend on rounding. Doubles are
 * used only for rates and fractions, and converted with sim_time_from_sec().
 */
#ifndef TIDESIM_CORE_SIMTIME_H
#define TIDESIM_CORE_SIMTIME_H

#include <math.h>
#include <stdint.h>

typedef int64_t sim_time; /* µs */

#define SIM_US       ((sim_time)1)
#define SIM_MS       ((sim_time)1000)
#define SIM_SEC      ((sim_time)1000000)
#define SIM_MIN      (60 * SIM_SEC)
#define SIM_HOUR     (60 * SIM_MIN)
#define SIM_DAY      (24 * SIM_HOUR)
#define SIM_TIME_MAX INT64_MAX

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

#endif
