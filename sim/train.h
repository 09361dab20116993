/*
 * train.h — training jobs: submission, queueing, rate-based progress,
 * periodic checkpoints, preemption and restart.
 *
 * Training progress is a rate. A running job accumulates work (µs of run time
 * at full speed) at `rate`, the speed of its slowest gang member (a fraction
 * of a full card set by its allocation: whole card, MIG slice, time-slice or
 * MPS share). One event per job marks its next milestone (completion, the end
 * of recomputing lost work, the next periodic checkpoint, the end of a save or
 * restore) and is re-planned whenever the rate changes (SimGrid's "next
 * occurring event").
 *
 * Work bookkeeping: done_us is the progress; ckpt_us the progress saved by the
 * last checkpoint; high_us the most progress ever reached. After a preemption
 * or fault the job restarts from ckpt_us: work in [ckpt_us, high_us) is done
 * again and its card time is accounted as recompute, not useful.
 *
 * Phases while RUNNING: RESTORE (load + warm-up; only after a preemption or a
 * fault) → RUN ⇄ SAVE (every `interval` of running) → done. A preemption is
 * graceful (a checkpoint within the grace period; when the save does not fit,
 * the job is killed at the end of the grace period and the work since its
 * last checkpoint is lost) or hard (lost at once). States: QUEUED → RUNNING →
 * DONE, RUNNING → QUEUED (preempted, requeued), QUEUED → REJECTED (can never
 * fit), RUNNING → FAILED (OOM-killed at start).
 */
#ifndef TIDESIM_TRAIN_H
#define TIDESIM_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "models/ckpt.h"
#include "sim/cluster.h"
#include "sim/core/engine.h"
#include "traces/source.h"

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_REJECTED, JOB_FAILED };
enum job_phase { PHASE_NONE, PHASE_RESTORE, PHASE_RUN, PHASE_SAVE, PHASE_STOP };

struct train_cfg {
    sim_time interval;           /* periodic checkpoint interval (rule EVERY); 0 = none */
    enum ckpt_rule rule;         /* every `interval`, or Young's / Daly's formula per job */
    double mtbf_s;               /* mean time between interruptions, for Young / Daly */
    double fault_rate_per_gpu_h; /* > 0: a job's mtbf is 3600 / (this × its GPUs) s instead */
    /* mtbf: faults — the per-tenant fault rate (cluster.faults): once a job is placed, its
     * mtbf is 3600 / Σ over its cards of this × (the card's slots on a time-sliced or MPS
     * card, else 1), each card by its own pool (trainer_start); 0: not from faults. */
    double fault_rate_per_tenant_h;
    double state_gb_per_gpu; /* checkpoint state when the model size is unknown, GB */
    struct ckpt_knobs knobs; /* bandwidths, fixed costs, warm-up, grace */
    bool ckpt_per_gpu;       /* every member writes / reads its shard at the bandwidths
                                (sharded checkpoints); false: one writer per job */
    double mem_gib_per_gpu;  /* memory each member of a whole-GPU job allocates, GiB */
    double sm_cap;           /* MPS active thread percentage / 100 for training */
    double demand;           /* fraction of the SMs its kernels fill alone (MPS), (0, 1] */
};

/* Defaults: 30 min interval, 20 GB/GPU of state, models/ckpt.h knobs, 40 GiB per GPU. */
void train_cfg_init(struct train_cfg *c);

struct job {
    struct job_spec spec;
    enum job_state state;
    enum job_phase phase;
    sim_time start; /* first start, -1 if never started */
    sim_time end;   /* completion, -1 if not done */
    double done_us, ckpt_us, high_us;
    double rate;    /* current speed, fraction of full speed */
    sim_time since; /* time done_us was last brought up to date */
    uint32_t *gpus; /* cards while running (spec.gpus entries) */
    uint32_t *tids; /* tenants while running */
    struct evq_handle ev;
    sim_time phase_end;                   /* end of RESTORE / SAVE / STOP */
    sim_time next_save;                   /* next periodic checkpoint while RUN */
    bool stop_after;                      /* preempted: leave when the save ends */
    bool updating;                        /* ignore speed callbacks while changing own tenants */
    double save_s, restore_s, interval_s; /* this job's checkpoint costs */
    uint32_t preemptions, restarts, checkpoints;
    double save_us, restore_us; /* wall time spent saving / restoring */
    double lost_us;             /* work lost to preemptions and faults, µs at full speed */
    sim_time queued_since;
    double queue_us; /* total time queued, all waits */
    /* Pools it may run on / prefers (bit i = pool i, sim/pool_cfg.h); POOL_ALL: any. Set at
     * submission (sim.c); trainer_start refuses cards outside pools_allow. */
    uint64_t pools_allow, pools_prefer;
    sim_time seg_since; /* start of the current phase's segment (the segment log) */
    /* A warm start's job (trainer_submit_snapshot): it ran before t = 0 and must first start on
     * node pin_node (UINT32_MAX: anywhere); snap_ckpt: it has a checkpoint to restore. */
    bool snap, snap_ckpt, snap_first; /* snap_first: not yet started */
    uint32_t pin_node;
    double snap_age_us; /* its progress since that checkpoint at t = 0, µs */
};

/*
 * One span of a job on its cards, for the job timeline chart (/job_segments):
 * running, saving a checkpoint, saving in a preemption's grace period, or
 * restoring. Gaps between a job's segments are waits in the queue.
 */
struct train_seg {
    uint32_t job;
    uint8_t kind; /* enum job_phase: PHASE_RUN, PHASE_SAVE, PHASE_STOP, PHASE_RESTORE */
    sim_time t0, t1;
};

/* Segments kept at most (a run with more records the first ones and says so). */
#define TRAIN_MAX_SEGS ((size_t)1 << 22)

typedef void (*trainer_cb)(void *ctx, uint32_t job);

struct trainer {
    struct engine *eng;
    struct cluster *cl;
    struct train_cfg cfg;
    struct job_source *src; /* owned; NULL = no training */
    bool src_done;
    int src_error;
    struct trace_err src_err;
    struct job_spec next; /* drawn, not yet submitted */
    struct evq_handle next_ev;

    struct job *jobs;
    uint32_t njobs, cap;
    uint32_t queued, running, done, rejected, failed;
    double gpu_us_done; /* GPU-µs of work of completed jobs */
    uint64_t preemptions, restarts;

    bool skip_services;        /* drop JOB_LOG_SERVICE records (long-running pods) */
    uint64_t services_skipped; /* records dropped for that */
    struct train_seg *segs;    /* the segment log, in order of their ends */
    size_t nsegs, segcap;
    bool segs_truncated; /* TRAIN_MAX_SEGS reached or out of memory: later segments dropped */
    /* Policy callbacks: a job arrived; a job ended (done or failed); a job is queued again. */
    trainer_cb on_submit, on_finish, on_requeue;
    void *cb_ctx;
};

/* Takes ownership of src (may be NULL). cfg may be NULL (defaults). Returns 0 or -ENOMEM. */
int trainer_init(struct trainer *t, struct engine *eng, struct cluster *cl, struct job_source *src,
                 const struct train_cfg *cfg);
void trainer_release(struct trainer *t);

/*
 * Submit a job now (as if its source had produced it): it is queued and the
 * on_submit callback runs. For what-if tools and tests. Returns the job's
 * index, or a negative code (-ENOMEM, -EINVAL for a job of zero GPUs or work,
 * more than JOB_MAX_GPUS GPUs or more than SIM_TIME_LIMIT of work).
 */
int64_t trainer_submit(struct trainer *t, const struct job_spec *spec);

/*
 * Submit a job that was already running before t = 0 (a warm start,
 * traces/snapshot.h) as trainer_submit does, with spec->work its remaining
 * run time. Its last checkpoint lies ckpt_age_us of progress behind it
 * (ckpt_us = -ckpt_age_us: a loss before its next save costs that much
 * again); has_ckpt: a restart restores that checkpoint (else it only warms
 * up and redoes everything since its start); its first periodic save comes
 * after interval - ckpt_age_us of running. It must first start on node
 * `node` (UINT32_MAX: anywhere; sim_find_gang and the policies' gang finders
 * honour it) within the pools of `pools` (POOL_ALL: any). Only its remaining
 * work counts as work done (gpu_us_done). Returns as trainer_submit.
 */
int64_t trainer_submit_snapshot(struct trainer *t, const struct job_spec *spec, double ckpt_age_us,
                                bool has_ckpt, uint32_t node, uint64_t pools);

/* Schedule the first submission. Call once callbacks are set. */
int trainer_begin(struct trainer *t);

/*
 * The card fraction job j asks for: its gpu_fraction when it is a one-GPU job
 * of a fraction in (0, 1), else 0 (whole cards).
 */
double trainer_job_fraction(const struct job_spec *j);

/*
 * The GPU memory each member of job j asks for and allocates, GiB: on a
 * time-sliced or MPS card a fractional job its fraction of the card
 * (card_gib; the GPU-sharing convention of KAI's gpu-fraction and HAMi's
 * gpumem-percentage), otherwise mem_gib_per_gpu.
 */
double trainer_job_mem_gib(const struct trainer *t, const struct job_spec *j, double card_gib);

/*
 * Start queued job j with one member on each card gpus[0..spec.gpus).
 * Returns 0; 1 when a member was OOM-killed at placement (the job is FAILED,
 * on_finish called); or a negative refusal (-EINVAL: not queued, no GPU, gpus NULL; -EPERM:
 * a card outside the job's pools_allow; the cluster's -EBUSY/-ENOSPC) with nothing changed.
 */
int trainer_start(struct trainer *t, uint32_t j, const uint32_t *gpus);

/*
 * Preempt running job j (graceful or hard, see above); it leaves its cards
 * and is queued again (on_requeue) once the save/grace period is over.
 * Returns 0, or -EINVAL if it is not running.
 */
int trainer_preempt(struct trainer *t, uint32_t j, bool graceful);

/* A fatal fault killed member tenant of job j: hard loss, restart from the last checkpoint. */
void trainer_kill(struct trainer *t, uint32_t j);

/* A member's speed changed: re-plan the job. */
void trainer_on_speed(struct trainer *t, uint32_t j);

/* Mark queued job j as never schedulable. */
void trainer_reject(struct trainer *t, uint32_t j);

/* Bring every running job's done_us up to now (for reports at the end). */
void trainer_sync(struct trainer *t);

#endif
