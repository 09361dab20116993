/*
 * tfield.h — strict parsing of trace fields: integers, reals, times, time zones.
 *
 * Every parser takes a NUL-terminated field, accepts it only when the whole
 * field is consumed (no trailing junk, no empty field), and returns 0 or
 * -EINVAL without touching *out. Wall-clock stamps become µs since the Unix
 * epoch, UTC (proleptic Gregorian calendar, no leap seconds).
 */
#ifndef TIDESIM_TFIELD_H
#define TIDESIM_TFIELD_H

#include <stdint.h>

#include "sim/core/simtime.h"

/* How a time column is written. */
enum tfield_unit {
    TFIELD_SEC,  /* seconds, integer or decimal */
    TFIELD_MS,   /* milliseconds */
    TFIELD_US,   /* microseconds */
    TFIELD_WALL, /* wall clock "YYYY-MM-DD HH:MM:SS[.fffffffff][Z|±HH:MM]" */
};

/* Decimal integer (optional sign). */
int tfield_i64(const char *s, int64_t *out);

/* Finite real number (strtod syntax, no inf/nan). */
int tfield_f64(const char *s, double *out);

/*
 * Wall clock "YYYY-MM-DD[ T]HH:MM[:SS[.f...]]" or a bare date, optionally
 * followed by "Z", "+HH:MM", "-HH:MM", "+HHMM" or "+HH". Fractions beyond 1 µs
 * are truncated (Azure's 100 ns digits). Stamps without a zone are taken in
 * `tz_s` (seconds east of UTC). *us = µs since 1970-01-01T00:00:00Z.
 */
int tfield_wallclock(const char *s, int32_t tz_s, int64_t *us);

/* Time zone "UTC", "Z", "+08:00", "-05:00", "+0800", "+8": seconds east of UTC. */
int tfield_tz(const char *s, int32_t *tz_s);

/*
 * A time field in `unit` to µs (numeric units: relative to the unit's zero).
 * Numeric values beyond ±SIM_TIME_LIMIT (100 years, sim/core/simtime.h) are
 * -EINVAL; wall-clock stamps (years 0000-9999) always fit in int64 µs.
 */
int tfield_time(const char *s, enum tfield_unit unit, int32_t tz_s, int64_t *us);

/* "s", "ms", "us", "wall" (also "sec", "seconds", "µs", "datetime") to a unit; -EINVAL if unknown.
 */
int tfield_unit_parse(const char *s, enum tfield_unit *unit);

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
int64_t tfield_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Inverse: the date of `days` since 1970-01-01. */
void tfield_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
