/*
 * test_llm.c — LLM serving (sim/llm.h): a lone request against the model's own formula, memory
 * fit on MIG slices, speed scaling, rising load and the KV-cache cap, few events, and an
 * independent step-by-step reference simulation of the same iteration model.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../simtest.h"
#include "models/mig.h"
#include "sim/llm.h"

/* A trace of requests (time µs, prompt, output) as a CSV; returns its path (static buffer). */
static const char *write_trace(const char *tag, const int64_t *t, const uint32_t *in,
                               const uint32_t *out, size_t n)
{
    static char path[128];
    snprintf(path, sizeof(path), "/tmp/tidesim-llm-%s-%ld.csv", tag, (long)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("t,in,out\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%lld,%u,%u\n", (long long)t[i], in[i], out[i]);
    fclose(f);
    return path;
}

static const char *TRACE_ARRIVALS =
    "    arrivals:\n"
    "      trace: { path: %s, format: csv, time_column: t,\n"
    "               time_unit: us, in_column: in, out_column: out }\n";

/* One llama-2-7b replica on one whole A100-80GB, with extra llm keys and a trace. */
static void one_replica(char *buf, size_t n, const char *llm_extra, const char *trace,
                        const char *duration)
{
    char arr[512];
    snprintf(arr, sizeof(arr), TRACE_ARRIVALS, trace);
    snprintf(buf, n,
             "duration: %s\n"
             "sample_interval: 10m\n"
             "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1 }\n"
             "services:\n"
             "  - name: chat\n"
             "    kind: llm\n"
             "    llm:\n"
             "      model: llama-2-7b\n"
             "%s"
             "    replicas: 1\n"
             "%s"
             "policy: { name: dedicated, inference_gpus: 1 }\n",
             duration, llm_extra, arr);
}

/*
 * A request alone on its replica: TTFT is the prefill step, end to end TTFT plus its decode
 * steps, from the model's own step time (models/llm.h) with the coefficients of the replica.
 */
Test(llm_sim, lone_request_is_the_formula)
{
    const int64_t t[] = {1000000};
    const uint32_t in[] = {1000}, out[] = {50};
    const char *path = write_trace("lone", t, in, out, 1);
    for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
        char yaml[2048];
        one_replica(yaml, sizeof(yaml),
                    with_ctx ? "" : "      iteration: { per_context_token_us: 0 }\n", path, "10m");
        struct scenario sc;
        struct sim s;
        simtest_run(&sc, &s, yaml, 1);
        const struct service *sv = &s.svcs[0];
        const struct llm_svc *ls = sv->llm;
        const struct llm_coef *c = &ls->reps[0].coef;
        /* Whole card, TP 1: the replica's coefficients are the configuration's. */
        cr_expect_eq(c->weights_us, sc.services[0].llm->base.weights_us);
        cr_assert_eq(sv->tot.served, 1);
        /* Prefill: 1,000 tokens, no decodes, 1,000 × 1,001 / 2 attention pairs. */
        double ttft = llm_iter_us(c, 1000, 0, llm_prefill_pairs(0, 1000));
        /* 49 decode steps of one sequence, context 1,001 (prompt and first token) + j. */
        double e2e = ttft, step = llm_iter_us(c, 1, 0, 0);
        for (int j = 0; j < 49; j++)
            e2e += llm_iter_us(c, 1, 1001 + j, 0);
        if (!with_ctx)
            cr_expect_float_eq(e2e, ttft + 49 * step, 1e-6, "TTFT + (output - 1) x step");
        cr_expect(fabs(hist_mean(ls->ttft_tot) - ttft) <= 0.5, "TTFT %g us, formula %.3f",
                  hist_mean(ls->ttft_tot), ttft);
        cr_expect(fabs(hist_mean(sv->h_total) - e2e) <= 0.5, "e2e %g us, formula %.3f",
                  hist_mean(sv->h_total), e2e);
        cr_expect(fabs(hist_mean(ls->tpot_tot) - (e2e - ttft) / 49) <= 0.5);
        cr_expect_eq(ls->tot.tokens_out, 50);
        cr_expect_eq(ls->tot.tokens_in, 1000);
        cr_expect_eq(ls->tot.preemptions, 0);
        simtest_expect_conserved(&s);
        simtest_free(&sc, &s);
    }
    unlink(path);
}

/*
 * Memory fit on MIG (A100-80GB, gpu_memory_utilization 0.9, 1.3 GiB overhead): Llama-2-7B FP16
 * has 12.55 GiB of weights, more than a 1g.10gb instance's 9.5 GiB x 0.9: refused with the
 * figures; it fits 2g.20gb with 7,568 tokens of KV cache (tests/models/test_llm.c by hand); its
 * INT4 version fits 1g.10gb.
 */
Test(llm_sim, fit_on_mig_slices)
{
    const char *base = "duration: 1h\n"
                       "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, sharing: mig,\n"
                       "           mig: { layout: \"1g.10gb+1g.10gb+2g.20gb+3g.40gb\" } }\n"
                       "services:\n"
                       "  - name: chat\n"
                       "    kind: llm\n"
                       "    llm: { model: llama-2-7b%s }\n"
                       "%s"
                       "    replicas: 1\n"
                       "    arrivals: { synthetic: { rate_rps: 0.1 } }\n"
                       "policy: { name: dedicated, inference_gpus: 1 }\n";
    char yaml[2048];
    snprintf(yaml, sizeof(yaml), base, "", "    mig_profile: 1g.10gb\n");
    simtest_expect_rejected(yaml, "12.6 GiB of weights", 0);
    simtest_expect_rejected(yaml, "MIG 1g.10gb gives 9.5 GiB x 0.90", 1);

    /* No profile named: the cluster picks the smallest instance that holds it. */
    snprintf(yaml, sizeof(yaml), base, "", "");
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    const struct service *sv = &s.svcs[0];
    cr_assert_eq(service_replicas(sv), 1);
    const struct tenant *t = &s.cl.tenants[sv->reps[0].tid];
    cr_expect_str_eq(s.cl.cards[0].layout.inst[t->instance].profile->name, "2g.20gb");
    cr_expect_eq(sv->llm->reps[0].kv_cap, 7568);
    /* Its coefficients: memory terms at 2/8 of the bandwidth, compute at the slice's speed. */
    const struct llm_cfg *c = sc.services[0].llm;
    cr_expect_float_eq(sv->llm->reps[0].coef.weights_us, c->base.weights_us * 4, 1e-6);
    cr_expect_float_eq(sv->llm->reps[0].coef.token_us, c->base.token_us / t->st.slice_speed, 1e-6);
    /* The 3g.40gb takes a second replica; then only 1g.10gb instances are free: refused. */
    cr_expect_eq(sim_place_replica(&s, 0, 0), 0);
    cr_expect_eq(sim_place_replica(&s, 0, 0), -ENOSPC);
    char msg[400];
    llm_fit_text(sv, mig_profile_find(s.cl.spec, "1g.10gb"), msg, sizeof(msg));
    cr_expect(strstr(msg, "llama-2-7b needs 12.6 GiB of weights + 1.3 GiB runtime overhead"), "%s",
              msg);
    llm_fit_text(sv, mig_profile_find(s.cl.spec, "2g.20gb"), msg, sizeof(msg));
    cr_expect_str_empty(msg);
    simtest_free(&sc, &s);

    /* INT4 weights (3.14 GiB) fit 1g.10gb: 8,416 tokens of cache. */
    snprintf(yaml, sizeof(yaml), base, ", dtype: int4", "    mig_profile: 1g.10gb\n");
    simtest_build(&sc, &s, yaml, 1);
    cr_expect_eq(s.svcs[0].llm->reps[0].kv_cap, 8416);
    simtest_free(&sc, &s);

    /* A 70B does not fit one card: the message says how much it needs and what to do. */
    simtest_expect_rejected("duration: 1h\n"
                            "cluster: { gpu: a100-sxm4-80gb, nodes: 1 }\n"
                            "services:\n"
                            "  - name: big\n"
                            "    kind: llm\n"
                            "    llm: { model: llama-2-70b }\n"
                            "    replicas: 1\n"
                            "    arrivals: { synthetic: { rate_rps: 1 } }\n",
                            "set tensor_parallel", 2);
}

/* Mean TTFT and TPOT of sparse requests (one at a time) on one replica. */
static void sparse_means(const char *cluster, const char *extra_root, double *ttft, double *tpot)
{
    enum { N = 40 };
    int64_t t[N];
    uint32_t in[N], out[N];
    for (int i = 0; i < N; i++) {
        t[i] = (int64_t)(i + 1) * 30000000; /* one every 30 s: each alone */
        in[i] = 500 + 37 * (uint32_t)i;
        out[i] = 20 + 3 * (uint32_t)i;
    }
    const char *path = write_trace("sparse", t, in, out, N);
    char yaml[3072], arr[512];
    snprintf(arr, sizeof(arr), TRACE_ARRIVALS, path);
    snprintf(yaml, sizeof(yaml),
             "duration: 30m\n"
             "sample_interval: 10m\n"
             "%s"
             "services:\n"
             "  - name: chat\n"
             "    kind: llm\n"
             "    llm: { model: llama-2-7b, gpu_memory_utilization: 0.5 }\n"
             "    replicas: 1\n"
             "%s"
             "%s",
             cluster, arr, extra_root);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 1);
    cr_assert_eq(s.svcs[0].tot.served, N);
    *ttft = hist_mean(s.svcs[0].llm->ttft_tot);
    *tpot = hist_mean(s.svcs[0].llm->tpot_tot);
    simtest_free(&sc, &s);
    unlink(path);
}

/*
 * Time-slicing without switch overhead gives each of two busy tenants half the card: with a
 * training job always running beside it the replica's TTFT and TPOT double (every term of a
 * step scales with the tenant's speed).
 */
Test(llm_sim, half_speed_doubles_ttft_and_tpot)
{
    double t1, p1, t2, p2;
    sparse_means("cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, sharing: timeslice,"
                 " timeSlicing: { replicas: 2, overhead: 0 } }\n",
                 "policy: { name: timeslice, inference_gpus: 1 }\n", &t1, &p1);
    sparse_means("cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, sharing: timeslice,"
                 " timeSlicing: { replicas: 2, overhead: 0 } }\n",
                 "training:\n"
                 "  backlog: 1\n"
                 "  memory_gb_per_gpu: 20\n"
                 "  checkpoint: { interval: none }\n"
                 "  jobs: { synthetic: { per_hour: 0, gpus: { 1: 1 },\n"
                 "          duration: { lognormal: { median: 100h, sigma: 0 } } } }\n"
                 "policy: { name: timeslice, inference_gpus: 1 }\n",
                 &t2, &p2);
    cr_expect_float_eq(t2 / t1, 2.0, 1e-4, "TTFT %g -> %g us", t1, t2);
    cr_expect_float_eq(p2 / p1, 2.0, 1e-4, "TPOT %g -> %g us", p1, p2);
}

/* Poisson arrivals of fixed-length requests at `rate` on one replica: TPOT mean and the most
 * sequences that ran at once. */
static void fixed_load(double rate, uint32_t prompt, uint32_t output, double *tpot,
                       uint64_t *running_max, uint64_t *preempt, uint64_t *kv_cap)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "duration: 10m\n"
             "sample_interval: 1m\n"
             "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1 }\n"
             "services:\n"
             "  - name: chat\n"
             "    kind: llm\n"
             "    llm:\n"
             "      model: llama-2-7b\n"
             "      gpu_memory_utilization: 0.3\n"
             "      tokens: { prompt: { fixed: %u }, output: { fixed: %u } }\n"
             "    replicas: 1\n"
             "    arrivals: { synthetic: { rate_rps: %g } }\n"
             "policy: { name: dedicated, inference_gpus: 1 }\n",
             prompt, output, rate);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    const struct llm_svc *ls = s.svcs[0].llm;
    *tpot = hist_mean(ls->tpot_tot);
    *running_max = ls->tot.running_max;
    *preempt = ls->tot.preemptions;
    *kv_cap = ls->reps[0].kv_cap;
    simtest_expect_conserved(&s);
    simtest_free(&sc, &s);
}

/*
 * Rising load on one replica: TPOT rises with the batch; past saturation the KV cache caps the
 * running batch. KV cache by hand: 80 GiB x 0.3 - 1.3 GiB - 13,476,831,232 B of weights =
 * 10,897,669,734 B = 20,785.6 tokens of 0.5 MiB: 1,299 blocks = 20,784 tokens. A prompt of
 * 1,000 tokens is admitted while the cache holds it above the 1 % watermark, so at most
 * floor(0.99 x 20,784 / 1,000) = 20 sequences run (decode growth of 16 tokens each stays under
 * the 800 tokens of slack); max_num_seqs (256) never binds.
 */
Test(llm_sim, rising_load_tpot_and_kv_cap)
{
    const double rates[] = {1, 4, 8, 40};
    double tpot[4];
    uint64_t rmax[4], pre[4], cap = 0;
    for (int i = 0; i < 4; i++)
        fixed_load(rates[i], 1000, 16, &tpot[i], &rmax[i], &pre[i], &cap);
    cr_expect_eq(cap, 20784);
    for (int i = 1; i < 4; i++)
        cr_expect_gt(tpot[i], tpot[i - 1], "TPOT at %g req/s %g us <= at %g req/s %g us", rates[i],
                     tpot[i], rates[i - 1], tpot[i - 1]);
    cr_expect_lt(rmax[0], 20);
    cr_expect_eq(rmax[3], 20, "running batch at saturation: %llu", (unsigned long long)rmax[3]);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(pre[i], 0);
}

/* ---- the independent reference: every step simulated one by one ---- */

struct ref_seq {
    double arrival, first, end;
    uint32_t prompt, output, gen, need, pf_len, order;
    bool decoding, running;
};

/*
 * The scheduler of sim/llm.h written plainly, one step at a time: at every step boundary,
 * completions, then recompute preemption of the last admitted while the next decode step would
 * overflow the KV cache, then FCFS admission of the arrivals up to now (max_num_seqs; prompt +
 * generated within the cache above a 1 % watermark unless nothing runs); a step decodes one
 * token for each decoding sequence and prefills prompt chunks in admission order with the rest
 * of the token budget; the step that finishes a prefill gives its first token.
 */
static uint64_t reference(const struct llm_coef *c, double kv_cap, uint32_t max_seqs,
                          uint32_t budget, struct ref_seq *q, size_t n)
{
    size_t next = 0, *wait = malloc(n * sizeof(*wait)), nwait = 0;
    size_t *run = malloc(n * sizeof(*run)), nrun = 0, done = 0;
    double now = 0, kv = 0;
    uint32_t order = 0;
    uint64_t pre = 0;
    while (done < n) {
        while (next < n && q[next].arrival <= now)
            wait[nwait++] = next++;
        for (size_t i = 0; i < nrun;) { /* completions */
            struct ref_seq *x = &q[run[i]];
            if (x->decoding && x->gen == x->output) {
                x->end = now;
                kv -= (double)x->prompt + x->gen;
                memmove(run + i, run + i + 1, (nrun - i - 1) * sizeof(*run));
                nrun--;
                done++;
                continue;
            }
            i++;
        }
        for (;;) { /* preemption: run[] is in admission order, the last goes */
            double ndec = 0;
            for (size_t i = 0; i < nrun; i++)
                ndec += q[run[i]].decoding;
            if (!(ndec > 0 && kv + ndec > kv_cap))
                break;
            struct ref_seq *x = &q[run[--nrun]];
            kv -= x->decoding ? (double)x->prompt + x->gen : (double)x->pf_len;
            x->decoding = false;
            memmove(wait + 1, wait, nwait * sizeof(*wait));
            wait[0] = (size_t)(x - q);
            nwait++;
            pre++;
        }
        while (nwait && nrun < max_seqs) { /* admission */
            struct ref_seq *x = &q[wait[0]];
            double need = (double)x->prompt + x->gen, mark = nrun ? 0.01 * kv_cap : 0;
            if (kv + need + mark > kv_cap)
                break;
            x->pf_len = x->prompt + x->gen;
            x->need = x->pf_len;
            x->order = order++;
            kv += x->pf_len;
            run[nrun++] = wait[0];
            memmove(wait, wait + 1, (nwait - 1) * sizeof(*wait));
            nwait--;
        }
        if (nrun == 0) {
            if (next < n)
                now = q[next].arrival; /* idle until the next arrival */
            continue;
        }
        double ndec = 0, ctx = 0, pairs = 0, left, tokens;
        for (size_t i = 0; i < nrun; i++)
            if (q[run[i]].decoding) {
                ndec++;
                ctx += (double)q[run[i]].prompt + q[run[i]].gen;
            }
        left = budget - ndec;
        tokens = ndec;
        size_t fin[4096], nfin = 0;
        for (size_t i = 0; i < nrun && left > 0; i++) {
            struct ref_seq *x = &q[run[i]];
            if (x->decoding)
                continue;
            double take = x->need < left ? x->need : left;
            pairs += llm_prefill_pairs((double)(x->pf_len - x->need), take);
            x->need -= (uint32_t)take;
            left -= take;
            tokens += take;
            if (x->need == 0)
                fin[nfin++] = run[i];
        }
        now += llm_iter_us(c, tokens, ndec > 0 ? ctx : 0, pairs);
        for (size_t i = 0; i < nrun; i++)
            if (q[run[i]].decoding) {
                q[run[i]].gen++;
                kv += 1;
            }
        for (size_t i = 0; i < nfin; i++) {
            struct ref_seq *x = &q[fin[i]];
            x->decoding = true;
            x->gen++;
            kv += 1;
            if (x->first < 0)
                x->first = now;
        }
    }
    free(wait);
    free(run);
    return pre;
}

/*
 * A short Poisson run (one replica, lognormal lengths, a KV cache small enough to preempt):
 * tidesim and the reference give the same TTFT and TPOT means within 1 %.
 */
Test(llm_sim, matches_step_by_step_reference)
{
    enum { N = 3000 };
    struct ref_seq *q = calloc(N, sizeof(*q));
    int64_t *t = malloc(N * sizeof(*t));
    uint32_t *in = malloc(N * sizeof(*in)), *out = malloc(N * sizeof(*out));
    struct rng r;
    cr_assert_eq(rng_init(&r, 42, 7), 0);
    double now = 1e6;
    for (size_t i = 0; i < N; i++) {
        now += rng_exponential(&r, 1e6 / 3.0); /* 3 req/s */
        t[i] = (int64_t)now;
        in[i] = (uint32_t)fmin(3000, ceil(rng_lognormal_median_sigma(&r, 600, 0.8)));
        out[i] = (uint32_t)fmin(1000, ceil(rng_lognormal_median_sigma(&r, 150, 0.8)));
        q[i] = (struct ref_seq){
            .arrival = (double)t[i], .first = -1, .prompt = in[i], .output = out[i]};
    }
    rng_release(&r);
    const char *path = write_trace("ref", t, in, out, N);
    char yaml[2048];
    one_replica(yaml, sizeof(yaml), "      gpu_memory_utilization: 0.26\n", path, "3h");
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 1);
    const struct service *sv = &s.svcs[0];
    const struct llm_svc *ls = sv->llm;
    const struct llm_cfg *cfg = sc.services[0].llm;
    cr_assert_eq(sv->tot.served, N, "served %llu", (unsigned long long)sv->tot.served);
    uint64_t pre = reference(&ls->reps[0].coef, (double)ls->reps[0].kv_cap, cfg->max_num_seqs,
                             cfg->max_batched_tokens, q, N);
    double ttft = 0, tpot = 0;
    size_t ntpot = 0;
    for (size_t i = 0; i < N; i++) {
        ttft += q[i].first - q[i].arrival;
        if (q[i].output > 1) {
            tpot += (q[i].end - q[i].first) / (q[i].output - 1);
            ntpot++;
        }
    }
    ttft /= N;
    tpot /= (double)ntpot;
    double st = hist_mean(ls->ttft_tot), sp = hist_mean(ls->tpot_tot);
    cr_expect_float_eq(st, ttft, 0.01 * ttft, "TTFT mean: tidesim %g us, reference %g us", st,
                       ttft);
    cr_expect_float_eq(sp, tpot, 0.01 * tpot, "TPOT mean: tidesim %g us, reference %g us", sp,
                       tpot);
    cr_expect_gt(pre, 0, "the run should preempt (it exercises the KV limit)");
    /* Every output token is generated once (a recompute re-prefills, it does not regenerate). */
    double want_tokens = 0;
    for (size_t i = 0; i < N; i++)
        want_tokens += q[i].output;
    cr_expect_eq(ls->tot.tokens_out, want_tokens, "tokens generated %g, outputs %g",
                 ls->tot.tokens_out, want_tokens);
    cr_expect_eq(ls->tot.preemptions, pre);
    /* Events: a few per request, far fewer than tokens. */
    double tokens = ls->tot.tokens_out, ev = (double)s.eng.processed;
    cr_expect_lt(ev / tokens, 0.05, "%g events for %g tokens", ev, tokens);
    simtest_expect_conserved(&s);
    simtest_free(&sc, &s);
    unlink(path);
    free(q);
    free(t);
    free(in);
    free(out);
}
