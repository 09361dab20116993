/* kueue_admit.c — Kueue quota accounting, queue order and classic preemption. */
#include "sim/policy/kueue_admit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-9

struct kueue {
    struct kueue_cq *cqs; /* the CQs as flavor fl sees them (the added ones with one flavor) */
    uint32_t n_cq, cap_cq;
    struct kueue_cohort *coh; /* parents before children; flavor fl's view like cqs */
    uint32_t n_coh, cap_coh;
    /* Flavors (kueue_set_flavors): n_fl views of the CQs and cohorts, each with that flavor's
     * quota; cqs/coh point at view fl (use_flavor). n_fl 1 and no views: cqs/coh are owned. */
    uint32_t n_fl, fl;
    struct kueue_cq *fcqs, *cqs0;     /* n_fl × n_cq views; the added array */
    struct kueue_cohort *fcoh, *coh0; /* n_fl × n_coh views; the added array */
    uint32_t *fvict;                  /* scratch: the best flavor's victims */
    double *coh_sq, *coh_use;         /* scratch per cohort: SubtreeQuota, Usage (fill_tree) */
    uint8_t res[KUEUE_MAX_FLAVORS];   /* each flavor's resource (kueue_set_flavor_resource) */
    bool fair;                        /* fair sharing on (kueue_set_fair_sharing) */
    enum kueue_fs_strategy strategies[2];
    uint32_t n_strategies;
    struct kueue_wl *wls;
    uint32_t n_wl, cap_wl;
    /* Scratch, sized with the workloads: usage per CQ, ordering keys, victims. */
    double *usage;
    struct key *keys;
    uint32_t *victims;
    uint32_t cap_scratch;
    sim_time now; /* kueue_set_clock */
    kueue_filter_fn filter;
    void *filter_ctx;
};

/* An ordering key for a workload (index into wls). */
struct key {
    uint32_t idx;
    uint32_t id;
    int32_t priority;
    int32_t other_cq; /* candidates: 1 if from another CQ than the preemptor's */
    sim_time t;       /* created (queue order) or admitted_at (victim order) */
};

struct kueue *kueue_create(void)
{
    struct kueue *k = calloc(1, sizeof(struct kueue));
    if (k)
        k->n_fl = 1;
    return k;
}

/* Look at the quota of flavor f (a no-op with one flavor). */
static void use_flavor(struct kueue *k, uint32_t f)
{
    k->fl = f;
    if (k->fcqs) {
        k->cqs = k->fcqs + (size_t)f * k->n_cq;
        k->coh = k->fcoh + (size_t)f * k->n_coh;
    }
}

/* The i-th flavor CQ c lists (flavor 0 when it lists none). */
static uint32_t cq_flavor(const struct kueue_cq *c, uint32_t i)
{
    return c->nflavors ? c->flavors[i] : 0;
}

static uint32_t cq_nflavors(const struct kueue_cq *c)
{
    return c->nflavors ? c->nflavors : 1;
}

void kueue_destroy(struct kueue *k)
{
    if (!k)
        return;
    free(k->fcqs ? k->cqs0 : k->cqs);
    free(k->fcoh ? k->coh0 : k->coh);
    free(k->fcqs);
    free(k->fcoh);
    free(k->fvict);
    free(k->coh_sq);
    free(k->coh_use);
    free(k->wls);
    free(k->usage);
    free(k->keys);
    free(k->victims);
    free(k);
}

void kueue_cq_default(struct kueue_cq *cq)
{
    memset(cq, 0, sizeof *cq);
    cq->cohort = KUEUE_NO_COHORT;
    cq->borrowing_limit = KUEUE_UNLIMITED;
    cq->lending_limit = KUEUE_UNLIMITED;
    cq->strategy = KUEUE_BEST_EFFORT_FIFO;
    cq->within = KUEUE_WITHIN_NEVER;
    cq->reclaim = KUEUE_RECLAIM_NEVER;
    cq->weight = 1;
}

void kueue_cohort_default(struct kueue_cohort *c)
{
    memset(c, 0, sizeof *c);
    c->parent = KUEUE_NO_COHORT;
    c->borrowing_limit = KUEUE_UNLIMITED;
    c->lending_limit = KUEUE_UNLIMITED;
    c->weight = 1;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* Scratch arrays big enough for all CQs and workloads. */
static int ensure_scratch(struct kueue *k)
{
    uint32_t need = 2 * (k->n_wl > k->n_cq ? k->n_wl : k->n_cq) + 2; /* keys: candidates + a copy */
    if (need <= k->cap_scratch)
        return 0;
    double *u = realloc(k->usage, need * sizeof *u);
    if (!u)
        return -ENOMEM;
    k->usage = u;
    struct key *ks = realloc(k->keys, need * sizeof *ks);
    if (!ks)
        return -ENOMEM;
    k->keys = ks;
    uint32_t *v = realloc(k->victims, need * sizeof *v);
    if (!v)
        return -ENOMEM;
    k->victims = v;
    v = realloc(k->fvict, need * sizeof *v);
    if (!v)
        return -ENOMEM;
    k->fvict = v;
    k->cap_scratch = need;
    return 0;
}

static bool bad_limits(double nominal, double bl, double ll, double weight)
{
    return !(nominal >= 0) || (bl < 0 && bl != KUEUE_UNLIMITED) ||
           (ll < 0 && ll != KUEUE_UNLIMITED) || !(weight >= 0);
}

/* Cohorts up to index n - 1 exist (implicit ones: Kueue's cohort without a Cohort object). */
static int ensure_cohorts(struct kueue *k, uint32_t n)
{
    if (n <= k->n_coh)
        return 0;
    if (grow((void **)&k->coh, &k->cap_coh, n, sizeof *k->coh))
        return -ENOMEM;
    double *sq = realloc(k->coh_sq, n * sizeof *sq);
    if (!sq)
        return -ENOMEM;
    k->coh_sq = sq;
    double *use = realloc(k->coh_use, n * sizeof *use);
    if (!use)
        return -ENOMEM;
    k->coh_use = use;
    while (k->n_coh < n)
        kueue_cohort_default(&k->coh[k->n_coh++]);
    return 0;
}

int kueue_add_cohort(struct kueue *k, const struct kueue_cohort *c)
{
    if (k->fcqs)
        return -EINVAL;
    if (bad_limits(c->nominal, c->borrowing_limit, c->lending_limit, c->weight) ||
        c->parent < KUEUE_NO_COHORT || (c->parent >= 0 && (uint32_t)c->parent >= k->n_coh))
        return -EINVAL;
    if (k->n_coh >= INT32_MAX || ensure_cohorts(k, k->n_coh + 1))
        return -ENOMEM;
    k->coh[k->n_coh - 1] = *c;
    return (int)(k->n_coh - 1);
}

int kueue_add_cq(struct kueue *k, const struct kueue_cq *cq)
{
    if (k->fcqs || bad_limits(cq->nominal, cq->borrowing_limit, cq->lending_limit, cq->weight) ||
        cq->cohort < KUEUE_NO_COHORT || cq->nflavors > KUEUE_MAX_FLAVORS)
        return -EINVAL;
    if (k->n_cq >= INT32_MAX || grow((void **)&k->cqs, &k->cap_cq, k->n_cq + 1, sizeof *k->cqs))
        return -ENOMEM;
    if (cq->cohort >= 0 && ensure_cohorts(k, (uint32_t)cq->cohort + 1))
        return -ENOMEM;
    k->cqs[k->n_cq] = *cq;
    return (int)k->n_cq++;
}

int kueue_set_flavors(struct kueue *k, uint32_t n)
{
    if (n < 1 || n > KUEUE_MAX_FLAVORS || k->fcqs)
        return -EINVAL;
    for (uint32_t c = 0; c < k->n_cq; c++)
        for (uint32_t i = 0; i < k->cqs[c].nflavors; i++)
            if (k->cqs[c].flavors[i] >= n)
                return -EINVAL;
    if (n == 1)
        return 0;
    struct kueue_cq *fc = malloc((size_t)n * (k->n_cq ? k->n_cq : 1) * sizeof *fc);
    struct kueue_cohort *fh = malloc((size_t)n * (k->n_coh ? k->n_coh : 1) * sizeof *fh);
    if (!fc || !fh) {
        free(fc);
        free(fh);
        return -ENOMEM;
    }
    for (uint32_t f = 0; f < n; f++) {
        if (k->n_cq) /* memcpy from NULL is undefined even for 0 bytes */
            memcpy(fc + (size_t)f * k->n_cq, k->cqs, k->n_cq * sizeof *fc);
        if (k->n_coh)
            memcpy(fh + (size_t)f * k->n_coh, k->coh, k->n_coh * sizeof *fh);
    }
    k->cqs0 = k->cqs;
    k->coh0 = k->coh;
    k->fcqs = fc;
    k->fcoh = fh;
    k->n_fl = n;
    use_flavor(k, 0);
    return 0;
}

int kueue_set_flavor_resource(struct kueue *k, uint32_t f, uint32_t res)
{
    if (f >= k->n_fl || res >= KUEUE_MAX_FLAVORS)
        return -EINVAL;
    k->res[f] = (uint8_t)res;
    return 0;
}

int kueue_set_cq_quota(struct kueue *k, uint32_t cq, uint32_t f, double nominal, double bl,
                       double ll)
{
    if (cq >= k->n_cq || f >= k->n_fl || bad_limits(nominal, bl, ll, 1))
        return -EINVAL;
    struct kueue_cq *c = k->fcqs ? &k->fcqs[(size_t)f * k->n_cq + cq] : &k->cqs[cq];
    c->nominal = nominal;
    c->borrowing_limit = bl;
    c->lending_limit = ll;
    return 0;
}

int kueue_set_cohort_quota(struct kueue *k, uint32_t ci, uint32_t f, double nominal, double bl,
                           double ll)
{
    if (ci >= k->n_coh || f >= k->n_fl || bad_limits(nominal, bl, ll, 1))
        return -EINVAL;
    struct kueue_cohort *c = k->fcoh ? &k->fcoh[(size_t)f * k->n_coh + ci] : &k->coh[ci];
    c->nominal = nominal;
    c->borrowing_limit = bl;
    c->lending_limit = ll;
    return 0;
}

uint32_t kueue_eval_flavor(const struct kueue *k)
{
    return k->fl;
}

void kueue_set_fair_sharing(struct kueue *k, const enum kueue_fs_strategy *strategies, uint32_t n)
{
    k->fair = n > 0;
    k->n_strategies = n > 2 ? 2 : n;
    for (uint32_t i = 0; i < k->n_strategies; i++)
        k->strategies[i] = strategies[i];
}

static int find_idx(const struct kueue *k, uint32_t id)
{
    for (uint32_t i = 0; i < k->n_wl; i++)
        if (k->wls[i].id == id)
            return (int)i;
    return -1;
}

const struct kueue_wl *kueue_find(const struct kueue *k, uint32_t id)
{
    int i = find_idx(k, id);
    return i < 0 ? NULL : &k->wls[i];
}

int kueue_submit(struct kueue *k, uint32_t id, uint32_t cq, int32_t priority, double gpus,
                 sim_time created)
{
    if (cq >= k->n_cq || !(gpus > 0))
        return -EINVAL;
    if (find_idx(k, id) >= 0)
        return -EEXIST;
    if (grow((void **)&k->wls, &k->cap_wl, k->n_wl + 1, sizeof *k->wls))
        return -ENOMEM;
    struct kueue_wl *w = &k->wls[k->n_wl++];
    memset(w, 0, sizeof *w);
    w->id = id;
    w->cq = cq;
    w->priority = priority;
    w->gpus = gpus;
    w->created = created;
    w->queued = created;
    w->flavors_ok = UINT64_MAX;
    return 0;
}

int kueue_set_wl_flavors(struct kueue *k, uint32_t id, uint64_t mask)
{
    int i = find_idx(k, id);
    if (i < 0)
        return -ENOENT;
    k->wls[i].flavors_ok = mask;
    return 0;
}

int kueue_remove(struct kueue *k, uint32_t id)
{
    int i = find_idx(k, id);
    if (i < 0)
        return -ENOENT;
    k->wls[i] = k->wls[--k->n_wl];
    return 0;
}

int kueue_evict(struct kueue *k, uint32_t id)
{
    int i = find_idx(k, id);
    if (i < 0)
        return -ENOENT;
    if (!k->wls[i].admitted)
        return -EINVAL;
    k->wls[i].admitted = false;
    return 0;
}

void kueue_set_clock(struct kueue *k, sim_time now)
{
    k->now = now;
}

void kueue_set_filter(struct kueue *k, kueue_filter_fn fn, void *ctx)
{
    k->filter = fn;
    k->filter_ctx = ctx;
}

int kueue_requeue(struct kueue *k, uint32_t id, sim_time now, sim_time requeue_at, bool reorder)
{
    int rc = kueue_evict(k, id);
    if (rc)
        return rc;
    struct kueue_wl *w = &k->wls[find_idx(k, id)];
    w->requeues++;
    w->requeue_at = requeue_at;
    if (reorder)
        w->queued = now;
    return 0;
}

sim_time kueue_next_requeue(const struct kueue *k, sim_time now)
{
    sim_time next = SIM_TIME_MAX;
    for (uint32_t i = 0; i < k->n_wl; i++) {
        const struct kueue_wl *w = &k->wls[i];
        if (!w->admitted && w->requeue_at > now && w->requeue_at < next)
            next = w->requeue_at;
    }
    return next;
}

double kueue_usage(const struct kueue *k, uint32_t cq)
{
    double u = 0;
    for (uint32_t i = 0; i < k->n_wl; i++)
        if (k->wls[i].admitted && k->wls[i].cq == cq)
            u += k->wls[i].gpus;
    return u;
}

double kueue_usage_flavor(const struct kueue *k, uint32_t cq, uint32_t f)
{
    double u = 0;
    for (uint32_t i = 0; i < k->n_wl; i++)
        if (k->wls[i].admitted && k->wls[i].cq == cq && k->wls[i].flavor == f)
            u += k->wls[i].gpus;
    return u;
}

bool kueue_borrowing(const struct kueue *k, uint32_t cq)
{
    if (cq >= k->n_cq)
        return false;
    if (!k->fcqs)
        return kueue_usage(k, cq) > k->cqs[cq].nominal + EPS;
    for (uint32_t f = 0; f < k->n_fl; f++)
        if (kueue_usage_flavor(k, cq, f) > k->fcqs[(size_t)f * k->n_cq + cq].nominal + EPS)
            return true;
    return false;
}

/* Usage per CQ on the flavor being looked at (k->fl). */
static void fill_usage(const struct kueue *k, double *usage)
{
    for (uint32_t c = 0; c < k->n_cq; c++)
        usage[c] = 0;
    for (uint32_t i = 0; i < k->n_wl; i++)
        if (k->wls[i].admitted && k->wls[i].flavor == k->fl)
            usage[k->wls[i].cq] += k->wls[i].gpus;
}

static double pos(double x)
{
    return x > 0 ? x : 0;
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

/* Kueue's localQuota: what a node keeps from its parent, max(0, SubtreeQuota − lendingLimit)
 * (0 without a lendingLimit: everything is lent). */
static double local_quota(double sq, double lending_limit)
{
    return lending_limit < 0 ? 0 : pos(sq - lending_limit);
}

/*
 * SubtreeQuota and Usage of every cohort from the CQs' usage (Kueue's
 * accumulateFromChild): a cohort's quota is its own nominal plus what each
 * child lends (SubtreeQuota − localQuota); its usage is what each child uses
 * beyond its localQuota. Children have larger indices than their parents.
 */
static void fill_tree(struct kueue *k, const double *usage)
{
    for (uint32_t c = 0; c < k->n_coh; c++) {
        k->coh_sq[c] = k->coh[c].nominal;
        k->coh_use[c] = 0;
    }
    for (uint32_t j = 0; j < k->n_cq; j++) {
        const struct kueue_cq *q = &k->cqs[j];
        if (q->cohort < 0)
            continue;
        double lq = local_quota(q->nominal, q->lending_limit);
        k->coh_sq[q->cohort] += q->nominal - lq;
        k->coh_use[q->cohort] += pos(usage[j] - lq);
    }
    for (uint32_t c = k->n_coh; c-- > 0;) {
        int32_t p = k->coh[c].parent;
        if (p < 0)
            continue;
        double lq = local_quota(k->coh_sq[c], k->coh[c].lending_limit);
        k->coh_sq[p] += k->coh_sq[c] - lq;
        k->coh_use[p] += pos(k->coh_use[c] - lq);
    }
}

/* Kueue's available() for a node of quota sq, usage use, limits bl/ll under cohort parent. */
static double avail_node(const struct kueue *k, double sq, double use, double bl, double ll,
                         int32_t parent);

static double avail_cohort(const struct kueue *k, int32_t c)
{
    const struct kueue_cohort *h = &k->coh[c];
    return avail_node(k, k->coh_sq[c], k->coh_use[c], h->borrowing_limit, h->lending_limit,
                      h->parent);
}

static double avail_node(const struct kueue *k, double sq, double use, double bl, double ll,
                         int32_t parent)
{
    if (parent < 0)
        return sq - use;
    double lq = local_quota(sq, ll);
    double from_parent = avail_cohort(k, parent);
    if (bl >= 0)
        from_parent = min2(sq - lq - pos(use - lq) + bl, from_parent);
    return pos(lq - use) + from_parent;
}

/* Kueue's potentialAvailable(): the most a node could use with everyone else idle. */
static double potential_node(const struct kueue *k, double sq, double bl, double ll, int32_t parent)
{
    if (parent < 0)
        return sq;
    const struct kueue_cohort *h = &k->coh[parent];
    double p = local_quota(sq, ll) + potential_node(k, k->coh_sq[parent], h->borrowing_limit,
                                                    h->lending_limit, h->parent);
    return bl >= 0 ? min2(sq + bl, p) : p;
}

static int32_t root_of(const struct kueue *k, int32_t c)
{
    while (c >= 0 && k->coh[c].parent >= 0)
        c = k->coh[c].parent;
    return c;
}

/* Whether g more GPUs fit CQ cq given per-CQ usage (Kueue's available() over the cohort
 * tree); without allow_borrow the CQ must stay within its nominal quota. */
static bool fits(struct kueue *k, const double *usage, uint32_t cq, double g, bool allow_borrow)
{
    const struct kueue_cq *c = &k->cqs[cq];
    double after = usage[cq] + g;
    if (after > c->nominal + EPS && (!allow_borrow || c->cohort == KUEUE_NO_COHORT))
        return false;
    if (c->cohort == KUEUE_NO_COHORT)
        return true;
    fill_tree(k, usage);
    return g <=
           avail_node(k, c->nominal, usage[cq], c->borrowing_limit, c->lending_limit, c->cohort) +
               EPS;
}

/* Usage above nominal of CQ cq on each flavor but the one looked at (k->fl), from its admitted
 * workloads, into over[] (0 where it does not borrow, and on k->fl); returns their sum (0 with
 * one flavor). */
static double borrowed_per_flavor(const struct kueue *k, uint32_t cq, double *over)
{
    for (uint32_t f = 0; f < KUEUE_MAX_FLAVORS; f++)
        over[f] = 0;
    if (!k->fcqs)
        return 0;
    double u[KUEUE_MAX_FLAVORS] = {0};
    for (uint32_t i = 0; i < k->n_wl; i++) {
        const struct kueue_wl *w = &k->wls[i];
        if (w->admitted && w->cq == cq && w->flavor != k->fl)
            u[w->flavor] += w->gpus;
    }
    double b = 0;
    for (uint32_t f = 0; f < k->n_fl; f++) {
        double o = u[f] - k->fcqs[(size_t)f * k->n_cq + cq].nominal;
        if (f != k->fl && o > EPS) {
            b += o;
            over[f] = o;
        }
    }
    return b;
}

static double borrowed_elsewhere(const struct kueue *k, uint32_t cq)
{
    double over[KUEUE_MAX_FLAVORS];
    return borrowed_per_flavor(k, cq, over);
}

/* Whether CQ cq borrows on some flavor, with usage[] on the flavor looked at (Kueue's
 * DRS.IsBorrowing: usage above nominal on any flavor-resource). */
static bool borrowing_any(const struct kueue *k, const double *usage, uint32_t cq)
{
    return usage[cq] > k->cqs[cq].nominal + EPS || borrowed_elsewhere(k, cq) > 0;
}

/*
 * Kueue's lendable capacity for a CQ of cohort c (fair_sharing.go calculateLendable): the
 * cohort's potentialAvailable per resource, summed over the flavors of that resource, into
 * per_res[resource]. Leaves k looking at flavor k->fl; clobbers the tree scratch (coh_sq,
 * coh_use).
 */
static void lendable(struct kueue *k, const double *usage, int32_t c, double *per_res)
{
    uint32_t fl = k->fl;
    for (uint32_t r = 0; r < KUEUE_MAX_FLAVORS; r++)
        per_res[r] = 0;
    for (uint32_t f = 0; f < k->n_fl; f++) {
        use_flavor(k, f);
        fill_tree(k, usage); /* coh_sq only is read: usage on other flavors does not matter */
        const struct kueue_cohort *h = &k->coh[c];
        per_res[k->res[f]] +=
            potential_node(k, k->coh_sq[c], h->borrowing_limit, h->lending_limit, h->parent);
    }
    use_flavor(k, fl);
}

/*
 * Kueue's dominant resource share of CQ cq with extra GPUs added on the flavor looked at
 * (negative: removed), usage[] being that flavor's usage (pkg/cache/scheduler/fair_sharing.go
 * dominantResourceShare). Per resource name r (kueue_set_flavor_resource: nvidia.com/gpu, or
 * each nvidia.com/mig-<profile>): borrowed_r = Σ over r's flavors f of max(0, usage_f −
 * nominal_f) (usage_f + extra on k->fl), lendable_r = Σ over them of the cohort's
 * potentialAvailable on f; share = 1000 · max_r (borrowed_r / lendable_r) / weight, over the
 * resources with lendable capacity; 0 when not borrowing or without a cohort; +inf for weight
 * 0 while borrowing (Kueue's CompareDRS puts those last). Kueue takes the largest ratio over
 * resource names, summing within a resource over its flavors — not the largest over
 * flavor-resources — so an H100 borrowed weighs as an A100 borrowed, while a MIG instance
 * borrowed is weighed against the cohort's instances of that profile.
 */
static double drs(struct kueue *k, const double *usage, uint32_t cq, double extra)
{
    const struct kueue_cq *c = &k->cqs[cq];
    if (c->cohort == KUEUE_NO_COHORT)
        return 0;
    double here = usage[cq] + extra - c->nominal;
    if (here <= EPS)
        here = 0;
    double over[KUEUE_MAX_FLAVORS];
    double total = here + borrowed_per_flavor(k, cq, over);
    if (total <= EPS)
        return 0;
    /* Per resource, in the order of the one-resource sum: the flavor looked at, then the
     * others by index (bit-identical to it when every flavor is nvidia.com/gpu). */
    double b[KUEUE_MAX_FLAVORS] = {0}, lend[KUEUE_MAX_FLAVORS];
    for (uint32_t f = 0; f < k->n_fl; f++)
        b[k->res[f]] += over[f];
    uint32_t rfl = k->res[k->fl];
    b[rfl] = here + b[rfl];
    lendable(k, usage, c->cohort, lend);
    int best = -1;
    for (uint32_t r = 0; r < KUEUE_MAX_FLAVORS; r++)
        if (b[r] > EPS && lend[r] > EPS && (best < 0 || b[r] / lend[r] > b[best] / lend[best]))
            best = (int)r;
    if (best < 0)
        return 0;
    if (c->weight <= 0)
        return HUGE_VAL;
    return b[best] * 1000.0 / lend[best] / c->weight;
}

/* Admit workload i on flavor f if it fits there (borrowing allowed): 0 or -ENOSPC. */
static int admit_on(struct kueue *k, int i, uint32_t f, sim_time now)
{
    use_flavor(k, f);
    fill_usage(k, k->usage);
    if (!fits(k, k->usage, k->wls[i].cq, k->wls[i].gpus, true))
        return -ENOSPC;
    k->wls[i].admitted = true;
    k->wls[i].admitted_at = now;
    k->wls[i].flavor = f;
    return 0;
}

int kueue_admit(struct kueue *k, uint32_t id, sim_time now)
{
    int i = find_idx(k, id);
    if (i < 0)
        return -ENOENT;
    if (k->wls[i].admitted)
        return -EALREADY;
    if (ensure_scratch(k))
        return -ENOMEM;
    const struct kueue_cq *c = &k->cqs[k->wls[i].cq];
    uint32_t nf = cq_nflavors(c);
    for (uint32_t j = 0; j < nf; j++) {
        uint32_t f = cq_flavor(c, j);
        if ((k->wls[i].flavors_ok >> f & 1) && admit_on(k, i, f, now) == 0)
            return 0;
    }
    return -ENOSPC;
}

/* Queue order: priority desc, created asc, id asc. */
static int cmp_queue(const void *pa, const void *pb)
{
    const struct key *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Victim order: other (borrowing) CQs first, lowest priority, most recently admitted. */
static int cmp_victim(const void *pa, const void *pb)
{
    const struct key *a = pa, *b = pb;
    if (a->other_cq != b->other_cq)
        return a->other_cq > b->other_cq ? -1 : 1;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->t != b->t)
        return a->t > b->t ? -1 : 1;
    return a->id > b->id ? -1 : a->id < b->id;
}

/* Greedy targets then reverse removal over cands[0..n). Writes the chosen
 * workload indices to out and returns their number (0: no fit). */
static uint32_t minimal_targets(struct kueue *k, const struct kueue_wl *w, const struct key *cands,
                                uint32_t n, bool allow_borrow, uint32_t *out)
{
    double *usage = k->usage;
    fill_usage(k, usage);
    uint32_t m = 0;
    bool ok = false;
    for (uint32_t i = 0; i < n && !ok; i++) {
        const struct kueue_wl *v = &k->wls[cands[i].idx];
        if (v->cq != w->cq && !(usage[v->cq] > k->cqs[v->cq].nominal + EPS))
            continue; /* its CQ is no longer borrowing */
        usage[v->cq] -= v->gpus;
        out[m++] = cands[i].idx;
        ok = fits(k, usage, w->cq, w->gpus, allow_borrow);
    }
    if (!ok)
        return 0;
    /* Put back every target but the last, newest-added first, if still fitting. */
    for (uint32_t i = m - 1; i-- > 0;) {
        const struct kueue_wl *v = &k->wls[out[i]];
        usage[v->cq] += v->gpus;
        if (fits(k, usage, w->cq, w->gpus, allow_borrow)) {
            memmove(&out[i], &out[i + 1], (m - i - 1) * sizeof *out);
            m--;
        } else {
            usage[v->cq] -= v->gpus;
        }
    }
    return m;
}

static bool is_candidate(const struct kueue *k, const struct kueue_wl *w, const double *usage,
                         const struct kueue_wl *v)
{
    const struct kueue_cq *c = &k->cqs[w->cq];
    if (!v->admitted || v->flavor != k->fl)
        return false;
    if (v->cq == w->cq) {
        if (c->within == KUEUE_WITHIN_LOWER_PRIORITY)
            return v->priority < w->priority;
        if (c->within == KUEUE_WITHIN_LOWER_OR_NEWER_EQUAL)
            return v->priority < w->priority ||
                   (v->priority == w->priority && v->created > w->created);
        return false;
    }
    const struct kueue_cq *vc = &k->cqs[v->cq];
    if (c->cohort == KUEUE_NO_COHORT || vc->cohort == KUEUE_NO_COHORT ||
        root_of(k, vc->cohort) != root_of(k, c->cohort) || c->reclaim == KUEUE_RECLAIM_NEVER ||
        !(usage[v->cq] > vc->nominal + EPS))
        return false;
    return c->reclaim == KUEUE_RECLAIM_ANY || v->priority < w->priority;
}

/* Same order as Kueue's CompareDRS for our doubles: +inf (weight 0) compares above all. */
static int cmp_share(double a, double b)
{
    return a < b - 1e-12 ? -1 : a > b + 1e-12;
}

/*
 * Fair-sharing preemption (Kueue pkg/scheduler/preemption: fairPreemptions,
 * runFirstFsStrategy, runSecondFsStrategy; one resource). With the
 * preemptor's usage simulated, repeatedly take the CQ with the highest share
 * among those with candidates left (the preemptor's own CQ always eligible,
 * others only while borrowing on some flavor): shares are over all flavors
 * (drs), the candidates and the within-nominal test on the flavor being
 * assigned (k->fl), as Kueue's frsNeedPreemption. In its own CQ the next candidate is taken
 * outright; in another CQ a candidate is taken if the first strategy holds
 * for (preemptor's share with w, target's share before, target's share
 * without the candidate), after which the CQ order is recomputed; candidates
 * failing it are kept for the second strategy (LessThanInitialShare), which
 * takes at most one per CQ. A preemptor within its nominal quota with w takes
 * every candidate outright (Kueue's FairSharingPreemptWithinNominal, default on). Stops as soon as
 * w fits (borrowing allowed); then unneeded targets are put back as in classic preemption. cands
 * are in classic victim order. Returns the number of victims in out (0: no fit).
 */
static uint32_t fair_victims(struct kueue *k, const struct kueue_wl *w, const struct key *cands,
                             uint32_t n, uint32_t *out)
{
    double *usage = k->usage;
    fill_usage(k, usage);
    uint8_t *state = calloc(n ? n : 1, 1); /* 0 candidate, 1 taken, 2 retry, 3 dropped */
    bool *pruned = calloc(k->n_cq ? k->n_cq : 1, sizeof *pruned);
    uint32_t m = 0;
    bool ok = false;
    if (!state || !pruned)
        goto out;
    /* FairSharingPreemptWithinNominal (Kueue feature gate, on by default): a preemptor that
     * stays within its nominal quota with w takes other queues' candidates whatever the
     * shares, in the same order. */
    bool within_nominal = usage[w->cq] + w->gpus <= k->cqs[w->cq].nominal + EPS;
    for (int pass = 0; pass < (int)k->n_strategies && !ok; pass++) {
        enum kueue_fs_strategy st = pass == 0 ? k->strategies[0] : KUEUE_FS_LESS_THAN_INITIAL;
        if (pass == 1 && k->strategies[1] != KUEUE_FS_LESS_THAN_INITIAL)
            break; /* Kueue's API allows only LessThanInitialShare second */
        memset(pruned, 0, k->n_cq * sizeof *pruned);
        for (;;) {
            /* The CQ with the highest share among those with candidates. */
            int32_t best = -1;
            double best_share = -1;
            uint32_t first_of_best = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t cq = k->wls[cands[i].idx].cq;
                if (state[i] != (pass == 0 ? 0 : 2) || pruned[cq])
                    continue;
                double sh = drs(k, usage, cq, cq == w->cq ? w->gpus : 0);
                if (cq != w->cq && !borrowing_any(k, usage, cq))
                    continue; /* borrowing on no flavor: Kueue prunes it */
                if (best < 0 || cmp_share(sh, best_share) > 0) {
                    best = (int32_t)cq;
                    best_share = sh;
                    first_of_best = i;
                }
            }
            if (best < 0)
                break;
            uint32_t cq = (uint32_t)best;
            if (cq == w->cq || (pass == 0 && within_nominal)) {
                const struct kueue_wl *v = &k->wls[cands[first_of_best].idx];
                state[first_of_best] = 1;
                usage[cq] -= v->gpus;
                out[m++] = cands[first_of_best].idx;
                if ((ok = fits(k, usage, w->cq, w->gpus, true)))
                    break;
                continue;
            }
            double pre_new = drs(k, usage, w->cq, w->gpus), tgt_old = drs(k, usage, cq, 0);
            bool took = false;
            for (uint32_t i = first_of_best; i < n; i++) {
                const struct kueue_wl *v = &k->wls[cands[i].idx];
                if (v->cq != cq || state[i] != (pass == 0 ? 0 : 2))
                    continue;
                bool pass_ok;
                if (st == KUEUE_FS_LESS_THAN_INITIAL)
                    pass_ok = cmp_share(pre_new, tgt_old) < 0;
                else
                    pass_ok = cmp_share(pre_new, drs(k, usage, cq, -v->gpus)) <= 0;
                if (!pass_ok) {
                    state[i] = pass == 0 ? 2 : 3;
                    if (pass == 1)
                        break; /* S2-b does not depend on the workload: drop the CQ */
                    continue;
                }
                state[i] = 1;
                usage[cq] -= v->gpus;
                out[m++] = cands[i].idx;
                took = true;
                ok = fits(k, usage, w->cq, w->gpus, true);
                break;
            }
            if (ok)
                break;
            if (!took || pass == 1)
                pruned[cq] = true;
        }
    }
    if (!ok) {
        m = 0;
        goto out;
    }
    /* Put back every target but the last, newest-added first, if still fitting. */
    for (uint32_t i = m - 1; i-- > 0;) {
        const struct kueue_wl *v = &k->wls[out[i]];
        usage[v->cq] += v->gpus;
        if (fits(k, usage, w->cq, w->gpus, true)) {
            memmove(&out[i], &out[i + 1], (m - i - 1) * sizeof *out);
            m--;
        } else {
            usage[v->cq] -= v->gpus;
        }
    }
out:
    free(state);
    free(pruned);
    return m;
}

/* Victims (workload indices in k->victims) that let w fit; returns their
 * number, 0 if preemption cannot make it fit. */
static uint32_t find_victims(struct kueue *k, const struct kueue_wl *w)
{
    struct key *cands = k->keys;
    uint32_t n = 0, n_same = 0;
    fill_usage(k, k->usage);
    for (uint32_t i = 0; i < k->n_wl; i++) {
        const struct kueue_wl *v = &k->wls[i];
        if (!is_candidate(k, w, k->usage, v))
            continue;
        cands[n] = (struct key){.idx = i,
                                .id = v->id,
                                .priority = v->priority,
                                .other_cq = v->cq != w->cq,
                                .t = v->admitted_at};
        n_same += v->cq == w->cq;
        n++;
    }
    if (n == 0)
        return 0;
    qsort(cands, n, sizeof *cands, cmp_victim);
    if (k->fair)
        return fair_victims(k, w, cands, n, k->victims);
    if (n_same == n)
        return minimal_targets(k, w, cands, n, true, k->victims);
    const struct kueue_cq *c = &k->cqs[w->cq];
    if (c->borrow == KUEUE_BORROW_LOWER_PRIORITY) {
        /* borrowWithinCohort: borrow while preempting lower-priority workloads of the cohort. */
        uint32_t m = 0;
        struct key *lower = cands + n; /* scratch tail: keys has room for every workload */
        for (uint32_t i = 0; i < n; i++) {
            const struct kueue_wl *v = &k->wls[cands[i].idx];
            if (v->cq == w->cq || (v->priority < w->priority &&
                                   (!c->borrow_threshold || v->priority <= c->borrow_max_priority)))
                lower[m++] = cands[i];
        }
        uint32_t got = m ? minimal_targets(k, w, lower, m, true, k->victims) : 0;
        if (got > 0)
            return got;
    }
    uint32_t m = minimal_targets(k, w, cands, n, false, k->victims);
    if (m > 0 || n_same == 0)
        return m;
    /* Same-CQ candidates sort after the others: they are the tail. */
    return minimal_targets(k, w, cands + (n - n_same), n_same, true, k->victims);
}

/* Height of cohort h in the tree (Kueue's getNodeHeight): 0 without children, 1 with CQs only
 * below it, else one more than its tallest child cohort. Children have larger indices. */
static uint32_t cohort_height(const struct kueue *k, int32_t h)
{
    uint32_t best = 0;
    for (uint32_t j = 0; j < k->n_cq && !best; j++)
        best = k->cqs[j].cohort == h;
    for (uint32_t c = (uint32_t)h + 1; c < k->n_coh; c++) {
        if (k->coh[c].parent != h)
            continue;
        uint32_t ch = cohort_height(k, (int32_t)c) + 1;
        best = ch > best ? ch : best;
    }
    return best;
}

/*
 * Kueue's borrowingLevel of g more GPUs for CQ cq with per-CQ usage on the flavor looked at
 * (FindHeightOfLowestSubtreeThatFits, pkg/scheduler/preemption/classical/
 * hierarchical_preemption.go): 0 within its nominal quota (or without a cohort); else, with
 * what its own idle local quota cannot hold, the height of the lowest cohort on its path to the
 * root whose subtree has room for it, the root's height if none has.
 */
static uint32_t borrow_level(struct kueue *k, const double *usage, uint32_t cq, double g)
{
    const struct kueue_cq *c = &k->cqs[cq];
    if (usage[cq] + g <= c->nominal + EPS || c->cohort == KUEUE_NO_COHORT)
        return 0;
    fill_tree(k, usage);
    double rem = g - pos(local_quota(c->nominal, c->lending_limit) - usage[cq]);
    int32_t h = c->cohort, last = h;
    for (; h >= 0; h = k->coh[h].parent) {
        last = h;
        if (k->coh_use[h] + rem <= k->coh_sq[h] + EPS)
            return cohort_height(k, h);
        rem -= pos(local_quota(k->coh_sq[h], k->coh[h].lending_limit) - k->coh_use[h]);
    }
    return cohort_height(k, last);
}

/* Kueue's granularMode (flavorassigner.go): how a flavor can take a workload. Modes worst to
 * best; level is the borrowingLevel (0: within the CQ's nominal quota). */
enum gran { GRAN_NO_FIT, GRAN_PREEMPT, GRAN_RECLAIM, GRAN_FIT };
struct gmode {
    enum gran mode; /* PREEMPT: a victim is in the workload's own CQ; RECLAIM: all in others */
    uint32_t level;
};

/*
 * The mode of pending workload w on the flavor being looked at (k->fl): fills d (victims in
 * k->victims) and *g. Not fitting (or refused by the placement filter) is GRAN_NO_FIT; a
 * preempting mode's level is the one once its victims are gone (Kueue's
 * borrowAfterPreemptions).
 */
static void flavor_mode(struct kueue *k, const struct kueue_wl *w, struct kueue_decision *d,
                        struct gmode *g)
{
    uint32_t cq = w->cq;
    fill_usage(k, k->usage);
    double after = k->usage[cq] + w->gpus;
    memset(d, 0, sizeof *d);
    d->id = w->id;
    d->flavor = k->fl;
    *g = (struct gmode){GRAN_NO_FIT, 0};
    bool quota_fits = fits(k, k->usage, cq, w->gpus, true);
    if (quota_fits && k->filter && !k->filter(k->filter_ctx, w->id, w->gpus))
        return; /* fits the quota but cannot be placed now (topology-aware admission) */
    if (fits(k, k->usage, cq, w->gpus, false)) {
        d->mode = KUEUE_FITS_NOMINAL;
        g->mode = GRAN_FIT;
        return;
    }
    if (quota_fits) {
        d->mode = KUEUE_FITS_BORROW;
        d->borrows = true;
        *g = (struct gmode){GRAN_FIT, borrow_level(k, k->usage, cq, w->gpus)};
        return;
    }
    uint32_t m = find_victims(k, w);
    if (m == 0)
        return;
    d->mode = KUEUE_PREEMPT;
    d->n_victims = m;
    double freed_own = 0;
    g->mode = GRAN_RECLAIM;
    fill_usage(k, k->usage);
    for (uint32_t v = 0; v < m; v++) {
        const struct kueue_wl *vw = &k->wls[k->victims[v]];
        k->usage[vw->cq] -= vw->gpus;
        if (vw->cq == cq) {
            freed_own += vw->gpus;
            g->mode = GRAN_PREEMPT;
        }
    }
    d->borrows = after - freed_own > k->cqs[cq].nominal + EPS;
    g->level = d->borrows ? borrow_level(k, k->usage, cq, w->gpus) : 0;
}

/* Kueue's isPreferred: whether mode a beats b under the CQ's flavorFungibility.preference —
 * BorrowingOverPreemption (default): the better mode (fit, then reclaim, then preempt), then
 * the lower borrowing level; PreemptionOverBorrowing: the lower level, then the better mode. */
static bool preferred(const struct gmode *a, const struct gmode *b, bool prefer_preemption)
{
    if (a->mode == GRAN_NO_FIT)
        return false;
    if (b->mode == GRAN_NO_FIT)
        return true;
    if (prefer_preemption && a->level != b->level)
        return a->level < b->level;
    if (a->mode != b->mode)
        return a->mode > b->mode;
    return a->level < b->level;
}

/*
 * Kueue's flavor assignment for w (flavorassigner.go findFlavorForPodSets): try its CQ's
 * flavors in order (those its mask allows); stop at a flavor where it fits unless
 * flavorFungibility says to try the next one (shouldTryNextFlavor: whenCanPreempt
 * TryNextFlavor when it must preempt or reclaim, whenCanBorrow TryNextFlavor when it must
 * borrow); else keep the best seen by isPreferred (the earlier flavor on ties). Fills d
 * (victims in k->victims) and returns whether any flavor can take it.
 */
static bool assign_flavor(struct kueue *k, const struct kueue_wl *w, struct kueue_decision *d)
{
    const struct kueue_cq *c = &k->cqs[w->cq];
    uint32_t nf = cq_nflavors(c);
    struct gmode best = {GRAN_NO_FIT, 0}, g;
    struct kueue_decision cur = {0};
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = cq_flavor(c, i);
        if (!(w->flavors_ok >> f & 1))
            continue;
        use_flavor(k, f);
        flavor_mode(k, w, &cur, &g);
        if (g.mode == GRAN_NO_FIT)
            continue;
        bool next =
            (g.mode != GRAN_FIT && !c->preempt_may_stop) || (g.level > 0 && c->borrow_try_next);
        if (!next || preferred(&g, &best, c->prefer_preemption)) {
            *d = cur;
            best = g;
            if (cur.n_victims)
                memcpy(k->fvict, k->victims, cur.n_victims * sizeof *k->fvict);
        }
        if (!next)
            break;
    }
    if (best.mode == GRAN_NO_FIT)
        return false;
    if (d->n_victims)
        memcpy(k->victims, k->fvict, d->n_victims * sizeof *k->victims);
    d->victims = NULL;
    use_flavor(k, d->flavor);
    return true;
}

/* Decision for the first admissible workload of CQ cq, in queue order
 * (pend: caller's buffer for the pending keys, as k->keys holds candidates). */
static bool cq_candidate(struct kueue *k, uint32_t cq, struct key *pend, struct kueue_decision *d)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->n_wl; i++) {
        const struct kueue_wl *w = &k->wls[i];
        if (w->admitted || w->cq != cq || w->requeue_at > k->now)
            continue; /* admitted, another CQ, or backing off (inadmissible, never blocks) */
        pend[n++] = (struct key){.idx = i, .id = w->id, .priority = w->priority, .t = w->queued};
    }
    qsort(pend, n, sizeof *pend, cmp_queue);
    for (uint32_t j = 0; j < n; j++) {
        if (assign_flavor(k, &k->wls[pend[j].idx], d))
            return true;
        if (k->cqs[cq].strategy == KUEUE_STRICT_FIFO)
            return false; /* the head blocks the queue */
    }
    return false;
}

/* Cycle order across CQs: no borrowing first, (fair sharing: the lower share with the
 * workload admitted,) higher priority, older. */
static bool better(struct kueue *k, const struct kueue_decision *a, const struct kueue_decision *b)
{
    if (a->borrows != b->borrows)
        return !a->borrows;
    const struct kueue_wl *wa = kueue_find(k, a->id), *wb = kueue_find(k, b->id);
    if (k->fair) {
        use_flavor(k, a->flavor);
        fill_usage(k, k->usage);
        double sa = drs(k, k->usage, wa->cq, wa->gpus);
        use_flavor(k, b->flavor);
        fill_usage(k, k->usage);
        int c = cmp_share(sa, drs(k, k->usage, wb->cq, wb->gpus));
        if (c != 0)
            return c < 0;
    }
    if (wa->priority != wb->priority)
        return wa->priority > wb->priority;
    if (wa->queued != wb->queued)
        return wa->queued < wb->queued;
    return wa->id < wb->id;
}

int kueue_next(struct kueue *k, struct kueue_decision *d)
{
    if (ensure_scratch(k))
        return -ENOMEM;
    struct key *pend = malloc((k->n_wl + 1) * sizeof *pend);
    uint32_t *best_v = malloc((k->n_wl + 1) * sizeof *best_v);
    if (!pend || !best_v) {
        free(pend);
        free(best_v);
        return -ENOMEM;
    }
    bool found = false;
    struct kueue_decision best = {0}, cur = {0};
    for (uint32_t c = 0; c < k->n_cq; c++) {
        if (!cq_candidate(k, c, pend, &cur))
            continue;
        if (!found || better(k, &cur, &best)) {
            best = cur;
            for (uint32_t v = 0; v < cur.n_victims; v++)
                best_v[v] = k->wls[k->victims[v]].id;
            found = true;
        }
    }
    if (found) {
        memcpy(k->victims, best_v, best.n_victims * sizeof *best_v);
        best.victims = k->victims;
        *d = best;
    }
    free(pend);
    free(best_v);
    return found ? 1 : 0;
}

int kueue_apply(struct kueue *k, const struct kueue_decision *d, sim_time now)
{
    for (uint32_t v = 0; v < d->n_victims; v++) {
        int rc = kueue_evict(k, d->victims[v]);
        if (rc)
            return rc;
    }
    int i = find_idx(k, d->id);
    if (i < 0)
        return -ENOENT;
    if (k->wls[i].admitted)
        return -EALREADY;
    if (d->flavor >= k->n_fl || ensure_scratch(k))
        return -EINVAL;
    return admit_on(k, i, d->flavor, now);
}

void kueue_cq_stat(struct kueue *k, uint32_t cq, struct kueue_cq_stat *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t f = 0; f < k->n_fl; f++) {
        struct kueue_cq_stat one;
        kueue_cq_stat_flavor(k, cq, f, &one);
        out->usage += one.usage;
        out->borrowed += one.borrowed;
        out->lent += one.lent;
        out->share = one.share; /* the CQ's, the same on every flavor */
    }
}

void kueue_cq_stat_flavor(struct kueue *k, uint32_t cq, uint32_t f, struct kueue_cq_stat *out)
{
    memset(out, 0, sizeof *out);
    if (cq >= k->n_cq || f >= k->n_fl || ensure_scratch(k))
        return;
    use_flavor(k, f);
    double *usage = k->usage;
    fill_usage(k, usage);
    const struct kueue_cq *c = &k->cqs[cq];
    out->usage = usage[cq];
    out->borrowed = pos(usage[cq] - c->nominal);
    out->share = drs(k, usage, cq, 0);
    if (c->cohort == KUEUE_NO_COHORT)
        return;
    /* What the tree borrows is lent by its idle lendable quota (CQs' and Cohorts' own),
     * attributed in proportion to each lender's idle lendable quota. */
    int32_t root = root_of(k, c->cohort);
    double borrowed = 0, idle = 0, mine = 0;
    for (uint32_t j = 0; j < k->n_cq; j++) {
        const struct kueue_cq *o = &k->cqs[j];
        if (o->cohort == KUEUE_NO_COHORT || root_of(k, o->cohort) != root)
            continue;
        double lend = o->nominal - local_quota(o->nominal, o->lending_limit);
        double unused = pos(o->nominal - usage[j]);
        double l = unused < lend ? unused : lend;
        borrowed += pos(usage[j] - o->nominal);
        idle += l;
        if (j == cq)
            mine = l;
    }
    for (uint32_t h = 0; h < k->n_coh; h++)
        if (root_of(k, (int32_t)h) == root)
            idle += k->coh[h].nominal;
    if (idle > EPS && mine > 0)
        out->lent = mine * (borrowed < idle ? borrowed / idle : 1.0);
}

double kueue_cq_potential(struct kueue *k, uint32_t cq)
{
    return kueue_cq_potential_mask(k, cq, UINT64_MAX);
}

double kueue_cq_potential_mask(struct kueue *k, uint32_t cq, uint64_t mask)
{
    if (cq >= k->n_cq || ensure_scratch(k))
        return 0;
    double best = 0;
    uint32_t nf = cq_nflavors(&k->cqs[cq]);
    for (uint32_t i = 0; i < nf; i++) {
        if (!(mask >> cq_flavor(&k->cqs[cq], i) & 1))
            continue;
        use_flavor(k, cq_flavor(&k->cqs[cq], i));
        const struct kueue_cq *c = &k->cqs[cq];
        fill_usage(k, k->usage);
        fill_tree(k, k->usage);
        double p = potential_node(k, c->nominal, c->borrowing_limit, c->lending_limit, c->cohort);
        if (p > best)
            best = p;
    }
    return best;
}
