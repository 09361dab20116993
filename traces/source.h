/*
 * source.h — streams of inference arrivals and training job submissions.
 *
 * Room traces/ (workload sources): includes only sim/core/ of ours; knows
 * no simulation. Rule: docs/architecture.md.
 *
 * The simulator pulls records one at a time, in non-decreasing time order,
 * from a source: a synthetic generator or a trace reader. A source never holds
 * the whole trace in memory. Errors carry the file and line of the offending
 * record: "traces/jobs.csv:118: column 'num_gpu': expected a positive integer, got 'x'".
 *
 * Lifecycle: *_create() returns a source the caller owns; destroy(NULL) is a no-op.
 */
#ifndef TIDESIM_SOURCE_H
#define TIDESIM_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/simtime.h"

struct trace_err {
    char msg[512];
};

/*
 * Limits every reader enforces on the values it takes from a file (a value
 * outside them is a malformed record: "PATH:LINE: column 'X': expected ...").
 * Times and durations: within ±SIM_TIME_LIMIT (100 years, sim/core/simtime.h),
 * before and after the origin, offset and loop shift are applied.
 */
#define JOB_MAX_GPUS     65536u      /* GPUs one job may request */
#define JOB_MIN_FRACTION 0.001       /* smallest fraction of a GPU (1 milli-GPU) */
#define JOB_MAX_PARAMS_B 1e6         /* model size, billions of parameters */
#define TRACE_MAX_TOKENS 10000000u   /* prompt or output tokens of one request */
#define TRACE_MAX_RATE   1e6         /* req/s of one ServeGen client window */
#define TRACE_MAX_COUNT  1000000000u /* requests in one per-interval count row */

/* One inference request arrival. Tokens are 0 when the source does not know them. */
struct arrival {
    sim_time t; /* µs since the run's t = 0 */
    uint32_t in_tokens, out_tokens;
};

struct arrival_source;

struct arrival_source_ops {
    /* 0 and *out filled; 1 at end of stream; negative error code with err filled. */
    int (*next)(struct arrival_source *src, struct arrival *out, struct trace_err *err);
    void (*destroy)(struct arrival_source *src);
    /* Optional (NULL: next() in a loop): arrival_source_fill() in one call. */
    int (*fill)(struct arrival_source *src, sim_time *t, uint32_t max, uint32_t *n,
                struct trace_err *err);
};

struct arrival_source {
    const struct arrival_source_ops *ops;
};

static inline int arrival_source_next(struct arrival_source *src, struct arrival *out,
                                      struct trace_err *err)
{
    return src->ops->next(src, out, err);
}

/*
 * Draw up to max arrival times into t[0..*n). Returns 0 with *n == max; 1 at
 * end of stream (*n < max times drawn before it); or a negative error code
 * with err filled (*n times drawn before it). The times are those next()
 * would give one by one: drawing in chunks changes nothing but the cost.
 */
static inline int arrival_source_fill(struct arrival_source *src, sim_time *t, uint32_t max,
                                      uint32_t *n, struct trace_err *err)
{
    if (src->ops->fill)
        return src->ops->fill(src, t, max, n, err);
    struct arrival a;
    for (*n = 0; *n < max; (*n)++) {
        int rc = src->ops->next(src, &a, err);
        if (rc)
            return rc;
        t[*n] = a.t;
    }
    return 0;
}

static inline void arrival_source_destroy(struct arrival_source *src)
{
    if (src)
        src->ops->destroy(src);
}

/* How a job ended in the log it was read from (synthetic jobs: JOB_LOG_COMPLETED). */
enum job_log_outcome { JOB_LOG_COMPLETED, JOB_LOG_FAILED, JOB_LOG_CANCELLED, JOB_LOG_SERVICE };

/* What the scheduler sees of a training job (the request), plus its true run time. */
struct job_spec {
    uint64_t id;
    sim_time submit;      /* µs since t = 0 */
    sim_time work;        /* run time at full speed on its request, µs (> 0) */
    uint32_t gpus;        /* whole GPUs requested (>= 1), or 1 with gpu_fraction < 1 */
    double gpu_fraction;  /* 1.0 for whole GPUs; (0, 1) for fractional pods */
    char mig_profile[16]; /* "" unless the job asks for a MIG slice, e.g. "3g.40gb" */
    int32_t priority;
    char queue[32];  /* "" = default queue */
    double params_b; /* model size, billions of parameters; 0 = unknown */
    enum job_log_outcome outcome;
    char gpu_type[32]; /* the log's GPU type (openb gpu_spec, PAI gpu_type); "" = none */
    int64_t line;      /* its line in the log (0: not from a file), for messages */
};

struct job_source;

struct job_source_ops {
    /* 0 and *out filled; 1 at end of stream; negative error code with err filled. */
    int (*next)(struct job_source *src, struct job_spec *out, struct trace_err *err);
    void (*destroy)(struct job_source *src);
};

struct job_source {
    const struct job_source_ops *ops;
};

static inline int job_source_next(struct job_source *src, struct job_spec *out,
                                  struct trace_err *err)
{
    return src->ops->next(src, out, err);
}

static inline void job_source_destroy(struct job_source *src)
{
    if (src)
        src->ops->destroy(src);
}

#endif
