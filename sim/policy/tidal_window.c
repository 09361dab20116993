/* tidal_window.c — day/night window arithmetic in a time zone. */
#include "sim/policy/tidal_window.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void tidal_cfg_default(struct tidal_cfg *cfg)
{
    cfg->day_start_min = 9 * 60;
    cfg->day_end_min = 22 * 60;
    cfg->window_tz_min = 0;
    cfg->sim_tz_min = 0;
}

int tidal_check(const struct tidal_cfg *cfg)
{
    if (cfg->day_start_min < 0 || cfg->day_start_min >= 1440 || cfg->day_end_min < 0 ||
        cfg->day_end_min >= 1440 || cfg->window_tz_min < -1440 || cfg->window_tz_min > 1440 ||
        cfg->sim_tz_min < -1440 || cfg->sim_tz_min > 1440)
        return -EINVAL;
    return 0;
}

static sim_time shift(const struct tidal_cfg *cfg)
{
    return (sim_time)(cfg->window_tz_min - cfg->sim_tz_min) * SIM_MIN;
}

/* Time of day (µs, 0..SIM_DAY) on the window's clock. */
static sim_time local_tod(const struct tidal_cfg *cfg, sim_time t)
{
    sim_time r = (t + shift(cfg)) % SIM_DAY;
    return r < 0 ? r + SIM_DAY : r;
}

bool tidal_is_day(const struct tidal_cfg *cfg, sim_time t)
{
    sim_time tod = local_tod(cfg, t);
    sim_time s = cfg->day_start_min * SIM_MIN, e = cfg->day_end_min * SIM_MIN;
    if (s == e)
        return false;
    if (s < e)
        return tod >= s && tod < e;
    return tod >= s || tod < e; /* crosses midnight */
}

/* Smallest time > t whose window-local time of day is `edge_min`. */
static sim_time next_at(const struct tidal_cfg *cfg, sim_time t, int32_t edge_min)
{
    sim_time tod = local_tod(cfg, t);
    sim_time d = edge_min * SIM_MIN - tod;
    if (d <= 0)
        d += SIM_DAY;
    return t + d;
}

sim_time tidal_next_day_start(const struct tidal_cfg *cfg, sim_time t)
{
    if (cfg->day_start_min == cfg->day_end_min)
        return SIM_TIME_MAX;
    return next_at(cfg, t, cfg->day_start_min);
}

sim_time tidal_next_day_end(const struct tidal_cfg *cfg, sim_time t)
{
    if (cfg->day_start_min == cfg->day_end_min)
        return SIM_TIME_MAX;
    return next_at(cfg, t, cfg->day_end_min);
}

sim_time tidal_next_edge(const struct tidal_cfg *cfg, sim_time t)
{
    sim_time a = tidal_next_day_start(cfg, t), b = tidal_next_day_end(cfg, t);
    return a < b ? a : b;
}

sim_time tidal_lead_time(sim_time ckpt_write, sim_time relayout, sim_time warmup)
{
    return ckpt_write + relayout + warmup;
}

sim_time tidal_handover_start(const struct tidal_cfg *cfg, sim_time t, sim_time lead)
{
    sim_time e = tidal_next_day_start(cfg, t);
    if (e == SIM_TIME_MAX)
        return SIM_TIME_MAX;
    return e - lead > t ? e - lead : t;
}

bool tidal_training_allowed(const struct tidal_cfg *cfg, sim_time t, sim_time lead)
{
    if (tidal_is_day(cfg, t))
        return false;
    sim_time e = tidal_next_day_start(cfg, t);
    return e == SIM_TIME_MAX || e - t > lead;
}

int64_t tidal_pick_victims(const struct tidal_victim *v, size_t n, uint32_t need, bool *take)
{
    uint64_t total = 0;
    uint32_t biggest = 0;
    for (size_t i = 0; i < n; i++) {
        total += v[i].gpus;
        biggest = v[i].gpus > biggest ? v[i].gpus : biggest;
    }
    if (need == 0 || total <= need) {
        for (size_t i = 0; i < n; i++)
            take[i] = need > 0;
        return need > 0 ? (int64_t)total : 0;
    }
    /*
     * 0/1 knapsack over card counts: loss[c] = least work lost by a set of
     * jobs holding exactly c cards (c < need + biggest: the smallest reachable
     * count >= need is below that, since adding one job to a set below need
     * passes need by less than a gang). took[i][c]: job i is in the best set
     * of c cards among jobs 0..i. A strict improvement is required to switch,
     * so ties keep the lower indices.
     */
    size_t width = (size_t)need + biggest;
    double *loss = malloc(width * sizeof(*loss));
    unsigned char *took = calloc(n * width, 1);
    if (!loss || !took) {
        free(loss);
        free(took);
        return -ENOMEM;
    }
    loss[0] = 0;
    for (size_t c = 1; c < width; c++)
        loss[c] = HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        size_t g = v[i].gpus;
        double w = v[i].work_us * (double)v[i].gpus;
        for (size_t c = width - 1; c >= g && g > 0; c--)
            if (loss[c - g] + w < loss[c]) {
                loss[c] = loss[c - g] + w;
                took[i * width + c] = 1;
            }
    }
    size_t c = need;
    while (loss[c] == HUGE_VAL) /* total > need: some count in [need, width) is reachable */
        c++;
    int64_t freed = (int64_t)c;
    for (size_t i = n; i-- > 0;) {
        take[i] = took[i * width + c] != 0;
        if (take[i])
            c -= v[i].gpus;
    }
    free(loss);
    free(took);
    return freed;
}
