/*
 * cmd_plan.h — `tidesim plan PLAN.yaml [-o DIR] [-j N] [--objective cost|gpus]
 * [--force] [--quiet]` and `tidesim plan --report DIR` (sim/driver/plan.h,
 * docs/plan.md).
 *
 * Exit status: 0 searched (an answer, or "none" said plainly, for every
 * choice), 1 error (a bad probe: nothing ran; a run failed; a folder of
 * another base scenario without --force), 2 usage error, 130 interrupted
 * (the runs made are kept).
 */
#ifndef TIDESIM_CLI_CMD_PLAN_H
#define TIDESIM_CLI_CMD_PLAN_H

struct cli_mpi;

/* Entry point for main(): argv[0] is the command name. */
int cli_plan(int argc, char **argv);

/* The same under MPI (sim/cli/cmd_mpi.h): rank 0 searches, the other ranks run tasks. */
int cli_plan_mpi(int argc, char **argv, const struct cli_mpi *mpi);

#endif
