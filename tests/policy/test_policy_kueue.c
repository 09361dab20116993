/*
 * test_policy_kueue.c — the `kueue` policy in whole runs: a preempted 8-GPU
 * job resumes from its checkpoint with hand-computed lost and overhead
 * seconds, borrowing and reclaim, refusal of impossible actions, conservation.
 *
 * The hand-computed scenario (1 node × 8 cards, inference CQ nominal 1,
 * training CQ 7, one cohort):
 *   - one job of 8 GPUs and 7200 s of work at t = 0: it borrows the idle
 *     inference card. Checkpoint every 1800 s of running; state 1 GB/GPU ⇒
 *     8 GB: save = 8/2 + 5 = 9 s, restore = 8/4 + 60 = 62 s (models/ckpt.h).
 *   - the service's rate is 0 until 1 h, rises linearly to 40 req/s at 2 h,
 *     falls back to 0 at 3 h (hourly profile); one replica serves 3162 req/s
 *     (32 / 10.12 ms) so the HPA (target 0.7, min 0) asks for exactly 1
 *     replica whenever the last minute saw any request (the first and last
 *     minutes of the ramp expect 20 requests each).
 *   - saves at [1800, 1809) and [3609, 3618); the tick at 3660 s (first
 *     interval with requests) asks for 1 replica; Kueue reclaims the borrowed
 *     card with reclaimWithinCohort Any: the job is preempted at 3660 with
 *     3600 + 42 = 3642 s of work done.
 *   - graceful: save [3660, 3669) (9 s <= 30 s grace), nothing lost; the
 *     replica takes a card at 3669.
 *   - the tick at 10860 s (first interval with no request) scales to 0 (30 s
 *     window); the job is readmitted and restarts at 10860: restore until
 *     10922, save at 10922 + 1800 = 12722 (5442 s done) until 12731, the last
 *     1758 s end at 14489 s. Saves 4 × 9 = 36 s, restore 62 s, lost 0.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/simtest.h"

#define SEC(x) ((sim_time)(x)*SIM_SEC)

static void preempt_yaml(char *buf, size_t n, const char *grace, const char *policy_extra)
{
    snprintf(buf, n,
             "name: kueue-preempt\n"
             "duration: 5h\n"
             "sample_interval: 60s\n"
             "cluster: { nodes: 1, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: chat\n"
             "    arrivals: { synthetic: { hourly_kind: points, hourly: [0, 0, 40, 0, 0, 0, 0, 0, "
             "0, 0, 0, 0,\n"
             "                                      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] } }\n"
             "training:\n"
             "  backlog: 1\n"
             "  jobs:\n"
             "    synthetic: { per_hour: 0, duration: { lognormal: { median: 2h, sigma: 0 } },\n"
             "                 gpus: { 8: 1 } }\n"
             "  checkpoint: { interval: 30m, state_gb_per_gpu: 1, write_gbps: 2, read_gbps: 4,\n"
             "                save_fixed: 5s, warmup: 60s, grace: %s }\n"
             "policy:\n"
             "  name: kueue\n"
             "  autoscale: { min: 0, max: 4, scale_up_delay: 10s, scale_down_window: 30s }\n"
             "%s",
             grace, policy_extra ? policy_extra : "");
}

static double sum_state(const struct sim *s, enum use_state st)
{
    double t = 0;
    for (uint32_t g = 0; g < s->cl.ngpus; g++)
        t += s->cl.cards[g].acc[st];
    return t / 1e6;
}

Test(policy_kueue, preempted_job_resumes_from_checkpoint)
{
    char yaml[2048];
    struct scenario sc;
    struct sim s;
    preempt_yaml(yaml, sizeof(yaml), "30s", NULL);
    simtest_build(&sc, &s, yaml, 1);

    /* Before the ramp: the job borrows the idle inference card (8 > nominal 7). */
    engine_run(&s.eng, SEC(3659));
    cr_assert_eq(s.tr.njobs, 1);
    const struct job *j = &s.tr.jobs[0];
    cr_assert_eq(j->spec.work, SEC(7200));
    cr_expect_eq(j->state, JOB_RUNNING);
    cr_expect_eq(j->preemptions, 0);
    cr_expect_eq(service_replicas(&s.svcs[0]), 0);

    /* 3660: reclaimed; the job saves for 9 s and keeps its cards meanwhile. */
    engine_run(&s.eng, SEC(3665));
    j = &s.tr.jobs[0];
    cr_expect_eq(j->preemptions, 1);
    cr_expect_eq(j->state, JOB_RUNNING);
    cr_expect_eq(j->phase, PHASE_SAVE);
    cr_expect_eq(s.cl.free_cards, 0);
    cr_expect_eq(service_replicas(&s.svcs[0]), 0);

    /* 3670: the save ended at 3669; the replica holds one card, the job waits. */
    engine_run(&s.eng, SEC(3670));
    j = &s.tr.jobs[0];
    cr_expect_eq(j->state, JOB_QUEUED);
    cr_expect_float_eq(j->ckpt_us, 3642e6, 1);
    cr_expect_eq(service_replicas(&s.svcs[0]), 1);
    cr_expect_eq(s.cl.free_cards, 7);

    int rc = sim_run(&s, NULL);
    cr_assert_eq(rc, 0, "%s", s.err);
    j = &s.tr.jobs[0];
    cr_expect_eq(j->state, JOB_DONE);
    cr_expect_eq(j->end, SEC(14489), "end %ld", (long)j->end);
    cr_expect_eq(j->preemptions, 1);
    cr_expect_eq(j->checkpoints, 4);
    cr_expect_float_eq(j->lost_us, 0, 1e-6);
    cr_expect_float_eq(j->save_us, 36e6, 1);
    cr_expect_float_eq(j->restore_us, 62e6, 1);
    cr_expect_float_eq(j->queue_us, (10860.0 - 3669.0) * 1e6, 1);
    /* The cards saw the same: 8 members × each of those seconds. */
    cr_expect_float_eq(sum_state(&s, USE_CKPT), 8 * 36.0, 1e-3);
    cr_expect_float_eq(sum_state(&s, USE_RESTORE), 8 * 62.0, 1e-3);
    cr_expect_float_eq(sum_state(&s, USE_USEFUL), 8 * 7200.0, 1e-3);
    cr_expect_float_eq(sum_state(&s, USE_RECOMPUTE), 0, 1e-6);
    simtest_free(&sc, &s);
}

/*
 * Same run with a 5 s grace period: the 9 s save cannot finish, the job is
 * killed at 3665 and loses the 42 s since its checkpoint at 3600 s of work.
 * Restart at 10860 from 3600 s: restore to 10922, 42 s recomputed, save at
 * 12722 (5400 s done) to 12731, the last 1800 s end at 14531. Save time
 * 9 + 9 + 5 + 9 = 32 s, 3 checkpoints.
 */
Test(policy_kueue, save_longer_than_grace_loses_work_since_checkpoint)
{
    char yaml[2048];
    struct scenario sc;
    struct sim s;
    preempt_yaml(yaml, sizeof(yaml), "5s", NULL);
    simtest_run(&sc, &s, yaml, 1);
    const struct job *j = &s.tr.jobs[0];
    cr_expect_eq(j->state, JOB_DONE);
    cr_expect_eq(j->end, SEC(14531), "end %ld", (long)j->end);
    cr_expect_eq(j->checkpoints, 3);
    cr_expect_float_eq(j->lost_us, 42e6, 1);
    cr_expect_float_eq(j->save_us, 32e6, 1);
    cr_expect_float_eq(j->restore_us, 62e6, 1);
    cr_expect_float_eq(sum_state(&s, USE_RECOMPUTE), 8 * 42.0, 1e-3);
    cr_expect_float_eq(sum_state(&s, USE_USEFUL), 8 * 7200.0, 1e-3);
    simtest_free(&sc, &s);
}

/* reclaimWithinCohort: Never — the inference workload cannot take its card back. */
Test(policy_kueue, reclaim_never_leaves_borrowed_card)
{
    char yaml[2048];
    struct scenario sc;
    struct sim s;
    preempt_yaml(yaml, sizeof(yaml), "30s", "  preemption: { reclaim_within_cohort: Never }\n");
    simtest_run(&sc, &s, yaml, 1);
    const struct job *j = &s.tr.jobs[0];
    cr_expect_eq(j->preemptions, 0);
    cr_expect_eq(j->end, SEC(7200 + 3 * 9)); /* saves at 1800, 3609 and 5418 of wall time */
    /* The replica got the card only when the job finished (7227 s), after the ramp's peak. */
    cr_expect_gt(s.svcs[0].tot.served, 0);
    simtest_free(&sc, &s);
}

Test(policy_kueue, impossible_actions_are_refused_state_unchanged)
{
    char yaml[2048];
    struct scenario sc;
    struct sim s;
    preempt_yaml(yaml, sizeof(yaml), "30s", NULL);
    simtest_build(&sc, &s, yaml, 1);
    engine_run(&s.eng, SEC(3670));
    /* The replica sits on one card, the job waits for 8: placing the job on a full set fails. */
    uint32_t gang[8], busy = UINT32_MAX;
    for (uint32_t g = 0; g < 8; g++) {
        gang[g] = g;
        if (s.cl.cards[g].nten)
            busy = g;
    }
    cr_assert_neq(busy, UINT32_MAX);
    uint32_t live = s.cl.live_tenants, freec = s.cl.free_cards;
    cr_expect_eq(trainer_start(&s.tr, 0, gang), -EBUSY);
    cr_expect_eq(s.tr.jobs[0].state, JOB_QUEUED);
    /* A second replica on the occupied exclusive card. */
    cr_expect_eq(sim_place_replica(&s, 0, busy), -EBUSY);
    cr_expect_eq(service_replicas(&s.svcs[0]), 1);
    cr_expect_eq(s.cl.live_tenants, live);
    cr_expect_eq(s.cl.free_cards, freec);
    /* The run goes on unharmed. */
    cr_assert_eq(sim_run(&s, NULL), 0);
    cr_expect_eq(s.tr.jobs[0].end, SEC(14489));
    simtest_free(&sc, &s);
}

Test(policy_kueue, parse_errors_name_the_key)
{
    static const struct {
        const char *cluster, *policy, *want;
    } cases[] = {
        {"{ nodes: 1 }", "  queues: { inference: { nominal: 6 }, training: { nominal: 6 } }\n",
         "nominal quotas sum to 12 GPUs"},
        {"{ nodes: 1 }", "  queueing: Fifo\n", "'queueing': expected one of"},
        {"{ nodes: 1 }", "  preemption: { within_cluster_queue: Sometimes }\n",
         "'within_cluster_queue'"},
        {"{ nodes: 1 }", "  queues: { serving: { nominal: 1 } }\n", "'serving': unknown key"},
        {"{ nodes: 1, sharing: mig, mig: { layout: \"7g.80gb\" } }", "", "whole cards"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "name: bad\nduration: 1h\ncluster: %s\npolicy:\n  name: kueue\n%s",
                 cases[i].cluster, cases[i].policy);
        simtest_expect_rejected(yaml, cases[i].want, i);
    }
}

static const char *const diurnal =
    "name: kueue-small\n"
    "duration: 4h\n"
    "sample_interval: 60s\n"
    "cluster: { nodes: 2, gpus_per_node: 8 }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 200, b_ms: 50 }\n"
    "    batching: { max_batch: 8, max_wait: 50ms }\n"
    "    slo: { p99_ms: 2000 }\n"
    "    arrivals: { synthetic: { hourly_kind: points, hourly: [10, 100, 100, 10, 10, 10, 10, 10, "
    "10, 10, 10, 10,\n"
    "                                      10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10] } }\n"
    "training:\n"
    "  backlog: 16\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 3, duration: { lognormal: { median: 1h, sigma: 0.8 } },\n"
    "                 gpus: { 1: 0.4, 2: 0.3, 4: 0.2, 8: 0.1 } }\n"
    "  checkpoint: { interval: 20m, state_gb_per_gpu: 10 }\n"
    "policy:\n"
    "  name: kueue\n"
    "  inference_gpus: 4\n"
    "  autoscale: { min: 1, max: 12, scale_up_delay: 30s, scale_down_window: 120s }\n";

Test(policy_kueue, conservation_of_requests_and_gpu_seconds)
{
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, diurnal, 7);
    simtest_expect_conserved(&s);
    /* The scenario exercises the policy: inference grew past its nominal quota of 4 by
     * reclaiming borrowed cards from training (a backlog of 16 jobs fills every card
     * inference does not hold, so growth must reclaim). */
    cr_expect_gt(s.tr.preemptions, 0);
    double horizon = (double)s.end, useful_cards = 0, useful_jobs = 0, ckpt_jobs = 0;
    for (uint32_t g = 0; g < s.cl.ngpus; g++) {
        const struct card *c = &s.cl.cards[g];
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++)
            sum += c->acc[k];
        cr_expect_float_eq(sum, c->alloc_us, 1e-3);
        cr_expect_leq(c->alloc_us, horizon + 1e-6);
        useful_cards += c->acc[USE_USEFUL];
    }
    /* Exclusive cards at full speed: useful card time = Σ jobs' high-water work × gang size;
     * checkpoint card time = Σ save time × gang size. */
    double ckpt_cards = sum_state(&s, USE_CKPT) * 1e6;
    for (uint32_t i = 0; i < s.tr.njobs; i++) {
        const struct job *j = &s.tr.jobs[i];
        useful_jobs += j->high_us * j->spec.gpus;
        ckpt_jobs += j->save_us * j->spec.gpus;
    }
    cr_expect(fabs(useful_cards - useful_jobs) < 1e-6 * useful_jobs + 10, "cards %.0f jobs %.0f",
              useful_cards, useful_jobs);
    cr_expect(fabs(ckpt_cards - ckpt_jobs) < 1e-6 * ckpt_jobs + 10, "cards %.0f jobs %.0f",
              ckpt_cards, ckpt_jobs);
    cr_expect_eq(s.tr.njobs, s.tr.queued + s.tr.running + s.tr.done + s.tr.rejected + s.tr.failed);
    simtest_free(&sc, &s);
}
