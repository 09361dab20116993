/*
 * mig.h — Multi-Instance GPU: profile tables, layout strings, placement.
 *
 * A MIG-capable card is modelled as 8 memory slots (a bit mask, bit s = memory
 * slice s) and 7 compute slices. A GPU instance (GI) of profile p may be created
 * at start s iff s is one of p's allowed starts, memory slots [s, s+size) are
 * free, fewer than max_instances(p) GIs of p exist and at most 7 GIs exist in
 * all (NVML placement semantics, NVML API reference). The tables for
 * a100-sxm4-40gb, a100-sxm4-80gb and h100-sxm5-80gb are static const; every
 * returned profile pointer stays valid for the program's life.
 *
 * Layout strings list GIs joined by '+':
 *     3g.40gb+2g.20gb+1g.10gb+1g.10gb
 *     1g.10gb*7   1g.10gb×7   7*1g.10gb   3g.40gb+4×1g.10gb     (repetition, '*' or UTF-8 '×')
 *     3g.40gb@0+1g.10gb*3                                       (@s pins the start slot)
 * Profile names are case-insensitive; spaces around tokens are ignored.
 *
 * Validation (mig_layout_place) is what the driver enforces: at most 7 GIs,
 * per-profile maximum, at most 7 compute slices and 8 memory slices, then
 * placement. Placement first tries the driver's order: each GI in the order
 * given, at its lowest free allowed start. Because users list profiles in any
 * order, if that fails a small exhaustive search over all placements follows;
 * the layout is valid if ANY placement works and the placement found is
 * reported. (A real driver may pick other starts — e.g. the first 3g.40gb at
 * slot 4 — which changes where, never whether, a layout fits.)
 *
 * Speed: a MIG instance runs alone on its slices, so its speed (fraction of a
 * full, MIG-off GPU) is a per-profile knob, defaulting to
 *     speed(p) = efficiency × SMs(p) / SMs(full GPU)
 * with efficiency = MIG_EFFICIENCY_DEFAULT (see below for the calibration).
 *
 * Errors: functions that can fail return 0 or a negative errno code and write
 * one human-readable reason into the caller's err buffer (always NUL-terminated
 * when errlen > 0), formatted "LAYOUT: reason", e.g.
 *     4g.40gb+4g.40gb: only 1 instance of 4g.40gb fits
 */
#ifndef TIDESIM_MODELS_MIG_H
#define TIDESIM_MODELS_MIG_H

#include <stdbool.h>
#include <stddef.h>

#include "models/gpu.h"

#define MIG_MEM_SLOTS      8   /* memory slices per card (NVIDIA MIG User Guide) */
#define MIG_COMPUTE_SLICES 7   /* compute slices per card (NVIDIA MIG User Guide) */
#define MIG_MAX_INSTANCES  7   /* GIs per card, A100/H100 (MIG guide, Supported GPUs) */
#define MIG_MAX_PROFILES   8   /* upper bound on a table's length */
#define MIG_ERR_LEN        512 /* a buffer this long always holds a whole reason */

/*
 * Calibrated MIG efficiency: speed per unit of SM share. MLPerf Inference v2.0,
 * A100-SXM-80GB, ResNet-50 Offline: seven 1g.10gb slices deliver 278,648/8 =
 * 34,831 samples/s per GPU vs 39,649 on a full GPU (mlcommons/inference_results_v2.0), i.e. 0.1255
 * of a full GPU per slice; a slice has 14/108 = 0.1296 of the SMs, so
 * efficiency = 0.1255 / 0.1296 = 0.968. Chosen over the single-slice figures
 * (0.132 offline => 1.02; 0.109 server => 0.84) because it is the only
 * measurement with the whole card partitioned, which is how tidesim uses MIG.
 * Defaults then: 1g 0.1255, 2g 0.251, 3g 0.376, 4g 0.502, 7g 0.878 (98 SMs).
 */
#define MIG_EFFICIENCY_DEFAULT 0.968

/*
 * Re-layout cost, NOT FOUND in public sources (research notes §1.4, §9.1): calibration
 * knobs. Default: 30 s pod drain (Kubernetes terminationGracePeriodSeconds
 * default) + 60 s for GI/CI destroy/create and device-plugin re-registration
 * (conservative guess) = 90 s during which the card serves nothing.
 */
#define MIG_RECONFIG_S_DEFAULT    60.0
#define MIG_DRAIN_GRACE_S_DEFAULT 30.0

struct mig_profile {
    char name[16];      /* "3g.40gb" */
    int gi_id;          /* nvidia-smi GPU-instance profile ID (mig -cgi ID) */
    int compute_slices; /* of 7 */
    int memory_slices;  /* of 8 */
    int sms;            /* SMs of the instance */
    int memory_mib;     /* memory of the instance, MiB */
    int max_instances;  /* per card */
    unsigned starts;    /* bit s set <=> memory slot s is an allowed start */
    int size;           /* placement size in memory slots */
    bool media_ext;     /* "+me": owns the media engines */
};

/* Tunable MIG parameters. mig_knobs_init() fills the defaults for one GPU. */
struct mig_knobs {
    const struct gpu_spec *gpu;
    double efficiency;              /* speed per SM share, see MIG_EFFICIENCY_DEFAULT */
    double speed[MIG_MAX_PROFILES]; /* per profile (table index), fraction of a full GPU */
    double reconfig_s;              /* GI/CI re-creation + operands restart, s */
    double drain_grace_s;           /* pod termination grace before reconfiguring, s */
};

/*
 * The profile table of gpu and its length in *n. Returns NULL (and *n = 0)
 * when gpu is NULL or has no MIG. n may be NULL.
 */
const struct mig_profile *mig_profiles(const struct gpu_spec *gpu, size_t *n);

/* Profile of gpu by name (case-insensitive), or NULL. */
const struct mig_profile *mig_profile_find(const struct gpu_spec *gpu, const char *name);

/* Index of p in gpu's table, or -1 if p is not one of its rows. */
int mig_profile_index(const struct gpu_spec *gpu, const struct mig_profile *p);

/* efficiency × SMs(p) / SMs(gpu): the default speed factor of a profile. */
double mig_speed_default(const struct gpu_spec *gpu, const struct mig_profile *p,
                         double efficiency);

/*
 * Fill k with the defaults for gpu (efficiency, per-profile speeds, reconfig
 * times). Returns 0, or -ENOTSUP when gpu is NULL or has no MIG (k is then
 * zeroed).
 */
int mig_knobs_init(struct mig_knobs *k, const struct gpu_spec *gpu);

/* Recompute every per-profile speed from a new efficiency. Returns 0 or -EINVAL (eff <= 0). */
int mig_knobs_set_efficiency(struct mig_knobs *k, double efficiency);

/* Override one profile's speed (0 < speed <= 1). Returns 0, -ENOENT (unknown name), -EINVAL. */
int mig_knobs_set_speed(struct mig_knobs *k, const char *profile, double speed);

/* Speed factor of p under k (fraction of a full GPU); 0 when p is not in k's table. */
double mig_knobs_speed(const struct mig_knobs *k, const struct mig_profile *p);

/* Seconds a re-layout keeps the card out of service: drain_grace_s + reconfig_s. */
double mig_reconfig_seconds(const struct mig_knobs *k);

/* True when an allocation of mem_gib GiB fits in p's memory (placement refuses it otherwise). */
bool mig_fits_memory(const struct mig_profile *p, double mem_gib);

/*
 * Text helpers, all with snprintf's convention: write into buf (NUL-terminated
 * when len > 0) and return the length the whole text needs.
 *   mig_mask_text:   used memory slots as ranges, "0-3,6", or "none"
 *   mig_starts_text: allowed starts of p, "0,2,4"
 */
size_t mig_mask_text(unsigned mask, char *buf, size_t len);
size_t mig_starts_text(const struct mig_profile *p, char *buf, size_t len);

struct mig_instance {
    const struct mig_profile *profile;
    int start; /* first memory slot; -1 = not placed (or not pinned, after parsing) */
};

struct mig_layout {
    const struct gpu_spec *gpu;
    size_t n;                                    /* instances, <= MIG_MAX_INSTANCES */
    struct mig_instance inst[MIG_MAX_INSTANCES]; /* in the order given */
    unsigned used;                               /* occupied memory slots after placement */
};

/*
 * Parse text into out (caller-owned, overwritten). Pinned starts ("@s") are
 * kept, other instances get start -1. Returns 0; -EINVAL on a syntax error or
 * an unknown profile ("...: unknown profile '5g.40gb' for a100-sxm4-80gb
 * (expected one of: ...)"); -ENOSPC for more than 7 instances ("...: more than
 * 7 instances"); -ENOTSUP when gpu has no MIG. An empty layout ("") parses as
 * zero instances.
 */
int mig_layout_parse(const struct gpu_spec *gpu, const char *text, struct mig_layout *l, char *err,
                     size_t errlen);

/*
 * Check and place a parsed (or hand-built) layout, filling every start and
 * l->used. subject prefixes the reason (NULL: the layout's own text). Returns 0
 * when valid; -ENOSPC with the reason when it cannot exist on one card
 * (per-profile maximum, > 7 instances, > 7 compute or > 8 memory slices, no
 * placement); -EINVAL for a pinned start the profile does not allow. On failure
 * l's starts are restored to what they were.
 */
int mig_layout_place(struct mig_layout *l, const char *subject, char *err, size_t errlen);

/* Parse + place; the reason is prefixed with text. Same returns as the two above. */
int mig_layout_check(const struct gpu_spec *gpu, const char *text, struct mig_layout *l, char *err,
                     size_t errlen);

/*
 * Write the layout as a layout string, in instance order, each placed
 * instance with its start: "3g.40gb@4+1g.10gb@0". snprintf convention.
 */
size_t mig_layout_format(const struct mig_layout *l, char *buf, size_t len);

/* Compute slices used by the layout's instances. */
int mig_layout_compute_slices(const struct mig_layout *l);

#endif
