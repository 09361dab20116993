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

#include "sim/conf.h"
#include "sim/simtime.h"
#include "traces/synth.h"

struct gpu_spec;

enum sharing_mode { SHARE_EXCLUSIVE, SHARE_MIG, SHARE_TIMESLICE, SHARE_MPS };
enum svc_dist { DIST_DETERMINISTIC, DIST_EXPONENTIAL, DIST_LOGNORMAL };

struct service_cfg {
    const char *name;
    /* Batch latency a + b·batch on a full GPU (models.md §4.2), times a jitter of mean 1. */
    double a_ms, b_ms;
    enum svc_dist dist;
    double cv;           /* lognormal jitter coefficient of variation */
    uint32_t max_batch;  /* dynamic batching: largest batch */
    sim_time max_wait;   /* dynamic batching: longest wait of the oldest request */
    sim_time slo;        /* latency target, µs */
    double slo_quantile; /* e.g. 0.99: the SLO holds if that quantile <= slo */
    uint32_t replicas;   /* replicas the policy starts with (0 = policy decides) */
    uint32_t min_replicas, max_replicas;
    uint64_t max_queue; /* waiting requests beyond this are dropped */
    struct rate_profile arrivals;
};

struct training_cfg {
    bool synthetic; /* jobs from the synthetic generator */
    struct job_mix mix;
    uint32_t backlog; /* jobs already queued at t = 0 (drawn from the same mix) */
};

struct policy_cfg {
    const char *name; /* CLI name: dedicated, ... */
    uint32_t inference_gpus;
};

struct scenario {
    const char *name;
    const char *path;
    uint64_t seed;
    sim_time duration;
    sim_time sample_interval;
    int tz_offset_min; /* minutes east of UTC of the local time used for t = 0 */

    const char *gpu;             /* GPU model name, e.g. a100-sxm4-80gb */
    const struct gpu_spec *spec; /* its specification (models/gpu.h) */
    uint32_t nodes, gpus_per_node;
    enum sharing_mode sharing;

    struct service_cfg *services;
    size_t nservices;

    struct training_cfg training;
    struct policy_cfg policy;

    bool per_gpu_timeseries; /* write /gpus/..._by_interval matrices */

    struct conf_doc doc; /* owns the strings above and the file text */
};

/* Load and validate. On failure returns a negative code, err filled, sc released. */
int scenario_load(struct scenario *sc, const char *path, struct conf_err *err);

/* Same from text (tests). name is used in messages. */
int scenario_load_string(struct scenario *sc, const char *name, const char *text,
                         struct conf_err *err);

void scenario_release(struct scenario *sc);

static inline uint32_t scenario_gpus(const struct scenario *sc)
{
    return sc->nodes * sc->gpus_per_node;
}

const char *sharing_mode_name(enum sharing_mode m);

#endif
