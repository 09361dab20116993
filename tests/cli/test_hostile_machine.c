/*
 * test_hostile_machine.c — tidesim run on a machine that fights back
 * (issue 14, findings 2 and 7): a disk that fills during the run or at its
 * last write, a signal while the run is still being set up, `kill -9` of a
 * replicated run, and a service with nothing to serve over a century.
 *
 * Each ends the same way or the test fails: one clear message, the exit
 * status the documentation gives (cmd_run.h), and no file that looks like
 * results. The full-disk tests mount a 200 KiB tmpfs, which needs root: where
 * the mount is refused they are skipped, saying why.
 *
 * The set-up tests hold tidesim in its set-up deterministically: the arrival
 * trace is a named pipe nobody writes, so opening it blocks until a signal.
 */
#include <hdf5.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#include "tests/proctest.h"

/* Much histogram data per interval (cv 2 spreads latencies over ~100 buckets, 1 s intervals):
 * its series flushes run out of room long before the end. */
static const char mid_run_yaml[] =
    "name: midrun\n"
    "seed: 1\n"
    "duration: 2h\n"
    "sample_interval: 1s\n"
    "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 2.0 }\n"
    "    batching: { max_batch: 16, max_wait: 5ms }\n"
    "    replicas: 1\n"
    "    arrivals: { synthetic: { peak_rps: 300 } }\n"
    "policy: { name: dedicated, inference_gpus: 1 }\n";

/* 1,080 intervals, under one chunk of every series: HDF5 holds it all in its caches and
 * the disk fills at the final write (~430 KB for 200 KiB of room). */
static const char final_write_yaml[] =
    "name: finalwrite\n"
    "seed: 1\n"
    "duration: 3h\n"
    "sample_interval: 10s\n"
    "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 8 }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.1 }\n"
    "    batching: { max_batch: 16, max_wait: 5ms }\n"
    "    replicas: 2\n"
    "    arrivals: { synthetic: { peak_rps: 200, trough_ratio: 0.15, peak_hour: 20 } }\n"
    "training:\n"
    "  backlog: 4\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 2, duration: { lognormal: { median: 1h, sigma: 1.0 } },\n"
    "                 gpus: { 1: 0.5, 2: 0.5 } }\n"
    "policy: { name: dedicated, inference_gpus: 2 }\n";

/* A service whose trace is the named pipe "never.csv" next to the scenario. */
static const char blocked_yaml[] = "name: blocked\n"
                                   "duration: 1h\n"
                                   "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
                                   "services:\n"
                                   "  - name: chat\n"
                                   "    replicas: 1\n"
                                   "    arrivals: { trace: { path: never.csv, format: azure } }\n"
                                   "policy: { name: dedicated, inference_gpus: 1 }\n";

/* Mount a 200 KiB tmpfs on dir, or skip the test saying why. */
static void mount_tiny_or_skip(const char *scratch, const char *dir)
{
    cr_assert_eq(mkdir(dir, 0755), 0);
    if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=200k") != 0) {
        int e = errno;
        ptest_rmdir(scratch);
        cr_skip_test("cannot mount a 200 KiB tmpfs to fill (%s; needs root): full-disk test "
                     "not run",
                     strerror(e));
    }
}

static void full_disk_case(const char *yaml)
{
    char scratch[128], tiny[192], scen[192], out[256], err[1024], want[1024];
    ptest_tmpdir(scratch, sizeof(scratch), "fulldisk");
    snprintf(tiny, sizeof(tiny), "%s/tiny", scratch);
    snprintf(scen, sizeof(scen), "%s/s.yaml", scratch);
    snprintf(out, sizeof(out), "%s/results.h5", tiny);
    ptest_write(scen, yaml);
    mount_tiny_or_skip(scratch, tiny);

    const char *args[] = {"run", scen, "-o", out, "--quiet", NULL};
    int rc = ptest_run(NULL, args, err, sizeof(err), 120);
    snprintf(want, sizeof(want), "tidesim: cannot write %s: No space left on device", out);
    cr_expect_eq(rc, 1, "exit %d (a crash is 128 + signal): %s", rc, err);
    cr_expect_str_eq(err, want);
    char *left[8];
    size_t n = ptest_list(tiny, "", left, 8);
    cr_expect_eq(n, 0, "the full disk still holds %zu file(s), first %s", n, n ? left[0] : "");
    ptest_free_list(left, n < 8 ? n : 8);

    cr_expect_eq(umount2(tiny, MNT_DETACH), 0);
    ptest_rmdir(scratch);
}

Test(hostile_machine, disk_full_during_the_run_fails_with_enospc_and_leaves_nothing)
{
    full_disk_case(mid_run_yaml);
}

Test(hostile_machine, disk_full_at_the_final_write_fails_with_enospc_and_leaves_nothing)
{
    full_disk_case(final_write_yaml);
}

/* A scratch folder holding blocked.yaml and its never-written trace pipe. */
static void blocked_scenario(char *scratch, size_t n, char *scen, size_t sn)
{
    char fifo[256];
    ptest_tmpdir(scratch, n, "blocked");
    snprintf(scen, sn, "%s/blocked.yaml", scratch);
    snprintf(fifo, sizeof(fifo), "%s/never.csv", scratch);
    ptest_write(scen, blocked_yaml);
    cr_assert_eq(mkfifo(fifo, 0644), 0);
}

Test(hostile_machine, sigterm_during_set_up_leaves_no_temporary_file)
{
    char scratch[128], scen[192], out[256], errf[256], tmpname[64];
    blocked_scenario(scratch, sizeof(scratch), scen, sizeof(scen));
    snprintf(out, sizeof(out), "%s/r.h5", scratch);
    snprintf(errf, sizeof(errf), "%s/stderr", scratch);
    const char *args[] = {"run", scen, "-o", out, NULL};
    pid_t p = ptest_spawn(NULL, errf, args);
    /* The results file is opened before the trace: once it exists, tidesim is in set-up. */
    snprintf(tmpname, sizeof(tmpname), "r.h5.tmp.%ld", (long)p);
    bool in_set_up = ptest_await_files(scratch, tmpname, 1, 30);
    cr_expect(in_set_up, "tidesim never reached its set-up");
    /* Until it ends: a signal that lands just before the pipe's open() is seen only after the
     * open returns, which it never does; the next one interrupts it. */
    int rc = -1;
    bool ended = false;
    for (int i = 0; i < 300 && !ended; i++) { /* ~30 s at most */
        kill(p, SIGTERM);
        for (int k = 0; k < 10 && !ended; k++) {
            ended = ptest_ended(p, &rc);
            if (!ended)
                ptest_nap();
        }
    }
    if (!ended)
        rc = ptest_wait(p, 0); /* kills it */
    cr_expect_eq(rc, 130, "exit %d (143: killed by the signal, set-up not guarded)", rc);
    char *left[8];
    size_t n = ptest_list(scratch, "r.h5", left, 8);
    cr_expect_eq(n, 0, "left %s", n ? left[0] : "");
    ptest_free_list(left, n < 8 ? n : 8);
    FILE *f = fopen(errf, "r");
    char line[512] = "";
    if (f) {
        if (!fgets(line, sizeof(line), f))
            line[0] = 0;
        fclose(f);
    }
    cr_expect_str_eq(line, "tidesim: interrupted during set-up; no results written\n");
    ptest_rmdir(scratch);
}

/* The worker pid at the end of "r.h5.tmp.<parent>.repNNNN.tmp.<worker>". */
static pid_t worker_of(const char *name)
{
    const char *t = strrchr(name, '.');
    return t ? (pid_t)strtol(t + 1, NULL, 10) : 0;
}

Test(hostile_machine, kill_9_of_a_replicated_run_leaves_no_worker_and_no_complete_file)
{
    char scratch[128], scen[192], out[256], errf[256], prefix[64];
    blocked_scenario(scratch, sizeof(scratch), scen, sizeof(scen));
    snprintf(out, sizeof(out), "%s/r.h5", scratch);
    snprintf(errf, sizeof(errf), "%s/stderr", scratch);
    /* Orphans of the run come to this process, which can then reap and count them. */
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    /* A stale file of a dead run: it must never be taken for this run's results. */
    char stale[300];
    snprintf(stale, sizeof(stale), "%s/r.h5.tmp.1.rep0000", scratch);
    ptest_write(stale, "not HDF5");

    const char *args[] = {"run", scen, "-o", out, "--replications", "2", NULL};
    pid_t p = ptest_spawn(NULL, errf, args);
    /* Both workers are in set-up once their results files exist. */
    snprintf(prefix, sizeof(prefix), "r.h5.tmp.%ld.rep", (long)p);
    if (!ptest_await_files(scratch, prefix, 2, 30)) {
        kill(-p, SIGKILL); /* the run's group, see ptest_spawn */
        ptest_wait(p, 10);
        ptest_rmdir(scratch);
        cr_assert_fail("the workers never started (no %s* files)", prefix);
    }
    char *w[8];
    size_t nw = ptest_list(scratch, prefix, w, 8);
    cr_assert_eq(nw, 2);
    pid_t workers[2] = {worker_of(w[0]), worker_of(w[1])};
    ptest_free_list(w, nw);
    cr_assert_gt(workers[0], 0);
    cr_assert_gt(workers[1], 0);

    kill(p, SIGKILL);
    cr_expect_eq(ptest_wait(p, 30), 128 + SIGKILL);
    /* The bound: no worker alive a second after its parent died. */
    double end = ptest_now() + 1.0;
    bool dead[2] = {false, false};
    while (!(dead[0] && dead[1]) && ptest_now() < end) {
        for (int i = 0; i < 2; i++)
            if (!dead[i] && waitpid(workers[i], NULL, WNOHANG) == workers[i])
                dead[i] = true;
        ptest_nap();
    }
    for (int i = 0; i < 2; i++) {
        cr_expect(dead[i], "worker %ld still alive a second after its parent died",
                  (long)workers[i]);
        if (!dead[i]) {
            kill(workers[i], SIGKILL);
            waitpid(workers[i], NULL, 0);
        }
    }
    /* What is left says "unfinished" in its name: nothing named like results. */
    char *left[16];
    size_t n = ptest_list(scratch, "r.h5", left, 16);
    for (size_t i = 0; i < n && i < 16; i++)
        cr_expect(strstr(left[i], ".tmp.") != NULL, "a complete-looking file was left: %s",
                  left[i]);
    ptest_free_list(left, n < 16 ? n : 16);

    /* A new run over the leftovers writes its own results only. */
    const char *again[] = {
        "run", "tests/data/scenarios/tiny.yaml", "-o", out, "--replications", "2", "--quiet", NULL};
    char err[1024];
    int rc = ptest_run(NULL, again, err, sizeof(err), 120);
    cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_expect_geq(f, 0);
    if (f >= 0) {
        cr_expect_gt(H5Lexists(f, "rep0001", H5P_DEFAULT), 0);
        cr_expect_eq(H5Lexists(f, "rep0002", H5P_DEFAULT), 0);
        H5Fclose(f);
    }
    ptest_rmdir(scratch);
}

/* A synthetic diurnal service at peak_rps 0 over the longest scenario allowed (100 years):
 * set up at once, nothing served. Before the fix it walked 3e9 empty one-second cells. */
Test(hostile_machine, zero_rate_service_over_a_century_runs_and_serves_nothing)
{
    char scratch[128], scen[192], out[256], err[1024];
    ptest_tmpdir(scratch, sizeof(scratch), "zero");
    snprintf(scen, sizeof(scen), "%s/zero.yaml", scratch);
    snprintf(out, sizeof(out), "%s/zero.h5", scratch);
    ptest_write(scen, "name: zero\n"
                      "duration: 36500d\n"
                      "sample_interval: 1d\n"
                      "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
                      "services:\n"
                      "  - name: chat\n"
                      "    replicas: 1\n"
                      "    arrivals: { synthetic: { peak_rps: 0, trough_ratio: 0.15, "
                      "peak_hour: 20 } }\n"
                      "policy: { name: dedicated, inference_gpus: 1 }\n");
    const char *args[] = {"run", scen, "-o", out, "--quiet", NULL};
    int rc = ptest_run(NULL, args, err, sizeof(err), 60);
    cr_expect_eq(rc, 0, "exit %d (-1: still setting up after a minute): %s", rc, err);
    hid_t f = rc == 0 ? H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
    int64_t arrived = -1;
    if (f >= 0) {
        hid_t a = H5Aopen_by_name(f, "summary", "requests_arrived", H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) {
            cr_expect_geq(H5Aread(a, H5T_NATIVE_INT64, &arrived), 0);
            H5Aclose(a);
        }
        H5Fclose(f);
    }
    cr_expect_eq(arrived, 0);
    ptest_rmdir(scratch);
}
