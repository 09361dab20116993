/*
 * scenario.h — a run's whole configuration, read from a YAML scenario file.
 *
 * scenario_load() validates everything before a run starts: each error names
 * file, line, column and key and says what was expected. Unknown keys are
 * errors. The struct owns its strings (they point into the parsed document,
 * kept alive until scenario_release) and keeps the file's text for the
 * results file's provenance.
 *
 * Units: times are sim_time µs; rates req/s; latencies from the file in ms.
 */
#ifndef TIDESIM_SCENARIO_H
#define TIDESIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/mig.h"
#include "models/share.h"
#include "sim/conf.h"
#include "sim/pool_cfg.h"
#include "sim/autoscale.h"
#include "sim/train.h"
#include "traces/snapshot.h"
#include "sim/core/simtime.h"
#include "traces/arrivals.h"
#include "traces/jobs.h"
#include "traces/synth.h"

struct gpu_spec;

enum arrival_format { ARRFMT_AZURE, ARRFMT_SERVEGEN, ARRFMT_CSV, ARRFMT_COUNTS };
enum job_format { JOBFMT_OPENB, JOBFMT_PAI, JOBFMT_HELIOS, JOBFMT_CSV };

/* An inference trace to replay (traces/arrivals.h); path resolved against the scenario's folder. */
struct arrival_trace_cfg {
    char *path; /* owned */
    enum arrival_format format;
    struct arrival_csv_map csv;       /* ARRFMT_CSV */
    struct arrival_counts_map counts; /* ARRFMT_COUNTS */
    const char *origin;               /* trace time mapped to t = 0 (NULL = default) */
    sim_time offset;
    double scale;         /* rate ×k */
    bool loop;            /* replay the trace until the run ends */
    sim_time loop_period; /* 0 = its span rounded up to whole days */
    bool skip_bad;        /* on_bad_row: skip */
};

/* A training job log to replay (traces/jobs.h). */
struct job_trace_cfg {
    char *path; /* owned */
    enum job_format format;
    struct job_csv_map csv; /* JOBFMT_CSV */
    const char *origin;
    sim_time offset;
    uint32_t reorder_window;
    bool skip_bad;
    bool include_services;         /* replay openb LS pods (long-running services) as jobs too */
    struct gpu_type_map gpu_types; /* trace GPU-type names to boards (sim/pool_cfg.h) */
};
enum svc_dist { DIST_DETERMINISTIC, DIST_EXPONENTIAL, DIST_LOGNORMAL };

/* A service's kind: the batch-latency model below, or LLM serving (sim/llm_cfg.h). */
enum svc_kind { SVC_BATCH, SVC_LLM };

/*
 * Replica start-up (services[].startup): a replica asked for serves after
 * fixed + model_gb / B, B drawn per start from a lognormal load bandwidth
 * (GB/s). Off: the delay the policy gives (policy.autoscale.scale_up_delay),
 * as before; on by default for LLM services (their weights).
 */
struct startup_cfg {
    bool on;
    sim_time fixed;        /* container and engine start besides loading the weights */
    double model_gb;       /* what a replica loads, GB (10^9 B) */
    double bw_median_gbps; /* lognormal load bandwidth: median, GB/s */
    double bw_sigma;       /* and sigma of its log */
};

struct llm_cfg;

struct service_cfg {
    const char *name;
    enum svc_kind kind;
    struct llm_cfg *llm; /* SVC_LLM: owned */
    struct startup_cfg startup;
    /* Batch time a + b·batch on a full GPU (Inoue, arXiv 1912.06322), times a jitter of mean 1. */
    double a_ms, b_ms;
    double fixed_compute_share; /* φ: share of a that scales with a MIG slice (models/latency.h) */
    bool memory_bound; /* latency.bound: memory — on MIG the batch scales with the instance's
                          memory-bandwidth share (memory slices / 8), not its SM share */
    enum svc_dist dist;
    double cv;           /* lognormal jitter coefficient of variation */
    uint32_t max_batch;  /* dynamic batching: largest batch */
    sim_time max_wait;   /* dynamic batching: longest wait of the oldest request */
    sim_time slo;        /* latency target, µs */
    double slo_quantile; /* e.g. 0.99: the SLO holds if that quantile <= slo */
    uint32_t replicas;   /* replicas the policy starts with (0 = policy decides) */
    uint32_t min_replicas, max_replicas;
    uint64_t max_queue;      /* waiting requests beyond this are dropped */
    double mem_gib;          /* memory a replica asks for (and allocates), GiB */
    double mem_used_gib;     /* memory it really allocates when not mem_gib (0 = mem_gib) */
    double gpu_fraction;     /* card share a replica asks for (timeslice/mps packing); 0 = a slot */
    double sm_cap;           /* MPS active thread percentage / 100 */
    double demand;           /* fraction of the SMs its kernels fill alone (MPS), (0, 1] */
    const char *mig_profile; /* MIG instance profile a replica asks for (NULL = any) */
    const char *queue; /* queue it is submitted to (kueue LocalQueue; NULL = policy default) */
    bool from_trace;   /* arrivals from `trace` instead of the synthetic profile */
    struct rate_profile arrivals;
    double burst_cv; /* synthetic: CV of inter-arrival gaps (1 = Poisson) */
    struct arrival_trace_cfg trace;
    struct placement_cfg place; /* require / prefer a board or labels (sim/pool_cfg.h) */
};

struct training_cfg {
    bool synthetic;  /* jobs from the synthetic generator */
    bool from_trace; /* jobs from a log */
    struct job_trace_cfg trace;
    struct job_mix mix;
    uint32_t backlog;           /* jobs already queued at t = 0 (drawn from the same mix) */
    struct train_cfg run;       /* checkpoints, memory, MPS share of training members */
    struct placement_cfg place; /* training.require / prefer: every job's constraints */
    /* training.snapshot (traces/snapshot.h): jobs running at t = 0 (a warm start). */
    char *snapshot_path;   /* owned; NULL = none */
    struct snap_job *snap; /* owned, nsnap rows, read and checked when the scenario loads */
    uint32_t nsnap;
};

struct policy_ops;

struct policy_cfg {
    const struct policy_ops *ops; /* sim/policy/policy.h */
    void *cfg;                    /* the policy's own keys, parsed by ops->parse; owned */
    bool autoscale;               /* inference replicas follow the load (policy.autoscale) */
    struct autoscale_cfg as;      /* HPA knobs; capacity and min/max are per service */
    const char *name;             /* CLI name: dedicated, ... */
    uint32_t inference_gpus;
    char
        *warning; /* one message for the user (e.g. manifest fields not modelled), or NULL; owned */
};

struct scenario {
    const char *name;
    const char *path;
    uint64_t seed;
    sim_time duration;
    sim_time sample_interval;
    int tz_offset_min; /* minutes east of UTC of the local time used for t = 0 */

    const char *gpu;             /* GPU model name, e.g. a100-sxm4-80gb */
    const struct gpu_spec *spec; /* its specification (models/gpu.h, with cluster.spec overrides) */
    struct gpu_spec spec_own;    /* the copy spec points to */
    double mps_mem_limit_gib;    /* MPS pinned memory limit per client, 0 = card / replicas */
    bool ts_mem_quota;           /* timeSlicing.memory_quota: enforced (HAMi-style) */
    uint32_t nodes, gpus_per_node;
    enum share_mode sharing;
    uint32_t slots;           /* tenants per card (timeslice/MPS replicas) */
    struct share_knobs knobs; /* time-slice, MPS, fault-rate knobs */
    struct mig_knobs mig;     /* MIG speeds and re-layout time */
    const char *mig_layout;   /* every card's initial MIG layout */
    sim_time restart_delay;   /* a replica killed by a fault serves again after this */
    /* Node pools (sim/pool_cfg.h): cluster.pools, or one pool "default" for the single-pool
     * form. nodes above is the total and gpus_per_node the largest node's cards (pools may
     * differ: scenario_gpus sums them); gpu and spec are the first pool's board. */
    struct pool_cfg *pools; /* owned */
    uint32_t npools;
    bool pools_given; /* the scenario wrote cluster.pools (results then get /pools) */
    /* Pools share by two or more modes (mig, timeslice, mps; whole cards aside): a mixed
     * fleet. `sharing` is then the cluster's default for pools that say none. */
    bool mixed;
    bool pools_moded; /* a pool's own mode decided the modes in use (mixed, or all one mode) */
    /* Replicas of a time-sliced / MPS pool that sets none (cluster.timeSlicing.replicas /
     * cluster.mps.replicas, else 4); sc->slots is the cluster mode's. */
    uint32_t ts_replicas, mps_replicas;
    /* cluster.sharing_from (sim/sharing_from.h): the file's replicas (0: none) and MIG layout
     * (owned; NULL: none); warning: fields it holds that tidesim does not model ("" none). */
    uint32_t from_replicas;
    char *from_layout;
    char *from_path;     /* owned: the sharing_from file (pools' nvidia.com/mig.config labels) */
    bool from_migparted; /* it is a mig-parted file */
    char warning[600];

    struct service_cfg *services;
    size_t nservices;

    struct training_cfg training;
    struct policy_cfg policy;

    /* cost: the cluster's price (docs/scenario.md "cost"); on = a cost block was given. */
    struct cost_cfg {
        bool on;
        double gpu_hour;  /* price per GPU-hour of the pricing chosen (boards without their own) */
        double power_kwh; /* price per kWh of energy (0: included in gpu_hour, as in a cloud) */
        const char *currency;
    } cost;

    bool per_gpu_timeseries; /* write /gpus/..._by_interval matrices */
    sim_time warmup;         /* output.warmup: headline figures exclude [0, warmup) (0 = none) */

    struct conf_doc doc; /* owns the strings above and the file text */
};

/* Load and validate. On failure returns a negative code, err filled, sc released. */
int scenario_load(struct scenario *sc, const char *path, struct conf_err *err);

/* Same from text (tests). name is used in messages. */
int scenario_load_string(struct scenario *sc, const char *name, const char *text,
                         struct conf_err *err);

/*
 * Same, with the overrides sets[0..nsets) ("key.path=value", sim/override.h)
 * applied to the parsed tree before validation: a bad override gets the
 * message the same value in the file would, with "--set key.path=value:" in
 * place of "file:line:col:". text may be NULL (then the file at path is read).
 */
int scenario_load_set(struct scenario *sc, const char *path, const char *text,
                      const char *const *sets, size_t nsets, struct conf_err *err);

void scenario_release(struct scenario *sc);

/* How pool i's cards are shared: whole cards (exclusive), its own mode, or the cluster's. */
static inline enum share_mode scenario_pool_mode(const struct scenario *sc, uint32_t i)
{
    const struct pool_cfg *p = &sc->pools[i];
    return p->whole ? SHARE_EXCLUSIVE : p->own_mode ? p->mode : sc->sharing;
}

/* Whether some pool's cards are shared by mode m (the single-pool form: the cluster's). */
static inline bool scenario_uses(const struct scenario *sc, enum share_mode m)
{
    if (!sc->npools)
        return sc->sharing == m;
    for (uint32_t i = 0; i < sc->npools; i++)
        if (scenario_pool_mode(sc, i) == m)
            return true;
    return false;
}

/*
 * For a policy's parse: 0 when every pool's mode is in ok (a bit per enum share_mode;
 * whole cards are SHARE_EXCLUSIVE), else -EINVAL with err at policy.name (p may be NULL)
 * saying which pools share how and why (the policy's reason) it does not model them.
 */
int scenario_refuse_modes(const struct scenario *sc, const struct conf_node *p, uint32_t ok,
                          const char *why, struct conf_err *err);

#define SHARE_BIT(m) (1u << (m))

/* Cards in the cluster: Σ over pools of nodes × gpus_per_node. */
static inline uint32_t scenario_gpus(const struct scenario *sc)
{
    if (!sc->npools)
        return sc->nodes * sc->gpus_per_node;
    uint32_t n = 0;
    for (uint32_t i = 0; i < sc->npools; i++)
        n += sc->pools[i].nodes * sc->pools[i].gpus_per_node;
    return n;
}

#endif
