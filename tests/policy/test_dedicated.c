/*
 * test_dedicated.c — `dedicated` queueing: BestEffortFIFO (default) and
 * StrictFIFO on a schedule computed by hand.
 *
 * 1 node × 4 cards; the inference pool is card 0 (one replica), so training
 * has cards 1-3. No checkpoints (a first start runs at once). At t = 0:
 *   A: 2 GPUs, 2 h   starts at 0 on cards 1-2
 *   B: 3 GPUs, 1 h   does not fit (1 card free)
 *   C: 1 GPU,  1 h
 * BestEffortFIFO (Kueue's default queueingStrategy): C starts at 0 on card 3
 *   and ends at 1 h; A ends at 2 h, B starts at 2 h and ends at 3 h.
 * StrictFIFO: B blocks C. A ends at 2 h, B runs 2-3 h, C runs 3-4 h.
 */
#include "tests/polsubmit.h"

static const char svc[] = "services:\n"
                          "  - name: q\n"
                          "    latency: { a_ms: 1, b_ms: 0 }\n"
                          "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n";

static void ded_run(const char *policy, double *start, double *end)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, "{ nodes: 1, gpus_per_node: 4 }", "", svc, policy);
    uint32_t id[3];
    id[0] = polsubmit_job(&s, 7200, 2, NULL);
    id[1] = polsubmit_job(&s, 3600, 3, NULL);
    id[2] = polsubmit_job(&s, 3600, 1, NULL);
    cr_assert_eq(engine_run(&s.eng, 5 * SIM_HOUR), 0);
    for (int i = 0; i < 3; i++) {
        start[i] = sim_time_to_sec(s.tr.jobs[id[i]].start);
        end[i] = polsubmit_end_s(&s, id[i]);
    }
    /* Card 0 keeps its replica: no training member ever ran there. */
    cr_expect_float_eq(s.cl.cards[0].acc[USE_USEFUL], 0, 1e-9);
    simtest_free(&sc, &s);
}

Test(dedicated, best_effort_fifo_lets_a_small_job_pass_a_blocked_head)
{
    double st[3], en[3];
    ded_run("{ name: dedicated, inference_gpus: 1 }", st, en);
    static const double want_st[3] = {0, 7200, 0}, want_en[3] = {7200, 10800, 3600};
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(st[i], want_st[i], 1e-6, "job %d start %f", i, st[i]);
        cr_expect_float_eq(en[i], want_en[i], 1e-6, "job %d end %f", i, en[i]);
    }
}

Test(dedicated, strict_fifo_head_blocks_the_queue)
{
    double st[3], en[3];
    ded_run("{ name: dedicated, inference_gpus: 1, queueing: StrictFIFO }", st, en);
    static const double want_st[3] = {0, 7200, 10800}, want_en[3] = {7200, 10800, 14400};
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(st[i], want_st[i], 1e-6, "job %d start %f", i, st[i]);
        cr_expect_float_eq(en[i], want_en[i], 1e-6, "job %d end %f", i, en[i]);
    }
}

Test(dedicated, unknown_queueing_is_refused)
{
    simtest_expect_rejected("name: bad\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 4 }\n"
                            "policy: { name: dedicated, queueing: Fair }\n",
                            "queueing", 0);
}
