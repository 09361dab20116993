/* adaptive_forecast.c — per-slot seasonal history, level ratio and fallback. */
#include "sim/policy/adaptive_forecast.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

struct recent {
    int64_t slot; /* absolute slot number */
    double mean;
};

struct forecast {
    struct forecast_cfg cfg;
    uint32_t per_day;
    double *hist;     /* [days][per_day], NAN = unknown */
    int64_t *row_day; /* day number held by each row, -1 none */
    struct recent *ring;
    uint32_t ring_cap, ring_head, ring_len;
    int64_t cur; /* absolute slot in progress, -1 none */
    double cur_sum;
    uint32_t cur_n;
    sim_time last_t;
};

void forecast_cfg_default(struct forecast_cfg *cfg)
{
    cfg->slot = 5 * SIM_MIN;
    cfg->days = 7;
    cfg->min_days = 1;
    cfg->agg = FORECAST_MEAN;
    cfg->margin = 0.1;
    cfg->level_weight = 0;
    cfg->level_slots = 6;
    cfg->recent_slots = 12;
    cfg->weekly = false;
}

struct forecast *forecast_create(const struct forecast_cfg *cfg)
{
    if (cfg->slot <= 0 || SIM_DAY % cfg->slot != 0 || cfg->days < 1 ||
        cfg->days > FORECAST_MAX_DAYS || cfg->min_days < 1 || !(cfg->margin >= 0) ||
        !(cfg->level_weight >= 0) || cfg->level_weight > 1 || cfg->level_slots < 1 ||
        cfg->recent_slots < 1 || (cfg->agg != FORECAST_MEAN && cfg->agg != FORECAST_MAX) ||
        (cfg->weekly && cfg->days < 8))
        return NULL;
    struct forecast *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->cfg = *cfg;
    f->per_day = (uint32_t)(SIM_DAY / cfg->slot);
    f->ring_cap = cfg->level_slots > cfg->recent_slots ? cfg->level_slots : cfg->recent_slots;
    f->hist = malloc((size_t)cfg->days * f->per_day * sizeof *f->hist);
    f->row_day = malloc(cfg->days * sizeof *f->row_day);
    f->ring = malloc(f->ring_cap * sizeof *f->ring);
    if (!f->hist || !f->row_day || !f->ring) {
        forecast_destroy(f);
        return NULL;
    }
    for (size_t i = 0; i < (size_t)cfg->days * f->per_day; i++)
        f->hist[i] = NAN;
    for (uint32_t d = 0; d < cfg->days; d++)
        f->row_day[d] = -1;
    f->cur = -1;
    f->last_t = INT64_MIN;
    return f;
}

void forecast_destroy(struct forecast *f)
{
    if (!f)
        return;
    free(f->hist);
    free(f->row_day);
    free(f->ring);
    free(f);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t slot_of(const struct forecast *f, sim_time t)
{
    return floor_div(t, f->cfg.slot);
}

static void finish_slot(struct forecast *f)
{
    if (f->cur_n == 0)
        return;
    double mean = f->cur_sum / f->cur_n;
    int64_t day = floor_div(f->cur, f->per_day);
    uint32_t s = (uint32_t)(f->cur - day * f->per_day);
    uint32_t row = (uint32_t)(((day % f->cfg.days) + f->cfg.days) % f->cfg.days);
    if (f->row_day[row] != day) { /* a new day takes over the oldest row */
        for (uint32_t i = 0; i < f->per_day; i++)
            f->hist[(size_t)row * f->per_day + i] = NAN;
        f->row_day[row] = day;
    }
    f->hist[(size_t)row * f->per_day + s] = mean;
    uint32_t at = (f->ring_head + f->ring_len) % f->ring_cap;
    if (f->ring_len == f->ring_cap) {
        at = f->ring_head;
        f->ring_head = (f->ring_head + 1) % f->ring_cap;
    } else {
        f->ring_len++;
    }
    f->ring[at] = (struct recent){f->cur, mean};
}

int forecast_observe(struct forecast *f, sim_time now, double rate)
{
    if (now < f->last_t || !(rate >= 0) || !isfinite(rate))
        return -EINVAL;
    f->last_t = now;
    int64_t a = slot_of(f, now);
    if (a != f->cur) {
        if (f->cur_n > 0)
            finish_slot(f);
        f->cur = a;
        f->cur_sum = 0;
        f->cur_n = 0;
    }
    f->cur_sum += rate;
    f->cur_n++;
    return 0;
}

/* Seasonal base for absolute slot a from the kept days before a's day; the
 * number of days used goes to *n. */
static double seasonal(const struct forecast *f, int64_t a, uint32_t *n)
{
    int64_t day = floor_div(a, f->per_day);
    uint32_t s = (uint32_t)(a - day * f->per_day);
    double acc = 0;
    *n = 0;
    if (f->cfg.weekly) {
        uint32_t r = (uint32_t)((((day - 7) % f->cfg.days) + f->cfg.days) % f->cfg.days);
        double v = f->row_day[r] == day - 7 ? f->hist[(size_t)r * f->per_day + s] : NAN;
        if (!isnan(v)) {
            *n = f->cfg.min_days; /* a week's own value: a full seasonal forecast */
            return v;
        }
    }
    for (uint32_t r = 0; r < f->cfg.days; r++) {
        int64_t d = f->row_day[r];
        if (d < 0 || d >= day || d < day - (int64_t)f->cfg.days)
            continue;
        double v = f->hist[(size_t)r * f->per_day + s];
        if (isnan(v))
            continue;
        acc = f->cfg.agg == FORECAST_MAX ? (*n == 0 || v > acc ? v : acc) : acc + v;
        (*n)++;
    }
    if (*n == 0)
        return 0;
    return f->cfg.agg == FORECAST_MAX ? acc : acc / *n;
}

/* Observed / usual over the last level_slots completed slots; 1 if unknown. */
static double level(const struct forecast *f)
{
    double obs = 0, usual = 0;
    uint32_t k = f->ring_len < f->cfg.level_slots ? f->ring_len : f->cfg.level_slots;
    for (uint32_t i = 0; i < k; i++) {
        const struct recent *r = &f->ring[(f->ring_head + f->ring_len - 1 - i) % f->ring_cap];
        uint32_t n;
        double b = seasonal(f, r->slot, &n);
        if (n == 0)
            continue;
        obs += r->mean;
        usual += b;
    }
    return usual > 0 ? obs / usual : 1.0;
}

int forecast_predict(const struct forecast *f, sim_time t, double *out)
{
    uint32_t n;
    double base = seasonal(f, slot_of(f, t), &n);
    *out = 0;
    if (n >= f->cfg.min_days) {
        double w = f->cfg.level_weight;
        double lv = w > 0 ? level(f) : 1.0;
        *out = base * ((1 - w) + w * lv) * (1 + f->cfg.margin);
        return 0;
    }
    /* Fallback: the recent maximum. */
    bool any = false;
    double m = 0;
    if (f->cur_n > 0) {
        m = f->cur_sum / f->cur_n;
        any = true;
    }
    uint32_t k = f->ring_len < f->cfg.recent_slots ? f->ring_len : f->cfg.recent_slots;
    for (uint32_t i = 0; i < k; i++) {
        const struct recent *r = &f->ring[(f->ring_head + f->ring_len - 1 - i) % f->ring_cap];
        if (f->cur >= 0 && r->slot <= f->cur - (int64_t)f->cfg.recent_slots)
            break;
        m = any && m >= r->mean ? m : r->mean;
        any = true;
    }
    if (!any)
        return -ENODATA;
    *out = m * (1 + f->cfg.margin);
    return 0;
}

int forecast_peak(const struct forecast *f, sim_time from, sim_time to, double *out)
{
    *out = 0;
    if (to < from)
        return -EINVAL;
    double best = 0;
    for (int64_t a = slot_of(f, from); a <= slot_of(f, to); a++) {
        double v;
        int rc = forecast_predict(f, a * f->cfg.slot, &v);
        if (rc)
            return rc;
        best = v > best ? v : best;
    }
    *out = best;
    return 0;
}
