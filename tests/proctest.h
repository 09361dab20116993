/*
 * proctest.h — helpers of the tests that treat tidesim as a process: start the
 * binary without a shell (so any path goes through untouched), capture its
 * stderr, wait for it with a safety limit, look for the files it leaves.
 *
 * The waits below are bounds on a hang, not measurements: a test asserts
 * what happened (an exit status, a message, a file), never how long it took.
 */
#ifndef TIDESIM_PROCTEST_H
#define TIDESIM_PROCTEST_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline const char *ptest_bin(void)
{
    const char *b = getenv("TIDESIM_BIN");
    return b ? b : "build/tidesim";
}

/* The tidesim binary as an absolute path (children may run in another folder). */
static inline void ptest_bin_abs(char *out, size_t n)
{
    const char *b = ptest_bin();
    if (b[0] == '/') {
        snprintf(out, n, "%s", b);
        return;
    }
    char cwd[1024];
    cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
    snprintf(out, n, "%s/%s", cwd, b);
}

/* A fresh scratch folder under /tmp (dir >= 64 bytes). */
static inline void ptest_tmpdir(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/tidesim-%s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(dir));
}

static inline void ptest_rmdir(const char *dir)
{
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        execlp("rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
}

static inline void ptest_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/*
 * Start tidesim with args (NULL-terminated, without the binary) in folder cwd
 * (NULL: this one), stdout to /dev/null and stderr to errfile. Returns its pid.
 */
/* argv for `tidesim ARGS`: the binary's absolute path (written to bin), then args (at most
 * 30, NULL-terminated), then NULL. */
static inline void ptest_argv(const char *argv[32], char *bin, size_t binlen,
                              const char *const args[])
{
    ptest_bin_abs(bin, binlen);
    argv[0] = bin;
    size_t n = 1;
    while (args[n - 1] && n < 31) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
}

static inline pid_t ptest_spawn(const char *cwd, const char *errfile, const char *const args[])
{
    char bin[2048];
    const char *argv[32];
    ptest_argv(argv, bin, sizeof(bin), args);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        setpgid(0, 0); /* its own process group: kill(-pid) ends it and its workers */
        int e = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int o = open("/dev/null", O_WRONLY);
        if (e < 0 || o < 0 || (cwd && chdir(cwd) != 0))
            _exit(126);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return p;
}

static inline double ptest_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void ptest_nap(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000}; /* 10 ms */
    nanosleep(&ts, NULL);
}

/* Whether pid has ended (reaped; *rc as ptest_wait returns it). Never blocks. */
static inline bool ptest_ended(pid_t pid, int *rc)
{
    int st;
    if (waitpid(pid, &st, WNOHANG) != pid)
        return false;
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return true;
}

/*
 * Wait for pid; after `limit` seconds it is killed (a hang) and -1 returned.
 * Returns the exit code, or 128 + the signal that ended it.
 */
static inline int ptest_wait(pid_t pid, double limit)
{
    double end = ptest_now() + limit;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -2;
        if (ptest_now() > end) {
            kill(-pid, SIGKILL); /* with whatever it started */
            waitpid(pid, &st, 0);
            return -1;
        }
        ptest_nap();
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run tidesim to its end (at most `limit` s); stderr's first line in err. Returns as ptest_wait. */
static inline int ptest_run(const char *cwd, const char *const args[], char *err, size_t errlen,
                            double limit)
{
    char ef[] = "/tmp/tidesim-ptest-err-XXXXXX";
    int fd = mkstemp(ef);
    cr_assert_geq(fd, 0);
    close(fd);
    int rc = ptest_wait(ptest_spawn(cwd, ef, args), limit);
    FILE *f = fopen(ef, "r");
    err[0] = 0;
    if (f) {
        if (!fgets(err, (int)errlen, f))
            err[0] = 0;
        fclose(f);
    }
    unlink(ef);
    size_t n = strlen(err);
    if (n && err[n - 1] == '\n')
        err[n - 1] = 0;
    return rc;
}

/* Names in dir that start with prefix, in out[0..max) (malloc'd); returns how many. */
static inline size_t ptest_list(const char *dir, const char *prefix, char **out, size_t max)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot list %s", dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (n < max)
            out[n] = strdup(e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static inline void ptest_free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

/* Wait (at most `limit` s) until dir holds at least `count` names starting with prefix. */
static inline bool ptest_await_files(const char *dir, const char *prefix, size_t count,
                                     double limit)
{
    double end = ptest_now() + limit;
    char *v[16];
    for (;;) {
        size_t n = ptest_list(dir, prefix, v, 16);
        ptest_free_list(v, n < 16 ? n : 16);
        if (n >= count)
            return true;
        if (ptest_now() > end)
            return false;
        ptest_nap();
    }
}

#endif
