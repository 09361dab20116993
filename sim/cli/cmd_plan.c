/*
 * cmd_plan.c — `tidesim plan` (sim/cli/cmd_plan.h): a plan file's probes
 * checked, the search run through sim/driver/plan.h, or a plan's index
 * printed (--report).
 *
 * Linked into the binary only, not the library, as cmd_run.c and
 * cmd_sweep.c are: it uses the interrupt flag of cmd_run.c's signal handler.
 */
#include "sim/cli/cmd_plan.h"

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
#include "sim/driver/plan.h"

static const char plan_usage[] =
    "usage: tidesim plan PLAN.yaml [-o DIR] [-j N] [--objective cost|gpus] [--force]\n"
    "                    [--quiet]\n"
    "       tidesim plan --report DIR\n"
    "\n"
    "The capacity question answered: for each choice (a policy, a sharing mode, any\n"
    "scenario keys), the smallest cluster size that passes every gate with 95%\n"
    "confidence, and the cheapest choice. A plan file (docs/plan.md):\n"
    "\n"
    "  base: ../scenarios/default.yaml        # against the plan file's folder\n"
    "  size: {key: cluster.nodes, from: 2, to: 16}   # or values: [2, 4, 8]\n"
    "  choices: {policy.name: [kueue, tidal]} # optional (mode: zip pairs them)\n"
    "  set: {duration: 3d}                    # optional: fixed overrides of every probe\n"
    "  gates:                                 # tidesim check's gates, no dashes\n"
    "    min-slo: 99%\n"
    "    max-p99-ms: 250\n"
    "    min-training-gpu-h-per-day: 500\n"
    "  replications: {min: 3, max: 10}       # seeds a probe: first, at most\n"
    "  objective: cost                        # or gpus\n"
    "  search: bisect                         # or scan (every size)\n"
    "\n"
    "Each probe (a choice at a size) runs `min` seeds; each gate is judged on its 95%\n"
    "interval (the gate code of tidesim check --confident): it holds when the whole\n"
    "interval is on the passing side; a gate whose interval straddles its bound gets\n"
    "more seeds, up to `max`, and still unclear counts as not passing. Sizes are\n"
    "searched by bisection where the gates are monotone in size; a verdict that\n"
    "contradicts monotonicity switches that choice to a scan, and the table says so.\n"
    "The table gives per choice: the smallest passing size, its GPUs, its cost per 30\n"
    "days, the binding gate and its margin, what fails one probed size below, and the\n"
    "runs it took. DIR/index.h5 holds the whole search (tidesim report, compare,\n"
    "check and plot read it); DIR/probes/ its runs, found again when the plan is run\n"
    "again (another gate, more choices: only new probes run).\n"
    "\n"
    "options (--opt VALUE and --opt=VALUE are the same):\n"
    "  -o, --output DIR    the folder (default: the plan file's name without .yaml,\n"
    "                      in the working folder, with .plan appended)\n"
    "  -j, --jobs N        runs at a time (default: the online cores)\n"
    "      --objective O   cost (default) or gpus: which passing choice is the answer\n"
    "      --force         use a folder made for another base scenario or binary\n"
    "      --report DIR    print DIR/index.h5's answer table again\n"
    "  -q, --quiet         no progress lines (one per probe settled)\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 searched (an answer or 'none' for every choice), 1 error (a bad\n"
    "probe: nothing ran), 2 usage error, 130 interrupted (runs kept: run again)\n";

static int report_dir(const char *dir)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);
    if (n > 3 && !strcmp(dir + n - 3, ".h5"))
        snprintf(path, sizeof(path), "%s", dir);
    else
        snprintf(path, sizeof(path), "%s/index.h5", dir);
    char err[PATH_MAX + 600];
    if (planidx_print(stdout, path, NULL, err, sizeof(err))) {
        fprintf(stderr, "tidesim plan: %s\n", err);
        return 1;
    }
    return 0;
}

static int plan_main(int argc, char **argv, const struct cli_mpi *mpi)
{
    const char *file = NULL, *dir = NULL, *report = NULL;
    unsigned long jobs = 0;
    int objective = -1;
    bool force = false, quiet = false;
    bool worker = mpi && mpi->worker;
    FILE *msg = worker ? NULL : stderr;
    h5io_quiet();
    volatile sig_atomic_t *interrupted = cli_catch_signals();
    enum { OPT_FORCE = 256, OPT_REPORT, OPT_OBJECTIVE };
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"objective", required_argument, NULL, OPT_OBJECTIVE},
                                             {"force", no_argument, NULL, OPT_FORCE},
                                             {"report", required_argument, NULL, OPT_REPORT},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c, usage = 0;
    while (!usage && (c = getopt_long(argc, argv, ":ho:j:q", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h':
            if (!worker)
                fputs(plan_usage, stdout);
            usage = -1;
            break;
        case 'o':
            if (!*optarg) {
                if (msg)
                    fprintf(msg, "tidesim plan: -o needs a folder name\n");
                usage = 2;
            }
            dir = optarg;
            break;
        case 'j':
            errno = 0;
            jobs = strtoul(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || jobs < 1 || jobs > 4096) {
                if (msg)
                    fprintf(msg, "tidesim plan: --jobs needs an integer 1..4096\n");
                usage = 2;
            }
            break;
        case OPT_OBJECTIVE:
            if (!strcmp(optarg, "cost"))
                objective = PLAN_COST;
            else if (!strcmp(optarg, "gpus"))
                objective = PLAN_GPUS;
            else {
                if (msg)
                    fprintf(msg, "tidesim plan: --objective needs cost or gpus\n");
                usage = 2;
            }
            break;
        case OPT_FORCE:
            force = true;
            break;
        case OPT_REPORT:
            report = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        default:
            usage = cli_opt_error(msg ? msg : stderr, "plan", c, argv);
            break;
        }
    }
    if (!usage && report && optind < argc) {
        if (msg)
            fprintf(msg, "tidesim plan: --report takes no plan file\n");
        usage = 2;
    }
    if (!usage && !report) {
        if (optind < argc)
            file = argv[optind++];
        if (optind < argc) {
            if (msg)
                fprintf(msg, "tidesim plan: unexpected argument '%s'\n", argv[optind]);
            usage = 2;
        } else if (!file) {
            if (msg)
                fprintf(msg, "usage: tidesim plan PLAN.yaml [-o DIR] [-j N] [--objective "
                             "cost|gpus] [--force] [--quiet]\n");
            usage = 2;
        }
    }
    if (usage || report) {
        if (worker)
            return mpi->serve(NULL, NULL);
        return usage == -1 ? 0 : usage ? usage : report_dir(report);
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
        snprintf(defdir, sizeof(defdir), "%.*s.plan", (int)n, b);
        dir = defdir;
    }
    struct plan pl;
    struct conf_err err;
    if (plan_load(&pl, file, &err)) {
        if (msg)
            fprintf(msg, "%s\n", err.msg);
        return worker ? mpi->serve(NULL, NULL) : 1;
    }
    int status = 1;
    if (plan_validate(&pl, &err)) {
        if (msg) {
            fprintf(msg, "%s\n", err.msg);
            fprintf(msg, "tidesim plan: nothing run\n");
        }
        if (worker)
            status = mpi->serve(NULL, NULL);
        goto out;
    }
    if (worker) {
        struct plan_task_ctx ctx = {&pl, dir, interrupted};
        status = mpi->serve(plan_task, &ctx);
        goto out;
    }
    if (*interrupted) {
        status = 130;
        goto out;
    }
    struct plan_run_opts o = {.dir = dir,
                              .jobs = (unsigned)jobs,
                              .force = force,
                              .quiet = quiet,
                              .objective = objective,
                              .interrupted = interrupted,
                              .d = mpi ? mpi->d : NULL};
    status = plan_run(&pl, &o);
out:
    plan_release(&pl);
    return status;
}

int cli_plan(int argc, char **argv)
{
    return plan_main(argc, argv, NULL);
}

int cli_plan_mpi(int argc, char **argv, const struct cli_mpi *mpi)
{
    return plan_main(argc, argv, mpi);
}
