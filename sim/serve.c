/* serve.c — inference serving: lazy arrivals in a ring, dynamic batching, replicas. */
#include "sim/serve.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/latency.h"
#include "sim/llm.h"

/* Arrivals drawn from the source per call (see refill). */
#define SERVE_FILL 64

static inline sim_time ring_at(const struct service *s, uint64_t i)
{
    return s->ring[(s->head + i) & s->mask];
}

static int ring_grow(struct service *s)
{
    uint64_t cap = (s->mask + 1) * 2;
    sim_time *r = malloc(cap * sizeof(*r));
    if (!r)
        return -ENOMEM;
    for (uint64_t i = 0; i < s->len; i++)
        r[i] = ring_at(s, i);
    free(s->ring);
    s->ring = r;
    s->mask = cap - 1;
    s->head = 0;
    return 0;
}

static void fail(struct service *s, int rc, const char *msg)
{
    s->src_done = true;
    s->src_error = rc;
    if (msg)
        snprintf(s->src_err.msg, sizeof(s->src_err.msg), "%s", msg);
    s->eng->stop = true;
}

/*
 * Draw the next chunk of arrivals (up to SERVE_FILL) onto the end of the
 * ring, in one call to the source: the per-arrival cost is then the draw
 * itself. Drawing ahead changes no number (the source's times are what they
 * are), only how far ahead the ring holds them.
 */
static void refill(struct service *s)
{
    if (s->src_done)
        return;
    while (s->len + SERVE_FILL > s->mask + 1)
        if (ring_grow(s)) {
            fail(s, -ENOMEM, "out of memory in the request queue");
            return;
        }
    uint64_t tail = (s->head + s->len) & s->mask;
    uint64_t room = s->mask + 1 - tail; /* contiguous up to the wrap */
    uint32_t n = 0;
    int rc = arrival_source_fill(
        s->src, &s->ring[tail], (uint32_t)(room < SERVE_FILL ? room : SERVE_FILL), &n, &s->src_err);
    s->len += n;
    if (rc == 1)
        s->src_done = true;
    else if (rc < 0)
        fail(s, rc, NULL);
}

/*
 * Entries narrived..i-1 have arrived, and the first w - narrived of them were
 * kept (moved down to narrived..w-1); the rest were dropped. Count them and
 * close the gap the drops left.
 */
static void settle(struct service *s, uint64_t i, uint64_t w)
{
    s->tot.arrived += i - s->narrived;
    s->win.arrived += i - s->narrived;
    s->tot.dropped += i - w;
    s->win.dropped += i - w;
    if (w < i) {
        for (uint64_t k = i; k < s->len; k++)
            s->ring[(s->head + w + k - i) & s->mask] = ring_at(s, k);
        s->len -= i - w;
    }
    s->narrived = w;
}

/*
 * Count the arrivals up to now, keeping one drawn ahead. An arrival that
 * finds max_queue requests waiting is dropped: one pass keeps the others
 * (read index i, write index w), then settle() closes the gaps.
 */
static void count_arrivals_slow(struct service *s, sim_time now)
{
    uint64_t mq = s->cfg->max_queue;
    for (;;) {
        uint64_t i = s->narrived, w = s->narrived;
        while (i < s->len && ring_at(s, i) <= now) {
            if (w < mq) {
                if (w != i)
                    s->ring[(s->head + w) & s->mask] = ring_at(s, i);
                w++;
            }
            i++;
        }
        bool all_arrived = i == s->len && !s->src_done;
        settle(s, i, w);
        if (!all_arrived)
            return;
        refill(s); /* everything drawn has arrived: draw more */
    }
}

static inline void count_arrivals(struct service *s, sim_time now)
{
    /* Most calls find the next drawn arrival still ahead: nothing to count. */
    if (s->narrived < s->len && ring_at(s, s->narrived) > now)
        return;
    count_arrivals_slow(s, now);
}

static void begin_batch(struct service *s, struct replica *r, uint32_t n, sim_time start);

/*
 * Move the queue up to now: reserved batches whose start has come begin, in
 * time order with the arrivals (an arrival at a batch's start counts first,
 * as it would at a wake-up event then).
 */
static void pull(struct service *s, sim_time now)
{
    while (s->resv_len) {
        uint32_t ri = s->resv[s->resv_head];
        struct replica *r = &s->reps[ri];
        if (r->batch_start > now)
            break;
        count_arrivals(s, r->batch_start);
        s->resv_head = (s->resv_head + 1) & (s->cap_reps - 1);
        s->resv_len--;
        s->resv_req -= r->batch_n;
        r->reserved = false;
        begin_batch(s, r, r->batch_n, r->batch_start);
    }
    count_arrivals(s, now);
}

/* Make sure at least k requests are drawn (future ones included), unless the source ends. */
static void lookahead(struct service *s, uint64_t k)
{
    while (s->len < k && !s->src_done)
        refill(s);
}

static double jitter(struct service *s)
{
    switch (s->cfg->dist) {
    case DIST_EXPONENTIAL:
        return rng_exponential(&s->rng, 1.0);
    case DIST_LOGNORMAL: /* mean 1, CV cv; parameters worked out once in service_init */
        return s->cfg->cv > 0 ? rng_lognormal_mu_sigma(&s->rng, s->jitter_mu, s->jitter_sigma)
                              : 1.0;
    case DIST_DETERMINISTIC:
    default:
        return 1.0;
    }
}

static void on_batch_done(void *ctx, uint64_t arg);
static void on_wake(void *ctx, uint64_t arg);

/* The replica's speed now: its tenant's, rescaled for a memory-bound service on MIG and
 * for its board (batch times are reference-board figures). */
static double replica_speed(const struct service *s, const struct replica *r)
{
    return cluster_tenant_speed(s->cl, r->tid) * r->bw_factor * r->board;
}

/*
 * The batch of the first n queued requests begins at `start`: they leave the
 * queue (their arrivals are already in r->batch_arrivals) and their waits count.
 */
static void begin_batch(struct service *s, struct replica *r, uint32_t n, sim_time start)
{
    s->tot.wait_us += (double)((int64_t)n * start - r->batch_arr_sum);
    s->head = (s->head + n) & s->mask;
    s->len -= n;
    s->narrived -= n;
    s->in_service += n;
    s->tot.batches++;
    s->win.batches++;
}

/*
 * Plan replica ri's batch of the n requests from ring index `from`, starting at
 * `start` after `wait` µs of time-slice wait: service time, end, completion event.
 */
static void plan_batch(struct service *s, uint32_t ri, uint64_t from, uint32_t n, sim_time start,
                       double wait)
{
    struct replica *r = &s->reps[ri];
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        r->batch_arrivals[i] = ring_at(s, from + i);
        sum += r->batch_arrivals[i];
    }
    r->batch_arr_sum = sum;
    double work = (s->cfg->a_ms * r->fixed_scale + s->cfg->b_ms * (double)n) * 1e3 * jitter(s);
    r->work_left = work;
    r->since = start + (sim_time)(wait + 0.5);
    double us;
    if (!r->reserved && cluster_card_mode(s->cl, s->cl->tenants[r->tid].gpu) == SHARE_TIMESLICE) {
        /* Round-robin slices: the batch's latency in closed form (models/share.h). */
        us = cluster_ts_begin(s->cl, r->tid, start, work / r->board);
        r->speed = replica_speed(s, r);
    } else {
        us = wait + work / (r->speed > 0 ? r->speed : 1e-9);
    }
    sim_time st = us < 1e15 ? (sim_time)(us + 0.5) : (sim_time)1e15; /* µs, rounded */
    if (st < 1)
        st = 1;
    r->busy = true;
    r->batch_n = n;
    r->batch_start = start;
    r->batch_end = start + st;
    if (engine_at(s->eng, r->batch_end, on_batch_done, s, ri, &r->done))
        fail(s, -ENOMEM, "out of memory in the event queue");
}

/* Start replica ri's batch of the first n queued requests now. */
static void start_batch(struct service *s, uint32_t ri, uint32_t n, sim_time now)
{
    struct replica *r = &s->reps[ri];
    if (s->hot == ri)
        s->hot = UINT32_MAX; /* its card never left inference: nothing to switch */
    else if (cluster_card_mode(s->cl, s->cl->tenants[r->tid].gpu) != SHARE_TIMESLICE)
        /* time-slicing: plan_batch activates it */
        cluster_set_active(s->cl, r->tid, now, true, USE_INFER);
    r->speed = replica_speed(s, r);
    plan_batch(s, ri, 0, n, now, 0);
    begin_batch(s, r, n, now);
}

/*
 * Reserve idle replica ri (the top of the idle stack) for the n requests that
 * follow the reserved ones, as a batch starting at `start` (> now). False,
 * changing nothing, when its card cannot defer the switch to inference or the
 * reserved requests could meet max_queue (drops are decided at arrival).
 */
static bool reserve(struct service *s, uint32_t ri, uint32_t n, sim_time start)
{
    struct replica *r = &s->reps[ri];
    if (s->resv_req + n > s->cfg->max_queue)
        return false;
    if (s->hot == ri) { /* it goes idle until start: switch its card now */
        s->hot = UINT32_MAX;
        cluster_set_active(s->cl, r->tid, s->eng->now, false, USE_INFER);
    }
    if (!cluster_defer_active(s->cl, r->tid, start, USE_INFER))
        return false;
    s->nidle--;
    r->reserved = true;
    r->speed = r->board; /* exclusive card */
    plan_batch(s, ri, s->resv_req, n, start, 0);
    s->resv[(s->resv_head + s->resv_len) & (s->cap_reps - 1)] = ri;
    s->resv_len++;
    s->resv_req += n;
    return true;
}

/*
 * Take back every reservation not yet begun (after beginning those due by
 * now): their requests stay queued, their replicas go back to the idle stack
 * as they were. The caller re-plans with kick(). Returns whether any was taken.
 */
static bool unreserve(struct service *s)
{
    pull(s, s->eng->now);
    if (!s->resv_len)
        return false;
    while (s->resv_len) {
        s->resv_len--;
        uint32_t ri = s->resv[(s->resv_head + s->resv_len) & (s->cap_reps - 1)];
        struct replica *r = &s->reps[ri];
        engine_cancel(s->eng, &r->done);
        cluster_cancel_deferred(s->cl, r->tid);
        s->resv_req -= r->batch_n;
        r->reserved = false;
        r->busy = false;
        r->batch_n = 0;
        s->idle[s->nidle++] = ri;
    }
    return true;
}

static void schedule_wake(struct service *s, sim_time at)
{
    if (evq_is_pending(&s->eng->q, s->wake)) {
        if (s->wake_at == at)
            return;
        engine_cancel(s->eng, &s->wake);
    }
    s->wake_at = at;
    if (engine_at(s->eng, at, on_wake, s, 0, &s->wake))
        fail(s, -ENOMEM, "out of memory in the event queue");
}

/*
 * Start every batch that is due now on idle replicas; reserve idle replicas
 * for the batches due later, or sleep until the next one is due.
 */
static void kick(struct service *s, sim_time now)
{
    uint64_t mb = s->cfg->max_batch;

    pull(s, now);
    for (;;) {
        if (s->nidle == 0)
            break;
        uint64_t base = s->resv_req; /* the queue after the reserved requests */
        if (s->len < base + mb)
            lookahead(s, base + mb);
        if (s->len <= base)
            break;
        sim_time oldest = ring_at(s, base);
        sim_time due =
            oldest > SIM_TIME_MAX - s->cfg->max_wait ? SIM_TIME_MAX : oldest + s->cfg->max_wait;
        if (s->len >= base + mb && ring_at(s, base + mb - 1) < due)
            due = ring_at(s, base + mb - 1);
        if (due > now) {
            uint32_t n = 0;
            while (n < mb && base + n < s->len && ring_at(s, base + n) <= due)
                n++;
            if (due < SIM_TIME_MAX && reserve(s, s->idle[s->nidle - 1], n, due))
                continue;
            schedule_wake(s, due);
            return;
        }
        /* Due now: every reservation has begun (its start <= this batch's), so base = 0. */
        assert(base == 0);
        uint32_t n = (uint32_t)(s->narrived < mb ? s->narrived : mb);
        start_batch(s, s->idle[--s->nidle], n, now);
    }
    if (s->wake.slot && evq_is_pending(&s->eng->q, s->wake))
        engine_cancel(s->eng, &s->wake);
}

static void on_wake(void *ctx, uint64_t arg)
{
    struct service *s = ctx;
    (void)arg;
    kick(s, s->eng->now);
}

static void on_batch_done(void *ctx, uint64_t arg)
{
    struct service *s = ctx;
    struct replica *r = &s->reps[arg];
    sim_time now = s->eng->now;
    uint64_t ok = 0;

    if (r->reserved)
        pull(s, now); /* its start has passed: begin it (and any reserved before it) */

    sim_time t0 = r->batch_start;
    for (uint32_t i = 0; i < r->batch_n; i++) {
        sim_time lat = now - r->batch_arrivals[i];
        hist_count(s->h_win, lat);
        hist_count(s->q_win, t0 - r->batch_arrivals[i]);
        ok += lat <= s->cfg->slo;
    }
    /* Arrivals are sorted: the first waited longest, the last least. */
    if (r->batch_n) {
        int64_t n = r->batch_n, first = r->batch_arrivals[0], last = r->batch_arrivals[n - 1];
        hist_add_totals(s->h_win, r->batch_n, n * now - r->batch_arr_sum, now - last, now - first);
        hist_add_totals(s->q_win, r->batch_n, n * t0 - r->batch_arr_sum, t0 - last, t0 - first);
    }
    s->tot.served += r->batch_n;
    s->win.served += r->batch_n;
    s->tot.busy_us += (double)(now - r->batch_start);
    s->win.busy_us += (double)(now - r->batch_start);
    s->tot.within_slo += ok;
    s->win.within_slo += ok;
    if (s->pool_served) {
        s->pool_served[s->cl->cards[r->gpu].pool] += r->batch_n;
        s->pool_within[s->cl->cards[r->gpu].pool] += ok;
    }
    s->in_service -= r->batch_n;
    r->batch_n = 0;
    r->busy = false;
    if (r->draining) {
        cluster_set_active(s->cl, r->tid, now, false, USE_INFER);
        cluster_remove(s->cl, r->tid, now);
        r->gone = true;
        r->draining = false;
        kick(s, now);
        return;
    }
    s->idle[s->nidle++] = (uint32_t)arg;
    if (cluster_card_mode(s->cl, s->cl->tenants[r->tid].gpu) != SHARE_EXCLUSIVE) {
        cluster_set_active(s->cl, r->tid, now, false, USE_INFER);
        kick(s, now);
        return;
    }
    /* Exclusive card: if the replica takes the next batch at once (it is on
     * top of the idle stack), its card stays in inference — switching it to
     * idle and back at the same instant would account nothing. */
    s->hot = (uint32_t)arg;
    kick(s, now);
    if (s->hot == arg) {
        s->hot = UINT32_MAX;
        cluster_set_active(s->cl, r->tid, now, false, USE_INFER);
    }
}

static void idle_drop(struct service *s, uint32_t ri)
{
    for (uint32_t i = 0; i < s->nidle; i++)
        if (s->idle[i] == ri) {
            s->idle[i] = s->idle[--s->nidle];
            return;
        }
}

int service_remove_replica(struct service *s, uint32_t ri)
{
    if (s->llm)
        return llm_remove_replica(s, ri);
    if (ri >= s->nreps || s->reps[ri].gone || s->reps[ri].draining)
        return -EINVAL;
    struct replica *r = &s->reps[ri];
    bool replan = unreserve(s);
    s->live_reps--;
    if (r->busy) {
        r->draining = true;
    } else {
        if (!r->down)
            idle_drop(s, ri);
        r->down = false;
        cluster_remove(s->cl, r->tid, s->eng->now);
        r->gone = true;
    }
    if (replan)
        kick(s, s->eng->now);
    return 0;
}

/*
 * Node-compact key of the card a replica sits on (lower: removed first): the
 * node's occupied cards (cards with any tenant or being re-laid out), then the
 * card's tenants. Removing replicas from the emptiest node first hands back
 * whole nodes, which whole-node gangs need.
 */
static uint64_t victim_key(const struct service *s, uint32_t ri)
{
    const struct cluster *cl = s->cl;
    const struct card *g = &cl->cards[s->reps[ri].gpu];
    uint64_t occupied = cluster_node_cards(cl, g->node) - cl->node_free[g->node];
    /* A service that prefers some pools gives back a replica elsewhere first. */
    uint64_t pref =
        s->prefer_pools != POOL_ALL && cluster_card_in(cl, s->reps[ri].gpu, s->prefer_pools);
    return pref << 63 | occupied << 32 | g->nten;
}

/* Keep ri as the choice if it is strictly more compact than *best (ties keep the earlier). */
static void victim_consider(const struct service *s, uint32_t ri, uint32_t *best, uint64_t *key)
{
    uint64_t k = victim_key(s, ri);
    if (*best == UINT32_MAX || k < *key) {
        *best = ri;
        *key = k;
    }
}

uint32_t service_pick_victim(const struct service *s)
{
    if (s->llm)
        return llm_pick_victim(s);
    /*
     * Candidates in the old order of preference — idle (top of the stack
     * first; a replica reserved for a batch not yet begun counts as idle),
     * then starting or down, then busy (highest index first) — and the first
     * one on the most compact key wins: the node comes before the state.
     */
    uint32_t best = UINT32_MAX;
    uint64_t key = 0;
    for (uint32_t i = s->nidle; i-- > 0;)
        victim_consider(s, s->idle[i], &best, &key);
    for (uint32_t i = 0; i < s->resv_len; i++)
        victim_consider(s, s->resv[(s->resv_head + i) & (s->cap_reps - 1)], &best, &key);
    for (uint32_t i = s->nreps; i-- > 0;) {
        const struct replica *r = &s->reps[i];
        if (!r->gone && !r->draining && r->down)
            victim_consider(s, i, &best, &key);
    }
    for (uint32_t i = s->nreps; i-- > 0;) {
        const struct replica *r = &s->reps[i];
        /* The rest (busy); idle and reserved ones seen again change nothing. */
        if (!r->gone && !r->draining && !r->down)
            victim_consider(s, i, &best, &key);
    }
    return best;
}

void service_on_speed(struct service *s, uint32_t ri)
{
    if (s->llm) {
        llm_on_speed(s, ri);
        return;
    }
    struct replica *r = &s->reps[ri];
    sim_time now = s->eng->now;
    if (!r->busy)
        return;
    if (now > r->since) {
        r->work_left -= (double)(now - r->since) * r->speed;
        if (r->work_left < 0)
            r->work_left = 0;
        r->since = now;
    }
    r->speed = replica_speed(s, r);
    sim_time start = r->since > now ? r->since : now;
    double us = r->work_left / (r->speed > 0 ? r->speed : 1e-9);
    r->batch_end = start + (us < 1e15 ? (sim_time)(us + 0.5) : (sim_time)1e15);
    engine_cancel(s->eng, &r->done);
    if (engine_at(s->eng, r->batch_end, on_batch_done, s, ri, &r->done))
        fail(s, -ENOMEM, "out of memory in the event queue");
}

void service_replica_down(struct service *s, uint32_t ri)
{
    if (s->llm) {
        llm_replica_down(s, ri);
        return;
    }
    struct replica *r = &s->reps[ri];
    sim_time now = s->eng->now;
    if (r->down)
        return;
    bool replan = unreserve(s);
    if (r->busy) {
        engine_cancel(s->eng, &r->done);
        s->tot.failed += r->batch_n;
        s->win.failed += r->batch_n;
        s->in_service -= r->batch_n;
        r->batch_n = 0;
        r->busy = false;
        cluster_set_active(s->cl, r->tid, now, false, USE_INFER);
    } else {
        idle_drop(s, ri);
    }
    if (r->draining) { /* it was leaving after this batch: it leaves now */
        cluster_remove(s->cl, r->tid, now);
        r->gone = true;
        r->draining = false;
    } else {
        r->down = true;
    }
    if (replan)
        kick(s, now);
}

void service_replica_up(struct service *s, uint32_t ri)
{
    if (s->llm) {
        llm_replica_up(s, ri);
        return;
    }
    struct replica *r = &s->reps[ri];
    if (!r->down || r->gone)
        return;
    r->down = false;
    s->idle[s->nidle++] = ri;
    kick(s, s->eng->now);
}

int service_init(struct service *s, uint32_t index, const struct service_cfg *cfg,
                 struct engine *eng, struct cluster *cl, struct arrival_source *src, uint64_t seed)
{
    char name[160];
    memset(s, 0, sizeof(*s));
    s->index = index;
    s->cfg = cfg;
    s->prefer_pools = POOL_ALL;
    s->eng = eng;
    s->cl = cl;
    s->src = src;
    s->mask = 1023;
    s->pool_served = calloc(cl->npools ? cl->npools : 1, sizeof(*s->pool_served));
    s->pool_within = calloc(cl->npools ? cl->npools : 1, sizeof(*s->pool_within));
    s->ring = malloc((s->mask + 1) * sizeof(*s->ring));
    s->h_total = malloc(sizeof(*s->h_total));
    s->h_win = malloc(sizeof(*s->h_win));
    s->q_total = malloc(sizeof(*s->q_total));
    s->q_win = malloc(sizeof(*s->q_win));
    snprintf(name, sizeof(name), "service/%s/service-time", cfg->name);
    if (!s->ring || !s->h_total || !s->h_win || !s->q_total || !s->q_win || !s->pool_served ||
        !s->pool_within || rng_init(&s->rng, seed, rng_stream_id(name))) {
        service_release(s);
        return -ENOMEM;
    }
    snprintf(name, sizeof(name), "service/%s/startup", cfg->name);
    if (rng_init(&s->start_rng, seed, rng_stream_id(name))) {
        service_release(s);
        return -ENOMEM;
    }
    hist_reset(s->h_total);
    hist_reset(s->h_win);
    hist_reset(s->q_total);
    hist_reset(s->q_win);
    s->hot = UINT32_MAX;
    if (cfg->dist == DIST_LOGNORMAL && cfg->cv > 0)
        rng_lognormal_params(1.0, cfg->cv, &s->jitter_mu, &s->jitter_sigma);
    if (cfg->kind == SVC_LLM) {
        int rc = llm_service_init(s, seed);
        if (rc) {
            service_release(s);
            return rc;
        }
    }
    return 0;
}

void service_release(struct service *s)
{
    llm_service_release(s);
    arrival_source_destroy(s->src);
    s->src = NULL;
    free(s->pool_served);
    free(s->pool_within);
    s->pool_served = s->pool_within = NULL;
    for (uint32_t i = 0; i < s->nreps; i++)
        free(s->reps[i].batch_arrivals);
    free(s->reps);
    free(s->idle);
    free(s->resv);
    free(s->ring);
    free(s->h_total);
    free(s->h_win);
    free(s->q_total);
    free(s->q_win);
    rng_release(&s->rng);
    rng_release(&s->start_rng);
    s->reps = NULL;
    s->idle = NULL;
    s->resv = NULL;
    s->ring = NULL;
    s->h_total = s->h_win = s->q_total = s->q_win = NULL;
}

int service_add_replica_gang(struct service *s, const uint32_t *tids, uint32_t n, bool ready,
                             uint32_t *ri)
{
    if (s->llm)
        return n >= 1 && n <= LLM_MAX_TP ? llm_add_replica(s, tids, n, ready, ri) : -EINVAL;
    return n == 1 ? service_add_replica(s, tids[0], ready, ri) : -EINVAL;
}

int service_add_replica(struct service *s, uint32_t tid, bool ready, uint32_t *out)
{
    if (s->llm)
        return llm_add_replica(s, &tid, 1, ready, out);
    uint32_t ri = s->nreps;
    for (uint32_t i = 0; i < s->nreps; i++)
        if (s->reps[i].gone) {
            ri = i;
            break;
        }
    if (ri == s->nreps && s->nreps == s->cap_reps) {
        uint32_t cap = s->cap_reps ? 2 * s->cap_reps : 8;
        struct replica *r = realloc(s->reps, cap * sizeof(*r));
        if (!r)
            return -ENOMEM;
        s->reps = r;
        uint32_t *idle = realloc(s->idle, cap * sizeof(*idle));
        if (!idle)
            return -ENOMEM;
        s->idle = idle;
        uint32_t *resv = malloc(cap * sizeof(*resv));
        if (!resv)
            return -ENOMEM;
        for (uint32_t i = 0; i < s->resv_len; i++) /* unwrap the FIFO */
            resv[i] = s->resv[(s->resv_head + i) & (s->cap_reps - 1)];
        free(s->resv);
        s->resv = resv;
        s->resv_head = 0;
        s->cap_reps = cap;
    }
    struct replica *r = &s->reps[ri];
    sim_time *buf = ri < s->nreps ? r->batch_arrivals : NULL;
    memset(r, 0, sizeof(*r));
    r->tid = tid;
    r->gpu = s->cl->tenants[tid].gpu;
    r->board = cluster_card_infer_speed(s->cl, r->gpu);
    r->speed = r->board;
    /* A MIG instance's speed never changes while the tenant holds it (sim/cluster.h). */
    r->fixed_scale =
        s->cl->tenants[tid].instance >= 0
            ? latency_fixed_scale(s->cfg->fixed_compute_share, s->cl->tenants[tid].st.slice_speed)
            : 1.0;
    /* Memory-bound work (LLM decode) on a MIG instance runs at the instance's share of the
     * memory bandwidth, memory slices / 8 (NVIDIA MIG User Guide: an instance owns its
     * memory slices and their bandwidth), not at its SM share. */
    r->bw_factor = 1.0;
    int inst = s->cl->tenants[tid].instance;
    if (s->cfg->memory_bound && inst >= 0) {
        const struct mig_profile *pr = s->cl->cards[r->gpu].layout.inst[inst].profile;
        double sm = s->cl->tenants[tid].st.slice_speed;
        if (pr && sm > 0)
            r->bw_factor = (pr->memory_slices / 8.0) / sm;
    }
    r->batch_arrivals = buf ? buf : malloc(s->cfg->max_batch * sizeof(*r->batch_arrivals));
    if (!r->batch_arrivals)
        return -ENOMEM;
    s->cl->tenants[tid].member = ri;
    if (ri == s->nreps)
        s->nreps++;
    s->live_reps++;
    if (out)
        *out = ri;
    if (!ready) {
        r->down = true;
        return 0;
    }
    s->idle[s->nidle++] = ri;
    kick(s, s->eng->now);
    return 0;
}

double service_capacity_rps(const struct service *s)
{
    if (s->llm)
        return llm_service_capacity_rps(s);
    const struct service_cfg *c = s->cfg;
    double slo_ms = sim_time_to_sec(c->slo) * 1e3, cap = 0;
    for (uint32_t i = 0; i < s->nreps; i++) {
        const struct replica *r = &s->reps[i];
        if (r->gone || r->down || r->draining)
            continue;
        double v = r->speed; /* of its last batch (an idle tenant has no current speed) */
        double a = c->a_ms * r->fixed_scale, b = c->b_ms, n = c->max_batch;
        if (!(v > 0))
            continue;
        if (b > 0) {
            double fit = floor((slo_ms * v - a) / b);
            n = fit < n ? fit : n;
        } else if (a > slo_ms * v) {
            n = 0;
        }
        if (n >= 1 && a + b * n > 0)
            cap += n * 1e3 * v / (a + b * n);
    }
    return cap;
}

void service_sync(struct service *s)
{
    if (s->llm) {
        llm_sync(s);
        return;
    }
    pull(s, s->eng->now);
}

void service_reset_interval(struct service *s)
{
    if (s->llm)
        llm_reset_interval(s);
    hist_merge(s->h_total, s->h_win);
    hist_reset(s->h_win);
    hist_merge(s->q_total, s->q_win);
    hist_reset(s->q_win);
    memset(&s->win, 0, sizeof(s->win));
}
