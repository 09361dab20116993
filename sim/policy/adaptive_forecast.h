/*
 * adaptive_forecast.h — seasonal load forecaster for the `adaptive` policy.
 *
 * Keeps, for the last `days` days, the mean observed arrival rate of every
 * slot of the day (default 5-min slots ⇒ 288 per day), and predicts the rate
 * at a future time t as
 *
 *   base(t)  = mean (or max) of the same slot of day over the kept days before
 *              t's day (at most `days` of them)
 *   level    = Σ observed / Σ base over the last `level_slots` completed
 *              slots (how today compares with the usual; 1 if unknown)
 *   forecast = base(t) × ((1 − level_weight) + level_weight × level) × (1 + margin)
 *
 * With `weekly`, base(t) is the same slot on the same weekday a week before
 * when that day is kept (days >= 8), else the mean over the days as above:
 * a weekend forecast from last weekend, not from the weekdays before it.
 *
 * With fewer than `min_days` days holding that slot, it falls back to the
 * largest slot mean of the last `recent_slots` slots (and the slot in
 * progress) × (1 + margin).
 *
 * Observations are (time µs, rate req/s) with non-decreasing times; a slot's
 * value is the plain mean of the observations that fell in it (the caller
 * observes at a steady cadence). A slot with no observation stays unknown.
 * Days are counted from t = 0 (local midnight, sim/core/simtime.h), so slots are
 * local times of day.
 *
 * Memory is bounded: days × slots_per_day doubles plus a ring of the recent
 * slots, allocated at create. Heap object: forecast_create/forecast_destroy.
 * No I/O, no globals.
 */
#ifndef TIDESIM_POLICY_ADAPTIVE_FORECAST_H
#define TIDESIM_POLICY_ADAPTIVE_FORECAST_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/simtime.h"

#define FORECAST_MAX_DAYS 28

enum forecast_agg { FORECAST_MEAN, FORECAST_MAX };

struct forecast_cfg {
    sim_time slot;         /* slot width µs, divides SIM_DAY; default 5 min */
    uint32_t days;         /* days of history kept, 1..FORECAST_MAX_DAYS; default 7 */
    uint32_t min_days;     /* days needed for a seasonal forecast, >= 1; default 1 */
    enum forecast_agg agg; /* default FORECAST_MEAN */
    double margin;         /* safety margin, >= 0; default 0.1 */
    double level_weight;   /* 0..1 weight of the current level ratio; default 0 */
    uint32_t level_slots;  /* >= 1; default 6 (30 min of 5-min slots) */
    uint32_t recent_slots; /* fallback window in slots, >= 1; default 12 (1 h) */
    bool weekly;           /* same weekday a week ago when kept (needs days >= 8); default off */
};

struct forecast;

void forecast_cfg_default(struct forecast_cfg *cfg);

/* New forecaster with a copy of cfg, or NULL if cfg is invalid or memory runs out. */
struct forecast *forecast_create(const struct forecast_cfg *cfg);
void forecast_destroy(struct forecast *f); /* NULL is a no-op */

/* Record the arrival rate (req/s, finite, >= 0) observed at now. Returns 0,
 * or -EINVAL if now is before the previous observation or rate is bad
 * (state unchanged). */
int forecast_observe(struct forecast *f, sim_time now, double rate);

/* Forecast rate (req/s) at time t (normally t >= the last observation) into
 * *out. Returns 0, or -ENODATA if nothing usable was observed yet (*out = 0). */
int forecast_predict(const struct forecast *f, sim_time t, double *out);

/* Largest forecast over the slots overlapping [from, to] (from <= to): what to
 * provision now for a horizon. Returns 0, -EINVAL, or -ENODATA. */
int forecast_peak(const struct forecast *f, sim_time from, sim_time to, double *out);

#endif
