/*
 * policy.h — the scheduling-policy interface.
 *
 * A policy is a table of callbacks. It acts only through the cluster API
 * (sim_place_replica, trainer_start, ...), which refuses impossible actions
 * and leaves the state unchanged, so a buggy policy cannot produce impossible
 * results. A policy's private state hangs off the sim (no globals).
 */
#ifndef TIDESIM_POLICY_H
#define TIDESIM_POLICY_H

#include <stdint.h>

struct sim;

struct policy_ops {
    const char *name;
    /* Set up state, place the initial inference replicas. Returns 0 or a negative code. */
    int (*init)(struct sim *s, void **state);
    void (*on_submit)(struct sim *s, void *state, uint32_t job);
    void (*on_finish)(struct sim *s, void *state, uint32_t job);
    /* A preempted or killed job is queued again (NULL: treated as a new submission). */
    void (*on_requeue)(struct sim *s, void *state, uint32_t job);
    /* A MIG card finished its re-layout (may be NULL). */
    void (*on_card_ready)(struct sim *s, void *state, uint32_t gpu);
    /* Called every sample interval (may be NULL). */
    void (*on_tick)(struct sim *s, void *state);
    void (*destroy)(void *state);
};

/* The policy with this CLI name, or NULL. */
const struct policy_ops *policy_find(const char *name);

extern const struct policy_ops policy_dedicated;

#endif
