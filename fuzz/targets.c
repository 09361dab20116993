/*
 * targets.c — the fuzz entry points of targets.h.
 *
 * Option byte of the trace targets (the input's first byte; the rest is the file):
 *   arrivals: bit 0 skip_bad, bit 1 loop (clip_end 2 days), bits 2-3 scale
 *             {1, 0.5, 2.5, 1}, bit 4 clip_start 1 h, bits 5-6 time unit of the
 *             csv and counts columns {s, ms, µs, wall clock}, bit 7 zone UTC-8
 *   jobs:     bit 0 skip_bad, bits 1-2 reorder window {0, 1, 16, 1000}, bit 3
 *             clip_start 1 h, bit 4 clip_end 1 day, bits 5-6 submit unit of the
 *             csv {s, ms, µs, wall clock} (duration: s, ms, µs, s), bit 7 zone UTC-8
 *
 * Besides "no crash", each target checks what the reader promises its caller
 * (traces/source.h, traces/jobs.h): a refusal carries a message; arrival
 * times and job submits never go backwards and respect the clip; every job
 * has positive work, at least one GPU and a fraction in (0, 1]. A broken
 * promise is reported as FUZZ_BROKEN with the record that broke it. The
 * limits of traces/source.h and sim/core/simtime.h are promises too: times
 * within 100 years, at most JOB_MAX_GPUS GPUs, TRACE_MAX_TOKENS tokens.
 */
#include "fuzz/targets.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "analysis/answer.h"
#include "analysis/check.h"
#include "analysis/compare.h"
#include "analysis/h5read.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "analysis/sweepidx.h"
#include "sim/scenario.h"
#include "traces/arrivals.h"
#include "traces/jobs.h"
#include "traces/snapshot.h"

#define HOUR_US ((sim_time)3600 * 1000000)

/* ------------------------------------------------------------ temp files */

/* A per-process file name under $TMPDIR (or /tmp) with the given extension. */
static int temp_name(char *buf, size_t n, const char *ext)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int len = snprintf(buf, n, "%s/tidesim-fuzz-%ld.%s", dir, (long)getpid(), ext);
    return len > 0 && (size_t)len < n ? 0 : -ENAMETOOLONG;
}

/* Write data[0..n) to path (created or truncated). Returns 0 or -errno with msg filled. */
static int write_file(const char *path, const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(msg, msglen, "fuzz: cannot create '%s': %s", path, strerror(e));
        return -e;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            snprintf(msg, msglen, "fuzz: cannot write '%s': %s", path, strerror(e));
            close(fd);
            unlink(path);
            return -e;
        }
        off += (size_t)w;
    }
    if (close(fd)) {
        int e = errno;
        snprintf(msg, msglen, "fuzz: cannot write '%s': %s", path, strerror(e));
        unlink(path);
        return -e;
    }
    return 0;
}

/* The verdict on a reader's failure: a refusal, broken when it came without a message. */
static int rejected(const char *why, char *msg, size_t msglen)
{
    if (!why || !*why) {
        snprintf(msg, msglen, "broken: refused without a message");
        return FUZZ_BROKEN;
    }
    snprintf(msg, msglen, "%s", why);
    return FUZZ_REJECTED;
}

/* -------------------------------------------------------------- scenario */

static int run_scenario(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    char *text = malloc(n + 1);
    if (!text) {
        snprintf(msg, msglen, "fuzz: out of memory");
        return -ENOMEM;
    }
    memcpy(text, data, n);
    text[n] = '\0';
    struct scenario sc;
    struct conf_err err = {{0}};
    int rc = scenario_load_string(&sc, "fuzz.yaml", text, &err);
    free(text);
    if (rc)
        return rejected(err.msg, msg, msglen);
    scenario_release(&sc);
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

/* ---------------------------------------------------------- arrival traces */

enum arr_kind { ARR_AZURE, ARR_SERVEGEN, ARR_CSV, ARR_COUNTS };

static const enum tfield_unit units[4] = {TFIELD_SEC, TFIELD_MS, TFIELD_US, TFIELD_WALL};

static void arrival_opts(uint8_t b, struct trace_time_opts *o)
{
    static const double scales[4] = {1.0, 0.5, 2.5, 1.0};
    trace_time_opts_init(o);
    o->skip_bad = b & 1;
    if (b & 2) {
        o->loop = true;
        o->clip_end = 48 * HOUR_US;
    }
    o->scale = scales[(b >> 2) & 3];
    if (b & 16)
        o->clip_start = HOUR_US;
    if (b & 128)
        o->tz_s = -8 * 3600;
    o->seed = 1;
    o->stream_id = 2;
}

/* Read src to its end (or max records), checking order and clip. */
static int drain_arrivals(struct arrival_source *src, const struct trace_time_opts *o, uint64_t max,
                          char *msg, size_t msglen)
{
    struct trace_err err = {{0}};
    sim_time last = INT64_MIN, t[64];
    uint64_t got = 0;
    int rc = 0;
    /* The first records one by one (next), the rest in chunks (fill), as the simulator does. */
    while (rc == 0 && got < 16) {
        struct arrival a;
        rc = arrival_source_next(src, &a, &err);
        if (rc)
            break;
        t[0] = a.t;
        if (a.in_tokens > TRACE_MAX_TOKENS || a.out_tokens > TRACE_MAX_TOKENS) {
            snprintf(msg, msglen, "broken: arrival %llu has %u/%u tokens (limit %u)",
                     (unsigned long long)got, a.in_tokens, a.out_tokens, TRACE_MAX_TOKENS);
            return FUZZ_BROKEN;
        }
        if (a.t < last || a.t < o->clip_start || (o->clip_end > 0 && a.t >= o->clip_end) ||
            !sim_time_in_range(a.t)) {
            snprintf(msg, msglen,
                     "broken: arrival %llu at %lld us (previous %lld, clip [%lld, %lld))",
                     (unsigned long long)got, (long long)a.t, (long long)last,
                     (long long)o->clip_start, (long long)o->clip_end);
            return FUZZ_BROKEN;
        }
        last = a.t;
        got++;
    }
    while (rc == 0 && got < max) {
        uint32_t k = 0;
        rc = arrival_source_fill(src, t, 64, &k, &err);
        for (uint32_t i = 0; i < k; i++, got++) {
            if (t[i] < last || t[i] < o->clip_start || (o->clip_end > 0 && t[i] >= o->clip_end) ||
                !sim_time_in_range(t[i])) {
                snprintf(msg, msglen,
                         "broken: arrival %llu at %lld us (previous %lld, clip [%lld, %lld))",
                         (unsigned long long)got, (long long)t[i], (long long)last,
                         (long long)o->clip_start, (long long)o->clip_end);
                return FUZZ_BROKEN;
            }
            last = t[i];
        }
    }
    if (rc < 0)
        return rejected(err.msg, msg, msglen);
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

static int run_arrivals(enum arr_kind kind, const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    uint8_t opt = n ? data[0] : 0;
    char path[512];
    int rc = temp_name(path, sizeof(path), "csv");
    if (rc) {
        snprintf(msg, msglen, "fuzz: temporary path too long");
        return rc;
    }
    rc = write_file(path, n ? data + 1 : data, n ? n - 1 : 0, msg, msglen);
    if (rc)
        return rc;

    struct trace_time_opts o;
    arrival_opts(opt, &o);
    struct trace_err err = {{0}};
    struct arrival_source *src = NULL;
    enum tfield_unit unit = units[(opt >> 5) & 3];
    switch (kind) {
    case ARR_AZURE:
        src = arrivals_azure_create(path, &o, &err);
        break;
    case ARR_SERVEGEN:
        src = arrivals_servegen_create(path, &o, &err);
        break;
    case ARR_CSV: {
        struct arrival_csv_map m = {
            .time_col = "time_s", .unit = unit, .in_col = "in_tokens", .out_col = "out_tokens"};
        src = arrivals_csv_create(path, &m, &o, &err);
        break;
    }
    case ARR_COUNTS: {
        struct arrival_counts_map m = {
            .time_col = "minute", .unit = unit, .count_col = "requests", .interval = 0};
        src = arrivals_counts_create(path, &m, &o, &err);
        break;
    }
    }
    if (!src)
        rc = rejected(err.msg, msg, msglen);
    else
        rc = drain_arrivals(
            src, &o, kind == ARR_SERVEGEN || kind == ARR_COUNTS ? FUZZ_MAX_DRAWN : FUZZ_MAX_RECORDS,
            msg, msglen);
    arrival_source_destroy(src);
    unlink(path);
    return rc;
}

static int run_arrivals_azure(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_arrivals(ARR_AZURE, d, n, msg, msglen);
}

static int run_arrivals_servegen(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_arrivals(ARR_SERVEGEN, d, n, msg, msglen);
}

static int run_arrivals_csv(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_arrivals(ARR_CSV, d, n, msg, msglen);
}

static int run_arrivals_counts(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_arrivals(ARR_COUNTS, d, n, msg, msglen);
}

/* ------------------------------------------------------------ job logs */

enum job_kind { JOB_OPENB, JOB_PAI, JOB_HELIOS, JOB_CSV };

static void job_opts(uint8_t b, struct job_trace_opts *o)
{
    static const size_t windows[4] = {0, 1, 16, 1000};
    job_trace_opts_init(o);
    o->skip_bad = b & 1;
    o->reorder_window = windows[(b >> 1) & 3];
    if (b & 8)
        o->clip_start = HOUR_US;
    if (b & 16)
        o->clip_end = 24 * HOUR_US;
    if (b & 128)
        o->tz_s = -8 * 3600;
}

/* What traces/jobs.h promises of every job it returns; NULL when j keeps it. */
static const char *job_broken(const struct job_spec *j, sim_time last,
                              const struct job_trace_opts *o)
{
    if (j->submit < last)
        return "submit time goes backwards";
    if (j->submit < o->clip_start || (o->clip_end > 0 && j->submit >= o->clip_end))
        return "submit time outside the clip";
    if (j->work <= 0)
        return "work is not positive";
    if (j->work > SIM_TIME_LIMIT)
        return "work beyond 100 years (SIM_TIME_LIMIT)";
    if (!sim_time_in_range(j->submit))
        return "submit time beyond 100 years (SIM_TIME_LIMIT)";
    if (j->gpus < 1)
        return "no GPU";
    if (j->gpus > JOB_MAX_GPUS)
        return "more GPUs than JOB_MAX_GPUS";
    if (j->gpu_fraction < JOB_MIN_FRACTION)
        return "GPU fraction below JOB_MIN_FRACTION";
    if (!(j->gpu_fraction > 0.0 && j->gpu_fraction <= 1.0))
        return "GPU fraction outside (0, 1]";
    if (j->gpu_fraction < 1.0 && j->gpus != 1)
        return "a fractional job asks for more than one GPU";
    if (!memchr(j->mig_profile, 0, sizeof(j->mig_profile)) ||
        !memchr(j->queue, 0, sizeof(j->queue)))
        return "unterminated string";
    if (j->mig_profile[0] && !jobs_mig_profile_known(j->mig_profile))
        return "unknown MIG profile";
    if (!isfinite(j->params_b) || j->params_b < 0 || j->params_b > JOB_MAX_PARAMS_B)
        return "model size not in [0, JOB_MAX_PARAMS_B]";
    return NULL;
}

static int run_jobs(enum job_kind kind, const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    uint8_t opt = n ? data[0] : 0;
    char path[512];
    int rc = temp_name(path, sizeof(path), "csv");
    if (rc) {
        snprintf(msg, msglen, "fuzz: temporary path too long");
        return rc;
    }
    rc = write_file(path, n ? data + 1 : data, n ? n - 1 : 0, msg, msglen);
    if (rc)
        return rc;

    struct job_trace_opts o;
    job_opts(opt, &o);
    struct trace_err err = {{0}};
    struct job_source *src = NULL;
    switch (kind) {
    case JOB_OPENB:
        src = jobs_openb_create(path, &o, &err);
        break;
    case JOB_PAI:
        src = jobs_pai_task_create(path, &o, &err);
        break;
    case JOB_HELIOS:
        src = jobs_helios_create(path, &o, &err);
        break;
    case JOB_CSV: {
        static const enum tfield_unit dur_units[4] = {TFIELD_SEC, TFIELD_MS, TFIELD_US, TFIELD_SEC};
        struct job_csv_map m;
        job_csv_map_generic(&m);
        m.submit_unit = units[(opt >> 5) & 3];
        m.duration_unit = dur_units[(opt >> 5) & 3];
        src = jobs_csv_create(path, &m, &o, &err);
        break;
    }
    }
    if (!src) {
        rc = rejected(err.msg, msg, msglen);
        unlink(path);
        return rc;
    }
    sim_time last = INT64_MIN;
    rc = 0;
    for (uint64_t got = 0; rc == 0 && got < FUZZ_MAX_RECORDS; got++) {
        struct job_spec j;
        rc = job_source_next(src, &j, &err);
        if (rc)
            break;
        const char *why = job_broken(&j, last, &o);
        if (why) {
            snprintf(msg, msglen,
                     "broken: job %llu (id %llu): %s (submit %lld us, previous %lld, work %lld "
                     "us, gpus %u, fraction %g, mig '%.15s')",
                     (unsigned long long)got, (unsigned long long)j.id, why, (long long)j.submit,
                     (long long)last, (long long)j.work, j.gpus, j.gpu_fraction,
                     memchr(j.mig_profile, 0, sizeof(j.mig_profile)) ? j.mig_profile : "?");
            rc = FUZZ_BROKEN;
            break;
        }
        last = j.submit;
    }
    if (rc < 0)
        rc = rejected(err.msg, msg, msglen);
    else if (rc != FUZZ_BROKEN) {
        rc = FUZZ_ACCEPTED;
        msg[0] = '\0';
    }
    job_source_destroy(src);
    unlink(path);
    return rc;
}

static int run_jobs_openb(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_jobs(JOB_OPENB, d, n, msg, msglen);
}

static int run_jobs_pai(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_jobs(JOB_PAI, d, n, msg, msglen);
}

static int run_jobs_helios(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_jobs(JOB_HELIOS, d, n, msg, msglen);
}

static int run_jobs_csv(const uint8_t *d, size_t n, char *msg, size_t msglen)
{
    return run_jobs(JOB_CSV, d, n, msg, msglen);
}

/* ------------------------------------------------------------ snapshot */

/*
 * A warm-start snapshot (traces/snapshot.h) against two pools of 2 and 1
 * nodes of 4 cards ("a", "b"). The whole input is the file. Checks the
 * invariants of a loaded row that the header promises.
 */
static int run_snapshot(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    char path[512];
    int rc = temp_name(path, sizeof(path), "csv");
    if (rc) {
        snprintf(msg, msglen, "fuzz: temporary path too long");
        return rc;
    }
    if ((rc = write_file(path, data, n, msg, msglen)))
        return rc;
    static const char *const names[2] = {"a", "b"};
    static const uint32_t first[2] = {0, 2}, nodes[2] = {2, 1}, per[2] = {4, 4};
    const struct snap_geom g = {2, names, first, nodes, per};
    struct snap_job *v = NULL;
    uint32_t nv = 0, used[3] = {0};
    struct trace_err err = {{0}};
    rc = snapshot_load(path, &g, &v, &nv, &err);
    unlink(path);
    if (rc)
        return rejected(err.msg, msg, msglen);
    const char *why = NULL;
    uint32_t total = 0, i;
    for (i = 0; i < nv && !why; i++) {
        const struct snap_job *j = &v[i];
        total += j->gpus;
        if (j->gpus < 1 || j->gpus > 12 || total > 12)
            why = "GPUs outside the cluster";
        else if (j->remaining <= 0 || j->remaining > SIM_TIME_LIMIT || j->started < 0 ||
                 j->started > SIM_TIME_LIMIT)
            why = "a time outside its range";
        else if (j->ckpt_age < 0 || j->ckpt_age > j->started)
            why = "checkpoint age outside [0, started]";
        else if (j->pool < -1 || j->pool > 1 || j->node < -1 || j->node > 2)
            why = "pool or node out of range";
        else if (j->node >= 0 && j->pool >= 0 &&
                 (j->node < first[j->pool] || j->node >= first[j->pool] + nodes[j->pool]))
            why = "node outside its pool";
        else if (j->node >= 0 && (used[j->node] += j->gpus) > 4)
            why = "a node over-full";
        else if (!memchr(j->queue, 0, sizeof(j->queue)))
            why = "unterminated queue";
        for (uint32_t k = 0; k < i && !why; k++)
            if (v[k].id == j->id)
                why = "an id twice";
    }
    free(v);
    if (why) {
        snprintf(msg, msglen, "broken: row %u: %s", i - 1, why);
        return FUZZ_BROKEN;
    }
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

/* ------------------------------------------------------------ results */

/* The columns report, check and compare read after results_open (results_reads). */
#define FUZZ_READS (RESULTS_BY_REPORT | RESULTS_BY_CHECK | RESULTS_BY_COMPARE)

/*
 * What `report`, `check` and `compare` do with a file once results_open has
 * read it: the report in every format, every gate (and the file against
 * itself), and the comparison of the file with itself, all written to
 * /dev/null. The per-day tables and the backlog gate read their columns
 * through the reader (results_col: the file open once, each column read once).
 */
static void exercise_results(const struct results *r)
{
    FILE *null = fopen("/dev/null", "w");
    if (!null)
        return;
    report_results(null, r, REPORT_TEXT);
    report_results(null, r, REPORT_MARKDOWN);
    report_results(null, r, REPORT_JSON);
    struct check_gates g;
    fuzz_check_gates_all(&g);
    g.tolerance = 0.05;
    struct check_outcome o;
    check_run(null, r, r, &g, &o);
    g.util_kind = CHECK_UTIL_USEFUL;
    g.backlog_by_s = NAN; /* read once is enough */
    check_run(null, r, NULL, &g, &o);
    const struct results *pair[2] = {r, r};
    compare_write(null, pair, 2, false);
    compare_write(null, pair, 2, true);
    compare_count_significant(pair, 2);
    fclose(null);
}

/*
 * The results harness does what `report`, `check` and `compare` do: a child reads the file
 * (h5_rd_preflight; libhdf5 1.10 crashes, hangs or allocates without bound on some damaged
 * files, docs/security.md) and sends what it read, its answer (results_answer), which the
 * command's process decodes (results_from_answer) and reports, checks and compares. No
 * libhdf5 call on the input is made in the fuzzer's process, as none is in tidesim's.
 *
 * Forking the fuzzer itself, hundreds of MB of ASan and corpus, was half of what an input
 * cost, so a small helper process, forked once before the corpus is loaded
 * (fuzz_target_init), does the forking: per input it receives the bytes, has its reading
 * process, the worker (below), read them (from memory, results_open_image, then everything
 * the commands read later) and sends back the verdict, the answer, and the reading
 * process's coverage: its own counters (libFuzzer's inline 8-bit counters, zeroed before each
 * input), which the fuzzer adds to its own, so that the reader's branches guide it although
 * they run in another process.
 *
 * The fuzzer process's state (the libFuzzer entry has no context argument): the helper's
 * socket, -1 when there is none (make test, or it died: then the fuzzer's own process forks).
 */
static int helper_fd = -1;

/* The helper's verdict when a child died of our code (fuzz_report_blames_us). */
#define FUZZ_CHILD_OURS 4242

/* A libhdf5 hang is refused, as tidesim refuses it after H5READ_PREFLIGHT_MS, instead of
 * stopping the fuzzer at libFuzzer's -timeout. A read of a seed takes 5-10 ms of CPU under
 * AddressSanitizer; the hangs it refuses were a fifth of the harness's CPU at 1 s (perf,
 * 1,500 inputs: four children ran to the limit), hence a quarter of a second. */
#define FUZZ_PREFLIGHT_MS 250u
/* The limit in force: FUZZ_PREFLIGHT_MS in the fuzzer (fuzz_target_init); 10 s where make
 * test calls the harness, where a read under AddressSanitizer on a loaded machine took
 * longer than 250 ms and the test failed on noise (make test SANITIZE=..., both cores busy). */
static unsigned preflight_ms = 10000;

/* An input, where its child sends its answer and its coverage (-1: nowhere), and whether
 * the child releases what it read (a worker, which reads the next input next). */
struct image {
    const void *buf;
    size_t n;
    int ship, cov;
    bool release;
};

/* Sanitizer hooks, weak: the plain build links this file into the tests without them. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));
void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out, size_t n) __attribute__((weak));

/* libFuzzer's inline 8-bit counters (-fsanitize=fuzzer); absent (NULL) in the plain build. */
extern uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak));

static size_t cov_size(void)
{
    uintptr_t a = (uintptr_t)__start___sancov_cntrs, b = (uintptr_t)__stop___sancov_cntrs;
    return a && b > a ? (size_t)(b - a) : 0;
}

/* In the child: count from zero, then write the counters to fd. */
static void cov_zero(void)
{
    if (cov_size())
        memset(__start___sancov_cntrs, 0, cov_size());
}

static void cov_send(int fd)
{
    if (fd >= 0 && cov_size()) /* a short write is caught by the size test of probe_child */
        (void)!pwrite(fd, __start___sancov_cntrs, cov_size(), 0);
}

/* In the fuzzer: add a child's counters to ours (saturating), when they are this binary's.
 * Not instrumented itself: its comparisons, one per counter, each called libFuzzer's
 * comparison hooks, which was a tenth of the harness's CPU (perf, 15,000 inputs). */
#if defined(__clang__)
__attribute__((no_sanitize("coverage")))
#endif
static void
cov_merge(const uint8_t *c, size_t n)
{
    if (n != cov_size())
        return;
    uint8_t *mine = __start___sancov_cntrs;
    for (size_t i = 0; i < n; i++) {
        unsigned v = (unsigned)mine[i] + c[i];
        mine[i] = (uint8_t)(v > 255 ? 255 : v);
    }
}

/*
 * A child's death is libhdf5's (refused, as tidesim refuses the file) or ours (a finding),
 * told apart by its sanitizer report, which the helper has the child write to report_fd
 * instead of /dev/null (h5_rd_preflight's child_quiet). Wild accesses are reported too: the
 * child gets back the sanitizer's handlers of the deadly signals, saved in the helper before
 * child_quiet resets them. Without this, a memory error of our reader in the child was refused
 * as if libhdf5 had crashed, and the fuzzer never saw it.
 */
static int report_fd = -1;
static const int deadly_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static struct sigaction sanitizer_sigs[sizeof(deadly_sigs) / sizeof(deadly_sigs[0])];

/* A stack frame's text after "#N 0x... ": whether the classifier skips it (sanitizer runtime,
 * libc, libhdf5's compression libraries), and whether it is libhdf5's or ours. */
enum frame_kind { FRAME_SKIP, FRAME_LIBHDF5, FRAME_OURS };

static enum frame_kind frame_kind(const char *f, size_t len)
{
    char line[600];
    snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len : sizeof(line) - 1), f);
    if (strstr(line, "libhdf5"))
        return FRAME_LIBHDF5;
    static const char *const skip[] = {
        "libc.so",     "libm.so",    "libpthread", "ld-linux",          "libz.so",
        "libsz.so",    "libaec.so",  " in __asan", " in __interceptor", " in __sanitizer",
        " in __ubsan", " in __lsan", " in __libc"};
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (strstr(line, skip[i]))
            return FRAME_SKIP;
    /* A frame of ours has its source: " in fn dir/file.c:line". The runtime's interceptors
     * (free, memcpy, ...) show the binary and an offset instead. */
    return strstr(line, ".c:") ? FRAME_OURS : FRAME_SKIP;
}

bool fuzz_report_blames_us(const char *rep)
{
    if (strstr(rep, "runtime error:")) /* UBSan: only our code is instrumented */
        return true;
    bool in_stack = false;
    for (const char *p = rep; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        if (q < p + len && *q == '#' && strstr(q, " 0x")) {
            in_stack = true;
            enum frame_kind k = frame_kind(q, len - (size_t)(q - p));
            if (k != FRAME_SKIP)
                return k == FRAME_OURS;
        } else if (in_stack) {
            return false; /* the error's own stack ended (then come "freed by", ...) */
        }
        p = end ? end + 1 : p + len;
    }
    return false;
}

/* The report a dead child left in report_fd (at most n − 1 bytes), or "". */
static void child_report(char *buf, size_t n)
{
    ssize_t k = report_fd >= 0 ? pread(report_fd, buf, n - 1, 0) : -1;
    buf[k > 0 ? k : 0] = '\0';
}

/*
 * The child's read (open_probe in analysis/results.c), from memory: results_open's own, then
 * every column report, check and compare read later, sent as results_open's child sends it.
 */
static int image_probe(void *arg, char *why, size_t n)
{
    const struct image *im = arg;
    if (report_fd >= 0 && __sanitizer_set_report_fd) { /* in the helper's children */
        if (ftruncate(report_fd, 0) == 0 && lseek(report_fd, 0, SEEK_SET) == 0)
            __sanitizer_set_report_fd((void *)(intptr_t)report_fd);
        for (size_t i = 0; i < sizeof(deadly_sigs) / sizeof(deadly_sigs[0]); i++)
            sigaction(deadly_sigs[i], &sanitizer_sigs[i], NULL);
    }
    cov_zero();
    struct results r;
    int rc = results_open_image(&r, "fuzz.h5", im->buf, im->n, why, n);
    if (!rc) {
        rc = results_read_all(&r, FUZZ_READS);
        if (rc)
            snprintf(why, n, "fuzz.h5: %s", results_why(&r));
        else if (im->ship >= 0 && (rc = results_answer(&r, im->ship)) != 0)
            snprintf(why, n, "fuzz.h5: cannot pass on what was read (%s)", strerror(-rc));
        /* Not released in h5_rd_preflight's child: it ends here, nothing is kept. */
        if (im->release)
            results_release(&r);
    }
    cov_send(im->cov);
    return rc;
}

static bool io_all(int fd, void *buf, size_t n, bool out)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* A buffer grown as needed and kept: a buffer freed per input would sit in AddressSanitizer's
 * quarantine (up to 256 MB of it), and every page a process holds is a page table entry each
 * fork copies. */
struct grow {
    uint8_t *p;
    size_t cap;
};

static bool grow_to(struct grow *g, size_t n)
{
    if (n <= g->cap && g->p)
        return true;
    free(g->p);
    g->cap = n > 262144 ? n : 262144;
    g->p = malloc(g->cap);
    return g->p != NULL;
}

/* In the helper or the worker: the next input from fd (u64 length, bytes) into in; its length.
 * The process ends when fd does (the fuzzer, or the helper, closed its end). */
static size_t recv_input(int fd, struct grow *in)
{
    uint64_t len;
    if (!io_all(fd, &len, sizeof(len), false) || len > ((uint64_t)1 << 31) ||
        !grow_to(in, (size_t)len) || !io_all(fd, in->p, (size_t)len, false))
        _exit(0);
    return (size_t)len;
}

/* The contents of fd (its size, at most max) into g; its size, or 0. */
static size_t slurp_fd(int fd, struct grow *g, size_t max)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > max ||
        !grow_to(g, (size_t)st.st_size))
        return 0;
    return pread(fd, g->p, (size_t)st.st_size, 0) == st.st_size ? (size_t)st.st_size : 0;
}

/*
 * The worker: one reading process that reads input after input, where h5_rd_preflight forks
 * a child per input. Forking was half of what an input cost (perf, 11,000 inputs: the copy
 * of the helper's page tables, then the page faults and the exit of a fresh process; 114
 * inputs a second on one core, 250-280 with a worker). A worker is set up as
 * h5_rd_preflight's child is (h5_rd_child_quiet) and reads each input as that child does
 * (image_probe), then releases it. Its death or a hang is the input's verdict, worded as
 * h5_rd_preflight words it (h5_rd_child_lost); a new worker is forked for the next input.
 * libhdf5's free lists keep what they are given in a worker (H5set_free_list_limits, no
 * limit): at its default limits each file's metadata cache (a 512 KB block, H5C_t) went
 * back to the allocator and came back as fresh pages, to be faulted in and cleared (perf:
 * 250-280 inputs a second, 370 without).
 *
 * tidesim reads each file in a fresh process, so a worker must not carry anything from one
 * input to the next: when an input leaves anything open in libhdf5 (a file, a group, a
 * type: H5Fget_obj_count), the worker is replaced before the next one; and it is replaced
 * after WORKER_INPUTS inputs in any case, which bounds what libhdf5 leaks on damaged files
 * (docs/security.md).
 */
#define WORKER_INPUTS 500u

static struct {
    pid_t pid; /* -1: none */
    int fd;    /* the helper's end of the worker's socket */
    unsigned served;
    int keep_out;   /* the helper's socket to the fuzzer, closed in the worker (-1: none) */
    size_t started; /* workers forked so far */
} worker = {-1, -1, 0, -1, 0};

/* In the worker: inputs (u64 length, bytes) answered with (i32 code, u32 length, message,
 * i32 clean), until the helper closes its end. The answer and the counters go to ship and
 * covfd, as from h5_rd_preflight's child. */
static void worker_loop(int fd, int ship, int covfd)
{
    h5_rd_child_quiet();
    H5set_free_list_limits(-1, -1, -1, -1, -1, -1);
    struct grow in = {NULL, 0};
    for (;;) {
        size_t len = recv_input(fd, &in);
        char why[1024] = "";
        struct image im = {in.p, len, ship, covfd, true};
        int32_t rc = (int32_t)image_probe(&im, why, sizeof(why));
        int32_t clean = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0;
        uint32_t wl = (uint32_t)strnlen(why, sizeof(why) - 1);
        if (!io_all(fd, &rc, sizeof(rc), true) || !io_all(fd, &wl, sizeof(wl), true) ||
            !io_all(fd, why, wl, true) || !io_all(fd, &clean, sizeof(clean), true))
            _exit(0);
    }
}

/* The worker ended: killed if still there, and reaped. */
static void worker_end(void)
{
    int st;
    if (worker.fd >= 0)
        close(worker.fd);
    if (worker.pid > 0) {
        kill(worker.pid, SIGKILL);
        while (waitpid(worker.pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    worker.pid = -1;
    worker.fd = -1;
    worker.served = 0;
}

/* A worker forked from this process. */
static bool worker_start(int ship, int covfd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    pid_t helper = getpid(), pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    if (pid == 0) {
        close(sv[0]);
        if (worker.keep_out >= 0)
            close(worker.keep_out);
        h5_rd_die_with_parent(helper); /* never outlive the helper */
        worker_loop(sv[1], ship, covfd);
        _exit(0);
    }
    close(sv[1]);
    worker.pid = pid;
    worker.fd = sv[0];
    worker.served = 0;
    worker.started++;
    return true;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* n bytes from fd before the deadline (CLOCK_MONOTONIC seconds): 1, 0 at its end or on an
 * error, -1 when the deadline passed. */
static int recv_by(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        double left = deadline - mono_s();
        if (left <= 0)
            return -1;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR)
            return 0;
        if (pr <= 0)
            continue;
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        p += k;
        n -= (size_t)k;
    }
    return 1;
}

/* Whether the reading process has begun a sanitizer report (in report_fd): its death is
 * near, and its report says whose error it is. */
static bool report_begun(void)
{
    struct stat st;
    return report_fd >= 0 && fstat(report_fd, &st) == 0 && st.st_size > 0;
}

/* How long a reading process that has begun its report is given to finish it (below
 * libFuzzer's -timeout of 10 s, fuzz/run.sh). */
#define FUZZ_REPORT_WAIT_S 5.0

/* One input read by the worker (started when there is none), as h5_rd_preflight reads it:
 * the probe's verdict and message, or the worker's death or hang as h5_rd_preflight's
 * child's. */
static int worker_probe(const void *data, size_t n, char *why, size_t whylen, int ship, int covfd)
{
    if (worker.pid < 0 && !worker_start(ship, covfd)) {
        int e = errno;
        snprintf(why, whylen, "cannot start the reading process (%s)", strerror(e));
        return -e;
    }
    double deadline = mono_s() + preflight_ms / 1000.0;
    uint64_t len = n;
    int32_t rc = 0, clean = 0;
    uint32_t wl = 0;
    char msg[1024];
    int got = io_all(worker.fd, &len, sizeof(len), true) &&
              io_all(worker.fd, (void *)(uintptr_t)data, n, true);
    if (got)
        got = recv_by(worker.fd, &rc, sizeof(rc), deadline);
    if (got == 1)
        got = recv_by(worker.fd, &wl, sizeof(wl), deadline);
    if (got == 1 && wl >= sizeof(msg))
        got = 0;
    if (got == 1)
        got = recv_by(worker.fd, msg, wl, deadline);
    if (got == 1)
        got = recv_by(worker.fd, &clean, sizeof(clean), deadline);
    if (got == -1 && report_begun()) {
        /* Not a hang: a sanitizer is writing its report, whose stacks it symbolizes, which
         * can take longer than the limit on a loaded machine (3 planted errors in 60 were
         * refused as a hang, 270 ms). Its end decides whose error it was: wait for it. */
        char sink[64];
        double until = mono_s() + FUZZ_REPORT_WAIT_S;
        while ((got = recv_by(worker.fd, sink, sizeof(sink), until)) == 1)
            ;
    }
    if (got != 1) { /* dead (its status tells how), too slow, or out of step: killed */
        int st = 0;
        kill(worker.pid, SIGKILL); /* a dead worker's status stays the one it died with */
        while (waitpid(worker.pid, &st, 0) < 0 && errno == EINTR)
            ;
        worker.pid = -1;
        worker_end();
        return h5_rd_child_lost(st, got == -1, preflight_ms, why, whylen);
    }
    if (!clean || ++worker.served >= WORKER_INPUTS)
        worker_end();
    if (rc == 0)
        return 0;
    snprintf(why, whylen, "%.*s", (int)wl, msg);
    return rc;
}

/*
 * One input read in a child, from this process: by the worker (by_worker; the helper's way),
 * by h5_rd_preflight's child of image_probe otherwise.
 * The verdict, the child's message in why, its answer in *ans (ans->p[0..*alen)) when it read
 * the file, its counters in *cov (*clen bytes) when it ended normally.
 */
static int probe_child(const void *data, size_t n, char *why, size_t whylen, struct grow *ans,
                       size_t *alen, struct grow *cov, size_t *clen, bool by_worker)
{
    static int ship = -1, covfd = -1;
    if (ship < 0)
        ship = answer_fd();
    if (covfd < 0)
        covfd = answer_fd();
    *alen = *clen = 0;
    if (ship >= 0 && (ftruncate(ship, 0) != 0 || lseek(ship, 0, SEEK_SET) != 0))
        return -EIO;
    if (covfd >= 0 && ftruncate(covfd, 0) != 0)
        return -EIO;
    struct image im = {data, n, ship, covfd, false};
    int rc = by_worker ? worker_probe(data, n, why, whylen, ship, covfd)
                       : h5_rd_preflight(image_probe, &im, preflight_ms, why, whylen);
    if (rc != -ECANCELED && rc != -ETIMEDOUT)
        *clen = slurp_fd(covfd, cov, cov_size());
    if (!rc)
        *alen = slurp_fd(ship, ans, (size_t)1 << 31);
    return rc;
}

/* libhdf5's set-up (its type conversion table, the core file driver) done once in the
 * helper, not again in every child: 19 to 16 ms of CPU per input (perf stat, 800 inputs).
 * And the sanitizer's symbolizer (llvm-symbolizer) started once: each child that dies
 * writes a symbolized report, and without this each started its own, which took a third
 * of the CPU time (perf, 600 inputs: 51 symbolizers); the children now use the helper's. */
static void helper_warm(void)
{
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) {
        H5Pset_fapl_core(fapl, 64 << 10, 0);
        H5Pclose(fapl);
    }
    if (__sanitizer_symbolize_pc) {
        char where[256];
        __sanitizer_symbolize_pc((void *)(uintptr_t)helper_warm, "%F %L", where, sizeof(where));
    }
}

/* The helper: one preflight per request (u64 length, bytes), answered with (i32 code, u32
 * length, message, u64 length, answer, u64 length, counters). Ends when the fuzzer closes
 * its end. */
static void helper_loop(int fd)
{
    struct grow in = {NULL, 0}, ans = {NULL, 0}, cov = {NULL, 0};
    worker.keep_out = fd;
    helper_warm();
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/tidesim-fuzz-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    report_fd = mkstemp(path);
    if (report_fd >= 0)
        unlink(path);
    for (size_t i = 0; i < sizeof(deadly_sigs) / sizeof(deadly_sigs[0]); i++)
        sigaction(deadly_sigs[i], NULL, &sanitizer_sigs[i]);
    for (;;) {
        size_t len = recv_input(fd, &in);
        char why[512] = "";
        size_t alen, clen;
        int32_t rc =
            (int32_t)probe_child(in.p, len, why, sizeof(why), &ans, &alen, &cov, &clen, true);
        if (rc == -ECANCELED) { /* the child died: libhdf5, or us? */
            static char rep[65536];
            child_report(rep, sizeof(rep));
            if (fuzz_report_blames_us(rep)) {
                rc = FUZZ_CHILD_OURS;
                const char *e = strstr(rep, "ERROR:");
                snprintf(why, sizeof(why), "%.400s", e ? e : rep);
                fputs(rep, stderr); /* the whole report, in the fuzzer's log */
            }
        }
        uint32_t wl = (uint32_t)strnlen(why, sizeof(why));
        uint64_t al = alen, cl = clen;
        if (!io_all(fd, &rc, sizeof(rc), true) || !io_all(fd, &wl, sizeof(wl), true) ||
            !io_all(fd, why, wl, true) || !io_all(fd, &al, sizeof(al), true) ||
            !io_all(fd, ans.p, alen, true) || !io_all(fd, &cl, sizeof(cl), true) ||
            !io_all(fd, cov.p, clen, true))
            _exit(0);
    }
}

static void start_helper(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return;
    pid_t fuzzer = getpid(), pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return;
    }
    if (pid == 0) {
        close(sv[0]);
        h5_rd_die_with_parent(fuzzer); /* never outlive the fuzzer */
        helper_loop(sv[1]);
        _exit(0);
    }
    close(sv[1]);
    helper_fd = sv[0];
}

/*
 * data[0..n) read in a child, by the helper (or from here, without one): the verdict, the
 * child's answer in *ans (*alen bytes; 0 when it did not read the file), its coverage added
 * to ours.
 */
static int preflight(const uint8_t *data, size_t n, char *why, size_t whylen, struct grow *ans,
                     size_t *alen)
{
    static struct grow cov = {NULL, 0};
    size_t clen = 0;
    *alen = 0;
    if (helper_fd >= 0) {
        uint64_t len = n, al, cl;
        int32_t rc;
        uint32_t wl;
        char buf[512];
        if (io_all(helper_fd, &len, sizeof(len), true) &&
            io_all(helper_fd, (void *)(uintptr_t)data, n, true) &&
            io_all(helper_fd, &rc, sizeof(rc), false) &&
            io_all(helper_fd, &wl, sizeof(wl), false) && wl < sizeof(buf) &&
            io_all(helper_fd, buf, wl, false) && io_all(helper_fd, &al, sizeof(al), false) &&
            al <= ((uint64_t)1 << 31) && grow_to(ans, (size_t)al) &&
            io_all(helper_fd, ans->p, (size_t)al, false) &&
            io_all(helper_fd, &cl, sizeof(cl), false) && cl <= cov_size() &&
            grow_to(&cov, (size_t)cl) && io_all(helper_fd, cov.p, (size_t)cl, false)) {
            snprintf(why, whylen, "%.*s", (int)wl, buf);
            *alen = (size_t)al;
            cov_merge(cov.p, (size_t)cl);
            return rc;
        }
        close(helper_fd); /* the helper is gone: fork from here from now on */
        helper_fd = -1;
    }
    int rc = probe_child(data, n, why, whylen, ans, alen, &cov, &clen, false);
    cov_merge(cov.p, clen);
    return rc;
}

size_t fuzz_results_worker_check(const uint8_t *const *in, const size_t *n, size_t k,
                                 size_t *workers, char *msg, size_t msglen)
{
    struct grow fresh = {NULL, 0}, kept = {NULL, 0}, cov = {NULL, 0};
    size_t i, started = worker.started;
    unsigned was = preflight_ms;
    preflight_ms = 60000; /* a slow machine's read is not a hang here either */
    msg[0] = '\0';
    for (i = 0; i < k; i++) {
        char w1[1024] = "", w2[1024] = "";
        size_t a1, a2, c;
        int r1 = probe_child(in[i], n[i], w1, sizeof(w1), &fresh, &a1, &cov, &c, false);
        int r2 = probe_child(in[i], n[i], w2, sizeof(w2), &kept, &a2, &cov, &c, true);
        if (r1 && r2 && (r1 == -ECANCELED || r2 == -ECANCELED))
            continue; /* both refused, libhdf5 crashed in one: see targets.h */
        if (r1 != r2 || strcmp(w1, w2) != 0 || a1 != a2 ||
            (a1 && memcmp(fresh.p, kept.p, a1) != 0)) {
            snprintf(msg, msglen,
                     "input %zu: a fresh child: %d \"%.200s\", %zu bytes of answer; the worker: "
                     "%d \"%.200s\", %zu bytes",
                     i, r1, w1, a1, r2, w2, a2);
            break;
        }
    }
    worker_end();
    preflight_ms = was;
    *workers = worker.started - started;
    free(fresh.p);
    free(kept.p);
    free(cov.p);
    return i;
}

/* With TIDESIM_FUZZ_SAVE_ANSWERS=DIR, each answer decoded is also written to DIR/answer-<hash>:
 * the seeds of the results_answer harness (fuzz/seeds.sh). */
static void save_answer(const uint8_t *a, size_t n)
{
    const char *dir = getenv("TIDESIM_FUZZ_SAVE_ANSWERS");
    if (!dir || !*dir)
        return;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ a[i]) * 1099511628211ull;
    char path[1024], msg[256];
    snprintf(path, sizeof(path), "%s/answer-%016llx", dir, (unsigned long long)h);
    if (write_file(path, a, n, msg, sizeof(msg)))
        fprintf(stderr, "%s\n", msg);
}

/*
 * The fuzzer's entry: results_open's two steps, as tidesim takes them: the read in a child
 * (above), then its answer decoded in this process (results_from_answer), then what report,
 * check and compare do. No file is written per input.
 */
static int run_results(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    static struct grow ans = {NULL, 0};
    size_t alen;
    struct results r;
    char err[512] = "";
    int rc = preflight(data, n, err, sizeof(err), &ans, &alen);
    if (rc == FUZZ_CHILD_OURS) { /* a sanitizer caught our code in the child: a finding */
        snprintf(msg, msglen, "the reader failed in the preflight child: %s", err);
        return FUZZ_BROKEN;
    }
    if (rc && strncmp(err, "fuzz.h5:", 8) == 0) /* the reader's refusal names the file */
        return rejected(err, msg, msglen);
    if (rc) { /* the child's death or hang, as results_open words it */
        snprintf(msg, msglen, "fuzz.h5: %s", err);
        return FUZZ_REJECTED;
    }
    /* An answer our own reader sent for a file it read: refusing it is a bug of ours. */
    rc = results_from_answer(&r, "fuzz.h5", FUZZ_READS, ans.p, alen, err, sizeof(err));
    if (rc) {
        snprintf(msg, msglen, "the child's answer (%zu bytes) was refused: %s", alen, err);
        return FUZZ_BROKEN;
    }
    save_answer(ans.p, alen);
    exercise_results(&r);
    results_release(&r);
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

/*
 * The results_answer harness: the decoder of the child's answer (results_from_answer) on
 * any bytes, then what report, check and compare do with what it accepts. The answer comes
 * from a process that read a hostile file with libhdf5, so it is as hostile as the file.
 * Its seeds are the answers the results harness decodes from its own seeds, saved with
 * TIDESIM_FUZZ_SAVE_ANSWERS=DIR (fuzz/seeds.sh).
 */
static int run_results_answer(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    struct results r;
    char err[512] = "";
    int rc = results_from_answer(&r, "fuzz.h5", FUZZ_READS, data, n, err, sizeof(err));
    if (rc)
        return rejected(err, msg, msglen);
    exercise_results(&r);
    results_release(&r);
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

/*
 * The index_answer harness: the decoder of what the child that read a sweep or plan index
 * sends the command (idx_decode in analysis/sweepidx.c, as hostile as the index: docs/
 * security.md), then what report (text and JSON), plan, plot's answers and check's and
 * compare's point choice (sweepidx_select: every point, --point, --where) do with what it
 * accepts. The answer reaches the readers as sweepidx_is_index_vet leaves it to them: in a
 * struct results_vet (v->ship), for a file that is still the one the child read; here a
 * placeholder file made once. Besides "no crash": a refusal names the file, and taking
 * every point gives one row per point, each with its file and label.
 *
 * With TIDESIM_FUZZ_SAVE_ANSWERS=DIR, an input that is an HDF5 file (an index fuzz/seeds.sh
 * made) is read here as the child reads one (sweepidx_answer) and its answer saved to DIR:
 * the seeds of this harness. Nothing else is read with libhdf5 in this process.
 */
static int index_seed(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    char path[512], err[512] = "";
    int fd = answer_fd();
    int rc = fd < 0 ? fd : temp_name(path, sizeof(path), "index.h5");
    if (!rc)
        rc = write_file(path, data, n, msg, msglen);
    if (!rc) {
        rc = sweepidx_answer(path, fd, err, sizeof(err));
        unlink(path);
        if (rc)
            fprintf(stderr, "fuzz: no answer saved: %s\n", err);
    }
    struct answer_map m;
    if (!rc && answer_map(fd, &m) == 0) {
        save_answer(m.p, m.n);
        answer_unmap(&m);
    }
    if (fd >= 0)
        close(fd);
    snprintf(msg, msglen, "an index seed, read for its answer");
    return FUZZ_REJECTED;
}

static int run_index_answer(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    static const uint8_t hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    const char *save = getenv("TIDESIM_FUZZ_SAVE_ANSWERS");
    if (save && *save && n >= 8 && !memcmp(data, hdf5_sig, 8))
        return index_seed(data, n, msg, msglen);
    static char path[512];
    static int ship = -1;
    struct results_vet v;
    memset(&v, 0, sizeof(v));
    if (ship < 0) {
        int rc = temp_name(path, sizeof(path), "index");
        if (!rc)
            rc = write_file(path, (const uint8_t *)"", 0, msg, msglen);
        if (!rc && (ship = answer_fd()) < 0)
            rc = ship;
        if (rc) {
            snprintf(msg, msglen, "fuzz: cannot set up the index harness (%s)", strerror(-rc));
            return rc;
        }
    }
    if (stat(path, &v.st) != 0 || ftruncate(ship, 0) != 0 ||
        pwrite(ship, data, n, 0) != (ssize_t)n) {
        int e = errno ? errno : EIO;
        snprintf(msg, msglen, "fuzz: cannot hand the answer over (%s)", strerror(e));
        return -e;
    }
    v.other = true;
    v.ship = ship;
    struct sweepidx_table t;
    char err[1024] = "";
    int rc = sweepidx_table_load(&t, path, &v, err, sizeof(err));
    if (rc) {
        sweepidx_table_release(&t);
        if (strncmp(err, path, strlen(path)) != 0) {
            snprintf(msg, msglen, "broken: a refusal that does not name the file: %s", err);
            return FUZZ_BROKEN;
        }
        return rejected(err, msg, msglen);
    }
    FILE *null = fopen("/dev/null", "w");
    if (!null) {
        sweepidx_table_release(&t);
        snprintf(msg, msglen, "fuzz: cannot open /dev/null");
        return -EIO;
    }
    sweepidx_report(null, path, false, &v, err, sizeof(err));
    sweepidx_report(null, path, true, &v, err, sizeof(err));
    planidx_print(null, path, &v, err, sizeof(err));
    double answers[256];
    size_t nch = 0;
    planidx_answers(path, &v, answers, 256, &nch);
    fclose(null);
    /* check's and compare's choice of points: all of them, then --point and --where. */
    struct sweepidx_points pts;
    rc = sweepidx_select(path, &v, NULL, &pts, err, sizeof(err));
    if (!rc && pts.n != t.np) {
        snprintf(msg, msglen, "broken: %zu of %zu points taken without a choice", pts.n, t.np);
        rc = FUZZ_BROKEN;
    }
    for (size_t i = 0; rc == 0 && i < pts.n; i++)
        if (!pts.path[i] || !pts.label[i] || pts.point[i] != i) {
            snprintf(msg, msglen, "broken: point %zu without its file or label", i);
            rc = FUZZ_BROKEN;
        }
    if (rc && rc != FUZZ_BROKEN) {
        snprintf(msg, msglen, "broken: the table was read but its points refused: %s", err);
        rc = FUZZ_BROKEN;
    }
    sweepidx_points_release(&pts); /* empty after a refusal */
    if (rc == 0) {
        struct sweepidx_sel sel = {.npoints = 3, .points = {t.np - 1, 0, t.np - 1}};
        static char where[2][1024];
        snprintf(where[0], sizeof(where[0]), "%s=%s", t.axes[0], t.vals[0]);
        snprintf(where[1], sizeof(where[1]), "%s=x", t.axes[t.naxes - 1]);
        sel.where[sel.nwhere++] = where[0];
        if (sweepidx_select(path, &v, &sel, &pts, err, sizeof(err)) == 0)
            sweepidx_points_release(&pts);
        sel.where[sel.nwhere++] = where[1];
        sel.npoints = 0;
        if (sweepidx_select(path, &v, &sel, &pts, err, sizeof(err)) == 0)
            sweepidx_points_release(&pts);
    }
    sweepidx_table_release(&t);
    if (rc)
        return rc;
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

/*
 * The replay of a kept input (make test): the file on disk and results_open,
 * the production path with its child process, which must refuse a file on
 * which libhdf5 itself crashes or hangs.
 */
static int replay_results(const uint8_t *data, size_t n, char *msg, size_t msglen)
{
    char path[512];
    int rc = temp_name(path, sizeof(path), "h5");
    if (rc) {
        snprintf(msg, msglen, "fuzz: temporary path too long");
        return rc;
    }
    rc = write_file(path, data, n, msg, msglen);
    if (rc)
        return rc;
    struct results r;
    char err[512] = "";
    rc = results_open_for(&r, path, FUZZ_READS, err, sizeof(err));
    if (rc) {
        unlink(path);
        return rejected(err, msg, msglen);
    }
    exercise_results(&r);
    results_release(&r);
    unlink(path);
    msg[0] = '\0';
    return FUZZ_ACCEPTED;
}

/* ------------------------------------------------------------ the table */

const struct fuzz_target fuzz_targets[] = {
    {"scenario", run_scenario, NULL},
    {"arrivals_azure", run_arrivals_azure, NULL},
    {"arrivals_servegen", run_arrivals_servegen, NULL},
    {"arrivals_csv", run_arrivals_csv, NULL},
    {"arrivals_counts", run_arrivals_counts, NULL},
    {"jobs_openb", run_jobs_openb, NULL},
    {"jobs_pai", run_jobs_pai, NULL},
    {"jobs_helios", run_jobs_helios, NULL},
    {"jobs_csv", run_jobs_csv, NULL},
    {"results", run_results, replay_results},
    {"results_answer", run_results_answer, NULL},
    {"index_answer", run_index_answer, NULL},
    {"snapshot", run_snapshot, NULL},
};

const size_t fuzz_ntargets = sizeof(fuzz_targets) / sizeof(fuzz_targets[0]);

void fuzz_target_init(const char *name)
{
    if (strcmp(name, "results") == 0 && helper_fd < 0) {
        preflight_ms = FUZZ_PREFLIGHT_MS;
        start_helper();
    }
}

void fuzz_check_gates_all(struct check_gates *g)
{
    check_gates_init(g);
    g->min_util = 0.5;
    g->min_slo = 0.9;
    g->max_ckpt_overhead = 0.1;
    g->max_p99_ms = 100;
    g->max_queue_delay_s = 60;
    g->min_train_gpuh_day = 1;
    g->backlog_by_s = 3600; /* reads /jobs submit_s, end_s, state */
    g->max_ttft_p99_ms = 500;
    g->max_tpot_p99_ms = 50;
}

const struct fuzz_target *fuzz_target_find(const char *name)
{
    for (size_t i = 0; i < fuzz_ntargets; i++)
        if (strcmp(fuzz_targets[i].name, name) == 0)
            return &fuzz_targets[i];
    return NULL;
}
