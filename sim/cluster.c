/* cluster.c — card allocation and time accounting. */
#include "sim/cluster.h"

#include <errno.h>
#include <stdlib.h>

int cluster_init(struct cluster *c, uint32_t nodes, uint32_t per_node)
{
    c->nodes = nodes;
    c->per_node = per_node;
    c->ngpus = nodes * per_node;
    c->free = c->ngpus;
    c->gpus = calloc(c->ngpus, sizeof(*c->gpus));
    c->node_free = calloc(nodes, sizeof(*c->node_free));
    if (!c->gpus || !c->node_free) {
        cluster_release(c);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < c->ngpus; i++) {
        c->gpus[i].node = i / per_node;
        c->gpus[i].owner = -1;
    }
    for (uint32_t n = 0; n < nodes; n++)
        c->node_free[n] = per_node;
    return 0;
}

void cluster_release(struct cluster *c)
{
    free(c->gpus);
    free(c->node_free);
    c->gpus = NULL;
    c->node_free = NULL;
}

int cluster_alloc(struct cluster *c, uint32_t id, sim_time now, enum gpu_use use, int64_t owner)
{
    if (id >= c->ngpus || use == GPU_FREE)
        return -EINVAL;
    struct gpu *g = &c->gpus[id];
    if (g->use != GPU_FREE)
        return -EBUSY;
    cluster_account(g, now);
    g->use = use;
    g->owner = owner;
    g->busy = 0;
    c->node_free[g->node]--;
    c->free--;
    return 0;
}

int cluster_free(struct cluster *c, uint32_t id, sim_time now)
{
    if (id >= c->ngpus)
        return -EINVAL;
    struct gpu *g = &c->gpus[id];
    if (g->use == GPU_FREE)
        return -EINVAL;
    cluster_account(g, now);
    g->use = GPU_FREE;
    g->owner = -1;
    g->busy = 0;
    c->node_free[g->node]++;
    c->free++;
    return 0;
}

int cluster_find_gang(const struct cluster *c, uint32_t count, uint32_t *out)
{
    if (count == 0 || count > c->free)
        return -ENOSPC;
    if (count <= c->per_node) {
        uint32_t best = UINT32_MAX, best_free = UINT32_MAX;
        for (uint32_t n = 0; n < c->nodes; n++) {
            uint32_t f = c->node_free[n];
            if (f >= count && f < best_free) {
                best = n;
                best_free = f;
            }
        }
        if (best == UINT32_MAX)
            return -ENOSPC;
        uint32_t k = 0;
        for (uint32_t i = best * c->per_node; k < count; i++)
            if (c->gpus[i].use == GPU_FREE)
                out[k++] = i;
        return 0;
    }
    uint32_t need = (count + c->per_node - 1) / c->per_node, have = 0;
    for (uint32_t n = 0; n < c->nodes && have < need; n++)
        if (c->node_free[n] == c->per_node)
            have++;
    if (have < need)
        return -ENOSPC;
    uint32_t k = 0;
    for (uint32_t n = 0; n < c->nodes && k < count; n++) {
        if (c->node_free[n] != c->per_node)
            continue;
        for (uint32_t i = n * c->per_node; i < (n + 1) * c->per_node && k < count; i++)
            out[k++] = i;
    }
    return 0;
}

void cluster_account_all(struct cluster *c, sim_time now)
{
    for (uint32_t i = 0; i < c->ngpus; i++)
        cluster_account(&c->gpus[i], now);
}

void cluster_reset_interval(struct cluster *c)
{
    for (uint32_t i = 0; i < c->ngpus; i++) {
        c->gpus[i].int_alloc_us = 0;
        c->gpus[i].int_busy_us = 0;
    }
}
