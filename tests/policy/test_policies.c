/*
 * test_policies.c — policies against schedules computed by hand:
 * dedicated's analytic utilisation, tidal's windows and MIG re-layouts,
 * adaptive's scale-up ahead of a ramp it has seen before.
 */
#include <math.h>
#include <stdio.h>

#include "sim/llm_cfg.h"
#include "tests/simtest.h"

Test(policies, dedicated_known_load_gives_analytic_utilisation)
{
    /*
     * Card 0: one replica, Poisson 500/s, deterministic 1 ms batches of one:
     * busy ρ = 0.5. Card 1: one training job longer than the run: busy 1.
     * Cluster busy = (0.5 + 1) / 2 = 0.75; allocated = 1; useful = busy.
     */
    const char *yaml = "name: ded\n"
                       "duration: 2h\n"
                       "cluster: { nodes: 1, gpus_per_node: 2 }\n"
                       "services:\n"
                       "  - name: q\n"
                       "    latency: { a_ms: 1, b_ms: 0, dist: deterministic }\n"
                       "    batching: { max_batch: 1, max_wait: 0s }\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 500 } }\n"
                       "training:\n"
                       "  backlog: 1\n"
                       "  checkpoint: { interval: none }\n"
                       "  jobs: { synthetic: { per_hour: 0, duration: { lognormal: { median: 10h, "
                       "sigma: 0 } }, gpus: { 1: 1 } } }\n"
                       "policy: { name: dedicated, inference_gpus: 1 }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 5);
    cr_expect_float_eq(sim_util_allocated(&s), 1.0, 1e-9);
    cr_expect(fabs(sim_util_busy(&s) - 0.75) < 0.005, "busy %f", sim_util_busy(&s));
    cr_expect_float_eq(sim_util_useful(&s), sim_util_busy(&s), 1e-9);
    simtest_free(&sc, &s);
}

static bool job_running(const struct sim *s)
{
    return s->tr.njobs > 0 && s->tr.jobs[0].state == JOB_RUNNING &&
           s->tr.jobs[0].phase != PHASE_STOP && !s->tr.jobs[0].stop_after;
}

Test(policies, tidal_trains_only_at_night_and_relayouts_at_the_edges)
{
    const char *yaml =
        "name: tidal\n"
        "duration: 2d\n"
        "sample_interval: 5m\n"
        "cluster:\n"
        "  nodes: 1\n"
        "  gpus_per_node: 2\n"
        "  sharing: mig\n"
        "  mig: { layout: 7g.80gb, reconfig: 60s, drain_grace: 30s }\n"
        "services:\n"
        "  - name: q\n"
        "    latency: { a_ms: 1, b_ms: 0.1 }\n"
        "    arrivals: { synthetic: { peak_rps: 40, trough_ratio: 0.2, peak_hour: 14 } }\n"
        "training:\n"
        "  backlog: 1\n"
        "  checkpoint: { interval: 30m }\n"
        "  jobs: { synthetic: { per_hour: 0, duration: { lognormal: { median: 100h, sigma: 0 } "
        "}, gpus: { 1: 1 } } }\n"
        "policy:\n"
        "  name: tidal\n"
        "  inference_gpus: 1\n"
        "  day_gpus: 2\n"
        "  day: \"09:00-22:00\"\n"
        "  lead: 30m\n"
        "  relayout: { day: \"1g.10gb*7\", night: 7g.80gb }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    /* Hours of each day at which training must / must not run. */
    for (int day = 0; day < 2; day++) {
        for (int h = 0; h < 24; h++) {
            sim_time t = day * SIM_DAY + h * SIM_HOUR + 15 * SIM_MIN;
            cr_assert_eq(engine_run(&s.eng, t), 0);
            bool night = h < 8 || h >= 23; /* 08:30 hand-over, 22:00 edge + re-layout + restore */
            bool day_time = h >= 9 && h < 22;
            if (night)
                cr_expect(job_running(&s), "day %d %02d:15: training should run", day, h);
            if (day_time) {
                cr_expect(!job_running(&s), "day %d %02d:15: training runs by day", day, h);
                /* The training card was re-laid out for the day: 7 replicas on it. */
                cr_expect_geq(service_replicas(&s.svcs[0]), 7, "day %d %02d:15", day, h);
            }
        }
    }
    cr_assert_eq(sim_run(&s, NULL), 0);
    /*
     * Cards are re-laid out only when the window needs them in the other
     * layout: by hand, day 0 08:30 (the training card, to 1g.10gb×7), day 1
     * 08:30 (the card training used that night) and day 1 22:00 (a card
     * emptied of replicas, back to 7g.80gb); the night replica keeps its card.
     * Each re-layout keeps its card out of service for 30 s drain + 60 s.
     */
    cr_expect_eq(s.relayouts, 3, "%lu re-layouts", (unsigned long)s.relayouts);
    double reconfig = 0;
    for (uint32_t g = 0; g < s.cl.ngpus; g++)
        reconfig += s.cl.cards[g].acc[USE_RECONFIG];
    cr_expect(fabs(reconfig / 1e6 - (double)s.relayouts * 90.0) < 1e-6, "reconfiguring %f s",
              reconfig / 1e6);
    /* Every preemption was graceful: nothing lost. */
    cr_expect_float_eq(s.tr.jobs[0].lost_us, 0.0, 1e-9);
    cr_expect_geq(s.tr.jobs[0].preemptions, 2);
    simtest_free(&sc, &s);
}

Test(policies, adaptive_scales_up_before_a_ramp_it_has_seen)
{
    /* 5 req/s until 07:00, a linear ramp to 200 req/s at 08:00, then 200 until 22:00. */
    const char *yaml =
        "name: adaptive\n"
        "duration: 2d\n"
        "sample_interval: 1m\n"
        "cluster: { nodes: 2, gpus_per_node: 8 }\n"
        "services:\n"
        "  - name: q\n"
        "    latency: { a_ms: 100, b_ms: 20, dist: deterministic }\n"
        "    slo: { p99_ms: 1000 }\n"
        "    batching: { max_batch: 8, max_wait: 5ms }\n"
        "    replicas: { min: 1, max: 16 }\n"
        "    arrivals: { synthetic: { shape: hourly, hourly_kind: points, hourly: [5, 5, 5, 5, 5, "
        "5, 5, 5, 200, 200, "
        "200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 5] } }\n"
        "training:\n"
        "  backlog: 40\n"
        "  checkpoint: { interval: 30m }\n"
        "  jobs: { synthetic: { per_hour: 0, duration: { lognormal: { median: 30h, sigma: 0 } "
        "}, gpus: { 1: 1 } } }\n"
        "policy: { name: adaptive, inference_gpus: 1, horizon: 20m, margin: 0.1, sizing: target, "
        "target: 0.7 }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    /*
     * A replica serves 8 / 260 ms = 30.8 req/s at full batches; sized at 70 %:
     * 21.5 req/s. At 07:10 the load is 37.5 req/s; at 07:30, 102.5 req/s.
     * Day 0 (no history) can only react to what it saw: 37.5 × 1.15 / 21.5
     * → 2 replicas (3 with a noisy minute). Day 1 forecasts the next 20
     * minutes from day 0's 5-minute slots: the slot starting 07:25 saw at
     * least 86.25 req/s, so at least ceil(86.25 × 1.1 / 21.5) = 5 replicas
     * already at 07:10, before any SLO pressure (the margin is at least the
     * 0.1 given; sized at the 70 % target here, so the count is by hand).
     */
    cr_assert_eq(engine_run(&s.eng, 7 * SIM_HOUR + 10 * SIM_MIN), 0);
    uint32_t day0 = service_replicas(&s.svcs[0]);
    cr_assert_eq(engine_run(&s.eng, SIM_DAY + 7 * SIM_HOUR + 10 * SIM_MIN), 0);
    uint32_t day1 = service_replicas(&s.svcs[0]);
    cr_expect_leq(day0, 3, "no history yet: %u replicas at the start of the first ramp", day0);
    cr_expect_geq(day1, 5, "forecast: only %u replicas at the start of the second ramp", day1);
    cr_assert_eq(sim_run(&s, NULL), 0);
    /* The cards came from training, checkpointed gracefully: no work lost. */
    double lost = 0;
    for (uint32_t j = 0; j < s.tr.njobs; j++)
        lost += s.tr.jobs[j].lost_us;
    cr_expect_float_eq(lost, 0.0, 1e-9);
    simtest_free(&sc, &s);
}

Test(policies, adaptive_slo_pressure_never_goes_past_replicas_max)
{
    /*
     * A replica serves at most 8 / 260 ms = 30.8 req/s; 400 req/s is 13 replicas' worth, so
     * the SLO is missed all day and adaptive's pressure boost asks for more every interval.
     * replicas.max is 3 and 14 cards are free: the count must reach 3 (the sizing alone asks
     * for more than 3) and never pass it, minute by minute for six hours.
     */
    const char *yaml =
        "name: adaptive-cap\n"
        "duration: 6h\n"
        "sample_interval: 1m\n"
        "cluster: { nodes: 2, gpus_per_node: 8 }\n"
        "services:\n"
        "  - name: q\n"
        "    latency: { a_ms: 100, b_ms: 20, dist: deterministic }\n"
        "    slo: { p99_ms: 1000 }\n"
        "    batching: { max_batch: 8, max_wait: 5ms }\n"
        "    max_queue: 1000\n"
        "    replicas: { min: 1, max: 3 }\n"
        "    arrivals: { synthetic: { shape: constant, rate_rps: 400 } }\n"
        "training:\n"
        "  backlog: 0\n"
        "  jobs: { synthetic: { per_hour: 0, duration: { lognormal: { median: 1h, sigma: 0 } "
        "}, gpus: { 1: 1 } } }\n"
        "policy: { name: adaptive, inference_gpus: 1, horizon: 20m, margin: 0.1 }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    uint32_t most = 0;
    for (sim_time t = SIM_MIN; t <= 6 * SIM_HOUR; t += SIM_MIN) {
        cr_assert_eq(engine_run(&s.eng, t), 0);
        uint32_t n = service_replicas(&s.svcs[0]);
        cr_assert_leq(n, 3, "%u replicas at minute %lld, replicas.max is 3", n,
                      (long long)(t / SIM_MIN));
        most = n > most ? n : most;
    }
    cr_expect_eq(most, 3, "the count never reached replicas.max (%u)", most);
    cr_assert_eq(sim_run(&s, NULL), 0);
    simtest_free(&sc, &s);
}

/* An LLM service of llama-3.1-8b at rate_rps, alone on a node, under adaptive (sizing: slo). */
static void llm_adaptive(struct scenario *sc, struct sim *s, double rate)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "name: adaptive-llm\n"
             "duration: 3h\n"
             "sample_interval: 1m\n"
             "cluster: { nodes: 1, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: chat\n"
             "    kind: llm\n"
             "    llm: { model: llama-3.1-8b, max_context: 8192 }\n"
             "    slo: { ttft_ms: 100 }\n"
             "    replicas: { min: 1, max: 8 }\n"
             "    arrivals: { synthetic: { rate_rps: %.6f } }\n"
             "policy: { name: adaptive, inference_gpus: 1, margin: 0, sizing: slo, target: 0.9 "
             "}\n",
             rate);
    simtest_build(sc, s, yaml, 1);
}

Test(policies, adaptive_sizes_an_llm_service_on_its_capacity_at_the_tpot_slo)
{
    /*
     * A replica's capacity C is the rate it holds its TPOT SLO at (llm_capacity_rps). At
     * 2.5 × 0.9 × C the plan is ceil(2.5 × (1 + error margin)) = 3 replicas at 90 %: the SLO is
     * in C already. (The batch model's M/M/n wait, which knows nothing of tokens, took the
     * 100 ms TTFT for a queueing budget and asked for more: P(wait > 95 ms) <= 0.5 %.)
     */
    struct scenario sc;
    struct sim s;
    llm_adaptive(&sc, &s, 1);
    double cap = sc.services[0].llm->cap_rps;
    cr_assert(cap > 0.1, "capacity %g req/s", cap);
    simtest_free(&sc, &s);
    llm_adaptive(&sc, &s, 2.5 * 0.9 * cap);
    cr_assert_eq(engine_run(&s.eng, 2 * SIM_HOUR), 0);
    cr_expect_eq(service_replicas(&s.svcs[0]), 3, "%u replicas at 2.5 × 0.9 × %g req/s",
                 service_replicas(&s.svcs[0]), cap);
    cr_assert_eq(sim_run(&s, NULL), 0);
    simtest_free(&sc, &s);
}
