/*
 * bench_evq.c — the classic hold model on the event queue (not a test).
 *
 * Prefill n events at times drawn from Exp(mean) after t = 0, then repeat the
 * hold operation: pop the minimum, push a new event at the popped time plus
 * Exp(mean). The queue size stays n. Each size first runs n warm-up holds
 * (to reach the hold model's steady state), then is timed with
 * CLOCK_MONOTONIC in three windows of 10^7 holds or 1 s, whichever comes
 * first; the median window is reported (the host is shared: one window can
 * catch a neighbour's burst).
 *
 * Increments are drawn beforehand from GSL into a table, so the figures
 * measure the queue, not the random number generator.
 *
 * Output, one line per size:  evq hold n=1000: 42.1 ns/op
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/core/evq.h"
#include "sim/core/rng.h"

#define INC_TABLE  (1u << 16) /* power of two */
#define MEAN_INC   1000.0     /* µs */
#define MAX_OPS    10000000L
#define MAX_SEC    1.0
#define CHECK_MASK 0xffffL /* read the clock every 65536 holds */
#define WINDOWS    3       /* timed windows per size; the median is reported */

static void on_event(void *ctx, uint64_t arg)
{
    (void)ctx;
    (void)arg;
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench_size(size_t n, const sim_time *inc, double *ns_per_op)
{
    struct evq q;
    struct evq_event ev;
    uint32_t k = 0;
    int rc = evq_init(&q, n);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        rc = evq_push(&q, inc[k++ & (INC_TABLE - 1)], on_event, NULL, i, NULL);
        if (rc < 0)
            goto out;
    }
    for (size_t i = 0; i < n; i++) {
        evq_pop(&q, &ev);
        rc = evq_push(&q, ev.time + inc[k++ & (INC_TABLE - 1)], on_event, NULL, ev.arg, NULL);
        if (rc < 0)
            goto out;
    }

    /* Three timed windows; the median resists a neighbour's burst on a shared host. */
    double w[WINDOWS];
    for (int win = 0; win < WINDOWS; win++) {
        long ops = 0;
        double t0 = now_sec(), t1 = t0;
        for (;;) {
            evq_pop(&q, &ev);
            rc = evq_push(&q, ev.time + inc[k++ & (INC_TABLE - 1)], on_event, NULL, ev.arg, NULL);
            if (rc < 0)
                goto out;
            ops++;
            if ((ops & CHECK_MASK) == 0) {
                t1 = now_sec();
                if (ops >= MAX_OPS || t1 - t0 >= MAX_SEC)
                    break;
            }
        }
        w[win] = (t1 - t0) * 1e9 / (double)ops;
    }
    for (int a = 1; a < WINDOWS; a++) /* insertion sort of three */
        for (int b = a; b > 0 && w[b] < w[b - 1]; b--) {
            double x = w[b];
            w[b] = w[b - 1];
            w[b - 1] = x;
        }
    *ns_per_op = w[WINDOWS / 2];
out:
    evq_release(&q);
    return rc;
}

int main(int argc, char **argv)
{
    /* bench_evq [N ...]: the hold model at these queue sizes (default 10^2 ... 10^6). */
    size_t sizes[16] = {100, 1000, 10000, 100000, 1000000};
    size_t nsizes = 5;
    if (argc > 1) {
        nsizes = 0;
        for (int a = 1; a < argc && nsizes < 16; a++) {
            double v = strtod(argv[a], NULL);
            if (!(v >= 1 && v <= 1e8)) {
                fprintf(stderr, "bench_evq: size '%s' not in 1 .. 1e8\n", argv[a]);
                return 2;
            }
            sizes[nsizes++] = (size_t)v;
        }
    }
    struct rng r;
    sim_time *inc = malloc(INC_TABLE * sizeof *inc);
    if (!inc || rng_init(&r, 1, rng_stream_id("bench/evq")) < 0) {
        fputs("bench_evq: out of memory\n", stderr);
        free(inc);
        return 1;
    }
    for (uint32_t i = 0; i < INC_TABLE; i++)
        inc[i] = sim_time_from_sec(rng_exponential(&r, MEAN_INC) * 1e-6);
    rng_release(&r);

    int status = 0;
    for (size_t i = 0; i < nsizes; i++) {
        double ns;
        if (bench_size(sizes[i], inc, &ns) < 0) {
            fprintf(stderr, "bench_evq: n=%zu: out of memory\n", sizes[i]);
            status = 1;
            break;
        }
        printf("evq hold n=%zu: %.1f ns/op\n", sizes[i], ns);
        fflush(stdout);
    }
    free(inc);
    return status;
}
