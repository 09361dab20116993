/* test_sim.c — whole runs: conservation, determinism, independence of runs, events vs requests. */
#include <math.h>
#include <string.h>

#include "tests/simtest.h"

static const char *const small =
    "name: small\n"
    "duration: 2h\n"
    "sample_interval: 60s\n"
    "cluster: { nodes: 2, gpus_per_node: 8 }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.2 }\n"
    "    batching: { max_batch: 32, max_wait: 5ms }\n"
    "    arrivals: { synthetic: { peak_rps: 4000, trough_ratio: 0.15, peak_hour: 1 } }\n"
    "  - name: search\n"
    "    latency: { a_ms: 0.44, b_ms: 0.025, dist: exponential }\n"
    "    batching: { max_batch: 4, max_wait: 1ms }\n"
    "    replicas: 1\n"
    "    max_queue: 1000\n"
    "    arrivals: { synthetic: { shape: constant, rate_rps: 9000 } }\n"
    "training:\n"
    "  backlog: 5\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 4, duration: { lognormal: { median: 30m, sigma: 1 } },\n"
    "                 gpus: { 1: 0.4, 2: 0.3, 4: 0.2, 8: 0.1 } }\n"
    "policy: { name: dedicated, inference_gpus: 4 }\n";

Test(sim, conservation_of_requests_and_gpu_time)
{
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, small, 3);
    simtest_expect_conserved(&s);
    /* search is overloaded on purpose (1 replica, ~7400/s capacity, 9000/s offered): it drops. */
    cr_expect_gt(s.svcs[1].tot.dropped, 0);
    for (uint32_t g = 0; g < s.cl.ngpus; g++) {
        const struct card *gp = &s.cl.cards[g];
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++)
            sum += gp->acc[k];
        cr_expect_leq(card_busy_us(gp, false), gp->alloc_us + 1e-6);
        /* Exclusive cards: every allocated second is in exactly one use state. */
        cr_expect_float_eq(sum, gp->alloc_us, 1e-3);
    }
    cr_expect_leq(sim_util_allocated(&s), 1.0);
    cr_expect_leq(sim_util_busy(&s), sim_util_allocated(&s));

    simtest_free(&sc, &s);
}

Test(sim, events_far_fewer_than_requests)
{
    /* 20 minutes at 20,000 req/s on 8 replicas batching up to 32. */
    const char *yaml = "name: busy\n"
                       "duration: 20m\n"
                       "cluster: { nodes: 1, gpus_per_node: 8 }\n"
                       "services:\n"
                       "  - name: chat\n"
                       "    latency: { a_ms: 1.16, b_ms: 0.28 }\n"
                       "    batching: { max_batch: 32, max_wait: 5ms }\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 20000 } }\n"
                       "policy: { name: dedicated, inference_gpus: 8 }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    uint64_t served = s.svcs[0].tot.served;
    cr_assert_gt(served, 23000000u);
    cr_expect_lt((double)s.eng.processed, 0.1 * (double)served, "%lu events for %lu requests",
                 s.eng.processed, served);
    simtest_free(&sc, &s);
}

/* A fingerprint of everything a run measured. */
struct fp {
    uint64_t served[2], dropped[2], within[2], batches[2];
    double wait[2], hsum[2];
    uint64_t counts0[HIST_BUCKETS];
    uint32_t jobs, done;
    double done_us, busy, alloc;
};

static void fingerprint(const struct sim *s, struct fp *f)
{
    memset(f, 0, sizeof(*f));
    for (uint32_t i = 0; i < 2; i++) {
        f->served[i] = s->svcs[i].tot.served;
        f->dropped[i] = s->svcs[i].tot.dropped;
        f->within[i] = s->svcs[i].tot.within_slo;
        f->batches[i] = s->svcs[i].tot.batches;
        f->wait[i] = s->svcs[i].tot.wait_us;
        f->hsum[i] = s->svcs[i].h_total->sum;
    }
    memcpy(f->counts0, s->svcs[0].h_total->counts, sizeof(f->counts0));
    f->jobs = s->tr.njobs;
    f->done = s->tr.done;
    for (uint32_t j = 0; j < s->tr.njobs; j++)
        f->done_us += s->tr.jobs[j].done_us;
    f->busy = sim_util_busy(s);
    f->alloc = sim_util_allocated(s);
}

Test(sim, same_seed_same_results_other_seed_differs)
{
    struct scenario sc;
    struct sim s;
    struct fp a, b, c;
    simtest_run(&sc, &s, small, 42);
    fingerprint(&s, &a);
    simtest_free(&sc, &s);
    simtest_run(&sc, &s, small, 42);
    fingerprint(&s, &b);
    simtest_free(&sc, &s);
    simtest_run(&sc, &s, small, 43);
    fingerprint(&s, &c);
    simtest_free(&sc, &s);
    cr_expect_eq(memcmp(&a, &b, sizeof(a)), 0, "same seed gave different results");
    cr_expect_neq(memcmp(&a, &c, sizeof(a)), 0, "another seed gave the same results");
    cr_expect_neq(a.served[0], c.served[0]);
}

Test(sim, interleaved_runs_equal_separate_runs)
{
    struct scenario sa, sb;
    struct sim a, b;
    struct fp fa, fb, ia, ib;

    simtest_run(&sa, &a, small, 5);
    fingerprint(&a, &fa);
    simtest_free(&sa, &a);
    simtest_run(&sb, &b, small, 6);
    fingerprint(&b, &fb);
    simtest_free(&sb, &b);

    /* Now both in one process, advanced alternately ten minutes at a time. */
    simtest_build(&sa, &a, small, 5);
    simtest_build(&sb, &b, small, 6);
    for (sim_time t = 10 * SIM_MIN; t < 2 * SIM_HOUR; t += 10 * SIM_MIN) {
        cr_assert_eq(engine_run(&a.eng, t), 0);
        cr_assert_eq(engine_run(&b.eng, t), 0);
    }
    cr_assert_eq(sim_run(&a, NULL), 0);
    cr_assert_eq(sim_run(&b, NULL), 0);
    fingerprint(&a, &ia);
    fingerprint(&b, &ib);
    cr_expect_eq(memcmp(&fa, &ia, sizeof(fa)), 0, "run A changed when interleaved with B");
    cr_expect_eq(memcmp(&fb, &ib, sizeof(fb)), 0, "run B changed when interleaved with A");
    simtest_free(&sa, &a);
    simtest_free(&sb, &b);
}

/*
 * Faults kill serving replicas at random, also while one is reserved for a
 * batch that has not begun (serve.h): nothing may be lost or counted twice.
 * 20 faults per replica-hour on 4 batching replicas for two hours.
 */
Test(sim, faults_on_reserved_and_busy_replicas_conserve_requests)
{
    const char *yaml = "name: faulty\n"
                       "duration: 2h\n"
                       "sample_interval: 60s\n"
                       "cluster: { nodes: 1, gpus_per_node: 8,\n"
                       "           faults: { per_tenant_per_hour: 20, restart: 30s } }\n"
                       "services:\n"
                       "  - name: chat\n"
                       "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.2 }\n"
                       "    batching: { max_batch: 8, max_wait: 4ms }\n"
                       "    arrivals: { synthetic: { shape: constant, rate_rps: 1500 } }\n"
                       "policy: { name: dedicated, inference_gpus: 4 }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 11);
    simtest_expect_conserved(&s);
    const struct service *sv = &s.svcs[0];
    cr_expect_gt(sv->tot.failed, 0, "no batch was lost to a fault");
    cr_expect_gt(sv->tot.served, 9000000); /* ~1500/s for 2 h, minus the lost */
    for (uint32_t g = 0; g < s.cl.ngpus; g++) {
        const struct card *gp = &s.cl.cards[g];
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++)
            sum += gp->acc[k];
        cr_expect_float_eq(sum, gp->alloc_us, 1e-3, "card %u", g);
    }
    simtest_free(&sc, &s);
}
