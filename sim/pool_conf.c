/* pool_conf.c — reading cluster.pools, require/prefer constraints and GPU-type maps. */
#include "sim/pool_cfg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "models/gpu.h"

/*
 * Trace GPU-type names (openb `gpu_spec`, Alibaba PAI `gpu_type`) and the board
 * they stand for in a simulated fleet (docs/scenario.md lists the same table;
 * training.jobs.trace.gpu_types overrides any row). Boards tidesim does not
 * model (T4, P100, V100, A10, openb's G1-G3 classes) and PAI's "MISC" ask for
 * no particular board: such a job runs on any pool, its logged run time read
 * as A100 time like every trace's. Map them onto a board to pin them.
 */
static const struct {
    const char *type, *board; /* board NULL: any pool */
} builtin_types[] = {
    {"", NULL},
    {"MISC", NULL},
    {"T4", NULL},
    {"P100", NULL},
    {"V100", NULL},
    {"V100M16", NULL},
    {"V100M32", NULL},
    {"A10", NULL},
    {"G1", NULL},
    {"G2", NULL},
    {"G3", NULL},
    {"A100", "a100-sxm4-80gb"},
    {"A100-40GB", "a100-sxm4-40gb"},
    {"A100-80GB", "a100-sxm4-80gb"},
    {"A100-SXM4-40GB", "a100-sxm4-40gb"},
    {"A100-SXM4-80GB", "a100-sxm4-80gb"},
    {"H100", "h100-sxm5-80gb"},
    {"H100-80GB", "h100-sxm5-80gb"},
    {"H100-SXM5-80GB", "h100-sxm5-80gb"},
};

uint64_t pool_match_mask(const struct pool_cfg *pools, uint32_t npools, const struct pool_match *m)
{
    uint64_t mask = 0;
    for (uint32_t i = 0; i < npools && i < POOL_MAX; i++) {
        bool ok = true;
        if (m && m->given && m->gpu)
            ok = strcasecmp(pools[i].spec->name, m->gpu) == 0;
        for (uint32_t k = 0; ok && m && m->given && k < m->nlabels; k++) {
            bool has = false;
            for (uint32_t l = 0; l < pools[i].nlabels && !has; l++)
                has = strcmp(pools[i].labels[l].key, m->labels[k].key) == 0 &&
                      strcmp(pools[i].labels[l].value, m->labels[k].value) == 0;
            ok = has;
        }
        if (ok)
            mask |= UINT64_C(1) << i;
    }
    return mask;
}

const char *pool_label(const struct pool_cfg *p, const char *key)
{
    for (uint32_t i = 0; i < p->nlabels; i++)
        if (strcmp(p->labels[i].key, key) == 0)
            return p->labels[i].value;
    return NULL;
}

/* A mapping of string keys to scalar values into a label array (owned by the caller). */
static int load_labels(const struct conf_doc *d, const struct conf_node *n, const char *key,
                       struct pool_label **out, uint32_t *nout, struct conf_err *err)
{
    *out = NULL;
    *nout = 0;
    if (!n)
        return 0;
    if (n->kind != CONF_MAP)
        return conf_errf(err, d, n, key, "expected a mapping of label to value");
    if (n->n == 0)
        return 0;
    struct pool_label *l = calloc(n->n, sizeof(*l));
    if (!l)
        return -ENOMEM;
    for (size_t i = 0; i < n->n; i++) {
        const struct conf_node *v = n->items[i];
        if (v->kind != CONF_SCALAR || !v->value[0]) {
            free(l);
            return conf_errf(err, d, v, n->keys[i], "expected a label value (a string)");
        }
        l[i] = (struct pool_label){.key = n->keys[i], .value = v->value};
    }
    *out = l;
    *nout = (uint32_t)n->n;
    return 0;
}

/* A board name known to models/gpu.c, at key `key` of map m. */
static int load_board(const struct conf_doc *d, const struct conf_node *m, const char *key,
                      bool required, const struct gpu_spec **out, struct conf_err *err)
{
    const char *name = NULL;
    int rc = conf_string(d, m, key, required, &name, err);
    if (rc || !name)
        return rc;
    *out = gpu_spec_find(name);
    if (!*out) {
        char msg[256];
        gpu_spec_unknown_msg(msg, sizeof(msg), name);
        return conf_errf(err, d, conf_get(m, key), key, "%s", msg);
    }
    return 0;
}

int pool_match_load(const struct conf_doc *d, const struct conf_node *at, const char *key,
                    struct pool_match *m, struct conf_err *err)
{
    static const char *const keys[] = {"gpu", "labels", NULL};
    memset(m, 0, sizeof(*m));
    const struct conf_node *n = conf_get(at, key);
    if (!n)
        return 0;
    int rc;
    const struct gpu_spec *spec = NULL;
    if ((rc = conf_check_keys(d, n, key, keys, err)) ||
        (rc = load_board(d, n, "gpu", false, &spec, err)) ||
        (rc = load_labels(d, conf_get(n, "labels"), "labels", &m->labels, &m->nlabels, err)))
        return rc;
    if (!spec && m->nlabels == 0)
        return conf_errf(err, d, n, key, "expected 'gpu' or 'labels' (or both)");
    m->gpu = spec ? spec->name : NULL;
    m->given = true;
    return 0;
}

int placement_load(const struct conf_doc *d, const struct conf_node *at, struct placement_cfg *p,
                   struct conf_err *err)
{
    memset(p, 0, sizeof(*p));
    int rc = pool_match_load(d, at, "require", &p->require, err);
    if (rc == 0)
        rc = pool_match_load(d, at, "prefer", &p->prefer, err);
    if (rc)
        placement_release(p);
    return rc;
}

static bool plain_name(const char *v)
{
    size_t n = strlen(v);
    bool ok = n > 0 && n <= 40;
    for (size_t i = 0; ok && i < n; i++) {
        char c = v[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    }
    return ok;
}

/* One pool mapping (item i of cluster.pools) into *p. */
static int load_pool(const struct conf_doc *d, const struct conf_node *n, struct pool_cfg *p,
                     struct conf_err *err)
{
    static const char *const keys[] = {"name",        "gpu",   "nodes",        "gpus_per_node",
                                       "labels",      "speed", "sharing",      "mig",
                                       "timeSlicing", "mps",   "sharing_from", NULL};
    static const char *const skeys[] = {"training", "inference", NULL};
    static const char *const cluster_wide[] = {"faults", "spec", NULL};
    int rc;
    if (n->kind != CONF_MAP)
        return conf_errf(err, d, n, "pools", "expected a mapping {name, gpu, nodes, ...}");
    for (size_t k = 0; cluster_wide[k]; k++)
        if (conf_get(n, cluster_wide[k]))
            return conf_errf(err, d, conf_get(n, cluster_wide[k]), cluster_wide[k],
                             "set for the whole cluster (cluster.%s), not per pool",
                             cluster_wide[k]);
    /* Per-pool sharing settings: read here, checked against the cluster's mode by the
     * scenario (it knows the mode and the sharing_from file). */
    p->node = n;
    p->sharing_at = conf_get(n, "sharing");
    p->mig_at = conf_get(n, "mig");
    p->ts_at = conf_get(n, "timeSlicing");
    p->mps_at = conf_get(n, "mps");
    p->from_at = conf_get(n, "sharing_from");
    p->gpus_per_node = 8;
    if ((rc = conf_check_keys(d, n, "pools", keys, err)) ||
        (rc = conf_string(d, n, "name", true, &p->name, err)) ||
        (rc = load_board(d, n, "gpu", true, &p->spec, err)))
        return rc;
    if (!plain_name(p->name))
        return conf_errf(err, d, conf_get(n, "name"), "name",
                         "expected 1 to 40 letters, digits, '-', '_' or '.', got '%.40s'", p->name);
    int64_t v = 0;
    if ((rc = conf_int(d, n, "nodes", true, 1, 1 << 16, &v, err)))
        return rc;
    p->nodes = (uint32_t)v;
    v = p->gpus_per_node;
    if ((rc = conf_int(d, n, "gpus_per_node", false, 1, 16, &v, err)))
        return rc;
    p->gpus_per_node = (uint32_t)v;
    p->train_speed = p->spec->train_speed;
    p->infer_speed = p->spec->infer_speed;
    const struct conf_node *sp = conf_get(n, "speed");
    if (sp && ((rc = conf_check_keys(d, sp, "speed", skeys, err)) ||
               (rc = conf_double(d, sp, "training", false, 0.01, 100, &p->train_speed, err)) ||
               (rc = conf_double(d, sp, "inference", false, 0.01, 100, &p->infer_speed, err))))
        return rc;
    return load_labels(d, conf_get(n, "labels"), "labels", &p->labels, &p->nlabels, err);
}

int pool_cfg_load(const struct conf_doc *d, const struct conf_node *seq, struct pool_cfg **out,
                  uint32_t *n, struct conf_err *err)
{
    *out = NULL;
    *n = 0;
    if (seq->kind != CONF_SEQ || seq->n == 0)
        return conf_errf(err, d, seq, "pools", "expected a non-empty list of pools");
    if (seq->n > POOL_MAX)
        return conf_errf(err, d, seq, "pools", "expected at most %u pools", POOL_MAX);
    struct pool_cfg *p = calloc(seq->n, sizeof(*p));
    if (!p)
        return -ENOMEM;
    int rc = 0;
    uint64_t nodes = 0;
    size_t i;
    for (i = 0; i < seq->n && rc == 0; i++) {
        rc = load_pool(d, seq->items[i], &p[i], err);
        for (size_t k = 0; rc == 0 && k < i; k++)
            if (strcmp(p[k].name, p[i].name) == 0)
                rc = conf_errf(err, d, conf_get(seq->items[i], "name"), "name",
                               "pool '%s' is named twice", p[i].name);
        nodes += p[i].nodes;
        if (rc == 0 && nodes > (1u << 16))
            rc = conf_errf(err, d, seq->items[i], "nodes", "expected at most 65536 nodes in all");
    }
    if (rc) {
        pool_cfg_release(p, (uint32_t)i);
        return rc;
    }
    *out = p;
    *n = (uint32_t)seq->n;
    return 0;
}

int gpu_type_lookup(const struct gpu_type_map *m, const char *type, const char **board)
{
    for (uint32_t i = 0; m && i < m->n; i++)
        if (strcasecmp(m->from[i], type) == 0) {
            *board = m->to[i];
            return 0;
        }
    for (size_t i = 0; i < sizeof(builtin_types) / sizeof(builtin_types[0]); i++)
        if (strcasecmp(builtin_types[i].type, type) == 0) {
            *board = builtin_types[i].board;
            return 0;
        }
    return -ENOENT;
}

int gpu_type_map_load(const struct conf_doc *d, const struct conf_node *map, struct gpu_type_map *m,
                      struct conf_err *err)
{
    memset(m, 0, sizeof(*m));
    if (!map)
        return 0;
    if (map->kind != CONF_MAP)
        return conf_errf(err, d, map, "gpu_types", "expected a mapping of trace GPU type to board");
    if (map->n == 0)
        return 0;
    m->from = calloc(map->n, sizeof(*m->from));
    m->to = calloc(map->n, sizeof(*m->to));
    if (!m->from || !m->to) {
        gpu_type_map_release(m);
        return -ENOMEM;
    }
    for (size_t i = 0; i < map->n; i++) {
        const struct conf_node *v = map->items[i];
        const char *name = v->kind == CONF_SCALAR ? v->value : "";
        const struct gpu_spec *spec = gpu_spec_find(name);
        m->from[i] = map->keys[i];
        if (strcasecmp(name, "any") == 0) {
            m->to[i] = NULL;
        } else if (!spec) {
            char msg[256];
            gpu_spec_unknown_msg(msg, sizeof(msg), name);
            gpu_type_map_release(m);
            return conf_errf(err, d, v, map->keys[i], "%s, or 'any'", msg);
        } else {
            m->to[i] = spec->name;
        }
        m->n = (uint32_t)i + 1;
    }
    return 0;
}

void pool_match_release(struct pool_match *m)
{
    free(m->labels);
    memset(m, 0, sizeof(*m));
}

void placement_release(struct placement_cfg *p)
{
    pool_match_release(&p->require);
    pool_match_release(&p->prefer);
}

void pool_cfg_release(struct pool_cfg *pools, uint32_t n)
{
    for (uint32_t i = 0; pools && i < n; i++) {
        free(pools[i].labels);
        free(pools[i].layout_own);
    }
    free(pools);
}

void gpu_type_map_release(struct gpu_type_map *m)
{
    free(m->from);
    free(m->to);
    memset(m, 0, sizeof(*m));
}
