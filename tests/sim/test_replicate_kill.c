/*
 * test_replicate_kill.c — replicate_run (sim/driver/replicate.h) when its
 * process is killed with SIGKILL between a replication that finished and
 * one still running: the running worker dies with it, and the finished
 * replication's file is named as unfinished work ("<path>.tmp.<pid>.repNNNN"),
 * never like a results file (it was "<path>.rep0000.<pid>").
 *
 * The replications are stand-ins (replicate_fn is the seam): the first
 * writes its file and succeeds, the second signals that it started and
 * waits for ever. So the moment of the kill is fixed by the files, not by
 * timing.
 */
#include <sys/prctl.h>

#include "sim/driver/replicate.h"
#include "tests/proctest.h"

struct fake {
    char marker[256];
};

static int fake_rep(void *ctx, uint64_t seed, const char *path)
{
    const struct fake *f = ctx;
    if (seed == 10) {
        FILE *o = fopen(path, "w");
        if (!o)
            return 1;
        fputs("a finished replication", o);
        fclose(o);
        return 0;
    }
    FILE *m = fopen(f->marker, "w");
    if (m)
        fclose(m);
    alarm(30); /* should it outlive the test (no death signal), it still ends */
    for (;;)
        pause();
}

Test(replicate, sigkill_of_the_parent_kills_workers_and_leaves_no_complete_looking_file)
{
    char scratch[128], out[192];
    struct fake f;
    ptest_tmpdir(scratch, sizeof(scratch), "repkill");
    snprintf(out, sizeof(out), "%s/r.h5", scratch);
    snprintf(f.marker, sizeof(f.marker), "%s/started", scratch);
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

    fflush(NULL);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        volatile sig_atomic_t never = 0;
        struct replicate_opts o = {
            .path = out, .seed = 10, .reps = 2, .jobs = 2, .quiet = true, .interrupted = &never};
        _exit(replicate_run(&o, fake_rep, &f));
    }
    char done[64];
    snprintf(done, sizeof(done), "r.h5.tmp.%ld.rep0000", (long)p);
    cr_assert(ptest_await_files(scratch, "started", 1, 30), "replication 1 never started");
    cr_assert(ptest_await_files(scratch, done, 1, 30), "replication 0 left no file");

    kill(p, SIGKILL);
    int st;
    cr_assert_eq(waitpid(p, &st, 0), p);
    /* Every process of the run is now a child of this one: all must be gone within a second. */
    double end = ptest_now() + 1.0;
    bool alone = false;
    while (!alone && ptest_now() < end) {
        pid_t r;
        while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        alone = r < 0 && errno == ECHILD;
        if (!alone)
            ptest_nap();
    }
    cr_expect(alone, "a worker outlived its parent by a second");
    char *left[16];
    size_t n = ptest_list(scratch, "r.h5", left, 16);
    cr_expect_geq(n, 1);
    for (size_t i = 0; i < n && i < 16; i++)
        cr_expect(strstr(left[i], ".tmp.") != NULL, "complete-looking: %s", left[i]);
    ptest_free_list(left, n < 16 ? n : 16);
    ptest_rmdir(scratch);
}
