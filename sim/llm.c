/* llm.c — LLM serving: router, continuous batching on each replica, plans in closed form. */
#include "sim/llm.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/mig.h"
#include "sim/serve.h"

#define NO_EVENT UINT64_MAX

static void on_rep_event(void *ctx, uint64_t arg);
static void on_arrival(void *ctx, uint64_t arg);
static void replan(struct service *s, uint32_t ri);
static void load_changed(struct service *s, uint32_t ri);

static inline struct llm_svc *L(const struct service *s)
{
    return s->llm;
}

/* A non-negative duration in µs to the nearest whole µs (llround without the libm call). */
static inline int64_t us_round(double x)
{
    return x > 0 ? (int64_t)(x + 0.5) : -(int64_t)(0.5 - x);
}

static void fail(struct service *s, int rc, const char *msg)
{
    s->src_done = true;
    s->src_error = rc;
    if (msg)
        snprintf(s->src_err.msg, sizeof(s->src_err.msg), "%s", msg);
    s->eng->stop = true;
}

/* ---- rings of sequences (router and replica queues) ---- */

static int ring_push(struct llm_seq **v, uint32_t *head, uint32_t *len, uint32_t *cap,
                     const struct llm_seq *x, bool front)
{
    if (*len == *cap) {
        uint32_t nc = *cap ? 2 * *cap : 16;
        struct llm_seq *n = malloc(nc * sizeof(*n));
        if (!n)
            return -ENOMEM;
        for (uint32_t i = 0; i < *len; i++)
            n[i] = (*v)[(*head + i) % *cap];
        free(*v);
        *v = n;
        *head = 0;
        *cap = nc;
    }
    if (front) {
        *head = (*head + *cap - 1) % *cap;
        (*v)[*head] = *x;
    } else {
        (*v)[(*head + *len) % *cap] = *x;
    }
    (*len)++;
    return 0;
}

static struct llm_seq ring_pop(struct llm_seq *v, uint32_t *head, uint32_t *len, uint32_t cap)
{
    struct llm_seq x = v[*head];
    *head = (*head + 1) % cap;
    (*len)--;
    return x;
}

/* ---- the decoder heap, by (fin, order) ---- */

static inline bool heap_less(const struct llm_rep *r, uint32_t a, uint32_t b)
{
    const struct llm_seq *x = &r->seq[a], *y = &r->seq[b];
    return x->fin < y->fin || (x->fin == y->fin && x->order < y->order);
}

static void heap_set(struct llm_rep *r, uint32_t pos, uint32_t id)
{
    r->heap[pos] = id;
    r->seq[id].heap = (int32_t)pos;
}

static void heap_up(struct llm_rep *r, uint32_t pos)
{
    uint32_t id = r->heap[pos];
    while (pos > 0) {
        uint32_t p = (pos - 1) / 2;
        if (!heap_less(r, id, r->heap[p]))
            break;
        heap_set(r, pos, r->heap[p]);
        pos = p;
    }
    heap_set(r, pos, id);
}

static void heap_down(struct llm_rep *r, uint32_t pos)
{
    uint32_t id = r->heap[pos];
    for (;;) {
        uint32_t l = 2 * pos + 1, best = pos, bid = id;
        if (l < r->nheap && heap_less(r, r->heap[l], bid)) {
            best = l;
            bid = r->heap[l];
        }
        if (l + 1 < r->nheap && heap_less(r, r->heap[l + 1], bid)) {
            best = l + 1;
            bid = r->heap[l + 1];
        }
        if (best == pos)
            break;
        heap_set(r, pos, bid);
        pos = best;
    }
    heap_set(r, pos, id);
}

static void heap_push(struct llm_rep *r, uint32_t id)
{
    r->heap[r->nheap++] = id;
    heap_up(r, r->nheap - 1);
}

static void heap_remove(struct llm_rep *r, uint32_t id)
{
    uint32_t pos = (uint32_t)r->seq[id].heap;
    r->seq[id].heap = -1;
    uint32_t last = r->heap[--r->nheap];
    if (pos == r->nheap)
        return;
    heap_set(r, pos, last);
    heap_up(r, pos);
    heap_down(r, (uint32_t)r->seq[last].heap);
}

/* ---- the sequence pool of a replica ---- */

static int rep_alloc(struct llm_rep *r, uint32_t max_seqs)
{
    r->cap = max_seqs;
    r->seq = malloc(max_seqs * sizeof(*r->seq));
    r->free_slot = malloc(max_seqs * sizeof(*r->free_slot));
    r->pf = malloc(max_seqs * sizeof(*r->pf));
    r->heap = malloc(max_seqs * sizeof(*r->heap));
    if (!r->seq || !r->free_slot || !r->pf || !r->heap)
        return -ENOMEM;
    r->nfree = max_seqs;
    for (uint32_t i = 0; i < max_seqs; i++)
        r->free_slot[i] = max_seqs - 1 - i;
    return 0;
}

static void rep_free(struct llm_rep *r)
{
    free(r->seq);
    free(r->free_slot);
    free(r->pf);
    free(r->heap);
    free(r->q);
    free(r->pa);
    memset(r, 0, sizeof(*r));
}

static uint32_t running(const struct llm_rep *r)
{
    return r->npf + r->nheap;
}

/* ---- the plan: boundaries, their times, what the steps hold ---- */

/* Work (µs at speed 1) from the anchor to boundary k (k_a <= k). */
static double work_at(const struct llm_rep *r, uint64_t k)
{
    uint64_t j = k - r->k_a;
    if (j == 0)
        return 0;
    if (j <= r->npa)
        return r->pa[j - 1].w_end;
    return r->tail_w0 + llm_decode_run_us(&r->coef, r->tail_n, r->tail_ctx, (double)(j - r->npa));
}

static double time_at(const struct llm_rep *r, uint64_t k)
{
    return r->t_a + work_at(r, k) / r->v;
}

/* The last boundary at or before work w from the anchor (w >= 0). */
static uint64_t boundary_le_work(const struct llm_rep *r, double w)
{
    uint32_t lo = 0, hi = r->npa; /* the largest j <= npa with W(j) <= w; W(0) = 0 */
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (r->pa[mid - 1].w_end <= w)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo < r->npa || r->tail_n == 0 || w < r->tail_w0)
        return r->k_a + lo;
    uint64_t m = llm_decode_run_fit(&r->coef, r->tail_n, r->tail_ctx, w - r->tail_w0, 1ull << 40);
    return r->k_a + r->npa + m;
}

static uint64_t boundary_le(const struct llm_rep *r, double t)
{
    /* A time computed from a boundary (t_a + W/v) may read back a hair below W: allow for it. */
    double w = (t - r->t_a) * r->v;
    w += 1e-9 * (w > 1 ? w : 1);
    return boundary_le_work(r, w > 0 ? w : 0);
}

/* The first boundary at or after time t. */
static uint64_t boundary_ge(const struct llm_rep *r, double t)
{
    uint64_t k = boundary_le(r, t);
    return time_at(r, k) >= t ? k : k + 1;
}

/* KV tokens held at boundary k (during the step that starts there). */
static double kv_at(const struct llm_rep *r, uint64_t k)
{
    uint64_t j = k - r->k_a;
    if (j == 0)
        return r->kv_used;
    if (j <= r->npa)
        return r->pa[j - 1].kv_end;
    return r->tail_kv + (double)r->tail_n * (double)(j - r->npa);
}

/* Σ over the plan's steps up to boundary k of KV held × work (token-µs at speed 1). */
static double kvw_at(const struct llm_rep *r, uint64_t k)
{
    uint64_t j = k - r->k_a;
    if (j == 0)
        return 0;
    if (j <= r->npa)
        return r->pa[j - 1].kvw_end;
    double m = (double)(j - r->npa), u = r->tail_kv, n = r->tail_n;
    double a = llm_iter_us(&r->coef, n, r->tail_ctx, 0), b = r->coef.ctx_us * n;
    /* Σ_{i<m} (u + n i)(a + b i) */
    double s1 = m * (m - 1) / 2, s2 = (m - 1) * m * (2 * m - 1) / 6;
    double pre = r->npa ? r->pa[r->npa - 1].kvw_end : 0;
    return pre + u * a * m + (u * b + n * a) * s1 + n * b * s2;
}

/* Tokens generated by the steps ending at boundaries in (k_a, k]. */
static double tokens_at(const struct llm_rep *r, uint64_t k)
{
    uint64_t j = k - r->k_a;
    double t = 0;
    uint64_t upto = j < r->npa ? j : r->npa;
    for (uint64_t i = 0; i < upto; i++) /* few prefill steps */
        t += r->pa[i].tokens;
    if (j > r->npa)
        t += (double)r->tail_n * (double)(j - r->npa);
    return t;
}

/*
 * Account r's tokens, KV token-time, capacity and busy time from acc_t up to
 * time t (not beyond its next event), over the current plan; at_k is the
 * boundary t is the time of, when known (NO_EVENT: found from t).
 */
static void account_at(struct service *s, struct llm_rep *r, bool serving, double t, uint64_t at_k);

static void account(struct service *s, struct llm_rep *r, bool serving, double t)
{
    account_at(s, r, serving, t, NO_EVENT);
}

static void account_at(struct service *s, struct llm_rep *r, bool serving, double t, uint64_t at_k)
{
    struct llm_svc *ls = L(s);
    bool planned = r->active && r->k_ev != NO_EVENT;
    if (planned) { /* the plan holds up to its next event (an interval may end a µs after) */
        double te = time_at(r, r->k_ev);
        t = t < te ? t : te;
    }
    if (!(t > r->acc_t))
        return;
    double dt = t - r->acc_t;
    if (serving) {
        ls->tot.kv_cap_us += (double)r->kv_cap * dt;
        ls->win.kv_cap_us += (double)r->kv_cap * dt;
    }
    if (planned) {
        uint64_t k0 = r->acc_k, k1 = at_k != NO_EVENT ? at_k : boundary_le(r, t);
        double tok = tokens_at(r, k1) - tokens_at(r, k0);
        /* ∫ KV dt = (Σ kv·w over whole steps) / v, plus the partial steps at both ends. */
        double kv = (kvw_at(r, k1) - kvw_at(r, k0)) / r->v;
        kv += kv_at(r, k1) * (t - time_at(r, k1));
        kv -= kv_at(r, k0) * (r->acc_t - time_at(r, k0));
        ls->tot.tokens_out += tok;
        ls->win.tokens_out += tok;
        ls->tot.kv_token_us += kv;
        ls->win.kv_token_us += kv;
        s->tot.busy_us += dt;
        s->win.busy_us += dt;
        r->acc_k = k1;
    }
    r->acc_t = t;
}

/* ---- recording a request's end ---- */

static void record_done(struct service *s, const struct llm_seq *q, double end)
{
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    int64_t e2e = us_round(end - (double)q->arrival);
    int64_t ttft = us_round(q->first - (double)q->arrival);
    hist_record(s->h_win, e2e);
    bool ok = ttft <= c->ttft_slo;
    if (q->output > 1) {
        double tpot = (end - q->first) / (double)(q->output - 1);
        hist_record(ls->tpot_win, us_round(tpot));
        ok = ok && tpot <= (double)c->tpot_slo;
    }
    s->tot.served++;
    s->win.served++;
    s->tot.within_slo += ok;
    s->win.within_slo += ok;
}

static void record_first(struct service *s, struct llm_seq *q, double t)
{
    if (q->first >= 0)
        return; /* re-prefilled after a preemption: its first token came long ago */
    q->first = t;
    hist_record(L(s)->ttft_win, us_round(t - (double)q->arrival));
}

/* ---- materialising the plan at an event boundary ---- */

static void materialize(struct service *s, uint32_t ri, uint64_t k)
{
    struct llm_svc *ls = L(s);
    struct llm_rep *r = &ls->reps[ri];
    uint64_t j = k - r->k_a;
    double tk = time_at(r, k);
    if (j > 0 && r->npa > 0) {
        uint64_t steps = j < r->npa ? j : r->npa;
        uint64_t consumed = r->pa[steps - 1].stream, end = 0, step = 0;
        uint32_t keep = 0;
        for (uint32_t i = 0; i < r->npf; i++) {
            uint32_t id = r->pf[i];
            struct llm_seq *q = &r->seq[id];
            uint64_t start = end;
            end += q->need;
            if (end > consumed) { /* still prefilling: what the steps took of it is done */
                if (consumed > start)
                    q->need -= (uint32_t)(consumed - start);
                r->pf[keep++] = id;
                continue;
            }
            while (r->pa[step].stream < end) /* the step that finished its prefill */
                step++;
            uint64_t kb = r->k_a + step + 1;
            record_first(s, q, time_at(r, kb));
            q->need = 0;
            q->gen++;
            q->k0 = kb;
            q->fin = kb + (q->output - q->gen);
            heap_push(r, id);
        }
        ls->tot.tokens_in += (double)consumed;
        ls->win.tokens_in += (double)consumed;
        r->npf = keep;
        r->extra_w = 0;
    } else if (j > 0) {
        r->extra_w = 0;
    }
    if (j > 0) {
        if (j <= r->npa) {
            r->kv_used = r->pa[j - 1].kv_end;
            r->ctx_dec = r->pa[j - 1].ctx_end;
        } else {
            double m = (double)(j - r->npa);
            r->kv_used = r->tail_kv + r->tail_n * m;
            r->ctx_dec = r->tail_ctx + r->tail_n * m;
        }
    }
    /* Completions at k. */
    while (r->nheap && r->seq[r->heap[0]].fin == k) {
        uint32_t id = r->heap[0];
        struct llm_seq *q = &r->seq[id];
        heap_remove(r, id);
        double held = (double)q->prompt + q->output;
        r->kv_used -= held;
        r->ctx_dec -= held;
        record_done(s, q, tk);
        s->in_service--;
        r->free_slot[r->nfree++] = id;
    }
    if (r->kv_used < 0.5)
        r->kv_used = 0; /* sums of whole tokens: no drift to keep */
    if (r->ctx_dec < 0.5)
        r->ctx_dec = 0;
    r->k_a = k;
    r->t_a = tk;
    r->npa = 0;
    r->acc_k = k;
}

/* ---- preemption and admission ---- */

/* Tokens a decoder holds at the anchor. */
static uint32_t decoder_gen(const struct llm_rep *r, const struct llm_seq *q)
{
    return q->gen + (uint32_t)(r->k_a - q->k0);
}

static int requeue_front(struct service *s, struct llm_rep *r, const struct llm_seq *q)
{
    s->narrived++;
    return ring_push(&r->q, &r->qhead, &r->qlen, &r->qcap, q, true);
}

/* Preempt the most recently admitted sequence (vLLM: the last of its running list). */
static void preempt_one(struct service *s, struct llm_rep *r)
{
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    uint32_t victim = UINT32_MAX, best = 0;
    for (uint32_t i = 0; i < r->npf; i++)
        if (victim == UINT32_MAX || r->seq[r->pf[i]].order > best) {
            victim = r->pf[i];
            best = r->seq[victim].order;
        }
    for (uint32_t i = 0; i < r->nheap; i++)
        if (victim == UINT32_MAX || r->seq[r->heap[i]].order > best) {
            victim = r->heap[i];
            best = r->seq[victim].order;
        }
    struct llm_seq *q = &r->seq[victim];
    if (q->heap >= 0) {
        uint32_t g = decoder_gen(r, q);
        double held = (double)q->prompt + g;
        heap_remove(r, victim);
        r->kv_used -= held;
        r->ctx_dec -= held;
        q->gen = g;
        double bytes = held * c->model.kv_bytes_per_token;
        if (c->preempt == LLM_PREEMPT_SWAP && r->swap_used + (uint64_t)held <= r->swap_cap) {
            q->swapped = (uint32_t)held;
            r->swap_used += q->swapped;
            r->extra_w += bytes / (c->swap_gbps * 1e9) * 1e6;
            ls->tot.swaps++;
            ls->win.swaps++;
        }
    } else {
        for (uint32_t i = 0; i < r->npf; i++)
            if (r->pf[i] == victim) {
                memmove(&r->pf[i], &r->pf[i + 1], (r->npf - i - 1) * sizeof(*r->pf));
                r->npf--;
                break;
            }
        r->kv_used -= q->pf_len;
    }
    q->need = 0;
    ls->tot.preemptions++;
    ls->win.preemptions++;
    s->in_service--;
    if (requeue_front(s, r, q))
        fail(s, -ENOMEM, "out of memory in an LLM replica's queue");
    r->free_slot[r->nfree++] = victim;
}

/*
 * Can the queue head be admitted at a boundary where kv tokens are held?
 * Returns 1 yes, 0 no (blocked by sequences or memory), 2 blocked only by the
 * token budget of an unchunked prefill step (retry at the next boundary).
 */
static int can_admit(const struct service *s, const struct llm_rep *r, double kv,
                     uint64_t pf_pending, const struct llm_seq *h)
{
    const struct llm_cfg *c = L(s)->cfg;
    if (running(r) >= c->max_num_seqs)
        return 0;
    double need = h->swapped ? h->swapped : (double)h->prompt + h->gen;
    double mark = running(r) ? 0.01 * (double)r->kv_cap : 0; /* vLLM V0's watermark */
    if (kv + need + mark > (double)r->kv_cap)
        return 0;
    if (!c->chunked && !h->swapped && pf_pending &&
        pf_pending + h->prompt + h->gen > c->max_batched_tokens)
        return 2;
    return 1;
}

/* Admit queued sequences at the anchor; returns 2 when the head waits only for the budget. */
static int admit(struct service *s, struct llm_rep *r)
{
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    uint64_t pending = 0;
    for (uint32_t i = 0; i < r->npf; i++)
        pending += r->seq[r->pf[i]].need;
    while (r->qlen) {
        const struct llm_seq *h = &r->q[r->qhead];
        int ok = can_admit(s, r, r->kv_used, pending, h);
        if (ok != 1)
            return ok;
        struct llm_seq q = ring_pop(r->q, &r->qhead, &r->qlen, r->qcap);
        s->narrived--;
        s->in_service++;
        uint32_t id = r->free_slot[--r->nfree];
        q.order = r->next_order++;
        q.heap = -1;
        if (!q.admitted_once) {
            q.admitted_once = true;
            hist_record(s->q_win, us_round(r->t_a - (double)q.arrival));
            s->tot.wait_us += r->t_a - (double)q.arrival;
        }
        if (q.swapped) { /* swap in: a decoder at once, its KV back */
            r->kv_used += q.swapped;
            r->ctx_dec += q.swapped;
            r->swap_used -= q.swapped;
            r->extra_w += q.swapped * c->model.kv_bytes_per_token / (c->swap_gbps * 1e9) * 1e6;
            q.swapped = 0;
            q.k0 = r->k_a;
            q.fin = r->k_a + (q.output - q.gen);
            r->seq[id] = q;
            heap_push(r, id);
        } else {
            q.pf_len = q.prompt + q.gen;
            q.need = q.pf_len;
            r->kv_used += q.pf_len;
            pending += q.need;
            r->seq[id] = q;
            r->pf[r->npf++] = id;
        }
        if (running(r) > ls->tot.running_max)
            ls->tot.running_max = running(r);
        if (running(r) > ls->win.running_max)
            ls->win.running_max = running(r);
    }
    return 0;
}

/* ---- planning ---- */

static int pa_grow(struct llm_rep *r)
{
    uint32_t nc = r->cap_pa ? 2 * r->cap_pa : 16;
    struct llm_step *p = realloc(r->pa, nc * sizeof(*p));
    if (!p)
        return -ENOMEM;
    r->pa = p;
    r->cap_pa = nc;
    return 0;
}

/* The replica's speed now: its cards' slowest share (MIG and whole cards: 1). */
static double rep_speed(const struct service *s, const struct llm_rep *r)
{
    /* Step times come from the roofline of the first pool's board (sim/llm_conf.c): a card
     * of another pool runs at its board's inference speed over that board's (1 in one pool). */
    const struct cluster *cl = s->cl;
    double v = INFINITY, ref = cl->pools[0].infer_speed;
    /* A MIG card, or a whole card in a cluster of MIG or whole cards, runs at a fixed speed;
     * a time-sliced or MPS card (or a whole card of such a cluster) at the tenant's share.
     * In a mixed fleet each card by its own pool's mode. */
    bool fixed_cl = cl->mode == SHARE_EXCLUSIVE || cl->mode == SHARE_MIG, shared = false;
    for (uint32_t i = 0; i < r->ntp; i++) {
        const struct tenant *t = &cl->tenants[r->tids[i]];
        enum share_mode m = cluster_card_mode(cl, t->gpu);
        bool fixed = m == SHARE_MIG || (m == SHARE_EXCLUSIVE && fixed_cl);
        double x = cluster_card_infer_speed(cl, t->gpu) / ref;
        if (!fixed) {
            x *= cluster_tenant_speed(cl, r->tids[i]);
            shared = true;
        }
        v = x < v ? x : v;
    }
    if (!shared)
        return isfinite(v) ? v : 1.0;
    return v > 1e-9 ? v : 1e-9;
}

static void set_active(struct service *s, uint32_t ri, bool on)
{
    struct llm_rep *r = &L(s)->reps[ri];
    if (r->active == on)
        return;
    r->active = on;
    for (uint32_t i = 0; i < r->ntp; i++)
        cluster_set_active(s->cl, r->tids[i], s->eng->now, on, USE_INFER);
}

static void schedule(struct service *s, uint32_t ri)
{
    struct llm_rep *r = &L(s)->reps[ri];
    engine_cancel(s->eng, &r->ev);
    if (r->k_ev == NO_EVENT)
        return;
    double t = ceil(time_at(r, r->k_ev) - 1e-6);
    sim_time at = t < (double)SIM_TIME_MAX / 2 ? (sim_time)t : SIM_TIME_MAX / 2;
    if (at < s->eng->now)
        at = s->eng->now;
    r->ev_at = at;
    if (engine_at(s->eng, at, on_rep_event, s, ri, &r->ev))
        fail(s, -ENOMEM, "out of memory in the event queue");
}

/*
 * The plan from the anchor: prefill steps one by one (with the swap copies of
 * the first step), then decode steps in closed form; k_ev = the first change.
 */
static void plan(struct service *s, uint32_t ri, bool retry)
{
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    struct llm_rep *r = &ls->reps[ri];
    uint64_t fin_min = r->nheap ? r->seq[r->heap[0]].fin : NO_EVENT;
    double kv = r->kv_used, ctx = r->ctx_dec, w = 0, kvw = 0;
    uint32_t n = r->nheap;
    uint64_t stream_left = 0, stream = 0;
    for (uint32_t i = 0; i < r->npf; i++)
        stream_left += r->seq[r->pf[i]].need;
    uint32_t pi = 0; /* stream position: seq pf[pi] */
    uint64_t pi_done = r->npf ? r->seq[r->pf[0]].pf_len - r->seq[r->pf[0]].need : 0;
    r->npa = 0;
    r->k_ev = NO_EVENT;
    for (uint32_t j = 0; stream_left > 0 || (j == 0 && r->extra_w > 0); j++) {
        uint64_t k = r->k_a + j;
        if (j > 0 && (k == fin_min || kv + n > (double)r->kv_cap)) {
            r->k_ev = k;
            r->tail_w0 = w;
            r->tail_n = 0;
            r->tail_ctx = ctx;
            r->tail_kv = kv;
            return;
        }
        if (c->chunked && n >= c->max_batched_tokens && stream_left > 0)
            break; /* the budget holds only decodes: prefills wait for a completion */
        /* Chunked: decodes first, prompt chunks in the rest of the budget (vLLM V1). Unchunked:
         * the whole prompts admitted for this step, with the decodes (Orca). */
        uint64_t q = c->chunked ? c->max_batched_tokens - n : stream_left;
        if (q > stream_left)
            q = stream_left;
        uint32_t nd = n;
        double pairs = 0, addkv = nd, addctx = nd;
        uint32_t finishers = 0;
        uint64_t take_left = q;
        while (take_left > 0) {
            const struct llm_seq *p = &r->seq[r->pf[pi]];
            uint64_t left = p->pf_len - pi_done, take = take_left < left ? take_left : left;
            pairs += llm_prefill_pairs((double)pi_done, (double)take);
            pi_done += take;
            take_left -= take;
            if (pi_done == p->pf_len) {
                finishers++;
                addkv += 1;
                addctx += (double)p->pf_len + 1;
                uint64_t f = k + 1 + (p->output - p->gen - 1);
                if (f < fin_min)
                    fin_min = f;
                pi++;
                pi_done = pi < r->npf ? r->seq[r->pf[pi]].pf_len - r->seq[r->pf[pi]].need : 0;
            }
        }
        double step = llm_iter_us(&r->coef, (double)(q + nd), nd ? ctx : 0, pairs) +
                      (j == 0 ? r->extra_w : 0);
        if (r->npa == r->cap_pa && pa_grow(r)) {
            fail(s, -ENOMEM, "out of memory planning an LLM replica");
            return;
        }
        kvw += kv * step;
        w += step;
        stream += q;
        stream_left -= q;
        kv += addkv;
        ctx += addctx;
        n += finishers;
        r->pa[r->npa++] = (struct llm_step){.w_end = w,
                                            .kvw_end = kvw,
                                            .kv = kv - addkv,
                                            .ctx_end = ctx,
                                            .stream = stream,
                                            .tokens = nd + finishers,
                                            .n_end = n,
                                            .kv_end = kv};
    }
    uint64_t ks = r->k_a + r->npa;
    r->tail_w0 = w;
    r->tail_n = n;
    r->tail_ctx = ctx;
    r->tail_kv = kv;
    if ((r->npa > 0 && ks == fin_min) || n == 0) {
        r->k_ev = ks; /* a completion at once, or nothing left to decode */
        return;
    }
    /* Decode steps in closed form until the first completion or the step the KV cache cannot
     * hold (step m runs while kv + n (m + 1) <= cap); prefills still waiting on a full budget
     * resume at the completion. */
    uint64_t ev = fin_min;
    double room = (double)r->kv_cap - kv;
    uint64_t mx = room >= n ? (uint64_t)floor(room / n) : 0;
    if (ks + mx < ev)
        ev = ks + mx;
    if (retry && ks < ev)
        ev = ks;
    r->k_ev = ev;
}

/* Preempt what the next step cannot hold, admit, and plan from the anchor (an event boundary). */
static void replan(struct service *s, uint32_t ri)
{
    struct llm_svc *ls = L(s);
    struct llm_rep *r = &ls->reps[ri];
    struct replica *rp = &s->reps[ri];
    r->planning = true;
    while (r->nheap && r->kv_used + r->nheap > (double)r->kv_cap)
        preempt_one(s, r);
    int retry = admit(s, r);
    while (running(r) == 0 && r->qlen) { /* cannot fit even alone: refuse it */
        ring_pop(r->q, &r->qhead, &r->qlen, r->qcap);
        s->narrived--;
        s->tot.dropped++;
        s->win.dropped++;
        ls->tot.rejected_long++;
        ls->win.rejected_long++;
        retry = admit(s, r);
    }
    if (running(r) == 0) {
        r->k_ev = NO_EVENT;
        r->npa = 0;
        engine_cancel(s->eng, &r->ev);
        set_active(s, ri, false);
        rp->busy = false;
        r->planning = false;
        if (rp->draining && r->qlen == 0) {
            for (uint32_t i = 0; i < r->ntp; i++)
                cluster_remove(s->cl, r->tids[i], s->eng->now);
            rp->gone = true;
            rp->draining = false;
        }
        return;
    }
    set_active(s, ri, true);
    rp->busy = true;
    r->v = rep_speed(s, r);
    plan(s, ri, retry == 2);
    r->planning = false;
    schedule(s, ri);
}

static void on_rep_event(void *ctx, uint64_t arg)
{
    struct service *s = ctx;
    struct llm_svc *ls = L(s);
    uint32_t ri = (uint32_t)arg;
    struct llm_rep *r = &ls->reps[ri];
    uint64_t k = r->k_ev;
    if (k == NO_EVENT)
        return;
    account_at(s, r, true, time_at(r, k), k);
    materialize(s, ri, k);
    replan(s, ri);
    load_changed(s, ri);
}

/* ---- routing ---- */

static bool rep_serving(const struct replica *rp)
{
    return !rp->gone && !rp->down && !rp->draining;
}

/* Replica ri's key in the least-loaded tree. */
static uint64_t load_key(const struct service *s, uint32_t ri)
{
    const struct llm_rep *r = &L(s)->reps[ri];
    if (ri >= s->nreps || !rep_serving(&s->reps[ri]))
        return UINT64_MAX;
    return (uint64_t)(running(r) + r->qlen) << 32 | ri;
}

/* Replica ri's load or state changed: update its leaf and the path to the root. */
static void load_changed(struct service *s, uint32_t ri)
{
    struct llm_svc *ls = L(s);
    if (ri >= ls->seg_leaves)
        return;
    uint32_t i = ls->seg_leaves + ri;
    ls->seg[i] = load_key(s, ri);
    for (i /= 2; i >= 1; i /= 2) {
        uint64_t a = ls->seg[2 * i], b = ls->seg[2 * i + 1];
        ls->seg[i] = a < b ? a : b;
    }
}

/* (Re)build the tree for `slots` replica slots. 0 or -ENOMEM. */
static int load_tree(struct service *s, uint32_t slots)
{
    struct llm_svc *ls = L(s);
    uint32_t leaves = 1;
    while (leaves < slots)
        leaves *= 2;
    if (leaves != ls->seg_leaves) {
        uint64_t *seg = malloc(2 * (size_t)leaves * sizeof(*seg));
        if (!seg)
            return -ENOMEM;
        free(ls->seg);
        ls->seg = seg;
        ls->seg_leaves = leaves;
    }
    for (uint32_t i = 0; i < leaves; i++)
        ls->seg[leaves + i] = load_key(s, i);
    for (uint32_t i = leaves - 1; i >= 1; i--) {
        uint64_t a = ls->seg[2 * i], b = ls->seg[2 * i + 1];
        ls->seg[i] = a < b ? a : b;
    }
    return 0;
}

static void give(struct service *s, uint32_t ri, const struct llm_seq *q);

/* Pick a replica for a new request, or UINT32_MAX when none serves. */
static uint32_t route(struct service *s)
{
    struct llm_svc *ls = L(s);
    uint32_t nserv = 0;
    switch (ls->cfg->router) {
    case LLM_ROUTE_ROUND:
        for (uint32_t i = 0; i < s->nreps; i++) {
            uint32_t ri = (ls->rr_next + i) % s->nreps;
            if (rep_serving(&s->reps[ri])) {
                ls->rr_next = (ri + 1) % s->nreps;
                return ri;
            }
        }
        return UINT32_MAX;
    case LLM_ROUTE_RANDOM:
        for (uint32_t i = 0; i < s->nreps; i++)
            nserv += rep_serving(&s->reps[i]);
        if (!nserv)
            return UINT32_MAX;
        for (uint32_t i = 0, pick = (uint32_t)(rng_uniform(&ls->route_rng) * nserv); i < s->nreps;
             i++)
            if (rep_serving(&s->reps[i]) && pick-- == 0)
                return i;
        return UINT32_MAX;
    case LLM_ROUTE_LEAST:
    default: /* the tree's root: fewest outstanding, then the lowest index */
        return ls->seg_leaves && ls->seg[1] != UINT64_MAX ? (uint32_t)(ls->seg[1] & 0xffffffffu)
                                                          : UINT32_MAX;
    }
}

static void give_one(struct service *s, uint32_t ri, const struct llm_seq *q);

/* A request reaches replica ri now. */
static void give(struct service *s, uint32_t ri, const struct llm_seq *q)
{
    give_one(s, ri, q);
    load_changed(s, ri);
}

static void give_one(struct service *s, uint32_t ri, const struct llm_seq *q)
{
    struct llm_svc *ls = L(s);
    struct llm_rep *r = &ls->reps[ri];
    s->narrived++;
    if (ring_push(&r->q, &r->qhead, &r->qlen, &r->qcap, q, false)) {
        fail(s, -ENOMEM, "out of memory in an LLM replica's queue");
        return;
    }
    double now = (double)s->eng->now;
    if (!r->active) { /* idle: its engine steps at once */
        account(s, r, true, now);
        r->t_a = now;
        r->acc_t = now;
        r->acc_k = r->k_a;
        r->npa = 0;
        replan(s, ri);
        return;
    }
    if (r->qlen > 1 || r->k_ev == NO_EVENT)
        return; /* FCFS: it waits behind the head, which waits for a completion */
    uint64_t b = boundary_ge(r, now);
    if (b >= r->k_ev)
        return;
    uint64_t pending = 0;
    if (!ls->cfg->chunked)
        for (uint32_t i = 0; i < r->npf; i++)
            pending += r->seq[r->pf[i]].need;
    if (can_admit(s, r, kv_at(r, b), b > r->k_a ? 0 : pending, q) != 1)
        return;
    r->k_ev = b;
    schedule(s, ri);
}

static void dispatch(struct service *s, const struct llm_seq *q)
{
    struct llm_svc *ls = L(s);
    uint32_t ri = route(s);
    if (ri != UINT32_MAX) {
        give(s, ri, q);
        return;
    }
    if (ls->rqlen >= s->cfg->max_queue) {
        s->tot.dropped++;
        s->win.dropped++;
        return;
    }
    s->narrived++;
    if (ring_push(&ls->rq, &ls->rqhead, &ls->rqlen, &ls->rqcap, q, false))
        fail(s, -ENOMEM, "out of memory in an LLM router's queue");
}

/* Requests held at the router go to the replicas serving now. */
static void drain_router(struct service *s)
{
    struct llm_svc *ls = L(s);
    while (ls->rqlen) {
        uint32_t ri = route(s);
        if (ri == UINT32_MAX)
            return;
        struct llm_seq q = ring_pop(ls->rq, &ls->rqhead, &ls->rqlen, ls->rqcap);
        s->narrived--;
        give(s, ri, &q);
    }
}

/* ---- arrivals ---- */

static void draw_next(struct service *s)
{
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    struct arrival a;
    ls->have_next = false;
    if (ls->src_done)
        return;
    int rc = arrival_source_next(s->src, &a, &s->src_err);
    if (rc == 1) {
        ls->src_done = true;
        s->src_done = true;
        return;
    }
    if (rc < 0) {
        ls->src_done = true;
        fail(s, rc, NULL);
        return;
    }
    struct llm_seq *q = &ls->next;
    memset(q, 0, sizeof(*q));
    q->arrival = a.t;
    q->first = -1;
    q->heap = -1;
    q->prompt = a.in_tokens;
    q->output = a.out_tokens;
    if (q->prompt == 0 && q->output == 0) { /* the source does not know: the distribution */
        q->prompt = tok_draw(&c->prompt, &ls->tok_rng);
        q->output = tok_draw(&c->output, &ls->tok_rng);
    }
    if (q->prompt == 0)
        q->prompt = 1;
    if (q->output == 0)
        q->output = 1;
    ls->have_next = true;
}

static void schedule_arrival(struct service *s)
{
    struct llm_svc *ls = L(s);
    if (!ls->have_next)
        return;
    if (engine_at(s->eng, ls->next.arrival, on_arrival, s, 0, &ls->arr_ev))
        fail(s, -ENOMEM, "out of memory in the event queue");
}

static void on_arrival(void *ctx, uint64_t arg)
{
    struct service *s = ctx;
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    (void)arg;
    while (ls->have_next && ls->next.arrival <= s->eng->now) {
        struct llm_seq q = ls->next;
        draw_next(s);
        s->tot.arrived++;
        s->win.arrived++;
        /* vLLM refuses a prompt of max_model_len or more and cuts the output to fit it. */
        if (q.prompt >= c->max_context) {
            s->tot.dropped++;
            s->win.dropped++;
            ls->tot.rejected_long++;
            ls->win.rejected_long++;
            continue;
        }
        if (q.output > c->max_context - q.prompt) {
            q.output = c->max_context - q.prompt;
            ls->tot.truncated++;
            ls->win.truncated++;
        }
        dispatch(s, &q);
    }
    schedule_arrival(s);
}

/* ---- replicas come and go ---- */

/* KV capacity and coefficients of replica ri on its cards. */
static int rep_setup(struct service *s, uint32_t ri)
{
    struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    struct llm_rep *r = &ls->reps[ri];
    const struct tenant *t = &s->cl->tenants[r->tids[0]];
    const struct mig_profile *p =
        t->instance >= 0 ? s->cl->cards[t->gpu].layout.inst[t->instance].profile : NULL;
    double mem = 1, sm = 1, dev = s->cl->spec->memory_mib / 1024.0;
    uint32_t cards = r->ntp;
    if (p) {
        mem = p->memory_slices / 8.0;
        sm = t->st.slice_speed;
        dev = p->memory_mib / 1024.0;
        cards = 1;
    }
    struct llm_mem f;
    if (llm_memory_plan(&c->model, dev, cards, c->mem_util, c->overhead_gib, c->block,
                        c->max_context, &f))
        return -ENOSPC;
    r->kv_cap = f.kv_tokens;
    r->swap_cap = c->preempt == LLM_PREEMPT_SWAP
                      ? (uint64_t)(c->swap_gib * 1073741824.0 / c->model.kv_bytes_per_token)
                      : 0;
    return llm_coef_scale(&c->base, &c->knobs, c->tp, mem, sm, &r->coef);
}

int llm_add_replica(struct service *s, const uint32_t *tids, uint32_t ntp, bool ready,
                    uint32_t *out)
{
    struct llm_svc *ls = L(s);
    uint32_t ri = s->nreps;
    for (uint32_t i = 0; i < s->nreps; i++)
        if (s->reps[i].gone) {
            ri = i;
            break;
        }
    if (ri == s->nreps && s->nreps == s->cap_reps) {
        uint32_t cap = s->cap_reps ? 2 * s->cap_reps : 8;
        struct replica *rp = realloc(s->reps, cap * sizeof(*rp));
        if (!rp)
            return -ENOMEM;
        s->reps = rp;
        struct llm_rep *lr = realloc(ls->reps, cap * sizeof(*lr));
        if (!lr)
            return -ENOMEM;
        memset(lr + s->cap_reps, 0, (cap - s->cap_reps) * sizeof(*lr));
        ls->reps = lr;
        s->cap_reps = cap;
    }
    struct replica *rp = &s->reps[ri];
    struct llm_rep *r = &ls->reps[ri];
    if (ri < s->nreps)
        rep_free(r);
    memset(rp, 0, sizeof(*rp));
    memset(r, 0, sizeof(*r));
    rp->tid = tids[0];
    rp->gpu = s->cl->tenants[tids[0]].gpu;
    rp->speed = 1.0;
    rp->fixed_scale = rp->bw_factor = 1.0;
    r->ntp = ntp;
    memcpy(r->tids, tids, ntp * sizeof(*tids));
    r->k_ev = NO_EVENT;
    r->v = 1;
    r->acc_t = (double)s->eng->now;
    int rc = rep_alloc(r, ls->cfg->max_num_seqs);
    if (!rc)
        rc = rep_setup(s, ri);
    if (rc) {
        rep_free(r);
        return rc;
    }
    for (uint32_t i = 0; i < ntp; i++)
        s->cl->tenants[tids[i]].member = ri;
    if (ri == s->nreps)
        s->nreps++;
    s->live_reps++;
    if (out)
        *out = ri;
    rp->down = !ready;
    if ((rc = load_tree(s, s->cap_reps)))
        return rc;
    if (ready)
        drain_router(s);
    return 0;
}

/* Everything in replica ri (running and queued) is lost with its process. */
static void lose_all(struct service *s, uint32_t ri)
{
    struct llm_rep *r = &L(s)->reps[ri];
    uint64_t lost = running(r) + r->qlen;
    s->tot.failed += lost;
    s->win.failed += lost;
    s->in_service -= running(r);
    s->narrived -= r->qlen;
    r->qlen = r->qhead = 0;
    r->npf = 0;
    r->nheap = 0;
    r->nfree = r->cap;
    for (uint32_t i = 0; i < r->cap; i++)
        r->free_slot[i] = r->cap - 1 - i;
    r->kv_used = r->ctx_dec = 0;
    r->swap_used = 0;
    r->extra_w = 0;
    r->npa = 0;
    r->k_ev = NO_EVENT;
    engine_cancel(s->eng, &r->ev);
}

int llm_remove_replica(struct service *s, uint32_t ri)
{
    if (ri >= s->nreps || s->reps[ri].gone || s->reps[ri].draining)
        return -EINVAL;
    struct replica *rp = &s->reps[ri];
    struct llm_rep *r = &L(s)->reps[ri];
    s->live_reps--;
    llm_sync(s);
    if (!rp->down && (running(r) || r->qlen)) {
        rp->draining = true; /* graceful: it serves what it holds, takes nothing new */
        load_changed(s, ri);
        return 0;
    }
    rp->down = false;
    for (uint32_t i = 0; i < r->ntp; i++)
        cluster_remove(s->cl, r->tids[i], s->eng->now);
    rp->gone = true;
    load_changed(s, ri);
    return 0;
}

uint32_t llm_pick_victim(const struct service *s)
{
    /* Node-compact first (as the batch kind), then a starting or down replica, then the one
     * with the least in flight (it drains first). */
    const struct llm_svc *ls = L(s);
    uint32_t best = UINT32_MAX;
    uint64_t bkey = 0, bload = 0;
    for (uint32_t i = s->nreps; i-- > 0;) {
        const struct replica *rp = &s->reps[i];
        if (rp->gone || rp->draining)
            continue;
        const struct card *g = &s->cl->cards[rp->gpu];
        uint64_t key = (uint64_t)(cluster_node_cards(s->cl, g->node) - s->cl->node_free[g->node])
                           << 32 |
                       g->nten;
        uint64_t load = rp->down ? 0 : 1 + running(&ls->reps[i]) + ls->reps[i].qlen;
        if (best == UINT32_MAX || key < bkey || (key == bkey && load < bload)) {
            best = i;
            bkey = key;
            bload = load;
        }
    }
    return best;
}

void llm_on_speed(struct service *s, uint32_t ri)
{
    struct llm_rep *r = &L(s)->reps[ri];
    const struct replica *rp = &s->reps[ri];
    if (rp->gone || r->planning || !r->active || r->k_ev == NO_EVENT)
        return; /* replan() reads the speed itself */
    double v = rep_speed(s, r);
    if (v == r->v)
        return;
    double now = (double)s->eng->now;
    account(s, r, true, now);
    double w = (now - r->t_a) * r->v; /* work done from the anchor; the plan stays */
    r->t_a = now - w / v;
    r->v = v;
    schedule(s, ri);
}

void llm_replica_down(struct service *s, uint32_t ri)
{
    struct replica *rp = &s->reps[ri];
    struct llm_rep *r = &L(s)->reps[ri];
    if (rp->down)
        return;
    account(s, r, true, (double)s->eng->now);
    lose_all(s, ri);
    set_active(s, ri, false);
    rp->busy = false;
    if (rp->draining) {
        for (uint32_t i = 0; i < r->ntp; i++)
            cluster_remove(s->cl, r->tids[i], s->eng->now);
        rp->gone = true;
        rp->draining = false;
    } else {
        rp->down = true;
    }
    load_changed(s, ri);
}

void llm_replica_up(struct service *s, uint32_t ri)
{
    struct replica *rp = &s->reps[ri];
    struct llm_rep *r = &L(s)->reps[ri];
    if (!rp->down || rp->gone)
        return;
    rp->down = false;
    r->acc_t = (double)s->eng->now;
    load_changed(s, ri);
    drain_router(s);
}

void llm_sync(struct service *s)
{
    struct llm_svc *ls = L(s);
    double now = (double)s->eng->now;
    for (uint32_t i = 0; i < s->nreps; i++) {
        const struct replica *rp = &s->reps[i];
        if (!rp->gone)
            account(s, &ls->reps[i], !rp->down, now);
    }
}

double llm_cfg_capacity_rps(const struct llm_cfg *c)
{
    return c->cap_rps;
}

double llm_service_capacity_rps(const struct service *s)
{
    const struct llm_svc *ls = L(s);
    const struct llm_cfg *c = ls->cfg;
    double cap = 0, p = tok_mean(&c->prompt), o = tok_mean(&c->output);
    for (uint32_t i = 0; i < s->nreps; i++) {
        const struct replica *rp = &s->reps[i];
        if (rp->gone || rp->down || rp->draining)
            continue;
        const struct llm_rep *r = &ls->reps[i];
        struct llm_coef k = r->coef;
        double v = r->v > 0 ? r->v : 1;
        k.fixed_us /= v;
        k.weights_us /= v;
        k.token_us /= v;
        k.ctx_us /= v;
        k.pair_us /= v;
        cap += llm_capacity_rps(&k, (double)r->kv_cap, c->max_num_seqs, p, o, (double)c->tpot_slo);
    }
    return cap;
}

double llm_interval_kv(const struct service *s)
{
    const struct llm_svc *ls = L(s);
    return ls->win.kv_cap_us > 0 ? ls->win.kv_token_us / ls->win.kv_cap_us : NAN;
}

uint64_t llm_running(const struct service *s)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->nreps; i++)
        if (!s->reps[i].gone)
            n += running(&L(s)->reps[i]);
    return n;
}

void llm_fit_text(const struct service *s, const struct mig_profile *p, char *buf, size_t len)
{
    const struct llm_cfg *c = L(s)->cfg;
    struct llm_mem f;
    double dev = p ? p->memory_mib / 1024.0 : s->cl->spec->memory_mib / 1024.0;
    if (llm_memory_plan(&c->model, dev, p ? 1 : c->tp, c->mem_util, c->overhead_gib, c->block,
                        c->max_context, &f) == 0) {
        if (len)
            buf[0] = 0;
        return;
    }
    char where[64];
    snprintf(where, sizeof(where), "%s%s", p ? "MIG " : "", p ? p->name : s->cl->spec->name);
    llm_fit_msg(buf, len, c->model_name, where, &f);
}

void llm_reset_interval(struct service *s)
{
    struct llm_svc *ls = L(s);
    hist_merge(ls->ttft_tot, ls->ttft_win);
    hist_reset(ls->ttft_win);
    hist_merge(ls->tpot_tot, ls->tpot_win);
    hist_reset(ls->tpot_win);
    memset(&ls->win, 0, sizeof(ls->win));
}

int llm_service_init(struct service *s, uint64_t seed)
{
    char name[160];
    struct llm_svc *ls = calloc(1, sizeof(*ls));
    if (!ls)
        return -ENOMEM;
    s->llm = ls;
    ls->cfg = s->cfg->llm;
    ls->ttft_tot = malloc(sizeof(struct hist));
    ls->ttft_win = malloc(sizeof(struct hist));
    ls->tpot_tot = malloc(sizeof(struct hist));
    ls->tpot_win = malloc(sizeof(struct hist));
    if (!ls->ttft_tot || !ls->ttft_win || !ls->tpot_tot || !ls->tpot_win)
        return -ENOMEM;
    hist_reset(ls->ttft_tot);
    hist_reset(ls->ttft_win);
    hist_reset(ls->tpot_tot);
    hist_reset(ls->tpot_win);
    snprintf(name, sizeof(name), "service/%s/tokens", s->cfg->name);
    if (rng_init(&ls->tok_rng, seed, rng_stream_id(name)))
        return -ENOMEM;
    snprintf(name, sizeof(name), "service/%s/router", s->cfg->name);
    if (rng_init(&ls->route_rng, seed, rng_stream_id(name)))
        return -ENOMEM;
    draw_next(s);
    schedule_arrival(s);
    return 0;
}

void llm_service_release(struct service *s)
{
    struct llm_svc *ls = L(s);
    if (!ls)
        return;
    for (uint32_t i = 0; ls->reps && i < s->nreps; i++)
        rep_free(&ls->reps[i]);
    free(ls->reps);
    free(ls->seg);
    free(ls->rq);
    free(ls->ttft_tot);
    free(ls->ttft_win);
    free(ls->tpot_tot);
    free(ls->tpot_win);
    rng_release(&ls->tok_rng);
    rng_release(&ls->route_rng);
    free(ls);
    s->llm = NULL;
}
