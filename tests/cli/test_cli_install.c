/*
 * test_cli_install.c — `make install DESTDIR=... PREFIX=/usr` puts a working
 * binary, the plot scripts, one man page per command and the bash completion
 * under DESTDIR, and the installed binary runs the demo (the installed default
 * scenario, cut to one simulated hour, then its report) from another folder.
 */
#include "tests/cli/clitest.h"

#include <libgen.h>

static const char *const commands[] = {"run",  "validate", "report", "compare", "check",
                                       "plot", "mig",      "traces", "sweep",   "plan"};

Test(cli_install, make_install_destdir_gives_a_working_tree, .timeout = 120)
{
    char dir[128], bin[2048], build[2048], cmd[8192], root[1024];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "install");
    cr_assert_not_null(getcwd(root, sizeof(root)));
    /* The binary under test is not rebuilt (-o): BUILD is its folder. */
    const char *b = clitest_bin();
    if (b[0] == '/')
        snprintf(bin, sizeof(bin), "%s", b);
    else
        snprintf(bin, sizeof(bin), "%s/%s", root, b);
    snprintf(build, sizeof(build), "%s", bin);
    snprintf(cmd, sizeof(cmd),
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -o %s "
             "BUILD=%s BIN=%s install DESTDIR=%s/root PREFIX=/usr",
             bin, dirname(build), bin, dir);
    cr_assert_eq(clitest_sh(&r, cmd), 0, "make install failed: %s", r.err);

    char p[1024];
    snprintf(p, sizeof(p), "%s/root/usr/bin/tidesim", dir);
    cr_assert(access(p, X_OK) == 0, "no installed binary %s", p);
    snprintf(p, sizeof(p), "%s/root/usr/share/tidesim/plots/util.gp", dir);
    cr_expect(clitest_exists(p), "no plot scripts");
    snprintf(p, sizeof(p), "%s/root/usr/share/bash-completion/completions/tidesim", dir);
    cr_expect(clitest_exists(p), "no completion");
    snprintf(cmd, sizeof(cmd), "bash -c 'source %s && complete -p tidesim'", p);
    cr_expect_eq(clitest_sh(&r, cmd), 0);
    cr_expect_str_eq(r.out, "complete -F _tidesim tidesim\n");

    /* A man page per command, made from its --help: title, synopsis, its options. */
    for (size_t i = 0; i <= sizeof(commands) / sizeof(commands[0]); i++) {
        const char *c = i < sizeof(commands) / sizeof(commands[0]) ? commands[i] : NULL;
        char page[1024], th[64];
        snprintf(page, sizeof(page), "%s/root/usr/share/man/man1/tidesim%s%s.1", dir, c ? "-" : "",
                 c ? c : "");
        FILE *f = fopen(page, "r");
        cr_assert_not_null(f, "no man page %s", page);
        char text[16384];
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = 0;
        fclose(f);
        snprintf(th, sizeof(th), ".TH TIDESIM%s", c ? "-" : " ");
        cr_expect(!strncmp(text, th, strlen(th)), "%s: %.40s", page, text);
        cr_expect_not_null(strstr(text, "\n.SH SYNOPSIS\n"), "%s", page);
        cr_expect_not_null(strstr(text, "\n.SH DESCRIPTION\n"), "%s", page);
        char syn[64];
        snprintf(syn, sizeof(syn), "\n.SH SYNOPSIS\n.nf\ntidesim %s", c ? c : "<command>");
        cr_expect_not_null(strstr(text, syn), "%s: no synopsis '%s'", page, syn + 17);
        if (c && !strcmp(c, "run")) /* options, with their hyphens escaped */
            cr_expect_not_null(strstr(text, "\\-\\-set KEY.PATH=VALUE"), "%s", page);
    }
    snprintf(cmd, sizeof(cmd),
             "grep -c '^\\.SH \"EXIT STATUS\"' %s/root/usr/share/man/man1/*.1 |"
             " grep -c ':1$'",
             dir);
    clitest_sh(&r, cmd);
    cr_expect_geq(strtol(r.out, NULL, 10), 7, "man pages with an EXIT STATUS section: %s", r.out);

    /* The demo from the installed tree, in an empty folder: run, report (and plot). */
    snprintf(cmd, sizeof(cmd),
             "mkdir %s/work && cd %s/work && R=%s/root/usr && "
             "$R/bin/tidesim run $R/share/tidesim/scenarios/default.yaml --set duration=1h -q "
             "-o demo.h5 && $R/bin/tidesim report demo.h5",
             dir, dir, dir);
    cr_expect_eq(clitest_sh(&r, cmd), 0, "installed demo failed: %s", r.err);
    cr_expect_not_null(strstr(r.out, "default"), "report without the scenario name: %.200s", r.out);
    if (clitest_sh(&r, "command -v gnuplot") == 0) {
        /* The plot scripts are found from the installed binary, not from this checkout. */
        snprintf(cmd, sizeof(cmd),
                 "cd %s/work && env -u TIDESIM_PLOTS %s/root/usr/bin/tidesim plot demo.h5 -o ch",
                 dir, dir);
        cr_expect_eq(clitest_sh(&r, cmd), 0, "installed plot failed: %s", r.err);
    } else {
        cr_log_warn("gnuplot not installed: the installed plot command is not tried");
    }
    clitest_rmdir(dir);
}
