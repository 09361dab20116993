/*
 * test_kai_actions.c — the `kai` policy's actions on hand-built cases whose
 * schedules are counted by hand: non-blocking allocate, the hold that keeps a
 * reclaimed card for the replica it was taken for, reclaim by fractional
 * replicas, reclaimMinRuntime with KAI's two resolve methods, consolidation
 * (one job moved, paying its checkpoint and restore, so that a gang fits),
 * and conservation of requests and GPU-seconds under all of them.
 */
#include <math.h>

#include "sim/policy/kai_sched.h"
#include "tests/polsubmit.h"

#define SEC(x) ((sim_time)(x)*SIM_SEC)

/* Tenants of service svc on card g. */
static uint32_t replicas_on(const struct sim *s, uint32_t g, uint32_t svc)
{
    uint32_t n = 0;
    const struct card *c = &s->cl.cards[g];
    for (uint32_t i = 0; i < c->nten; i++) {
        const struct tenant *tn = &s->cl.tenants[c->ten[i]];
        n += tn->kind == TENANT_INFER && tn->owner == svc;
    }
    return n;
}

/* Ask for `n` more replicas of svc, as the HPA does when no card takes them, and run a cycle. */
static void want_replicas(struct sim *s, uint32_t svc, uint32_t n)
{
    struct kp *k = s->pol_state;
    k->want[svc] += n;
    s->pol->on_tick(s, s->pol_state); /* no autoscale block: the tick only runs a cycle */
}

/*
 * One node of 4 cards. A (3 GPUs, 100 s) starts at 0; B (4 GPUs) cannot fit
 * behind it; C (1 GPU, 50 s), submitted after B, starts at once in the same
 * cycle (KAI's allocate pops the next job when one does not fit). Schedule:
 * A [0, 100), C [0, 50), B [100, 300). A blocking allocate would start C only
 * after B, at 300.
 */
Test(kai_actions, small_job_behind_a_large_one_starts_in_the_same_cycle)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ nodes: 1, gpus_per_node: 4 }", "", NULL,
                    "{ name: kai, inference_gpus: 0 }");
    uint32_t a = polsubmit_job(&s, 100, 3, NULL);
    uint32_t b = polsubmit_job(&s, 200, 4, NULL);
    uint32_t c = polsubmit_job(&s, 50, 1, NULL);
    cr_expect_eq(s.tr.jobs[a].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[b].state, JOB_QUEUED);
    cr_expect_eq(s.tr.jobs[c].state, JOB_RUNNING, "C waits behind B");
    cr_expect_eq(s.tr.jobs[c].start, 0);
    engine_run(&s.eng, SEC(1000));
    cr_expect_float_eq(polsubmit_end_s(&s, a), 100, 1e-6);
    cr_expect_float_eq(polsubmit_end_s(&s, c), 50, 1e-6);
    cr_expect_float_eq(sim_time_to_sec(s.tr.jobs[b].start), 100, 1e-6);
    cr_expect_float_eq(polsubmit_end_s(&s, b), 300, 1e-6);
    simtest_free(&sc, &s);
}

/* One service of whole-card (exclusive) or fractional replicas, a low constant load. */
static const char *const one_service = "services:\n"
                                       "  - name: q\n"
                                       "    latency: { a_ms: 1, b_ms: 0.1 }\n"
                                       "    memory_gb: 8\n"
                                       "    replicas: %u\n"
                                       "    arrivals: { synthetic: { shape: constant, "
                                       "rate_rps: 5 } }\n";

static void build_with_service(struct scenario *sc, struct sim *s, const char *cluster,
                               uint32_t replicas, const char *policy)
{
    char svc[512];
    snprintf(svc, sizeof(svc), one_service, replicas);
    polsubmit_build(sc, s, cluster, "", svc, policy);
}

/*
 * Bug 1. Two cards, exclusive: a replica on card 0 (inference quota 2),
 * training job T on card 1 (over quota). At 1000 s the HPA wants a second
 * replica: reclaim evicts T (graceful save) and holds card 1 for the replica.
 * U, submitted while T saves, and T itself (requeued when its save ends) must
 * not take card 1: the replica does, and T is evicted exactly once.
 */
Test(kai_actions, reclaimed_card_is_held_for_the_replica)
{
    struct scenario sc;
    struct sim s;
    build_with_service(&sc, &s, "{ nodes: 1, gpus_per_node: 2 }", 1,
                       "{ name: kai, inference_gpus: 2 }");
    cr_assert_eq(replicas_on(&s, 0, 0), 1);
    uint32_t t = polsubmit_job(&s, 50000, 1, NULL);
    cr_assert_eq(s.tr.jobs[t].gpus[0], 1);
    engine_run(&s.eng, SEC(1000));
    want_replicas(&s, 0, 1);
    struct kp *k = s.pol_state;
    cr_expect_eq(s.tr.jobs[t].preemptions, 1);
    cr_expect_eq(k->hold[1].kind, KAI_HOLD_INFER);
    cr_expect_eq(k->reclaims, 1);
    uint32_t u = polsubmit_job(&s, 100, 1, NULL);
    cr_expect_eq(s.tr.jobs[u].state, JOB_QUEUED, "U took the card being released");
    engine_run(&s.eng, SEC(1200));
    cr_expect_eq(s.tr.jobs[t].state, JOB_QUEUED);
    cr_expect_eq(s.tr.jobs[u].state, JOB_QUEUED);
    cr_expect_eq(replicas_on(&s, 1, 0), 1, "the replica is not on the reclaimed card");
    cr_expect_eq(k->hold[1].kind, KAI_HOLD_NONE);
    cr_expect_eq(k->want[0], 0);
    /* Later cycles change nothing: no thrash. */
    engine_run(&s.eng, SEC(20000));
    cr_expect_eq(s.tr.jobs[t].preemptions, 1);
    cr_expect_eq(k->reclaims, 1);
    simtest_free(&sc, &s);
}

/*
 * Bug 2. Two time-sliced cards (2 slots each), quarter-card replicas: card 0
 * holds two replicas (0.5 of its units used, but no slot left), card 1 a
 * training job. A third replica can only go where the job is: reclaim must
 * see that card 0's spare units are no room at all, evict the job and give
 * its card to the replica.
 */
Test(kai_actions, quarter_card_replica_reclaims_a_whole_card)
{
    struct scenario sc;
    struct sim s;
    build_with_service(&sc, &s,
                       "{ nodes: 1, gpus_per_node: 2, sharing: timeslice, "
                       "timeSlicing: { replicas: 2 } }",
                       2, "{ name: kai, inference_gpus: 2, gpu_fraction: { inference: 0.25 } }");
    cr_assert_eq(replicas_on(&s, 0, 0), 2);
    uint32_t t = polsubmit_job(&s, 50000, 1, NULL);
    cr_assert_eq(s.tr.jobs[t].state, JOB_RUNNING);
    cr_assert_eq(s.tr.jobs[t].gpus[0], 1);
    engine_run(&s.eng, SEC(1000));
    want_replicas(&s, 0, 1);
    cr_expect_eq(s.tr.jobs[t].preemptions, 1);
    engine_run(&s.eng, SEC(1200));
    cr_expect_eq(replicas_on(&s, 1, 0), 1);
    cr_expect_eq(s.tr.jobs[t].state, JOB_QUEUED);
    simtest_free(&sc, &s);
}

/*
 * reclaimMinRuntime. Queues: inference (top level) and research > team-a;
 * research sets 20 min, team-a 5 min, the default is 10 min. T (team-a)
 * starts at 0. LCA resolution: the queues' top levels differ, so the victim's
 * top-level queue decides (research, 20 min); queue resolution walks up from
 * team-a (5 min). A replica wanted at 400 s waits until T is unprotected:
 * LCA evicts it at the first cycle at or after 1200 s, queue at or after 300 s
 * (at once at 400 s).
 */
static double eviction_time(const char *method)
{
    char policy[1024];
    snprintf(policy, sizeof(policy),
             "{ name: kai, default_reclaim_min_runtime: 10m, reclaim_resolve_method: %s,\n"
             "  queues: [ { name: inference, quota: 2 },\n"
             "            { name: research, quota: 0, reclaim_min_runtime: 20m },\n"
             "            { name: team-a, parent: research, quota: 0, "
             "reclaim_min_runtime: 5m } ] }",
             method);
    struct scenario sc;
    struct sim s;
    build_with_service(&sc, &s, "{ nodes: 1, gpus_per_node: 2 }", 1, policy);
    uint32_t t = polsubmit_job(&s, 50000, 1, NULL);
    cr_assert_eq(s.tr.jobs[t].state, JOB_RUNNING);
    engine_run(&s.eng, SEC(400));
    want_replicas(&s, 0, 1);
    double at = -1;
    for (int sec = 400; sec <= 1500 && at < 0; sec += 100) {
        engine_run(&s.eng, SEC(sec));
        if (sec > 400)
            s.pol->on_tick(&s, s.pol_state);
        if (s.tr.jobs[t].preemptions)
            at = sec;
    }
    simtest_free(&sc, &s);
    return at;
}

Test(kai_actions, reclaim_min_runtime_protects_by_lca_and_by_queue)
{
    cr_expect_float_eq(eviction_time("lca"), 1200, 1e-9);
    cr_expect_float_eq(eviction_time("queue"), 400, 1e-9);
}

/*
 * Consolidation. Two nodes of 4 cards. J1 (3 GPUs, 100 s) on node 0 (cards
 * 0-2), J2 (3 GPUs, long) on node 1 (4-6), S1 (1 GPU, long) on card 3, S2
 * (1 GPU, 50 s) on card 7; gang G (4 GPUs) waits. At 100 s cards 0, 1, 2 and
 * 7 are free, four cards, but on no node four. Moving S1 (1 GPU) to card 7
 * frees node 0 (moving J2 instead would move 3 GPUs). S1 saves its checkpoint
 * (save_s), then G starts on node 0 and S1 restarts on card 7, restoring
 * (restore_s) before it computes again.
 */
Test(kai_actions, consolidation_moves_one_job_so_a_gang_fits)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ nodes: 2, gpus_per_node: 4 }", "", NULL,
                    "{ name: kai, inference_gpus: 0 }");
    uint32_t j1 = polsubmit_job(&s, 100, 3, NULL);
    uint32_t j2 = polsubmit_job(&s, 50000, 3, NULL);
    uint32_t s1 = polsubmit_job(&s, 10000, 1, NULL);
    uint32_t s2 = polsubmit_job(&s, 50, 1, NULL);
    uint32_t g = polsubmit_job(&s, 1000, 4, NULL);
    cr_assert_eq(s.tr.jobs[j1].gpus[0], 0);
    cr_assert_eq(s.tr.jobs[j2].gpus[0], 4);
    cr_assert_eq(s.tr.jobs[s1].gpus[0], 3);
    cr_assert_eq(s.tr.jobs[s2].gpus[0], 7);
    cr_assert_eq(s.tr.jobs[g].state, JOB_QUEUED);
    engine_run(&s.eng, SEC(99));
    cr_expect_eq(s.tr.jobs[s1].preemptions, 0, "moved while it could not help");
    engine_run(&s.eng, SEC(100));
    const struct job *m = &s.tr.jobs[s1];
    cr_expect_eq(m->preemptions, 1);
    double save = m->save_s, restore = m->restore_s;
    cr_assert_gt(save, 0);
    cr_assert_lt(save, 30, "the save fits the grace period");
    engine_run(&s.eng, SEC(100) + sim_time_from_sec(save) + 1);
    const struct job *gj = &s.tr.jobs[g];
    cr_expect_eq(gj->state, JOB_RUNNING);
    cr_expect_float_eq(sim_time_to_sec(gj->start), 100 + save, 1e-5);
    for (uint32_t i = 0; i < 4; i++)
        cr_expect_eq(s.cl.cards[gj->gpus[i]].node, 0);
    cr_expect_eq(m->state, JOB_RUNNING);
    cr_expect_eq(m->gpus[0], 7);
    cr_expect_eq(s.tr.jobs[j2].preemptions, 0);
    struct kp *k = s.pol_state;
    cr_expect_eq(k->moves, 1);
    engine_run(&s.eng, SEC(40000));
    /* S1 did 100 s before the move, saved, restored, then its remaining 9,900 s. */
    cr_expect_float_eq(polsubmit_end_s(&s, s1), 100 + save + restore + 9900, 1e-4);
    cr_expect_float_eq(polsubmit_end_s(&s, g), 100 + save + 1000, 1e-4);
    cr_expect_float_eq(m->lost_us, 0, 1e-6);
    simtest_free(&sc, &s);
}

Test(kai_actions, no_consolidation_when_disabled)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ nodes: 2, gpus_per_node: 4 }", "", NULL,
                    "{ name: kai, inference_gpus: 0, max_consolidation_preemptees: 0 }");
    polsubmit_job(&s, 100, 3, NULL);
    polsubmit_job(&s, 50000, 3, NULL);
    uint32_t s1 = polsubmit_job(&s, 10000, 1, NULL);
    polsubmit_job(&s, 50, 1, NULL);
    uint32_t g = polsubmit_job(&s, 1000, 4, NULL);
    engine_run(&s.eng, SEC(5000));
    cr_expect_eq(s.tr.jobs[s1].preemptions, 0);
    cr_expect_eq(s.tr.jobs[g].state, JOB_QUEUED);
    engine_run(&s.eng, SEC(20000));
    /* G waits for S1 (ends at 10,000 s) to free node 0. */
    cr_expect_float_eq(sim_time_to_sec(s.tr.jobs[g].start), 10000, 1e-6);
    simtest_free(&sc, &s);
}

/*
 * Conservation with every action at work: whole-card replicas under an HPA
 * on a load that ramps 10x, inference quota at its peak, a gang-heavy
 * training stream, reclaimMinRuntime 5 min. Requests and GPU-seconds are
 * conserved; reclaims, moves and holds all happened.
 */
Test(kai_actions, conservation_with_reclaim_and_consolidation)
{
    const char *yaml =
        "name: kai-cons\n"
        "duration: 8h\n"
        "sample_interval: 60s\n"
        "cluster: { nodes: 4, gpus_per_node: 4 }\n"
        "services:\n"
        "  - name: chat\n"
        "    latency: { a_ms: 40, b_ms: 10 }\n"
        "    batching: { max_batch: 8, max_wait: 20ms }\n"
        "    replicas: { min: 1, max: 12 }\n"
        "    arrivals: { synthetic: { hourly_kind: points, hourly: [30, 300, 300, 30, 30, 300, "
        "300, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30] } }\n"
        "training:\n"
        "  backlog: 30\n"
        "  checkpoint: { interval: 20m }\n"
        "  jobs:\n"
        "    synthetic: { per_hour: 6, duration: { lognormal: { median: 30m, sigma: 0.8 } },\n"
        "                 gpus: { 1: 0.5, 2: 0.25, 4: 0.25 } }\n"
        "policy:\n"
        "  name: kai\n"
        "  inference_gpus: 12\n"
        "  default_reclaim_min_runtime: 5m\n"
        "  autoscale: { target: 0.7, scale_up_delay: 60s, scale_down_window: 300s }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    polsubmit_check_conservation(&s, true);
    struct kp *k = s.pol_state;
    cr_log_info("reclaims %lu, moves %lu, held starts %lu, preemptions %lu",
                (unsigned long)k->reclaims, (unsigned long)k->moves, (unsigned long)k->held_starts,
                (unsigned long)s.tr.preemptions);
    cr_expect_gt(k->reclaims, 0);
    cr_expect_gt(k->moves, 0);
    cr_expect_eq(s.tr.preemptions, k->reclaims + k->moves);
    /* Every reclaimed or moved job ran on: none was evicted while protected. */
    for (uint32_t j = 0; j < s.tr.njobs; j++)
        cr_expect_float_eq(s.tr.jobs[j].lost_us, 0, 1e-6);
    simtest_free(&sc, &s);
}

Test(kai_actions, parse_errors_name_the_new_keys)
{
    static const struct {
        const char *policy, *want;
    } cases[] = {
        {"  reclaim_resolve_method: nearest\n", "reclaim_resolve_method"},
        {"  default_reclaim_min_runtime: -5m\n", "default_reclaim_min_runtime"},
        {"  max_consolidation_preemptees: 65\n", "max_consolidation_preemptees"},
        {"  hold_timeout: 0s\n", "hold_timeout"},
        {"  queues: [ { name: a, reclaim_min_runtime: soon } ]\n", "reclaim_min_runtime"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "name: bad\nduration: 1h\ncluster: { nodes: 1 }\npolicy:\n  name: kai\n%s",
                 cases[i].policy);
        simtest_expect_rejected(yaml, cases[i].want, i);
    }
}

/*
 * Initial replicas with an HPA: what it asks for the load at t = 0. One replica
 * serves 8 / (40 ms + 8 × 10 ms) = 66.7 req/s on a whole card, 46.7 at the
 * 0.7 target: 1,000 req/s needs ceil(21.4) = 22 whole-card replicas, or
 * ceil(42.9) = 43 half-card ones (a half-card replica counts at half a card).
 */
static uint32_t initial_replicas(const char *cluster, const char *fraction)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: kai-init\nduration: 1h\nsample_interval: 60s\ncluster: %s\n"
             "services:\n  - name: q\n    latency: { a_ms: 40, b_ms: 10 }\n"
             "    batching: { max_batch: 8, max_wait: 20ms }\n    memory_gb: 8\n"
             "    replicas: { min: 2, max: 96 }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 1000 } }\n"
             "policy: { name: kai, inference_gpus: 32, gpu_fraction: { inference: %s },\n"
             "          autoscale: { target: 0.7 } }\n",
             cluster, fraction);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    uint32_t n = service_replicas(&s.svcs[0]);
    simtest_free(&sc, &s);
    return n;
}

Test(kai_actions, initial_replicas_sized_from_the_load_at_start)
{
    cr_expect_eq(initial_replicas("{ nodes: 4, gpus_per_node: 8 }", "1"), 22);
    cr_expect_eq(initial_replicas("{ nodes: 4, gpus_per_node: 8, sharing: timeslice, "
                                  "timeSlicing: { replicas: 2 } }",
                                  "0.5"),
                 43);
}
