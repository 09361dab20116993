/*
 * main.c — the tidesim command line: git-style subcommands, one file each in
 * sim/cli/ (cmd_*.c). This file only dispatches.
 *
 *   tidesim run SCENARIO [-o FILE] [--seed N] [--replications R] [--quiet] [--set K=V]...
 *   tidesim validate SCENARIO... [--set K=V]... [--format text|json]
 *   tidesim sweep SWEEP.yaml [-o DIR] [-j N] [--force]   (sim/cli/cmd_sweep.h)
 *   tidesim plan PLAN.yaml [-o DIR] [-j N] [--objective cost|gpus]   (sim/cli/cmd_plan.h)
 *   tidesim help [COMMAND]                   (= tidesim COMMAND --help)
 *   tidesim report|compare|check|plot ...   (sim/cli/cmd_analysis.h)
 *   tidesim mig ...                          (sim/cli/cmd_mig.h)
 *   tidesim traces ...                       (sim/cli/cmd_traces.h)
 */
#include <stdio.h>
#include <string.h>

#include "analysis/h5read.h"
#include "sim/cli/cmd_analysis.h"
#include "sim/cli/cmd_mig.h"
#include "sim/cli/cmd_plan.h"
#include "sim/cli/cmd_run.h"
#include "sim/cli/cmd_sweep.h"
#include "sim/cli/cmd_traces.h"

static void usage_main(FILE *f)
{
    fputs("usage: tidesim <command> [options]\n"
          "\n"
          "commands:\n"
          "  run SCENARIO [-o FILE] [--seed N] [-r R] [--set K=V]...  simulate, write an HDF5\n"
          "                                                results file\n"
          "  sweep SWEEP.yaml [-o DIR] [-j N] [--force]    run a scenario over axes of values,\n"
          "                                                one file per point and an index\n"
          "  plan PLAN.yaml [-o DIR] [-j N] [--objective cost|gpus]   the smallest cluster\n"
          "                                                passing every gate, per choice\n"
          "  validate SCENARIO... [--set K=V]... [--format json]   check scenarios, no run\n"
          "  report FILE [--format text|markdown|json]     print a results file's report\n"
          "  compare A.h5 B.h5 [...] [--format text|markdown|json]   compare runs (95% CIs)\n"
          "  check FILE [--min-util X] [--min-slo Y] ... [--format json]   CI gates: exit 0\n"
          "                                                pass, 1 fail\n"
          "  plot FILE... -o DIR [--format png|svg]        charts through gnuplot\n"
          "  mig profiles GPU | mig validate GPU LAYOUT    MIG profile table, layout check\n"
          "  traces inspect FILE | traces convert IN -o OUT   look into a trace, convert it\n"
          "\n"
          "Options take their value as --opt VALUE or --opt=VALUE, before or after the\n"
          "files; '--' ends the options. 'tidesim <command> --help' (or 'tidesim help\n"
          "<command>') tells more; 'man tidesim-<command>' after make install.\n"
          "Version " TIDESIM_VERSION " (" TIDESIM_GIT ").\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return 2;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {
        {"run", cli_run},         {"validate", cli_validate}, {"report", cli_report},
        {"compare", cli_compare}, {"check", cli_check},       {"plot", cli_plot},
        {"mig", cli_mig},         {"traces", cli_traces},     {"sweep", cli_sweep},
        {"plan", cli_plan},
    };
    const char *cmd = argv[1];
    /* These read results files, which are not trusted: bound their CPU time and memory
     * (analysis/h5read.h, docs/security.md); check's exit code for an unreadable file is 2. */
    if (!strcmp(cmd, "report") || !strcmp(cmd, "compare") || !strcmp(cmd, "check") ||
        !strcmp(cmd, "plot"))
        h5_rd_limit_process(H5READ_MAX_CPU_S, H5READ_MAX_AS, strcmp(cmd, "check") ? 1 : 2);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    if (!strcmp(cmd, "help") && argc == 3) { /* tidesim help run = tidesim run --help */
        char help[] = "--help";
        char *hargv[3] = {argv[2], help, NULL};
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
            if (!strcmp(argv[2], commands[i].name))
                return commands[i].fn(2, hargv);
        fprintf(stderr, "tidesim: unknown command '%s'\n", argv[2]);
        return 2;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage_main(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        puts("tidesim " TIDESIM_VERSION " (" TIDESIM_GIT ")");
        return 0;
    }
    fprintf(stderr, "tidesim: unknown command '%s'\n", cmd);
    usage_main(stderr);
    return 2;
}
