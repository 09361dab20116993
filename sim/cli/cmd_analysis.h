/*
 * cmd_analysis.h — the analysis commands of tidesim, reading results files
 * (one file each: cmd_report.c, cmd_compare.c, cmd_check.c, cmd_plot.c):
 *
 *   tidesim report FILE [--format text|markdown|json]
 *   tidesim compare A.h5 B.h5 [...] [--format text|markdown]
 *   tidesim check FILE [--min-util X] [--min-slo Y] [--max-ckpt-overhead Z]
 *                 [--max-p99-ms M] [--util-kind busy|allocated|useful]
 *                 [--against BASE.h5 [--tolerance T]]
 *   tidesim plot FILE... -o DIR [--format png|svg]
 *
 * Exit status: report/compare/plot 0 ok, 1 unreadable file or failed tool,
 * 2 usage error; check 0 all gates hold, 1 a gate failed, 2 usage error or
 * unreadable file.
 */
#ifndef TIDESIM_CLI_CMD_ANALYSIS_H
#define TIDESIM_CLI_CMD_ANALYSIS_H

#include <stdio.h>

/* Entry points for main(): argv[0] is the command name. Print to stdout/stderr. */
int cli_report(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_plot(int argc, char **argv);

/* The same, writing to out and err (for tests). */
int cli_report_run(int argc, char **argv, FILE *out, FILE *err);
int cli_compare_run(int argc, char **argv, FILE *out, FILE *err);
int cli_check_run(int argc, char **argv, FILE *out, FILE *err);
int cli_plot_run(int argc, char **argv, FILE *out, FILE *err);

#endif
