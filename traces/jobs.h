/*
 * jobs.h — training job logs as job_source streams (traces/source.h).
 *
 * Adapters: Alibaba GPU 2023 openb pod list, Alibaba PAI 2020 task table
 * (headerless), Helios / Acme cluster_log, and a generic CSV with a column
 * mapping (the schema `tidesim traces convert` writes). Each reads its file
 * through csvstream one record at a time.
 *
 * Order: jobs come out in non-decreasing submit time. A log that is out of
 * order by at most `reorder_window` rows is sorted on the fly (a heap of that
 * many jobs); anything worse is the error
 * "PATH:LINE: column 'C': submit time goes backwards ('X' after 'Y' at line N)".
 *
 * Rows that are not training work are filtered, not errors, and counted in
 * job_stats: CPU-only rows of logs that mix CPU and GPU jobs (openb num_gpu 0,
 * Helios/Acme gpu_num 0, PAI plan_gpu 0) and rows that never ran (openb
 * Pending pods, PAI Running/Waiting tasks, zero-duration cancelled jobs).
 * In the generic format a zero-GPU job is an error.
 *
 * Outcomes: failed and cancelled jobs keep that outcome and their observed run
 * time as `work` (they are replayed, not counted as completed work); openb LS
 * pods (latency-sensitive services) are JOB_LOG_SERVICE.
 */
#ifndef TIDESIM_JOBS_H
#define TIDESIM_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/source.h"
#include "traces/tfield.h"

struct job_trace_opts {
    int32_t tz_s;                  /* zone of wall-clock stamps without one, s east of UTC */
    const char *origin;            /* submit time mapped to t = 0; NULL = default */
    sim_time offset;               /* µs added to every submit time */
    sim_time clip_start, clip_end; /* keep submits in [start, end); end 0 = no end */
    size_t reorder_window;         /* rows of disorder tolerated (0 = must be sorted) */
    bool skip_bad;                 /* skip malformed rows instead of failing */
};

/* Defaults: UTC, default origin (0 for numeric stamps, local midnight of the first row's day
 * for wall clock), no offset, no clip, strict order, fail on bad rows. */
void job_trace_opts_init(struct job_trace_opts *o);

struct job_stats {
    uint64_t rows;      /* data rows read */
    uint64_t emitted;   /* jobs returned by next() */
    uint64_t skipped;   /* malformed rows skipped (skip_bad) */
    uint64_t cpu_only;  /* filtered: no GPU requested */
    uint64_t never_ran; /* filtered: no run time in the log */
    uint64_t clipped;   /* dropped by clip_start */
};

/* Generic job CSV column mapping; NULL columns are absent. */
struct job_csv_map {
    const char *id_col;
    const char *submit_col; /* required */
    enum tfield_unit submit_unit;
    const char *duration_col;       /* required */
    enum tfield_unit duration_unit; /* numeric units only */
    const char *gpus_col;           /* whole GPUs; one of gpus/fraction/mig is required */
    const char *fraction_col;       /* fraction of one GPU, (0, 1] */
    const char *mig_col;            /* MIG profile name, e.g. 3g.40gb */
    const char *priority_col;
    const char *queue_col;
    const char *params_col;  /* model size, billions of parameters */
    const char *outcome_col; /* completed | failed | cancelled | service */
};

/* The mapping of the generic schema written by convert (docs/traces.md). */
void job_csv_map_generic(struct job_csv_map *m);

/* Constructors: a source the caller owns, or NULL with err filled (file, header, options). */
struct job_source *jobs_openb_create(const char *path, const struct job_trace_opts *o,
                                     struct trace_err *err);
struct job_source *jobs_pai_task_create(const char *path, const struct job_trace_opts *o,
                                        struct trace_err *err);
struct job_source *jobs_helios_create(const char *path, const struct job_trace_opts *o,
                                      struct trace_err *err);
struct job_source *jobs_csv_create(const char *path, const struct job_csv_map *m,
                                   const struct job_trace_opts *o, struct trace_err *err);

/* Counters so far; zeros for sources not made here. */
void jobs_stats(const struct job_source *src, struct job_stats *st);

/* Message of the first skipped row ("" if none). */
const char *jobs_first_skip(const struct job_source *src);

/* Whether `name` is an A100/H100 MIG profile (1g.5gb ... 7g.80gb, and the 1g "+me" variants). */
bool jobs_mig_profile_known(const char *name);

/* "completed", "failed", "cancelled", "service". */
const char *jobs_outcome_name(enum job_log_outcome o);

#endif
