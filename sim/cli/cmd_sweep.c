/*
 * cmd_sweep.c — `tidesim sweep` (sim/cli/cmd_sweep.h): a sweep file's
 * points checked, run and indexed through sim/driver/sweep.h, or an index
 * printed (--report).
 *
 * Linked into the binary only, not the library, as cmd_run.c is: it holds
 * the interrupt flag a signal handler sets.
 */
#include "sim/cli/cmd_sweep.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5io.h"
#include "analysis/sweepidx.h"
#include "sim/cli/args.h"
#include "sim/cli/cmd_mpi.h"
#include "sim/cli/cmd_run.h"
#include "sim/driver/sweep.h"

static const char sweep_usage[] =
    "usage: tidesim sweep SWEEP.yaml [-o DIR] [-j N] [--force] [--quiet]\n"
    "       tidesim sweep --report DIR [--format text|json]\n"
    "\n"
    "Runs a base scenario at every point of a sweep file's axes, each point the base\n"
    "plus --set overrides of its axis values, and writes DIR/point-NNNN.h5 per point\n"
    "(a replicated file with replications: R > 1) and DIR/index.h5: the table of\n"
    "points × axis values × headline metrics (mean and 95% half-width), external\n"
    "links to the point files and the hash of the sweep file, base scenario and\n"
    "binary. Every point is checked before any runs. A sweep file (docs/sweeps.md):\n"
    "\n"
    "  base: ../scenarios/default.yaml      # against the sweep file's folder\n"
    "  mode: grid                           # or zip (i-th value with i-th)\n"
    "  replications: 3                      # seeds per point (default 1)\n"
    "  axes:\n"
    "    cluster.nodes: {from: 4, to: 16, step: 4}\n"
    "    policy.name: [kueue, kai]\n"
    "\n"
    "Run again, it runs only the points without a complete results file; a folder\n"
    "made by another sweep file, base scenario or binary is refused unless --force.\n"
    "Interrupted (Ctrl-C), completed points stay and the index says complete = 0.\n"
    "\n"
    "options (--opt VALUE and --opt=VALUE are the same):\n"
    "  -o, --output DIR    the folder (default: the sweep file's name without .yaml,\n"
    "                      in the working folder, with .sweep appended)\n"
    "  -j, --jobs N        processes at a time (default: the online cores)\n"
    "      --force         run every point again in a folder of another sweep\n"
    "      --report DIR    print DIR/index.h5's point table (also: tidesim report\n"
    "                      DIR/index.h5)\n"
    "  -f, --format F      with --report: text (default) or json\n"
    "  -q, --quiet         no progress (on a terminal: points done/total, running,\n"
    "                      ETA; otherwise one line per finished point)\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 every point complete, 1 error (a bad point: nothing ran), 2 usage\n"
    "error, 130 interrupted\n";

static int report_dir(const char *dir, bool json)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);
    if (n > 3 && !strcmp(dir + n - 3, ".h5"))
        snprintf(path, sizeof(path), "%s", dir);
    else
        snprintf(path, sizeof(path), "%s/index.h5", dir);
    char err[PATH_MAX + 600];
    if (sweepidx_report(stdout, path, json, NULL, err, sizeof(err))) {
        fprintf(stderr, "tidesim sweep: %s\n", err);
        return 1;
    }
    return 0;
}

static int sweep_main(int argc, char **argv, const struct cli_mpi *mpi)
{
    bool worker = mpi && mpi->worker;
    const char *file = NULL, *dir = NULL, *report = NULL;
    unsigned long jobs = 0;
    bool force = false, quiet = false, json = false;
    h5io_quiet();
    volatile sig_atomic_t *interrupted = cli_catch_signals();

    enum { OPT_FORCE = 256, OPT_REPORT };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"jobs", required_argument, NULL, 'j'},
        {"force", no_argument, NULL, OPT_FORCE},  {"report", required_argument, NULL, OPT_REPORT},
        {"format", required_argument, NULL, 'f'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c;
    while ((c = getopt_long(argc, argv, ":ho:j:f:q", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h':
            fputs(sweep_usage, stdout);
            return 0;
        case 'o':
            if (!*optarg) {
                fprintf(stderr, "tidesim sweep: -o needs a folder name\n");
                return 2;
            }
            dir = optarg;
            break;
        case 'j':
            errno = 0;
            jobs = strtoul(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || jobs < 1 || jobs > 4096) {
                fprintf(stderr, "tidesim sweep: --jobs needs an integer 1..4096\n");
                return 2;
            }
            break;
        case OPT_FORCE:
            force = true;
            break;
        case OPT_REPORT:
            report = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                fprintf(stderr, "tidesim sweep: --format needs text or json\n");
                return 2;
            }
            json = !strcmp(optarg, "json");
            break;
        case 'q':
            quiet = true;
            break;
        default:
            return cli_opt_error(stderr, "sweep", c, argv);
        }
    }
    if (report) {
        if (optind < argc) {
            fprintf(stderr, "tidesim sweep: --report takes no sweep file\n");
            return 2;
        }
        return report_dir(report, json);
    }
    if (optind < argc)
        file = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "tidesim sweep: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!file) {
        fprintf(stderr, "usage: tidesim sweep SWEEP.yaml [-o DIR] [-j N] [--force] [--quiet]\n");
        return 2;
    }
    char defdir[PATH_MAX];
    if (!dir) {
        const char *b = strrchr(file, '/');
        b = b ? b + 1 : file;
        size_t n = strlen(b);
        if (n > 5 && !strcmp(b + n - 5, ".yaml"))
            n -= 5;
        else if (n > 4 && !strcmp(b + n - 4, ".yml"))
            n -= 4;
        snprintf(defdir, sizeof(defdir), "%.*s.sweep", (int)n, b);
        dir = defdir;
    }
    struct sweep sw;
    struct conf_err err;
    if (sweep_load(&sw, file, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int status = 1;
    if (sweep_validate(&sw, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        fprintf(stderr, "tidesim sweep: no point run\n");
        goto out;
    }
    if (worker) {
        struct sweep_task_ctx ctx = {&sw, dir, interrupted};
        status = mpi->serve(sweep_task, &ctx);
        goto out;
    }
    if (*interrupted) {
        status = 130;
        goto out;
    }
    struct sweep_run_opts o = {.dir = dir,
                               .jobs = (unsigned)jobs,
                               .force = force,
                               .quiet = quiet,
                               .interrupted = interrupted,
                               .d = mpi ? mpi->d : NULL};
    status = sweep_run(&sw, &o);
out:
    sweep_release(&sw);
    return status;
}

int cli_sweep(int argc, char **argv)
{
    return sweep_main(argc, argv, NULL);
}

int cli_sweep_mpi(int argc, char **argv, const struct cli_mpi *mpi)
{
    return sweep_main(argc, argv, mpi);
}
