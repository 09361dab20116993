/* replicate.c — replications as forked processes, merged into one file (replicate.h). */
#include "sim/driver/replicate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/merge.h"

enum rep_state { REP_PENDING, REP_RUNNING, REP_DONE, REP_PARTIAL, REP_FAILED };

struct rep {
    pid_t pid;
    enum rep_state state;
    char path[512];
};

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void stop_children(struct rep *r, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (r[i].state == REP_RUNNING)
            kill(r[i].pid, SIGINT);
}

/* Remove the per-replication files (complete or partial). */
static void remove_parts(struct rep *r, unsigned n)
{
    char p[600];
    for (unsigned i = 0; i < n; i++) {
        unlink(r[i].path);
        snprintf(p, sizeof(p), "%s.partial", r[i].path);
        unlink(p);
    }
}

int replicate_run(const struct replicate_opts *o, replicate_fn run, void *ctx)
{
    unsigned jobs = o->jobs;
    if (jobs == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = nc > 0 ? (unsigned)nc : 1;
    }
    struct rep *r = calloc(o->reps, sizeof(*r));
    const char **parts = calloc(o->reps, sizeof(*parts));
    if (!r || !parts) {
        free(r);
        free(parts);
        fprintf(stderr, "tidesim: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < o->reps; i++)
        snprintf(r[i].path, sizeof(r[i].path), "%s.rep%04u.%ld", o->path, i, (long)getpid());

    unsigned next = 0, running = 0, done = 0;
    bool failed = false, stopping = false;
    while (next < o->reps || running > 0) {
        if (*o->interrupted && !stopping) {
            stopping = true;
            stop_children(r, o->reps);
        }
        if (!stopping && !failed && next < o->reps && running < jobs) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                fprintf(stderr, "tidesim: cannot start replication %u: %s\n", next,
                        strerror(errno));
                failed = true;
                stopping = true;
                stop_children(r, o->reps);
                continue;
            }
            if (pid == 0)
                _exit(run(ctx, o->seed + next, r[next].path));
            r[next].pid = pid;
            r[next].state = REP_RUNNING;
            next++;
            running++;
            continue;
        }
        if (running == 0)
            break; /* stopping with nothing left to wait for */
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (unsigned i = 0; i < o->reps; i++) {
            if (r[i].pid != pid || r[i].state != REP_RUNNING)
                continue;
            running--;
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            if (code == 0) {
                r[i].state = REP_DONE;
                done++;
                if (!o->quiet)
                    fprintf(stderr, "tidesim: replication %u of %u (seed %llu) done\n", done,
                            o->reps, (unsigned long long)(o->seed + i));
            } else if (code == 130) {
                r[i].state = REP_PARTIAL;
            } else {
                r[i].state = REP_FAILED;
                if (!failed)
                    fprintf(stderr, "tidesim: replication %u (seed %llu) failed\n", i,
                            (unsigned long long)(o->seed + i));
                failed = true;
                stopping = true;
                stop_children(r, o->reps);
            }
        }
    }

    int status = 0;
    char err[600], partial[600];
    if (failed) {
        remove_parts(r, o->reps);
        status = 1;
        goto out;
    }
    /* Interrupted: merge the replications that left a file (complete or partial). */
    size_t np = 0;
    bool complete = true;
    for (unsigned i = 0; i < o->reps; i++) {
        snprintf(partial, sizeof(partial), "%s.partial", r[i].path);
        if (r[i].state == REP_DONE && exists(r[i].path)) {
            parts[np++] = r[i].path;
        } else if (r[i].state == REP_PARTIAL && exists(partial) &&
                   strlen(r[i].path) + sizeof(".partial") <= sizeof(r[i].path)) {
            memcpy(r[i].path + strlen(r[i].path), ".partial", sizeof(".partial"));
            parts[np++] = r[i].path;
            complete = false;
        } else {
            complete = false;
        }
    }
    if (np == 0) {
        fprintf(stderr, "tidesim: interrupted before any replication wrote results; no file\n");
        status = 130;
        goto out;
    }
    char *written = NULL;
    if (merge_replications(o->path, parts, np, complete, &written, err, sizeof(err))) {
        fprintf(stderr, "tidesim: %s\n", err);
        status = 1;
    } else if (!complete) {
        fprintf(stderr, "tidesim: interrupted; %zu replication(s) merged into %s (complete = 0)\n",
                np, written);
        status = 130;
    } else if (!o->quiet) {
        fprintf(stderr, "tidesim: wrote %s (%u replications)\n", written, o->reps);
    }
    free(written);
    for (size_t i = 0; i < np; i++)
        unlink(parts[i]);
    remove_parts(r, o->reps);
out:
    free(parts);
    free(r);
    return status;
}
