/*
 * cluster.h — the GPUs of the cluster and their time accounting.
 *
 * A cluster is nodes × gpus_per_node cards, numbered node-major. In exclusive
 * mode a card has at most one tenant: an inference replica or (a member of)
 * a training job. Every card accounts its time lazily: before any change of
 * state, cluster_account() adds the time since the last change to the
 * allocated and busy totals (all time and interval time). Invariants: for
 * every card busy_us <= alloc_us <= elapsed time; a card is busy only when
 * allocated. The cluster refuses impossible actions (allocating a taken card,
 * freeing a free one) with -EBUSY / -EINVAL and leaves its state unchanged.
 */
#ifndef TIDESIM_CLUSTER_H
#define TIDESIM_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/simtime.h"

enum gpu_use { GPU_FREE, GPU_INFER, GPU_TRAIN };

struct gpu {
    uint32_t node;
    enum gpu_use use;
    int64_t owner;                    /* replica or job id, -1 when free */
    double busy;                      /* current busy fraction of the card, 0..1 */
    sim_time last;                    /* time of the last accounting */
    double alloc_us, busy_us;         /* since t = 0 */
    double int_alloc_us, int_busy_us; /* since the start of the current sample interval */
    double infer_us, train_us;        /* allocated time by use, since t = 0 */
};

struct cluster {
    struct gpu *gpus;
    uint32_t ngpus, nodes, per_node;
    uint32_t *node_free; /* free cards per node */
    uint32_t free;       /* free cards in all */
};

/* Returns 0 or -ENOMEM. */
int cluster_init(struct cluster *c, uint32_t nodes, uint32_t per_node);
void cluster_release(struct cluster *c);

/* Bring card g's accounting up to now. */
static inline void cluster_account(struct gpu *g, sim_time now)
{
    double dt = (double)(now - g->last);
    if (g->use != GPU_FREE) {
        g->alloc_us += dt;
        g->int_alloc_us += dt;
        if (g->use == GPU_INFER)
            g->infer_us += dt;
        else
            g->train_us += dt;
        g->busy_us += dt * g->busy;
        g->int_busy_us += dt * g->busy;
    }
    g->last = now;
}

/* Give card id to owner. -EBUSY if taken (state unchanged). */
int cluster_alloc(struct cluster *c, uint32_t id, sim_time now, enum gpu_use use, int64_t owner);

/* Release card id. -EINVAL if already free (state unchanged). */
int cluster_free(struct cluster *c, uint32_t id, sim_time now);

/* Set card id's busy fraction from now on. */
static inline void cluster_set_busy(struct cluster *c, uint32_t id, sim_time now, double busy)
{
    struct gpu *g = &c->gpus[id];
    cluster_account(g, now);
    g->busy = busy;
}

/*
 * Find `count` free cards for a gang: on one node if count <= per_node (the
 * fullest node that fits: best fit, lowest index on ties), else on whole free
 * nodes. Writes the card ids to out[count]. Returns 0, or -ENOSPC (nothing written).
 */
int cluster_find_gang(const struct cluster *c, uint32_t count, uint32_t *out);

/* Bring every card's accounting up to now. */
void cluster_account_all(struct cluster *c, sim_time now);

/* Start a new sample interval: zero every card's interval totals. */
void cluster_reset_interval(struct cluster *c);

#endif
