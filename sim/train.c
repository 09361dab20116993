/* train.c — training jobs: rate-based progress, checkpoints, preemption, restart. */
#include "sim/train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_submit_ev(void *ctx, uint64_t arg);
static void on_job_ev(void *ctx, uint64_t arg);

void train_cfg_init(struct train_cfg *c)
{
    memset(c, 0, sizeof(*c));
    /* Check-N-Run's default interval (Eisenman et al., NSDI '22). */
    c->interval = 30 * SIM_MIN;
    c->mtbf_s = 8 * 3600;
    /* Knob: 20 GB of checkpoint state per GPU when the model size is unknown. */
    c->state_gb_per_gpu = 20;
    ckpt_knobs_init(&c->knobs);
    /* Knob: memory a training member allocates (half an 80 GB card). */
    c->mem_gib_per_gpu = 40;
    c->sm_cap = 1.0;
    c->demand = 1.0;
}

/* Stop the run on error rc; msg (if not NULL) becomes the run's message. */
static void fail(struct trainer *t, int rc, const char *msg)
{
    t->src_done = true;
    t->src_error = rc;
    t->eng->stop = true;
    if (msg)
        snprintf(t->src_err.msg, sizeof(t->src_err.msg), "%s", msg);
}

static void fail_oom(struct trainer *t, const char *what)
{
    char msg[sizeof(t->src_err.msg)];
    snprintf(msg, sizeof(msg), "training: out of memory %s (%u jobs held)", what, t->njobs);
    fail(t, -ENOMEM, msg);
}

/* A source's job the trainer cannot hold: no GPU, too many GPUs, no run time. */
static bool spec_bad(const struct job_spec *j)
{
    return j->gpus == 0 || j->gpus > JOB_MAX_GPUS || j->work <= 0 || j->work > SIM_TIME_LIMIT;
}

static int pull_next(struct trainer *t)
{
    int rc;
    do {
        rc = job_source_next(t->src, &t->next, &t->src_err);
        if (rc == 0 && t->skip_services && t->next.outcome == JOB_LOG_SERVICE)
            t->services_skipped++;
        else
            break;
    } while (1);
    return rc;
}

/* Draw the next job from the source and schedule its submission. */
static void schedule_next(struct trainer *t)
{
    if (!t->src || t->src_done)
        return;
    int rc = pull_next(t);
    if (rc == 1) {
        t->src_done = true;
        return;
    }
    if (rc < 0) {
        fail(t, rc, t->src_err.msg[0] ? NULL : "training: the job source failed");
        return;
    }
    if (spec_bad(&t->next)) {
        char msg[sizeof(t->src_err.msg)];
        snprintf(msg, sizeof(msg),
                 "training job %llu: expected 1..%u GPUs and a run time of 1 us..100 years, got "
                 "%u GPUs and %lld us",
                 (unsigned long long)t->next.id, JOB_MAX_GPUS, t->next.gpus,
                 (long long)t->next.work);
        fail(t, -EINVAL, msg);
        return;
    }
    sim_time at = t->next.submit < t->eng->now ? t->eng->now : t->next.submit;
    if (engine_at(t->eng, at, on_submit_ev, t, 0, &t->next_ev))
        fail_oom(t, "in the event queue");
}

/* Checkpoint costs of a job, from its model size or the per-GPU state knob. */
static void job_costs(const struct trainer *t, struct job *j)
{
    const struct train_cfg *c = &t->cfg;
    double bytes = j->spec.params_b > 0 ? ckpt_state_bytes(&c->knobs, j->spec.params_b * 1e9)
                                        : c->state_gb_per_gpu * 1e9 * j->spec.gpus;
    /* per_gpu: each member moves its shard in parallel; per_job: one stream for the job. */
    unsigned ranks = c->ckpt_per_gpu ? j->spec.gpus : 1;
    j->save_s = ckpt_save_sharded_s(&c->knobs, bytes, ranks);
    j->restore_s = ckpt_restore_sharded_s(&c->knobs, bytes, ranks);
    double mtbf =
        c->fault_rate_per_gpu_h > 0 ? 3600.0 / (c->fault_rate_per_gpu_h * j->spec.gpus) : c->mtbf_s;
    j->interval_s = ckpt_interval(c->rule, sim_time_to_sec(c->interval), j->save_s, mtbf);
}

/* Add spec as a queued job; returns its index or a negative code. */
static int64_t add_job(struct trainer *t, const struct job_spec *spec)
{
    if (t->njobs == t->cap) {
        if (t->cap > UINT32_MAX / 2)
            return -ENOMEM;
        uint32_t cap = t->cap ? 2 * t->cap : 256;
        struct job *j = realloc(t->jobs, cap * sizeof(*j));
        if (!j)
            return -ENOMEM;
        t->jobs = j;
        t->cap = cap;
    }
    uint32_t id = t->njobs;
    struct job *j = &t->jobs[id];
    memset(j, 0, sizeof(*j));
    j->spec = *spec;
    j->state = JOB_QUEUED;
    j->start = -1;
    j->end = -1;
    j->queued_since = t->eng->now;
    j->pools_allow = j->pools_prefer = POOL_ALL;
    j->pin_node = UINT32_MAX;
    uint32_t n = j->spec.gpus ? j->spec.gpus : 1;
    j->gpus = calloc(n, sizeof(*j->gpus));
    j->tids = calloc(n, sizeof(*j->tids));
    if (!j->gpus || !j->tids) {
        free(j->gpus);
        free(j->tids);
        return -ENOMEM;
    }
    job_costs(t, j);
    t->njobs++;
    t->queued++;
    return id;
}

int64_t trainer_submit(struct trainer *t, const struct job_spec *spec)
{
    if (spec_bad(spec))
        return -EINVAL;
    int64_t id = add_job(t, spec);
    if (id >= 0 && t->on_submit)
        t->on_submit(t->cb_ctx, (uint32_t)id);
    return id;
}

int64_t trainer_submit_snapshot(struct trainer *t, const struct job_spec *spec, double ckpt_age_us,
                                bool has_ckpt, uint32_t node, uint64_t pools)
{
    if (spec_bad(spec) || !(ckpt_age_us >= 0))
        return -EINVAL;
    int64_t id = add_job(t, spec);
    if (id < 0)
        return id;
    struct job *j = &t->jobs[id];
    j->snap = j->snap_first = true;
    j->snap_ckpt = has_ckpt;
    j->snap_age_us = ckpt_age_us;
    j->ckpt_us = -ckpt_age_us;
    j->pin_node = node;
    j->pools_allow = pools;
    if (t->on_submit)
        t->on_submit(t->cb_ctx, (uint32_t)id);
    return id;
}

static void on_submit_ev(void *ctx, uint64_t arg)
{
    struct trainer *t = ctx;
    (void)arg;
    int64_t id = add_job(t, &t->next);
    if (id < 0) {
        fail_oom(t, "holding the training jobs");
        return;
    }
    schedule_next(t);
    if (t->on_submit)
        t->on_submit(t->cb_ctx, (uint32_t)id);
}

/* Progress up to now at the current rate (RUN phase only). */
static void advance(struct trainer *t, struct job *j)
{
    sim_time now = t->eng->now;
    if (j->phase != PHASE_RUN)
        return; /* since marks the start of a save/restore phase */
    if (now > j->since) {
        j->done_us += (double)(now - j->since) * j->rate;
        if (j->done_us > (double)j->spec.work)
            j->done_us = (double)j->spec.work;
        if (j->done_us > j->high_us)
            j->high_us = j->done_us;
    }
    j->since = now;
}

static void set_members(struct trainer *t, struct job *j, bool active, enum use_state st)
{
    j->updating = true;
    for (uint32_t i = 0; i < j->spec.gpus; i++)
        cluster_set_active(t->cl, j->tids[i], t->eng->now, active, st);
    j->updating = false;
}

/* The gang's work rate: its slowest member's card share times its board's training speed. */
static double gang_rate(const struct trainer *t, const struct job *j)
{
    double r = INFINITY;
    for (uint32_t i = 0; i < j->spec.gpus; i++) {
        double s =
            cluster_tenant_speed(t->cl, j->tids[i]) * cluster_card_train_speed(t->cl, j->gpus[i]);
        if (s < r)
            r = s;
    }
    return isfinite(r) ? r : 0;
}

/* Members faster than the gang wait for the slowest: cap what they count as work (a card
 * share: the gang's rate over the member's board speed). */
static void cap_members(struct trainer *t, struct job *j, double cap)
{
    if (j->spec.gpus < 2)
        return;
    j->updating = true;
    for (uint32_t i = 0; i < j->spec.gpus; i++)
        cluster_set_cap(t->cl, j->tids[i], t->eng->now,
                        cap / cluster_card_train_speed(t->cl, j->gpus[i]));
    j->updating = false;
}

static void schedule(struct trainer *t, struct job *j, sim_time at)
{
    engine_cancel(t->eng, &j->ev);
    if (at < t->eng->now)
        at = t->eng->now;
    if (engine_at(t->eng, at, on_job_ev, t, (uint64_t)(j - t->jobs), &j->ev))
        fail_oom(t, "in the event queue");
}

static sim_time after(sim_time now, double us)
{
    if (!(us < 4e18))
        return SIM_TIME_MAX;
    return now + (sim_time)ceil(us);
}

/* Plan the next RUN milestone: completion, end of recompute, or the next save. */
static void plan_run(struct trainer *t, struct job *j)
{
    sim_time now = t->eng->now;
    j->rate = gang_rate(t, j);
    enum use_state st = j->done_us < j->high_us ? USE_RECOMPUTE : USE_USEFUL;
    if (t->cl->tenants[j->tids[0]].state != st) {
        set_members(t, j, true, st);
        j->rate = gang_rate(t, j);
    }
    cap_members(t, j, j->rate);
    if (!(j->rate > 0)) {
        engine_cancel(t->eng, &j->ev);
        return; /* stalled until a speed change */
    }
    sim_time at = after(now, ((double)j->spec.work - j->done_us) / j->rate);
    if (j->done_us < j->high_us) {
        sim_time h = after(now, (j->high_us - j->done_us) / j->rate);
        if (h < at)
            at = h;
    }
    if (j->interval_s > 0 && j->next_save < at)
        at = j->next_save;
    schedule(t, j, at);
}

/* Close the job's current segment (if it has one) and start the next one now. */
static void seg_switch(struct trainer *t, struct job *j)
{
    sim_time now = t->eng->now;
    if (j->phase != PHASE_NONE && now > j->seg_since && !t->segs_truncated) {
        if (t->nsegs == t->segcap) {
            size_t cap = t->segcap ? 2 * t->segcap : 256;
            struct train_seg *p = cap <= TRAIN_MAX_SEGS ? realloc(t->segs, cap * sizeof(*p)) : NULL;
            if (!p) {
                t->segs_truncated = true;
                j->seg_since = now;
                return;
            }
            t->segs = p;
            t->segcap = cap;
        }
        t->segs[t->nsegs++] =
            (struct train_seg){(uint32_t)(j - t->jobs), (uint8_t)j->phase, j->seg_since, now};
    }
    j->seg_since = now;
}

static void enter_run(struct trainer *t, struct job *j)
{
    seg_switch(t, j);
    j->phase = PHASE_RUN;
    j->since = t->eng->now;
    double until = j->interval_s * 1e6;
    if (j->snap_first) { /* a warm start's first run: its save is due interval - age after */
        j->snap_first = false;
        until = until > j->snap_age_us ? until - j->snap_age_us : 0;
    }
    j->next_save = j->interval_s > 0 ? after(t->eng->now, until) : SIM_TIME_MAX;
    set_members(t, j, true, j->done_us < j->high_us ? USE_RECOMPUTE : USE_USEFUL);
    plan_run(t, j);
}

static void enter_phase(struct trainer *t, struct job *j, enum job_phase ph, enum use_state st,
                        double seconds)
{
    seg_switch(t, j);
    j->phase = ph;
    j->since = t->eng->now;
    j->phase_end = after(t->eng->now, seconds * 1e6);
    cap_members(t, j, -1); /* saves and restores use every member fully */
    set_members(t, j, true, st);
    schedule(t, j, j->phase_end);
}

/* Leave the cards. */
static void release(struct trainer *t, struct job *j)
{
    engine_cancel(t->eng, &j->ev);
    j->updating = true;
    for (uint32_t i = 0; i < j->spec.gpus; i++)
        cluster_remove(t->cl, j->tids[i], t->eng->now);
    j->updating = false;
    seg_switch(t, j);
    j->phase = PHASE_NONE;
    j->rate = 0;
    t->running--;
}

static void requeue(struct trainer *t, struct job *j)
{
    release(t, j);
    j->state = JOB_QUEUED;
    j->stop_after = false;
    j->queued_since = t->eng->now;
    t->queued++;
    if (t->on_requeue)
        t->on_requeue(t->cb_ctx, (uint32_t)(j - t->jobs));
}

/* Lose the work since the last checkpoint. */
static void lose(struct job *j)
{
    j->lost_us += j->done_us - j->ckpt_us;
    j->done_us = j->ckpt_us;
}

static void finish(struct trainer *t, struct job *j)
{
    j->done_us = (double)j->spec.work;
    j->end = t->eng->now;
    release(t, j);
    j->state = JOB_DONE;
    t->done++;
    t->gpu_us_done += (double)j->spec.work * j->spec.gpus; /* warm: only what was left at t = 0 */
    if (t->on_finish)
        t->on_finish(t->cb_ctx, (uint32_t)(j - t->jobs));
}

static void on_job_ev(void *ctx, uint64_t arg)
{
    struct trainer *t = ctx;
    struct job *j = &t->jobs[arg];
    sim_time now = t->eng->now;
    j->ev.slot = 0;

    switch (j->phase) {
    case PHASE_RESTORE:
        j->restore_us += (double)(now - j->since);
        enter_run(t, j);
        break;
    case PHASE_RUN:
        advance(t, j);
        if (j->done_us >= (double)j->spec.work - 1e-6) {
            finish(t, j);
        } else if (j->interval_s > 0 && now >= j->next_save) {
            enter_phase(t, j, PHASE_SAVE, USE_CKPT, j->save_s);
        } else {
            plan_run(t, j);
        }
        break;
    case PHASE_SAVE:
        j->save_us += (double)(now - j->since);
        j->ckpt_us = j->done_us;
        j->checkpoints++;
        if (j->stop_after)
            requeue(t, j);
        else
            enter_run(t, j);
        break;
    case PHASE_STOP:
        /* Killed at the end of the grace period: the save did not finish. */
        j->save_us += (double)(now - j->since);
        lose(j);
        requeue(t, j);
        break;
    case PHASE_NONE:
    default:
        break;
    }
}

int trainer_init(struct trainer *t, struct engine *eng, struct cluster *cl, struct job_source *src,
                 const struct train_cfg *cfg)
{
    memset(t, 0, sizeof(*t));
    t->eng = eng;
    t->cl = cl;
    t->src = src;
    t->src_done = src == NULL;
    if (cfg)
        t->cfg = *cfg;
    else
        train_cfg_init(&t->cfg);
    return 0;
}

void trainer_release(struct trainer *t)
{
    job_source_destroy(t->src);
    t->src = NULL;
    for (uint32_t i = 0; i < t->njobs; i++) {
        free(t->jobs[i].gpus);
        free(t->jobs[i].tids);
    }
    free(t->jobs);
    t->jobs = NULL;
    t->njobs = 0;
    free(t->segs);
    t->segs = NULL;
    t->nsegs = t->segcap = 0;
}

int trainer_begin(struct trainer *t)
{
    schedule_next(t);
    return t->src_error;
}

double trainer_job_fraction(const struct job_spec *j)
{
    return j->gpus == 1 && j->gpu_fraction > 0 && j->gpu_fraction < 1 ? j->gpu_fraction : 0;
}

double trainer_job_mem_gib(const struct trainer *t, const struct job_spec *j, double card_gib)
{
    /* Only on shared cards: exclusive and MIG place a fractional job on a whole card or an
     * instance, which it fills as a whole-GPU member would. */
    bool shared = t->cl->mode == SHARE_TIMESLICE || t->cl->mode == SHARE_MPS;
    double f = shared ? trainer_job_fraction(j) : 0;
    return f > 0 ? f * card_gib : t->cfg.mem_gib_per_gpu;
}

/*
 * Whether a fractional job fills only its fraction of card g's memory: a time-sliced or
 * MPS card, or a whole card of a time-sliced or MPS cluster (as trainer_job_mem_gib); a
 * MIG instance or a whole card elsewhere it fills as a whole-GPU member would. In a
 * mixed fleet (pools of several modes) the card's own mode decides.
 */
static bool fraction_on(const struct cluster *cl, uint32_t g)
{
    enum share_mode m = cluster_card_mode(cl, g);
    bool shared = cl->mode == SHARE_TIMESLICE || cl->mode == SHARE_MPS;
    return m == SHARE_TIMESLICE || m == SHARE_MPS || (m == SHARE_EXCLUSIVE && shared);
}

int trainer_start(struct trainer *t, uint32_t id, const uint32_t *gpus)
{
    if (id >= t->njobs)
        return -EINVAL;
    struct job *j = &t->jobs[id];
    sim_time now = t->eng->now;
    if (j->state != JOB_QUEUED || j->spec.gpus == 0 || !gpus)
        return -EINVAL;
    for (uint32_t i = 0; j->pools_allow != POOL_ALL && i < j->spec.gpus; i++)
        if (gpus[i] >= t->cl->ngpus || !cluster_card_in(t->cl, gpus[i], j->pools_allow))
            return -EPERM; /* a pool its constraints rule out (sim/pool_cfg.h) */
    struct tenant_req req = {
        .kind = TENANT_TRAIN,
        .owner = id,
        .mem_gib = trainer_job_mem_gib(t, &j->spec, t->cl->mem_gib),
        .fraction = trainer_job_fraction(&j->spec),
        .sm_cap = t->cfg.sm_cap,
        .demand = t->cfg.demand,
        .mig_profile = j->spec.mig_profile[0] ? j->spec.mig_profile : NULL,
    };
    bool frac = trainer_job_fraction(&j->spec) > 0;
    for (uint32_t i = 0; i < j->spec.gpus; i++) {
        req.member = i;
        if (frac && gpus[i] < t->cl->ngpus)
            req.mem_gib = fraction_on(t->cl, gpus[i])
                              ? trainer_job_fraction(&j->spec) * t->cl->mem_gib
                              : t->cfg.mem_gib_per_gpu;
        int rc = cluster_place(t->cl, gpus[i], now, &req, &j->tids[i]);
        if (rc != 0) {
            j->updating = true;
            for (uint32_t k = 0; k < i; k++)
                cluster_remove(t->cl, j->tids[k], now);
            j->updating = false;
            if (rc == -ENOMEM) /* the run stops: the job is not left waiting for nothing */
                fail_oom(t, "placing a job on its cards");
            if (rc < 0)
                return rc;
            /* OOM-killed at its first allocation: the job fails. */
            j->state = JOB_FAILED;
            j->end = now;
            t->queued--;
            t->failed++;
            if (t->on_finish)
                t->on_finish(t->cb_ctx, id);
            return 1;
        }
        j->gpus[i] = gpus[i];
    }
    if (t->cfg.fault_rate_per_tenant_h > 0) {
        /* mtbf: faults, from the cards it got: a member dies of its own faults and, on a
         * time-sliced or MPS card, of its card-mates' (a full card: its pool's slots). */
        double mult = 0, first = -1; /* Σ of its cards' multiplicities; the first's */
        bool alike = true;
        for (uint32_t i = 0; i < j->spec.gpus; i++) {
            enum share_mode m = cluster_card_mode(t->cl, gpus[i]);
            bool shared = m == SHARE_TIMESLICE || m == SHARE_MPS;
            double k = shared ? (double)cluster_card_slots(t->cl, gpus[i]) : 1;
            alike = alike && (first < 0 || k == first);
            first = first < 0 ? k : first;
            mult += k;
        }
        /* Cards alike: (rate × k) × GPUs, the form the submission estimate uses. */
        double rate = alike ? t->cfg.fault_rate_per_tenant_h * first * j->spec.gpus
                            : t->cfg.fault_rate_per_tenant_h * mult;
        j->interval_s =
            ckpt_interval(t->cfg.rule, sim_time_to_sec(t->cfg.interval), j->save_s, 3600.0 / rate);
    }
    j->state = JOB_RUNNING;
    j->queue_us += (double)(now - j->queued_since);
    if (j->start < 0)
        j->start = now;
    t->queued--;
    t->running++;
    if (j->preemptions + j->restarts > 0) {
        /* Back from a preemption or fault: load the checkpoint (or just warm up). */
        bool ckpt = j->ckpt_us > 0 || (j->snap && (j->snap_ckpt || j->ckpt_us > -j->snap_age_us));
        double s = ckpt ? j->restore_s : t->cfg.knobs.warmup_s;
        enter_phase(t, j, PHASE_RESTORE, USE_RESTORE, s);
    } else {
        enter_run(t, j);
    }
    return 0;
}

int trainer_preempt(struct trainer *t, uint32_t id, bool graceful)
{
    if (id >= t->njobs || t->jobs[id].state != JOB_RUNNING)
        return -EINVAL;
    struct job *j = &t->jobs[id];
    sim_time now = t->eng->now;
    double grace = t->cfg.knobs.grace_s;
    advance(t, j);
    j->preemptions++;
    t->preemptions++;
    switch (j->phase) {
    case PHASE_RESTORE:
        j->restore_us += (double)(now - j->since);
        requeue(t, j);
        return 0;
    case PHASE_SAVE:
        if (graceful && (double)(j->phase_end - now) <= grace * 1e6) {
            j->stop_after = true; /* the running save completes in time */
            return 0;
        }
        j->save_us += (double)(now - j->since);
        break;
    case PHASE_STOP:
        return 0;
    default:
        break;
    }
    if (!graceful) {
        lose(j);
        requeue(t, j);
        return 0;
    }
    if (j->save_s <= grace) {
        j->stop_after = true;
        enter_phase(t, j, PHASE_SAVE, USE_CKPT, j->save_s);
    } else {
        /* SIGTERM, a save that cannot finish, SIGKILL at the end of the grace period. */
        enter_phase(t, j, PHASE_STOP, USE_CKPT, grace);
    }
    return 0;
}

void trainer_kill(struct trainer *t, uint32_t id)
{
    struct job *j = &t->jobs[id];
    if (j->state != JOB_RUNNING)
        return;
    advance(t, j);
    if (j->phase == PHASE_SAVE || j->phase == PHASE_STOP)
        j->save_us += (double)(t->eng->now - j->since);
    if (j->phase == PHASE_RESTORE)
        j->restore_us += (double)(t->eng->now - j->since);
    lose(j);
    j->restarts++;
    t->restarts++;
    requeue(t, j);
}

void trainer_on_speed(struct trainer *t, uint32_t id)
{
    struct job *j = &t->jobs[id];
    if (j->updating || j->state != JOB_RUNNING || j->phase != PHASE_RUN)
        return;
    advance(t, j);
    plan_run(t, j);
}

void trainer_reject(struct trainer *t, uint32_t id)
{
    struct job *j = &t->jobs[id];
    if (j->state != JOB_QUEUED)
        return;
    j->state = JOB_REJECTED;
    t->queued--;
    t->rejected++;
}

void trainer_sync(struct trainer *t)
{
    for (uint32_t i = 0; i < t->njobs; i++) {
        struct job *j = &t->jobs[i];
        if (j->state == JOB_RUNNING)
            advance(t, j);
        if (j->phase == PHASE_SAVE || j->phase == PHASE_STOP || j->phase == PHASE_RESTORE) {
            double dt = (double)(t->eng->now - j->since);
            if (j->phase == PHASE_RESTORE)
                j->restore_us += dt;
            else
                j->save_us += dt;
            j->since = t->eng->now;
        }
        if (j->state == JOB_QUEUED) {
            j->queue_us += (double)(t->eng->now - j->queued_since);
            j->queued_since = t->eng->now;
        }
    }
}
