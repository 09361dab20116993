/* replicate.c — replications as forked processes, merged into one file (replicate.h). */
#include "sim/driver/replicate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/h5read.h"
#include "analysis/merge.h"
#include "analysis/precision.h"

enum rep_state { REP_PENDING, REP_RUNNING, REP_DONE, REP_PARTIAL, REP_FAILED };

struct rep {
    pid_t pid;
    enum rep_state state;
    char *path;    /* "<path>.tmp.<pid>.repNNNN", malloc'd */
    char *partial; /* the same + ".partial" */
};

/* malloc'd "<a><b>", or NULL when out of memory. */
static char *concat(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 1);
    if (s) {
        memcpy(s, a, na);
        memcpy(s + na, b, nb + 1);
    }
    return s;
}

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
    for (unsigned i = 0; i < n; i++) {
        if (r[i].path)
            unlink(r[i].path);
        if (r[i].partial)
            unlink(r[i].partial);
    }
}

static void free_reps(struct rep *r, unsigned n)
{
    for (unsigned i = 0; r && i < n; i++) {
        free(r[i].path);
        free(r[i].partial);
    }
    free(r);
}

int replicate_run(const struct replicate_opts *o, replicate_fn run, void *ctx)
{
    unsigned jobs = o->jobs;
    if (jobs == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = nc > 0 ? (unsigned)nc : 1;
    }
    bool autom = o->precision > 0;
    unsigned cap = autom && o->max_reps > o->reps ? o->max_reps : o->reps;
    unsigned target = o->reps; /* replications this round ends with */
    struct rep *r = calloc(cap, sizeof(*r));
    const char **parts = calloc(cap, sizeof(*parts));
    bool nomem = !r || !parts;
    pid_t self = getpid();
    for (unsigned i = 0; !nomem && i < cap; i++) {
        char tail[64];
        snprintf(tail, sizeof(tail), ".tmp.%ld.rep%04u", (long)self, i);
        r[i].path = concat(o->path, tail);
        r[i].partial = r[i].path ? concat(r[i].path, ".partial") : NULL;
        nomem = !r[i].partial;
    }
    if (nomem) {
        free_reps(r, r ? cap : 0);
        free(parts);
        fprintf(stderr, "tidesim: out of memory\n");
        return 1;
    }
    struct merge_extra extra = {.precision_target = autom ? o->precision : NAN,
                                .precision_reached = NAN,
                                .precision_metric = NULL};

    unsigned next = 0, running = 0, done = 0;
    bool failed = false, stopping = false;
round:
    while (next < target || running > 0) {
        if (*o->interrupted && !stopping) {
            stopping = true;
            stop_children(r, cap);
        }
        if (!stopping && !failed && next < target && running < jobs) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                fprintf(stderr, "tidesim: cannot start replication %u: %s\n", next,
                        strerror(errno));
                failed = true;
                stopping = true;
                stop_children(r, cap);
                continue;
            }
            if (pid == 0) {
                h5_rd_die_with_parent(self);
                _exit(run(ctx, o->seed + next, r[next].path));
            }
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
        for (unsigned i = 0; i < next; i++) {
            if (r[i].pid != pid || r[i].state != REP_RUNNING)
                continue;
            running--;
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            if (code == 0) {
                r[i].state = REP_DONE;
                done++;
                if (!o->quiet)
                    fprintf(stderr, "tidesim: replication %u of %u%s (seed %llu) done\n", done,
                            target, autom ? " planned" : "", (unsigned long long)(o->seed + i));
            } else if (code == 130) {
                r[i].state = REP_PARTIAL;
            } else {
                r[i].state = REP_FAILED;
                if (!failed)
                    fprintf(stderr, "tidesim: replication %u (seed %llu) failed\n", i,
                            (unsigned long long)(o->seed + i));
                failed = true;
                stopping = true;
                stop_children(r, cap);
            }
        }
    }
    if (autom && !failed && !stopping) {
        /* Measure the round; more seeds while the target is not met and the cap allows. */
        for (unsigned i = 0; i < done; i++)
            parts[i] = r[i].path;
        struct precision_eval pe;
        char perr[600];
        if (precision_evaluate(parts, done, o->precision, &pe, perr, sizeof(perr))) {
            fprintf(stderr, "tidesim: %s\n", perr);
            failed = true;
        } else {
            extra.precision_reached = pe.worst;
            extra.precision_metric = pe.metric;
            bool met = pe.worst <= o->precision;
            if (!o->quiet)
                fprintf(
                    stderr,
                    "tidesim: after %u replications the widest 95 %% interval is ±%.2f %% (%s)%s\n",
                    done, pe.worst * 100, pe.metric ? pe.metric : "no spread",
                    met ? "" : "; target not met");
            if (!met && done < cap) {
                unsigned want = pe.needed > cap ? cap : (unsigned)pe.needed;
                target = want > done ? want : done + 1;
                goto round;
            }
            if (!met)
                fprintf(stderr,
                        "tidesim: precision %.2f %% not reached after %u replications (the cap, "
                        "--max-replications): the widest interval is ±%.2f %% (%s)\n",
                        o->precision * 100, done, pe.worst * 100, pe.metric);
        }
    }

    int status = 0;
    char *err = NULL;
    size_t errlen = strlen(o->path) + 512;
    if (failed) {
        remove_parts(r, cap);
        status = 1;
        goto out;
    }
    /* Interrupted: merge the replications that left a file (complete or partial). */
    size_t np = 0;
    bool complete = true;
    for (unsigned i = 0; i < next; i++) {
        if (r[i].state == REP_DONE && exists(r[i].path)) {
            parts[np++] = r[i].path;
        } else if (r[i].state == REP_PARTIAL && exists(r[i].partial)) {
            parts[np++] = r[i].partial;
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
    err = malloc(errlen);
    if (!err) {
        fprintf(stderr, "tidesim: out of memory\n");
        status = 1;
    } else if (merge_replications_ex(o->path, parts, np, complete, &extra, &written, err, errlen)) {
        fprintf(stderr, "tidesim: %s\n", err);
        status = 1;
    } else if (!complete) {
        fprintf(stderr, "tidesim: interrupted; %zu replication(s) merged into %s (complete = 0)\n",
                np, written);
        status = 130;
    } else if (!o->quiet) {
        fprintf(stderr, "tidesim: wrote %s (%zu replications)\n", written, np);
    }
    free(written);
    for (size_t i = 0; i < np; i++)
        unlink(parts[i]);
    remove_parts(r, cap);
out:
    free(err);
    free(parts);
    free_reps(r, cap);
    return status;
}
