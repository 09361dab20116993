/* share.c — per-card sharing math (see share.h). */
#include "models/share.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

static const char mode_names[][12] = {
    [SHARE_EXCLUSIVE] = "exclusive",
    [SHARE_TIMESLICE] = "timeslice",
    [SHARE_MPS] = "mps",
    [SHARE_MIG] = "mig",
};

void share_knobs_init(struct share_knobs *k)
{
    k->ts_slice_s = SHARE_TS_SLICE_S_DEFAULT;
    k->ts_overhead = SHARE_TS_OVERHEAD_DEFAULT;
    k->mps_interference = SHARE_MPS_INTERFERENCE_DEFAULT;
    k->mps_max_clients = SHARE_MPS_MAX_CLIENTS;
    k->fault_rate_per_h = SHARE_FAULT_RATE_DEFAULT;
}

int share_knobs_check(const struct share_knobs *k)
{
    if (!(k->ts_slice_s > 0.0) || !(k->ts_overhead >= 0.0 && k->ts_overhead < 1.0) ||
        !(k->mps_interference >= 0.0) || k->mps_max_clients < 1 ||
        k->mps_max_clients > SHARE_MPS_MAX_CLIENTS || !(k->fault_rate_per_h >= 0.0))
        return -EINVAL;
    return 0;
}

void share_tenant_init(struct share_tenant *t)
{
    memset(t, 0, sizeof *t);
    t->active = true;
    t->demand = 1.0;
    t->sm_cap = 1.0;
    t->slice_speed = 1.0;
}

const char *share_mode_name(enum share_mode mode)
{
    if ((unsigned)mode < sizeof mode_names / sizeof mode_names[0])
        return mode_names[mode];
    return "?";
}

int share_mode_parse(const char *s, enum share_mode *out)
{
    for (size_t i = 0; s && i < sizeof mode_names / sizeof mode_names[0]; i++) {
        if (strcasecmp(s, mode_names[i]) == 0) {
            *out = (enum share_mode)i;
            return 0;
        }
    }
    return -EINVAL;
}

static bool in_unit(double x)
{
    return x > 0.0 && x <= 1.0;
}

/* Time-slice share of one of `active` tenants: 1 alone, else (1 - overhead)/active. */
static double ts_share(const struct share_knobs *k, size_t active)
{
    if (active <= 1)
        return 1.0;
    return (1.0 - k->ts_overhead) / (double)active;
}

/* A tenant's time slice: its own, or the card's. */
static double ts_slice(const struct share_knobs *k, const struct share_tenant *t)
{
    return t->ts_slice_s > 0.0 ? t->ts_slice_s : k->ts_slice_s;
}

/* MPS: water-fill SMs among active clients wanting u[i], then apply interference. */
static void mps_speeds(const struct share_knobs *k, const struct share_tenant *t, size_t n,
                       double *speed)
{
    double total_u = 0.0;
    size_t active = 0;
    for (size_t i = 0; i < n; i++) {
        speed[i] = 0.0;
        if (t[i].active) {
            double u = t[i].demand < t[i].sm_cap ? t[i].demand : t[i].sm_cap;
            speed[i] = u; /* holds the granted SM share until the last loop */
            total_u += u;
            active++;
        }
    }
    if (total_u > 1.0) {
        /* Max-min fairness: repeatedly give every unsatisfied client an equal part of what is
         * left; those wanting less keep their want. At most n rounds, n <= 48. */
        double left = 1.0;
        size_t open = active;
        bool fixed[SHARE_MPS_MAX_CLIENTS] = {false};
        while (open > 0) {
            double fair = left / (double)open;
            bool changed = false;
            for (size_t i = 0; i < n; i++) {
                if (!t[i].active || fixed[i] || speed[i] > fair)
                    continue;
                fixed[i] = true;
                left -= speed[i];
                open--;
                changed = true;
            }
            if (!changed) {
                for (size_t i = 0; i < n; i++)
                    if (t[i].active && !fixed[i])
                        speed[i] = fair;
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!t[i].active)
            continue;
        double others = 0.0;
        for (size_t j = 0; j < n; j++) {
            if (j != i && t[j].active)
                others += t[j].demand < t[j].sm_cap ? t[j].demand : t[j].sm_cap;
        }
        speed[i] = speed[i] / t[i].demand / (1.0 + k->mps_interference * others);
    }
}

int share_speeds(enum share_mode mode, const struct share_knobs *k, const struct share_tenant *t,
                 size_t n, double *speed)
{
    if (share_knobs_check(k))
        return -EINVAL;
    size_t active = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in_unit(t[i].demand) || !in_unit(t[i].sm_cap) || !in_unit(t[i].slice_speed))
            return -EINVAL;
        active += t[i].active;
    }
    switch (mode) {
    case SHARE_EXCLUSIVE:
        if (n > 1)
            return -E2BIG;
        for (size_t i = 0; i < n; i++)
            speed[i] = t[i].active ? 1.0 : 0.0;
        return 0;
    case SHARE_TIMESLICE: {
        /* Round-robin: tenant i's slice T_i of every turn Σ(T_j + s); alone, the whole card. */
        double sw = share_ts_switch_s(k), turn = 0.0;
        for (size_t i = 0; i < n; i++)
            if (t[i].active)
                turn += ts_slice(k, &t[i]) + sw;
        for (size_t i = 0; i < n; i++)
            speed[i] = !t[i].active ? 0.0 : active <= 1 ? 1.0 : ts_slice(k, &t[i]) / turn;
        return 0;
    }
    case SHARE_MPS:
        if (n > (size_t)k->mps_max_clients)
            return -E2BIG;
        mps_speeds(k, t, n, speed);
        return 0;
    case SHARE_MIG:
        for (size_t i = 0; i < n; i++) {
            size_t same = 0;
            for (size_t j = 0; j < n; j++)
                same += t[j].active && t[j].group == t[i].group;
            speed[i] = t[i].active ? t[i].slice_speed * ts_share(k, same) : 0.0;
        }
        return 0;
    }
    return -EINVAL;
}

double share_ts_switch_s(const struct share_knobs *k)
{
    return k->ts_overhead / (1.0 - k->ts_overhead) * k->ts_slice_s;
}

/* The others' turn (k >= 1 others of slice to): P of share.h, the period of the last one's ends. */
static double ts_period(double to, double sw, unsigned others)
{
    return others == 1 ? to : (double)others * (to + sw);
}

/* Relative slack for slice-boundary arithmetic (a batch ending exactly on a boundary). */
#define TS_EPS 1e-12

int share_ts_batch(const struct share_knobs *k, double work_s, double own_slice_s, unsigned others,
                   double others_slice_s, double gap_s, double offset_s, struct share_ts_batch *out)
{
    if (!(work_s >= 0.0) || !(own_slice_s > 0.0) || !(others_slice_s > 0.0) ||
        !(offset_s >= 0.0 && offset_s <= own_slice_s * (1 + TS_EPS)) || isnan(gap_s))
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if (others == 0) {
        /* Alone: it runs on; its slice timer re-arms (no switch, no wait). */
        out->latency_s = work_s;
        out->end_offset_s = fmod((gap_s == 0.0 ? offset_s : 0.0) + work_s, own_slice_s);
        return 0;
    }
    double sw = share_ts_switch_s(k), to = others_slice_s, kk = (double)others;
    double period = ts_period(to, sw, others), first = kk * (to + sw);
    double u = 0.0;
    if (gap_s > 0.0) {
        /* The last other in ring order ends a slice at first + m·P; it goes next, after a switch.
         */
        double m = gap_s > first ? ceil((gap_s - first) / period - TS_EPS) : 0.0;
        out->wait_s = first + m * period - gap_s + sw;
    } else if (gap_s < 0.0) {
        out->wait_s = period / 2.0 + sw;
    } else {
        u = offset_s;
    }
    double n = ceil((u + work_s) / own_slice_s - TS_EPS) - 1.0;
    if (n < 0.0)
        n = 0.0;
    double round = kk * to + (kk + 1.0) * sw;
    out->latency_s = out->wait_s + work_s + n * round;
    out->end_offset_s = u + work_s - n * own_slice_s;
    out->visits = (unsigned)n + (gap_s == 0.0 ? 0u : 1u);
    out->debt_s = others == 1 ? work_s + 2.0 * sw * out->visits
                              : to / (to + sw) * (work_s + sw * out->visits);
    return 0;
}

double share_ts_expected_wait_s(const struct share_knobs *k, size_t others_active)
{
    if (others_active == 0)
        return 0.0;
    double sw = share_ts_switch_s(k);
    return ts_period(k->ts_slice_s, sw, (unsigned)others_active) / 2.0 + sw;
}

double share_ts_max_wait_s(const struct share_knobs *k, size_t others_active)
{
    if (others_active == 0)
        return 0.0;
    double sw = share_ts_switch_s(k);
    return ts_period(k->ts_slice_s, sw, (unsigned)others_active) + sw;
}

size_t share_oom(enum share_mode mode, const struct share_tenant *t, size_t n, double cap_gib,
                 bool *killed)
{
    size_t dead = 0;
    double used = 0.0;
    for (size_t i = 0; i < n; i++) {
        double mem = t[i].mem_gib, limit = t[i].mem_limit_gib;
        double req =
            t[i].mem_quota_gib > 0.0 && t[i].mem_quota_gib < mem ? t[i].mem_quota_gib : mem;
        killed[i] = false;
        if (limit > 0.0 && mem > limit && mode != SHARE_MIG) {
            killed[i] = true; /* over its enforced limit: its own allocation fails */
        } else if (used + mem <= cap_gib) {
            used += mem;
        } else if (mode == SHARE_TIMESLICE && req < mem && used + req <= cap_gib) {
            /* Its request fits, its excess overflows the shared pool: the card-mates die. */
            for (size_t j = 0; j < i; j++)
                if (!killed[j]) {
                    killed[j] = true;
                    dead++;
                }
            used = 0.0;
            if (mem <= cap_gib)
                used = mem;
            else
                killed[i] = true;
        } else {
            killed[i] = true;
        }
        dead += killed[i];
    }
    return dead;
}

size_t share_fault_victims(enum share_mode mode, const struct share_tenant *t, size_t n,
                           size_t faulting, bool *dies)
{
    size_t dead = 0;
    for (size_t i = 0; i < n; i++) {
        switch (mode) {
        case SHARE_EXCLUSIVE:
            dies[i] = i == faulting;
            break;
        case SHARE_TIMESLICE:
        case SHARE_MPS:
            dies[i] = faulting < n;
            break;
        case SHARE_MIG:
            dies[i] = faulting < n && t[i].group == t[faulting].group;
            break;
        default:
            dies[i] = false;
        }
        dead += dies[i];
    }
    return dead;
}
