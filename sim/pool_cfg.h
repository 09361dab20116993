/*
 * pool_cfg.h — node pools of a mixed fleet (cluster.pools) and the placement
 * constraints services and jobs put on them (require / prefer), as read from a
 * scenario (docs/scenario.md "cluster.pools", "Placement constraints").
 *
 * A pool is a run of whole nodes of one board: nodes × gpus_per_node cards
 * (pools may differ in node size), its labels (Kubernetes node labels,
 * string → string), its speed for training and inference relative to the
 * reference board (A100 = 1; defaults from models/gpu.c, overridable per
 * pool), and its own sharing: the cluster's mode (cluster.sharing) or its own
 * (mig, timeslice, mps, or whole cards), with its MIG layout or its replicas
 * (resolved by the scenario). Pools are numbered
 * in file order and their nodes follow each other: pool 0 holds nodes
 * [0, n0), pool 1 [n0, n0 + n1), ... The single-pool form (cluster.gpu,
 * cluster.nodes, ...) is one pool named "default" with no labels.
 *
 * A constraint names a board and/or labels; a pool matches when its board is
 * that board and it carries every label with that value. `require` keeps a
 * replica or job to matching pools (node selector); `prefer` tries matching
 * pools first and falls back to the others it may use (preferred node
 * affinity). The sets are pool masks (bit i = pool i), so at most
 * POOL_MAX pools.
 *
 * Every string points into the scenario's parsed document (valid until
 * scenario_release); the arrays are owned by the scenario and freed by
 * pool_cfg_release.
 */
#ifndef TIDESIM_POOL_CFG_H
#define TIDESIM_POOL_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/mig.h"
#include "models/share.h"
#include "sim/conf.h"

struct gpu_spec;

#define POOL_MAX 64u
#define POOL_ALL UINT64_MAX

struct pool_label {
    const char *key, *value;
};

struct pool_cfg {
    const char *name;
    const struct gpu_spec *spec; /* its board (the single-pool form: the scenario's spec_own) */
    uint32_t nodes, gpus_per_node;
    double train_speed, infer_speed; /* relative to the reference board (A100 = 1) */
    struct pool_label *labels;       /* owned */
    uint32_t nlabels;
    double gpu_hour; /* price per GPU-hour of its board under the scenario's pricing */
    /* Its own sharing settings as read (pools[].sharing / mig / timeSlicing / mps; NULL =
     * absent), resolved against the cluster's mode by the scenario (scenario.c) into: */
    const struct conf_node *node; /* its mapping in the file (NULL: the single-pool form) */
    const struct conf_node *sharing_at, *mig_at, *ts_at, *mps_at, *from_at;
    bool whole; /* sharing: none — whole cards, one tenant each (MIG off) */
    /* A mode of its own other than the cluster's (mig, timeslice or mps: a mixed fleet);
     * own_mode false: the cluster's mode (or whole cards). */
    bool own_mode;
    enum share_mode mode;
    uint32_t slots;         /* tenants per card under timeslice / mps; 0 = the cluster's */
    const char *mig_layout; /* its cards' MIG layout; NULL = the cluster's (cluster.mig.layout) */
    char *layout_own;       /* owned: the layout read from a mig-parted file (mig_layout points
                               here) */
    struct mig_knobs mig;   /* MIG speeds of its board; mig.gpu NULL = the cluster's knobs */
};

/* A node selector: a board (NULL = any) and labels that must all match. */
struct pool_match {
    const char *gpu;
    struct pool_label *labels; /* owned */
    uint32_t nlabels;
    bool given;
};

/* What a service or a job asks of the pools it runs on. */
struct placement_cfg {
    struct pool_match require, prefer;
};

/*
 * A trace's GPU-type names mapped onto boards (training.jobs.trace.gpu_types,
 * else the built-in table of docs/scenario.md). `to` NULL: the type maps to
 * "any board" (no constraint).
 */
struct gpu_type_map {
    const char **from, **to; /* owned arrays */
    uint32_t n;
};

/* The node label the NVIDIA mig-manager reads to pick a node's nvidia-mig-parted configuration. */
#define POOL_MIG_CONFIG_LABEL "nvidia.com/mig.config"

/* Value of pool p's label `key`, or NULL when it does not carry it. */
const char *pool_label(const struct pool_cfg *p, const char *key);

/* The pools whose board and labels satisfy m (every pool when m is not given). */
uint64_t pool_match_mask(const struct pool_cfg *pools, uint32_t npools, const struct pool_match *m);

/*
 * Read a `require:` / `prefer:` mapping {gpu: BOARD, labels: {k: v, ...}} at
 * key `key` of map `at` into m (m->given false when absent). Returns 0 or
 * -EINVAL (err names file:line:col and the key), -ENOMEM.
 */
int pool_match_load(const struct conf_doc *d, const struct conf_node *at, const char *key,
                    struct pool_match *m, struct conf_err *err);

/* Read both constraints of a service or job block. Same returns as pool_match_load. */
int placement_load(const struct conf_doc *d, const struct conf_node *at, struct placement_cfg *p,
                   struct conf_err *err);

/*
 * Read cluster.pools (a sequence of pool mappings) into *out (*n entries).
 * Returns 0 or -EINVAL with err filled (file:line:col, key), or -ENOMEM.
 */
int pool_cfg_load(const struct conf_doc *d, const struct conf_node *seq, struct pool_cfg **out,
                  uint32_t *n, struct conf_err *err);

/*
 * The board a trace GPU-type name stands for: the user's map first, then the
 * built-in table (docs/scenario.md). Returns 0 and *board (NULL = no
 * constraint: the type is generic or empty); -ENOENT when the name is unknown.
 */
int gpu_type_lookup(const struct gpu_type_map *m, const char *type, const char **board);

/* Read training.jobs.trace.gpu_types {NAME: BOARD|any}. Same returns as pool_match_load. */
int gpu_type_map_load(const struct conf_doc *d, const struct conf_node *map, struct gpu_type_map *m,
                      struct conf_err *err);

void pool_match_release(struct pool_match *m);
void placement_release(struct placement_cfg *p);
void pool_cfg_release(struct pool_cfg *pools, uint32_t n);
void gpu_type_map_release(struct gpu_type_map *m);

#endif
