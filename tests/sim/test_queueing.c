/*
 * test_queueing.c — the serving model against analytic queueing results.
 *
 * References are computed here, independently of the simulator:
 * Pollaczek–Khinchine for M/D/1 and Erlang C for M/M/c.
 */
#include <math.h>

#include "tests/simtest.h"

/* Mean wait of a request (batch start − arrival), over every request started. */
static double mean_wait_s(const struct service *sv)
{
    return sv->tot.wait_us / 1e6 / (double)(sv->tot.served + sv->in_service);
}

/* Erlang C: probability of waiting in M/M/c with offered load a = λ/μ (< c). */
static double erlang_c(unsigned c, double a)
{
    double term = 1, sum = 1; /* k = 0 */
    for (unsigned k = 1; k < c; k++) {
        term *= a / k;
        sum += term;
    }
    double last = term * a / c; /* a^c / c! */
    double top = last * c / (c - a);
    return top / (sum + top);
}

Test(queueing, md1_matches_pollaczek_khinchine)
{
    /* One GPU, Poisson arrivals at 700/s, deterministic service s = 1 ms: ρ = 0.7. */
    const char *yaml = "name: md1\n"
                       "duration: 3h\n"
                       "sample_interval: 10m\n"
                       "cluster: { nodes: 1, gpus_per_node: 1 }\n"
                       "services:\n"
                       "  - name: q\n"
                       "    latency: { a_ms: 1, b_ms: 0, dist: deterministic }\n"
                       "    batching: { max_batch: 1, max_wait: 0s }\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 700 } }\n"
                       "policy: { name: dedicated, inference_gpus: 1 }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 7);
    double rho = 0.7, svc = 1e-3;
    double pk = rho * svc / (2 * (1 - rho)); /* 1.1667 ms */
    double w = mean_wait_s(&s.svcs[0]);
    cr_assert_gt(s.svcs[0].tot.served, 7000000u);
    cr_expect(fabs(w - pk) / pk < 0.02, "M/D/1 mean wait %.5f ms, P-K %.5f ms", w * 1e3, pk * 1e3);
    /* Busy utilisation of the card = ρ. */
    cr_expect(fabs(sim_util_busy(&s) - rho) < 0.01, "busy %.4f", sim_util_busy(&s));
    simtest_free(&sc, &s);
}

Test(queueing, mmc_matches_erlang_c)
{
    /* c = 4 replicas, exponential service of mean 1 ms, λ = 3200/s: ρ = 0.8. */
    const char *yaml = "name: mmc\n"
                       "duration: 1h\n"
                       "sample_interval: 10m\n"
                       "cluster: { nodes: 1, gpus_per_node: 4 }\n"
                       "services:\n"
                       "  - name: q\n"
                       "    latency: { a_ms: 1, b_ms: 0, dist: exponential }\n"
                       "    batching: { max_batch: 1, max_wait: 0s }\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 3200 } }\n"
                       "policy: { name: dedicated, inference_gpus: 4 }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 11);
    unsigned c = 4;
    double mu = 1000, lambda = 3200, a = lambda / mu;
    double wq = erlang_c(c, a) / (c * mu - lambda); /* 0.7455 ms */
    double w = mean_wait_s(&s.svcs[0]);
    cr_assert_gt(s.svcs[0].tot.served, 11000000u);
    cr_expect(fabs(w - wq) / wq < 0.03, "M/M/4 mean wait %.5f ms, Erlang C %.5f ms", w * 1e3,
              wq * 1e3);
    /*
     * Waiting-time quantiles: in M/M/c (FCFS) P(W > t) = C · e^{−(cμ−λ)t}, so
     * the q-quantile is ln(C / (1 − q)) / (cμ − λ) for q > 1 − C (C = 0.596
     * here, so even the median wait is > 0: 0.22 ms; p95 3.10 ms; p99 5.11 ms).
     */
    struct service_stats st;
    struct hist *h = malloc(2 * sizeof(*h)), *q = h + 1;
    cr_assert_not_null(h);
    sim_window_service(&s, 0, &st, h, q);
    double C = erlang_c(c, a);
    static const double qs[] = {0.5, 0.9, 0.95, 0.99};
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        double ref = log(C / (1 - qs[i])) / (c * mu - lambda);
        double got = hist_quantile(q, qs[i]) / 1e6;
        cr_expect(fabs(got - ref) / ref < 0.03, "M/M/4 wait p%g %.4f ms, closed form %.4f ms",
                  qs[i] * 100, got * 1e3, ref * 1e3);
    }
    /* The histogram's mean is the exact mean over served requests: the same as the sum. */
    cr_expect(fabs(hist_mean(q) / 1e6 - wq) / wq < 0.03, "histogram mean wait %.5f ms",
              hist_mean(q) / 1e3);
    free(h);
    simtest_free(&sc, &s);
}

Test(queueing, erlang_c_reference_is_right)
{
    /* Check the reference itself on a textbook value: c = 2, a = 1 ⇒ C = 1/3. */
    cr_assert_float_eq(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
    /* c = 1 reduces to ρ. */
    cr_assert_float_eq(erlang_c(1, 0.7), 0.7, 1e-12);
}
