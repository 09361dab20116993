/*
 * polsubmit.h — policy tests: submit hand-made training jobs to the policy in
 * the loop (as the trainer does for a drawn job) and check whole-run
 * conservation of requests and GPU-seconds.
 */
#ifndef TIDESIM_POLSUBMIT_H
#define TIDESIM_POLSUBMIT_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/simtest.h"

/*
 * Append a queued job of work_s seconds on gpus GPUs at the current time (the
 * trainer's own cost rule) and hand it to the policy's on_submit. mig_profile
 * may be NULL. Returns its index.
 */
static inline uint32_t polsubmit_job(struct sim *s, double work_s, uint32_t gpus,
                                     const char *mig_profile)
{
    struct job_spec spec = {
        .id = s->tr.njobs,
        .submit = s->eng.now,
        .work = sim_time_from_sec(work_s),
        .gpus = gpus,
        .gpu_fraction = 1,
    };
    if (mig_profile)
        snprintf(spec.mig_profile, sizeof(spec.mig_profile), "%s", mig_profile);
    int64_t id = trainer_submit(&s->tr, &spec); /* the policy's on_submit runs */
    cr_assert_geq(id, 0);
    return (uint32_t)id;
}

/*
 * Build a sim for a policy test: the given cluster, optional services block,
 * training block lines and policy; no job stream and no checkpoints (the
 * tests submit jobs with polsubmit_job).
 */
static inline void polsubmit_build(struct scenario *sc, struct sim *s, const char *cluster,
                                   const char *training, const char *services, const char *policy)
{
    char yaml[4096];
    snprintf(yaml, sizeof(yaml),
             "name: policy-test\n"
             "duration: 10d\n"
             "sample_interval: 1h\n"
             "cluster: %s\n"
             "%s"
             "training:\n"
             "  jobs: { synthetic: { per_hour: 0 } }\n"
             "  checkpoint: { interval: none }\n"
             "%s"
             "policy: %s\n",
             cluster, services ? services : "", training, policy);
    simtest_build(sc, s, yaml, 1);
}

/* Seconds at which job j ended. */
static inline double polsubmit_end_s(const struct sim *s, uint32_t j)
{
    return sim_time_to_sec(s->tr.jobs[j].end);
}

/*
 * After a whole run: every request is served, dropped, in service or waiting;
 * every card's use states fit its elapsed time (and equal its allocated time
 * unless MIG); useful training card time equals the work the jobs did
 * (equal_speeds: every gang member runs at the gang's speed) or exceeds it.
 */
static inline void polsubmit_check_conservation(struct sim *s, bool equal_speeds)
{
    simtest_expect_conserved(s);
    double useful = 0, work = 0;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct card *c = &s->cl.cards[g];
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++)
            sum += c->acc[k];
        if (cluster_card_mode(&s->cl, g) != SHARE_MIG)
            cr_expect(fabs(sum - c->alloc_us) < 1e-3 * (1 + sum / 1e9),
                      "card %u: states %f != allocated %f", g, sum, c->alloc_us);
        useful += c->acc[USE_USEFUL];
    }
    uint32_t started = 0;
    for (uint32_t j = 0; j < s->tr.njobs; j++) {
        work += s->tr.jobs[j].done_us * s->tr.jobs[j].spec.gpus;
        started += s->tr.jobs[j].start >= 0;
    }
    cr_expect_gt(started, 0, "no job ran");
    if (equal_speeds)
        cr_expect(fabs(useful - work) < 1e-6 * work + 10, "useful %f != work %f", useful, work);
    else
        cr_expect_geq(useful, work - 10);
}

#endif
