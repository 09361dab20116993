/*
 * cmd_mpi.h — what `tidesim-mpi` (sim/cli/mpi_main.c, `make mpi`) hands the
 * sweep and plan commands: rank 0 gets a dispatcher whose workers are the
 * other ranks (sim/driver/dispatch.h); every other rank parses the same
 * command line, loads the same sweep or plan file and serves tasks until
 * rank 0 says it is done. Workers print nothing of their own loading: rank 0
 * says it once.
 *
 * The plain binary never includes MPI: this header holds only pointers.
 */
#ifndef TIDESIM_CLI_CMD_MPI_H
#define TIDESIM_CLI_CMD_MPI_H

#include <stdbool.h>

#include "sim/driver/dispatch.h"

struct cli_mpi {
    struct dispatch *d; /* rank 0: the ranks as workers (NULL on workers) */
    bool worker;        /* rank > 0 */
    /* A worker's loop: run fn(ctx, task) for every task received until rank 0 says stop;
     * fn NULL (the worker could not load the file) answers every task with a failure.
     * Returns the exit status. */
    int (*serve)(dispatch_fn fn, void *ctx);
};

#endif
