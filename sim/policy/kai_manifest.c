/* kai_manifest.c — KAI Scheduler Queue objects read into the kai policy's queue tree. */
#include "sim/policy/kai_manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/policy/kai_sched.h"

#define KAI_DEFAULT_PRIORITY 100 /* KAI pkg/common/constants: DefaultQueuePriority */

struct raw {
    const char *name, *parent;
    const struct conf_doc *doc;
    const struct conf_node *at_name, *at_parent;
    struct kai_qdef def;
};

struct wbuf {
    char *s;
    size_t len, cap;
};

static int note(struct wbuf *w, const char *name, const char *path, const char *key)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, "%sQueue/%s %s%s%s", w->len ? "; " : "", name, path,
                     *path && *key ? "." : "", key);
    if (n < 0)
        return 0;
    size_t len = strlen(buf);
    if (w->len + len + 1 > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 512;
        while (cap < w->len + len + 1)
            cap *= 2;
        char *s = realloc(w->s, cap);
        if (!s)
            return -ENOMEM;
        w->s = s;
        w->cap = cap;
    }
    memcpy(w->s + w->len, buf, len + 1);
    w->len += len;
    return 0;
}

static int note_others(struct wbuf *w, const char *name, const char *path,
                       const struct conf_node *map, const char *const *known)
{
    for (size_t i = 0; map && map->kind == CONF_MAP && i < map->n; i++) {
        bool ok = false;
        for (const char *const *k = known; *k; k++)
            ok = ok || !strcmp(*k, map->keys[i]);
        int rc = ok ? 0 : note(w, name, path, map->keys[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int need_map(const struct conf_doc *d, const struct conf_node *n, const char *key,
                    struct conf_err *err)
{
    if (n && n->kind != CONF_MAP)
        return conf_errf(err, d, n, key, "expected a mapping, got %s",
                         n->kind == CONF_SEQ ? "a sequence" : "a scalar");
    return 0;
}

static int read_queue(const struct conf_doc *d, const struct conf_node *obj, struct raw *r,
                      struct wbuf *w, struct conf_err *err)
{
    static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};
    static const char *const skeys[] = {"parentQueue", "priority",          "resources",
                                        "displayName", "reclaimMinRuntime", NULL};
    static const char *const rkeys[] = {"gpu", NULL};
    static const char *const gkeys[] = {"quota", "overQuotaWeight", "limit", NULL};
    static const char *const kinds[] = {"Queue", NULL};
    const char *api = NULL;
    int kind = 0, rc;
    if (obj->kind != CONF_MAP)
        return conf_errf(err, d, obj, NULL, "expected a Kubernetes object (a mapping)");
    if ((rc = conf_string(d, obj, "apiVersion", true, &api, err)) ||
        (rc = conf_enum(d, obj, "kind", true, kinds, &kind, err)))
        return rc;
    if (strncmp(api, "scheduling.run.ai/", 18) != 0)
        return conf_errf(err, d, conf_get(obj, "apiVersion"), "apiVersion",
                         "expected scheduling.run.ai/v2 for a Queue, got '%.60s'", api);
    const struct conf_node *md = conf_get(obj, "metadata");
    if (!md)
        return conf_errf(err, d, obj, "metadata", "missing (expected metadata.name)");
    if ((rc = need_map(d, md, "metadata", err)) ||
        (rc = conf_string(d, md, "name", true, &r->name, err)))
        return rc;
    const struct conf_node *spec = conf_get(obj, "spec");
    const struct conf_node *res = conf_get(spec, "resources");
    const struct conf_node *gpu = conf_get(res, "gpu");
    int64_t prio = KAI_DEFAULT_PRIORITY;
    sim_time mr = -1;
    r->doc = d;
    r->at_name = conf_get(md, "name");
    r->at_parent = conf_get(spec, "parentQueue");
    r->def = (struct kai_qdef){.name = r->name,
                               .parent = -1,
                               .quota = 0,
                               .weight = 0,
                               .limit = 0,
                               .priority = KAI_DEFAULT_PRIORITY,
                               .reclaim_min_runtime = -1};
    if ((rc = note_others(w, r->name, "", obj, top)) || (rc = need_map(d, spec, "spec", err)) ||
        (rc = note_others(w, r->name, "spec", spec, skeys)) ||
        (rc = conf_string(d, spec, "parentQueue", false, &r->parent, err)) ||
        (rc = conf_int(d, spec, "priority", false, -1000000, 1000000, &prio, err)) ||
        (rc = conf_duration(d, spec, "reclaimMinRuntime", false, 0, &mr, err)) ||
        (rc = need_map(d, res, "resources", err)) ||
        (rc = note_others(w, r->name, "spec.resources", res, rkeys)) ||
        (rc = need_map(d, gpu, "gpu", err)) ||
        (rc = note_others(w, r->name, "spec.resources.gpu", gpu, gkeys)) ||
        (rc = conf_double(d, gpu, "quota", false, -1, 1e9, &r->def.quota, err)) ||
        (rc = conf_double(d, gpu, "overQuotaWeight", false, 0, 1e9, &r->def.weight, err)) ||
        (rc = conf_double(d, gpu, "limit", false, -1, 1e9, &r->def.limit, err)))
        return rc;
    if (r->parent && !r->parent[0])
        r->parent = NULL;
    r->def.priority = (int32_t)prio;
    r->def.reclaim_min_runtime = mr;
    if (r->def.quota < 0 && r->def.quota != -1)
        return conf_errf(err, d, conf_get(gpu, "quota"), "quota",
                         "expected -1 (unlimited) or >= 0");
    if (r->def.limit < 0 && r->def.limit != -1)
        return conf_errf(err, d, conf_get(gpu, "limit"), "limit", "expected -1 (no limit) or >= 0");
    return 0;
}

static int32_t find(const struct raw *r, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name))
            return (int32_t)i;
    return -1;
}

/* Resolve parents, refuse cycles, order parents first into m->q. */
static int build(struct kai_manifest *m, struct raw *r, uint32_t n, struct conf_err *err)
{
    int32_t *par = malloc((n ? n : 1) * sizeof *par);
    uint32_t *depth = calloc(n ? n : 1, sizeof *depth),
             *order = malloc((n ? n : 1) * sizeof *order);
    int32_t *newidx = malloc((n ? n : 1) * sizeof *newidx);
    m->q = calloc(n ? n : 1, sizeof *m->q);
    int rc = 0;
    if (!par || !depth || !order || !newidx || !m->q) {
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        par[i] = r[i].parent ? find(r, n, r[i].parent) : -1;
        if (r[i].parent && par[i] < 0) {
            rc = conf_errf(err, r[i].doc, r[i].at_parent, "parentQueue",
                           "no Queue named '%.60s' in the manifests", r[i].parent);
            goto out;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        for (int32_t c = par[i]; c >= 0; c = par[c])
            if (++depth[i] > n) {
                rc = conf_errf(err, r[i].doc, r[i].at_parent, "parentQueue",
                               "Queue '%.60s' is in a cycle of parents", r[i].name);
                goto out;
            }
    uint32_t k = 0;
    for (uint32_t dd = 0; k < n; dd++)
        for (uint32_t i = 0; i < n; i++)
            if (depth[i] == dd)
                order[k++] = i;
    for (uint32_t i = 0; i < n; i++)
        newidx[order[i]] = (int32_t)i;
    for (uint32_t i = 0; i < n; i++) {
        m->q[i] = r[order[i]].def;
        m->q[i].parent = par[order[i]] >= 0 ? newidx[par[order[i]]] : -1;
    }
    m->nq = n;
out:
    free(par);
    free(depth);
    free(order);
    free(newidx);
    return rc;
}

static int finish(struct kai_manifest *m, struct conf_err *err)
{
    struct raw *r = NULL;
    uint32_t n = 0, cap = 0;
    struct wbuf w = {0};
    int rc = 0;
    for (uint32_t d = 0; d < m->ndocs && !rc; d++) {
        const struct conf_node *root = m->docs[d].root;
        for (size_t i = 0; root && i < root->n && !rc; i++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                struct raw *nr = realloc(r, cap * sizeof *nr);
                if (!nr) {
                    rc = -ENOMEM;
                    break;
                }
                r = nr;
            }
            memset(&r[n], 0, sizeof r[n]);
            rc = read_queue(&m->docs[d], root->items[i], &r[n], &w, err);
            if (!rc && find(r, n, r[n].name) >= 0)
                rc = conf_errf(err, &m->docs[d], r[n].at_name, "name", "duplicate Queue '%.60s'",
                               r[n].name);
            n += rc == 0;
        }
    }
    if (!rc && n == 0)
        rc = conf_errf(err, &m->docs[0], NULL, NULL,
                       "no Queue in the manifests (expected at least one)");
    if (!rc)
        rc = build(m, r, n, err);
    if (!rc && w.len) {
        const char *head = "KAI manifests: not modelled, ignored: ";
        m->warning = malloc(strlen(head) + w.len + 1);
        if (!m->warning)
            rc = -ENOMEM;
        else
            snprintf(m->warning, strlen(head) + w.len + 1, "%s%s", head, w.s);
    }
    free(r);
    free(w.s);
    if (rc)
        kai_manifest_release(m);
    return rc;
}

int kai_manifest_load(struct kai_manifest *m, const char *const *paths, uint32_t n,
                      const struct conf_doc *base, const struct conf_node *at, struct conf_err *err)
{
    memset(m, 0, sizeof *m);
    m->docs = calloc(n ? n : 1, sizeof *m->docs);
    if (!m->docs)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        int rc = conf_load_relative_multi(&m->docs[i], base, at, "manifests", paths[i], err);
        if (rc) {
            kai_manifest_release(m);
            return rc;
        }
        m->ndocs = i + 1;
    }
    return finish(m, err);
}

int kai_manifest_load_strings(struct kai_manifest *m, const char *const *names,
                              const char *const *texts, uint32_t n, struct conf_err *err)
{
    memset(m, 0, sizeof *m);
    m->docs = calloc(n ? n : 1, sizeof *m->docs);
    if (!m->docs)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        int rc = conf_load_string_multi(&m->docs[i], names[i], texts[i], err);
        if (rc) {
            kai_manifest_release(m);
            return rc;
        }
        m->ndocs = i + 1;
    }
    return finish(m, err);
}

void kai_manifest_release(struct kai_manifest *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->ndocs; i++)
        conf_release(&m->docs[i]);
    free(m->docs);
    free(m->q);
    free(m->warning);
    memset(m, 0, sizeof *m);
}
