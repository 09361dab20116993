/*
 * train.h — training jobs: submission, queueing, rate-based progress, completion.
 *
 * Training progress is a rate. A running job accumulates work (µs of run
 * time at full speed) at `rate` (fraction of full speed set by its
 * allocation; a gang runs at its slowest member's rate). Its completion event
 * is planned at now + remaining / rate and re-planned whenever the rate
 * changes (SimGrid's "next occurring event"). Jobs are referred to by index
 * (stable: the array only grows). Which job runs where is the policy's
 * business; the trainer only executes start/finish and keeps the books.
 *
 * States: QUEUED → RUNNING → DONE; QUEUED → REJECTED (can never fit).
 */
#ifndef TIDESIM_TRAIN_H
#define TIDESIM_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/cluster.h"
#include "sim/engine.h"
#include "traces/source.h"

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_REJECTED };

struct job {
    struct job_spec spec;
    enum job_state state;
    sim_time start; /* first start, -1 if never started */
    sim_time end;   /* completion, -1 if not done */
    double done_us; /* work done so far, µs at full speed */
    double rate;    /* current speed, fraction of full speed */
    sim_time since; /* time done_us was last brought up to date */
    uint32_t *gpus; /* cards while running (spec.gpus entries) */
    struct evq_handle fin;
    uint32_t preemptions;
};

struct trainer;
typedef void (*trainer_cb)(void *ctx, uint32_t job);

struct trainer {
    struct engine *eng;
    struct cluster *cl;
    struct job_source *src; /* owned; NULL = no training */
    bool src_done;
    int src_error;
    struct trace_err src_err;
    struct job_spec next; /* drawn, not yet submitted */
    struct evq_handle next_ev;

    struct job *jobs;
    uint32_t njobs, cap;
    uint32_t queued, running, done, rejected;
    double gpu_us_done; /* GPU-µs of work of completed jobs */

    bool skip_services;        /* drop JOB_LOG_SERVICE records (long-running pods) */
    uint64_t services_skipped; /* records dropped for that */
    trainer_cb on_submit, on_finish;
    void *cb_ctx;
};

/* Takes ownership of src (may be NULL). Returns 0 or -ENOMEM. */
int trainer_init(struct trainer *t, struct engine *eng, struct cluster *cl, struct job_source *src);
void trainer_release(struct trainer *t);

/* Schedule the first submission. Call once callbacks are set. */
int trainer_begin(struct trainer *t);

/*
 * Start queued job j on the given cards (count = spec.gpus) at rate.
 * Returns 0; -EINVAL if j is not queued or a card is taken (nothing changed).
 */
int trainer_start(struct trainer *t, uint32_t j, const uint32_t *gpus, double rate);

/* Mark queued job j as never schedulable. */
void trainer_reject(struct trainer *t, uint32_t j);

/* Bring every running job's done_us up to now (for reports at the end). */
void trainer_sync(struct trainer *t);

#endif
