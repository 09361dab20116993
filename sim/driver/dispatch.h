/*
 * dispatch.h — where the tasks of a many-run driver run: a master hands out
 * tasks (a sweep's points, a plan's replications) one at a time to free
 * workers and hears back when each ends, so a slow task never holds up the
 * others (a dynamic queue, not a static split).
 *
 * Two kinds of workers share this interface:
 *   - forked processes on this machine (dispatch_fork_init: `-j N`), each task
 *     run in a fresh child that dies with the master (PR_SET_PDEATHSIG);
 *   - MPI ranks (sim/cli/mpi_main.c, built only by `make mpi`): rank 0 is the
 *     master, every other rank a worker that runs each task it receives in its
 *     own process. The library never needs MPI: that implementation lives
 *     outside it, behind these function pointers.
 *
 * A task is two numbers whose meaning the driver gives (a sweep: point;
 * a plan: point and replication). The worker side runs the same driver's
 * task function on them, having loaded the same sweep or plan file, so no
 * file name or scenario text travels with a task.
 *
 * Room sim/driver/.
 */
#ifndef TIDESIM_DRIVER_DISPATCH_H
#define TIDESIM_DRIVER_DISPATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct dispatch_task {
    uint64_t a, b;
};

/* What a worker does with a task: returns the exit status 0 (done), 130 (interrupted), 1. */
typedef int (*dispatch_fn)(void *ctx, const struct dispatch_task *t);

struct dispatch {
    unsigned slots; /* tasks that may run at once (>= 1) */
    /*
     * Start t on a free worker (the caller keeps count: it never starts more
     * than `slots`). *slot receives the worker's number (0..slots-1). Returns 0,
     * or a negative errno (nothing started).
     */
    int (*start)(struct dispatch *d, const struct dispatch_task *t, unsigned *slot);
    /*
     * Wait until a task ends: its slot and exit status (0, 130, 1, or -1 when
     * the worker died). Returns 0, -EINTR when a signal came first (look at the
     * interrupt flag and call again), -ECHILD when no task runs.
     */
    int (*wait)(struct dispatch *d, unsigned *slot, int *status);
    /* Ask every running task to stop (SIGINT to a forked worker; MPI ranks get the
     * signal from mpirun). */
    void (*stop)(struct dispatch *d);
    /* Used by the fork implementation: */
    dispatch_fn fn;
    void *ctx;
    pid_t *pids;
    pid_t master;
    /* A name for messages: "processes" or "MPI ranks". */
    const char *what;
};

/*
 * Workers as forked processes: at most `slots` at a time (0 = the online
 * cores), each running fn(ctx, task) and exiting with its status. Returns 0
 * or -ENOMEM. Release with dispatch_fork_release.
 */
int dispatch_fork_init(struct dispatch *d, unsigned slots, dispatch_fn fn, void *ctx);
void dispatch_fork_release(struct dispatch *d);

#endif
