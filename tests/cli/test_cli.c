/*
 * test_cli.c — the tidesim command as a user runs it: bad input gets one clear
 * message naming file, line, column and key, a non-zero exit and no results
 * file; good input gives byte-identical datasets for the same seed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *bin(void)
{
    const char *b = getenv("TIDESIM_BIN");
    return b ? b : "build/tidesim";
}

/* Run a shell command; return its exit status, stderr in err (first line). */
static int run(const char *cmd, char *err, size_t errlen)
{
    char full[1024], errfile[] = "/tmp/tidesim-test-err-XXXXXX";
    int fd = mkstemp(errfile);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(full, sizeof(full), "%s 2>%s >/dev/null", cmd, errfile);
    int st = system(full);
    FILE *f = fopen(errfile, "r");
    err[0] = 0;
    if (f) {
        if (!fgets(err, (int)errlen, f))
            err[0] = 0;
        fclose(f);
    }
    unlink(errfile);
    size_t n = strlen(err);
    if (n && err[n - 1] == '\n')
        err[n - 1] = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

struct bad_case {
    const char *file;
    const char *message;
};

Test(cli, bad_scenarios_are_named_and_leave_no_file)
{
    static const struct bad_case cases[] = {
        {"tests/data/scenarios/bad_type.yaml",
         "tests/data/scenarios/bad_type.yaml:5:18: 'gpus_per_node': expected a positive "
         "integer, got 'eight'"},
        {"tests/data/scenarios/unknown_key.yaml",
         "tests/data/scenarios/unknown_key.yaml:5:3: 'gpus_per_nod': unknown key (expected one "
         "of: gpu, nodes, gpus_per_node, sharing, mig, timeSlicing, mps, faults, spec, pools, "
         "sharing_from)"},
        {"tests/data/scenarios/negative_duration.yaml",
         "tests/data/scenarios/negative_duration.yaml:2:11: 'duration': expected a duration "
         "with a unit (e.g. 250ms, 90s, 30m, 2h, 2d), got '-2h'"},
        {"tests/data/scenarios/missing.yaml",
         "tests/data/scenarios/missing.yaml: cannot open: No such file or directory"},
    };
    char cmd[512], err[1024];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *out = "/tmp/tidesim-test-bad.h5";
        unlink(out);
        snprintf(cmd, sizeof(cmd), "%s run %s -o %s", bin(), cases[i].file, out);
        int rc = run(cmd, err, sizeof(err));
        cr_expect_eq(rc, 1, "%s: exit %d", cases[i].file, rc);
        cr_expect_str_eq(err, cases[i].message);
        cr_expect(!exists(out), "%s left a results file", cases[i].file);
        snprintf(cmd, sizeof(cmd), "%s validate %s", bin(), cases[i].file);
        cr_expect_eq(run(cmd, err, sizeof(err)), 1);
        cr_expect_str_eq(err, cases[i].message);
    }
}

Test(cli, usage_errors_exit_2)
{
    char cmd[512], err[1024];
    snprintf(cmd, sizeof(cmd), "%s run", bin());
    cr_expect_eq(run(cmd, err, sizeof(err)), 2);
    snprintf(cmd, sizeof(cmd), "%s run tests/data/scenarios/tiny.yaml --seed x", bin());
    cr_expect_eq(run(cmd, err, sizeof(err)), 2);
    snprintf(cmd, sizeof(cmd), "%s frobnicate", bin());
    cr_expect_eq(run(cmd, err, sizeof(err)), 2);
    cr_expect_str_eq(err, "tidesim: unknown command 'frobnicate'");
    snprintf(cmd, sizeof(cmd), "%s run --help", bin());
    cr_expect_eq(run(cmd, err, sizeof(err)), 0);
}

Test(cli, same_seed_identical_datasets_other_seed_differs)
{
    char cmd[1024], err[1024];
    const char *a = "/tmp/tidesim-test-a.h5", *b = "/tmp/tidesim-test-b.h5",
               *c = "/tmp/tidesim-test-c.h5";
    snprintf(cmd, sizeof(cmd), "%s run tests/data/scenarios/tiny.yaml -o %s --quiet", bin(), a);
    cr_assert_eq(run(cmd, err, sizeof(err)), 0, "%s", err);
    snprintf(cmd, sizeof(cmd), "%s run tests/data/scenarios/tiny.yaml -o %s --quiet", bin(), b);
    cr_assert_eq(run(cmd, err, sizeof(err)), 0, "%s", err);
    snprintf(cmd, sizeof(cmd), "%s run tests/data/scenarios/tiny.yaml -o %s --seed 4 --quiet",
             bin(), c);
    cr_assert_eq(run(cmd, err, sizeof(err)), 0, "%s", err);
    /* /meta holds wall-clock provenance; every dataset and attribute elsewhere must match. */
    snprintf(cmd, sizeof(cmd), "h5diff --exclude-path /meta %s %s", a, b);
    cr_expect_eq(run(cmd, err, sizeof(err)), 0, "same seed: h5diff found differences");
    snprintf(cmd, sizeof(cmd), "h5diff -q --exclude-path /meta %s %s", a, c);
    cr_expect_eq(run(cmd, err, sizeof(err)), 1, "another seed: h5diff found no difference");
    snprintf(cmd, sizeof(cmd), "%s report %s", bin(), a);
    cr_expect_eq(run(cmd, err, sizeof(err)), 0);
    unlink(a);
    unlink(b);
    unlink(c);
}

Test(cli, interrupted_run_leaves_a_partial_file)
{
    char cmd[1024], err[1024];
    const char *out = "/tmp/tidesim-test-int.h5", *partial = "/tmp/tidesim-test-int.h5.partial";
    unlink(out);
    unlink(partial);
    /* A long scenario, interrupted by SIGINT after a moment. */
    snprintf(cmd, sizeof(cmd),
             "sh -c '%s run scenarios/default.yaml -o %s --quiet & p=$!; sleep 1; kill -INT $p; "
             "wait $p'",
             bin(), out);
    int rc = run(cmd, err, sizeof(err));
    cr_expect_eq(rc, 130, "exit %d: %s", rc, err);
    cr_expect(!exists(out), "an interrupted run left a file that looks complete");
    cr_expect(exists(partial));
    cr_expect(strstr(err, "interrupted at simulated") != NULL, "%s", err);
    snprintf(cmd, sizeof(cmd), "h5dump -a /meta/complete %s | grep -q '(0): 0'", partial);
    cr_expect_eq(run(cmd, err, sizeof(err)), 0, "/meta/complete is not 0");
    unlink(partial);
}
