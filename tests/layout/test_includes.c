/*
 * test_includes.c — the include-graph rule of docs/architecture.md, as
 * scripts/check_includes.py checks it in `make lint`: the repository passes,
 * and a tree with one forbidden include (of each kind) fails naming it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A tree of two files under a fresh folder: `from` includes "`inc`". */
static void make_tree(char *root, const char *from, const char *inc)
{
    char cmd[1024];
    snprintf(root, 64, "/tmp/tidesim-incl-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir -p $(dirname %s) $(dirname %s) && printf '#include \"%s\"\\n' > %s "
             "&& : > %s",
             root, from, inc, inc, from, inc);
    cr_assert_eq(sh(cmd), 0);
}

static int check_tree(const char *root, char *out, size_t outlen)
{
    char cmd[512], log[] = "/tmp/tidesim-incl-log-XXXXXX";
    int fd = mkstemp(log);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(cmd, sizeof(cmd), "python3 scripts/check_includes.py %s 2>%s >/dev/null", root, log);
    int rc = sh(cmd);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    size_t n = fread(out, 1, outlen - 1, f);
    out[n] = 0;
    fclose(f);
    unlink(log);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    sh(cmd);
    return rc;
}

Test(layout, repository_passes)
{
    cr_assert_eq(sh("python3 scripts/check_includes.py . >/dev/null"), 0,
                 "the repository breaks its own include rule: run scripts/check_includes.py");
}

struct forbidden {
    const char *from, *inc, *says;
};

Test(layout, forbidden_includes_fail_by_name)
{
    static const struct forbidden cases[] = {
        {"models/gpu.c", "sim/sim.h", "models/ may not include sim/sim.h"},
        {"sim/core/evq.c", "sim/cluster.h", "sim/core/ may not include sim/cluster.h"},
        {"traces/jobs.c", "sim/train.h", "traces/ may not include sim/train.h"},
        {"analysis/report.c", "sim/output.h", "analysis/ may not include sim/output.h"},
        {"sim/serve.c", "sim/policy/kueue_admit.h", "sim/ may include only sim/policy/policy.h"},
        {"sim/sim.c", "sim/driver/replicate.h", "sim/ may not include sim/driver/replicate.h"},
        {"sim/policy/tidal.c", "sim/policy/kai_fairshare.h", "policy \"tidal\" may not include"},
        {"sim/sim.c", "sim/output.h", "the run builder may not include the results writer"},
        {"sim/train.c", "train.h", "name project headers from the root"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char root[64], out[2048];
        make_tree(root, cases[i].from, cases[i].inc);
        int rc = check_tree(root, out, sizeof(out));
        cr_expect_eq(rc, 1, "%s -> %s passed", cases[i].from, cases[i].inc);
        cr_expect(strstr(out, cases[i].says) != NULL, "%s -> %s: got '%s'", cases[i].from,
                  cases[i].inc, out);
    }
}

Test(layout, allowed_includes_pass)
{
    static const struct forbidden cases[] = {
        {"traces/jobs.c", "sim/core/rng.h", ""},
        {"sim/policy/kueue.c", "sim/policy/kueue_admit.h", ""},
        {"sim/policy/tidal.c", "sim/policy/common.h", ""},
        {"sim/cli/cmd_plot.c", "analysis/plot.h", ""},
        {"sim/output.c", "analysis/h5io.h", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char root[64], out[2048];
        make_tree(root, cases[i].from, cases[i].inc);
        cr_expect_eq(check_tree(root, out, sizeof(out)), 0, "%s -> %s refused: %s", cases[i].from,
                     cases[i].inc, out);
    }
}

Test(layout, include_cycle_fails)
{
    char root[64], out[2048];
    make_tree(root, "sim/a.h", "sim/b.h");
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "printf '#include \"sim/a.h\"\\n' > %s/sim/b.h", root);
    cr_assert_eq(sh(cmd), 0);
    cr_expect_eq(check_tree(root, out, sizeof(out)), 1);
    cr_expect(strstr(out, "include cycle") != NULL, "got '%s'", out);
}
