/* dispatch.c — tasks run as forked processes (dispatch.h). */
#include "sim/driver/dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/h5read.h"

static int fork_start(struct dispatch *d, const struct dispatch_task *t, unsigned *slot)
{
    unsigned k = 0;
    while (k < d->slots && d->pids[k] > 0)
        k++;
    if (k == d->slots)
        return -EBUSY;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        h5_rd_die_with_parent(d->master);
        _exit(d->fn(d->ctx, t));
    }
    d->pids[k] = pid;
    *slot = k;
    return 0;
}

static int fork_wait(struct dispatch *d, unsigned *slot, int *status)
{
    bool any = false;
    for (unsigned k = 0; k < d->slots; k++)
        any |= d->pids[k] > 0;
    if (!any)
        return -ECHILD;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0)
            return errno == EINTR ? -EINTR : -ECHILD;
        for (unsigned k = 0; k < d->slots; k++)
            if (d->pids[k] == pid) {
                d->pids[k] = 0;
                *slot = k;
                *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                return 0;
            }
        /* a child that is not a task of ours (none is started elsewhere): keep waiting */
    }
}

static void fork_stop(struct dispatch *d)
{
    for (unsigned k = 0; k < d->slots; k++)
        if (d->pids[k] > 0)
            kill(d->pids[k], SIGINT);
}

int dispatch_fork_init(struct dispatch *d, unsigned slots, dispatch_fn fn, void *ctx)
{
    memset(d, 0, sizeof(*d));
    if (slots == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        slots = nc > 0 ? (unsigned)nc : 1;
    }
    d->pids = calloc(slots, sizeof(pid_t));
    if (!d->pids)
        return -ENOMEM;
    d->slots = slots;
    d->start = fork_start;
    d->wait = fork_wait;
    d->stop = fork_stop;
    d->fn = fn;
    d->ctx = ctx;
    d->master = getpid();
    d->what = "processes";
    return 0;
}

void dispatch_fork_release(struct dispatch *d)
{
    free(d->pids);
    memset(d, 0, sizeof(*d));
}
