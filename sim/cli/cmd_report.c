/* cmd_report.c — `tidesim report`: print a results file's figures (sim/cli/cmd_analysis.h). */
#include "sim/cli/cmd_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/results.h"

#include "sim/cli/args.h"

static const char report_usage[] =
    "usage: tidesim report FILE [--format text|markdown|json]\n"
    "\n"
    "Prints a results file's headline metrics (mean and 95% Student-t interval when\n"
    "the file holds replications), the per-service latency and SLO table, training\n"
    "outcomes and GPU-time by state. Figures the file does not hold print as '-'.\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file, 2 usage error\n";

int cli_report_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL;
    enum report_format fmt = REPORT_TEXT;
    static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(report_usage, out);
            return 0;
        } else if (c == 'f') {
            if (report_parse_format(optarg, &fmt)) {
                fprintf(err, "tidesim report: --format needs text, markdown or json\n");
                return 2;
            }
        } else {
            return cli_opt_error(err, "report", c, argv);
        }
    }
    if (optind < argc)
        path = argv[optind++];
    if (optind < argc) {
        fprintf(err, "tidesim report: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!path) {
        fputs(report_usage, err);
        return 2;
    }
    char msg[512];
    if (report_write(out, path, fmt, msg, sizeof(msg))) {
        fprintf(err, "tidesim: %s\n", msg);
        return 1;
    }
    return 0;
}

int cli_report(int argc, char **argv)
{
    return cli_report_run(argc, argv, stdout, stderr);
}
