/* autoscale.c — HPA replica recommendation, stabilisation window and start delay. */
#include "sim/autoscale.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void autoscale_cfg_default(struct autoscale_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->capacity = 1.0;
    cfg->target_util = 0.7; /* HPA walkthrough's averageUtilization example */
    cfg->tolerance = 0.1;   /* kube-controller-manager --horizontal-pod-autoscaler-tolerance */
    cfg->min_replicas = 1;  /* HPA minReplicas default */
    cfg->max_replicas = 1000000;
    cfg->initial = 1;
    cfg->up_delay = 60 * SIM_SEC;     /* pod start + model load, scenario-specific */
    cfg->down_window = 300 * SIM_SEC; /* behavior.scaleDown.stabilizationWindowSeconds */
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int autoscale_init(struct autoscale *a, const struct autoscale_cfg *cfg, sim_time now)
{
    memset(a, 0, sizeof *a);
    if (!(cfg->capacity > 0) || !isfinite(cfg->capacity) || !(cfg->target_util > 0) ||
        cfg->target_util > 1 || !(cfg->tolerance >= 0) || cfg->max_replicas < 1 ||
        cfg->min_replicas > cfg->max_replicas || cfg->up_delay < 0 || cfg->down_window < 0)
        return -EINVAL;
    a->cfg = *cfg;
    a->current = clamp_u32(cfg->initial, cfg->min_replicas, cfg->max_replicas);
    a->ready = a->current;
    a->last_t = now;
    return 0;
}

static void promote(struct autoscale *a, sim_time now)
{
    while (a->pend_len > 0 && a->pend[a->pend_head].t <= now) {
        a->ready += a->pend[a->pend_head].n;
        a->pend_head = (a->pend_head + 1) % AUTOSCALE_RING;
        a->pend_len--;
    }
}

/* Replicas needed at the target utilisation, rounding a hair below integers
 * down so that 70 req/s / (10 × 0.7) is 10 replicas, not 11. */
static uint32_t needed(const struct autoscale_cfg *c, double rate)
{
    double x = rate / (c->capacity * c->target_util);
    double n = ceil(x - 1e-9 * (x > 1 ? x : 1));
    if (n <= 0)
        return 0;
    if (n >= (double)UINT32_MAX)
        return UINT32_MAX;
    return (uint32_t)n;
}

uint32_t autoscale_replicas_for(const struct autoscale_cfg *c, double rate)
{
    return clamp_u32(needed(c, rate), c->min_replicas, c->max_replicas);
}

static uint32_t raw_recommendation(const struct autoscale *a, double rate)
{
    const struct autoscale_cfg *c = &a->cfg;
    uint32_t raw;
    if (a->current == 0) {
        raw = needed(c, rate);
    } else {
        double ratio = rate / ((double)a->current * c->capacity * c->target_util);
        raw = fabs(ratio - 1.0) <= c->tolerance ? a->current : needed(c, rate);
    }
    return clamp_u32(raw, c->min_replicas, c->max_replicas);
}

/* Record raw at now in the monotone deque and return the window maximum. */
static uint32_t window_push_max(struct autoscale *a, sim_time now, uint32_t raw)
{
    /* Drop entries that left the window (now − W, now]. */
    while (a->win_len > 0 && a->win[a->win_head].t <= now - a->cfg.down_window) {
        a->win_head = (a->win_head + 1) % AUTOSCALE_RING;
        a->win_len--;
    }
    /* Older entries not larger than raw can never be the maximum again. */
    while (a->win_len > 0) {
        uint32_t back = (a->win_head + a->win_len - 1) % AUTOSCALE_RING;
        if (a->win[back].n > raw)
            break;
        a->win_len--;
    }
    if (a->win_len == AUTOSCALE_RING) {
        /* Full: the newest entry (larger than raw) now also stands for raw's time. */
        uint32_t back = (a->win_head + a->win_len - 1) % AUTOSCALE_RING;
        a->win[back].t = now;
    } else {
        uint32_t slot = (a->win_head + a->win_len) % AUTOSCALE_RING;
        a->win[slot].t = now;
        a->win[slot].n = raw;
        a->win_len++;
    }
    return a->win[a->win_head].n;
}

static void scale_up(struct autoscale *a, sim_time now, uint32_t add)
{
    sim_time at = now + a->cfg.up_delay;
    if (a->cfg.up_delay == 0) {
        a->ready += add;
    } else if (a->pend_len == AUTOSCALE_RING) {
        uint32_t back = (a->pend_head + a->pend_len - 1) % AUTOSCALE_RING;
        a->pend[back].n += add;
        a->pend[back].t = at;
    } else {
        uint32_t slot = (a->pend_head + a->pend_len) % AUTOSCALE_RING;
        a->pend[slot].t = at;
        a->pend[slot].n = add;
        a->pend_len++;
    }
    a->current += add;
}

static void scale_down(struct autoscale *a, uint32_t remove)
{
    a->current -= remove;
    while (remove > 0 && a->pend_len > 0) { /* cancel the newest starting replicas */
        uint32_t back = (a->pend_head + a->pend_len - 1) % AUTOSCALE_RING;
        uint32_t k = a->pend[back].n < remove ? a->pend[back].n : remove;
        a->pend[back].n -= k;
        remove -= k;
        if (a->pend[back].n == 0)
            a->pend_len--;
    }
    a->ready -= remove;
}

int autoscale_observe(struct autoscale *a, sim_time now, double rate)
{
    if (now < a->last_t || !(rate >= 0) || !isfinite(rate))
        return -EINVAL;
    a->last_t = now;
    promote(a, now);
    uint32_t raw = raw_recommendation(a, rate);
    uint32_t down = window_push_max(a, now, raw);
    if (raw > a->current)
        scale_up(a, now, raw - a->current);
    else if (down < a->current)
        scale_down(a, a->current - down);
    return a->current > (uint32_t)INT32_MAX ? INT32_MAX : (int)a->current;
}

int autoscale_ready(struct autoscale *a, sim_time now)
{
    if (now < a->last_t)
        return -EINVAL;
    a->last_t = now;
    promote(a, now);
    return a->ready > (uint32_t)INT32_MAX ? INT32_MAX : (int)a->ready;
}

sim_time autoscale_next_ready(const struct autoscale *a)
{
    return a->pend_len > 0 ? a->pend[a->pend_head].t : SIM_TIME_MAX;
}

uint32_t autoscale_current(const struct autoscale *a)
{
    return a->current;
}
