/*
 * tsref.h — a slice-by-slice reference simulation of one time-sliced card,
 * written for the tests independently of models/share.c and sim/cluster.c.
 *
 * The card as the driver schedules it: contexts 0 (an inference server) and
 * 1..k (training, always runnable) in a fixed round-robin order 0, 1, ..., k.
 * At the end of a slice the next runnable context in that order takes the
 * card after a switch of s seconds (no switch when the same context goes on:
 * a lone runnable context re-arms its slice). Training contexts always use
 * their whole slice (t_train). The inference context is runnable while it has
 * a batch queued; it works through its FIFO of batches (w seconds of work
 * each) within its slice (t_inf) and yields the card as soon as its queue is
 * empty. Batches arrive as a Poisson process of rate lambda (own generator).
 *
 * Measured: per batch, service latency (done - ready, ready = when it reaches
 * the head of the queue) and sojourn (done - arrival); training time over the
 * elapsed time. Everything in seconds.
 */
#ifndef TIDESIM_TESTS_TSREF_H
#define TIDESIM_TESTS_TSREF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct tsref {
    double t_inf, t_train, sw; /* slices and the switch time */
    unsigned k;                /* training contexts, >= 1 */
    double lambda, w;          /* batch arrivals per second, work per batch */
    double horizon;            /* simulated seconds */
    uint64_t seed;
    /* results */
    double service_sum, sojourn_sum, train_s, elapsed;
    uint64_t batches;
    /* arrival times, in order (for drivers that replay the same batches) */
    double *arr;
    uint64_t narr;
};

static inline double tsref_unif(uint64_t *x)
{
    /* xorshift64*: good enough for a reference; independent of sim/core/rng. */
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return ((double)((*x * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}

/* Run the reference. Returns 0, or -1 when out of memory. */
static inline int tsref_run(struct tsref *r)
{
    uint64_t x = r->seed ? r->seed : 88172645463325252ULL;
    uint64_t cap = 1024, n = 0;
    r->arr = malloc(cap * sizeof(*r->arr));
    if (!r->arr)
        return -1;
    for (double t = 0;;) {
        t += -log(tsref_unif(&x)) / r->lambda;
        if (t >= r->horizon)
            break;
        if (n == cap) {
            double *a = realloc(r->arr, 2 * cap * sizeof(*a));
            if (!a)
                return -1;
            r->arr = a;
            cap *= 2;
        }
        r->arr[n++] = t;
    }
    r->narr = n;
    r->service_sum = r->sojourn_sum = r->train_s = 0;
    r->batches = 0;

    uint64_t head = 0;                /* first batch not done */
    double rem = r->w;                /* work left of the head batch */
    double ready = n ? r->arr[0] : 0; /* when the head batch reached the head */
    unsigned cur = 1;                 /* a training context holds the card at t = 0 */
    double t = 0;
    while (t < r->horizon && head < n) {
        if (cur == 0) {
            /* Inference: work through the queue within one slice. */
            double left = r->t_inf;
            while (head < n && r->arr[head] <= t && left > 0) {
                double run = rem < left ? rem : left;
                t += run;
                left -= run;
                rem -= run;
                if (rem <= 1e-15) {
                    r->service_sum += t - ready;
                    r->sojourn_sum += t - r->arr[head];
                    r->batches++;
                    head++;
                    rem = r->w;
                    if (head < n)
                        ready = r->arr[head] > t ? r->arr[head] : t;
                }
            }
        } else {
            t += r->t_train; /* a training slice, whole */
            r->train_s += r->t_train;
        }
        /* The next runnable context in ring order after cur. */
        bool inf_ready = head < n && r->arr[head] <= t;
        unsigned next;
        if (cur == 0)
            next = 1;
        else if (cur < r->k)
            next = cur + 1;
        else
            next = inf_ready ? 0 : 1;
        if (next != cur)
            t += r->sw;
        cur = next;
    }
    r->elapsed = t;
    return 0;
}

static inline void tsref_free(struct tsref *r)
{
    free(r->arr);
    r->arr = NULL;
}

#endif
