/*
 * bench_sim.c — whole-simulator benchmarks (never part of `make test`).
 *
 *   bench_sim mm8 [REQUESTS]   M/M/8 at ρ = 0.9 through the whole simulator (8 exclusive GPUs,
 *                              Poisson arrivals, exponential service, histograms and results
 *                              file included): requests/s, mean wait vs Erlang C, peak RSS
 *   bench_sim llm [DAYS] [RPS] LLM serving: 64 A100s (8 nodes), one Llama-3.1-8B replica each,
 *                              Azure-conv lengths at RPS (default 460: every replica near
 *                              saturation, ~7.5 req/s each): events per generated token (goal
 *                              <= 0.05) and generated tokens simulated per second of wall
 *                              time (goal >= 200 M/s on one core)
 *   bench_sim large [DAYS]     64 nodes × 8 GPUs, diurnal inference plus training: wall time,
 *                              events/s, requests/s, peak RSS, and the extrapolation to the
 *                              design target (30 days × 1,024 GPUs × ~6.5 billion requests)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sim/output.h"
#include "sim/scenario.h"
#include "sim/sim.h"

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static double erlang_c(unsigned c, double a)
{
    double term = 1, sum = 1;
    for (unsigned k = 1; k < c; k++) {
        term *= a / k;
        sum += term;
    }
    double top = term * a / c * c / (c - a);
    return top / (sum + top);
}

/* Run a scenario text with a results file in /tmp; returns wall seconds. */
static double run_text(const char *yaml, struct scenario *sc, struct sim *s)
{
    struct conf_err cerr;
    char err[512], path[64];
    if (scenario_load_string(sc, "bench.yaml", yaml, &cerr)) {
        fprintf(stderr, "bench: %s\n", cerr.msg);
        exit(1);
    }
    snprintf(path, sizeof(path), "/tmp/tidesim-bench-%ld.h5", (long)getpid());
    struct sim_output *out;
    if (sim_output_open(&out, path, sc, err, sizeof(err))) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    struct sim_sink sink;
    sim_output_sink(out, &sink);
    if (sim_init(s, sc, sc->seed, &sink)) {
        fprintf(stderr, "bench: %s\n", s->err);
        exit(1);
    }
    double t0 = wall();
    if (sim_run(s, NULL) != 0) {
        fprintf(stderr, "bench: %s\n", s->err);
        exit(1);
    }
    if (sim_output_finish(out, s, true, NULL, err, sizeof(err))) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    double t = wall() - t0;
    unlink(path);
    return t;
}

static int bench_mm8(double requests)
{
    /* Mean service 1 ms, c = 8, ρ = 0.9 ⇒ λ = 7200/s. */
    double lambda = 7200, mu = 1000;
    double seconds = requests / lambda;
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "name: mm8\n"
             "seed: 1\n"
             "duration: %.0fs\n"
             "sample_interval: 60s\n"
             "cluster: { nodes: 1, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: q\n"
             "    latency: { a_ms: 1, b_ms: 0, dist: exponential }\n"
             "    batching: { max_batch: 1, max_wait: 0s }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: %.0f } }\n"
             "policy: { name: dedicated, inference_gpus: 8 }\n",
             ceil(seconds), lambda);
    struct scenario sc;
    struct sim s;
    double t = run_text(yaml, &sc, &s);
    const struct service *sv = &s.svcs[0];
    double served = (double)sv->tot.served;
    double w = sv->tot.wait_us / 1e3 / (double)(sv->tot.served + sv->in_service);
    double wq = erlang_c(8, lambda / mu) / (8 * mu - lambda) * 1e3;
    printf("mm8: %.0f requests in %.2f s wall: %.2f M requests/s (goal >= 9), "
           "%.2f M events/s\n",
           served, t, served / t / 1e6, (double)s.eng.processed / t / 1e6);
    printf("mm8: mean wait %.5f ms, Erlang C %.5f ms (%+.2f %%)\n", w, wq, (w - wq) / wq * 100);
    printf("mm8: peak RSS %.1f MB for %.0e requests\n", peak_rss_mb(), requests);
    sim_release(&s);
    scenario_release(&sc);
    return 0;
}

static int bench_large(double days)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: large\n"
             "seed: 1\n"
             "duration: %.0fd\n"
             "sample_interval: 60s\n"
             "cluster: { nodes: 64, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: chat\n"
             "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.1 }\n"
             "    batching: { max_batch: 16, max_wait: 5ms }\n"
             "    arrivals: { synthetic: { peak_rps: 1800, trough_ratio: 0.15, peak_hour: 20 } }\n"
             "  - name: search\n"
             "    latency: { a_ms: 0.44, b_ms: 0.025, dist: lognormal, cv: 0.2 }\n"
             "    batching: { max_batch: 32, max_wait: 2ms }\n"
             "    arrivals: { synthetic: { peak_rps: 700, trough_ratio: 0.3, peak_hour: 14 } }\n"
             "training:\n"
             "  backlog: 100\n"
             "  jobs:\n"
             "    synthetic: { per_hour: 30, duration: { lognormal: { median: 2h, sigma: 1.2 } },\n"
             "                 gpus: { 1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1 } }\n"
             "policy: { name: dedicated, inference_gpus: 64 }\n",
             days);
    struct scenario sc;
    struct sim s;
    double t = run_text(yaml, &sc, &s);
    double req = 0;
    for (uint32_t i = 0; i < s.nsvcs; i++)
        req += (double)s.svcs[i].tot.served;
    double rps = req / t;
    printf("large (512 GPUs, %.0f days): %.1f s wall, %.2f M events/s, %.2f M requests/s "
           "(%.0f requests, %u jobs), peak RSS %.1f MB\n",
           days, t, (double)s.eng.processed / t / 1e6, rps / 1e6, req, s.tr.njobs, peak_rss_mb());
    /* The target scales mainly with requests (per-request work) and GPUs × intervals (sampling). */
    double target_req = 6.5e9;
    double per_gpu_interval = 0; /* sampling cost is folded into the measured rate */
    (void)per_gpu_interval;
    printf("large: extrapolated to 30 days x 1,024 GPUs x 6.5e9 requests: ~%.0f s at this "
           "request rate (target <= 300 s)\n",
           target_req / rps);
    sim_release(&s);
    scenario_release(&sc);
    return 0;
}

/* CPU seconds (user + system) this process has used. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int bench_llm(double days, double rps)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: llm\n"
             "seed: 1\n"
             "duration: %.0fs\n"
             "sample_interval: 60s\n"
             "cluster: { gpu: a100-sxm4-80gb, nodes: 8, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: chat\n"
             "    kind: llm\n"
             "    llm: { model: llama-3.1-8b, max_context: 8192, tokens: azure-conv }\n"
             "    replicas: 64\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: %g } }\n"
             "policy: { name: dedicated, inference_gpus: 64 }\n",
             days * 86400, rps);
    struct scenario sc;
    struct sim s;
    double c0 = cpu_s();
    double t = run_text(yaml, &sc, &s);
    double cpu = cpu_s() - c0;
    const struct service *sv = &s.svcs[0];
    const struct llm_svc *ls = sv->llm;
    double tokens = ls->tot.tokens_out, ev = (double)s.eng.processed;
    printf("llm: %.3g requests served, %.4g tokens generated (+ %.4g prefilled) in %.2f s wall\n",
           (double)sv->tot.served, tokens, ls->tot.tokens_in, t);
    printf("llm: %.4f events per generated token (goal <= 0.05), %.1f events per request\n",
           ev / tokens, ev / (double)(sv->tot.served ? sv->tot.served : 1));
    printf("llm: %.1f M generated tokens simulated per second of wall time (goal >= 200); "
           "%.1f M per CPU-second (%.2f s CPU: a shared machine stretches the wall time)\n",
           tokens / t / 1e6, tokens / cpu / 1e6, cpu);
    printf("llm: KV occupancy %.1f %%, running at most %llu, %llu preemptions, peak RSS %.1f MB\n",
           ls->tot.kv_cap_us > 0 ? ls->tot.kv_token_us / ls->tot.kv_cap_us * 100 : 0,
           (unsigned long long)ls->tot.running_max, (unsigned long long)ls->tot.preemptions,
           peak_rss_mb());
    sim_release(&s);
    scenario_release(&sc);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "mm8"))
        return bench_mm8(argc >= 3 ? strtod(argv[2], NULL) : 1e8);
    if (argc >= 2 && !strcmp(argv[1], "llm"))
        return bench_llm(argc >= 3 ? strtod(argv[2], NULL) : 1,
                         argc >= 4 ? strtod(argv[3], NULL) : 460);
    if (argc >= 2 && !strcmp(argv[1], "large"))
        return bench_large(argc >= 3 ? strtod(argv[2], NULL) : 7);
    fprintf(stderr, "usage: bench_sim mm8 [REQUESTS] | large [DAYS]\n");
    return 2;
}
