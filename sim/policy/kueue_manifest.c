/* kueue_manifest.c — Kueue's own YAML objects read into the model of kueue_admit.h. */
#include "sim/policy/kueue_manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_RESOURCE "nvidia.com/gpu"
#define MIG_RESOURCE "nvidia.com/mig-" /* + a profile: the GPU operator's mixed strategy */
#define MAX_QUOTA    1e9               /* GPUs: a bound for the parser, far above any cluster */

/* A reference by name, resolved once every object is read. */
struct ref {
    const char *name;
    const struct conf_doc *doc;
    const struct conf_node *at; /* where to report a dangling reference */
};

struct parser {
    struct kueue_model *m;
    const struct conf_doc *doc; /* the document being read */
    struct conf_err *err;
    const struct conf_node *labels;
    uint32_t cluster_nodes;
    const struct pool_cfg *pools; /* cluster.pools when more than one, else NULL */
    uint32_t npools;
    /* Raw objects, resolved after reading. */
    struct ref *cq_cohort;  /* per CQ: its cohort's name (name NULL: none) */
    struct ref *coh_parent; /* per cohort: its parent's name */
    struct ref *lq_cq;      /* per LQ: its ClusterQueue's name */
    const struct conf_node **cq_groups, **coh_groups; /* resourceGroups per CQ / Cohort */
    const struct conf_doc **cq_doc, **coh_doc;
    bool *coh_explicit; /* a Cohort object was given (else implicit, by reference) */
    uint32_t cap_cq, cap_coh, cap_lq, cap_fl, cap_wpc;
    /* The warning being built. */
    char *warn;
    size_t wlen, wcap;
};

/* ---- warning ---- */

/* Append "what" to the list of what is not modelled. */
static int note(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int note(struct parser *p, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return 0;
    size_t len = strlen(buf), need = p->wlen + len + 3;
    if (need > p->wcap) {
        size_t cap = p->wcap ? 2 * p->wcap : 512;
        while (cap < need)
            cap *= 2;
        char *w = realloc(p->warn, cap);
        if (!w)
            return -ENOMEM;
        p->warn = w;
        p->wcap = cap;
    }
    if (p->wlen) {
        memcpy(p->warn + p->wlen, "; ", 2);
        p->wlen += 2;
    }
    memcpy(p->warn + p->wlen, buf, len + 1);
    p->wlen += len;
    return 0;
}

static bool in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(*list, key))
            return true;
    return false;
}

/* Note every key of map (a mapping, or NULL) that is not in modelled[] as "obj path.key". */
static int note_others(struct parser *p, const char *obj, const char *path,
                       const struct conf_node *map, const char *const *modelled)
{
    if (!map || map->kind != CONF_MAP)
        return 0;
    for (size_t i = 0; i < map->n; i++)
        if (!in_list(map->keys[i], modelled)) {
            int rc = note(p, "%s %s%s%s", obj, path, *path ? "." : "", map->keys[i]);
            if (rc)
                return rc;
        }
    return 0;
}

/* ---- helpers ---- */

static int need_map(struct parser *p, const struct conf_node *n, const char *key)
{
    if (n && n->kind != CONF_MAP)
        return conf_errf(p->err, p->doc, n, key, "expected a mapping, got %s",
                         n->kind == CONF_SEQ ? "a sequence" : "a scalar");
    return 0;
}

static int need_seq(struct parser *p, const struct conf_node *n, const char *key)
{
    if (n && n->kind != CONF_SEQ)
        return conf_errf(p->err, p->doc, n, key, "expected a list, got %s",
                         n->kind == CONF_MAP ? "a mapping" : "a scalar");
    return 0;
}

static int grow(void **v, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t n = *cap ? 2 * *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*v, (size_t)n * elem);
    if (!q)
        return -ENOMEM;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *v = q;
    *cap = n;
    return 0;
}

uint32_t kueue_flavor_nodes(const struct kueue_flavor_def *f, const struct conf_node *labels,
                            uint32_t cluster_nodes)
{
    const struct conf_node *nl = f->node_labels;
    if (!nl || nl->kind != CONF_MAP || nl->n == 0)
        return cluster_nodes;
    for (size_t i = 0; i < nl->n; i++) {
        const struct conf_node *v = conf_get(labels, nl->keys[i]);
        if (!v || v->kind != CONF_SCALAR || nl->items[i]->kind != CONF_SCALAR ||
            strcmp(v->value, nl->items[i]->value) != 0)
            return 0;
    }
    return cluster_nodes;
}

uint64_t kueue_flavor_pools(const struct kueue_flavor_def *f, const struct conf_node *labels,
                            const struct pool_cfg *pools, uint32_t npools)
{
    const struct conf_node *nl = f->node_labels;
    uint64_t mask = 0;
    for (uint32_t i = 0; i < npools && i < POOL_MAX; i++) {
        bool all = true;
        for (size_t j = 0; nl && nl->kind == CONF_MAP && j < nl->n && all; j++) {
            const char *want = nl->items[j]->kind == CONF_SCALAR ? nl->items[j]->value : NULL;
            bool have = false;
            for (uint32_t l = 0; l < pools[i].nlabels && !have; l++)
                have = want && !strcmp(pools[i].labels[l].key, nl->keys[j]) &&
                       !strcmp(pools[i].labels[l].value, want);
            const struct conf_node *v = conf_get(labels, nl->keys[j]);
            have = have || (want && v && v->kind == CONF_SCALAR && !strcmp(v->value, want));
            all = have;
        }
        if (all)
            mask |= (uint64_t)1 << i;
    }
    return mask;
}

int32_t kueue_model_lq(const struct kueue_model *m, const char *name)
{
    const char *slash = strchr(name, '/');
    for (uint32_t i = 0; i < m->nlqs; i++) {
        const struct kueue_lq_def *q = &m->lqs[i];
        if (slash ? (strlen(q->ns) == (size_t)(slash - name) &&
                     !strncmp(q->ns, name, (size_t)(slash - name)) && !strcmp(q->name, slash + 1))
                  : !strcmp(q->name, name))
            return (int32_t)i;
    }
    return -1;
}

int32_t kueue_model_cq(const struct kueue_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->ncqs; i++)
        if (!strcmp(m->cqs[i].name, name))
            return (int32_t)i;
    return -1;
}

int32_t kueue_model_wpc(const struct kueue_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->nwpcs; i++)
        if (!strcmp(m->wpcs[i].name, name))
            return (int32_t)i;
    return -1;
}

static int32_t flavor_index(const struct kueue_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->nflavors; i++)
        if (!strcmp(m->flavors[i].name, name))
            return (int32_t)i;
    return -1;
}

static int32_t cohort_index(const struct kueue_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->ncohorts; i++)
        if (!strcmp(m->cohorts[i].name, name))
            return (int32_t)i;
    return -1;
}

/* A new cohort (explicit or implied by a reference). Returns its index or a negative code. */
static int add_cohort(struct parser *p, const char *name, bool explicit_obj)
{
    struct kueue_model *m = p->m;
    if (grow((void **)&m->cohorts, &p->cap_coh, m->ncohorts + 1, sizeof *m->cohorts))
        return -ENOMEM;
    /* The side arrays follow cap_coh. */
    struct ref *r = realloc(p->coh_parent, p->cap_coh * sizeof *r);
    if (!r)
        return -ENOMEM;
    p->coh_parent = r;
    const struct conf_node **g = realloc(p->coh_groups, p->cap_coh * sizeof *g);
    if (!g)
        return -ENOMEM;
    p->coh_groups = g;
    const struct conf_doc **d = realloc(p->coh_doc, p->cap_coh * sizeof *d);
    if (!d)
        return -ENOMEM;
    p->coh_doc = d;
    bool *e = realloc(p->coh_explicit, p->cap_coh * sizeof *e);
    if (!e)
        return -ENOMEM;
    p->coh_explicit = e;
    uint32_t i = m->ncohorts++;
    m->cohorts[i].name = name;
    kueue_cohort_default(&m->cohorts[i].c);
    p->coh_parent[i] = (struct ref){0};
    p->coh_groups[i] = NULL;
    p->coh_doc[i] = p->doc;
    p->coh_explicit[i] = explicit_obj;
    return (int)i;
}

/* ---- quotas ---- */

static bool is_mig(const char *name);
static int32_t mig_cell(const struct kueue_model *m, uint32_t fi, const char *prof);

/*
 * resourceGroups of a ClusterQueue or Cohort (obj names it in messages):
 * the nvidia.com/gpu quota of each modelled GPU flavor into q (and flavor 0's into
 * *nominal, *bl, *ll; a CQ's flavors appended to cq->flavors in the listed order) (limits
 * KUEUE_UNLIMITED when absent); every other resource or flavor is noted.
 * Flavors must exist. Called after every object is read.
 */
static int read_groups(struct parser *p, const char *obj, const struct conf_node *groups,
                       struct kueue_cq *cq, struct kueue_fquota *q, double *nominal, double *bl,
                       double *ll)
{
    bool is_cq = cq != NULL;
    for (uint32_t f = 0; f < KUEUE_MAX_FLAVORS; f++) {
        q->nominal[f] = 0;
        q->bl[f] = q->ll[f] = KUEUE_UNLIMITED;
    }
    static const char *const gkeys[] = {"coveredResources", "flavors", NULL};
    static const char *const fkeys[] = {"name", "resources", NULL};
    static const char *const rkeys[] = {"name", "nominalQuota", "borrowingLimit", "lendingLimit",
                                        NULL};
    int rc;
    if (!groups)
        return 0;
    if ((rc = need_seq(p, groups, "resourceGroups")))
        return rc;
    for (size_t g = 0; g < groups->n; g++) {
        const struct conf_node *grp = groups->items[g];
        if ((rc = need_map(p, grp, "resourceGroups[]")) ||
            (rc = note_others(p, obj, "spec.resourceGroups[]", grp, gkeys)))
            return rc;
        const struct conf_node *cov = conf_get(grp, "coveredResources");
        const struct conf_node *fls = conf_get(grp, "flavors");
        if (!fls)
            return conf_errf(p->err, p->doc, grp, "flavors",
                             "missing (expected a list of flavors)");
        if ((rc = need_seq(p, cov, "coveredResources")) || (rc = need_seq(p, fls, "flavors")))
            return rc;
        for (size_t c = 0; cov && c < cov->n; c++)
            if (cov->items[c]->kind != CONF_SCALAR)
                return conf_errf(p->err, p->doc, cov->items[c], "coveredResources",
                                 "expected a resource name");
        for (size_t f = 0; f < fls->n; f++) {
            const struct conf_node *fl = fls->items[f];
            const char *fname = NULL;
            if ((rc = need_map(p, fl, "flavors[]")) ||
                (rc = conf_string(p->doc, fl, "name", true, &fname, p->err)) ||
                (rc = note_others(p, obj, "spec.resourceGroups[].flavors[]", fl, fkeys)))
                return rc;
            int32_t fi = flavor_index(p->m, fname);
            if (fi < 0)
                return conf_errf(p->err, p->doc, conf_get(fl, "name"), "name",
                                 "no ResourceFlavor named '%.60s' in the manifests", fname);
            const struct conf_node *rs = conf_get(fl, "resources");
            if (!rs)
                return conf_errf(p->err, p->doc, fl, "resources",
                                 "missing (expected a list of resources)");
            if ((rc = need_seq(p, rs, "resources")))
                return rc;
            for (size_t r = 0; r < rs->n; r++) {
                const struct conf_node *res = rs->items[r];
                const char *rname = NULL;
                double nom = 0, b = KUEUE_UNLIMITED, l = KUEUE_UNLIMITED;
                if ((rc = need_map(p, res, "resources[]")) ||
                    (rc = conf_string(p->doc, res, "name", true, &rname, p->err)) ||
                    (rc = conf_double(p->doc, res, "nominalQuota", true, 0, MAX_QUOTA, &nom,
                                      p->err)) ||
                    (rc = conf_double(p->doc, res, "borrowingLimit", false, 0, MAX_QUOTA, &b,
                                      p->err)) ||
                    (rc = conf_double(p->doc, res, "lendingLimit", false, 0, MAX_QUOTA, &l,
                                      p->err)) ||
                    (rc = note_others(p, obj, "spec.resourceGroups[].flavors[].resources[]", res,
                                      rkeys)))
                    return rc;
                bool mig = p->npools && is_mig(rname);
                if (strcmp(rname, GPU_RESOURCE) != 0 && !mig) {
                    if ((rc = note(p, "%s quota of %s (flavor %s)", obj, rname, fname)))
                        return rc;
                    continue;
                }
                int32_t gi = mig ? mig_cell(p->m, (uint32_t)fi, rname + strlen(MIG_RESOURCE))
                                 : p->m->flavors[fi].gpu;
                if (gi < 0 && mig) {
                    if ((rc = note(p, "%s %s quota of flavor %s (no node of this cluster)", obj,
                                   rname, fname)))
                        return rc;
                    continue;
                }
                if (gi < 0) {
                    if ((rc = note(p, "%s GPU quota of flavor %s (no node of this cluster)", obj,
                                   fname)))
                        return rc;
                    continue;
                }
                if (is_cq && l >= 0 && l > nom)
                    return conf_errf(p->err, p->doc, conf_get(res, "lendingLimit"), "lendingLimit",
                                     "expected at most nominalQuota (%g)", nom);
                q->nominal[gi] = nom;
                q->bl[gi] = b;
                q->ll[gi] = l;
                if (gi == 0) {
                    *nominal = nom;
                    *bl = b;
                    *ll = l;
                }
                if (cq && cq->nflavors < KUEUE_MAX_FLAVORS)
                    cq->flavors[cq->nflavors++] = (uint8_t)gi;
            }
        }
    }
    return 0;
}

/* Whether resource name is a MIG profile's, nvidia.com/mig-<profile>. */
static bool is_mig(const char *name)
{
    return !strncmp(name, MIG_RESOURCE, strlen(MIG_RESOURCE)) && name[strlen(MIG_RESOURCE)];
}

/* The cell of flavor fi and MIG profile prof, or -1 (not modelled). */
static int32_t mig_cell(const struct kueue_model *m, uint32_t fi, const char *prof)
{
    for (uint32_t c = 0; c < m->ngpu; c++)
        if (m->gpu_flavors[c] == fi && m->mig_profile[c] && !strcmp(m->mig_profile[c], prof))
            return (int32_t)c;
    return -1;
}

/*
 * Call fn(p, i, name) for each resource name flavor i carries quota of in some ClusterQueue
 * or Cohort, in the order they are named (repeats included). Stops at the first non-zero
 * return and returns it.
 */
static int each_resource(const struct parser *p, uint32_t i,
                         int (*fn)(const struct parser *, uint32_t, const char *))
{
    const struct kueue_model *m = p->m;
    for (uint32_t k = 0; k < m->ncqs + m->ncohorts; k++) {
        const struct conf_node *groups = k < m->ncqs ? p->cq_groups[k] : p->coh_groups[k - m->ncqs];
        for (size_t g = 0; groups && groups->kind == CONF_SEQ && g < groups->n; g++) {
            const struct conf_node *fls = conf_get(groups->items[g], "flavors");
            for (size_t f = 0; fls && fls->kind == CONF_SEQ && f < fls->n; f++) {
                const struct conf_node *nm = conf_get(fls->items[f], "name");
                const struct conf_node *rs = conf_get(fls->items[f], "resources");
                if (!nm || nm->kind != CONF_SCALAR || strcmp(nm->value, m->flavors[i].name))
                    continue;
                for (size_t r = 0; rs && rs->kind == CONF_SEQ && r < rs->n; r++) {
                    const struct conf_node *rn = conf_get(rs->items[r], "name");
                    int rc;
                    if (rn && rn->kind == CONF_SCALAR && (rc = fn(p, i, rn->value)))
                        return rc;
                }
            }
        }
    }
    return 0;
}

/* each_resource's fn: a cell for flavor i's nvidia.com/mig-<profile>, unless it has one. */
static int add_mig_cell(const struct parser *p, uint32_t i, const char *res)
{
    if (!is_mig(res))
        return 0;
    const char *prof = res + strlen(MIG_RESOURCE);
    struct kueue_model *m = p->m;
    struct kueue_flavor_def *f = &m->flavors[i];
    if (mig_cell(m, i, prof) >= 0)
        return 0;
    if (m->ngpu == KUEUE_MAX_FLAVORS)
        return conf_errf(p->err, f->doc, f->at, "name",
                         "more than %u quota cells (a ResourceFlavor and nvidia.com/gpu or one "
                         "nvidia.com/mig-<profile>) on this cluster (tidesim models at most %u)",
                         KUEUE_MAX_FLAVORS, KUEUE_MAX_FLAVORS);
    size_t len = strlen(f->name) + strlen(prof) + sizeof ":mig-";
    char *name = malloc(len);
    if (!name)
        return -ENOMEM;
    snprintf(name, len, "%s:mig-%s", f->name, prof); /* no '/': an HDF5 group name */
    m->cell_name[m->ngpu] = name;
    m->mig_profile[m->ngpu] = prof;
    m->gpu_flavors[m->ngpu++] = i;
    return 0;
}

/* each_resource's fn: 1 at an nvidia.com/mig-<profile> resource. */
static int found_mig(const struct parser *p, uint32_t i, const char *res)
{
    (void)p;
    (void)i;
    return is_mig(res);
}

/* each_resource's fn: 1 at nvidia.com/gpu. */
static int found_gpu(const struct parser *p, uint32_t i, const char *res)
{
    (void)p;
    (void)i;
    return strcmp(res, GPU_RESOURCE) == 0;
}

/* Whether flavor i carries nvidia.com/gpu quota in some ClusterQueue or Cohort. */
static bool carries_gpu(const struct parser *p, uint32_t i)
{
    return each_resource(p, i, found_gpu) != 0;
}

/* The flavor whose GPU quota is modelled: the one mapping onto the cluster that carries
 * nvidia.com/gpu quota; with one pool, a lone GPU flavor maps onto it whatever its labels. */
static int pick_gpu_flavor(struct parser *p)
{
    struct kueue_model *m = p->m;
    int32_t found = -1, lone = -1, ngpu = 0;
    for (uint32_t i = 0; i < m->nflavors; i++) {
        if (!carries_gpu(p, i))
            continue;
        ngpu++;
        lone = (int32_t)i;
        m->flavors[i].on_cluster =
            kueue_flavor_nodes(&m->flavors[i], p->labels, p->cluster_nodes) > 0;
        if (!m->flavors[i].on_cluster)
            continue;
        if (found >= 0)
            return conf_errf(p->err, m->flavors[i].doc, m->flavors[i].at, "name",
                             "ResourceFlavors '%s' and '%s' both carry nvidia.com/gpu quota and "
                             "both map onto this cluster's nodes; tidesim models one GPU flavor "
                             "per cluster (give them nodeLabels and the cluster's labels in "
                             "policy.node_labels, to keep one)",
                             m->flavors[found].name, m->flavors[i].name);
        found = (int32_t)i;
    }
    if (found < 0 && ngpu == 1) {
        found = lone;
        m->flavors[lone].on_cluster = true;
        int rc =
            note(p, "ResourceFlavor/%s spec.nodeLabels (one node pool: mapped onto every node)",
                 m->flavors[lone].name);
        if (rc)
            return rc;
    }
    m->gpu_flavor = found >= 0 ? m->flavors[found].name : NULL;
    if (found >= 0) {
        m->flavors[found].gpu = 0;
        m->flavors[found].pools = POOL_ALL;
        m->gpu_flavors[0] = (uint32_t)found;
        m->ngpu = 1;
    }
    return 0;
}

/* With cluster.pools: every GPU flavor mapping onto some pool is modelled, in ResourceFlavor
 * order; one mapping onto none is noted (its quota then too, by read_groups). */
static int pick_gpu_flavors(struct parser *p)
{
    struct kueue_model *m = p->m;
    int rc;
    for (uint32_t i = 0; i < m->nflavors; i++) {
        struct kueue_flavor_def *f = &m->flavors[i];
        bool gpu = carries_gpu(p, i);
        if (!gpu && each_resource(p, i, found_mig) == 0)
            continue;
        f->pools = kueue_flavor_pools(f, p->labels, p->pools, p->npools);
        f->on_cluster = f->pools != 0;
        if (!f->on_cluster)
            continue;
        if (gpu && m->ngpu == KUEUE_MAX_FLAVORS)
            return conf_errf(p->err, f->doc, f->at, "name",
                             "more than %u ResourceFlavors carry nvidia.com/gpu quota on this "
                             "cluster (tidesim models at most %u)",
                             KUEUE_MAX_FLAVORS, KUEUE_MAX_FLAVORS);
        if (gpu) {
            f->gpu = (int32_t)m->ngpu;
            m->gpu_flavors[m->ngpu++] = i;
        }
        if ((rc = each_resource(p, i, add_mig_cell)))
            return rc;
    }
    m->gpu_flavor = m->ngpu ? m->flavors[m->gpu_flavors[0]].name : NULL;
    return 0;
}

/* ---- objects ---- */

static int read_weight(struct parser *p, const char *obj, const struct conf_node *spec,
                       double *weight)
{
    static const char *const keys[] = {"weight", NULL};
    const struct conf_node *fs = conf_get(spec, "fairSharing");
    int rc;
    if (!fs)
        return 0;
    if ((rc = need_map(p, fs, "fairSharing")) ||
        (rc = conf_double(p->doc, fs, "weight", false, 0, 1e6, weight, p->err)) ||
        (rc = note_others(p, obj, "spec.fairSharing", fs, keys)))
        return rc;
    return 0;
}

static int read_flavor(struct parser *p, const char *name, const struct conf_node *spec,
                       const struct conf_node *at)
{
    static const char *const keys[] = {"nodeLabels", NULL};
    struct kueue_model *m = p->m;
    char obj[160];
    int rc;
    snprintf(obj, sizeof obj, "ResourceFlavor/%s", name);
    if (flavor_index(m, name) >= 0)
        return conf_errf(p->err, p->doc, at, "name", "duplicate ResourceFlavor '%.60s'", name);
    if ((rc = need_map(p, spec, "spec")) ||
        (rc = need_map(p, conf_get(spec, "nodeLabels"), "nodeLabels")) ||
        (rc = note_others(p, obj, "spec", spec, keys)))
        return rc;
    if (grow((void **)&m->flavors, &p->cap_fl, m->nflavors + 1, sizeof *m->flavors))
        return -ENOMEM;
    m->flavors[m->nflavors++] =
        (struct kueue_flavor_def){.name = name,
                                  .node_labels = conf_get(spec, "nodeLabels"),
                                  .gpu = -1,
                                  .doc = p->doc,
                                  .at = at};
    return 0;
}

static int read_cq(struct parser *p, const char *name, const struct conf_node *spec,
                   const struct conf_node *at)
{
    static const char *const keys[] = {"resourceGroups",    "cohort",     "cohortName",
                                       "queueingStrategy",  "preemption", "fairSharing",
                                       "flavorFungibility", NULL};
    static const char *const ffkeys[] = {"whenCanBorrow", "whenCanPreempt", "preference", NULL};
    /* Kueue apis/kueue/v1beta1 FlavorFungibility (ff69552e): Borrow and Preempt are the old
     * names of MayStopSearch. */
    static const char *const when_borrow[] = {"MayStopSearch", "TryNextFlavor", "Borrow", NULL};
    static const char *const when_preempt[] = {"MayStopSearch", "TryNextFlavor", "Preempt", NULL};
    /* FlavorFungibilityPreference (apis/kueue/v1beta1 and v1beta2, ff69552e). */
    static const char *const preferences[] = {"BorrowingOverPreemption", "PreemptionOverBorrowing",
                                              NULL};
    static const char *const pkeys[] = {"withinClusterQueue", "reclaimWithinCohort",
                                        "borrowWithinCohort", NULL};
    static const char *const bkeys[] = {"policy", "maxPriorityThreshold", NULL};
    static const char *const strategies[] = {"BestEffortFIFO", "StrictFIFO", NULL};
    static const char *const withins[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority",
                                          NULL};
    static const char *const reclaims[] = {"Never", "LowerPriority", "Any", NULL};
    static const char *const borrows[] = {"Never", "LowerPriority", NULL};
    struct kueue_model *m = p->m;
    char obj[160];
    int rc;
    snprintf(obj, sizeof obj, "ClusterQueue/%s", name);
    if (kueue_model_cq(m, name) >= 0)
        return conf_errf(p->err, p->doc, at, "name", "duplicate ClusterQueue '%.60s'", name);
    if (grow((void **)&m->cqs, &p->cap_cq, m->ncqs + 1, sizeof *m->cqs))
        return -ENOMEM;
    uint32_t cap = p->cap_cq;
    struct ref *r = realloc(p->cq_cohort, cap * sizeof *r);
    if (!r)
        return -ENOMEM;
    p->cq_cohort = r;
    const struct conf_node **g = realloc(p->cq_groups, cap * sizeof *g);
    if (!g)
        return -ENOMEM;
    p->cq_groups = g;
    const struct conf_doc **d = realloc(p->cq_doc, cap * sizeof *d);
    if (!d)
        return -ENOMEM;
    p->cq_doc = d;
    struct kueue_cq_def *c = &m->cqs[m->ncqs];
    c->name = name;
    kueue_cq_default(&c->cq);
    const struct conf_node *pre = conf_get(spec, "preemption");
    const struct conf_node *bw = conf_get(pre, "borrowWithinCohort");
    const char *cohort = NULL, *cohort_name = NULL;
    const struct conf_node *ff = conf_get(spec, "flavorFungibility");
    int strategy = 0, within = 0, reclaim = 0, borrow = 0, wcb = 0, wcp = 1, pref = -1;
    int64_t thr = INT64_MIN;
    if ((rc = need_map(p, spec, "spec")) || (rc = note_others(p, obj, "spec", spec, keys)) ||
        (rc = conf_string(p->doc, spec, "cohort", false, &cohort, p->err)) ||
        (rc = conf_string(p->doc, spec, "cohortName", false, &cohort_name, p->err)) ||
        (rc = conf_enum(p->doc, spec, "queueingStrategy", false, strategies, &strategy, p->err)) ||
        (rc = need_map(p, pre, "preemption")) ||
        (rc = note_others(p, obj, "spec.preemption", pre, pkeys)) ||
        (rc = conf_enum(p->doc, pre, "withinClusterQueue", false, withins, &within, p->err)) ||
        (rc = conf_enum(p->doc, pre, "reclaimWithinCohort", false, reclaims, &reclaim, p->err)) ||
        (rc = need_map(p, bw, "borrowWithinCohort")) ||
        (rc = note_others(p, obj, "spec.preemption.borrowWithinCohort", bw, bkeys)) ||
        (rc = conf_enum(p->doc, bw, "policy", false, borrows, &borrow, p->err)) ||
        (rc = conf_int(p->doc, bw, "maxPriorityThreshold", false, INT32_MIN, INT32_MAX, &thr,
                       p->err)) ||
        (rc = read_weight(p, obj, spec, &c->cq.weight)) ||
        (rc = need_map(p, ff, "flavorFungibility")) ||
        (rc = note_others(p, obj, "spec.flavorFungibility", ff, ffkeys)) ||
        (rc = conf_enum(p->doc, ff, "whenCanBorrow", false, when_borrow, &wcb, p->err)) ||
        (rc = conf_enum(p->doc, ff, "whenCanPreempt", false, when_preempt, &wcp, p->err)) ||
        (rc = conf_enum(p->doc, ff, "preference", false, preferences, &pref, p->err)))
        return rc;
    c->cq.borrow_try_next = wcb == 1;
    c->cq.preempt_may_stop = wcp != 1;
    c->cq.prefer_preemption = pref == 1;
    /* Kueue's CRD validation (FlavorFungibility's XValidation rule), after defaulting. */
    if (pref >= 0 && (wcb != 1 || wcp != 1))
        return conf_errf(p->err, p->doc, conf_get(ff, "preference"), "preference",
                         "preference can only be set when whenCanBorrow and whenCanPreempt are "
                         "both TryNextFlavor (whenCanBorrow defaults to MayStopSearch; Kueue "
                         "refuses this ClusterQueue)");
    if (cohort && cohort_name)
        return conf_errf(p->err, p->doc, conf_get(spec, "cohortName"), "cohortName",
                         "give cohort (v1beta1) or cohortName (v1beta2), not both");
    if (borrow && !reclaim)
        return conf_errf(p->err, p->doc, conf_get(bw, "policy"), "policy",
                         "borrowWithinCohort needs reclaimWithinCohort other than Never (Kueue "
                         "refuses this ClusterQueue)");
    c->cq.strategy = (enum kueue_strategy)strategy;
    c->cq.within = (enum kueue_within)within;
    c->cq.reclaim = (enum kueue_reclaim)reclaim;
    c->cq.borrow = (enum kueue_borrow)borrow;
    c->cq.borrow_threshold = thr != INT64_MIN;
    c->cq.borrow_max_priority = c->cq.borrow_threshold ? (int32_t)thr : 0;
    const char *cn = cohort ? cohort : cohort_name;
    p->cq_cohort[m->ncqs] = (struct ref){.name = cn && cn[0] ? cn : NULL,
                                         .doc = p->doc,
                                         .at = conf_get(spec, cohort ? "cohort" : "cohortName")};
    p->cq_groups[m->ncqs] = conf_get(spec, "resourceGroups");
    p->cq_doc[m->ncqs] = p->doc;
    m->ncqs++;
    return 0;
}

static int read_cohort(struct parser *p, const char *name, const struct conf_node *spec,
                       const struct conf_node *at)
{
    static const char *const keys[] = {"parent", "parentName", "resourceGroups", "fairSharing",
                                       NULL};
    char obj[160];
    int rc;
    snprintf(obj, sizeof obj, "Cohort/%s", name);
    int32_t i = cohort_index(p->m, name);
    if (i >= 0 && p->coh_explicit[i])
        return conf_errf(p->err, p->doc, at, "name", "duplicate Cohort '%.60s'", name);
    if (i < 0 && (i = add_cohort(p, name, true)) < 0)
        return i;
    p->coh_explicit[i] = true;
    p->coh_doc[i] = p->doc;
    const char *parent = NULL, *parent_name = NULL;
    if ((rc = need_map(p, spec, "spec")) || (rc = note_others(p, obj, "spec", spec, keys)) ||
        (rc = conf_string(p->doc, spec, "parent", false, &parent, p->err)) ||
        (rc = conf_string(p->doc, spec, "parentName", false, &parent_name, p->err)) ||
        (rc = read_weight(p, obj, spec, &p->m->cohorts[i].c.weight)))
        return rc;
    if (parent && parent_name)
        return conf_errf(p->err, p->doc, conf_get(spec, "parentName"), "parentName",
                         "give parent (v1alpha1) or parentName (v1beta1), not both");
    const char *pn = parent ? parent : parent_name;
    p->coh_parent[i] = (struct ref){.name = pn && pn[0] ? pn : NULL,
                                    .doc = p->doc,
                                    .at = conf_get(spec, parent ? "parent" : "parentName")};
    p->coh_groups[i] = conf_get(spec, "resourceGroups");
    return 0;
}

static int read_lq(struct parser *p, const char *name, const char *ns, const struct conf_node *spec,
                   const struct conf_node *at)
{
    static const char *const keys[] = {"clusterQueue", NULL};
    struct kueue_model *m = p->m;
    char obj[200];
    const char *cq = NULL;
    int rc;
    snprintf(obj, sizeof obj, "LocalQueue/%s/%s", ns, name);
    for (uint32_t i = 0; i < m->nlqs; i++)
        if (!strcmp(m->lqs[i].name, name) && !strcmp(m->lqs[i].ns, ns))
            return conf_errf(p->err, p->doc, at, "name", "duplicate LocalQueue '%.60s/%.60s'", ns,
                             name);
    if ((rc = need_map(p, spec, "spec")) || (rc = note_others(p, obj, "spec", spec, keys)) ||
        (rc = conf_string(p->doc, spec, "clusterQueue", true, &cq, p->err)))
        return rc;
    if (grow((void **)&m->lqs, &p->cap_lq, m->nlqs + 1, sizeof *m->lqs))
        return -ENOMEM;
    struct ref *r = realloc(p->lq_cq, p->cap_lq * sizeof *r);
    if (!r)
        return -ENOMEM;
    p->lq_cq = r;
    p->lq_cq[m->nlqs] =
        (struct ref){.name = cq, .doc = p->doc, .at = conf_get(spec, "clusterQueue")};
    m->lqs[m->nlqs++] = (struct kueue_lq_def){.name = name, .ns = ns};
    return 0;
}

static int read_wpc(struct parser *p, const char *name, const struct conf_node *obj_node)
{
    struct kueue_model *m = p->m;
    int64_t v = 0;
    int rc;
    if (kueue_model_wpc(m, name) >= 0)
        return conf_errf(p->err, p->doc, obj_node, "name",
                         "duplicate WorkloadPriorityClass '%.60s'", name);
    if ((rc = conf_int(p->doc, obj_node, "value", true, -1000000000, 1000000000, &v, p->err)))
        return rc;
    if (grow((void **)&m->wpcs, &p->cap_wpc, m->nwpcs + 1, sizeof *m->wpcs))
        return -ENOMEM;
    m->wpcs[m->nwpcs++] = (struct kueue_wpc_def){.name = name, .value = (int32_t)v};
    return 0;
}

/* Kueue's Configuration: its fairSharing block (enable: v1beta1; presence: v1beta2). */
static int read_config(struct parser *p, const struct conf_node *obj)
{
    static const char *const keys[] = {"apiVersion", "kind", "metadata", "fairSharing", NULL};
    static const char *const fkeys[] = {"enable", "preemptionStrategies", NULL};
    static const char *const names[] = {"LessThanOrEqualToFinalShare", "LessThanInitialShare",
                                        NULL};
    const struct conf_node *fs = conf_get(obj, "fairSharing");
    bool enable = true;
    int rc;
    if ((rc = note_others(p, "Configuration", "", obj, keys)))
        return rc;
    if (!fs)
        return 0;
    if ((rc = need_map(p, fs, "fairSharing")) ||
        (rc = conf_bool(p->doc, fs, "enable", false, &enable, p->err)) ||
        (rc = note_others(p, "Configuration", "fairSharing", fs, fkeys)))
        return rc;
    const struct conf_node *st = conf_get(fs, "preemptionStrategies");
    struct kueue_model *m = p->m;
    m->fair_sharing = enable;
    /* Kueue's default: [LessThanOrEqualToFinalShare, LessThanInitialShare]. */
    m->strategies[0] = KUEUE_FS_LESS_OR_EQUAL_FINAL;
    m->strategies[1] = KUEUE_FS_LESS_THAN_INITIAL;
    m->nstrategies = 2;
    if (!st)
        return 0;
    if ((rc = need_seq(p, st, "preemptionStrategies")))
        return rc;
    if (st->n == 0 || st->n > 2)
        return conf_errf(p->err, p->doc, st, "preemptionStrategies",
                         "expected one or two strategies");
    for (size_t i = 0; i < st->n; i++) {
        const struct conf_node *s = st->items[i];
        int k = -1;
        for (int j = 0; names[j] && s->kind == CONF_SCALAR; j++)
            if (!strcmp(s->value, names[j]))
                k = j;
        if (k < 0 || (i == 1 && k != 1))
            return conf_errf(p->err, p->doc, s, "preemptionStrategies",
                             i == 1 ? "expected LessThanInitialShare as the second strategy "
                                      "(Kueue's validation)"
                                    : "expected one of: LessThanOrEqualToFinalShare, "
                                      "LessThanInitialShare");
        m->strategies[i] = (enum kueue_fs_strategy)k;
    }
    m->nstrategies = (uint32_t)st->n;
    return 0;
}

static int read_object(struct parser *p, const struct conf_node *obj)
{
    static const char *const kinds[] = {
        "ResourceFlavor",        "ClusterQueue",  "Cohort", "LocalQueue",
        "WorkloadPriorityClass", "Configuration", NULL};
    static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};
    static const char *const wtop[] = {"apiVersion", "kind",        "metadata",
                                       "value",      "description", NULL};
    const char *api = NULL, *name = NULL, *ns = "default";
    int kind = -1, rc;
    if (obj->kind != CONF_MAP)
        return conf_errf(p->err, p->doc, obj, NULL, "expected a Kubernetes object (a mapping)");
    if ((rc = conf_string(p->doc, obj, "apiVersion", true, &api, p->err)) ||
        (rc = conf_enum(p->doc, obj, "kind", true, kinds, &kind, p->err)))
        return rc;
    bool cfg = kind == 5;
    const char *group = cfg ? "config.kueue.x-k8s.io/" : "kueue.x-k8s.io/";
    if (strncmp(api, group, strlen(group)) != 0)
        return conf_errf(p->err, p->doc, conf_get(obj, "apiVersion"), "apiVersion",
                         "expected %sv1alpha1, v1beta1 or v1beta2 for a %s, got '%.60s'", group,
                         kinds[kind], api);
    if (cfg)
        return read_config(p, obj);
    const struct conf_node *md = conf_get(obj, "metadata");
    if (!md)
        return conf_errf(p->err, p->doc, obj, "metadata", "missing (expected metadata.name)");
    if ((rc = need_map(p, md, "metadata")) ||
        (rc = conf_string(p->doc, md, "name", true, &name, p->err)) ||
        (rc = conf_string(p->doc, md, "namespace", false, &ns, p->err)))
        return rc;
    const struct conf_node *spec = conf_get(obj, "spec");
    char label[160];
    snprintf(label, sizeof label, "%s/%s", kinds[kind], name);
    if ((rc = note_others(p, label, "", obj, kind == 4 ? wtop : top)))
        return rc;
    switch (kind) {
    case 0:
        return read_flavor(p, name, spec, conf_get(md, "name"));
    case 1:
        return read_cq(p, name, spec, md);
    case 2:
        return read_cohort(p, name, spec, md);
    case 3:
        if (!spec)
            return conf_errf(p->err, p->doc, obj, "spec", "missing (expected spec.clusterQueue)");
        return read_lq(p, name, ns, spec, md);
    default:
        return read_wpc(p, name, obj);
    }
}

/* ---- resolution ---- */

static int dangling(struct parser *p, const struct ref *r, const char *key, const char *what)
{
    return conf_errf(p->err, r->doc, r->at, key, "no %s named '%.60s' in the manifests", what,
                     r->name);
}

/* Cohort references (implicit cohorts created), cycles refused, cohorts sorted parents first. */
static int resolve_cohorts(struct parser *p)
{
    struct kueue_model *m = p->m;
    int rc;
    for (uint32_t i = 0; i < m->ncqs; i++) {
        const struct ref *r = &p->cq_cohort[i];
        if (r->name && cohort_index(m, r->name) < 0) {
            p->doc = r->doc;
            if ((rc = add_cohort(p, r->name, false)) < 0)
                return rc;
        }
    }
    for (uint32_t i = 0; i < m->ncohorts; i++) {
        const struct ref *r = &p->coh_parent[i];
        if (r->name && cohort_index(m, r->name) < 0) {
            p->doc = r->doc;
            if ((rc = add_cohort(p, r->name, false)) < 0)
                return rc;
        }
    }
    uint32_t n = m->ncohorts;
    int32_t *parent = malloc((n ? n : 1) * sizeof *parent);
    uint32_t *depth = calloc(n ? n : 1, sizeof *depth),
             *order = malloc((n ? n : 1) * sizeof *order);
    int32_t *newidx = malloc((n ? n : 1) * sizeof *newidx);
    struct kueue_cohort_def *sorted = malloc((n ? n : 1) * sizeof *sorted);
    rc = 0;
    if (!parent || !depth || !order || !newidx || !sorted) {
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        parent[i] = p->coh_parent[i].name ? cohort_index(m, p->coh_parent[i].name) : -1;
    for (uint32_t i = 0; i < n; i++) {
        int32_t c = parent[i];
        while (c >= 0) {
            if (++depth[i] > n) {
                rc = conf_errf(p->err, p->coh_parent[i].doc, p->coh_parent[i].at, "parentName",
                               "Cohort '%.60s' is in a cycle of parents (Kueue refuses it)",
                               m->cohorts[i].name);
                goto out;
            }
            c = parent[c];
        }
    }
    /* Stable order by depth: parents (shallower) first. */
    uint32_t k = 0;
    for (uint32_t d = 0; k < n; d++)
        for (uint32_t i = 0; i < n; i++)
            if (depth[i] == d)
                order[k++] = i;
    for (uint32_t i = 0; i < n; i++)
        newidx[order[i]] = (int32_t)i;
    for (uint32_t i = 0; i < n; i++) {
        sorted[i] = m->cohorts[order[i]];
        sorted[i].c.parent = parent[order[i]] >= 0 ? newidx[parent[order[i]]] : KUEUE_NO_COHORT;
    }
    if (n)
        memcpy(m->cohorts, sorted, n * sizeof *sorted);
    /* Side arrays follow the new order. */
    const struct conf_node **g = malloc((n ? n : 1) * sizeof *g);
    const struct conf_doc **dd = malloc((n ? n : 1) * sizeof *dd);
    if (!g || !dd) {
        free(g);
        free(dd);
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        g[i] = p->coh_groups[order[i]];
        dd[i] = p->coh_doc[order[i]];
    }
    if (n) { /* memcpy's pointers must not be null even for no bytes */
        memcpy(p->coh_groups, g, n * sizeof *g);
        memcpy(p->coh_doc, dd, n * sizeof *dd);
    }
    free(g);
    free(dd);
    for (uint32_t i = 0; i < m->ncqs; i++)
        m->cqs[i].cq.cohort =
            p->cq_cohort[i].name ? cohort_index(m, p->cq_cohort[i].name) : KUEUE_NO_COHORT;
out:
    free(parent);
    free(depth);
    free(order);
    free(newidx);
    free(sorted);
    return rc;
}

static int resolve(struct parser *p)
{
    struct kueue_model *m = p->m;
    int rc;
    for (uint32_t i = 0; i < m->nlqs; i++) {
        int32_t c = kueue_model_cq(m, p->lq_cq[i].name);
        if (c < 0)
            return dangling(p, &p->lq_cq[i], "clusterQueue", "ClusterQueue");
        m->lqs[i].cq = (uint32_t)c;
    }
    if ((rc = resolve_cohorts(p)) ||
        (rc = p->npools > 1 ? pick_gpu_flavors(p) : pick_gpu_flavor(p)))
        return rc;
    char obj[160];
    for (uint32_t i = 0; i < m->ncqs; i++) {
        struct kueue_cq *c = &m->cqs[i].cq;
        p->doc = p->cq_doc[i];
        snprintf(obj, sizeof obj, "ClusterQueue/%s", m->cqs[i].name);
        if ((rc = read_groups(p, obj, p->cq_groups[i], c, &m->cqs[i].q, &c->nominal,
                              &c->borrowing_limit, &c->lending_limit)))
            return rc;
        bool bl_set = false;
        for (uint32_t f = 0; f < m->ngpu; f++)
            bl_set = bl_set || m->cqs[i].q.bl[f] >= 0;
        if (c->cohort == KUEUE_NO_COHORT && bl_set)
            return conf_errf(p->err, p->doc, p->cq_groups[i], "borrowingLimit",
                             "ClusterQueue '%.60s' has a borrowingLimit but no cohort (Kueue "
                             "refuses it)",
                             m->cqs[i].name);
        /* A CQ listing no GPU flavor has no GPU quota and, as in Kueue (the resource is not
         * covered: its GPU workloads are inadmissible), cannot borrow any either. */
        if (c->nflavors == 0) {
            c->borrowing_limit = 0;
            for (uint32_t f = 0; f < KUEUE_MAX_FLAVORS; f++)
                m->cqs[i].q.bl[f] = 0;
        }
    }
    for (uint32_t i = 0; i < m->ncohorts; i++) {
        struct kueue_cohort *c = &m->cohorts[i].c;
        p->doc = p->coh_doc[i];
        snprintf(obj, sizeof obj, "Cohort/%s", m->cohorts[i].name);
        if ((rc = read_groups(p, obj, p->coh_groups[i], NULL, &m->cohorts[i].q, &c->nominal,
                              &c->borrowing_limit, &c->lending_limit)))
            return rc;
    }
    if (!m->gpu_flavor && m->ncqs > 0)
        return conf_errf(p->err, p->cq_doc[0], p->cq_groups[0], "resourceGroups",
                         "no ClusterQueue or Cohort gives nvidia.com/gpu quota (tidesim "
                         "simulates GPUs: give a flavor's nvidia.com/gpu nominalQuota)");
    return 0;
}

/* ---- loading ---- */

static int load_docs(struct parser *p, struct conf_err *err)
{
    struct kueue_model *m = p->m;
    int rc;
    for (uint32_t d = 0; d < m->ndocs; d++) {
        const struct conf_node *root = m->docs[d].root;
        p->doc = &m->docs[d];
        for (size_t i = 0; root && i < root->n; i++) {
            const struct conf_node *obj = root->items[i];
            /* A List (kubectl get -o yaml) holds its objects in items. */
            const struct conf_node *kind = conf_get(obj, "kind");
            const struct conf_node *items = conf_get(obj, "items");
            if (kind && kind->kind == CONF_SCALAR && !strcmp(kind->value, "List") && items &&
                items->kind == CONF_SEQ) {
                for (size_t j = 0; j < items->n; j++)
                    if ((rc = read_object(p, items->items[j])))
                        return rc;
                continue;
            }
            if ((rc = read_object(p, obj)))
                return rc;
        }
    }
    (void)err;
    return resolve(p);
}

static void parser_free(struct parser *p)
{
    free(p->cq_cohort);
    free(p->coh_parent);
    free(p->lq_cq);
    free(p->cq_groups);
    free(p->coh_groups);
    free(p->cq_doc);
    free(p->coh_doc);
    free(p->coh_explicit);
    free(p->warn);
}

static int finish(struct parser *p, int rc)
{
    struct kueue_model *m = p->m;
    if (rc == 0 && m->ncqs == 0) {
        rc = conf_errf(p->err, &m->docs[0], m->docs[0].root, NULL,
                       "no ClusterQueue in the manifests (expected at least one)");
    }
    if (rc == 0 && p->wlen) {
        const char *head = "Kueue manifests: not modelled, ignored: ";
        m->warning = malloc(strlen(head) + p->wlen + 1);
        if (!m->warning)
            rc = -ENOMEM;
        else {
            memcpy(m->warning, head, strlen(head));
            memcpy(m->warning + strlen(head), p->warn, p->wlen + 1);
        }
    }
    if (rc == -ENOMEM && p->err)
        snprintf(p->err->msg, sizeof p->err->msg, "%s: out of memory",
                 m->ndocs ? m->docs[0].path : "manifests");
    parser_free(p);
    if (rc)
        kueue_model_release(m);
    return rc;
}

static int begin(struct kueue_model *m, uint32_t n)
{
    memset(m, 0, sizeof *m);
    m->docs = calloc(n ? n : 1, sizeof *m->docs);
    return m->docs ? 0 : -ENOMEM;
}

int kueue_model_load(struct kueue_model *m, const char *const *paths, uint32_t n,
                     const struct conf_doc *scn, const struct conf_node *at,
                     const struct conf_node *labels, uint32_t cluster_nodes, struct conf_err *err)
{
    return kueue_model_load_pools(m, paths, n, scn, at, labels, cluster_nodes, NULL, 0, err);
}

int kueue_model_load_pools(struct kueue_model *m, const char *const *paths, uint32_t n,
                           const struct conf_doc *scn, const struct conf_node *at,
                           const struct conf_node *labels, uint32_t cluster_nodes,
                           const struct pool_cfg *pools, uint32_t npools, struct conf_err *err)
{
    struct parser p = {.m = m,
                       .err = err,
                       .labels = labels,
                       .cluster_nodes = cluster_nodes,
                       .pools = npools > 1 ? pools : NULL,
                       .npools = npools > 1 ? npools : 0};
    int rc = begin(m, n);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        rc = conf_load_relative_multi(&m->docs[i], scn, at, "manifests", paths[i], err);
        if (rc == 0)
            m->ndocs = i + 1;
    }
    if (rc == 0)
        rc = load_docs(&p, err);
    return finish(&p, rc);
}

/* The manifests of texts[0..n) (named names[]) through parser p (its model, error, labels,
 * cluster and pools set). */
static int load_strings(struct parser *p, const char *const *names, const char *const *texts,
                        uint32_t n)
{
    int rc = begin(p->m, n);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        rc = conf_load_string_multi(&p->m->docs[i], names[i], texts[i], p->err);
        if (rc == 0)
            p->m->ndocs = i + 1;
    }
    if (rc == 0)
        rc = load_docs(p, p->err);
    return finish(p, rc);
}

int kueue_model_load_strings(struct kueue_model *m, const char *const *names,
                             const char *const *texts, uint32_t n, const struct conf_node *labels,
                             uint32_t cluster_nodes, struct conf_err *err)
{
    struct parser p = {.m = m, .err = err, .labels = labels, .cluster_nodes = cluster_nodes};
    return load_strings(&p, names, texts, n);
}

int kueue_model_load_strings_pools(struct kueue_model *m, const char *const *names,
                                   const char *const *texts, uint32_t n,
                                   const struct conf_node *labels, const struct pool_cfg *pools,
                                   uint32_t npools, struct conf_err *err)
{
    uint32_t nodes = 0;
    for (uint32_t i = 0; i < npools; i++)
        nodes += pools[i].nodes;
    struct parser p = {.m = m,
                       .err = err,
                       .labels = labels,
                       .cluster_nodes = nodes,
                       .pools = npools > 1 ? pools : NULL,
                       .npools = npools > 1 ? npools : 0};
    return load_strings(&p, names, texts, n);
}

void kueue_model_release(struct kueue_model *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->ndocs; i++)
        conf_release(&m->docs[i]);
    free(m->docs);
    free(m->flavors);
    free(m->cohorts);
    free(m->cqs);
    free(m->lqs);
    free(m->wpcs);
    free(m->warning);
    for (uint32_t i = 0; i < KUEUE_MAX_FLAVORS; i++)
        free(m->cell_name[i]);
    memset(m, 0, sizeof *m);
}

uint32_t kueue_cell_resource(const struct kueue_model *m, uint32_t f)
{
    for (uint32_t g = 0; g < f; g++)
        if (!m->mig_profile[g] == !m->mig_profile[f] &&
            (!m->mig_profile[f] || strcmp(m->mig_profile[g], m->mig_profile[f]) == 0))
            return g;
    return f;
}
