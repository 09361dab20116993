/*
 * check.h — quality gates on a results file for CI pipelines.
 *
 * Each gate compares one figure of the file with a bound; a replicated file
 * is judged on the mean over its replications. Shares are fractions 0..1.
 *   min_util          utilisation of the kind chosen (busy by default;
 *                     useful falls back to busy when the file has none) >= bound
 *   min_slo           worst service's share of requests within its SLO
 *                     (all services' share if the worst is not recorded) >= bound
 *   max_ckpt_overhead checkpoint overhead (/summary checkpoint_overhead, or
 *                     checkpoint+restore+recompute GPU-time / training GPU-time
 *                     from /gpus); a file without checkpoint data had none: 0
 *   max_p99_ms        worst service's p99 latency (ms) <= bound
 *   max_ttft_p99_ms   worst LLM service's p99 time to first token (ms) <= bound
 *   max_tpot_p99_ms   worst LLM service's p99 time per output token (ms) <= bound
 *                     (a file without LLM services fails these: not recorded)
 *   max_queue_delay_s training jobs' mean queueing delay (/summary
 *                     queue_delay_mean_s) <= bound
 *   min_train_gpuh_day training work done per simulated day (/summary
 *                     training_gpu_hours over duration_s / 86,400) >= bound
 *   backlog_by_s      the initial backlog (jobs submitted at t = 0) drained:
 *                     its last job finished (/jobs end_s, state done) by
 *                     bound seconds of simulated time; a backlog job still
 *                     queued or running at the end fails the gate, one
 *                     rejected as larger than any pool is left out (noted)
 *   bounds[]          generic gates on any /summary figure by key
 *                     ("fragmentation", a cost): --min KEY=V / --max KEY=V;
 *                     V in the metric's unit as the file states it (a
 *                     fraction, unit "1", also as a percentage "20%"; a
 *                     duration, unit "s", also as "90min", "2h", "1d")
 *   against           no headline metric with a direction is worse than the
 *                     baseline's by more than `tolerance` (relative) with
 *                     significance: the interval of the worsening (paired by
 *                     seed when the files share seeds, else Welch; Bonferroni
 *                     over the metrics, so the family errs 5 % of the time)
 *                     lies wholly beyond the tolerance -> failed; wholly within
 *                     -> holds; across it -> inconclusive. Single runs have no
 *                     interval and are compared by value.
 * A bound that is NaN is not checked.
 *
 * Confidence (`confident`, `tidesim check --confident`, and every probe of
 * `tidesim plan`): a gate is judged on its 95 % interval over the
 * replications instead of the mean — it holds when the whole interval lies
 * on the passing side (a minimum: the lower end >= the bound; a maximum: the
 * upper end <= it), fails when the whole interval lies on the failing side,
 * and is inconclusive when the interval straddles the bound. A single run has
 * no interval: inconclusive. The baseline gate (`against`) already works so.
 */
#ifndef TIDESIM_CHECK_H
#define TIDESIM_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct results;

enum check_util_kind { CHECK_UTIL_BUSY, CHECK_UTIL_ALLOCATED, CHECK_UTIL_USEFUL };

#define CHECK_MAX_BOUNDS 32

/* A generic gate: /summary figure `key` >= (dir > 0) or <= (dir < 0) the text `value`. */
struct check_bound {
    char key[128];
    char value[64];
    int dir;
};

struct check_gates {
    double min_util, min_slo, max_ckpt_overhead, max_p99_ms; /* NaN = off */
    double max_queue_delay_s, min_train_gpuh_day, backlog_by_s;
    double max_ttft_p99_ms, max_tpot_p99_ms;
    enum check_util_kind util_kind;
    double tolerance; /* relative, for the baseline comparison */
    bool confident;   /* judge on the 95 % interval's end, not the mean (see above) */
    struct check_bound bounds[CHECK_MAX_BOUNDS];
    size_t nbounds;
    /* --queue NAME: max_queue_delay_s and bounds[] apply to /queues/NAME (its mean queueing
     * delay delay_mean_s; bounds name its figures: delay_p99_s, evictions, ...). "" = off. */
    char queue[128];
};

/* What check_run found: gates evaluated, failed, and inconclusive (baseline gate only). */
struct check_outcome {
    size_t evaluated, failed, inconclusive;
};

enum check_status { CHECK_PASS, CHECK_FAIL, CHECK_INCONCLUSIVE };

/* One evaluated gate: its name ("min-util", "max fragmentation", "against p99_ms_worst_service"),
 * verdict and the line that says why (value and bound). */
struct check_item {
    char gate[160];
    enum check_status status;
    char msg[640];
    /* The figures behind the verdict, in the stored unit (NaN when the gate has none, e.g. the
     * baseline gate or a figure not recorded): mean, the 95 % interval's ends (NaN for one
     * run), the bound, dir (+1 at least, -1 at most), n values; margin = how far the end
     * judged (the interval's conservative end when confident, else the mean) lies on the
     * passing side of the bound (negative: on the failing side); scale × stored = shown in
     * unit (e.g. 100 and "%"). */
    double value, lo, hi, bound, margin, scale;
    int dir;
    size_t n;
    char unit[24];
};

/* Every gate of one evaluation, and the notes (one per line) printed before them. */
struct check_list {
    struct check_item *items;
    size_t n, cap;
    char notes[2048];
    struct check_outcome o;
};

/* All gates off, busy utilisation, tolerance 0. */
void check_gates_init(struct check_gates *g);

/*
 * Add a generic gate from "KEY=VALUE" (dir > 0: at least, dir < 0: at most).
 * Returns 0, -EINVAL (no '=', empty key or value) or -ENOSPC (too many).
 */
int check_add_bound(struct check_gates *g, const char *kv, int dir);

/*
 * Evaluate every gate on r (and against base when not NULL) into *l (zeroed
 * first; release with check_list_release). Returns 0; -EINVAL with err
 * filled when a generic gate names a figure the file does not hold or its
 * bound is not a value of that figure's unit (a usage error); -ENOMEM.
 */
int check_evaluate(const struct results *r, const struct results *base, const struct check_gates *g,
                   struct check_list *l, char *err, size_t errlen);

void check_list_release(struct check_list *l);

/* The text verdict: notes, one line per failed or inconclusive gate, the summary line. */
void check_print_text(FILE *out, const struct check_list *l);

/*
 * The verdict as JUnit XML (the schema CI systems read: Jenkins, GitLab,
 * GitHub test reporters): <testsuites> with one <testsuite name tests
 * failures errors skipped> of one <testcase name classname> per gate; a
 * failed gate holds <failure message type>, an inconclusive one <skipped
 * message>; an incomplete file adds a testcase "complete run" with an
 * <error>. Names and messages are XML-escaped.
 */
void check_print_junit(FILE *out, const struct check_list *l, const struct results *r);

/* One <testsuite> of the above (named `name`, or r's path when NULL), for a document of
 * several (tidesim check on a sweep index: one suite per point). */
void check_print_junit_suite(FILE *out, const struct check_list *l, const struct results *r,
                             const char *name);

/*
 * Evaluate and print the text verdict to out (an error of check_evaluate is
 * printed as "error: ..."). Returns the number of failed gates (0 = none
 * failed) and fills *res (may be NULL).
 */
size_t check_run(FILE *out, const struct results *r, const struct results *base,
                 const struct check_gates *g, struct check_outcome *res);

#endif
