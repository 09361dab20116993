/*
 * cmd_mig.h — `tidesim mig`: inspect MIG profile tables and check layouts.
 *
 *   tidesim mig profiles GPU           the GPU's profile table
 *   tidesim mig validate GPU LAYOUT    "valid: <placement>" or the reason
 *
 * Exit status: 0 ok / valid, 1 invalid layout, 2 usage error (wrong arguments,
 * unknown GPU or subcommand).
 */
#ifndef TIDESIM_CLI_CMD_MIG_H
#define TIDESIM_CLI_CMD_MIG_H

#include <stdio.h>

/* Entry point for main(): argv[0] is "mig". Prints to stdout/stderr; returns the exit status. */
int cli_mig(int argc, char **argv);

/* Same, writing to out and err (for tests). Neither stream is closed. */
int cli_mig_run(int argc, char **argv, FILE *out, FILE *err);

#endif
