/*
 * test_oom.c — out-of-memory testing, as SQLite's testing page describes it
 * (https://www.sqlite.org/testing.html, "Out-Of-Memory Testing"): a command is run with its
 * Nth allocation failing (tests/oom/failmalloc.c, preloaded into the binary), for N = 1,
 * 1 + S, 1 + 2S, ... up to the last allocation any of its processes makes. The commands:
 * validate, run (under every policy), report, check, compare, sweep. Every run must:
 *  - end with the command's own exit status for an error (check: 2, the others: 1) or
 *    succeed, never end by a signal or hang;
 *  - when it succeeds, print exactly what the command prints with all its memory: a failed
 *    allocation is never papered over with another answer (for `run`, the results file it
 *    wrote reports as the reference's does);
 *  - when it fails, say so in a first line of plain text that names the command or the file
 *    (no stray bytes from a message never written);
 *  - for `run`, leave nothing when it fails: no results file, no temporary file; for
 *    `sweep`, no temporary file, and the sweep run again finishes with the reference's index.
 * The same for I/O errors (SQLite's "I/O Error Testing"), at the end: the Nth write to a file
 * fails (FAILMALLOC_IO) in `run` and `sweep`.
 *
 * S is 1 with TIDESIM_OOM_ALL=1 (`make oom`: every allocation of every command) and, in
 * `make test`, the last allocation over OOM_RUNS (about that many runs each). Skipped
 * (saying so) when the preloadable allocator is not built or under sanitizers, whose
 * allocator must be the only one.
 *
 * libhdf5 1.10.8 does not survive every failed allocation of its own: its set-up recurses
 * until the stack ends (H5open: H5E_printf_stack -> H5I_inc_ref -> H5E__push_stack -> ...),
 * H5CX_pop and H5A__dense_insert dereference what they did not get. Where that happens in
 * the child that reads a file (report, check, compare), the command refuses the file, which
 * is what is asked of it here. `run` writes with libhdf5 in its own process, so there the
 * allocations made within a call into libhdf5 are spared (FAILMALLOC_SPARE): the test holds
 * tidesim's own code, libc's, libyaml's and GSL's to it, not libhdf5's.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/proctest.h"

#define OOM_RUNS 100 /* runs per command in make test (and about 20 of the search for the last) */

/* oom_case.io: the Nth write to a file fails instead of the Nth allocation, in any process
 * (OOM_IO) or in the command's own only (OOM_IO_MAIN), which forked children would
 * otherwise reach first. */
enum { OOM_IO = 1, OOM_IO_MAIN = 2 };

/* The preloadable allocator, or NULL (the test is then skipped). */
static const char *oom_shim(void)
{
    const char *s = getenv("TIDESIM_FAILMALLOC");
    return s && *s && access(s, R_OK) == 0 ? s : NULL;
}

/*
 * tidesim ARGS in dir with the at-th allocation failing (0: none), or with io the at-th
 * write to a file (FAILMALLOC_IO; OOM_IO_MAIN: of the command's own process), stdout to outf,
 * stderr to errf; the count of the command's own allocations (or writes) to countf and the mark of
 * a failed one to hitf (each NULL: not asked); allocations libhdf5 makes are spared when spare
 * names it. Returns the exit status, or 128 + the signal.
 */
static int oom_spawn(long at, const char *spare, int io, const char *dir, const char *const args[],
                     const char *outf, const char *errf, const char *countf, const char *hitf)
{
    char bin[2048];
    const char *argv[32];
    ptest_argv(argv, bin, sizeof(bin), args);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        char num[32];
        snprintf(num, sizeof(num), "%ld", at);
        if (at > 0)
            setenv("FAILMALLOC_AT", num, 1);
        if (countf)
            setenv("FAILMALLOC_COUNT", countf, 1);
        if (hitf)
            setenv("FAILMALLOC_HIT", hitf, 1);
        if (spare)
            setenv("FAILMALLOC_SPARE", spare, 1);
        if (io)
            setenv("FAILMALLOC_IO", "1", 1);
        if (io == OOM_IO_MAIN)
            setenv("FAILMALLOC_MAIN", "1", 1);
        setenv("LD_PRELOAD", oom_shim(), 1);
        int o = open(outf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || chdir(dir) != 0)
            _exit(126);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        alarm(120); /* a hang ends as SIGALRM, a failure below */
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int st;
    while (waitpid(p, &st, 0) < 0)
        cr_assert_eq(errno, EINTR);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The whole of path, malloc'd (n bytes, NUL-terminated); "" when absent. */
static char *oom_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long l = ftell(f);
        rewind(f);
        buf = malloc(l > 0 ? (size_t)l + 1 : 1);
        cr_assert_not_null(buf);
        len = l > 0 ? fread(buf, 1, (size_t)l, f) : 0;
        fclose(f);
    } else {
        buf = malloc(1);
        cr_assert_not_null(buf);
    }
    buf[len] = '\0';
    *n = len;
    return buf;
}

/* What a refusal must be: a first line of plain text naming the command or one of names. */
static void oom_expect_message(const char *tag, const char *err, const char *const names[])
{
    size_t n = strcspn(err, "\n");
    cr_expect_gt(n, 0, "%s: failed without a message", tag);
    bool plain = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)err[i];
        plain = plain && (c >= 0x20 || c == '\t') && c != 0x7f;
    }
    cr_expect(plain, "%s: a message with stray bytes: %.*s", tag, (int)n, err);
    bool named = strncmp(err, "tidesim", 7) == 0;
    for (size_t i = 0; names[i] && !named; i++)
        named = strstr(err, names[i]) != NULL && strstr(err, names[i]) < err + n;
    cr_expect(named, "%s: a message naming neither the command nor the file: %.*s", tag, (int)n,
              err);
}

/* The entries of dir (not . and ..). */
static size_t oom_entries(const char *dir, char *first, size_t n)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    size_t k = 0;
    struct dirent *e;
    first[0] = '\0';
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && k++ == 0)
            snprintf(first, n, "%s", e->d_name);
    closedir(d);
    return k;
}

/* A temporary file left anywhere under dir (a name with ".tmp." or ending ".partial"), into
 * found; false when there is none. */
static bool oom_leftover(const char *dir, char *found, size_t n)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool any = false;
    while (!any && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[1200];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        size_t len = strlen(e->d_name);
        struct stat st;
        if (strstr(e->d_name, ".tmp.") || (len > 8 && !strcmp(e->d_name + len - 8, ".partial"))) {
            snprintf(found, n, "%s", path);
            any = true;
        } else if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            any = oom_leftover(path, found, n);
        }
    }
    closedir(d);
    return any;
}

struct oom_case {
    const char *args[16]; /* tidesim ARGS, run in the scratch folder */
    int err_rc;           /* its exit status for an error */
    const char *names[4]; /* what a message may name instead of "tidesim" (a file, "--set") */
    const char *writes;   /* the file (under out/) whose report is its output, or NULL: stdout */
    const char *spare;    /* a library whose own allocations are not failed (FAILMALLOC_SPARE) */
    /* Whether a refusal may leave complete files (a sweep keeps its finished points), which
     * the command run again with all its memory must take up and finish with the
     * reference's output; else a refusal leaves nothing under out/. Either way no
     * temporary file is left. */
    bool resumes;
    int io; /* I/O error testing (OOM_IO, OOM_IO_MAIN): the Nth write fails, not allocation */
};

/* A report without its line of wall-clock time ("events processed in 0.48 s wall"), which
 * differs from run to run. */
static void oom_drop_wall(char *text)
{
    char *p = strstr(text, " s wall\n");
    if (!p)
        return;
    char *start = p;
    while (start > text && start[-1] != '\n')
        start--;
    memmove(start, p + 8, strlen(p + 8) + 1);
}

/* One command's sweep: its files, its reference output and what its runs came to. */
struct oom_sweep {
    const char *dir;
    const struct oom_case *c;
    char outf[600], errf[600], hitf[600], odir[600];
    char *ref;
    long runs, refused, same;
};

/* The report of the file the command wrote (c->writes), without its wall-clock line. */
static char *oom_report(struct oom_sweep *w)
{
    const char *report_args[] = {"report", w->c->writes, NULL};
    int rc = oom_spawn(0, NULL, false, w->dir, report_args, w->outf, w->errf, NULL, NULL);
    size_t n;
    char *out = oom_slurp(w->outf, &n);
    cr_expect_eq(rc, 0, "report %s failed (%d)", w->c->writes, rc);
    oom_drop_wall(out);
    return out;
}

/*
 * tidesim with its at-th allocation failing, judged as the top of this file says. Returns
 * whether any process made an at-th allocation (else the run was the reference's, unjudged).
 */
static bool oom_try(struct oom_sweep *w, long at)
{
    const struct oom_case *c = w->c;
    unlink(w->hitf);
    int rc = oom_spawn(at, c->spare, c->io, w->dir, c->args, w->outf, w->errf, NULL, w->hitf);
    bool hit = access(w->hitf, F_OK) == 0;
    char tag[48]; /* "allocation N" or "write N", for messages */
    snprintf(tag, sizeof(tag), "%s %ld", c->io ? "write" : "allocation", at);
    size_t n;
    char *out = oom_slurp(w->outf, &n), *err = oom_slurp(w->errf, &n);
    if (hit) {
        w->runs++;
        cr_expect(rc == 0 || rc == c->err_rc, "%s: exit status %d (%s), not 0 or %d: %s", tag, rc,
                  rc > 128 ? "killed by a signal" : "not the command's", c->err_rc, err);
        if (rc == c->err_rc) {
            w->refused++;
            oom_expect_message(tag, err, c->names);
            char first[1200];
            if (c->writes && !c->resumes)
                cr_expect_eq(oom_entries(w->odir, first, sizeof(first)), 0,
                             "%s: a failed run left %s", tag, first);
            cr_expect_not(oom_leftover(w->odir, first, sizeof(first)),
                          "%s: a failed run left a temporary file, %s", tag, first);
            if (c->resumes) { /* run again with all its memory: it finishes the work */
                int again =
                    oom_spawn(0, NULL, false, w->dir, c->args, w->outf, w->errf, NULL, NULL);
                cr_expect_eq(again, 0, "%s: the command run again failed (%d)", tag, again);
                free(out);
                out = oom_report(w);
                cr_expect_str_eq(out, w->ref, "%s: run again, it finished with another output",
                                 tag);
            }
        } else if (rc == 0) {
            w->same++;
            if (c->writes) { /* the same results, as report reads them */
                free(out);
                out = oom_report(w);
            }
            cr_expect_str_eq(out, w->ref, "%s: succeeded with another output", tag);
        }
    }
    if (c->writes) { /* out/ empty again for the next run */
        ptest_rmdir(w->odir);
        cr_assert_eq(mkdir(w->odir, 0700), 0);
    }
    free(out);
    free(err);
    return hit;
}

/*
 * The sweep of one command, in dir (its inputs; out/ is where `run` writes): the reference
 * run, the last allocation any of its processes makes (its children read files: they make
 * more than the command itself), then N = 1, 1 + S, ... up to it (S: that over budget).
 */
static void oom_sweep(const char *dir, const struct oom_case *c, long budget)
{
    struct oom_sweep w = {.dir = dir, .c = c};
    char countf[600];
    snprintf(w.outf, sizeof(w.outf), "%s/stdout", dir);
    snprintf(w.errf, sizeof(w.errf), "%s/stderr", dir);
    snprintf(countf, sizeof(countf), "%s/count", dir);
    snprintf(w.hitf, sizeof(w.hitf), "%s/hit", dir);
    snprintf(w.odir, sizeof(w.odir), "%s/out", dir);
    cr_assert_eq(mkdir(w.odir, 0700), 0);

    /* The reference: the command with all its memory (the allocator preloaded, failing
     * nothing), and the number of allocations it makes itself; for `run`, the report of the
     * file it wrote. */
    size_t n;
    int rc = oom_spawn(0, c->spare, c->io, dir, c->args, w.outf, w.errf, countf, NULL);
    char *err = oom_slurp(w.errf, &n);
    cr_assert_eq(rc, 0, "the reference run failed (%d): %s", rc, err);
    free(err);
    if (c->writes) {
        w.ref = oom_report(&w);
        ptest_rmdir(w.odir);
        cr_assert_eq(mkdir(w.odir, 0700), 0);
    } else {
        w.ref = oom_slurp(w.outf, &n);
    }
    char *cnt = oom_slurp(countf, &n);
    long own = atol(cnt);
    free(cnt);
    cr_assert_geq(own, 0);
    /* 0: the command's own process makes none (a replicated run's writes are its children's) */
    cr_assert(own == 0 || oom_try(&w, own), "the command's own last allocation was not failed");

    /* The last allocation reached by any process: the command's own when no child makes
     * more (one run tells), else doubling, then halving the gap. */
    long lo = own, hi = own + 1;
    while (oom_try(&w, hi)) {
        lo = hi;
        hi *= 2;
        cr_assert_lt(hi, 1L << 30, "allocations without end");
    }
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (oom_try(&w, mid))
            lo = mid;
        else
            hi = mid;
    }
    const char *all_env = getenv("TIDESIM_OOM_ALL");
    long step = all_env && !strcmp(all_env, "1") ? 1 : (lo + budget - 1) / budget;
    for (long at = 1; at <= lo; at += step)
        cr_expect(oom_try(&w, at), "%s %ld of %ld was not reached", c->io ? "write" : "allocation",
                  at, lo);
    const char *what = c->io ? "write" : "allocation";
    cr_expect_gt(w.refused, 0, "no failed %s was refused: the preloaded library did not act", what);
    cr_log_info("%s: %ld %ss of its own, %ld in all (with its children's); %ld runs "
                "(every %ld-th %s and a search for the last), %ld refused with a "
                "message, %ld succeeded with the reference's output",
                c->args[0], own, what, lo, w.runs, step, what, w.refused, w.same);
    free(w.ref);
}

/* A scratch folder with the shipped scenario, a tiny one, and two results files of it. */
static void oom_setup(char *dir, size_t n, bool results)
{
    if (!oom_shim())
        cr_skip_test("out-of-memory test skipped: no preloadable allocator (TIDESIM_FAILMALLOC: "
                     "make test builds it; not under SANITIZE, whose allocator must be alone)");
    ptest_tmpdir(dir, n, "oom");
    char cmd[5000];
    snprintf(cmd, sizeof(cmd),
             "cp scenarios/default.yaml tests/data/scenarios/tiny.yaml %s/ && mkdir %s/in", dir,
             dir);
    cr_assert_eq(system(cmd), 0);
    if (!results)
        return;
    char bin[2048];
    ptest_bin_abs(bin, sizeof(bin));
    snprintf(cmd, sizeof(cmd),
             "cd %s && %s run tiny.yaml -o in/a.h5 --quiet && %s run tiny.yaml -o in/b.h5 "
             "--quiet --set seed=4",
             dir, bin, bin);
    cr_assert_eq(system(cmd), 0);
}

/* One command's whole test: its scratch folder (with results files when it reads them), its
 * sweep (budget: runs in make test), the folder removed. */
static void oom_test(const struct oom_case *c, bool results, long budget)
{
    char dir[128];
    oom_setup(dir, sizeof(dir), results);
    oom_sweep(dir, c, budget);
    ptest_rmdir(dir);
}

Test(oom, validate_refuses_or_says_the_same, .timeout = 600)
{
    const struct oom_case c = {
        {"validate", "default.yaml", NULL}, 1, {"default.yaml", NULL}, NULL, NULL, false, false};
    oom_test(&c, false, OOM_RUNS);
}

Test(oom, run_refuses_leaving_nothing_or_writes_the_same_results, .timeout = 1800)
{
    const struct oom_case c = {{"run", "tiny.yaml", "-o", "out/r.h5", "--quiet", NULL},
                               1,
                               {"tiny.yaml", "out/r.h5", NULL},
                               "out/r.h5",
                               "libhdf5",
                               false,
                               false};
    oom_test(&c, false, OOM_RUNS);
}

Test(oom, report_refuses_or_reports_the_same, .timeout = 3600)
{
    const struct oom_case c = {
        {"report", "in/a.h5", NULL}, 1, {"in/a.h5", NULL}, NULL, NULL, false, false};
    oom_test(&c, true, OOM_RUNS);
}

Test(oom, check_errs_never_fails_a_gate_it_passes, .timeout = 3600)
{
    const struct oom_case c = {
        {"check", "in/a.h5", "--min-slo", "50%", "--max-p99-ms", "1000", NULL},
        2,
        {"in/a.h5", NULL},
        NULL,
        NULL,
        false,
        false};
    oom_test(&c, true, OOM_RUNS);
}

Test(oom, compare_refuses_or_compares_the_same, .timeout = 3600)
{
    const struct oom_case c = {{"compare", "in/a.h5", "in/b.h5", NULL},
                               1,
                               {"in/a.h5", "in/b.h5", NULL},
                               NULL,
                               NULL,
                               false,
                               false};
    oom_test(&c, true, OOM_RUNS);
}

/* A replicated run: two seeds in two forked children, each writing its own file, then
 * merged by the parent (sim/driver/replicate.c, analysis/merge.c); half an hour of the tiny
 * scenario. A refusal leaves none of the per-seed files either. */
static const struct oom_case replicated = {.args = {"run", "tiny.yaml", "-o", "out/r.h5", "--quiet",
                                                    "--replications", "2", "--set", "duration=30m",
                                                    NULL},
                                           .err_rc = 1,
                                           .names = {"tiny.yaml", "out/r.h5", "--set", NULL},
                                           .writes = "out/r.h5",
                                           .spare = "libhdf5"};

Test(oom, replicated_run_refuses_leaving_nothing_or_writes_the_same_results, .timeout = 1800)
{
    oom_test(&replicated, false, OOM_RUNS / 4);
}

/* The same under every other policy (each its own allocations in the run's events; the
 * tiny scenario's is dedicated, above), for half an hour, fewer allocations each in make
 * test; mig-static on cards cut into a 3g, a 2g and two 1g instances. */
Test(oom, run_under_every_policy_refuses_or_writes_the_same_results, .timeout = 3600)
{
    static const char *const pols[][3] = {
        {"kueue", "exclusive", NULL},
        {"kai", "exclusive", NULL},
        {"tidal", "exclusive", NULL},
        {"adaptive", "exclusive", NULL},
        {"timeslice", "timeslice", NULL},
        {"mps", "mps", NULL},
        {"mig-static", "mig", "cluster.mig.layout=3g.40gb+2g.20gb+1g.10gb*2"}};
    for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
        char name[64], sharing[64];
        snprintf(name, sizeof(name), "policy.name=%s", pols[i][0]);
        snprintf(sharing, sizeof(sharing), "cluster.sharing=%s", pols[i][1]);
        const struct oom_case c = {{"run", "tiny.yaml", "-o", "out/r.h5", "--quiet", "--set", name,
                                    "--set", sharing, "--set", "duration=30m",
                                    pols[i][2] ? "--set" : NULL, pols[i][2], NULL},
                                   1,
                                   {"tiny.yaml", "out/r.h5", "--set", NULL},
                                   "out/r.h5",
                                   "libhdf5",
                                   false,
                                   false};
        cr_log_info("policy %s:", pols[i][0]);
        oom_test(&c, false, OOM_RUNS / 10);
    }
}

/*
 * A sweep of two points (small.yaml under dedicated and kueue), one process at a time, each
 * point a child that counts on from its parent's count: a refusal keeps the points it
 * finished and no temporary file (docs/sweeps.md), and the sweep run again finishes the
 * rest with the reference's index. io: I/O error testing (below), OOM_IO_MAIN: the sweep's
 * own writes only (the index written at the start, then the final one: its data, fsync,
 * rename and the folder's fsync).
 */
static void oom_sweep_two_points(int io, long budget)
{
    char dir[128], cmd[600];
    oom_setup(dir, sizeof(dir), false);
    snprintf(cmd, sizeof(cmd),
             "cp tests/data/scenarios/small.yaml %s/ && printf 'base: small.yaml\\naxes:\\n"
             "  policy.name: [dedicated, kueue]\\n' >%s/s.yaml",
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    const struct oom_case c = {
        .args = {"sweep", "s.yaml", "-o", "out/s", "-j", "1", "--quiet", NULL},
        .err_rc = 1,
        .names = {"s.yaml", "out/s", "small.yaml", NULL},
        .writes = "out/s/index.h5",
        .spare = io ? NULL : "libhdf5",
        .resumes = true,
        .io = io};
    oom_sweep(dir, &c, budget);
    ptest_rmdir(dir);
}

Test(oom, sweep_refuses_and_resumes_or_sweeps_the_same, .timeout = 3600)
{
    oom_sweep_two_points(0, OOM_RUNS / 5);
}

/*
 * I/O error testing (SQLite's testing page, "I/O Error Testing"): the Nth write to a file
 * (write, pwrite, fsync, fdatasync, ftruncate, rename: FAILMALLOC_IO) fails with ENOSPC or
 * EIO, for every N up to the last, with the same demands as above: a run refuses with a
 * message naming the file and leaves nothing, or writes the same results; a sweep keeps only
 * complete points and finishes when run again. libhdf5's writes are failed too (nothing is
 * spared): a full disk reaches them first.
 */
Test(oom, io_run_refuses_leaving_nothing_or_writes_the_same_results, .timeout = 1800)
{
    const struct oom_case c = {{"run", "tiny.yaml", "-o", "out/r.h5", "--quiet", NULL},
                               1,
                               {"tiny.yaml", "out/r.h5", NULL},
                               "out/r.h5",
                               NULL,
                               false,
                               OOM_IO};
    oom_test(&c, false, OOM_RUNS / 10);
}

Test(oom, io_replicated_run_refuses_leaving_nothing_or_writes_the_same_results, .timeout = 1800)
{
    struct oom_case c = replicated;
    c.spare = NULL;
    c.io = OOM_IO;
    oom_test(&c, false, OOM_RUNS / 10);
}

Test(oom, io_sweep_refuses_and_resumes_or_sweeps_the_same, .timeout = 3600)
{
    oom_sweep_two_points(OOM_IO, OOM_RUNS / 10);
}

Test(oom, io_sweep_index_refuses_and_resumes_or_sweeps_the_same, .timeout = 3600)
{
    oom_sweep_two_points(OOM_IO_MAIN, OOM_RUNS / 4);
}
