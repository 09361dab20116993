/*
 * test_mig_latency.c — batch latency on MIG slices against the MLPerf
 * Inference v2.0 A100-SXM-80GB points the model is calibrated on (docs/
 * models.md "Inference latency"): single-stream (batch 1) latency and offline
 * (large batch) throughput, on the full card and on one 1g.10gb slice, for
 * ResNet-50 and BERT-99, with the shipped default slice speed (0.1255).
 *
 *                       ResNet-50            BERT-99
 *   batch-1, full       0.466 ms             1.55 ms
 *   batch-1, 1g.10gb    0.675 ms (1.45×)     5.35 ms (3.45×)
 *   offline, full       39,649 samples/s     3,561 samples/s
 *   offline, 1g.10gb    5,231 samples/s      484 samples/s
 *
 * The old rule (the whole batch time divided by the slice speed) gives 3.7 and
 * 11.5 ms at batch 1 on the slice: 5.5× and 2.1× too slow.
 */
#include <math.h>
#include <stdio.h>

#include "models/latency.h"
#include "sim/core/hist.h"
#include "tests/simtest.h"

/* Mean latency (ms) and served requests/s of one replica of `model` on one card. */
static void measure(const char *model, bool mig, uint32_t max_batch, double rate, int minutes,
                    double *mean_ms, double *served_per_s)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: mig-latency\n"
             "duration: %dm\n"
             "sample_interval: 1m\n"
             "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1%s }\n"
             "services:\n"
             "  - name: s\n"
             "    latency: { model: %s, dist: deterministic }\n"
             "    batching: { max_batch: %u, max_wait: 2s }\n"
             "    slo: { p99_ms: 100000 }\n"
             "    replicas: 1\n"
             "    max_queue: 10000000\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: %g } }\n"
             "policy: { name: dedicated, inference_gpus: 1 }\n",
             minutes, mig ? ", sharing: mig, mig: { layout: \"1g.10gb\" }" : "", model, max_batch,
             rate);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    const struct service *sv = &s.svcs[0];
    *mean_ms = hist_mean(sv->h_total) / 1e3;
    *served_per_s = (double)sv->tot.served / (60.0 * minutes);
    simtest_free(&sc, &s);
}

static void expect_within(double got, double want, double tol, const char *what)
{
    cr_expect_lt(fabs(got / want - 1), tol, "%s: %.4g vs published %.4g (%+.1f %%)", what, got,
                 want, 100 * (got / want - 1));
}

struct point {
    const char *model;
    bool mig;
    double batch1_ms, offline_per_s;
};

Test(mig_latency, batch1_and_offline_reproduce_mlperf_within_10_percent)
{
    static const struct point pts[] = {
        {"resnet50", false, 0.466, 39649},
        {"resnet50", true, 0.675, 5231},
        {"bert", false, 1.55, 3561},
        {"bert", true, 5.35, 484},
    };
    for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
        char what[64];
        double mean, tput;
        /* Batch 1 at a load far below capacity: latency = one batch's time. */
        measure(pts[i].model, pts[i].mig, 1, 5, 2, &mean, &tput);
        snprintf(what, sizeof(what), "%s %s batch-1", pts[i].model, pts[i].mig ? "1g" : "full");
        expect_within(mean, pts[i].batch1_ms, 0.10, what);
        /* Offline: batches of 1,024 at twice the capacity, the replica never idle (10 minutes:
         * a BERT batch on the slice takes 2.3 s). */
        measure(pts[i].model, pts[i].mig, 1024, 2 * pts[i].offline_per_s, 10, &mean, &tput);
        snprintf(what, sizeof(what), "%s %s offline", pts[i].model, pts[i].mig ? "1g" : "full");
        expect_within(tput, pts[i].offline_per_s, 0.10, what);
    }
}

Test(mig_latency, fixed_term_scales_weakly_per_item_term_with_the_slice)
{
    /* g(φ, s) = (1 − φ)s + φ: 1 on a full card, φ in the limit of a tiny slice. */
    cr_assert_eq(latency_fixed_scale(0.237, 1.0), 1.0);
    cr_assert_float_eq(latency_fixed_scale(0.237, 0.1255), 0.763 * 0.1255 + 0.237, 1e-12);
    cr_assert_float_eq(latency_fixed_scale(0, 0.5), 0.5, 1e-12);
    cr_assert_float_eq(latency_fixed_scale(1, 0.5), 1.0, 1e-12);
    /* The batch-1 ratio slice/full that the calibration targets, from the formula. */
    const struct latency_model *r = latency_model_find("resnet50", "full");
    double s = 5231.0 / 39649.0;
    double ratio =
        (r->a_s * latency_fixed_scale(r->fixed_compute_share, s) + r->b_s) / s / (r->a_s + r->b_s);
    cr_expect_float_eq(ratio, 0.675 / 0.466, 0.02, "ResNet-50 batch-1 ratio %.3f", ratio);
}

/* One request at a time (a = 0, b = 10 ms) on a 3g.40gb instance, compute- or memory-bound. */
static double mean_on_3g(const char *bound)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: mig-bound\n"
             "duration: 10m\n"
             "sample_interval: 1m\n"
             "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, sharing: mig,\n"
             "           mig: { layout: \"3g.40gb+3g.40gb\" } }\n"
             "services:\n"
             "  - name: s\n"
             "    latency: { a_ms: 0, b_ms: 10, dist: deterministic, bound: %s }\n"
             "    batching: { max_batch: 1, max_wait: 0s }\n"
             "    slo: { p99_ms: 100000 }\n"
             "    replicas: 1\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 2 } }\n"
             "policy: { name: dedicated, inference_gpus: 1 }\n",
             bound);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 5);
    double m = hist_mean(s.svcs[0].h_total) / 1e3;
    double w = s.svcs[0].tot.wait_us / 1e3 / (double)s.svcs[0].tot.served;
    simtest_free(&sc, &s);
    return m - w; /* service time: latency less its wait */
}

/*
 * Memory-bound work scales with the instance's memory slices: a 3g.40gb instance
 * owns 4 of the card's 8 (NVIDIA MIG User Guide), so 10 ms of per-item work on the
 * full card takes 10 / 0.5 = 20 ms; compute-bound it runs at the instance's SM
 * speed, 0.968 × 42/108 = 0.3764: 26.57 ms.
 */
Test(mig_latency, memory_bound_work_scales_with_memory_slices)
{
    double c = mean_on_3g("compute"), m = mean_on_3g("memory");
    cr_expect(fabs(c - 10 / (0.968 * 42.0 / 108.0)) < 0.01, "compute-bound %.4f ms", c);
    cr_expect(fabs(m - 20.0) < 0.01, "memory-bound %.4f ms", m);
}
