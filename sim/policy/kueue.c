/*
 * kueue.c — the `kueue` policy: Kueue quota, priorities and classic
 * preemption on whole cards (decisions by sim/policy/kueue_admit.h).
 *
 * Two ClusterQueues in one cohort: `inference` (nominal = policy.inference_gpus
 * unless set) and `training` (nominal = the rest) — or, with policy.manifests,
 * the team's own Kueue objects (sim/policy/kueue_manifest.h): any number of
 * CQs in a cohort tree, services and jobs reaching them through LocalQueues,
 * fair sharing, and per-CQ results (the queues callback, results /queues). Every training job is a
 * Workload of spec.gpus cards with the training WorkloadPriorityClass value;
 * every inference replica the autoscaler asks for is a Workload of 1 card with
 * the inference value. Kueue admits by quota (sim/policy/kueue_admit.h: fit in nominal,
 * borrowing up to borrowingLimit, withinClusterQueue / reclaimWithinCohort
 * preemption with Kueue's victim order); this policy then puts admitted
 * workloads on physical cards:
 *
 *   workload states  PENDING (quota not reserved) → ADMITTED (quota reserved,
 *                    waiting for free cards) → PLACED/RUNNING; a victim goes
 *                    RUNNING → EVICTING (checkpoint being saved, quota already
 *                    released) → PENDING when the trainer requeues it.
 *
 * Placement is asynchronous: the cards of a preempted job are free only when
 * its save ends, so admitted workloads are placed whenever cards free up
 * (on_requeue, on_finish, on_tick, scale-downs), inference first. A card is
 * free when it has no tenant: a workload always takes whole cards, whatever
 * the sharing mode — except on MIG pools (below). Inference replicas go to the
 * node that already holds the most inference (pol_pick_compact) and scale-downs
 * take them from the emptiest node (service_pick_victim), to keep whole nodes
 * for gangs; a gang takes one node (best fit) or whole free nodes.
 *
 * Options beyond quota and preemption:
 *   topology_aware       Kueue TAS at the hostname level: a training workload
 *                        is admitted (without preemption) only if its gang can
 *                        be placed now, so it never holds quota it cannot use;
 *   wait_for_pods_ready  Kueue's waitForPodsReady: an admitted workload not
 *                        placed within `timeout` (since admission, or since a
 *                        fault restart: recoveryTimeout = timeout) is evicted,
 *                        its quota released, and requeued after
 *                        base · 2^(n−1) (at most max) — the n-th requeue —
 *                        ordered by its eviction time (timestamp Eviction) or
 *                        creation; past backoffLimitCount it is deactivated
 *                        (a job is rejected). No jitter, no blockAdmission.
 *
 * GPU flavors (manifests on cluster.pools with several GPU ResourceFlavors): kueue_admit
 * assigns each workload a flavor; it is placed only on the cards of that flavor's pools
 * (flavor_ok narrows the masks given to common.h's pool-constraint placement).
 *
 * MIG pools (the GPU operator's mixed strategy): each (ResourceFlavor, resource) is a quota
 * cell, a kueue_admit flavor — nvidia.com/gpu on the flavor's pools with MIG off, and each
 * nvidia.com/mig-<profile> on its MIG pools with that profile (kueue_cell_pools; built in:
 * builtin_cells, the inference queue's quota every instance). An inference replica may use a
 * MIG cell of a pool where one replica takes exactly that profile (common.h,
 * pol_mig_profile_for: the smallest of the pool's layout holding it); admitted there, it takes
 * a free instance of the profile (place_mig, pol_mig_card as mig-static). Training and
 * tensor-parallel replicas take nvidia.com/gpu cells only.
 *
 * Invariants: an admitted workload's quota is in kueue; the cards in use never
 * exceed the admitted workloads' quota plus the cards of EVICTING victims (still
 * saving).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/policy/kueue_admit.h"
#include "sim/policy/kueue_manifest.h"
#include "sim/policy/common.h"
#include "sim/sim.h"

enum { CQ_INF, CQ_TRAIN, CQ_N };

/* Workload ids: training job j is j; inference replicas count from INF_BASE. */
#define INF_BASE 0x80000000u
#define NO_GPU   UINT32_MAX

struct kueue_pol_cfg {
    double nominal[CQ_N];         /* < 0: default */
    double borrowing_limit[CQ_N]; /* KUEUE_UNLIMITED or GPUs */
    double lending_limit[CQ_N];
    int32_t prio[CQ_N];
    enum kueue_strategy strategy;
    enum kueue_within within;
    enum kueue_reclaim reclaim;
    enum kueue_borrow borrow;
    bool borrow_threshold;
    int32_t borrow_max_priority;
    bool graceful;
    bool topology_aware; /* admit a gang only where it can be placed now (TAS, hostname level) */
    /* waitForPodsReady */
    bool pods_ready;
    sim_time ready_timeout;   /* timeout */
    sim_time backoff_base;    /* requeuingStrategy.backoffBaseSeconds */
    sim_time backoff_max;     /* requeuingStrategy.backoffMaxSeconds */
    int64_t backoff_limit;    /* requeuingStrategy.backoffLimitCount; < 0: unlimited */
    bool requeue_by_eviction; /* requeuingStrategy.timestamp Eviction (else Creation) */
    /* manifests (NULL: the two built-in CQs above) */
    struct kueue_model *model; /* owned */
    uint32_t *svc_cq;          /* per service: its ClusterQueue (via its LocalQueue) */
    uint32_t *train_cq;        /* CQs of jobs whose queue names no LocalQueue, round-robin */
    double *train_w;           /* their weights */
    uint32_t ntrain;
    const char **map_from; /* queue_map: a job's queue value ... */
    uint32_t *map_cq;      /* ... to a ClusterQueue */
    uint32_t nmap;
};

enum wl_state { WL_NONE, WL_PENDING, WL_ADMITTED, WL_PLACED, WL_EVICTING };

struct inf_wl {
    uint32_t id, svc, gpu;
    enum wl_state st;
    sim_time since;      /* admitted and waiting for a card since (waitForPodsReady) */
    sim_time pend_since; /* pending (waiting for admission) since */
};

/* Per-ClusterQueue results (manifests): admissions, evictions, queueing delays. */
struct cq_acct {
    uint64_t admissions, evictions;
    double *delays; /* s, one per admission */
    size_t ndelays, cap;
};

struct kq {
    struct kueue_pol_cfg cfg;
    struct kueue *q;
    struct pol_scaler ps;
    bool scaling;
    struct sim *s;
    uint8_t *job_st;     /* enum wl_state per job index */
    sim_time *job_since; /* per job: admitted and waiting for cards since */
    uint32_t njob_st;
    struct evq_handle wake; /* next PodsReady deadline or end of a backoff */
    sim_time wake_at;
    struct inf_wl *inf;
    uint32_t ninf, cap_inf;
    uint32_t next_inf;
    uint32_t *gang;
    uint32_t *victims;
    uint32_t cap_victims;
    uint32_t max_train; /* largest training workload that can ever be admitted */
    uint32_t ncq;
    uint32_t *job_cq;         /* per job: its CQ (manifests) */
    sim_time *job_pend_since; /* per job: pending since */
    double *train_wrr;        /* smooth weighted round-robin state per training CQ */
    struct cq_acct *acct;     /* per CQ */
    bool busy, again;
    uint64_t preempted_jobs, preempted_replicas;
    uint64_t ready_timeouts, deactivated; /* waitForPodsReady evictions; limit reached */
    /* Tensor-parallel replicas: cards held for an admitted one (owner: its workload id) and
     * training pods the scheduler preempted to gather them (common.h, pol_plan_best_for). */
    struct pol_holds holds;
    uint32_t *plan_jobs;
    uint64_t sched_preempted;
    /* GPU flavors (manifests with cluster.pools, more than one modelled): nfl masks of the
     * cards in each flavor's pools, and a scratch mask (flavor_ok). nfl <= 1: no masks. */
    uint32_t nfl;
    bool flavored;        /* nfl > 1, or a MIG cell: fl_cards etc. are set */
    uint64_t *fl_pools;   /* per cell: the pools its resource is on (kueue_cell_pools) */
    const char **fl_prof; /* per cell: its MIG profile's name, NULL for nvidia.com/gpu */
    uint32_t fl_try;      /* scratch: the cell a kueue_mig_ok call places on */
    bool **fl_cards;
    bool *fl_ok;
    struct pol_flavor_stat *fl_stat; /* ncq × nfl, for the queues callback */
};

/* ---- configuration ---- */

static const char *const kueue_keys[] = {
    "queues",         "priorities",          "queueing",  "preemption",      "graceful",
    "topology_aware", "wait_for_pods_ready", "manifests", "inference_queue", "training_queues",
    "queue_map",      "node_labels",         NULL};

static void cfg_default(struct kueue_pol_cfg *c)
{
    memset(c, 0, sizeof(*c));
    for (int i = 0; i < CQ_N; i++) {
        c->nominal[i] = -1;
        c->borrowing_limit[i] = KUEUE_UNLIMITED;
        c->lending_limit[i] = KUEUE_UNLIMITED;
    }
    c->prio[CQ_INF] = KUEUE_PRIORITY_INFERENCE;
    c->prio[CQ_TRAIN] = KUEUE_PRIORITY_TRAINING;
    c->strategy = KUEUE_BEST_EFFORT_FIFO;
    c->within = KUEUE_WITHIN_LOWER_PRIORITY;
    c->reclaim = KUEUE_RECLAIM_ANY;
    c->borrow = KUEUE_BORROW_NEVER;
    c->graceful = true;
    /* Kueue's waitForPodsReady defaults (apis/config/v1beta1/defaults.go), used once enabled. */
    c->ready_timeout = 5 * 60 * SIM_SEC;
    c->backoff_base = 60 * SIM_SEC;
    c->backoff_max = 3600 * SIM_SEC;
    c->backoff_limit = -1;
    c->requeue_by_eviction = true;
}

/* wait_for_pods_ready: { timeout, requeuing_strategy: { timestamp, backoff_* } }. */
static int parse_pods_ready(const struct conf_doc *d, const struct conf_node *w,
                            struct kueue_pol_cfg *c, struct conf_err *err)
{
    static const char *const keys[] = {"enable", "timeout", "requeuing_strategy", NULL};
    static const char *const rkeys[] = {"timestamp", "backoff_base_seconds", "backoff_max_seconds",
                                        "backoff_limit_count", NULL};
    static const char *const stamps[] = {"Eviction", "Creation", NULL};
    int rc, stamp = c->requeue_by_eviction ? 0 : 1;
    int64_t base = c->backoff_base / SIM_SEC, max = c->backoff_max / SIM_SEC;
    if (!w)
        return 0;
    c->pods_ready = true; /* the block enables it unless enable: false */
    const struct conf_node *r = conf_get(w, "requeuing_strategy");
    if ((rc = conf_check_keys(d, w, "wait_for_pods_ready", keys, err)) ||
        (rc = conf_bool(d, w, "enable", false, &c->pods_ready, err)) ||
        (rc = conf_duration(d, w, "timeout", false, 1, &c->ready_timeout, err)) ||
        (rc = conf_check_keys(d, r, "requeuing_strategy", rkeys, err)) ||
        (rc = conf_enum(d, r, "timestamp", false, stamps, &stamp, err)) ||
        (rc = conf_int(d, r, "backoff_base_seconds", false, 0, 86400 * 365, &base, err)) ||
        (rc = conf_int(d, r, "backoff_max_seconds", false, 0, 86400 * 365, &max, err)) ||
        (rc = conf_int(d, r, "backoff_limit_count", false, 0, INT32_MAX, &c->backoff_limit, err)))
        return rc;
    c->requeue_by_eviction = stamp == 0;
    c->backoff_base = base * SIM_SEC;
    c->backoff_max = max * SIM_SEC;
    return 0;
}

static int parse_queue(const struct conf_doc *d, const struct conf_node *q, const char *name,
                       struct kueue_pol_cfg *c, int i, double total, struct conf_err *err)
{
    static const char *const keys[] = {"nominal", "borrowing_limit", "lending_limit", NULL};
    int rc;
    if (!q)
        return 0;
    if ((rc = conf_check_keys(d, q, name, keys, err)) ||
        (rc = conf_double(d, q, "nominal", false, 0, total, &c->nominal[i], err)) ||
        (rc = conf_double(d, q, "borrowing_limit", false, -1, 1e9, &c->borrowing_limit[i], err)) ||
        (rc = conf_double(d, q, "lending_limit", false, -1, 1e9, &c->lending_limit[i], err)))
        return rc;
    return 0;
}

/* A priority: an integer, or (manifests) the name of a WorkloadPriorityClass. */
static int parse_priority(const struct conf_doc *d, const struct conf_node *pr, const char *key,
                          const struct kueue_model *m, int32_t *out, struct conf_err *err)
{
    const struct conf_node *v = conf_get(pr, key);
    int64_t x = *out;
    if (!v)
        return 0;
    if (v->kind == CONF_SCALAR && m) {
        int32_t w = kueue_model_wpc(m, v->value);
        if (w >= 0) {
            *out = m->wpcs[w].value;
            return 0;
        }
        if (conf_int(d, pr, key, false, -1000000000, 1000000000, &x, err))
            return conf_errf(err, d, v, key,
                             "expected an integer or the name of a WorkloadPriorityClass in the "
                             "manifests, got '%.40s'",
                             v->value);
        *out = (int32_t)x;
        return 0;
    }
    int rc = conf_int(d, pr, key, false, -1000000000, 1000000000, &x, err);
    if (rc == 0)
        *out = (int32_t)x;
    return rc;
}

/* A LocalQueue named at key of map: its ClusterQueue into *cq. */
static int parse_lq(const struct conf_doc *d, const struct conf_node *at, const char *key,
                    const struct kueue_model *m, uint32_t *cq, struct conf_err *err)
{
    if (!at || at->kind != CONF_SCALAR)
        return conf_errf(err, d, at, key, "expected the name of a LocalQueue");
    int32_t i = kueue_model_lq(m, at->value);
    if (i < 0)
        return conf_errf(err, d, at, key, "no LocalQueue named '%.60s' in the manifests",
                         at->value);
    *cq = m->lqs[i].cq;
    return 0;
}

/*
 * policy.manifests and what goes with it: node_labels, inference_queue (and
 * services[].queue), training_queues (a name, a list, or {name: weight}),
 * queue_map ({job queue value: LocalQueue}). The built-in queue keys
 * (queues, queueing, preemption) are refused: the ClusterQueues say it.
 */
static int parse_manifests(struct scenario *sc, const struct conf_node *p, struct kueue_pol_cfg *c,
                           struct conf_err *err)
{
    static const char *const builtin[] = {"queues", "queueing", "preemption"};
    const struct conf_doc *d = &sc->doc;
    const struct conf_node *mf = conf_get(p, "manifests");
    int rc;
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (conf_get(p, builtin[i]))
            return conf_errf(err, d, conf_get(p, builtin[i]), builtin[i],
                             "not with manifests (the ClusterQueue objects set it)");
    const struct conf_node *labels = conf_get(p, "node_labels");
    if (labels && labels->kind != CONF_MAP)
        return conf_errf(err, d, labels, "node_labels", "expected a mapping of label: value");
    c->model = calloc(1, sizeof *c->model);
    if (!c->model)
        return -ENOMEM;
    const char **paths;
    uint32_t n;
    if ((rc = pol_manifest_paths(d, mf, &paths, &n, err))) /* common.h */
        return rc;
    rc = kueue_model_load_pools(c->model, paths, n, d, mf, labels, sc->nodes, sc->pools, sc->npools,
                                err);
    free(paths);
    if (rc) {
        free(c->model);
        c->model = NULL;
        return rc;
    }
    struct kueue_model *m = c->model;
    double total = scenario_gpus(sc);
    for (uint32_t f = 0; f < m->ngpu; f++) {
        if (m->mig_profile[f])
            continue; /* instances: checked at init (kueue_init), where the layouts are cut */
        double quota = 0, cards = total;
        for (uint32_t i = 0; i < m->ncqs; i++)
            quota += m->cqs[i].q.nominal[f];
        for (uint32_t i = 0; i < m->ncohorts; i++)
            quota += m->cohorts[i].q.nominal[f];
        const struct kueue_flavor_def *fl = &m->flavors[m->gpu_flavors[f]];
        if (m->ngpu > 1 || fl->pools != POOL_ALL) {
            cards = 0;
            for (uint32_t i = 0; i < sc->npools; i++)
                if (fl->pools >> i & 1 && scenario_pool_mode(sc, i) != SHARE_MIG)
                    cards += (double)sc->pools[i].nodes * sc->pools[i].gpus_per_node;
        }
        if (m->ngpu == 1 && quota > cards + 1e-9)
            return conf_errf(err, d, mf, "manifests",
                             "nominal quotas of the GPU flavor sum to %g GPUs but the cluster has "
                             "%g (Kueue would admit workloads that can never be placed)",
                             quota, cards);
        if (quota > cards + 1e-9)
            return conf_errf(err, d, mf, "manifests",
                             "nominal quotas of GPU flavor '%s' sum to %g GPUs but its pools "
                             "have %g whole cards (Kueue would admit workloads that can never be "
                             "placed; a MIG pool advertises nvidia.com/mig-<profile>, not "
                             "nvidia.com/gpu)",
                             fl->name, quota, cards);
    }
    /* Services: services[].queue, else inference_queue (needed when there are services). */
    const struct conf_node *iq = conf_get(p, "inference_queue");
    uint32_t icq = UINT32_MAX;
    if (iq && (rc = parse_lq(d, iq, "inference_queue", m, &icq, err)))
        return rc;
    c->svc_cq = calloc(sc->nservices ? sc->nservices : 1, sizeof *c->svc_cq);
    if (!c->svc_cq)
        return -ENOMEM;
    const struct conf_node *svcs = conf_get(d->root, "services");
    for (size_t i = 0; i < sc->nservices; i++) {
        const struct conf_node *sn = svcs && svcs->kind == CONF_SEQ && i < svcs->n
                                         ? conf_get(svcs->items[i], "queue")
                                         : NULL;
        c->svc_cq[i] = icq;
        if (sn && (rc = parse_lq(d, sn, "queue", m, &c->svc_cq[i], err)))
            return rc;
        if (c->svc_cq[i] == UINT32_MAX)
            return conf_errf(err, d, p, "inference_queue",
                             "service '%s' names no LocalQueue: give services[].queue or "
                             "policy.inference_queue",
                             sc->services[i].name);
    }
    /* Jobs. */
    const struct conf_node *tq = conf_get(p, "training_queues");
    uint32_t nt = !tq ? 0 : tq->kind == CONF_SCALAR ? 1 : (uint32_t)tq->n;
    c->train_cq = calloc(nt ? nt : 1, sizeof *c->train_cq);
    c->train_w = calloc(nt ? nt : 1, sizeof *c->train_w);
    if (!c->train_cq || !c->train_w)
        return -ENOMEM;
    for (uint32_t i = 0; i < nt; i++) {
        const struct conf_node *at = tq->kind == CONF_SCALAR ? tq
                                     : tq->kind == CONF_SEQ  ? tq->items[i]
                                                             : NULL;
        c->train_w[i] = 1;
        if (tq->kind == CONF_MAP) {
            at = tq->items[i];
            if ((rc = conf_double(d, tq, tq->keys[i], true, 0, 1e6, &c->train_w[i], err)))
                return rc;
            int32_t l = kueue_model_lq(m, tq->keys[i]);
            if (l < 0)
                return conf_errf(err, d, tq, tq->keys[i],
                                 "no LocalQueue named '%.60s' in the manifests", tq->keys[i]);
            c->train_cq[i] = m->lqs[l].cq;
        } else if ((rc = parse_lq(d, at, "training_queues", m, &c->train_cq[i], err))) {
            return rc;
        }
    }
    c->ntrain = nt;
    const struct conf_node *qm = conf_get(p, "queue_map");
    if (qm && qm->kind != CONF_MAP)
        return conf_errf(err, d, qm, "queue_map", "expected a mapping of job queue: LocalQueue");
    c->nmap = qm ? (uint32_t)qm->n : 0;
    c->map_from = calloc(c->nmap ? c->nmap : 1, sizeof *c->map_from);
    c->map_cq = calloc(c->nmap ? c->nmap : 1, sizeof *c->map_cq);
    if (!c->map_from || !c->map_cq)
        return -ENOMEM;
    for (uint32_t i = 0; i < c->nmap; i++) {
        c->map_from[i] = qm->keys[i];
        if ((rc = parse_lq(d, qm->items[i], qm->keys[i], m, &c->map_cq[i], err)))
            return rc;
    }
    if (sc->training.synthetic || sc->training.from_trace)
        if (nt == 0 && c->nmap == 0 && m->nlqs != 1)
            return conf_errf(err, d, p, "training_queues",
                             "jobs need a LocalQueue: give training_queues (and/or queue_map)");
    if (nt == 0 && m->nlqs == 1) {
        c->train_cq[0] = m->lqs[0].cq;
        c->train_w[0] = 1;
        c->ntrain = 1;
    }
    const struct conf_node *pr = conf_get(p, "priorities");
    static const char *const pkeys[] = {"inference", "training", NULL};
    if ((rc = conf_check_keys(d, pr, "priorities", pkeys, err)) ||
        (rc = parse_priority(d, pr, "inference", m, &c->prio[CQ_INF], err)) ||
        (rc = parse_priority(d, pr, "training", m, &c->prio[CQ_TRAIN], err)) ||
        (rc = conf_bool(d, p, "graceful", false, &c->graceful, err)) ||
        (rc = conf_bool(d, p, "topology_aware", false, &c->topology_aware, err)) ||
        (rc = parse_pods_ready(d, conf_get(p, "wait_for_pods_ready"), c, err)))
        return rc;
    if (m->warning && !sc->policy.warning) {
        sc->policy.warning = strdup(m->warning);
        if (!sc->policy.warning)
            return -ENOMEM;
    }
    return 0;
}

static int kueue_parse(struct scenario *sc, const struct conf_node *p, struct conf_err *err)
{
    static const char *const qkeys[] = {"inference", "training", NULL};
    static const char *const pkeys[] = {"inference", "training", NULL};
    static const char *const ekeys[] = {"within_cluster_queue", "reclaim_within_cohort",
                                        "borrow_within_cohort", NULL};
    static const char *const bkeys[] = {"policy", "max_priority_threshold", NULL};
    static const char *const borrows[] = {"Never", "LowerPriority", NULL};
    static const char *const strategies[] = {"BestEffortFIFO", "StrictFIFO", NULL};
    static const char *const withins[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority",
                                          NULL};
    static const char *const reclaims[] = {"Never", "LowerPriority", "Any", NULL};
    const struct conf_doc *d = &sc->doc;
    double total = scenario_gpus(sc);
    int rc;
    struct kueue_pol_cfg *c = malloc(sizeof(*c));
    if (!c)
        return -ENOMEM;
    cfg_default(c);
    sc->policy.cfg = c;
    bool mig = scenario_uses(sc, SHARE_MIG);
    if (sc->mixed || mig) {
        /* MIG pools (nvidia.com/mig-<profile>) beside pools of one other kind, whose cards
         * kueue takes whole (nvidia.com/gpu): whole cards, time-sliced or MPS. */
        uint32_t ok = SHARE_BIT(SHARE_EXCLUSIVE) | SHARE_BIT(SHARE_MIG);
        for (uint32_t i = 0; i < sc->npools; i++) {
            enum share_mode m = scenario_pool_mode(sc, i);
            if (m != SHARE_MIG && m != SHARE_EXCLUSIVE) {
                ok |= SHARE_BIT(m); /* the first other kind; a second is refused */
                break;
            }
        }
        if (!mig)
            ok = SHARE_BIT(sc->sharing) | SHARE_BIT(SHARE_EXCLUSIVE); /* as before */
        if ((rc = scenario_refuse_modes(
                 sc, p, ok,
                 "kueue's nvidia.com/gpu quota counts whole cards of one sharing mode beside "
                 "MIG pools (nvidia.com/mig-<profile>); a time-sliced and an MPS pool together "
                 "would need a quota in replicas, which tidesim does not model",
                 err)))
            return rc;
    }
    if (mig && sc->npools < 2)
        return conf_errf(err, d, p, "name",
                         "kueue on MIG instances needs cluster.pools (a MIG pool beside pools of "
                         "whole cards), as nodes advertise nvidia.com/mig-<profile> per pool "
                         "(docs/policies.md, kueue: MIG pools)");
    for (uint32_t i = 0; mig && i < sc->npools; i++) /* the built-in quotas: whole cards */
        if (scenario_pool_mode(sc, i) == SHARE_MIG)
            total -= (double)sc->pools[i].nodes * sc->pools[i].gpus_per_node;
    if (!p)
        return 0;
    static const char *const mkeys[] = {"node_labels", "inference_queue", "training_queues",
                                        "queue_map"};
    if (conf_get(p, "manifests"))
        return parse_manifests(sc, p, c, err);
    for (size_t i = 0; i < sizeof mkeys / sizeof mkeys[0]; i++)
        if (conf_get(p, mkeys[i]))
            return conf_errf(err, d, conf_get(p, mkeys[i]), mkeys[i], "only with manifests");
    const struct conf_node *q = conf_get(p, "queues"), *pr = conf_get(p, "priorities"),
                           *pe = conf_get(p, "preemption");
    int strategy = (int)c->strategy, within = (int)c->within, reclaim = (int)c->reclaim;
    int borrow = (int)c->borrow;
    int64_t pi = c->prio[CQ_INF], pt = c->prio[CQ_TRAIN], thr = INT64_MIN;
    const struct conf_node *bw = conf_get(pe, "borrow_within_cohort");
    if ((rc = conf_check_keys(d, q, "queues", qkeys, err)) ||
        (rc = parse_queue(d, conf_get(q, "inference"), "inference", c, CQ_INF, total, err)) ||
        (rc = parse_queue(d, conf_get(q, "training"), "training", c, CQ_TRAIN, total, err)) ||
        (rc = conf_check_keys(d, pr, "priorities", pkeys, err)) ||
        (rc = conf_int(d, pr, "inference", false, -1000000000, 1000000000, &pi, err)) ||
        (rc = conf_int(d, pr, "training", false, -1000000000, 1000000000, &pt, err)) ||
        (rc = conf_enum(d, p, "queueing", false, strategies, &strategy, err)) ||
        (rc = conf_check_keys(d, pe, "preemption", ekeys, err)) ||
        (rc = conf_enum(d, pe, "within_cluster_queue", false, withins, &within, err)) ||
        (rc = conf_enum(d, pe, "reclaim_within_cohort", false, reclaims, &reclaim, err)) ||
        (rc = conf_check_keys(d, bw, "borrow_within_cohort", bkeys, err)) ||
        (rc = conf_enum(d, bw, "policy", false, borrows, &borrow, err)) ||
        (rc = conf_int(d, bw, "max_priority_threshold", false, -1000000000, 1000000000, &thr,
                       err)) ||
        (rc = conf_bool(d, p, "graceful", false, &c->graceful, err)) ||
        (rc = conf_bool(d, p, "topology_aware", false, &c->topology_aware, err)) ||
        (rc = parse_pods_ready(d, conf_get(p, "wait_for_pods_ready"), c, err)))
        return rc;
    c->borrow = (enum kueue_borrow)borrow;
    c->borrow_threshold = thr != INT64_MIN;
    c->borrow_max_priority = (int32_t)(c->borrow_threshold ? thr : 0);
    if (c->borrow != KUEUE_BORROW_NEVER && reclaim == KUEUE_RECLAIM_NEVER)
        return conf_errf(err, d, bw, "policy",
                         "borrowWithinCohort needs reclaim_within_cohort other than Never "
                         "(Kueue refuses this ClusterQueue)");
    c->prio[CQ_INF] = (int32_t)pi;
    c->prio[CQ_TRAIN] = (int32_t)pt;
    c->strategy = (enum kueue_strategy)strategy;
    c->within = (enum kueue_within)within;
    c->reclaim = (enum kueue_reclaim)reclaim;
    if (c->nominal[CQ_INF] >= 0 && c->nominal[CQ_TRAIN] >= 0 &&
        c->nominal[CQ_INF] + c->nominal[CQ_TRAIN] > total)
        return conf_errf(err, d, q, "queues",
                         "nominal quotas sum to %g GPUs but the cluster has %g (Kueue would "
                         "admit workloads that can never be placed)",
                         c->nominal[CQ_INF] + c->nominal[CQ_TRAIN], total);
    return 0;
}

static void kueue_free_cfg(void *cfg)
{
    struct kueue_pol_cfg *c = cfg;
    if (!c)
        return;
    kueue_model_release(c->model);
    free(c->model);
    free(c->svc_cq);
    free(c->train_cq);
    free(c->train_w);
    free(c->map_from);
    free(c->map_cq);
    free(c);
}

/* ---- bookkeeping ---- */

/* Job j's state, the tables grown to hold it; NULL when memory ran out (the run stops). */
static uint8_t *job_state(struct kq *k, uint32_t j)
{
    if (j >= k->njob_st) {
        uint32_t n = k->njob_st ? 2 * k->njob_st : 256;
        while (n <= j)
            n *= 2;
        uint8_t *v = realloc(k->job_st, n);
        if (v)
            k->job_st = v;
        sim_time *t = v ? realloc(k->job_since, n * sizeof(*t)) : NULL;
        if (t)
            k->job_since = t;
        sim_time *ps = t ? realloc(k->job_pend_since, n * sizeof(*ps)) : NULL;
        if (ps)
            k->job_pend_since = ps;
        uint32_t *jc = ps ? realloc(k->job_cq, n * sizeof(*jc)) : NULL;
        if (!jc) {
            sim_fail_oom(k->s, "holding a workload's state");
            return NULL;
        }
        k->job_cq = jc;
        memset(ps + k->njob_st, 0, (n - k->njob_st) * sizeof(*ps));
        memset(jc + k->njob_st, 0, (n - k->njob_st) * sizeof(*jc));
        memset(v + k->njob_st, WL_NONE, n - k->njob_st);
        memset(t + k->njob_st, 0, (n - k->njob_st) * sizeof(*t));
        k->njob_st = n;
    }
    return &k->job_st[j];
}

static struct inf_wl *inf_find(struct kq *k, uint32_t id)
{
    for (uint32_t i = 0; i < k->ninf; i++)
        if (k->inf[i].id == id)
            return &k->inf[i];
    return NULL;
}

/* The flavors a workload whose own constraints allow the pools of `allow` may use (bit f: GPU
 * flavor f has a pool in allow); every flavor with one. */
static uint64_t flavors_allowed(const struct kq *k, uint64_t allow)
{
    if (!k->flavored)
        return UINT64_MAX;
    uint64_t mask = 0;
    for (uint32_t f = 0; f < k->nfl; f++)
        if (!k->fl_prof[f] && (k->fl_pools[f] & allow))
            mask |= (uint64_t)1 << f;
    return mask;
}

/*
 * The cells a replica of svc may use: flavors_allowed's nvidia.com/gpu cells, and each MIG cell
 * of a pool its require: allows where one replica takes an instance of exactly that cell's
 * profile (pol_mig_profile_for). A tensor-parallel replica takes whole cards only. Training
 * takes flavors_allowed's (whole cards: tidesim does not place gangs on MIG instances under
 * kueue).
 */
static uint64_t svc_cells(const struct sim *s, const struct kq *k, uint32_t svc)
{
    uint64_t allow = s->svc_allow ? s->svc_allow[svc] : POOL_ALL;
    uint64_t mask = flavors_allowed(k, allow);
    if (!k->flavored || pol_gang_size(s, svc) != 1)
        return mask;
    for (uint32_t f = 0; f < k->nfl; f++)
        for (uint32_t p = 0; k->fl_prof[f] && p < s->cl.npools; p++)
            if ((k->fl_pools[f] & allow) >> p & 1) {
                const struct mig_profile *q = pol_mig_profile_for(s, svc, p);
                if (q && !strcasecmp(q->name, k->fl_prof[f]))
                    mask |= (uint64_t)1 << f;
            }
    return mask;
}

static int inf_submit(struct sim *s, struct kq *k, uint32_t svc)
{
    if (k->ninf == k->cap_inf) {
        uint32_t cap = k->cap_inf ? 2 * k->cap_inf : 16;
        struct inf_wl *v = realloc(k->inf, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        k->inf = v;
        k->cap_inf = cap;
    }
    uint32_t id = INF_BASE + k->next_inf;
    /* A tensor-parallel replica is one pod of tensor_parallel GPUs: a workload of that many. */
    uint32_t cq = k->cfg.model ? k->cfg.svc_cq[svc] : CQ_INF;
    int rc =
        kueue_submit(k->q, id, cq, k->cfg.prio[CQ_INF], (double)pol_gang_size(s, svc), s->eng.now);
    if (rc)
        return rc;
    if (k->flavored) /* a flavor whose pools its require: refuses is skipped */
        kueue_set_wl_flavors(k->q, id, svc_cells(s, k, svc));
    k->next_inf++;
    k->inf[k->ninf++] = (struct inf_wl){
        .id = id, .svc = svc, .gpu = NO_GPU, .st = WL_PENDING, .pend_since = s->eng.now};
    return 0;
}

static void inf_forget(struct kq *k, struct inf_wl *w)
{
    pol_unhold_owner(&k->holds, w->id);
    kueue_remove(k->q, w->id);
    *w = k->inf[--k->ninf];
}

/* Workloads of svc: placed, and not placed yet (pending or admitted). */
static void inf_count(const struct kq *k, uint32_t svc, uint32_t *placed, uint32_t *waiting)
{
    *placed = *waiting = 0;
    for (uint32_t i = 0; i < k->ninf; i++)
        if (k->inf[i].svc == svc) {
            if (k->inf[i].st == WL_PLACED)
                (*placed)++;
            else
                (*waiting)++;
        }
}

/* Stop the replica of svc on card g (a victim). */
static void stop_replica_on(struct sim *s, uint32_t svc, uint32_t g)
{
    struct service *sv = &s->svcs[svc];
    for (uint32_t r = 0; r < sv->nreps; r++) {
        const struct replica *rp = &sv->reps[r];
        if (!rp->gone && !rp->draining && rp->gpu == g) {
            service_remove_replica(sv, r);
            return;
        }
    }
}

/* Per-CQ results: an eviction of workload id (before kueue forgets its CQ). */
static void acct_evict(struct kq *k, uint32_t id)
{
    const struct kueue_wl *w = kueue_find(k->q, id);
    if (w && w->cq < k->ncq)
        k->acct[w->cq].evictions++;
}

/* Per-CQ results: workload id admitted at now after waiting since `since`. */
static void acct_admit(struct kq *k, uint32_t id, sim_time since, sim_time now)
{
    const struct kueue_wl *w = kueue_find(k->q, id);
    if (!w || w->cq >= k->ncq)
        return;
    struct cq_acct *a = &k->acct[w->cq];
    a->admissions++;
    pol_keep_delay(k->s, &a->delays, &a->ndelays, &a->cap, sim_time_to_sec(now - since));
}

static void evict(struct sim *s, struct kq *k, uint32_t id)
{
    if (id >= INF_BASE) {
        struct inf_wl *w = inf_find(k, id);
        if (!w)
            return;
        w->pend_since = s->eng.now;
        if (w->st == WL_PLACED) {
            stop_replica_on(s, w->svc, w->gpu);
            k->preempted_replicas++;
        }
        pol_unhold_owner(&k->holds, w->id);
        w->st = WL_PENDING;
        w->gpu = NO_GPU;
        return;
    }
    uint8_t *st = job_state(k, id);
    if (!st)
        return;
    k->job_pend_since[id] = s->eng.now;
    if (*st == WL_PLACED) {
        k->preempted_jobs++;
        *st = WL_EVICTING; /* requeued (on_requeue) once the save is over */
        trainer_preempt(&s->tr, id, k->cfg.graceful);
    } else {
        *st = WL_PENDING;
    }
}

/* The cards training may take: NULL (all) while nothing is held. */
static const bool *train_mask(struct kq *k)
{
    return k->holds.n ? pol_holds_mask(&k->holds, UINT32_MAX) : NULL;
}

/*
 * With several GPU flavors: base (NULL: every card) narrowed to the cards of flavor f's pools,
 * so a workload admitted on f is placed only there (the pool-constraint placement of
 * common.h does the rest). With one flavor: base unchanged.
 */
static const bool *flavor_ok(struct kq *k, uint32_t f, const bool *base)
{
    if (!k->flavored || f >= k->nfl)
        return base;
    for (uint32_t g = 0; g < k->s->cl.ngpus; g++)
        k->fl_ok[g] = k->fl_cards[f][g] && (!base || base[g]);
    return k->fl_ok;
}

/* The flavor workload id is admitted on (0 when not admitted or one flavor). */
static uint32_t wl_flavor(const struct kq *k, uint32_t id)
{
    const struct kueue_wl *w = kueue_find(k->q, id);
    return w && w->admitted ? w->flavor : 0;
}

/*
 * pol_job_cost_fn for gathering a tensor-parallel replica's cards: a job
 * Kueue is evicting (or that is stopping) is leaving anyway (0); a running
 * placed job costs its GPUs (the scheduler preempts its pods); others stay.
 */
static int64_t sched_cost(void *ctx, uint32_t j)
{
    struct kq *k = ctx;
    const struct job *jb = &k->s->tr.jobs[j];
    if (j >= k->njob_st || jb->state != JOB_RUNNING)
        return -1;
    if (k->job_st[j] == WL_EVICTING || jb->stop_after || jb->phase == PHASE_STOP)
        return 0;
    return k->job_st[j] == WL_PLACED ? (int64_t)jb->spec.gpus : -1;
}

/*
 * An admitted tensor-parallel replica that no node has room for now: as the
 * kube-scheduler's preemption (PostFilter) would for its pending pod of a
 * higher PriorityClass, nominate the node where the fewest GPUs of training
 * must go (cards already being freed by Kueue's own evictions cost nothing),
 * preempt those pods gracefully and hold the node's cards for the replica.
 * The preempted workloads keep their admission (their pods are recreated and
 * wait for cards, as after a fault).
 */
static void gather_tp(struct sim *s, struct kq *k, struct inf_wl *w)
{
    uint32_t n = pol_gang_size(s, w->svc), cards[LLM_MAX_TP], njobs;
    if (pol_held_count(&k->holds, w->id) > 0)
        return; /* already gathering */
    const bool *ok = flavor_ok(k, wl_flavor(k, w->id), pol_holds_mask(&k->holds, UINT32_MAX));
    if (pol_plan_best_for(s, w->svc, ok, sched_cost, k, k->plan_jobs, cards, &njobs) == UINT32_MAX)
        return;
    for (uint32_t i = 0; i < n; i++)
        pol_hold(&k->holds, cards[i], w->id);
    for (uint32_t i = 0; i < njobs; i++) {
        k->sched_preempted++;
        trainer_preempt(&s->tr, k->plan_jobs[i], k->cfg.graceful);
    }
}

/* The MIG profile of the cell workload id is admitted on; NULL: nvidia.com/gpu (or none). */
static const char *mig_wl(const struct kq *k, uint32_t id)
{
    if (!k->flavored)
        return NULL;
    uint32_t f = wl_flavor(k, id);
    return f < k->nfl ? k->fl_prof[f] : NULL;
}

/* pol_mig_card's filter: card g is in the pools of cell k->fl_try. */
static bool cell_card_ok(const struct sim *s, void *ctx, uint32_t g)
{
    const struct kq *k = ctx;
    (void)s;
    return k->fl_cards[k->fl_try][g];
}

/*
 * Admitted replica w on a MIG cell: one free instance of the cell's profile (charged as one
 * nvidia.com/mig-<profile>) on the cards of its pools, chosen as mig-static chooses
 * (common.h, pol_mig_card: the pools the service prefers first, then the lowest card).
 */
static bool place_mig(struct sim *s, struct kq *k, struct inf_wl *w, sim_time delay)
{
    uint32_t f = wl_flavor(k, w->id);
    k->fl_try = f;
    uint32_t g = pol_mig_card(s, w->svc, k->fl_prof[f], cell_card_ok, k);
    if (g == UINT32_MAX || sim_start_replica_on_profile(s, w->svc, &g, 1, delay, k->fl_prof[f]))
        return false;
    w->st = WL_PLACED;
    w->gpu = g;
    return true;
}

/*
 * Put admitted inference workload w on free cards, node-compact (a
 * tensor-parallel replica: its cards on one node, those held for it first;
 * when none has room, gather_tp). Returns true if placed.
 */
static bool place_inf(struct sim *s, struct kq *k, struct inf_wl *w, sim_time delay)
{
    uint32_t cards[LLM_MAX_TP], n = 0;
    if (mig_wl(k, w->id))
        return place_mig(s, k, w, delay);
    if (k->holds.n && pol_held_count(&k->holds, w->id) > 0) {
        bool *mine = k->holds.ok;
        for (uint32_t g = 0; g < s->cl.ngpus; g++)
            mine[g] = k->holds.owner[g] == w->id + 1;
        n = pol_pick_gang_masked(s, w->svc, mine, cards);
    }
    if (n == 0)
        n = pol_pick_gang_masked(
            s, w->svc,
            flavor_ok(k, wl_flavor(k, w->id), k->holds.n ? pol_holds_mask(&k->holds, w->id) : NULL),
            cards);
    if (n == 0 || sim_start_replica_on(s, w->svc, cards, n, delay) != 0) {
        if (pol_gang_size(s, w->svc) > 1)
            gather_tp(s, k, w);
        return false;
    }
    pol_unhold_owner(&k->holds, w->id);
    w->st = WL_PLACED;
    w->gpu = cards[0];
    return true;
}

/* The scale-up delay of a replica placed during the run. */
static sim_time inf_delay(const struct sim *s);
static sim_time inf_delay(const struct sim *s)
{
    return s->sc->policy.autoscale ? s->sc->policy.as.up_delay : 0;
}

/* Put admitted job j on whole free cards, node-aligned (cluster_find_gang). Returns true if
 * placed (or OOM-killed at start: on_finish forgot it). */
static bool place_job(struct sim *s, struct kq *k, uint32_t j)
{
    if (pol_find_job_gang(s, j, flavor_ok(k, wl_flavor(k, j), train_mask(k)), k->gang) != 0)
        return false;
    k->job_st[j] = WL_PLACED;
    if (trainer_start(&s->tr, j, k->gang) >= 0)
        return true;
    k->job_st[j] = WL_ADMITTED;
    return false;
}

/* kueue_filter_fn (topology_aware): a training gang is admitted only if it can be placed now. */
static bool gang_placeable(void *ctx, uint32_t id, double gpus)
{
    struct kq *k = ctx;
    if (id >= INF_BASE)
        return true;
    /* On the flavor being tried (kueue_eval_flavor). */
    const bool *ok = flavor_ok(k, kueue_eval_flavor(k->q), train_mask(k));
    if (k->s->constrained) /* only where its placement constraints allow (sim/sim.h) */
        return pol_find_job_gang(k->s, id, ok, k->gang) == 0;
    return pol_find_gang_masked(&k->s->cl, ok, (uint32_t)(gpus + 0.5), k->gang) == 0;
}

/* Admit what kueue decides, preempting its victims, until nothing is admissible. Each admitted
 * workload is placed at once when cards are free (else it waits in place_admitted). */
static void admit_all(struct sim *s, struct kq *k)
{
    struct kueue_decision d;
    kueue_set_clock(k->q, s->eng.now);
    int more;
    while ((more = kueue_next(k->q, &d)) > 0) {
        if (d.n_victims > k->cap_victims) {
            uint32_t *v = realloc(k->victims, d.n_victims * sizeof(*v));
            if (!v) {
                sim_fail_oom(s, "admitting workloads");
                return;
            }
            k->victims = v;
            k->cap_victims = d.n_victims;
        }
        if (d.n_victims > 0) /* no victims: both pointers may be NULL (memcpy forbids that) */
            memcpy(k->victims, d.victims, d.n_victims * sizeof(*k->victims));
        d.victims = k->victims;
        for (uint32_t v = 0; v < d.n_victims; v++)
            acct_evict(k, k->victims[v]);
        int rc = kueue_apply(k->q, &d, s->eng.now);
        if (rc) {
            if (rc == -ENOMEM)
                sim_fail_oom(s, "admitting workloads");
            return;
        }
        for (uint32_t v = 0; v < d.n_victims; v++)
            evict(s, k, k->victims[v]);
        if (d.id >= INF_BASE) {
            struct inf_wl *w = inf_find(k, d.id);
            if (w)
                acct_admit(k, d.id, w->pend_since, s->eng.now);
            if (w) {
                w->st = WL_ADMITTED;
                w->since = s->eng.now;
                place_inf(s, k, w, inf_delay(s));
            }
        } else {
            uint8_t *st = job_state(k, d.id);
            if (st) {
                acct_admit(k, d.id, k->job_pend_since[d.id], s->eng.now);
                *st = WL_ADMITTED;
                k->job_since[d.id] = s->eng.now;
                if (s->tr.jobs[d.id].state == JOB_QUEUED)
                    place_job(s, k, d.id);
            }
        }
    }
    if (more == -ENOMEM)
        sim_fail_oom(s, "choosing the next workload to admit");
}

/* Put admitted workloads on free cards: inference first, then training in job order. */
static void place_admitted(struct sim *s, struct kq *k)
{
    bool full = false; /* no free card; a tensor-parallel one may lack a node, not a card */
    for (uint32_t i = 0; i < k->ninf; i++) {
        bool mig = k->inf[i].st == WL_ADMITTED && mig_wl(k, k->inf[i].id); /* its own instances */
        if (k->inf[i].st == WL_ADMITTED && (mig || !full) &&
            !place_inf(s, k, &k->inf[i], inf_delay(s)) && pol_gang_size(s, k->inf[i].svc) == 1 &&
            !mig)
            full = true;
    }
    for (uint32_t j = 0; j < k->njob_st && j < s->tr.njobs; j++) {
        if (k->job_st[j] != WL_ADMITTED || s->tr.jobs[j].state != JOB_QUEUED)
            continue;
        if (!place_job(s, k, j) && k->cfg.strategy == KUEUE_STRICT_FIFO)
            break;
    }
}

/* requeuingStrategy backoff after the n-th requeue: base · 2^(n−1), at most max (no jitter). */
static sim_time backoff(const struct kueue_pol_cfg *c, uint32_t n)
{
    sim_time b = c->backoff_base;
    for (uint32_t i = 1; i < n && b < c->backoff_max; i++)
        b *= 2;
    return b < c->backoff_max ? b : c->backoff_max;
}

/*
 * waitForPodsReady: an admitted workload whose pods are not all placed within
 * the timeout is evicted (its quota released) and requeued after a backoff;
 * past backoffLimitCount requeues it is deactivated (a job: rejected; a
 * replica: dropped, the HPA asks again).
 */
static void check_pods_ready(struct sim *s, struct kq *k)
{
    if (!k->cfg.pods_ready)
        return;
    sim_time now = s->eng.now, to = k->cfg.ready_timeout;
    for (uint32_t j = 0; j < k->njob_st && j < s->tr.njobs; j++) {
        if (k->job_st[j] != WL_ADMITTED || now < k->job_since[j] + to)
            continue;
        const struct kueue_wl *w = kueue_find(k->q, j);
        uint32_t n = w ? w->requeues + 1 : 1;
        k->ready_timeouts++;
        if (k->cfg.backoff_limit >= 0 && n > (uint64_t)k->cfg.backoff_limit) {
            kueue_remove(k->q, j);
            k->job_st[j] = WL_NONE;
            k->deactivated++;
            trainer_reject(&s->tr, j);
            continue;
        }
        acct_evict(k, j);
        k->job_pend_since[j] = now;
        kueue_requeue(k->q, j, now, now + backoff(&k->cfg, n), k->cfg.requeue_by_eviction);
        k->job_st[j] = WL_PENDING;
    }
    for (uint32_t i = 0; i < k->ninf; i++) {
        struct inf_wl *w = &k->inf[i];
        if (w->st != WL_ADMITTED || now < w->since + to)
            continue;
        const struct kueue_wl *q = kueue_find(k->q, w->id);
        uint32_t n = q ? q->requeues + 1 : 1;
        k->ready_timeouts++;
        if (k->cfg.backoff_limit >= 0 && n > (uint64_t)k->cfg.backoff_limit) {
            k->deactivated++;
            inf_forget(k, w);
            i--;
            continue;
        }
        acct_evict(k, w->id);
        w->pend_since = now;
        kueue_requeue(k->q, w->id, now, now + backoff(&k->cfg, n), k->cfg.requeue_by_eviction);
        pol_unhold_owner(&k->holds, w->id);
        w->st = WL_PENDING;
    }
}

static void reconcile(struct sim *s, struct kq *k);

static void on_wake(void *ctx, uint64_t arg)
{
    struct kq *k = ctx;
    (void)arg;
    k->wake_at = SIM_TIME_MAX;
    reconcile(k->s, k);
}

/* One event at the next PodsReady deadline or end of a backoff, whichever is first. */
static void plan_wake(struct sim *s, struct kq *k)
{
    if (!k->cfg.pods_ready)
        return;
    sim_time now = s->eng.now;
    sim_time next = kueue_next_requeue(k->q, now), to = k->cfg.ready_timeout;
    for (uint32_t j = 0; j < k->njob_st && j < s->tr.njobs; j++)
        if (k->job_st[j] == WL_ADMITTED && k->job_since[j] + to < next)
            next = k->job_since[j] + to;
    for (uint32_t i = 0; i < k->ninf; i++)
        if (k->inf[i].st == WL_ADMITTED && k->inf[i].since + to < next)
            next = k->inf[i].since + to;
    if (next == k->wake_at)
        return;
    engine_cancel(&s->eng, &k->wake);
    k->wake_at = SIM_TIME_MAX;
    if (next == SIM_TIME_MAX)
        return;
    if (next < now)
        next = now;
    if (engine_at(&s->eng, next, on_wake, k, 0, &k->wake) == 0)
        k->wake_at = next;
}

/* Admission and placement until stable; re-entrant calls (from trainer callbacks) defer. */
static void reconcile(struct sim *s, struct kq *k)
{
    if (k->busy) {
        k->again = true;
        return;
    }
    k->busy = true;
    do {
        k->again = false;
        check_pods_ready(s, k);
        place_admitted(s, k); /* cards freed since: first to those already admitted */
        admit_all(s, k);
        place_admitted(s, k);
    } while (k->again);
    plan_wake(s, k);
    k->busy = false;
}

/* ---- autoscaler hooks ---- */

/*
 * The HPA wants a replica of svc: make sure there is a workload for every
 * replica it asks for; Kueue admits (and preempts for) them; placement
 * follows asynchronously, so the card is never handed back here.
 */
static uint32_t kueue_pick(struct sim *s, void *ctx, uint32_t svc, uint32_t *cards)
{
    struct kq *k = ctx;
    (void)cards;
    uint32_t placed, waiting, want = autoscale_current(&k->ps.as[svc]);
    inf_count(k, svc, &placed, &waiting);
    for (uint32_t n = placed + waiting; n < want; n++) {
        int rc = inf_submit(s, k, svc);
        if (rc == -ENOMEM)
            sim_fail_oom(s, "queueing a replica's workload");
        if (rc)
            break;
    }
    reconcile(s, k);
    return 0;
}

/*
 * On a MIG card, which services' replica left: svc has fewer replicas serving on card g than
 * placed workloads there (several services share the card's instances).
 */
static bool replica_gone(const struct sim *s, const struct kq *k, uint32_t svc, uint32_t g)
{
    uint32_t wls = 0, reps = 0;
    for (uint32_t i = 0; i < k->ninf; i++)
        wls += k->inf[i].st == WL_PLACED && k->inf[i].svc == svc && k->inf[i].gpu == g;
    const struct service *sv = &s->svcs[svc];
    for (uint32_t r = 0; r < sv->nreps; r++)
        reps += !sv->reps[r].gone && !sv->reps[r].draining && sv->reps[r].gpu == g;
    return reps < wls;
}

/* A scale-down took a replica off card g: its workload is finished. */
static void kueue_freed(struct sim *s, void *ctx, uint32_t g)
{
    struct kq *k = ctx;
    for (uint32_t i = 0; i < k->ninf; i++)
        if (k->inf[i].st == WL_PLACED && k->inf[i].gpu == g &&
            (cluster_card_mode(&s->cl, g) != SHARE_MIG || replica_gone(s, k, k->inf[i].svc, g))) {
            inf_forget(k, &k->inf[i]);
            return;
        }
}

/* Cancel not-yet-placed workloads beyond what the HPA now asks for (newest first). */
static void trim_waiting(struct kq *k, uint32_t svc)
{
    uint32_t placed, waiting, want = autoscale_current(&k->ps.as[svc]);
    inf_count(k, svc, &placed, &waiting);
    for (uint32_t i = k->ninf; i-- > 0 && waiting > 0 && placed + waiting > want;)
        if (k->inf[i].svc == svc && k->inf[i].st != WL_PLACED) {
            inf_forget(k, &k->inf[i]);
            waiting--;
        }
}

/* ---- policy callbacks ---- */

/*
 * The built-in queues on a fleet with MIG pools: cell 0 is nvidia.com/gpu on the pools with MIG
 * off, then one cell per profile name the MIG pools' layouts have (nvidia.com/mig-<profile>,
 * in pool then layout order). Sets nfl, fl_prof and fl_pools; 0 cells without MIG pools.
 */
static int builtin_cells(struct sim *s, struct kq *k)
{
    const struct cluster *c = &s->cl;
    uint32_t n = 1;
    k->fl_pools = calloc(KUEUE_MAX_FLAVORS, sizeof *k->fl_pools);
    k->fl_prof = calloc(KUEUE_MAX_FLAVORS, sizeof *k->fl_prof);
    if (!k->fl_pools || !k->fl_prof)
        return -ENOMEM;
    for (uint32_t p = 0; p < c->npools && p < POOL_MAX; p++) {
        if (c->pools[p].mode != SHARE_MIG) {
            k->fl_pools[0] |= (uint64_t)1 << p;
            continue;
        }
        const struct card *g = &c->cards[c->pools[p].first_gpu];
        for (size_t i = 0; c->pools[p].ngpus && i < g->layout.n; i++) {
            const char *name = g->layout.inst[i].profile->name;
            uint32_t f = 1;
            while (f < n && strcasecmp(k->fl_prof[f], name))
                f++;
            if (f == n) {
                if (n == KUEUE_MAX_FLAVORS) {
                    snprintf(s->err, sizeof(s->err),
                             "kueue: the MIG pools have more than %u profiles (each a "
                             "nvidia.com/mig-<profile> quota)",
                             KUEUE_MAX_FLAVORS - 1);
                    return -EINVAL;
                }
                k->fl_prof[n++] = name;
            }
            k->fl_pools[f] |= (uint64_t)1 << p;
        }
    }
    k->nfl = n > 1 ? n : 0;
    return 0;
}

/* Instances of cell f's profile on its pools. */
static double cell_instances(const struct sim *s, const struct kq *k, uint32_t f)
{
    double inst = 0;
    for (uint32_t p = 0; p < s->cl.npools; p++)
        if (k->fl_pools[f] >> p & 1)
            inst += pol_mig_count(&s->cl, p, mig_profile_find(s->cl.pools[p].spec, k->fl_prof[f]));
    return inst;
}

/* Card masks per cell and the scratch mask (flavor_ok). */
static int cell_cards(struct sim *s, struct kq *k)
{
    k->fl_cards = calloc(k->nfl, sizeof *k->fl_cards);
    k->fl_ok = calloc(s->cl.ngpus ? s->cl.ngpus : 1, sizeof *k->fl_ok);
    if (!k->fl_cards || !k->fl_ok)
        return -ENOMEM;
    for (uint32_t f = 0; f < k->nfl; f++) {
        k->fl_cards[f] = calloc(s->cl.ngpus ? s->cl.ngpus : 1, sizeof **k->fl_cards);
        if (!k->fl_cards[f])
            return -ENOMEM;
        for (uint32_t g = 0; g < s->cl.ngpus; g++)
            k->fl_cards[f][g] = cluster_card_in(&s->cl, g, k->fl_pools[f]);
    }
    k->flavored = true;
    return 0;
}

/* The two built-in CQs (policy.queues): inference and training in one cohort. With MIG pools
 * (builtin_cells): inference lists the MIG cells, then nvidia.com/gpu, with nominal quota on
 * each MIG cell all its instances; training lists nvidia.com/gpu only. */
static int init_builtin(struct sim *s, struct kq *k, double total)
{
    int rc = builtin_cells(s, k);
    if (rc)
        return rc;
    for (int i = 0; i < CQ_N; i++) {
        struct kueue_cq cq;
        kueue_cq_default(&cq);
        if (k->nfl) {
            cq.nflavors = i == CQ_INF ? (uint8_t)k->nfl : 1;
            for (uint32_t f = 0; f < cq.nflavors; f++)
                cq.flavors[f] = (uint8_t)(i == CQ_INF ? (f + 1) % k->nfl : 0);
        }
        cq.cohort = 0;
        cq.nominal = k->cfg.nominal[i];
        cq.borrowing_limit = k->cfg.borrowing_limit[i];
        cq.lending_limit = k->cfg.lending_limit[i];
        cq.strategy = k->cfg.strategy;
        cq.within = k->cfg.within;
        cq.reclaim = k->cfg.reclaim;
        cq.borrow = k->cfg.borrow;
        cq.borrow_threshold = k->cfg.borrow_threshold;
        cq.borrow_max_priority = k->cfg.borrow_max_priority;
        if ((rc = kueue_add_cq(k->q, &cq)) < 0)
            return rc;
    }
    if (k->nfl) {
        if ((rc = kueue_set_flavors(k->q, k->nfl)))
            return rc;
        for (int i = 0; i < CQ_N && rc == 0; i++)
            rc = kueue_set_cq_quota(k->q, (uint32_t)i, 0, k->cfg.nominal[i],
                                    k->cfg.borrowing_limit[i], k->cfg.lending_limit[i]);
        for (uint32_t f = 1; f < k->nfl && rc == 0; f++)
            rc = kueue_set_cq_quota(k->q, CQ_INF, f, cell_instances(s, k, f), KUEUE_UNLIMITED,
                                    KUEUE_UNLIMITED) ||
                 kueue_set_cq_quota(k->q, CQ_TRAIN, f, 0, KUEUE_UNLIMITED, KUEUE_UNLIMITED);
        if (rc || (rc = cell_cards(s, k)))
            return rc < 0 ? rc : -EINVAL;
    }
    /* The most a training workload can hold: its nominal plus what it may borrow. */
    double lend =
        k->cfg.lending_limit[CQ_INF] < 0 || k->cfg.lending_limit[CQ_INF] > k->cfg.nominal[CQ_INF]
            ? k->cfg.nominal[CQ_INF]
            : k->cfg.lending_limit[CQ_INF];
    double bl = k->cfg.borrowing_limit[CQ_TRAIN];
    double most = k->cfg.nominal[CQ_TRAIN] + (bl >= 0 && bl < lend ? bl : lend);
    k->max_train = most > total ? s->cl.ngpus : (uint32_t)(most + 1e-9);

    k->ncq = CQ_N;
    return 0;
}

/*
 * The pools quota cell f's resource is on: its ResourceFlavor's pools that advertise it — for
 * nvidia.com/gpu those not partitioned by MIG (the GPU operator's mixed strategy advertises no
 * nvidia.com/gpu for a MIG-enabled card), for nvidia.com/mig-<profile> the MIG pools whose
 * layout has that profile (*prof: it, on their board; NULL for nvidia.com/gpu).
 */
static uint64_t kueue_cell_pools(const struct sim *s, const struct kueue_model *m, uint32_t f,
                                 const char **prof)
{
    uint64_t fl = m->flavors[m->gpu_flavors[f]].pools, out = 0;
    *prof = m->mig_profile[f];
    for (uint32_t p = 0; p < s->cl.npools && p < POOL_MAX; p++) {
        const struct cluster_pool *pl = &s->cl.pools[p];
        if (!(fl >> p & 1) || (pl->mode == SHARE_MIG) != (m->mig_profile[f] != NULL))
            continue;
        if (m->mig_profile[f]) {
            const struct mig_profile *q = mig_profile_find(pl->spec, m->mig_profile[f]);
            if (!q || pol_mig_count(&s->cl, p, q) == 0)
                continue;
        }
        out |= (uint64_t)1 << p;
    }
    return out;
}

/* The CQs and Cohorts of the manifests; a job can be as big as its CQ could ever hold. */
static int init_model(struct sim *s, struct kq *k)
{
    const struct kueue_model *m = k->cfg.model;
    for (uint32_t i = 0; i < m->ncohorts; i++) {
        int rc = kueue_add_cohort(k->q, &m->cohorts[i].c);
        if (rc < 0)
            return rc;
    }
    for (uint32_t i = 0; i < m->ncqs; i++) {
        int rc = kueue_add_cq(k->q, &m->cqs[i].cq);
        if (rc < 0)
            return rc;
    }
    if (m->fair_sharing)
        kueue_set_fair_sharing(k->q, m->strategies, m->nstrategies);
    k->ncq = m->ncqs;
    bool mig = false;
    for (uint32_t f = 0; f < m->ngpu; f++)
        mig = mig || m->mig_profile[f];
    if (m->ngpu > 1 || mig) {
        int rc = kueue_set_flavors(k->q, m->ngpu);
        if (rc)
            return rc;
        for (uint32_t f = 0; f < m->ngpu; f++) {
            for (uint32_t i = 0; i < m->ncqs && rc == 0; i++)
                rc = kueue_set_cq_quota(k->q, i, f, m->cqs[i].q.nominal[f], m->cqs[i].q.bl[f],
                                        m->cqs[i].q.ll[f]);
            for (uint32_t i = 0; i < m->ncohorts && rc == 0; i++)
                rc = kueue_set_cohort_quota(k->q, i, f, m->cohorts[i].q.nominal[f],
                                            m->cohorts[i].q.bl[f], m->cohorts[i].q.ll[f]);
            if (rc)
                return rc;
            if ((rc = kueue_set_flavor_resource(k->q, f, kueue_cell_resource(m, f))))
                return rc;
        }
        k->nfl = m->ngpu;
        k->fl_stat = calloc((size_t)m->ngpu * (m->ncqs ? m->ncqs : 1), sizeof *k->fl_stat);
        if (!k->fl_stat)
            return -ENOMEM;
        k->fl_pools = calloc(m->ngpu, sizeof *k->fl_pools);
        k->fl_prof = calloc(m->ngpu, sizeof *k->fl_prof);
        if (!k->fl_pools || !k->fl_prof)
            return -ENOMEM;
        for (uint32_t f = 0; f < m->ngpu; f++)
            k->fl_pools[f] = kueue_cell_pools(s, m, f, &k->fl_prof[f]);
        if ((rc = cell_cards(s, k)))
            return rc;
    }
    k->max_train = s->cl.ngpus; /* per CQ in kueue_on_submit */
    return 0;
}

/* The nominal quotas of each nvidia.com/mig-<profile> cell fit the instances of its pools. */
static int check_mig_quota(struct sim *s, const struct kq *k)
{
    const struct kueue_model *m = k->cfg.model;
    for (uint32_t f = 0; m && k->flavored && f < k->nfl; f++) {
        if (!k->fl_prof[f])
            continue;
        double quota = 0, inst = cell_instances(s, k, f);
        for (uint32_t i = 0; i < m->ncqs; i++)
            quota += m->cqs[i].q.nominal[f];
        for (uint32_t i = 0; i < m->ncohorts; i++)
            quota += m->cohorts[i].q.nominal[f];
        if (quota > inst + 1e-9) {
            snprintf(s->err, sizeof(s->err),
                     "nominal quotas of %s sum to %g but its flavor's MIG pools have %g "
                     "instances of %s (Kueue would admit workloads that can never be placed)",
                     m->cell_name[f], quota, inst, k->fl_prof[f]);
            return -EINVAL;
        }
    }
    return 0;
}

static int kueue_init(struct sim *s, void **state)
{
    struct kq *k = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    *state = k;
    k->s = s;
    k->wake_at = SIM_TIME_MAX;
    const struct scenario *sc = s->sc;
    if (sc->policy.cfg)
        k->cfg = *(const struct kueue_pol_cfg *)sc->policy.cfg;
    else
        cfg_default(&k->cfg);
    double total = s->cl.ngpus, mig_cards = 0;
    for (uint32_t p = 0; p < s->cl.npools; p++) /* the built-in queues' nvidia.com/gpu: */
        if (s->cl.pools[p].mode == SHARE_MIG)   /* whole cards, MIG cards count for */
            mig_cards += s->cl.pools[p].ngpus;  /* inference first (init_builtin_mig) */
    total -= mig_cards;
    if (k->cfg.nominal[CQ_INF] < 0)
        k->cfg.nominal[CQ_INF] =
            sc->policy.inference_gpus > mig_cards ? sc->policy.inference_gpus - mig_cards : 0;
    if (k->cfg.nominal[CQ_INF] > total)
        k->cfg.nominal[CQ_INF] = total;
    if (k->cfg.nominal[CQ_TRAIN] < 0)
        k->cfg.nominal[CQ_TRAIN] = total - k->cfg.nominal[CQ_INF];
    k->q = kueue_create();
    k->gang = calloc(s->cl.ngpus, sizeof(*k->gang));
    k->plan_jobs = calloc((size_t)s->cl.per_node * (CARD_MAX_TENANTS + 1), sizeof(*k->plan_jobs));
    if (!k->q || !k->gang || !k->plan_jobs || pol_holds_init(&k->holds, s->cl.ngpus))
        return -ENOMEM;
    if (k->cfg.topology_aware)
        kueue_set_filter(k->q, gang_placeable, k);
    int irc = k->cfg.model ? init_model(s, k) : init_builtin(s, k, total);
    if (irc || (irc = check_mig_quota(s, k)))
        return irc;
    /* With several GPU flavors, a service whose require: leaves its ClusterQueue no flavor
     * that could ever hold one replica would wait forever: refused at the start, by name. */
    for (uint32_t i = 0; k->flavored && i < s->nsvcs; i++) {
        uint32_t cq = k->cfg.model ? k->cfg.svc_cq[i] : CQ_INF;
        double most = kueue_cq_potential_mask(k->q, cq, svc_cells(s, k, i));
        if (most + 1e-9 < pol_gang_size(s, i)) {
            snprintf(s->err, sizeof(s->err),
                     "service '%.60s': its ClusterQueue '%.60s' could hold at most %g GPUs (or "
                     "MIG instances) on the flavors whose pools its require: allows, less than "
                     "one replica (%u): no replica could ever be admitted",
                     sc->services[i].name, k->cfg.model ? k->cfg.model->cqs[cq].name : "inference",
                     most, pol_gang_size(s, i));
            return -EINVAL;
        }
    }
    k->acct = calloc(k->ncq ? k->ncq : 1, sizeof(*k->acct));
    k->train_wrr = calloc(k->cfg.ntrain ? k->cfg.ntrain : 1, sizeof(*k->train_wrr));
    if (!k->acct || !k->train_wrr)
        return -ENOMEM;

    /* Initial replicas: the service's count, else the HPA's at the first interval's load; a
     * fixed split without HPA. */
    uint32_t *initial = calloc(s->nsvcs ? s->nsvcs : 1, sizeof(*initial));
    if (!initial)
        return -ENOMEM;
    uint32_t pool = sc->policy.inference_gpus, fixed = 0, flexible = 0; /* cards */
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        fixed += sc->services[i].replicas * pol_gang_size(s, i);
        flexible += sc->services[i].replicas == 0;
    }
    uint32_t spare = pool > fixed ? pool - fixed : 0;
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        const struct service_cfg *c = &sc->services[i];
        uint32_t n = c->replicas;
        if (n == 0 && sc->policy.autoscale) {
            n = pol_initial_replicas(s, i);
        } else if (n == 0) {
            n = spare / flexible + (spare % flexible ? 1 : 0); /* cards */
            spare -= n < spare ? n : spare;
            flexible--;
            n = (n + pol_gang_size(s, i) - 1) / pol_gang_size(s, i); /* replicas */
        }
        initial[i] = n;
        for (uint32_t r = 0; r < n; r++) {
            int rc = inf_submit(s, k, i);
            if (rc) {
                free(initial);
                return rc;
            }
        }
    }
    admit_all(s, k);
    /* Initial replicas serve at once (they exist before t = 0). */
    for (uint32_t i = 0; i < k->ninf; i++)
        if (k->inf[i].st == WL_ADMITTED)
            place_inf(s, k, &k->inf[i], 0);
    int rc = 0;
    if (sc->policy.autoscale) {
        rc = pol_scaler_init(&k->ps, s, initial);
        k->scaling = rc == 0;
    }
    free(initial);
    return rc;
}

/*
 * ClusterQueue of a job (manifests): the LocalQueue its queue value names,
 * else queue_map's entry for it, else the training_queues by smooth weighted
 * round-robin. UINT32_MAX: none.
 */
static uint32_t job_cq(struct kq *k, const struct job *j)
{
    const struct kueue_pol_cfg *c = &k->cfg;
    if (!c->model)
        return CQ_TRAIN;
    if (j->spec.queue[0]) {
        int32_t l = kueue_model_lq(c->model, j->spec.queue);
        if (l >= 0)
            return c->model->lqs[l].cq;
        for (uint32_t i = 0; i < c->nmap; i++)
            if (!strcmp(c->map_from[i], j->spec.queue))
                return c->map_cq[i];
    }
    double total = 0;
    int32_t best = -1;
    for (uint32_t i = 0; i < c->ntrain; i++) {
        k->train_wrr[i] += c->train_w[i];
        total += c->train_w[i];
        if (best < 0 || k->train_wrr[i] > k->train_wrr[best])
            best = (int32_t)i;
    }
    if (best < 0)
        return UINT32_MAX;
    k->train_wrr[best] -= total;
    return c->train_cq[best];
}

static void kueue_on_submit(struct sim *s, void *state, uint32_t j)
{
    struct kq *k = state;
    const struct job *job = &s->tr.jobs[j];
    uint8_t *st = job_state(k, j);
    uint32_t cq = st ? job_cq(k, job) : UINT32_MAX;
    /* A job larger than its CQ could ever hold would wait forever: rejected at submission. */
    bool too_big = cq == UINT32_MAX || job->spec.gpus > k->max_train ||
                   (k->cfg.model && job->spec.gpus > kueue_cq_potential(k->q, cq) + 1e-9);
    /* With flavors: larger than its CQ could hold on every flavor it may use (none at all:
     * no flavor of its CQ on a pool its require: allows) — never admitted. */
    uint64_t fmask = flavors_allowed(k, job->pools_allow);
    if (!too_big && k->flavored)
        too_big = job->spec.gpus > kueue_cq_potential_mask(k->q, cq, fmask) + 1e-9;
    if (!st)
        return; /* memory ran out: the run stops (job_state) */
    int rc = too_big ? 0
                     : kueue_submit(k->q, j, cq, k->cfg.prio[CQ_TRAIN], (double)job->spec.gpus,
                                    job->spec.submit);
    if (rc == -ENOMEM) {
        sim_fail_oom(s, "queueing a workload");
        return;
    }
    if (too_big || rc != 0) {
        trainer_reject(&s->tr, j);
        return;
    }
    if (k->flavored)
        kueue_set_wl_flavors(k->q, j, fmask);
    k->job_cq[j] = cq;
    k->job_pend_since[j] = s->eng.now;
    *st = WL_PENDING;
    reconcile(s, k);
}

static void kueue_on_finish(struct sim *s, void *state, uint32_t j)
{
    struct kq *k = state;
    uint8_t *st = job_state(k, j);
    if (st && *st != WL_NONE) {
        kueue_remove(k->q, j);
        *st = WL_NONE;
    }
    reconcile(s, k);
}

static void kueue_on_requeue(struct sim *s, void *state, uint32_t j)
{
    struct kq *k = state;
    uint8_t *st = job_state(k, j);
    if (!st)
        return;
    if (*st == WL_EVICTING)
        *st = WL_PENDING; /* preempted by Kueue: its quota is gone, it waits its turn */
    else if (*st == WL_PLACED) {
        *st = WL_ADMITTED;            /* a fault restarted it: the workload stays admitted */
        k->job_since[j] = s->eng.now; /* recoveryTimeout (= timeout) runs from here */
    }
    reconcile(s, k);
}

static void kueue_on_tick(struct sim *s, void *state)
{
    struct kq *k = state;
    if (k->scaling) {
        pol_scaler_tick(&k->ps, s, NULL, kueue_pick, kueue_freed, k);
        for (uint32_t i = 0; i < s->nsvcs; i++)
            trim_waiting(k, i);
    }
    reconcile(s, k);
}

static void kueue_destroy_state(void *state)
{
    struct kq *k = state;
    if (!k)
        return;
    kueue_destroy(k->q);
    pol_scaler_release(&k->ps);
    for (uint32_t f = 0; k->fl_cards && f < k->nfl; f++)
        free(k->fl_cards[f]);
    free(k->fl_cards);
    free(k->fl_pools);
    free(k->fl_prof);
    free(k->fl_ok);
    free(k->fl_stat);
    free(k->job_st);
    free(k->job_since);
    free(k->job_pend_since);
    free(k->job_cq);
    free(k->train_wrr);
    for (uint32_t i = 0; k->acct && i < k->ncq; i++)
        free(k->acct[i].delays);
    free(k->acct);
    free(k->inf);
    free(k->gang);
    free(k->plan_jobs);
    pol_holds_release(&k->holds);
    free(k->victims);
    free(k);
}

/* Per-queue results (manifests only: the built-in set-up writes none, as before). */
static uint32_t kueue_queues(const struct sim *s, void *state, struct pol_queue_stat *out,
                             uint32_t max)
{
    struct kq *k = state;
    if (!k || !k->cfg.model)
        return 0;
    const struct kueue_model *m = k->cfg.model;
    for (uint32_t i = 0; i < k->ncq && i < max; i++) {
        struct kueue_cq_stat st;
        kueue_cq_stat(k->q, i, &st);
        uint32_t pending = 0;
        for (uint32_t j = 0; j < k->njob_st && j < s->tr.njobs; j++)
            pending += k->job_st[j] == WL_PENDING && k->job_cq[j] == i;
        for (uint32_t w = 0; w < k->ninf; w++)
            pending += k->inf[w].st == WL_PENDING && k->cfg.svc_cq[k->inf[w].svc] == i;
        double nominal = m->cqs[i].cq.nominal;
        struct pol_flavor_stat *fs = k->flavored ? &k->fl_stat[(size_t)i * k->nfl] : NULL;
        for (uint32_t f = 0; fs && f < k->nfl; f++) {
            struct kueue_cq_stat one;
            kueue_cq_stat_flavor(k->q, i, f, &one);
            fs[f] = (struct pol_flavor_stat){
                .name = m->cell_name[f] ? m->cell_name[f] : m->flavors[m->gpu_flavors[f]].name,
                .nominal = m->cqs[i].q.nominal[f],
                .admitted = one.usage,
                .borrowed = one.borrowed,
                .lent = one.lent};
            nominal += f ? m->cqs[i].q.nominal[f] : 0;
        }
        out[i] = (struct pol_queue_stat){.name = m->cqs[i].name,
                                         .flavors = fs,
                                         .nflavors = fs ? k->nfl : 0,
                                         .nominal = nominal,
                                         .admitted = st.usage,
                                         .borrowed = st.borrowed,
                                         .lent = st.lent,
                                         .pending = pending,
                                         .admissions = k->acct[i].admissions,
                                         .evictions = k->acct[i].evictions,
                                         .delays = k->acct[i].delays,
                                         .ndelays = k->acct[i].ndelays};
    }
    return k->ncq;
}

const struct policy_ops policy_kueue = {
    .name = "kueue",
    .keys = kueue_keys,
    .parse = kueue_parse,
    .free_cfg = kueue_free_cfg,
    .init = kueue_init,
    .on_submit = kueue_on_submit,
    .on_finish = kueue_on_finish,
    .on_requeue = kueue_on_requeue,
    .on_tick = kueue_on_tick,
    .destroy = kueue_destroy_state,
    .queues = kueue_queues,
};

double kueue_policy_usage(const struct sim *s, bool inference)
{
    if (s->pol != &policy_kueue || !s->pol_state)
        return -1;
    const struct kq *k = s->pol_state;
    return kueue_usage(k->q, inference ? CQ_INF : CQ_TRAIN);
}

const struct kueue *kueue_policy_kueue(const struct sim *s)
{
    if (s->pol != &policy_kueue || !s->pol_state)
        return NULL;
    return ((const struct kq *)s->pol_state)->q;
}
