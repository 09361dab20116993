/*
 * cmd_sweep.h — `tidesim sweep SWEEP.yaml [-o DIR] [-j N] [--force] [--quiet]`
 * and `tidesim sweep --report DIR` (sim/driver/sweep.h, docs/sweeps.md).
 *
 * Exit status: 0 every point complete (or the report printed), 1 error (a
 * bad point: nothing ran; a point failed; a folder of another sweep without
 * --force), 2 usage error, 130 interrupted (completed points kept).
 */
#ifndef TIDESIM_CLI_CMD_SWEEP_H
#define TIDESIM_CLI_CMD_SWEEP_H

struct cli_mpi;

/* Entry point for main(): argv[0] is the command name. */
int cli_sweep(int argc, char **argv);

/* The same under MPI (sim/cli/cmd_mpi.h): rank 0 runs the sweep, the other ranks its points. */
int cli_sweep_mpi(int argc, char **argv, const struct cli_mpi *mpi);

#endif
