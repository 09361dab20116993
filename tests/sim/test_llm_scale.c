/*
 * test_llm_scale.c — replica start-up from model load (services[].startup, both kinds) and what
 * the HPA observes of an LLM service scaled on tokens/s or KV occupancy (llm.autoscale).
 *
 * References by hand: a start-up of fixed + model_gb / bandwidth with a bandwidth of no spread;
 * the HPA's desired count ceil(tokens/s / target) and ceil(current x occupancy / target).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../simtest.h"
#include "sim/autoscale.h"
#include "sim/policy/common.h"

/* Run the engine to `until` (µs) without closing the run. */
static void run_to(struct sim *s, sim_time until)
{
    cr_assert_geq(engine_run(&s->eng, until), 0);
}

/*
 * A batch service with a start-up block: a replica started after t = 0 serves after
 * 10 s + 20 GB / 2 GB/s = 20 s exactly (sigma 0). Without the block the policy's delay holds.
 */
Test(llm_scale, startup_from_model_load)
{
    const char *yaml =
        "duration: 1h\n"
        "cluster: { nodes: 1, gpus_per_node: 4 }\n"
        "services:\n"
        "  - name: web\n"
        "    replicas: 1\n"
        "    startup: { fixed: 10s, model_gb: 20, load_gbps: { median: 2, sigma: 0 } }\n"
        "    arrivals: { synthetic: { rate_rps: 10 } }\n"
        "  - name: old\n"
        "    replicas: 1\n"
        "    arrivals: { synthetic: { rate_rps: 10 } }\n"
        "policy: { name: dedicated, inference_gpus: 2 }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    run_to(&s, 100 * SIM_SEC);
    cr_assert_eq(sim_start_replica(&s, 0, 2, 60 * SIM_SEC), 0);
    cr_assert_eq(sim_start_replica(&s, 1, 3, 60 * SIM_SEC), 0);
    const struct service *web = &s.svcs[0], *old = &s.svcs[1];
    cr_assert_eq(web->nreps, 2);
    run_to(&s, 120 * SIM_SEC - 1);
    cr_expect(web->reps[1].down, "up before 20 s");
    run_to(&s, 120 * SIM_SEC);
    cr_expect(!web->reps[1].down, "not up at 20 s");
    /* The service without a start-up block keeps the policy's 60 s. */
    run_to(&s, 160 * SIM_SEC - 1);
    cr_expect(old->reps[1].down);
    run_to(&s, 160 * SIM_SEC);
    cr_expect(!old->reps[1].down);
    simtest_free(&sc, &s);

    /* An LLM service loads its weights by default: llama-2-7b, 13.4768 GB at 1.8 GB/s + 30 s. */
    const char *llm = "duration: 1h\n"
                      "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
                      "services:\n"
                      "  - name: chat\n"
                      "    kind: llm\n"
                      "    llm: { model: llama-2-7b }\n"
                      "    startup: { load_gbps: { sigma: 0 } }\n"
                      "    replicas: 1\n"
                      "    arrivals: { synthetic: { rate_rps: 1 } }\n"
                      "policy: { name: dedicated, inference_gpus: 1 }\n";
    simtest_build(&sc, &s, llm, 1);
    cr_expect_float_eq(sc.services[0].startup.model_gb, 13.476831232, 1e-9);
    run_to(&s, 10 * SIM_SEC);
    cr_assert_eq(sim_start_replica(&s, 0, 1, 0), 0);
    sim_time up = 10 * SIM_SEC + 30 * SIM_SEC + sim_time_from_sec(13.476831232 / 1.8);
    run_to(&s, up - 1);
    cr_expect(s.svcs[0].reps[1].down);
    run_to(&s, up);
    cr_expect(!s.svcs[0].reps[1].down);
    simtest_free(&sc, &s);
}

static const char *hpa_yaml(const char *metric)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "duration: 1h\n"
             "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: chat\n"
             "    kind: llm\n"
             "    llm: { model: llama-3.1-8b, max_context: 8192, autoscale: %s }\n"
             "    replicas: { count: 4, min: 1, max: 8 }\n"
             "    arrivals: { synthetic: { rate_rps: 1 } }\n"
             "policy: { name: kueue, autoscale: { target: 0.7 } }\n",
             metric);
    return buf;
}

/*
 * What the HPA sees: tokens -> the rate whose HPA ratio is (tokens/s per replica) / target, so
 * it asks for ceil(tokens/s / target); kv -> ceil(current x occupancy / target).
 */
Test(llm_scale, hpa_metrics)
{
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, hpa_yaml("{ metric: tokens, target: 600 }"), 1);
    struct autoscale a;
    struct autoscale_cfg cfg;
    autoscale_cfg_default(&cfg);
    cfg.capacity = sc.services[0].llm->cap_rps;
    cfg.target_util = 0.7;
    cfg.min_replicas = 1;
    cfg.max_replicas = 100;
    cfg.initial = 4;
    cr_assert_eq(autoscale_init(&a, &cfg, 0), 0);
    cr_assert_gt(cfg.capacity, 1);
    s.eng.now = 60 * SIM_SEC;
    s.last_sample = 0;
    struct llm_svc *ls = s.svcs[0].llm;
    ls->win.tokens_out = 60 * 1950.0; /* 1,950 tokens/s: ceil(1950 / 600) = 4 ... */
    double rate = pol_hpa_load(&s, 0, &a, 123);
    cr_expect_eq(autoscale_replicas_for(&cfg, rate), 4);
    ls->win.tokens_out =
        60 * 2950.0; /* ... 2,950 tokens/s: 5 (ratio 1.23: past the 0.1 tolerance) */
    rate = pol_hpa_load(&s, 0, &a, 123);
    cr_expect_eq(autoscale_replicas_for(&cfg, rate), 5);
    cr_expect_eq(autoscale_observe(&a, s.eng.now, rate), 5);
    simtest_free(&sc, &s);

    simtest_build(&sc, &s, hpa_yaml("{ metric: kv, target: 0.6 }"), 1);
    cr_assert_eq(autoscale_init(&a, &cfg, 0), 0); /* current 4 */
    s.eng.now = 60 * SIM_SEC;
    ls = s.svcs[0].llm;
    ls->win.kv_cap_us = 1e6;
    ls->win.kv_token_us = 0.9e6; /* 90 % used: ceil(4 x 0.9 / 0.6) = 6 */
    cr_expect_eq(autoscale_observe(&a, s.eng.now, pol_hpa_load(&s, 0, &a, 0)), 6);
    ls->win.kv_token_us = 0.3e6; /* 30 %: the HPA wants 3 (2 after this 6), held by the window */
    cr_expect_eq(autoscale_replicas_for(&cfg, pol_hpa_load(&s, 0, &a, 0)), 3);
    simtest_free(&sc, &s);

    simtest_expect_rejected(hpa_yaml("{ metric: tokens }"), "'target'", 0);
    simtest_expect_rejected(hpa_yaml("{ metric: kv, target: 2 }"), "target", 1);
}

/* A kueue run scaled on tokens/s follows a diurnal load: more replicas at the peak. */
Test(llm_scale, hpa_follows_tokens)
{
    const char *yaml =
        "duration: 18h\n"
        "sample_interval: 5m\n"
        "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 8 }\n"
        "services:\n"
        "  - name: chat\n"
        "    kind: llm\n"
        "    llm: { model: llama-3.1-8b, max_context: 8192,\n"
        "           autoscale: { metric: tokens, target: 600 } }\n"
        "    replicas: { min: 1, max: 8 }\n"
        "    arrivals: { synthetic: { peak_rps: 20, trough_ratio: 0.1, peak_hour: 6 } "
        "}\n"
        "policy: { name: kueue, autoscale: { target: 0.7, scale_up_delay: 60s } }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    uint32_t at_peak = 0, at_trough = 0;
    run_to(&s, 6 * 3600 * SIM_SEC);
    at_peak = service_replicas(&s.svcs[0]);
    run_to(&s, 18 * 3600 * SIM_SEC);
    at_trough = service_replicas(&s.svcs[0]);
    /* Peak 20 req/s x ~211 tokens = ~4,200 tokens/s: 7 replicas; trough 2 req/s: 1. */
    cr_expect_geq(at_peak, 6, "replicas at the peak: %u", at_peak);
    cr_expect_leq(at_trough, 2, "replicas at the trough: %u", at_trough);
    simtest_free(&sc, &s);
}
