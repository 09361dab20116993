/*
 * test_warmup.c — output.warmup: headline figures cover [warmup, end] only.
 * Checked against two other runs of the same scenario and seed: the whole run
 * (no warm-up) and its prefix (duration = warm-up), which follow the same
 * trajectory, so the window's GPU-time and request counts are their
 * differences.
 */
#include <math.h>
#include <stdio.h>

#include "sim/core/hist.h"
#include "tests/simtest.h"

static const char *const base =
    "name: warm\n"
    "seed: 4\n"
    "duration: %s\n"
    "sample_interval: 5m\n"
    "%s"
    "cluster: { nodes: 1, gpus_per_node: 4 }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.1 }\n"
    "    batching: { max_batch: 16, max_wait: 5ms }\n"
    "    slo: { p99_ms: 7 }\n"
    "    replicas: 1\n"
    "    arrivals: { synthetic: { peak_rps: 400, trough_ratio: 0.2, peak_hour: 1 } }\n"
    "training:\n"
    "  backlog: 3\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 6, duration: { lognormal: { median: 20m, sigma: 0.8 } },\n"
    "                 gpus: { 1: 0.6, 2: 0.4 } }\n"
    "policy: { name: dedicated, inference_gpus: 1 }\n";

static void run(struct scenario *sc, struct sim *s, const char *dur, const char *extra)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml), base, dur, extra);
    simtest_run(sc, s, yaml, 4);
}

Test(warmup, window_is_the_run_minus_its_prefix)
{
    struct scenario sa, sb, sc;
    struct sim a, b, c;
    run(&sa, &a, "3h", "");
    run(&sb, &b, "3h", "output: { warmup: 42m }\n");
    run(&sc, &c, "45m", "");
    /* The snapshot is taken at the end of the interval that reaches 42 min: 45 min. */
    cr_assert_eq(sim_window_start(&b), 45 * SIM_MIN);
    cr_assert_eq(sim_window_start(&a), 0);
    double T = 3 * 3600, W = 45 * 60;
    double want = (sim_util_busy(&a) * T - sim_util_busy(&c) * W) / (T - W);
    cr_expect_float_eq(sim_util_busy(&b), want, 1e-9, "busy %.9f vs %.9f", sim_util_busy(&b), want);
    want = (sim_util_allocated(&a) * T - sim_util_allocated(&c) * W) / (T - W);
    cr_expect_float_eq(sim_util_allocated(&b), want, 1e-9);
    /* The warm-up changes what is reported, not what happens. */
    cr_expect_eq(b.svcs[0].tot.served, a.svcs[0].tot.served);
    cr_expect_eq(b.tr.done, a.tr.done);

    struct service_stats wa, wb, wc;
    struct hist *ha = malloc(sizeof(*ha)), *hb = malloc(sizeof(*hb)), *hc = malloc(sizeof(*hc));
    sim_window_service(&a, 0, &wa, ha, NULL);
    sim_window_service(&b, 0, &wb, hb, NULL);
    sim_window_service(&c, 0, &wc, hc, NULL);
    cr_expect_eq(wb.served, wa.served - wc.served);
    cr_expect_eq(wb.within_slo, wa.within_slo - wc.within_slo);
    cr_expect_eq(wb.arrived, wa.arrived - wc.arrived);
    cr_expect_eq(hb->total, wb.served);
    for (uint32_t k = 0; k < HIST_BUCKETS; k++)
        cr_expect_eq(hb->counts[k], ha->counts[k] - hc->counts[k], "bucket %u", k);
    /* The peak hour is inside the warm-up: the window's SLO share differs from the run's. */
    double sa_share = (double)wa.within_slo / (double)wa.served;
    double sb_share = (double)wb.within_slo / (double)wb.served;
    cr_expect_neq(sa_share, sb_share);
    free(ha);
    free(hb);
    free(hc);
    simtest_free(&sa, &a);
    simtest_free(&sb, &b);
    simtest_free(&sc, &c);
}

Test(warmup, must_be_shorter_than_the_run)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml), base, "1h", "output: { warmup: 2h }\n");
    simtest_expect_rejected(yaml, "'warmup': expected a warm-up shorter than the duration", 0);
}
