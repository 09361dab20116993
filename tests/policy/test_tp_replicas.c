/*
 * test_tp_replicas.c — tensor-parallel LLM replicas (services[].llm.tensor_parallel)
 * in every policy, on schedules counted by hand: where a TP-4 replica lands on a
 * 2-node × 8-card cluster, what Kueue's quota counts for it, how many jobs KAI
 * evicts to gather its cards, what time-slicing gives it, the refusals under
 * MPS and with a fraction of a card, faults and scale-down of a multi-card
 * replica, and a whole run per policy in which no replica ever spans nodes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/policy/common.h"
#include "sim/policy/kai_sched.h"
#include "sim/policy/kueue_admit.h"
#include "tests/polsubmit.h"

#define SEC(x) ((sim_time)(x)*SIM_SEC)

/* Llama-2-70B in BF16 (128.5 GiB of weights) on 4 cards of one node. */
#define TP4_SERVICE(replicas)                                                  \
    "services:\n"                                                              \
    "  - name: big\n"                                                          \
    "    kind: llm\n"                                                          \
    "    llm: { model: llama-2-70b, tensor_parallel: 4, max_context: 4096 }\n" \
    "    startup: { load_gbps: { sigma: 0 } }\n"                               \
    "    replicas: " replicas "\n"                                             \
    "    arrivals: { synthetic: { rate_rps: 0.2 } }\n"

/* The cards of replica ri of service svc (an LLM service), in member order; returns how many. */
static uint32_t rep_cards(const struct sim *s, uint32_t svc, uint32_t ri, uint32_t *cards)
{
    const struct llm_rep *r = &s->svcs[svc].llm->reps[ri];
    for (uint32_t i = 0; i < r->ntp; i++)
        cards[i] = s->cl.tenants[r->tids[i]].gpu;
    return r->ntp;
}

/* Live (not gone) replicas of svc. */
static uint32_t live_reps(const struct sim *s, uint32_t svc)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->svcs[svc].nreps; r++)
        n += !s->svcs[svc].reps[r].gone;
    return n;
}

/* Every live replica of every LLM service: tensor_parallel distinct cards, all of one node. */
static void expect_one_node(const struct sim *s, const char *what)
{
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        const struct service *sv = &s->svcs[i];
        if (!sv->llm)
            continue;
        for (uint32_t r = 0; r < sv->nreps; r++) {
            if (sv->reps[r].gone)
                continue;
            uint32_t cards[LLM_MAX_TP], n = rep_cards(s, i, r, cards);
            cr_assert_eq(n, sv->cfg->llm->tp, "%s: replica %u has %u cards", what, r, n);
            for (uint32_t a = 0; a < n; a++) {
                cr_assert_eq(s->cl.cards[cards[a]].node, s->cl.cards[cards[0]].node,
                             "%s at %.0f s: replica %u of %s spans nodes (cards %u, %u)", what,
                             sim_time_to_sec(s->eng.now), r, sv->cfg->name, cards[0], cards[a]);
                for (uint32_t b = 0; b < a; b++)
                    cr_assert_neq(cards[a], cards[b], "%s: a card twice", what);
            }
        }
    }
}

/*
 * Two TP-4 replicas placed at t = 0 on an empty 2 × 8 cluster, by every
 * policy. By hand: the first goes to the lowest node's lowest cards (no node
 * holds inference, both have 8 free: best fit ties to node 0) = cards 0-3; the
 * second to the node already holding inference, node 0, cards 4-7 (dedicated:
 * the next cards of its pool; timeslice: a card holding the first replica has
 * no memory left for a second, 0.9 × 80 GB each, so cards 4-7).
 */
Test(tp_replicas, every_policy_puts_a_tp4_replica_on_four_cards_of_one_node)
{
    static const struct {
        const char *cluster, *policy;
    } cases[] = {
        {"{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }",
         "{ name: dedicated, inference_gpus: 8 }"},
        {"{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }",
         "{ name: kueue, inference_gpus: 8 }"},
        {"{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }", "{ name: kai, inference_gpus: 8 }"},
        {"{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }",
         "{ name: adaptive, inference_gpus: 8 }"},
        {"{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }",
         "{ name: tidal, inference_gpus: 8, day_gpus: 8 }"},
        {"{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8, sharing: timeslice, "
         "timeSlicing: { replicas: 2 } }",
         "{ name: timeslice, inference_gpus: 8 }"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct scenario sc;
        struct sim s;
        polsubmit_build(&sc, &s, cases[c].cluster, "", TP4_SERVICE("2"), cases[c].policy);
        cr_assert_eq(live_reps(&s, 0), 2, "%s: %u replicas", cases[c].policy, live_reps(&s, 0));
        for (uint32_t r = 0; r < 2; r++) {
            uint32_t cards[LLM_MAX_TP];
            cr_assert_eq(rep_cards(&s, 0, r, cards), 4);
            for (uint32_t i = 0; i < 4; i++)
                cr_expect_eq(cards[i], 4 * r + i, "%s: replica %u member %u on card %u",
                             cases[c].policy, r, i, cards[i]);
        }
        simtest_free(&sc, &s);
    }
}

/*
 * Kueue: a TP-4 replica is a workload of 4 GPUs. Inference nominal 8 (no
 * borrowing), training 8; three replicas asked for: two are admitted (8 GPUs
 * of quota, placed on cards 0-7), the third does not fit (8 + 4 > 8) and stays
 * pending. An 8-GPU training job is admitted on the training quota and takes
 * node 1. Usage at that instant, by hand: inference 8, training 8. (Counting
 * one GPU per replica, the old rule, admitted all three: usage 3.)
 */
Test(tp_replicas, kueue_quota_counts_four_gpus_per_tp4_replica)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }", "",
                    TP4_SERVICE("3"),
                    "{ name: kueue, inference_gpus: 12, queues: { inference: { nominal: 8, "
                    "borrowing_limit: 0 }, training: { nominal: 8, borrowing_limit: 0 } } }");
    cr_expect_float_eq(kueue_policy_usage(&s, true), 8, 1e-12);
    cr_expect_eq(live_reps(&s, 0), 2);
    uint32_t j = polsubmit_job(&s, 3600, 8, NULL);
    cr_expect_eq(s.tr.jobs[j].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j].gpus[0], 8, "the gang is not on node 1");
    cr_expect_float_eq(kueue_policy_usage(&s, false), 8, 1e-12);
    engine_run(&s.eng, SEC(1800));
    cr_expect_float_eq(kueue_policy_usage(&s, true), 8, 1e-12);
    cr_expect_eq(live_reps(&s, 0), 2, "the third replica was admitted beyond the quota");
    expect_one_node(&s, "kueue");
    simtest_free(&sc, &s);
}

/*
 * Kueue, an admitted TP-4 replica whose quota victims are on two nodes.
 * Replica 1 on cards 0-3 (inference nominal 8, training 8). At t = 0 twelve
 * 1-GPU jobs j0..j11 (best fit: cards 4-7, then 8-15); j5 (card 9) ends at
 * 100 s and j1 (card 5) at 200 s; j12 (150 s) takes card 9, j13 (250 s) card
 * 5. Training holds 12 cards on nominal 8 (4 borrowed). At the first HPA tick
 * (1 h, a load for 2 replicas) a second replica (4 GPUs) fits inference's
 * nominal only once the borrowed 4 are reclaimed: Kueue evicts the most
 * recently admitted, j13 (card 5, node 0), j12 (9), j11 (15), j10 (14), all
 * on node 1 but one. Node 1 then has 3 cards coming free, node 0 one; the
 * replica needs 4 of one node, so the scheduler preempts the cheapest pod on
 * node 1, j4 (card 8, the lowest of the 1-GPU cards), which keeps its
 * admission and restarts on card 5. The replica lands on cards 8, 9, 14, 15.
 */
Test(tp_replicas, kueue_gathers_one_node_for_an_admitted_tp4_replica)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }", "",
                    "services:\n"
                    "  - name: big\n"
                    "    kind: llm\n"
                    "    llm: { model: llama-2-70b, tensor_parallel: 4, max_context: 4096 }\n"
                    "    startup: { load_gbps: { sigma: 0 } }\n"
                    "    replicas: { count: 1, min: 1, max: 2 }\n"
                    "    arrivals: { synthetic: { rate_rps: 30 } }\n",
                    "{ name: kueue, inference_gpus: 8, autoscale: { target: 0.7 } }");
    cr_assert_eq(live_reps(&s, 0), 1);
    uint32_t j[14];
    for (uint32_t i = 0; i < 12; i++)
        j[i] = polsubmit_job(&s, i == 1 ? 200 : i == 5 ? 100 : 50000, 1, NULL);
    for (uint32_t i = 0; i < 12; i++)
        cr_assert_eq(s.tr.jobs[j[i]].gpus[0], 4 + i, "j%u on card %u", i, s.tr.jobs[j[i]].gpus[0]);
    engine_run(&s.eng, SEC(150));
    j[12] = polsubmit_job(&s, 50000, 1, NULL);
    engine_run(&s.eng, SEC(250));
    j[13] = polsubmit_job(&s, 50000, 1, NULL);
    cr_assert_eq(s.tr.jobs[j[12]].gpus[0], 9);
    cr_assert_eq(s.tr.jobs[j[13]].gpus[0], 5);
    cr_assert_eq(s.cl.free_cards, 0);
    engine_run(&s.eng, SEC(3601));
    cr_expect_float_eq(kueue_policy_usage(&s, true), 8, 1e-12);
    static const uint32_t evicted[] = {4, 10, 11, 12, 13};
    for (uint32_t i = 0; i < 14; i++) {
        bool want = false;
        for (size_t e = 0; e < sizeof(evicted) / sizeof(evicted[0]); e++)
            want |= evicted[e] == i;
        if (i != 1 && i != 5)
            cr_expect_eq(s.tr.jobs[j[i]].preemptions, want ? 1u : 0u, "j%u preempted %u times", i,
                         s.tr.jobs[j[i]].preemptions);
    }
    engine_run(&s.eng, SEC(4200));
    cr_assert_eq(live_reps(&s, 0), 2);
    uint32_t cards[LLM_MAX_TP];
    rep_cards(&s, 0, 1, cards);
    static const uint32_t want_cards[] = {8, 9, 14, 15};
    for (uint32_t i = 0; i < 4; i++)
        cr_expect_eq(cards[i], want_cards[i], "member %u on card %u", i, cards[i]);
    cr_expect_eq(s.tr.jobs[j[4]].state, JOB_RUNNING, "j4 kept its admission but did not restart");
    cr_expect_eq(s.tr.jobs[j[4]].gpus[0], 5);
    cr_expect_float_eq(kueue_policy_usage(&s, false), 8, 1e-12);
    expect_one_node(&s, "kueue");
    simtest_free(&sc, &s);
}

/*
 * KAI: reclaim for a TP-4 replica in one decision. One replica on cards 0-3
 * (inference quota 8), training (quota 8) over its quota on all 12 other
 * cards: 1-GPU jobs on cards 4-7 (node 0) and 12-15 (node 1), a 4-GPU job on
 * cards 8-11. The HPA wants a second replica. Node 0 needs four 1-GPU jobs
 * evicted (4 GPUs, 4 jobs), node 1 the 4-GPU job alone (4 GPUs, 1 job): one
 * eviction, its 4 cards held, the replica placed there once its save ends;
 * nothing else is evicted later (no thrash).
 */
Test(tp_replicas, kai_reclaims_one_node_for_a_tp4_replica_in_one_decision)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }", "",
                    TP4_SERVICE("1"), "{ name: kai, inference_gpus: 8 }");
    cr_assert_eq(live_reps(&s, 0), 1);
    uint32_t small[8], big;
    for (uint32_t i = 0; i < 4; i++)
        small[i] = polsubmit_job(&s, 50000, 1, NULL);
    big = polsubmit_job(&s, 50000, 4, NULL);
    for (uint32_t i = 4; i < 8; i++)
        small[i] = polsubmit_job(&s, 50000, 1, NULL);
    for (uint32_t i = 0; i < 4; i++)
        cr_assert_eq(s.tr.jobs[small[i]].gpus[0], 4 + i);
    cr_assert_eq(s.tr.jobs[big].gpus[0], 8);
    for (uint32_t i = 4; i < 8; i++)
        cr_assert_eq(s.tr.jobs[small[i]].gpus[0], 8 + i);
    cr_assert_eq(s.cl.free_cards, 0);
    engine_run(&s.eng, SEC(1000));
    struct kp *k = s.pol_state;
    k->want[0] += 1;
    s.pol->on_tick(&s, s.pol_state); /* no autoscale block: the tick only runs a cycle */
    cr_expect_eq(k->reclaims, 1, "%" PRIu64 " evictions for one replica", k->reclaims);
    cr_expect_eq(s.tr.jobs[big].preemptions, 1);
    for (uint32_t g = 8; g < 12; g++)
        cr_expect_eq(k->hold[g].kind, KAI_HOLD_INFER, "card %u not held", g);
    engine_run(&s.eng, SEC(3000));
    cr_assert_eq(live_reps(&s, 0), 2);
    uint32_t cards[LLM_MAX_TP];
    rep_cards(&s, 0, 1, cards);
    for (uint32_t i = 0; i < 4; i++)
        cr_expect_eq(cards[i], 8 + i);
    for (uint32_t i = 0; i < 8; i++)
        cr_expect_eq(s.tr.jobs[small[i]].preemptions, 0);
    engine_run(&s.eng, SEC(20000));
    cr_expect_eq(k->reclaims, 1);
    expect_one_node(&s, "kai");
    simtest_free(&sc, &s);
}

/*
 * Time-slicing: a TP-2 replica takes one slot on each of its 2 cards. Two
 * slots per card, 2 ms slices and a 100 µs switch. The replica is on cards 0
 * and 1 (Llama-3.1-8B at gpu_memory_utilization 0.45: 36 GiB per card); a
 * 1-GPU job goes to the most-allocated card, card 0. With both busy, the
 * member on card 0 runs at T / (2 (T + s)) = 2 / (2 × 2.1) = 0.47619 of a
 * card, the one on card 1 alone at 1; a step of the replica waits for its
 * slowest member: 0.47619.
 */
Test(tp_replicas, timeslice_gives_a_tp2_replica_one_slot_on_each_card)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s,
                    "{ gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 4, sharing: timeslice, "
                    "timeSlicing: { replicas: 2, slice: 2ms, switch: 100us } }",
                    "  memory_gb_per_gpu: 20\n",
                    "services:\n"
                    "  - name: chat\n"
                    "    kind: llm\n"
                    "    llm: { model: llama-3.1-8b, tensor_parallel: 2, max_context: 8192,\n"
                    "           gpu_memory_utilization: 0.45 }\n"
                    "    replicas: 1\n"
                    "    arrivals: { synthetic: { rate_rps: 0.2 } }\n",
                    "{ name: timeslice, inference_gpus: 2 }");
    uint32_t cards[LLM_MAX_TP];
    cr_assert_eq(rep_cards(&s, 0, 0, cards), 2);
    cr_expect_eq(cards[0], 0);
    cr_expect_eq(cards[1], 1);
    cr_expect_eq(s.cl.cards[0].nten, 1);
    cr_expect_eq(s.cl.cards[1].nten, 1);
    uint32_t j = polsubmit_job(&s, 36000, 1, NULL);
    cr_assert_eq(s.tr.jobs[j].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j].gpus[0], 0);
    const struct llm_rep *r = &s.svcs[0].llm->reps[0];
    for (uint32_t i = 0; i < 2; i++)
        cluster_set_active(&s.cl, r->tids[i], s.eng.now, true, USE_INFER);
    double v0 = cluster_tenant_speed(&s.cl, r->tids[0]),
           v1 = cluster_tenant_speed(&s.cl, r->tids[1]);
    cr_expect_float_eq(v0, 2.0 / (2 * 2.1), 1e-9, "card 0 member at %f", v0);
    cr_expect_float_eq(v1, 1.0, 1e-12);
    simtest_free(&sc, &s);
}

/* Refusals at load, naming the file, line, column and key. */
Test(tp_replicas, mps_and_a_fraction_of_a_card_are_refused_for_tp_replicas)
{
    /* Line 7, column 49: the value of tensor_parallel. */
    simtest_expect_rejected("name: x\nduration: 1h\n"
                            "cluster: { gpu: a100-sxm4-80gb, nodes: 1, sharing: mps }\n"
                            "services:\n"
                            "  - name: big\n"
                            "    kind: llm\n"
                            "    llm: { model: llama-2-70b, tensor_parallel: 4 }\n"
                            "    arrivals: { synthetic: { rate_rps: 1 } }\n"
                            "policy: { name: mps }\n",
                            "bad.yaml:7:49: 'tensor_parallel': service 'big': a tensor-parallel "
                            "replica under MPS is not modelled",
                            0);
    simtest_expect_rejected("name: x\nduration: 1h\n"
                            "cluster: { gpu: a100-sxm4-80gb, nodes: 1, sharing: timeslice }\n"
                            "services:\n"
                            "  - name: big\n"
                            "    kind: llm\n"
                            "    llm: { model: llama-2-70b, tensor_parallel: 4 }\n"
                            "    gpu_fraction: 0.5\n"
                            "    arrivals: { synthetic: { rate_rps: 1 } }\n"
                            "policy: { name: timeslice }\n",
                            "bad.yaml:8:19: 'gpu_fraction': service 'big': a tensor-parallel "
                            "replica (tensor_parallel: 4) takes one time-slicing slot on each",
                            1);
    simtest_expect_rejected("name: x\nduration: 1h\n"
                            "cluster: { gpu: a100-sxm4-80gb, nodes: 1, sharing: mig,\n"
                            "           mig: { layout: 7g.80gb } }\n"
                            "services:\n"
                            "  - name: big\n"
                            "    kind: llm\n"
                            "    llm: { model: llama-2-70b, tensor_parallel: 4 }\n"
                            "    arrivals: { synthetic: { rate_rps: 1 } }\n"
                            "policy: { name: mig-static }\n",
                            "bad.yaml:8:49: 'tensor_parallel': tensor parallelism across MIG", 2);
}

/*
 * A fault in any member takes the whole replica down (its 4 cards stop
 * serving) and it comes back after the restart delay; a scale-down hands
 * back all 4 cards at once.
 */
Test(tp_replicas, a_member_fault_takes_the_replica_down_and_scale_down_frees_all_cards)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }", "",
                    TP4_SERVICE("2"), "{ name: dedicated, inference_gpus: 8 }");
    engine_run(&s.eng, SEC(60));
    const struct llm_rep *r = &s.svcs[0].llm->reps[1];
    cr_assert(!s.svcs[0].reps[1].down);
    cr_expect_eq(sim_inject_fault(&s, r->tids[2]), 1); /* exclusive: the member alone dies */
    cr_expect(s.svcs[0].reps[1].down, "a member's fault left the replica up");
    cr_expect_eq(sim_inject_fault(&s, r->tids[0]), 0, "a down replica faulted again");
    engine_run(&s.eng, SEC(60) + sc.restart_delay);
    cr_expect(!s.svcs[0].reps[1].down, "not up after the restart delay");
    /* Scale down: the idle replica on the emptiest node goes (both on node 0: the newest idle). */
    uint32_t free0 = s.cl.free_cards, gpu = UINT32_MAX;
    engine_run(&s.eng, SEC(7200)); /* 0.2 req/s: both idle most of the time */
    cr_assert_eq(sim_stop_replica(&s, 0, &gpu), 0);
    engine_run(&s.eng, SEC(7200) + SEC(600)); /* a busy one drains its batch first */
    cr_expect_eq(s.cl.free_cards, free0 + 4, "free cards %u, were %u", s.cl.free_cards, free0);
    cr_expect(gpu == 0 || gpu == 4, "first card %u", gpu);
    for (uint32_t g = gpu; g < gpu + 4; g++)
        cr_expect_eq(s.cl.cards[g].nten, 0, "card %u kept a member", g);
    simtest_free(&sc, &s);
}

/*
 * A whole loaded run per policy (HPA on the 70B service, a stream of 1- to
 * 8-GPU training jobs, faults): every 5 minutes every replica is checked to
 * hold tensor_parallel distinct cards of one node; requests and card time are
 * conserved.
 */
Test(tp_replicas, no_replica_ever_spans_nodes_over_a_run, .timeout = 120)
{
    static const struct {
        const char *sharing, *policy;
    } cases[] = {
        {"exclusive", "{ name: dedicated, inference_gpus: 12 }"},
        {"exclusive", "{ name: kueue, inference_gpus: 12, autoscale: { target: 0.7 } }"},
        {"exclusive", "{ name: kai, inference_gpus: 16, autoscale: { target: 0.7 } }"},
        {"exclusive", "{ name: adaptive, inference_gpus: 12 }"},
        {"exclusive", "{ name: tidal, inference_gpus: 8, day_gpus: 16, day: '04:00-10:00', "
                      "autoscale: { target: 0.7 } }"},
        {"timeslice", "{ name: timeslice, inference_gpus: 8, autoscale: { target: 0.7 } }"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char yaml[4096];
        snprintf(yaml, sizeof(yaml),
                 "name: tp-run\n"
                 "duration: 18h\n"
                 "sample_interval: 5m\n"
                 "timezone: '+00:00'\n"
                 "cluster: { gpu: a100-sxm4-80gb, nodes: 3, gpus_per_node: 8, sharing: %s,\n"
                 "           faults: { per_tenant_per_hour: 0.02 } }\n"
                 "services:\n"
                 "  - name: big\n"
                 "    kind: llm\n"
                 "    llm: { model: llama-2-70b, tensor_parallel: 4, max_context: 4096,\n"
                 "           autoscale: { metric: tokens, target: 400 } }\n"
                 "    replicas: { min: 1, max: 4 }\n"
                 "    arrivals: { synthetic: { peak_rps: 8, trough_ratio: 0.05, peak_hour: 6 } }\n"
                 "  - name: chat\n"
                 "    kind: llm\n"
                 "    llm: { model: llama-3.1-8b, max_context: 8192 }\n"
                 "    replicas: { min: 1, max: 4 }\n"
                 "    arrivals: { synthetic: { peak_rps: 6, trough_ratio: 0.2, peak_hour: 8 } }\n"
                 "training:\n"
                 "  backlog: 6\n"
                 "  jobs: { synthetic: { per_hour: 4, duration: { lognormal: { median: 1h, "
                 "sigma: 0.8 } }, max_duration: 6h, gpus: { 1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1 } } }\n"
                 "policy: %s\n",
                 cases[c].sharing, cases[c].policy);
        struct scenario sc;
        struct sim s;
        simtest_build(&sc, &s, yaml, 3);
        expect_one_node(&s, cases[c].policy);
        uint32_t lo = UINT32_MAX, hi = 0;
        for (sim_time t = SEC(300); t <= sc.duration; t += SEC(300)) {
            engine_run(&s.eng, t);
            expect_one_node(&s, cases[c].policy);
            uint32_t n = live_reps(&s, 0);
            lo = n < lo ? n : lo;
            hi = n > hi ? n : hi;
        }
        s.end = sc.duration;
        cr_log_info("%s: %u..%u replicas of the 70B service, %" PRIu64 " faults, %u jobs done",
                    cases[c].policy, lo, hi, s.faults, s.tr.done);
        if (c > 0) /* the elastic policies scale the TP service with its daily load */
            cr_expect_gt(hi, lo, "%s: the TP service never scaled (%u)", cases[c].policy, lo);
        cr_expect_gt(s.faults, 0);
        cr_expect_gt(s.tr.done, 0);
        simtest_expect_conserved(&s);
        simtest_free(&sc, &s);
    }
}

/*
 * Pools split by card need. A TP-4 70B service and a one-card 8B service,
 * both at a peak of 0.01 req/s: each needs one replica at its peak, 4 cards
 * and 1 card. A pool of 10 cards split by need gives 8 cards (2 replicas) and
 * 2 (2 replicas): 10 cards. By peak rate (equal) it gave 5 cards each: 2
 * replicas of 4 cards and 5 of one, 13 cards for a pool of 10.
 */
Test(tp_replicas, pools_are_split_by_card_need)
{
    static const char *const policies[] = {
        "{ name: dedicated, inference_gpus: 10 }",
        "{ name: tidal, inference_gpus: 10, day: '09:00-22:00' }",
    };
    for (size_t c = 0; c < sizeof(policies) / sizeof(policies[0]); c++) {
        struct scenario sc;
        struct sim s;
        polsubmit_build(&sc, &s, "{ gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8 }", "",
                        "timezone: '+00:00'\n"
                        "services:\n"
                        "  - name: big\n"
                        "    kind: llm\n"
                        "    llm: { model: llama-2-70b, tensor_parallel: 4, max_context: 4096 }\n"
                        "    arrivals: { synthetic: { rate_rps: 0.01 } }\n"
                        "  - name: chat\n"
                        "    kind: llm\n"
                        "    llm: { model: llama-3.1-8b, max_context: 8192 }\n"
                        "    arrivals: { synthetic: { rate_rps: 0.01 } }\n",
                        policies[c]);
        cr_expect_eq(live_reps(&s, 0), 2, "%s: %u replicas of the 70B", policies[c],
                     live_reps(&s, 0));
        cr_expect_eq(live_reps(&s, 1), 2, "%s: %u replicas of the 8B", policies[c],
                     live_reps(&s, 1));
        cr_expect_eq(s.cl.free_cards, 16 - 10);
        expect_one_node(&s, policies[c]);
        simtest_free(&sc, &s);
    }
}

/*
 * Node reclaim under pool constraints: an A100 node (cards 0-7) and an H100 node (cards
 * 8-15); a TP-4 service that requires H100 runs one replica on cards 8-11. Training fills the
 * rest: eight 1-GPU jobs bin-packed (cards 12-15, then 0-3) and one 4-GPU job (cards 4-7).
 * A second replica needs 4 cards of one node: freeing either node costs 4 GPUs, and the A100
 * node's plan (cards 4-7, one job) has fewer jobs, so a reclaim that ignored the constraint
 * chose it, and held cards the replica's placement refuses.
 * By hand: the H100 node's plan, cards 12-15, the four 1-GPU jobs evicted; the 4-GPU job
 * untouched; the replica starts on 12-15.
 */
Test(tp_replicas, kai_reclaims_a_node_of_the_pool_a_tp_service_requires)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s,
                    "{ pools: [ { name: a100, gpu: a100-sxm4-80gb, nodes: 1 },\n"
                    "           { name: h100, gpu: h100-sxm5-80gb, nodes: 1 } ] }",
                    "", TP4_SERVICE("1") "    require: { gpu: h100-sxm5-80gb }\n",
                    "{ name: kai, inference_gpus: 8 }");
    cr_assert_eq(live_reps(&s, 0), 1);
    uint32_t cards[LLM_MAX_TP];
    rep_cards(&s, 0, 0, cards);
    cr_assert_eq(cards[0], 8, "the first replica on card %u", cards[0]);
    uint32_t small[8];
    for (uint32_t i = 0; i < 8; i++)
        small[i] = polsubmit_job(&s, 50000, 1, NULL);
    uint32_t big = polsubmit_job(&s, 50000, 4, NULL);
    cr_assert_eq(s.cl.free_cards, 0);
    bool on_a100[16] = {false};
    for (uint32_t i = 0; i < 8; i++)
        on_a100[i] = s.tr.jobs[small[i]].gpus[0] < 8;
    cr_assert_lt(s.tr.jobs[big].gpus[0], 8, "the 4-GPU job on card %u", s.tr.jobs[big].gpus[0]);
    engine_run(&s.eng, SEC(1000));
    struct kp *k = s.pol_state;
    k->want[0] += 1;
    s.pol->on_tick(&s, s.pol_state);
    cr_expect_eq(s.tr.jobs[big].preemptions, 0, "the A100 node's 4-GPU job was evicted");
    for (uint32_t g = 0; g < 8; g++)
        cr_expect_neq(k->hold[g].kind, KAI_HOLD_INFER, "A100 card %u held for the H100 service", g);
    engine_run(&s.eng, SEC(3000));
    cr_assert_eq(live_reps(&s, 0), 2);
    rep_cards(&s, 0, 1, cards);
    for (uint32_t i = 0; i < 4; i++)
        cr_expect_eq(cards[i], 12 + i);
    for (uint32_t i = 0; i < 8; i++)
        cr_expect_eq(s.tr.jobs[small[i]].preemptions, on_a100[i] ? 0u : 1u, "job %u", small[i]);
    expect_one_node(&s, "kai with pools");
    simtest_free(&sc, &s);
}
