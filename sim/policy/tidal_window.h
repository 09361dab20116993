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
 * The hand-over choice (tidal_pick_victims) is pure too: which running
 * training jobs to preempt so that the day target gets the cards it lacks and
 * no more, losing the least work.
 *
 * Pure functions of their arguments: no state, no I/O, no globals.
 */
#ifndef TIDESIM_POLICY_TIDAL_WINDOW_H
#define TIDESIM_POLICY_TIDAL_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
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

/* A running training job the hand-over may preempt. */
struct tidal_victim {
    uint32_t gpus;  /* cards it gives back, >= 1 */
    double work_us; /* work since its last checkpoint, µs at full speed (per member), >= 0 */
};

/*
 * Choose victims among v[0..n) that give back at least `need` cards: the
 * fewest cards that reach need (exactly need whenever some set of the jobs
 * holds exactly that many), and among the sets of that size the one losing the
 * least work, Σ work_us × gpus (GPU-µs since the last checkpoint); among equal
 * losses, earlier jobs are kept as victims. For single-card jobs this is simply the
 * `need` jobs with the least work since their checkpoint. take[i] (n entries,
 * caller-owned) is set for every victim and cleared for the others. When all
 * the jobs together hold fewer than need cards, all are taken.
 *
 * Returns the cards the victims give back (0 when need is 0), or -ENOMEM
 * (take unchanged). O(n × (need + largest gang)) time and bytes.
 */
int64_t tidal_pick_victims(const struct tidal_victim *v, size_t n, uint32_t need, bool *take);

#endif
