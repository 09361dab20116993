/*
 * mpi_main.c — `tidesim-mpi`, built by `make mpi` with mpicc (OpenMPI):
 *
 *   mpirun -n R tidesim-mpi sweep SWEEP.yaml [-o DIR] [...]
 *   mpirun -n R tidesim-mpi plan PLAN.yaml [-o DIR] [...]
 *
 * Rank 0 runs the command as `tidesim` does, but hands its tasks (a sweep's
 * points, a plan's seeds) to the other R - 1 ranks through a dynamic queue:
 * a task goes to whichever rank is free, so a slow point never holds up the
 * rest. Rank 0 alone writes the index and prints; each worker writes the
 * results files of the tasks it runs (the folder must be one that every rank
 * sees: a shared file system on a cluster), so nothing is written twice.
 * docs/cluster.md: a Slurm batch script and how to size R.
 *
 * Protocol (tags): rank 0 sends TAG_TASK {a, b} to a free worker; the worker
 * answers TAG_DONE {status}; at the end rank 0 sends TAG_STOP to every worker,
 * which then returns its own exit status. Waiting is polled (MPI_Iprobe and
 * a 2 ms sleep), so an idle rank 0 or worker does not spin a core: with
 * --oversubscribe, `-n cores + 1` keeps every core busy with simulations.
 * With R = 1 there is no worker: the command runs with forked processes, as
 * `tidesim` would.
 *
 * Signals: mpirun passes SIGINT/SIGTERM to every rank; each stops its run and
 * rank 0 writes the index marked incomplete, as a local sweep or plan does.
 *
 * Not part of the library (it is the only file that includes mpi.h).
 */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "sim/cli/cmd_mpi.h"
#include "sim/cli/cmd_plan.h"
#include "sim/cli/cmd_run.h"
#include "sim/cli/cmd_sweep.h"
#include "sim/driver/dispatch.h"

enum { TAG_TASK = 1, TAG_DONE = 2, TAG_STOP = 3 };

struct ranks {
    int size;
    unsigned *busy; /* [size] 1 while a task runs there */
    bool told;      /* the interrupt was reported once (then waits go on for the results) */
};

static void nap(void)
{
    struct timespec ts = {0, 2000000}; /* 2 ms */
    nanosleep(&ts, NULL);
}

/* Slot k is rank k + 1. */
static int mpi_start(struct dispatch *d, const struct dispatch_task *t, unsigned *slot)
{
    struct ranks *r = d->ctx;
    for (unsigned k = 0; k < d->slots; k++)
        if (!r->busy[k]) {
            uint64_t msg[2] = {t->a, t->b};
            if (MPI_Send(msg, 2, MPI_UINT64_T, (int)k + 1, TAG_TASK, MPI_COMM_WORLD) != MPI_SUCCESS)
                return -EIO;
            r->busy[k] = 1;
            *slot = k;
            return 0;
        }
    return -EBUSY;
}

static volatile sig_atomic_t *flag;
static int saved_stderr = -1; /* a worker's stderr while it loads (rank 0 speaks then) */
static bool served;           /* this worker entered serve() */

static int mpi_wait(struct dispatch *d, unsigned *slot, int *status)
{
    struct ranks *r = d->ctx;
    bool any = false;
    for (unsigned k = 0; k < d->slots; k++)
        any |= r->busy[k] != 0;
    if (!any)
        return -ECHILD;
    for (;;) {
        int ready = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_DONE, MPI_COMM_WORLD, &ready, &st);
        if (ready) {
            int code = 1;
            MPI_Recv(&code, 1, MPI_INT, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            unsigned k = (unsigned)st.MPI_SOURCE - 1;
            r->busy[k] = 0;
            *slot = k;
            *status = code;
            return 0;
        }
        if (flag && *flag && !r->told) {
            r->told = true;
            return -EINTR; /* the caller stops handing out tasks, then waits again */
        }
        nap();
    }
}

static void mpi_stop(struct dispatch *d)
{
    (void)d; /* mpirun delivers the signal to every rank; a worker stops its own run */
}

/* A worker: tasks until TAG_STOP. */
static int serve(dispatch_fn fn, void *ctx)
{
    int status = fn ? 0 : 1;
    served = true;
    if (saved_stderr >= 0) {
        fflush(stderr);
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
    for (;;) {
        int ready = 0;
        MPI_Status st;
        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &st);
        if (!ready) {
            nap();
            continue;
        }
        if (st.MPI_TAG == TAG_STOP) {
            int dummy;
            MPI_Recv(&dummy, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            return status;
        }
        uint64_t msg[2];
        MPI_Recv(msg, 2, MPI_UINT64_T, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        struct dispatch_task t = {msg[0], msg[1]};
        int code = fn ? fn(ctx, &t) : 1;
        if (code != 0 && code != 130)
            status = 1;
        MPI_Send(&code, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "tidesim-mpi: MPI_Init failed\n");
        return 1;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *cmd = argc >= 2 ? argv[1] : "";
    bool sweep = !strcmp(cmd, "sweep"), plan = !strcmp(cmd, "plan");
    if (!sweep && !plan) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n R tidesim-mpi sweep|plan FILE [options]\n"
                            "(the other commands: tidesim; docs/cluster.md)\n");
        MPI_Finalize();
        return 2;
    }
    flag = cli_catch_signals();
    int status;
    if (size == 1) {
        /* no worker rank: forked processes, as tidesim does */
        status = sweep ? cli_sweep(argc - 1, argv + 1) : cli_plan(argc - 1, argv + 1);
        MPI_Finalize();
        return status;
    }
    struct ranks rk = {size, calloc((size_t)size, sizeof(unsigned)), false};
    struct dispatch d;
    memset(&d, 0, sizeof(d));
    d.slots = (unsigned)size - 1;
    d.start = mpi_start;
    d.wait = mpi_wait;
    d.stop = mpi_stop;
    d.ctx = &rk;
    d.what = "MPI ranks";
    struct cli_mpi m = {rank == 0 ? &d : NULL, rank != 0, serve};
    if (!rk.busy) {
        fprintf(stderr, "tidesim-mpi: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank != 0) {
        /* rank 0 prints the loading messages once; a worker's stderr comes back in serve() */
        fflush(stderr);
        saved_stderr = dup(STDERR_FILENO);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, STDERR_FILENO);
            dup2(nul, STDOUT_FILENO);
            close(nul);
        }
    }
    status = sweep ? cli_sweep_mpi(argc - 1, argv + 1, &m) : cli_plan_mpi(argc - 1, argv + 1, &m);
    if (rank != 0 && !served)
        status = serve(NULL, NULL); /* it stopped before serving (a usage error): wait for stop */
    if (rank == 0) {
        /* every worker is in serve() (or was never given a task): tell each to stop */
        for (int k = 1; k < size; k++) {
            int stop = 0;
            MPI_Send(&stop, 1, MPI_INT, k, TAG_STOP, MPI_COMM_WORLD);
        }
    }
    free(rk.busy);
    MPI_Finalize();
    return status;
}
