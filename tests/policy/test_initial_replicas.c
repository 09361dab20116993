/*
 * test_initial_replicas.c — elastic policies start with the replicas the
 * first interval's load needs (a cluster that was running before t = 0), not
 * a cold start at the HPA minimum against full load.
 *
 * By hand: Poisson arrivals at 665 req/s; one replica serves one request in
 * exactly 10 ms (100 req/s); the HPA targets 70 % ⇒ 70 req/s per replica ⇒
 * ceil(665 / 70) = ceil(9.5) = 10 replicas (the first minute's count varies
 * by ±0.3 % at one σ, far from 9 or 10.0 boundaries). With 10 replicas the
 * load is ρ = 0.665 per replica, so the first minute meets its SLO.
 */
#include <stdio.h>

#include "tests/simtest.h"

static void yaml_slo(char *buf, size_t n, const char *policy, int slo_ms)
{
    snprintf(buf, n,
             "name: initial\n"
             "duration: 5m\n"
             "sample_interval: 60s\n"
             "cluster: { nodes: 2, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: q\n"
             "    latency: { a_ms: 10, b_ms: 0, dist: deterministic }\n"
             "    batching: { max_batch: 1, max_wait: 0s }\n"
             "    slo: { p99_ms: %d }\n"
             "    replicas: { min: 1, max: 16 }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 665 } }\n"
             "policy:\n"
             "%s",
             slo_ms, policy);
}

static void yaml_for(char *buf, size_t n, const char *policy)
{
    yaml_slo(buf, n, policy, 100);
}

static void expect_ten_at_start(const char *policy)
{
    char yaml[2048];
    yaml_for(yaml, sizeof(yaml), policy);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 3);
    cr_expect(s.first_rate[0] > 665 * 0.98 && s.first_rate[0] < 665 * 1.02, "first rate %.1f",
              s.first_rate[0]);
    cr_expect_eq(service_replicas(&s.svcs[0]), 10u, "%s: %u replicas at t = 0", policy,
                 service_replicas(&s.svcs[0]));
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    const struct service *sv = &s.svcs[0];
    cr_expect_eq(sv->tot.dropped, 0u);
    cr_expect_eq(sv->tot.within_slo, sv->tot.served, "%s: %lu of %lu within SLO", policy,
                 (unsigned long)sv->tot.within_slo, (unsigned long)sv->tot.served);
    simtest_free(&sc, &s);
}

Test(initial_replicas, kueue_starts_at_the_first_intervals_load)
{
    expect_ten_at_start("  name: kueue\n  autoscale: { min: 1, max: 16, target: 0.7 }\n");
}

Test(initial_replicas, kai_starts_at_the_first_intervals_load)
{
    expect_ten_at_start(
        "  name: kai\n  inference_gpus: 16\n  autoscale: { min: 1, max: 16, target: 0.7 }\n");
}

Test(initial_replicas, adaptive_starts_at_the_first_intervals_load)
{
    expect_ten_at_start("  name: adaptive\n  sizing: target\n  target: 0.7\n");
}

Test(initial_replicas, a_service_with_no_load_at_start_starts_at_its_minimum)
{
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s,
                  "name: idle-start\n"
                  "duration: 2h\n"
                  "sample_interval: 60s\n"
                  "cluster: { nodes: 1, gpus_per_node: 8 }\n"
                  "services:\n"
                  "  - name: q\n"
                  "    replicas: { min: 2, max: 8 }\n"
                  "    arrivals: { synthetic: { hourly_kind: points, hourly: [0, 40, 0, 0, 0, 0, "
                  "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] } }\n"
                  "policy:\n"
                  "  name: kueue\n"
                  "  autoscale: { min: 2, max: 8 }\n",
                  1);
    cr_expect(s.first_rate[0] < 1, "first rate %.2f", s.first_rate[0]);
    cr_expect_eq(service_replicas(&s.svcs[0]), 2u);
    simtest_free(&sc, &s);
}

/*
 * adaptive's SLO sizing by hand (M/M/n at full batches): μ = 100 req/s, λ = 665,
 * a = 6.65; the SLO leaves 100 − 10 ms = 90 ms for the wait, and p99 allows
 * P(wait > 90 ms) <= 0.005. 7 replicas: Erlang C(7, 6.65) = 0.854, × e^{−(700 − 665)
 * × 0.09} = 0.037 > 0.005; 8 replicas: 0.528 × e^{−12.15} ≈ 2.8e-6. So 8 (ρ = 0.83,
 * and the 0.9 ceiling needs ceil(665 / 90) = 8 as well), where a 70 % target takes 10.
 * A tight SLO, p99 20 ms, leaves 10 ms for the wait: 10 replicas give 0.00605 > 0.005,
 * 11 give 0.00117, so 11 — more than the ceiling's 8.
 */
Test(initial_replicas, adaptive_sizes_for_the_slo)
{
    char yaml[2048];
    yaml_for(yaml, sizeof(yaml), "  name: adaptive\n");
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 3);
    cr_expect_eq(service_replicas(&s.svcs[0]), 8u, "%u replicas", service_replicas(&s.svcs[0]));
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_expect_eq(s.svcs[0].tot.dropped, 0u);
    cr_expect_geq((double)s.svcs[0].tot.within_slo, 0.999 * (double)s.svcs[0].tot.served);
    simtest_free(&sc, &s);

    yaml_slo(yaml, sizeof(yaml), "  name: adaptive\n", 20);
    simtest_build(&sc, &s, yaml, 3);
    cr_expect_eq(service_replicas(&s.svcs[0]), 11u, "tight SLO: %u replicas",
                 service_replicas(&s.svcs[0]));
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    cr_expect_geq((double)s.svcs[0].tot.within_slo, 0.99 * (double)s.svcs[0].tot.served,
                  "tight SLO: %lu of %lu", (unsigned long)s.svcs[0].tot.within_slo,
                  (unsigned long)s.svcs[0].tot.served);
    simtest_free(&sc, &s);
}

/*
 * An LLM service scaled on generated tokens/s (llm.autoscale: {metric: tokens, target: 600})
 * starts where the HPA would hold it: 10 req/s of fixed 256-token outputs make 2,560 tokens/s,
 * ceil(2,560 / 600) = ceil(4.27) = 5 replicas (the first interval's rate is within ±2 % of
 * 10, far from 4 or 6). Counted from requests at its capacity it would start elsewhere.
 */
Test(initial_replicas, an_llm_service_scaled_on_tokens_starts_at_its_tokens_count)
{
    const char *yaml = "name: initial-llm\n"
                       "duration: 5m\n"
                       "sample_interval: 60s\n"
                       "cluster: { nodes: 1, gpus_per_node: 8 }\n"
                       "services:\n"
                       "  - name: chat\n"
                       "    kind: llm\n"
                       "    llm: { model: llama-3.1-8b, max_context: 8192,\n"
                       "           tokens: { prompt: { fixed: 512 }, output: { fixed: 256 } },\n"
                       "           autoscale: { metric: tokens, target: 600 } }\n"
                       "    replicas: { min: 1, max: 8 }\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"
                       "policy: { name: kueue, autoscale: { target: 0.7 } }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 3);
    cr_expect(s.first_rate[0] > 9.8 && s.first_rate[0] < 10.2, "first rate %.2f", s.first_rate[0]);
    cr_expect_eq(service_replicas(&s.svcs[0]), 5u, "%u replicas at t = 0",
                 service_replicas(&s.svcs[0]));
    simtest_free(&sc, &s);
}
