/*
 * kai_manifest.h — KAI Scheduler `Queue` objects read from the team's own
 * YAML (`policy: {name: kai, manifests: [path, ...]}`) into the kai policy's
 * queue tree (struct kai_qdef, sim/policy/kai_sched.h).
 *
 * Reads multi-document Kubernetes YAML, kind Queue, apiVersion
 * scheduling.run.ai/v2 (or v2alpha2): metadata.name, spec.parentQueue (the
 * hierarchy), spec.priority (KAI's default 100), spec.resources.gpu.quota /
 * overQuotaWeight / limit (KAI's values: quota −1 unlimited, limit −1 none and
 * 0 = the quota; fields left out are 0, as the CRD's zero values), and
 * spec.reclaimMinRuntime. Queues are ordered parents first. cpu and memory
 * quotas and other fields tidesim does not model are collected into one
 * warning; malformed objects (wrong types, another kind, a dangling or
 * cyclic parentQueue) are errors naming file:line:col.
 *
 * Ownership: the documents are kept in *docs (queue names point into them);
 * the caller frees them with kai_manifest_release. *q is malloc'd.
 */
#ifndef TIDESIM_POLICY_KAI_MANIFEST_H
#define TIDESIM_POLICY_KAI_MANIFEST_H

#include <stdint.h>

#include "sim/conf.h"

struct kai_qdef;

struct kai_manifest {
    struct conf_doc *docs;
    uint32_t ndocs;
    struct kai_qdef *q; /* parents first */
    uint32_t nq;
    char *warning; /* what is not modelled, one message, or NULL */
};

/* Load paths[0..n) (resolved against base's folder; unreadable files reported at `at`).
 * Returns 0 or a negative code with err filled and m released. */
int kai_manifest_load(struct kai_manifest *m, const char *const *paths, uint32_t n,
                      const struct conf_doc *base, const struct conf_node *at,
                      struct conf_err *err);

/* Same from texts (tests): texts[i] read as the file names[i]. */
int kai_manifest_load_strings(struct kai_manifest *m, const char *const *names,
                              const char *const *texts, uint32_t n, struct conf_err *err);

void kai_manifest_release(struct kai_manifest *m); /* NULL or zeroed: no-op */

#endif
