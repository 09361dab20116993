/*
 * policy.h — the scheduling-policy interface.
 *
 * Room sim/policy/: this interface, the registry, the shared helpers and
 * one home per policy (NAME.c + NAME_*.c). A policy uses sim/, sim/core/,
 * models/, its own files and the shared ones, never another policy's.
 * Rule: docs/architecture.md.
 *
 * A policy is a table of callbacks. It acts only through the cluster API
 * (sim_place_replica, trainer_start, ...), which refuses impossible actions
 * and leaves the state unchanged, so a buggy policy cannot produce impossible
 * results. A policy's private state hangs off the sim (no globals).
 */
#ifndef TIDESIM_POLICY_POLICY_H
#define TIDESIM_POLICY_POLICY_H

#include <stdint.h>

#include "sim/conf.h"

struct sim;
struct scenario;

/* A queue's figures on one GPU flavor (kueue with several GPU ResourceFlavors). */
struct pol_flavor_stat {
    const char *name;                         /* the ResourceFlavor */
    double nominal, admitted, borrowed, lent; /* GPUs, as in pol_queue_stat, on this flavor */
};

/* One queue's figures as a policy reports them (results /queues; docs/results.md). */
struct pol_queue_stat {
    const char *name;
    double nominal;   /* GPUs of nominal quota (deserved quota for kai) */
    double admitted;  /* GPUs of quota held by admitted workloads now */
    double borrowed;  /* of which above nominal */
    double lent;      /* GPUs of its nominal quota other queues use now */
    uint32_t pending; /* workloads waiting for admission now */
    uint64_t admissions, evictions;
    const double *delays; /* queueing delay of each admission so far, s (owned by the policy) */
    size_t ndelays;
    /* Per GPU flavor (owned by the policy; nflavors 0 with one flavor: the totals above are
     * all). The same flavors, in the same order, for every queue and interval. */
    const struct pol_flavor_stat *flavors;
    uint32_t nflavors;
};

struct policy_ops {
    const char *name;
    /* Keys of the `policy` block this policy reads, besides the common ones (NULL-terminated). */
    const char *const *keys;
    /*
     * Parse those keys into sc->policy.cfg (may be NULL: no own keys). Errors
     * name file, line, column and key. Called by the scenario loader, so
     * `tidesim validate` checks them too.
     */
    int (*parse)(struct scenario *sc, const struct conf_node *p, struct conf_err *err);
    void (*free_cfg)(void *cfg);
    /* Set up state, place the initial inference replicas. Returns 0 or a negative code. */
    int (*init)(struct sim *s, void **state);
    void (*on_submit)(struct sim *s, void *state, uint32_t job);
    void (*on_finish)(struct sim *s, void *state, uint32_t job);
    /* A preempted or killed job is queued again (NULL: treated as a new submission). */
    void (*on_requeue)(struct sim *s, void *state, uint32_t job);
    /* A MIG card finished its re-layout (may be NULL). */
    void (*on_card_ready)(struct sim *s, void *state, uint32_t gpu);
    /*
     * Inference pressure (may be NULL): at the end of a sample interval,
     * service svc missed its SLO quantile in that interval or has more
     * requests waiting than its replicas can take in one batch each.
     */
    void (*on_pressure)(struct sim *s, void *state, uint32_t svc);
    /* Called every sample interval (may be NULL). */
    void (*on_tick)(struct sim *s, void *state);
    /*
     * Per-queue figures now (may be NULL; 0 = none to report): returns the
     * number of queues and fills out[i] for i < max. Pointers stay valid until
     * the policy's next callback.
     */
    uint32_t (*queues)(const struct sim *s, void *state, struct pol_queue_stat *out, uint32_t max);
    void (*destroy)(void *state);
};

/* The policy with this CLI name, or NULL. */
const struct policy_ops *policy_find(const char *name);

/* "dedicated, timeslice, ..." for messages. */
const char *policy_names_text(void);

extern const struct policy_ops policy_dedicated;
extern const struct policy_ops policy_tidal;
extern const struct policy_ops policy_adaptive;
extern const struct policy_ops policy_kueue;
extern const struct policy_ops policy_kai;
extern const struct policy_ops policy_timeslice, policy_mps; /* sim/policy/pack.c */
extern const struct policy_ops policy_mig_static;            /* sim/policy/migstatic.c */

#endif
