/*
 * test_read_limits.c — what a command reading results files may spend as a whole
 * (issue 14, finding 6): libhdf5 can loop or allocate inside a damaged file below the
 * checks of analysis/h5read.c, so report/compare/check/plot run under a CPU-time and an
 * address-space limit (h5_rd_limit_process). Passing the CPU limit ends the process with
 * one message and the command's exit code for an unreadable file; the limits never raise
 * one already lower. Each case runs in a child process (the limits are process-wide).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/h5read.h"

/* Spin for up to `secs` seconds of wall time (much more than the CPU limit given). */
static void spin(int secs)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 1000000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < secs);
}

/* Run child() in a process whose stderr is captured into msg; returns its wait status. */
static int run_child(void (*child)(void), char *msg, size_t n)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDERR_FILENO);
        child();
        _exit(99);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < n && (r = read(fd[0], msg + len, n - 1 - len)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    msg[len] = '\0';
    close(fd[0]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

static void busy_check(void)
{
    if (h5_rd_limit_process(1, 0, 2) != 0)
        _exit(98);
    spin(60); /* a libhdf5 loop stands in here: 1 s of CPU time is allowed */
}

/* The handler as the kernel would call it, for the exit code of report, compare and plot. */
static void signalled_report(void)
{
    if (h5_rd_limit_process(1, 0, 1) != 0)
        _exit(98);
    raise(SIGXCPU);
}

static const char head[] = "tidesim: stopped: reading results files took more CPU time than "
                           "allowed (";
static const char tail[] = " s; docs/security.md); the file may be damaged or hostile\n";

/* The message's figure (seconds of CPU time used), or -1 when msg is not the message. */
static long message_seconds(const char *msg)
{
    size_t h = strlen(head), t = strlen(tail), n = strlen(msg);
    if (n <= h + t || strncmp(msg, head, h) || strcmp(msg + n - t, tail))
        return -1;
    char *end;
    long v = strtol(msg + h, &end, 10);
    return end == msg + n - t ? v : -1;
}

Test(read_limits, cpu_limit_stops_the_command_with_its_exit_code)
{
    char msg[512];
    int st = run_child(busy_check, msg, sizeof(msg));
    cr_assert(WIFEXITED(st), "child not exited normally (status %d): %s", st, msg);
    cr_expect_eq(WEXITSTATUS(st), 2, "check's code for an unreadable file; stderr: %s", msg);
    /* The kernel signals once the whole second allowed is used; the message names it. */
    cr_expect_eq(message_seconds(msg), 1, "%s", msg);
    st = run_child(signalled_report, msg, sizeof(msg));
    cr_assert(WIFEXITED(st), "status %d: %s", st, msg);
    cr_expect_eq(WEXITSTATUS(st), 1, "report, compare and plot exit 1; stderr: %s", msg);
    cr_expect_geq(message_seconds(msg), 0, "%s", msg);
}

static void limits_lowered_not_raised(void)
{
    struct rlimit rl = {.rlim_cur = 50, .rlim_max = RLIM_INFINITY};
    if (setrlimit(RLIMIT_CPU, &rl))
        _exit(90);
    /* A lower limit already set is kept; a higher allowance does not raise it. */
    if (h5_rd_limit_process(1000, H5READ_MAX_AS, 1) != 0)
        _exit(91);
    if (getrlimit(RLIMIT_CPU, &rl) || rl.rlim_cur != 50)
        _exit(92);
    if (getrlimit(RLIMIT_AS, &rl))
        _exit(93);
#if defined(__SANITIZE_ADDRESS__)
    _exit(rl.rlim_cur == RLIM_INFINITY ? 0 : 94); /* ASan's shadow needs the address space */
#else
    if (rl.rlim_cur != (rlim_t)H5READ_MAX_AS)
        _exit(95);
    /* Then the CPU allowance from no limit: whole seconds used (none yet) + 60. */
    rl = (struct rlimit){.rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY};
    if (setrlimit(RLIMIT_CPU, &rl) || h5_rd_limit_process(60, 0, 1) || getrlimit(RLIMIT_CPU, &rl))
        _exit(96);
    _exit(rl.rlim_cur == 60 ? 0 : 97);
#endif
}

Test(read_limits, limits_are_set_and_never_raised)
{
    char msg[256];
    int st = run_child(limits_lowered_not_raised, msg, sizeof(msg));
    cr_assert(WIFEXITED(st), "status %d", st);
    cr_expect_eq(WEXITSTATUS(st), 0, "step %d failed (see the child's _exit codes)",
                 WEXITSTATUS(st));
}

/* Probes standing in for libhdf5 on a damaged file. */
static int probe_crash(void *arg, char *why, size_t n)
{
    (void)arg;
    (void)why;
    (void)n;
    volatile int *p = NULL;
    return *p; /* SIGSEGV in the child */
}

static int probe_hang(void *arg, char *why, size_t n)
{
    (void)arg;
    (void)why;
    (void)n;
    for (;;)
        pause();
    return 0;
}

static int probe_refuse(void *arg, char *why, size_t n)
{
    snprintf(why, n, "%s: refused for a reason", (const char *)arg);
    return -EINVAL;
}

static int probe_ok(void *arg, char *why, size_t n)
{
    (void)arg;
    (void)why;
    (void)n;
    return 0;
}

Test(read_limits, preflight_contains_crashes_and_hangs)
{
    char why[512];
    cr_expect_eq(h5_rd_preflight(probe_ok, NULL, 5000, why, sizeof(why)), 0);
    cr_expect_eq(h5_rd_preflight(probe_refuse, "f.h5", 5000, why, sizeof(why)), -EINVAL);
    cr_expect_str_eq(why, "f.h5: refused for a reason");
    /* SIGSEGV; SIGABRT under AddressSanitizer, which catches the fault and aborts. */
    cr_expect_eq(h5_rd_preflight(probe_crash, NULL, 5000, why, sizeof(why)), -ECANCELED);
    int sig = 0;
    cr_expect_eq(sscanf(why, "the HDF5 library crashed reading it (signal %d)", &sig), 1, "%s",
                 why);
    cr_expect(sig == SIGSEGV || sig == SIGABRT, "signal %d", sig);
    cr_expect(strstr(why, "); the file is damaged or hostile"), "%s", why);
    cr_expect_eq(h5_rd_preflight(probe_hang, NULL, 1000, why, sizeof(why)), -ETIMEDOUT);
    cr_expect_str_eq(why, "reading it took more than 1 s (the limit; docs/security.md)");
    cr_expect_eq(h5_rd_preflight(probe_hang, NULL, 150, why, sizeof(why)), -ETIMEDOUT);
    cr_expect_str_eq(why, "reading it took more than 150 ms (the limit; docs/security.md)");
}

/*
 * The first reproducer the results fuzzer found: libhdf5 1.10 freed a wild pointer while the
 * reader looked link names up inside a walk of a damaged dense link table. Each command must
 * handle it without dying: refuse it with the file's name and the crash (the child process's
 * verdict), or, since the reader opens what a walk meets by the address the walk gives
 * (h5_rd_dset_open) rather than looking each name up again, read it as the file it still is
 * (libhdf5 no longer crashes on it, in the child or here). Never a signal, never a crash.
 */
#define CRASHER "tests/data/fuzz/results/crash-44d8fb0d6c4db8b6a7a4f2351f7b3ce86a08e6f5"

static int run_tidesim(const char *const *args, char *out, size_t n)
{
    const char *bin = getenv("TIDESIM_BIN");
    cr_assert_not_null(bin, "TIDESIM_BIN is not set (make test sets it)");
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDERR_FILENO);
        dup2(fd[1], STDOUT_FILENO);
        char *argv[8];
        size_t i = 0;
        argv[i++] = (char *)bin;
        for (; args[i - 1] && i < 7; i++)
            argv[i] = (char *)args[i - 1];
        argv[i] = NULL;
        execv(bin, argv);
        _exit(127);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < n && (r = read(fd[0], out + len, n - 1 - len)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    out[len] = '\0';
    close(fd[0]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "tidesim died (status %d): %s", st, out);
    return WEXITSTATUS(st);
}

/*
 * Refused for the crash (exit `refused`, the crash named), refused for what libhdf5 failed to
 * read in it (exit `refused`, "FILE: /rep0000/gpus: cannot list its members (the HDF5 library
 * failed)": never a part of the file skipped), or read (exit below `refused`).
 */
static void crash_refused_or_read(const char *out, int rc, int refused)
{
    /* The signal is SIGSEGV in the normal build, SIGBUS under AddressSanitizer. */
    const char *want = CRASHER ": the HDF5 library crashed reading it (signal ";
    if (strstr(out, want) || rc == refused)
        cr_expect(rc == refused && strstr(out, CRASHER ": "), "exit %d: %s", rc, out);
    else
        cr_expect(rc >= 0 && rc < refused, "exit %d: %s", rc, out);
}

Test(read_limits, commands_survive_a_file_libhdf5_crashed_on)
{
    static char out[1 << 16];
    const char *report[] = {"report", CRASHER, NULL};
    crash_refused_or_read(out, run_tidesim(report, out, sizeof(out)), 1);
    const char *check[] = {"check", CRASHER, "--min-util", "0.5", NULL};
    crash_refused_or_read(out, run_tidesim(check, out, sizeof(out)), 2);
    const char *compare[] = {"compare", CRASHER, CRASHER, NULL};
    crash_refused_or_read(out, run_tidesim(compare, out, sizeof(out)), 1);
}
