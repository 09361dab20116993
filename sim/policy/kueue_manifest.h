/*
 * kueue_manifest.h — Kueue objects read from the team's own YAML manifests
 * (`policy: {name: kueue, manifests: [path, ...]}`), as the model of
 * sim/policy/kueue_admit.h sees them.
 *
 * Reads multi-document Kubernetes YAML (kueue.x-k8s.io v1alpha1, v1beta1 and
 * v1beta2): ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
 * WorkloadPriorityClass, and Kueue's Configuration (config.kueue.x-k8s.io:
 * its fairSharing block). Any number of each. Only the `nvidia.com/gpu`
 * resource is modelled (with cluster.pools also `nvidia.com/mig-<profile>`, as
 * quota cells of their own: kueue_model.mig_profile), on the flavor(s) that map onto this cluster's
 * nodes (kueue_flavor_nodes with one node pool: one GPU flavor; kueue_flavor_pools with
 * cluster.pools: every GPU flavor whose nodeLabels some pool carries, each modelled flavor a Kueue
 * flavor of kueue_admit.h numbered in ResourceFlavor order); quotas of other resources, and fields
 * tidesim does not model, are collected into one warning naming each of them
 * ("ClusterQueue/team-a: spec.admissionChecks, ..."). Malformed objects
 * (wrong types, unknown kind, an unknown field of a modelled block, a
 * dangling reference, a cohort cycle) are errors naming file:line:col.
 *
 * Units: GPUs (whole cards; Kubernetes quantities such as "8" or 8). The
 * field-by-field mapping is docs/kubernetes.md.
 *
 * Ownership: struct kueue_model owns the parsed documents (names point into
 * them) and every array; kueue_model_release frees it all. No I/O but
 * reading the files, no globals.
 */
#ifndef TIDESIM_POLICY_KUEUE_MANIFEST_H
#define TIDESIM_POLICY_KUEUE_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/conf.h"
#include "sim/policy/kueue_admit.h"
#include "sim/pool_cfg.h"

struct kueue_flavor_def {
    const char *name;
    const struct conf_node *node_labels; /* spec.nodeLabels map, or NULL */
    bool on_cluster;                     /* kueue_flavor_nodes found nodes for it */
    int32_t gpu;                         /* its kueue_admit flavor index, or -1 (not modelled) */
    uint64_t pools;                      /* the pools it maps onto (POOL_ALL with one pool) */
    const struct conf_doc *doc;          /* where it was read (messages) */
    const struct conf_node *at;
};

/* GPU quota per modelled flavor (index: kueue_flavor_def.gpu); limits KUEUE_UNLIMITED unset. */
struct kueue_fquota {
    double nominal[KUEUE_MAX_FLAVORS], bl[KUEUE_MAX_FLAVORS], ll[KUEUE_MAX_FLAVORS];
};

struct kueue_cohort_def {
    const char *name;
    struct kueue_cohort c; /* parent: index in kueue_model.cohorts, parents first */
    struct kueue_fquota q; /* c.nominal etc. are flavor 0's */
};

struct kueue_cq_def {
    const char *name;
    struct kueue_cq cq;    /* cohort: index in kueue_model.cohorts; flavors: its GPU flavors */
    struct kueue_fquota q; /* cq.nominal etc. are flavor 0's */
};

struct kueue_lq_def {
    const char *name, *ns; /* metadata.name and .namespace ("default" when absent) */
    uint32_t cq;
};

struct kueue_wpc_def {
    const char *name;
    int32_t value;
};

struct kueue_model {
    struct conf_doc *docs; /* one per manifest file */
    uint32_t ndocs;
    struct kueue_flavor_def *flavors;
    struct kueue_cohort_def *cohorts;
    struct kueue_cq_def *cqs;
    struct kueue_lq_def *lqs;
    struct kueue_wpc_def *wpcs;
    uint32_t nflavors, ncohorts, ncqs, nlqs, nwpcs;
    const char *gpu_flavor; /* the (first) flavor whose GPU quota is modelled (NULL: none) */
    uint32_t ngpu;          /* modelled GPU flavors (1 unless cluster.pools maps several) */
    uint32_t gpu_flavors[KUEUE_MAX_FLAVORS]; /* index in flavors of GPU flavor i */
    /* With cluster.pools, a modelled "GPU flavor" i of kueue_admit is a quota cell: the
     * ResourceFlavor gpu_flavors[i] and one resource, nvidia.com/gpu (mig_profile[i] NULL) or
     * nvidia.com/mig-<profile> (the GPU operator's mixed strategy: mig_profile[i] = "<profile>",
     * pointing into the manifest). A flavor's nvidia.com/gpu cell comes first, then its MIG
     * cells in the order the resourceGroups name them. cell_name[i]: "<flavor>:mig-<profile>" for
     * a MIG cell (owned; a results group name, so no '/'), NULL for a GPU cell (the flavor's
     * name). */
    const char *mig_profile[KUEUE_MAX_FLAVORS];
    char *cell_name[KUEUE_MAX_FLAVORS];
    bool fair_sharing; /* a Configuration enables fairSharing */
    enum kueue_fs_strategy strategies[2];
    uint32_t nstrategies;
    char *warning; /* one message listing what is not modelled, or NULL; owned */
};

/*
 * The nodes flavor f stands for. Today the cluster is one pool of
 * `cluster_nodes` nodes labelled `labels` (a YAML map, may be NULL): a flavor
 * with no nodeLabels, or whose nodeLabels are all among `labels`, maps onto
 * every node (returns cluster_nodes); else onto none (0). With several pools
 * kueue_flavor_pools matches the pools' labels instead.
 */
/*
 * The resource name quota cell f is of, numbered by the first cell of that name: cells of
 * nvidia.com/gpu share one number, and so do the cells of one nvidia.com/mig-<profile> on
 * every flavor that has it (kueue_set_flavor_resource: fair sharing per resource name).
 */
uint32_t kueue_cell_resource(const struct kueue_model *m, uint32_t f);

uint32_t kueue_flavor_nodes(const struct kueue_flavor_def *f, const struct conf_node *labels,
                            uint32_t cluster_nodes);

/*
 * The pools flavor f maps onto (bit i = pools[i]): those whose labels, with the cluster-wide
 * `labels` (policy.node_labels, may be NULL), include every spec.nodeLabels entry; every pool
 * when it has no nodeLabels.
 */
uint64_t kueue_flavor_pools(const struct kueue_flavor_def *f, const struct conf_node *labels,
                            const struct pool_cfg *pools, uint32_t npools);

/*
 * With npools > 1 (cluster.pools), kueue_model_load_pools and _strings_pools map flavors onto
 * pools (kueue_flavor_pools) and model every GPU flavor that maps onto some pool; otherwise they
 * are kueue_model_load / _strings. pools must outlive m.
 */
int kueue_model_load_pools(struct kueue_model *m, const char *const *paths, uint32_t n,
                           const struct conf_doc *scn, const struct conf_node *at,
                           const struct conf_node *labels, uint32_t cluster_nodes,
                           const struct pool_cfg *pools, uint32_t npools, struct conf_err *err);
int kueue_model_load_strings_pools(struct kueue_model *m, const char *const *names,
                                   const char *const *texts, uint32_t n,
                                   const struct conf_node *labels, const struct pool_cfg *pools,
                                   uint32_t npools, struct conf_err *err);

/*
 * Load the manifest files paths[0..n) (each resolved against the folder of
 * `base`, the scenario's path, unless absolute) into m. `labels` and
 * `cluster_nodes` feed kueue_flavor_nodes. `at` (the scenario's manifests
 * node, in `scn`) is where file-level errors such as an unreadable file are
 * reported. Returns 0, or a negative code with err filled
 * ("kueue.yaml:12:7: 'nominalQuota': expected a GPU count, got 'lots'") and
 * m released.
 */
int kueue_model_load(struct kueue_model *m, const char *const *paths, uint32_t n,
                     const struct conf_doc *scn, const struct conf_node *at,
                     const struct conf_node *labels, uint32_t cluster_nodes, struct conf_err *err);

/* Same from texts (tests): texts[i] is read as the file names[i]. */
int kueue_model_load_strings(struct kueue_model *m, const char *const *names,
                             const char *const *texts, uint32_t n, const struct conf_node *labels,
                             uint32_t cluster_nodes, struct conf_err *err);

void kueue_model_release(struct kueue_model *m); /* NULL or zeroed: no-op */

/* Index of the LocalQueue named name ("ns/name" or a bare name), the CQ named name, or the
 * WorkloadPriorityClass named name; -1 when there is none. */
int32_t kueue_model_lq(const struct kueue_model *m, const char *name);
int32_t kueue_model_cq(const struct kueue_model *m, const char *name);
int32_t kueue_model_wpc(const struct kueue_model *m, const char *name);

#endif
