/*
 * test_policy_kai.c — the `kai` policy in whole runs: two queues with quotas
 * 60/40 and equal over-demand converge to their fair shares (measured by
 * sampling the cards' tenants, independently of the policy's bookkeeping),
 * reclaim of over-quota use, fractional bin-packing, refusal of impossible
 * actions, conservation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/simtest.h"

#define SEC(x) ((sim_time)(x)*SIM_SEC)

/* GPU units held by jobs of queue `name`, read from the cards' tenants. */
static double queue_units(const struct sim *s, const char *name)
{
    double u = 0;
    for (uint32_t t = 0; t < s->cl.ntenants; t++) {
        const struct tenant *tn = &s->cl.tenants[t];
        if (!tn->used || tn->kind != TENANT_TRAIN)
            continue;
        const struct job *j = &s->tr.jobs[tn->owner];
        if (!strcmp(j->spec.queue, name))
            u += j->spec.gpu_fraction < 1 ? j->spec.gpu_fraction : 1;
    }
    return u;
}

/*
 * 100 cards; queue a (quota 60) submits 600 one-card jobs at t = 0 and takes
 * every card (over-quota, work-conserving); queue b (quota 40) submits 600 at
 * 1 h: its fair share is 40 (both over-demand, quotas sum to the cluster), so
 * b reclaims 40 cards from a. Both keep a backlog through the measured window.
 */
static const char *const two_queues = "name: kai-fair\n"
                                      "duration: 6h\n"
                                      "sample_interval: 60s\n"
                                      "cluster: { nodes: 10, gpus_per_node: 10 }\n"
                                      "training:\n"
                                      "  jobs: { trace: { path: tests/data/kai_two_queues.csv, "
                                      "format: csv } }\n"
                                      "policy:\n"
                                      "  name: kai\n"
                                      "  queues:\n"
                                      "    - { name: a, quota: 60 }\n"
                                      "    - { name: b, quota: 40 }\n";

Test(policy_kai, two_queues_converge_to_fair_shares)
{
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, two_queues, 1);
    /* Before b arrives a holds the whole cluster. */
    engine_run(&s.eng, SEC(3599));
    cr_expect_float_eq(queue_units(&s, "a"), 100, 1e-9);
    /* Time-averaged shares over [2 h, 5 h), sampled every 10 s (a drains its backlog ~5.8 h). */
    double sa = 0, sb = 0;
    unsigned n = 0;
    for (sim_time t = SEC(7200); t < SEC(18000); t += SEC(10)) {
        engine_run(&s.eng, t);
        sa += queue_units(&s, "a");
        sb += queue_units(&s, "b");
        n++;
    }
    sa /= n * 100.0;
    sb /= n * 100.0;
    cr_log_info("time-averaged shares: a %.4f, b %.4f", sa, sb);
    cr_expect(fabs(sa - 0.6) < 0.01, "queue a share %.4f, fair 0.6", sa);
    cr_expect(fabs(sb - 0.4) < 0.01, "queue b share %.4f, fair 0.4", sb);
    /* b got its cards by reclaim: a's over-quota jobs were preempted with a checkpoint. */
    uint32_t preempted_a = 0, preempted_b = 0;
    for (uint32_t i = 0; i < s.tr.njobs; i++) {
        const struct job *j = &s.tr.jobs[i];
        if (j->preemptions)
            *(!strcmp(j->spec.queue, "a") ? &preempted_a : &preempted_b) += 1;
        cr_expect_float_eq(j->lost_us, 0, 1e-6); /* 1-GPU saves (15 s) fit the 30 s grace */
    }
    cr_expect_geq(preempted_a, 40);
    cr_expect_eq(preempted_b, 0);
    cr_assert_eq(sim_run(&s, NULL), 0);
    simtest_free(&sc, &s);
}

/*
 * Time-slicing with 2 replicas per card: five half-card jobs on 2 cards. Queue
 * a (quota 1) and b (quota 1): two jobs of each pack two per card; b's third
 * waits (cards full) and runs once a card frees (each pair runs at half speed: ~7200 s).
 */
static const char *const fractions = "name: kai-frac\n"
                                     "duration: 4h\n"
                                     "sample_interval: 60s\n"
                                     "cluster: { nodes: 1, gpus_per_node: 2, sharing: timeslice,\n"
                                     "           timeSlicing: { replicas: 2 } }\n"
                                     "training:\n"
                                     "  memory_gb_per_gpu: 30\n"
                                     "  jobs: { trace: { path: tests/data/kai_fractions.csv, "
                                     "format: csv } }\n"
                                     "policy:\n"
                                     "  name: kai\n"
                                     "  queues:\n"
                                     "    - { name: a, quota: 1 }\n"
                                     "    - { name: b, quota: 1 }\n";

Test(policy_kai, fractions_bin_packed_and_full_card_refused)
{
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, fractions, 1);
    engine_run(&s.eng, SEC(10));
    cr_assert_eq(s.tr.njobs, 5);
    cr_expect_eq(s.tr.running, 4);
    cr_expect_eq(s.cl.cards[0].nten, 2);
    cr_expect_eq(s.cl.cards[1].nten, 2);
    cr_expect_float_eq(queue_units(&s, "a"), 1.0, 1e-9);
    cr_expect_float_eq(queue_units(&s, "b"), 1.0, 1e-9);
    uint32_t waiting = UINT32_MAX;
    for (uint32_t i = 0; i < 5; i++)
        if (s.tr.jobs[i].state == JOB_QUEUED)
            waiting = i;
    cr_assert_neq(waiting, UINT32_MAX);
    /* Placing the waiting job on a full card is refused; nothing changes. */
    uint32_t live = s.cl.live_tenants, g = 0;
    cr_expect_eq(trainer_start(&s.tr, waiting, &g), -EBUSY);
    cr_expect_eq(s.tr.jobs[waiting].state, JOB_QUEUED);
    cr_expect_eq(s.cl.live_tenants, live);
    cr_expect_eq(s.cl.cards[0].nten, 2);
    cr_assert_eq(sim_run(&s, NULL), 0);
    cr_expect_eq(s.tr.done, 5);
    simtest_free(&sc, &s);
}

/* Inference replicas (fraction 0.5, in quota) and synthetic jobs spread over two queues. */
static const char *const mixed =
    "name: kai-mixed\n"
    "duration: 3h\n"
    "sample_interval: 60s\n"
    "cluster: { nodes: 1, gpus_per_node: 8, sharing: timeslice, timeSlicing: { replicas: 2 } }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 200, b_ms: 50 }\n"
    "    batching: { max_batch: 8, max_wait: 50ms }\n"
    "    memory_gb: 20\n"
    "    arrivals: { synthetic: { hourly_kind: points, hourly: [5, 40, 40, 5, 5, 5, 5, 5, 5, 5, 5, "
    "5,\n"
    "                                      5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5] } }\n"
    "training:\n"
    "  backlog: 12\n"
    "  memory_gb_per_gpu: 30\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 4, duration: { lognormal: { median: 40m, sigma: 0.5 } },\n"
    "                 gpus: { 1: 0.7, 2: 0.3 } }\n"
    "policy:\n"
    "  name: kai\n"
    "  inference_gpus: 4\n"
    "  gpu_fraction: { inference: 0.5 }\n"
    "  autoscale: { min: 1, max: 8, scale_up_delay: 30s, scale_down_window: 120s }\n"
    "  queues:\n"
    "    - { name: inference, quota: 4 }\n"
    "    - { name: research, quota: -1 }\n"
    "    - { name: r1, parent: research, quota: 2 }\n"
    "    - { name: r2, parent: research, quota: 2 }\n";

Test(policy_kai, conservation_of_requests_and_gpu_seconds)
{
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, mixed, 5);
    const struct service *sv = &s.svcs[0];
    simtest_expect_conserved(&s);
    cr_expect_gt(service_replicas(sv), 0);
    /* Round-robin: synthetic jobs alternate r1, r2 (none named a queue). */
    cr_expect_gt(s.tr.done, 0);
    double horizon = (double)s.end;
    for (uint32_t g = 0; g < s.cl.ngpus; g++) {
        const struct card *c = &s.cl.cards[g];
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++)
            sum += c->acc[k];
        cr_expect_float_eq(sum, c->alloc_us, 1e-3);
        cr_expect_leq(c->alloc_us, horizon + 1e-6);
        cr_expect_leq(card_busy_us(c, false), c->alloc_us + 1e-6);
    }
    cr_expect_eq(s.tr.njobs, s.tr.queued + s.tr.running + s.tr.done + s.tr.rejected + s.tr.failed);
    cr_expect_eq(s.oom_kills, 0);
    simtest_free(&sc, &s);
}

Test(policy_kai, parse_errors_name_the_key)
{
    static const struct {
        const char *policy, *want;
    } cases[] = {
        {"  queues: [ { name: a }, { name: a } ]\n", "duplicate queue 'a'"},
        {"  queues: [ { name: a, parent: z } ]\n", "'parent': expected the name of a queue"},
        {"  queues: [ { name: a } ]\n  inference_queue: b\n", "expected the name of a leaf"},
        {"  queues: [ { name: a, weight: 2 } ]\n", "'weight': unknown key"},
        {"  queues: [ { name: a }, { name: b } ]\n  assign_weights: [1]\n", "one weight per"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "name: bad\nduration: 1h\ncluster: { nodes: 1 }\npolicy:\n  name: kai\n%s",
                 cases[i].policy);
        simtest_expect_rejected(yaml, cases[i].want, i);
    }
}
