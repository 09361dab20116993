/*
 * tidal_window.h — day/night windows of the `tidal` policy.
 *
 * Inference owns the cards by day, training by night. The day window is
 * [day_start, day_end) in minutes of the local day of the window's time zone
 * (default 09:00–22:00); if day_start > day_end the window crosses midnight
 * (e.g. 22:00–06:00 is day). day_start == day_end means there is no day at all
 * (always night: no edges).
 *
 * Time: sim_time µs; t = 0 is local midnight of day 0 in the scenario's time
 * zone (sim/core/simtime.h), sim_tz_min minutes east of UTC. The window is given in
 * its own zone, window_tz_min minutes east of UTC, so the window-local clock
 * is t + (window_tz_min − sim_tz_min) minutes. With both zones equal (the
 * usual case) the window-local clock is t mod 24 h. No daylight-saving time.
 *
 * The "graceful lead" is how long before a night→day edge the policy starts
 * handing cards back: checkpoint write + MIG re-layout + inference warm-up, so
 * that inference has its cards at the edge instead of after it.
 *
 * Pure functions of (cfg, t): no state, no I/O, no globals.
 */
#ifndef TIDESIM_POLICY_TIDAL_WINDOW_H
#define TIDESIM_POLICY_TIDAL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/simtime.h"

struct tidal_cfg {
    int32_t day_start_min; /* minute of the local day, 0..1439; default 540 (09:00) */
    int32_t day_end_min;   /* minute of the local day, 0..1439; default 1320 (22:00) */
    int32_t window_tz_min; /* window's zone, minutes east of UTC, |x| <= 1440 */
    int32_t sim_tz_min;    /* scenario zone of t = 0, minutes east of UTC, |x| <= 1440 */
};

/* Defaults: day 09:00–22:00, both zones UTC. */
void tidal_cfg_default(struct tidal_cfg *cfg);

/* 0 if cfg is valid, -EINVAL otherwise. The other functions assume a valid cfg. */
int tidal_check(const struct tidal_cfg *cfg);

/* Whether t lies in the day (inference) window. */
bool tidal_is_day(const struct tidal_cfg *cfg, sim_time t);

/* Smallest edge time > t at which the window changes (either direction), or
 * SIM_TIME_MAX if there are no edges. */
sim_time tidal_next_edge(const struct tidal_cfg *cfg, sim_time t);

/* Smallest time > t at which a day window opens (night→day edge), or
 * SIM_TIME_MAX if there is no day. */
sim_time tidal_next_day_start(const struct tidal_cfg *cfg, sim_time t);

/* Smallest time > t at which a day window closes (day→night edge), or
 * SIM_TIME_MAX if there is no day. */
sim_time tidal_next_day_end(const struct tidal_cfg *cfg, sim_time t);

/* Graceful lead time (µs): checkpoint write + MIG re-layout + warm-up, each >= 0. */
sim_time tidal_lead_time(sim_time ckpt_write, sim_time relayout, sim_time warmup);

/* When to start handing cards back to inference for the next day window after
 * t: tidal_next_day_start(t) − lead, but not before t. SIM_TIME_MAX if no day. */
sim_time tidal_handover_start(const struct tidal_cfg *cfg, sim_time t, sim_time lead);

/* Whether training may run at t with this lead: it is night and the next day
 * window opens more than lead after t. */
bool tidal_training_allowed(const struct tidal_cfg *cfg, sim_time t, sim_time lead);

#endif
