/*
 * sharing_from.h — the cluster's GPU sharing read from the files a platform
 * team deploys (cluster.sharing_from, docs/scenario.md):
 *
 *   the NVIDIA k8s device plugin's config file: `sharing.timeSlicing` or
 *     `sharing.mps` with `resources: [{name: nvidia.com/gpu, replicas: N}]`
 *     -> sharing timeslice / mps with N replicas;
 *   an nvidia-mig-parted config file: `mig-configs.<name>` (the node label
 *     nvidia.com/mig.config picks one) -> sharing mig with the entry's
 *     `mig-devices` as every card's layout, or exclusive for
 *     `mig-enabled: false`. Entries with a `device-filter` apply to the boards
 *     whose PCI device id it lists.
 *
 * Fields of those files that tidesim reads but does not model (the device
 * plugin's flags, renameByDefault, ...) are named in one notice, not ignored
 * silently. A malformed file gets path:line:col like a scenario.
 */
#ifndef TIDESIM_SHARING_FROM_H
#define TIDESIM_SHARING_FROM_H

#include <stdbool.h>
#include <stdint.h>

#include "models/share.h"
#include "sim/conf.h"

struct gpu_spec;

struct sharing_from {
    enum share_mode mode;
    uint32_t replicas; /* timeslice / mps: the device plugin's replicas per card */
    char layout[192];  /* mig: every card's layout, profiles joined by '+' */
    char ignored[400]; /* fields read and not modelled, "a, b"; "" = none */
};

/*
 * Read `path` (either kind, told apart by its top-level keys) for a cluster
 * of `spec` boards; `config` names the mig-parted configuration (NULL: the
 * file's only one). Fills *out. Returns 0, or -EINVAL / -ENOENT / -ENOMEM
 * with err naming the file (path:line:col and the key) and the fix.
 */
int sharing_from_load(const char *path, const char *config, const struct gpu_spec *spec,
                      struct sharing_from *out, struct conf_err *err);

/*
 * Whether `path` is an nvidia-mig-parted config (top-level mig-configs:) into
 * *yes. Returns 0, or a negative code with err naming the file when it cannot
 * be read or parsed.
 */
int sharing_from_is_migparted(const char *path, bool *yes, struct conf_err *err);

#endif
