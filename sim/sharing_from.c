/* sharing_from.c — device-plugin and mig-parted config files as the cluster's sharing. */
#include "sim/sharing_from.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "models/gpu.h"
#include "models/mig.h"

/*
 * PCI device ids (device << 16 | vendor 0x10DE) as mig-parted's device-filter
 * writes them, from the device filters and their comments in NVIDIA's default
 * mig-parted configuration (NVIDIA/mig-parted deployments/systemd/config-default.yaml,
 * shipped by the GPU Operator as ConfigMap default-mig-parted-config):
 * "A100-40GB" 0x20B010DE, "A100-80GB" 0x20B210DE, "H100-80GB" 0x233010DE.
 */
static const struct {
    const char *board;
    const char *pci;
} pci_ids[] = {
    {"a100-sxm4-40gb", "0x20B010DE"},
    {"a100-sxm4-80gb", "0x20B210DE"},
    {"h100-sxm5-80gb", "0x233010DE"},
};

/* Note a field read but not modelled (once). */
static void ignore(struct sharing_from *o, const char *field)
{
    size_t n = strlen(o->ignored);
    if (strstr(o->ignored, field))
        return;
    snprintf(o->ignored + n, sizeof(o->ignored) - n, "%s%s", n ? ", " : "", field);
}

/* Device plugin: sharing.{timeSlicing|mps}. */
static int load_plugin(const struct conf_doc *d, struct sharing_from *o, struct conf_err *err)
{
    static const char *const top[] = {"version", "flags", "sharing", NULL};
    static const char *const skeys[] = {"timeSlicing", "mps", NULL};
    static const char *const kkeys[] = {"renameByDefault", "failRequestsGreaterThanOne",
                                        "resources", NULL};
    static const char *const rkeys[] = {"name", "replicas", "rename", "devices", NULL};
    const struct conf_node *root = d->root, *s = conf_get(root, "sharing");
    int rc;
    if ((rc = conf_check_keys(d, root, NULL, top, err)) ||
        (rc = conf_check_keys(d, s, "sharing", skeys, err)))
        return rc;
    if (conf_get(root, "flags"))
        ignore(o, "flags");
    const struct conf_node *ts = conf_get(s, "timeSlicing"), *mps = conf_get(s, "mps");
    if (ts && mps)
        return conf_errf(err, d, mps, "mps", "give timeSlicing or mps, not both");
    if (!ts && !mps) {
        o->mode = SHARE_EXCLUSIVE; /* a plugin without sharing: one pod per card */
        return 0;
    }
    const struct conf_node *k = ts ? ts : mps;
    const char *kname = ts ? "timeSlicing" : "mps";
    if ((rc = conf_check_keys(d, k, kname, kkeys, err)))
        return rc;
    for (size_t i = 0; kkeys[i]; i++)
        if (strcmp(kkeys[i], "resources") && conf_get(k, kkeys[i]))
            ignore(o, kkeys[i]);
    const struct conf_node *res = conf_get(k, "resources");
    if (!res || res->kind != CONF_SEQ || res->n == 0)
        return conf_errf(err, d, res ? res : k, "resources",
                         "expected a list with one entry {name: nvidia.com/gpu, replicas: N}");
    if (res->n > 1)
        return conf_errf(err, d, res->items[1], "resources",
                         "one resource per card is modelled (nvidia.com/gpu); got %zu", res->n);
    const struct conf_node *r = res->items[0];
    const char *name = NULL;
    int64_t reps = 0;
    int64_t max = ts ? 64 : SHARE_MPS_MAX_CLIENTS;
    if ((rc = conf_check_keys(d, r, "resources[]", rkeys, err)) ||
        (rc = conf_string(d, r, "name", true, &name, err)) ||
        (rc = conf_int(d, r, "replicas", true, 1, max, &reps, err)))
        return rc;
    if (strcmp(name, "nvidia.com/gpu"))
        return conf_errf(err, d, conf_get(r, "name"), "name",
                         "expected nvidia.com/gpu (MIG resources come from a mig-parted file), "
                         "got '%.60s'",
                         name);
    if (conf_get(r, "rename"))
        ignore(o, "rename");
    if (conf_get(r, "devices"))
        ignore(o, "devices");
    o->mode = ts ? SHARE_TIMESLICE : SHARE_MPS;
    o->replicas = (uint32_t)reps;
    return 0;
}

/* Whether a mig-parted entry's device-filter (absent, a string or a list) takes `spec`. */
static int filter_takes(const struct conf_doc *d, const struct conf_node *f,
                        const struct gpu_spec *spec, bool *takes, struct conf_err *err)
{
    const char *mine = NULL;
    for (size_t i = 0; i < sizeof(pci_ids) / sizeof(pci_ids[0]); i++)
        if (!strcmp(pci_ids[i].board, spec->name))
            mine = pci_ids[i].pci;
    *takes = true;
    if (!f)
        return 0;
    *takes = false;
    size_t n = f->kind == CONF_SEQ ? f->n : 1;
    for (size_t i = 0; i < n; i++) {
        const struct conf_node *v = f->kind == CONF_SEQ ? f->items[i] : f;
        if (v->kind != CONF_SCALAR)
            return conf_errf(err, d, v, "device-filter", "expected a PCI id like 0x20B210DE");
        if (mine && !strcasecmp(v->value, mine))
            *takes = true;
    }
    return 0;
}

/* "1g.10gb": 2, "3g.40gb": 1 -> "3g.40gb+1g.10gb+1g.10gb" (largest first), checked on spec. */
static int build_layout(const struct conf_doc *d, const struct conf_node *e,
                        const struct gpu_spec *spec, struct sharing_from *o, struct conf_err *err)
{
    const struct conf_node *md = conf_get(e, "mig-devices");
    if (!md || md->kind != CONF_MAP || md->n == 0)
        return conf_errf(err, d, md ? md : e, "mig-devices",
                         "expected a mapping of MIG profile to count (an empty one leaves the "
                         "cards with no instance: nothing could run)");
    size_t at = 0;
    o->layout[0] = '\0';
    for (int slices = 7; slices >= 1; slices--) {
        for (size_t i = 0; i < md->n; i++) {
            struct conf_node key = {.line = md->key_line[i], .col = md->key_col[i]};
            const struct mig_profile *p = mig_profile_find(spec, md->keys[i]);
            if (!p)
                return conf_errf(err, d, &key, md->keys[i], "unknown MIG profile for %s",
                                 spec->name);
            if (p->compute_slices != slices)
                continue;
            int64_t cnt = 0;
            int rc = conf_int(d, md, md->keys[i], true, 0, 7, &cnt, err);
            if (rc)
                return rc;
            for (int64_t k = 0; k < cnt; k++) {
                int w = snprintf(o->layout + at, sizeof(o->layout) - at, "%s%s", at ? "+" : "",
                                 p->name);
                if (w < 0 || (size_t)w >= sizeof(o->layout) - at)
                    return conf_errf(err, d, md, "mig-devices", "too many instances");
                at += (size_t)w;
            }
        }
    }
    struct mig_layout l;
    char msg[400];
    if (!o->layout[0])
        return conf_errf(err, d, md, "mig-devices", "expected at least one instance");
    if (mig_layout_check(spec, o->layout, &l, msg, sizeof(msg)))
        return conf_errf(err, d, md, "mig-devices", "%s", msg);
    return 0;
}

/* mig-parted: mig-configs.<config>, the entry for every device of this board. */
static int load_migparted(const struct conf_doc *d, const char *config, const struct gpu_spec *spec,
                          struct sharing_from *o, struct conf_err *err)
{
    static const char *const top[] = {"version", "mig-configs", NULL};
    static const char *const ekeys[] = {"devices", "mig-enabled", "mig-devices", "device-filter",
                                        NULL};
    const struct conf_node *root = d->root, *cfgs = conf_get(root, "mig-configs");
    int rc;
    if ((rc = conf_check_keys(d, root, NULL, top, err)))
        return rc;
    if (!cfgs || cfgs->kind != CONF_MAP || cfgs->n == 0)
        return conf_errf(err, d, cfgs ? cfgs : root, "mig-configs",
                         "expected a mapping of configuration names");
    const struct conf_node *c = NULL;
    if (config) {
        c = conf_get(cfgs, config);
        if (!c)
            return conf_errf(err, d, cfgs, config,
                             "no such configuration (cluster.sharing_from.config names one of "
                             "mig-configs)");
    } else if (cfgs->n == 1) {
        c = cfgs->items[0];
        config = cfgs->keys[0];
    } else {
        return conf_errf(err, d, cfgs, "mig-configs",
                         "%zu configurations: name one with cluster.sharing_from: {file: ..., "
                         "config: NAME} (the node label nvidia.com/mig.config)",
                         cfgs->n);
    }
    if (c->kind != CONF_SEQ || c->n == 0)
        return conf_errf(err, d, c, config, "expected a list of device entries");
    const struct conf_node *pick = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct conf_node *e = c->items[i];
        bool takes = false;
        if ((rc = conf_check_keys(d, e, config, ekeys, err)) ||
            (rc = filter_takes(d, conf_get(e, "device-filter"), spec, &takes, err)))
            return rc;
        if (!takes)
            continue;
        const struct conf_node *dev = conf_get(e, "devices");
        if (!dev || dev->kind != CONF_SCALAR || strcmp(dev->value, "all"))
            return conf_errf(err, d, dev ? dev : e, "devices",
                             "expected 'all': one layout for every card of a board (per-card "
                             "entries are not modelled)");
        if (pick)
            return conf_errf(err, d, e, config,
                             "two entries for %s: one entry per board (device-filter)", spec->name);
        pick = e;
    }
    if (!pick)
        return conf_errf(err, d, c, config, "no entry applies to %s (device-filter)", spec->name);
    bool on = false;
    if ((rc = conf_bool(d, pick, "mig-enabled", true, &on, err)))
        return rc;
    if (!on) {
        o->mode = SHARE_EXCLUSIVE;
        return 0;
    }
    o->mode = SHARE_MIG;
    return build_layout(d, pick, spec, o, err);
}

int sharing_from_load(const char *path, const char *config, const struct gpu_spec *spec,
                      struct sharing_from *out, struct conf_err *err)
{
    struct conf_doc d;
    memset(out, 0, sizeof(*out));
    int rc = conf_load_file(&d, path, err);
    if (rc)
        return rc;
    if (!d.root || d.root->kind != CONF_MAP) {
        struct conf_node top = {.line = 1, .col = 1};
        rc = conf_errf(err, &d, d.root ? d.root : &top, NULL,
                       "expected a device-plugin config (sharing:) or a mig-parted config "
                       "(mig-configs:)");
    } else if (conf_get(d.root, "mig-configs")) {
        rc = load_migparted(&d, config, spec, out, err);
    } else if (conf_get(d.root, "sharing") || conf_get(d.root, "flags")) {
        if (config)
            rc = conf_errf(err, &d, d.root, NULL,
                           "a device-plugin config has no named configurations ('config' is for "
                           "mig-parted files)");
        else
            rc = load_plugin(&d, out, err);
    } else {
        rc = conf_errf(err, &d, d.root, NULL,
                       "expected a device-plugin config (sharing:) or a mig-parted config "
                       "(mig-configs:)");
    }
    conf_release(&d);
    return rc;
}

int sharing_from_is_migparted(const char *path, bool *yes, struct conf_err *err)
{
    struct conf_doc d;
    *yes = false;
    int rc = conf_load_file(&d, path, err);
    if (rc)
        return rc;
    *yes = d.root && d.root->kind == CONF_MAP && conf_get(d.root, "mig-configs") != NULL;
    conf_release(&d);
    return 0;
}
