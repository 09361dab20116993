/*
 * clitest.h — run a shell command line for the CLI convention tests and keep
 * its exit status, stdout and stderr (whole, up to the buffer sizes).
 */
#ifndef TIDESIM_CLITEST_H
#define TIDESIM_CLITEST_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct clirun {
    int rc;          /* exit status, -1 when killed */
    char out[65536]; /* stdout */
    char err[4096];  /* stderr, last newline removed */
};

static inline const char *clitest_bin(void)
{
    const char *b = getenv("TIDESIM_BIN");
    return b ? b : "build/tidesim";
}

static inline void clitest_slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = 0;
    if (f)
        fclose(f);
    unlink(path);
}

/* Runs cmd through sh (stdout and stderr captured) into *r; returns r->rc. */
static inline int clitest_sh(struct clirun *r, const char *cmd)
{
    char of[] = "/tmp/tidesim-cli-out-XXXXXX", ef[] = "/tmp/tidesim-cli-err-XXXXXX";
    int fo = mkstemp(of), fe = mkstemp(ef);
    cr_assert(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    size_t n = strlen(cmd) + 128;
    char *full = malloc(n);
    cr_assert_not_null(full);
    snprintf(full, n, "(%s\n) >%s 2>%s", cmd, of, ef); /* newline: cmd may end in a here-doc */
    int st = system(full);
    free(full);
    r->rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    clitest_slurp(of, r->out, sizeof(r->out));
    clitest_slurp(ef, r->err, sizeof(r->err));
    size_t k = strlen(r->err);
    if (k && r->err[k - 1] == '\n')
        r->err[k - 1] = 0;
    return r->rc;
}

/* Same with the tidesim binary in front: clitest_tidesim(r, "run %s -o %s", a, b). */
static inline int clitest_tidesim(struct clirun *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline int clitest_tidesim(struct clirun *r, const char *fmt, ...)
{
    char args[4096], cmd[4608];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "%s %s", clitest_bin(), args);
    return clitest_sh(r, cmd);
}

static inline bool clitest_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static inline void clitest_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static inline void clitest_tmpdir(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/tidesim-%s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(dir));
}

static inline void clitest_rmdir(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

#endif
