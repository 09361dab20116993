/* train.c — training job lifecycle with rate-based progress. */
#include "sim/train.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void on_submit_ev(void *ctx, uint64_t arg);
static void on_finish_ev(void *ctx, uint64_t arg);

static void fail(struct trainer *t, int rc)
{
    t->src_done = true;
    t->src_error = rc;
    t->eng->stop = true;
}

/* Draw the next job from the source and schedule its submission. */
static void schedule_next(struct trainer *t)
{
    if (!t->src || t->src_done)
        return;
    int rc = job_source_next(t->src, &t->next, &t->src_err);
    if (rc == 1) {
        t->src_done = true;
        return;
    }
    if (rc < 0) {
        fail(t, rc);
        return;
    }
    while (t->skip_services && t->next.outcome == JOB_LOG_SERVICE) {
        t->services_skipped++;
        rc = job_source_next(t->src, &t->next, &t->src_err);
        if (rc == 1) {
            t->src_done = true;
            return;
        }
        if (rc < 0) {
            fail(t, rc);
            return;
        }
    }
    sim_time at = t->next.submit < t->eng->now ? t->eng->now : t->next.submit;
    if (engine_at(t->eng, at, on_submit_ev, t, 0, &t->next_ev))
        fail(t, -ENOMEM);
}

static void on_submit_ev(void *ctx, uint64_t arg)
{
    struct trainer *t = ctx;
    (void)arg;
    if (t->njobs == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 256;
        struct job *j = realloc(t->jobs, cap * sizeof(*j));
        if (!j) {
            fail(t, -ENOMEM);
            return;
        }
        t->jobs = j;
        t->cap = cap;
    }
    uint32_t id = t->njobs++;
    struct job *j = &t->jobs[id];
    memset(j, 0, sizeof(*j));
    j->spec = t->next;
    j->state = JOB_QUEUED;
    j->start = -1;
    j->end = -1;
    j->gpus = calloc(j->spec.gpus ? j->spec.gpus : 1, sizeof(*j->gpus));
    if (!j->gpus) {
        fail(t, -ENOMEM);
        return;
    }
    t->queued++;
    schedule_next(t);
    if (t->on_submit)
        t->on_submit(t->cb_ctx, id);
}

static void on_finish_ev(void *ctx, uint64_t arg)
{
    struct trainer *t = ctx;
    uint32_t id = (uint32_t)arg;
    struct job *j = &t->jobs[id];
    sim_time now = t->eng->now;

    j->done_us = (double)j->spec.work;
    j->since = now;
    j->end = now;
    j->state = JOB_DONE;
    for (uint32_t i = 0; i < j->spec.gpus; i++)
        cluster_free(t->cl, j->gpus[i], now);
    t->running--;
    t->done++;
    t->gpu_us_done += (double)j->spec.work * j->spec.gpus;
    if (t->on_finish)
        t->on_finish(t->cb_ctx, id);
}

int trainer_init(struct trainer *t, struct engine *eng, struct cluster *cl, struct job_source *src)
{
    memset(t, 0, sizeof(*t));
    t->eng = eng;
    t->cl = cl;
    t->src = src;
    t->src_done = src == NULL;
    return 0;
}

void trainer_release(struct trainer *t)
{
    job_source_destroy(t->src);
    t->src = NULL;
    for (uint32_t i = 0; i < t->njobs; i++)
        free(t->jobs[i].gpus);
    free(t->jobs);
    t->jobs = NULL;
    t->njobs = 0;
}

int trainer_begin(struct trainer *t)
{
    schedule_next(t);
    return t->src_error;
}

int trainer_start(struct trainer *t, uint32_t id, const uint32_t *gpus, double rate)
{
    if (id >= t->njobs || !(rate > 0))
        return -EINVAL;
    struct job *j = &t->jobs[id];
    sim_time now = t->eng->now;
    if (j->state != JOB_QUEUED)
        return -EINVAL;
    for (uint32_t i = 0; i < j->spec.gpus; i++)
        if (gpus[i] >= t->cl->ngpus || t->cl->gpus[gpus[i]].use != GPU_FREE)
            return -EINVAL;
    for (uint32_t i = 0; i < j->spec.gpus; i++) {
        j->gpus[i] = gpus[i];
        cluster_alloc(t->cl, gpus[i], now, GPU_TRAIN, id);
        cluster_set_busy(t->cl, gpus[i], now, 1.0);
    }
    j->state = JOB_RUNNING;
    if (j->start < 0)
        j->start = now;
    j->rate = rate;
    j->since = now;
    t->queued--;
    t->running++;
    double remain_us = ((double)j->spec.work - j->done_us) / rate;
    sim_time fin = now + (sim_time)ceil(remain_us);
    if (engine_at(t->eng, fin, on_finish_ev, t, id, &j->fin)) {
        fail(t, -ENOMEM);
        return -ENOMEM;
    }
    return 0;
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
    sim_time now = t->eng->now;
    for (uint32_t i = 0; i < t->njobs; i++) {
        struct job *j = &t->jobs[i];
        if (j->state != JOB_RUNNING)
            continue;
        j->done_us += (double)(now - j->since) * j->rate;
        j->since = now;
    }
}
