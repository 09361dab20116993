/* kai_fairshare.c — KAI fair-share water-filling, reclaim rules, priorities, usage history. */
#include "sim/policy/kai_fairshare.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define EPS 1e-9

double kai_cap(const struct kai_queue *q)
{
    if (q->limit < 0)
        return INFINITY;
    double quota = q->quota < 0 ? INFINITY : q->quota;
    return q->limit > quota ? q->limit : quota;
}

static double demand(const struct kai_queue *q)
{
    double c = kai_cap(q);
    return q->request < c ? q->request : c;
}

static double deserved(const struct kai_queue *q)
{
    double d = demand(q);
    return q->quota < 0 || q->quota > d ? d : q->quota;
}

/* Highest sibling priority strictly below `below` (INT64_MIN if none). */
static int64_t next_level(const struct kai_queue *q, uint32_t n, int32_t p, int64_t below)
{
    int64_t best = INT64_MIN;
    for (uint32_t i = 0; i < n; i++)
        if (q[i].parent == p && q[i].priority < below && q[i].priority > best)
            best = q[i].priority;
    return best;
}

struct weights {
    double sum_w, sum_hist, k;
    bool adjusted;
};

static double weight_of(const struct kai_queue *q, const struct weights *w)
{
    if (!w->adjusted || w->sum_hist <= 0 || w->sum_w <= 0)
        return q->weight;
    double ws = q->weight / w->sum_w, us = q->hist / w->sum_hist;
    double a = ws + w->k * (ws - us);
    return a > 0 ? a : 0;
}

/* Water-fill *left among siblings of p at priority `level` by weight. */
static void waterfill(struct kai_queue *q, uint32_t n, int32_t p, int64_t level, double *left,
                      const struct weights *w)
{
    for (uint32_t round = 0; round <= n && *left > EPS; round++) {
        double sum = 0;
        for (uint32_t i = 0; i < n; i++)
            if (q[i].parent == p && q[i].priority == level && q[i].fair_share < demand(&q[i]) - EPS)
                sum += weight_of(&q[i], w);
        if (sum <= 0)
            return;
        double given = 0, avail = *left;
        for (uint32_t i = 0; i < n; i++) {
            if (q[i].parent != p || q[i].priority != level ||
                !(q[i].fair_share < demand(&q[i]) - EPS))
                continue;
            double g = avail * weight_of(&q[i], w) / sum;
            double room = demand(&q[i]) - q[i].fair_share;
            g = g < room ? g : room;
            q[i].fair_share += g;
            given += g;
        }
        *left -= given;
        if (given <= EPS)
            return;
    }
}

/* Divide `amount` among the children of p (p = -1: top level). */
static void divide(struct kai_queue *q, uint32_t n, int32_t p, double amount, double k)
{
    struct weights w = {0, 0, k, k > 0};
    for (uint32_t i = 0; i < n; i++) {
        if (q[i].parent != p)
            continue;
        q[i].fair_share = 0;
        w.sum_w += q[i].weight;
        w.sum_hist += q[i].hist;
    }
    double left = amount;
    /* 1. In-quota, priority level by level. */
    for (int64_t lv = next_level(q, n, p, INT64_MAX); lv != INT64_MIN;
         lv = next_level(q, n, p, lv)) {
        double want = 0;
        for (uint32_t i = 0; i < n; i++)
            if (q[i].parent == p && q[i].priority == lv)
                want += deserved(&q[i]);
        double f = want <= left ? 1.0 : (want > 0 ? left / want : 0);
        for (uint32_t i = 0; i < n; i++)
            if (q[i].parent == p && q[i].priority == lv)
                q[i].fair_share = deserved(&q[i]) * f;
        left -= want * f;
    }
    /* 2. Over-quota by (time-adjusted) weight; 3. leftover by configured weight. */
    for (int pass = 0; pass < 2; pass++) {
        struct weights ww = w;
        ww.adjusted = pass == 0 && w.adjusted;
        for (int64_t lv = next_level(q, n, p, INT64_MAX); lv != INT64_MIN && left > EPS;
             lv = next_level(q, n, p, lv))
            waterfill(q, n, p, lv, &left, &ww);
    }
}

int kai_fair_share(struct kai_queue *q, uint32_t n, double capacity, double k)
{
    if (!(capacity >= 0) || !(k >= 0) || n > INT32_MAX)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (q[i].parent >= (int32_t)i || q[i].parent < -1 || !(q[i].weight >= 0) ||
            !(q[i].request >= 0) || !(q[i].hist >= 0) || q[i].quota < -1.0 || q[i].limit < -1.0)
            return -EINVAL;
    /* Parents' request: sum of their children's demand, children first. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if (q[j].parent == (int32_t)i) {
                q[i].request = 0;
                break;
            }
    for (uint32_t i = n; i-- > 0;)
        if (q[i].parent >= 0)
            q[q[i].parent].request += demand(&q[i]);
    divide(q, n, -1, capacity, k);
    for (uint32_t i = 0; i < n; i++) /* parents precede children: shares are final */
        divide(q, n, (int32_t)i, q[i].fair_share, k);
    return 0;
}

double kai_reclaimable(const struct kai_queue *q, double allocated, double nonpreemptible)
{
    if (q->quota < 0)
        return 0; /* everything it holds is in quota */
    double in_quota = allocated < q->quota ? allocated : q->quota;
    double keep = q->fair_share > in_quota ? q->fair_share : in_quota;
    double over = allocated - keep, preemptible = allocated - nonpreemptible;
    double r = over < preemptible ? over : preemptible;
    return r > 0 ? r : 0;
}

double kai_reclaim_need(const struct kai_queue *q, double allocated)
{
    double d = q->fair_share - allocated;
    return d > 0 ? d : 0;
}

bool kai_preemptible(int32_t priority)
{
    return priority < KAI_NONPREEMPTIBLE;
}

bool kai_admissible(const struct kai_queue *q, double allocated, double nonpreemptible,
                    double units, int32_t priority)
{
    if (allocated + units > kai_cap(q) + EPS)
        return false;
    if (kai_preemptible(priority) || q->quota < 0)
        return true;
    return nonpreemptible + units <= q->quota + EPS;
}

struct prio_class {
    const char *name;
    int32_t value;
};

static const struct prio_class classes[] = {
    {"train", KAI_PRIO_TRAIN},
    {"build-preemptible", KAI_PRIO_BUILD_PREEMPTIBLE},
    {"build", KAI_PRIO_BUILD},
    {"inference", KAI_PRIO_INFERENCE},
};

int kai_priority_class(const char *name, int32_t *value)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strcmp(name, classes[i].name) == 0) {
            *value = classes[i].value;
            return 0;
        }
    return -ENOENT;
}

double kai_request_units(const struct kai_request *r, double device_mib)
{
    if (r->gpus > 0)
        return (double)r->gpus;
    if (r->fraction > 0)
        return r->fraction <= 1 ? r->fraction : -EINVAL;
    if (r->memory_mib > 0) {
        if (!(device_mib > 0) || r->memory_mib > device_mib)
            return -EINVAL;
        return r->memory_mib / device_mib;
    }
    if (r->mig_g > 0 && r->mig_g <= 7)
        return (double)r->mig_g;
    return -EINVAL;
}

int kai_usage_init(struct kai_usage *u, sim_time now, sim_time window, sim_time half_life)
{
    memset(u, 0, sizeof *u);
    if (window < KAI_HIST_BUCKETS || half_life <= 0)
        return -EINVAL;
    u->bucket = window / KAI_HIST_BUCKETS;
    u->half_life = half_life;
    u->start = now;
    for (uint32_t i = 0; i < KAI_HIST_BUCKETS; i++)
        u->idx[i] = -1;
    return 0;
}

static int64_t floor_div(sim_time t, sim_time b)
{
    int64_t q = t / b;
    return (t % b != 0 && t < 0) ? q - 1 : q;
}

void kai_usage_add(struct kai_usage *u, sim_time t0, sim_time t1, double gpus)
{
    if (t0 < u->start)
        t0 = u->start;
    while (t0 < t1) {
        int64_t a = floor_div(t0, u->bucket);
        sim_time end = (a + 1) * u->bucket;
        sim_time stop = end < t1 ? end : t1;
        uint32_t slot = (uint32_t)(((a % KAI_HIST_BUCKETS) + KAI_HIST_BUCKETS) % KAI_HIST_BUCKETS);
        if (u->idx[slot] < a) { /* stale or empty: reuse */
            u->idx[slot] = a;
            u->gpu_s[slot] = 0;
        }
        if (u->idx[slot] == a)
            u->gpu_s[slot] += gpus * sim_time_to_sec(stop - t0);
        t0 = stop;
    }
}

double kai_usage_normalised(const struct kai_usage *u, sim_time now, double capacity)
{
    int64_t a_now = floor_div(now, u->bucket);
    int64_t a_first = a_now - KAI_HIST_BUCKETS + 1;
    double num = 0, den = 0;
    for (int64_t a = a_first; a <= a_now; a++) {
        sim_time lo = a * u->bucket, hi = lo + u->bucket;
        if (lo < u->start)
            lo = u->start;
        if (hi > now)
            hi = now;
        if (hi <= lo)
            continue;
        double age = sim_time_to_sec(now - a * u->bucket - u->bucket / 2);
        double decay = pow(0.5, age / sim_time_to_sec(u->half_life));
        den += capacity * sim_time_to_sec(hi - lo) * decay;
        uint32_t slot = (uint32_t)(((a % KAI_HIST_BUCKETS) + KAI_HIST_BUCKETS) % KAI_HIST_BUCKETS);
        if (u->idx[slot] == a)
            num += u->gpu_s[slot] * decay;
    }
    return den > 0 ? num / den : 0;
}
