/*
 * test_sweep.c — `tidesim sweep` (sim/driver/sweep.h, docs/sweeps.md): how
 * many points a grid and a zip make and which values each point gets, a bad
 * axis value refused at its file:line:col before anything runs, -j 1 and -j 2
 * giving the same datasets, a re-run running only the missing points, a
 * changed sweep file refused without --force, and an interrupt leaving the
 * completed points and an index that says it is incomplete.
 *
 * References: the point count is the product of the axis lengths (grid) or
 * their common length (zip); a point's cards are nodes × gpus_per_node of the
 * values the test wrote; positions are counted by hand in the texts below.
 * Every sweep runs tests/data/scenarios/small.yaml (1 h, 4 cards, ~0.1 s).
 */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>

#include "sim/driver/sweep.h"
#include "tests/h5test.h"
#include "tests/proctest.h"

/* A scratch folder holding small.yaml and the sweep file `name` with `text`. */
static void setup(char *dir, size_t n, const char *name, const char *text)
{
    ptest_tmpdir(dir, n, "sweep");
    char src[2048], cwd[1024], path[1200], cmd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
    snprintf(src, sizeof(src), "%s/tests/data/scenarios/small.yaml", cwd);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s/small.yaml'", src, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ptest_write(path, text);
}

/* Run tidesim in dir; stderr (all of it, up to errlen) in err. Returns the exit status. */
static int sweep(const char *dir, const char *const args[], char *err, size_t errlen)
{
    char ef[1200];
    snprintf(ef, sizeof(ef), "%s/stderr.txt", dir);
    int rc = ptest_wait(ptest_spawn(dir, ef, args), 120);
    FILE *f = fopen(ef, "r");
    cr_assert_not_null(f);
    size_t n = fread(err, 1, errlen - 1, f);
    err[n] = 0;
    fclose(f);
    return rc;
}

/* Lines of s containing needle. */
static size_t count_lines(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *line = s; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), line);
        n += strstr(buf, needle) != NULL;
        line += len + (end != NULL);
    }
    return n;
}

static int64_t meta_i64(const char *path, const char *group, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0, "cannot open %s", path);
    hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
    cr_assert_geq(g, 0, "%s: no %s", path, group);
    int64_t v = (int64_t)h5test_f64(g, name);
    H5Gclose(g);
    H5Fclose(f);
    return v;
}

static bool exists(const char *dir, const char *name)
{
    char p[1200];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static const char grid_text[] = "base: small.yaml\n"
                                "axes:\n"
                                "  cluster.nodes: [1, 2]\n"
                                "  services.chat.arrivals.synthetic.peak_rps: {from: 100, to: "
                                "300, step: 100}\n";

Test(sweep, a_grid_has_the_product_of_its_axes_first_axis_slowest)
{
    char dir[128], err[8192], p[1200];
    setup(dir, sizeof(dir), "g.yaml", grid_text);
    const char *args[] = {"sweep", "g.yaml", "-o", "out", "-j", "2", NULL};
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    char *names[16];
    snprintf(p, sizeof(p), "%s/out", dir);
    size_t n = ptest_list(p, "point-", names, 16);
    ptest_free_list(names, n < 16 ? n : 16);
    cr_expect_eq(n, 6, "2 × 3 points: %zu files", n);
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    cr_expect_eq(meta_i64(p, "/meta", "points"), 6);
    cr_expect_eq(meta_i64(p, "/meta", "complete"), 1);
    /* point 3 = nodes 2 (second value of the first axis), peak 100: 2 × 4 cards */
    snprintf(p, sizeof(p), "%s/out/point-0003.h5", dir);
    cr_expect_eq(meta_i64(p, "/summary", "gpus"), 8);
    snprintf(p, sizeof(p), "%s/out/point-0002.h5", dir);
    cr_expect_eq(meta_i64(p, "/summary", "gpus"), 4);
    /* the index's table holds the axis values as numbers, in point order */
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/table/axis_1", H5P_DEFAULT);
    double v[6];
    cr_assert_geq(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    H5Dclose(d);
    /* the external link reaches the point's own file */
    hid_t s = H5Gopen2(f, "/points/point-0003/results/summary", H5P_DEFAULT);
    cr_expect_geq(s, 0, "external link to point-0003.h5");
    if (s >= 0) {
        cr_expect_eq(h5test_f64(s, "gpus"), 8);
        H5Gclose(s);
    }
    H5Fclose(f);
    const double want[6] = {100, 200, 300, 100, 200, 300};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(v[i], want[i], "axis_1[%d] = %g", i, v[i]);
    /* tidesim report reads the index as its point table */
    char bin[2048], cmd[4096], out[16384];
    ptest_bin_abs(bin, sizeof(bin));
    snprintf(cmd, sizeof(cmd), "'%s' report '%s/out/index.h5' --format json", bin, dir);
    FILE *pf = popen(cmd, "r");
    cr_assert_not_null(pf);
    size_t got = fread(out, 1, sizeof(out) - 1, pf);
    out[got] = 0;
    cr_expect_eq(pclose(pf), 0, "report on the index failed");
    cr_expect(strstr(out, "\"points\": 6,") != NULL, "%s", out);
    cr_expect(strstr(out, "{\"point\": 3, \"file\": \"point-0003.h5\", \"done\": true, "
                          "\"values\": [\"2\", \"100\"]") != NULL,
              "%s", out);
    ptest_rmdir(dir);
}

Test(sweep, zip_pairs_the_values_and_replications_give_intervals)
{
    char dir[128], err[8192], p[1200];
    setup(dir, sizeof(dir), "z.yaml",
          "base: small.yaml\nmode: zip\nreplications: 2\naxes:\n  cluster.nodes: [1, 2, 3]\n"
          "  policy.inference_gpus: [1, 2, 3]\n");
    const char *args[] = {"sweep", "z.yaml", "-o", "out", "-j", "2", NULL};
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    cr_expect_eq(meta_i64(p, "/meta", "points"), 3);
    cr_expect_eq(meta_i64(p, "/meta", "replications"), 2);
    snprintf(p, sizeof(p), "%s/out/point-0002.h5", dir);
    cr_expect_eq(meta_i64(p, "/meta", "replications"), 2, "a replicated point file");
    cr_expect_eq(meta_i64(p, "/summary", "gpus_mean"), 12);
    cr_expect(!exists(dir, "out/point-0003.h5"));
    ptest_rmdir(dir);
}

Test(sweep, a_bad_axis_value_is_refused_at_its_position_before_anything_runs)
{
    char dir[128], err[8192];
    /* "  cluster.nodes: [1, two]": 'two' starts at column 22 of line 3 */
    setup(dir, sizeof(dir), "bad.yaml",
          "base: small.yaml\naxes:\n  cluster.nodes: [1, two]\n  policy.name: [dedicated]\n");
    const char *args[] = {"sweep", "bad.yaml", "-o", "out", NULL};
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 1, "%s", err);
    cr_expect(!strncmp(err, "bad.yaml:3:22: axis cluster.nodes value 'two'", 45), "%s", err);
    cr_expect(strstr(err, "expected a positive integer") != NULL, "%s", err);
    cr_expect(!exists(dir, "out"), "nothing may be written");
    ptest_rmdir(dir);
}

Test(sweep, j1_and_j2_give_the_same_datasets)
{
    char dir[128], err[8192], cmd[4096];
    setup(dir, sizeof(dir), "s.yaml",
          "base: small.yaml\naxes:\n  cluster.nodes: [1, 2]\n"
          "  services.chat.arrivals.synthetic.peak_rps: [150, 250]\n");
    const char *a1[] = {"sweep", "s.yaml", "-o", "j1", "-j", "1", NULL};
    const char *a2[] = {"sweep", "s.yaml", "-o", "j2", "-j", "2", NULL};
    cr_assert_eq(sweep(dir, a1, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(sweep(dir, a2, err, sizeof(err)), 0, "%s", err);
    for (int p = 0; p < 4; p++) {
        snprintf(cmd, sizeof(cmd),
                 "h5diff -q --exclude-path /meta %s/j1/point-%04d.h5 %s/j2/point-%04d.h5", dir, p,
                 dir, p);
        cr_expect_eq(system(cmd), 0, "point %d differs between -j 1 and -j 2", p);
    }
    snprintf(cmd, sizeof(cmd), "h5diff -q --exclude-path /meta %s/j1/index.h5 %s/j2/index.h5", dir,
             dir);
    cr_expect_eq(system(cmd), 0, "the indexes differ");
    /* the comparison can fail: two different points do differ */
    snprintf(cmd, sizeof(cmd),
             "h5diff -q --exclude-path /meta %s/j1/point-0000.h5 %s/j1/point-0001.h5 >/dev/null",
             dir, dir);
    cr_expect_neq(system(cmd), 0, "h5diff sees no difference between two points");
    ptest_rmdir(dir);
}

Test(sweep, a_rerun_runs_only_the_missing_points)
{
    char dir[128], err[8192], p[1200];
    setup(dir, sizeof(dir), "s.yaml",
          "base: small.yaml\naxes:\n  services.chat.arrivals.synthetic.peak_rps: [100, 200, 300, "
          "400]\n");
    const char *args[] = {"sweep", "s.yaml", "-o", "out", "-j", "2", NULL};
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 4, "%s", err);
    struct stat before, after;
    snprintf(p, sizeof(p), "%s/out/point-0000.h5", dir);
    cr_assert_eq(stat(p, &before), 0);
    snprintf(p, sizeof(p), "%s/out/point-0001.h5", dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/out/point-0003.h5", dir);
    unlink(p);
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 2, "%s", err);
    cr_expect_eq(count_lines(err, "point 1 done"), 1, "%s", err);
    cr_expect_eq(count_lines(err, "point 3 done"), 1, "%s", err);
    snprintf(p, sizeof(p), "%s/out/point-0000.h5", dir);
    cr_assert_eq(stat(p, &after), 0);
    cr_expect(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                  before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
              "point 0 was written again");
    cr_expect(exists(dir, "out/point-0003.h5"));
    /* a third run has nothing to do */
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 0, "%s", err);
    ptest_rmdir(dir);
}

Test(sweep, a_changed_sweep_file_is_refused_without_force)
{
    char dir[128], err[8192], p[1200];
    setup(dir, sizeof(dir), "s.yaml",
          "base: small.yaml\naxes:\n  services.chat.arrivals.synthetic.peak_rps: [100, 200]\n");
    const char *args[] = {"sweep", "s.yaml", "-o", "out", NULL};
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    snprintf(p, sizeof(p), "%s/s.yaml", dir);
    ptest_write(p, "base: small.yaml\naxes:\n  services.chat.arrivals.synthetic.peak_rps: [100, "
                   "300]\n");
    cr_expect_eq(sweep(dir, args, err, sizeof(err)), 1, "%s", err);
    cr_expect(strstr(err, "another sweep file, base scenario or binary") != NULL, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 0, "%s", err);
    const char *forced[] = {"sweep", "s.yaml", "-o", "out", "--force", NULL};
    cr_assert_eq(sweep(dir, forced, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 2, "--force runs every point again: %s", err);
    /* the base scenario changed is refused the same way */
    snprintf(p, sizeof(p), "%s/small.yaml", dir);
    FILE *f = fopen(p, "a");
    cr_assert_not_null(f);
    fputs("# edited\n", f);
    fclose(f);
    cr_expect_eq(sweep(dir, args, err, sizeof(err)), 1, "%s", err);
    /* point files without an index are not taken for this sweep's */
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    unlink(p);
    cr_expect_eq(sweep(dir, forced, err, sizeof(err)), 0, "%s", err);
    unlink(p);
    cr_expect_eq(sweep(dir, args, err, sizeof(err)), 1, "%s", err);
    cr_expect(strstr(err, "but no index") != NULL, "%s", err);
    ptest_rmdir(dir);
}

Test(sweep, an_interrupt_keeps_finished_points_and_an_incomplete_index)
{
    char dir[128], err[8192], p[1200], ef[1200];
    setup(dir, sizeof(dir), "s.yaml",
          "base: small.yaml\naxes:\n  services.chat.arrivals.synthetic.peak_rps: {from: 100, to: "
          "2000, step: 100}\n");
    const char *args[] = {"sweep", "s.yaml", "-o", "out", "-j", "1", NULL};
    snprintf(ef, sizeof(ef), "%s/stderr.txt", dir);
    pid_t pid = ptest_spawn(dir, ef, args);
    snprintf(p, sizeof(p), "%s/out", dir);
    bool started = false;
    for (int i = 0; i < 3000 && !started; i++) { /* the folder exists once the sweep starts */
        struct stat st;
        started = stat(p, &st) == 0;
        if (!started)
            ptest_nap();
    }
    cr_assert(started);
    cr_assert(ptest_await_files(p, "point-0001.h5", 1, 60));
    kill(-pid, SIGINT); /* the group, as Ctrl-C does */
    int rc = ptest_wait(pid, 60);
    cr_assert_eq(rc, 130, "exit %d", rc);
    char *names[32];
    size_t n = ptest_list(p, "point-", names, 32);
    size_t complete = 0;
    for (size_t i = 0; i < n && i < 32; i++)
        complete += strlen(names[i]) == strlen("point-0000.h5");
    ptest_free_list(names, n < 32 ? n : 32);
    cr_expect_eq(complete, n, "only complete point files are left (%zu of %zu)", complete, n);
    cr_expect_lt(complete, 20);
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    cr_expect_eq(meta_i64(p, "/meta", "complete"), 0);
    cr_expect_eq(meta_i64(p, "/meta", "points_done"), (int64_t)complete);
    snprintf(p, sizeof(p), "%s/out", dir);
    cr_expect_eq(ptest_list(p, "index.h5.tmp", names, 1), 0, "a temporary index is left");
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    /* run again: the rest, and only the rest */
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 20 - complete, "%s", err);
    cr_expect_eq(meta_i64(p, "/meta", "complete"), 1);
    ptest_rmdir(dir);
}

Test(sweep, a_kill_9_midway_leaves_an_incomplete_index_and_a_rerun_finishes_the_rest)
{
    char dir[128], err[8192], p[1200], ef[1200];
    setup(dir, sizeof(dir), "s.yaml",
          "base: small.yaml\naxes:\n  services.chat.arrivals.synthetic.peak_rps: {from: 100, to: "
          "2000, step: 100}\n");
    const char *args[] = {"sweep", "s.yaml", "-o", "out", "-j", "2", NULL};
    snprintf(ef, sizeof(ef), "%s/stderr.txt", dir);
    pid_t pid = ptest_spawn(dir, ef, args);
    snprintf(p, sizeof(p), "%s/out", dir);
    bool started = false;
    for (int i = 0; i < 3000 && !started; i++) {
        struct stat st;
        started = stat(p, &st) == 0;
        if (!started)
            ptest_nap();
    }
    cr_assert(started);
    cr_assert(ptest_await_files(p, "point-000", 3, 60));
    kill(pid, SIGKILL); /* the sweep alone: its workers die with it (PR_SET_PDEATHSIG) */
    int rc = ptest_wait(pid, 60);
    cr_assert_eq(rc, 128 + SIGKILL, "exit %d", rc);
    /* the index written at the start says incomplete */
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    cr_expect_eq(meta_i64(p, "/meta", "complete"), 0);
    /* complete point files at the kill, each with complete = 1 */
    snprintf(p, sizeof(p), "%s/out", dir);
    char *names[64];
    size_t n = ptest_list(p, "point-", names, 64), before = 0;
    struct timespec mt[20];
    bool had[20] = {false};
    for (size_t i = 0; i < n && i < 64; i++) {
        unsigned k;
        if (strlen(names[i]) == strlen("point-0000.h5") &&
            sscanf(names[i], "point-%4u.h5", &k) == 1 && k < 20) {
            char fp[1600];
            struct stat st;
            snprintf(fp, sizeof(fp), "%s/%s", p, names[i]);
            cr_assert_eq(stat(fp, &st), 0);
            cr_expect_eq(meta_i64(fp, "/meta", "complete"), 1, "%s looks complete but is not",
                         names[i]);
            mt[k] = st.st_mtim;
            had[k] = true;
            before++;
        }
    }
    ptest_free_list(names, n < 64 ? n : 64);
    cr_expect_lt(before, 20);
    /* the workers died with it: nothing writes into the folder any more */
    sleep(1);
    size_t n2 = ptest_list(p, "point-", names, 64);
    ptest_free_list(names, n2 < 64 ? n2 : 64);
    cr_expect_eq(n2, n, "files appeared after the kill: %zu then %zu", n, n2);
    /* run again: the rest only; the finished points untouched */
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(count_lines(err, "done ("), 20 - before, "%s", err);
    snprintf(p, sizeof(p), "%s/out/index.h5", dir);
    cr_expect_eq(meta_i64(p, "/meta", "complete"), 1);
    for (unsigned k = 0; k < 20; k++) {
        if (!had[k])
            continue;
        char fp[1200];
        struct stat st;
        snprintf(fp, sizeof(fp), "%s/out/point-%04u.h5", dir, k);
        cr_assert_eq(stat(fp, &st), 0);
        cr_expect(st.st_mtim.tv_sec == mt[k].tv_sec && st.st_mtim.tv_nsec == mt[k].tv_nsec,
                  "point %u was run again", k);
    }
    snprintf(p, sizeof(p), "%s/out", dir);
    cr_expect_eq(ptest_list(p, "index.h5.tmp", names, 1), 0, "a temporary index is left");
    ptest_rmdir(dir);
}

/* 12 points: 3 sizes × 4 loads. */
static const char twelve[] = "base: small.yaml\naxes:\n  cluster.nodes: [1, 2, 3]\n"
                             "  services.chat.arrivals.synthetic.peak_rps: [100, 200, 300, 400]\n";

static void same_points(const char *dir, const char *a, const char *b, size_t n)
{
    char cmd[4096];
    for (size_t p = 0; p < n; p++) {
        snprintf(cmd, sizeof(cmd),
                 "h5diff -q --exclude-path /meta %s/%s/point-%04zu.h5 %s/%s/point-%04zu.h5", dir, a,
                 p, dir, b, p);
        cr_expect_eq(system(cmd), 0, "point %zu differs between %s and %s", p, a, b);
    }
}

Test(sweep, twelve_points_serially_with_j2_and_under_mpirun_give_the_same_datasets)
{
    char dir[128], err[8192], cmd[8192];
    setup(dir, sizeof(dir), "s.yaml", twelve);
    const char *a1[] = {"sweep", "s.yaml", "-o", "j1", "-j", "1", NULL};
    const char *a2[] = {"sweep", "s.yaml", "-o", "j2", "-j", "2", NULL};
    cr_assert_eq(sweep(dir, a1, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(sweep(dir, a2, err, sizeof(err)), 0, "%s", err);
    same_points(dir, "j1", "j2", 12);
    const char *mpi = getenv("TIDESIM_MPI_BIN");
    struct stat st;
    if (!mpi || stat(mpi, &st) || system("command -v mpirun >/dev/null 2>&1")) {
        ptest_rmdir(dir);
        cr_skip_test("MPI part skipped: tidesim-mpi not built or mpirun not installed (make mpi; "
                     "scripts/deps.sh mpi installs OpenMPI)");
    }
    /* as root here: OpenMPI wants both variables (or --allow-run-as-root) */
    snprintf(cmd, sizeof(cmd),
             "cd %s && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             "OMPI_MCA_rmaps_base_oversubscribe=1 timeout 300 mpirun -n 2 --oversubscribe %s "
             "sweep s.yaml -o mpi >mpi.out 2>mpi.err",
             dir, mpi);
    int rc = system(cmd);
    snprintf(cmd, sizeof(cmd), "%s/mpi.err", dir);
    FILE *f = fopen(cmd, "r");
    size_t k = f ? fread(err, 1, sizeof(err) - 1, f) : 0;
    err[k] = 0;
    if (f)
        fclose(f);
    cr_assert_eq(rc, 0, "mpirun: %s", err);
    same_points(dir, "j1", "mpi", 12);
    snprintf(cmd, sizeof(cmd), "h5diff -q --exclude-path /meta %s/j1/index.h5 %s/mpi/index.h5", dir,
             dir);
    cr_expect_eq(system(cmd), 0, "the indexes differ");
    cr_expect_eq(count_lines(err, "done ("), 12, "rank 0 reports each point once: %s", err);
    ptest_rmdir(dir);
}

Test(sweep, check_compare_and_plot_read_an_index)
{
    char dir[128], err[8192], cmd[4096];
    setup(dir, sizeof(dir), "s.yaml",
          "base: small.yaml\nreplications: 2\naxes:\n  policy.name: [dedicated, kueue]\n"
          "  cluster.nodes: [1, 2]\n");
    const char *args[] = {"sweep", "s.yaml", "-o", "out", "-j", "2", NULL};
    cr_assert_eq(sweep(dir, args, err, sizeof(err)), 0, "%s", err);
    char bin[2048];
    ptest_bin_abs(bin, sizeof(bin));
    /* check every point: a bound every point meets, then one none meets */
    snprintf(cmd, sizeof(cmd), "cd %s && '%s' check out/index.h5 --min-slo 0.5 >c1.txt", dir, bin);
    cr_expect_eq(WEXITSTATUS(system(cmd)), 0);
    snprintf(cmd, sizeof(cmd), "cd %s && grep -c 'all gates hold' c1.txt", dir);
    FILE *pf = popen(cmd, "r");
    int holds = 0;
    cr_assert_eq(fscanf(pf, "%d", &holds), 1);
    pclose(pf);
    cr_expect_eq(holds, 4, "every point is gated");
    snprintf(cmd, sizeof(cmd),
             "cd %s && '%s' check out/index.h5 --max-p99-ms 0.001 --where policy.name=kueue "
             ">c2.txt",
             dir, bin);
    cr_expect_eq(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof(cmd), "cd %s && grep -c '^point' c2.txt", dir);
    pf = popen(cmd, "r");
    int lines = 0;
    cr_assert_eq(fscanf(pf, "%d", &lines), 1);
    pclose(pf);
    cr_expect_eq(lines, 2, "--where chooses the 2 kueue points");
    /* compare: points 1 and 3 (1 vs 2 nodes? no: dedicated 2 nodes vs kueue 2 nodes) */
    snprintf(cmd, sizeof(cmd),
             "cd %s && '%s' compare out/index.h5 --where cluster.nodes=2 >cmp.txt && grep -q "
             "'A = point 1 (policy.name=dedicated cluster.nodes=2)' cmp.txt && grep -q 'B = point "
             "3 (policy.name=kueue cluster.nodes=2)' cmp.txt && grep -q '(paired)' cmp.txt",
             dir, bin);
    cr_expect_eq(system(cmd), 0, "compare on the index");
    /* plot: metric-against-size curves */
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof(cmd),
                 "cd %s && '%s' plot out/index.h5 -o charts >/dev/null && test -s "
                 "charts/index_slo.png && test -s charts/index_busy.png && grep -c '^[0-9]' "
                 "charts/data/index_busy.dat",
                 dir, bin);
        pf = popen(cmd, "r");
        int rows = 0;
        cr_expect_eq(fscanf(pf, "%d", &rows), 1);
        cr_expect_eq(pclose(pf), 0, "plot on the index");
        cr_expect_eq(rows, 4, "two curves of two sizes");
    }
    ptest_rmdir(dir);
}

/*
 * Dispatch order (sweep_point_order): the costliest points first. small.yaml's chat profile is
 * a cosine from peak to 0.2 × peak, whose mean is 0.6 × peak; one hour; 4 cards per node. By
 * hand: cost = 0.6 × peak × 3600 + 4 × nodes × 3600 / 10, so peak 300 (648,000 requests) comes
 * before 200 (432,000) before 100 (216,000), and at equal peak 2 nodes (+2,880) before 1 (+1,440).
 */
Test(sweep, points_are_handed_out_costliest_first)
{
    char dir[128], cwd[1024], text[2048], path[1200];
    ptest_tmpdir(dir, sizeof(dir), "sweep-order");
    cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
    snprintf(text, sizeof(text),
             "base: %s/tests/data/scenarios/small.yaml\naxes:\n  cluster.nodes: [1, 2]\n"
             "  services.chat.arrivals.synthetic.peak_rps: [100, 300, 200]\n",
             cwd);
    snprintf(path, sizeof(path), "%s/s.yaml", dir);
    ptest_write(path, text);
    struct sweep sw;
    struct conf_err err;
    cr_assert_eq(sweep_load(&sw, path, &err), 0, "%s", err.msg);
    cr_assert_eq(sw.npoints, 6);
    /* grid order: (1,100) (1,300) (1,200) (2,100) (2,300) (2,200) */
    const double peak[6] = {100, 300, 200, 100, 300, 200}, nodes[6] = {1, 1, 1, 2, 2, 2};
    for (size_t p = 0; p < 6; p++) {
        double want = 0.6 * peak[p] * 3600 + 4 * nodes[p] * 3600 / 10.0;
        cr_expect(fabs(sweep_point_cost(&sw, p) - want) < 1e-6 * want,
                  "point %zu: cost %.3f, by hand %.3f", p, sweep_point_cost(&sw, p), want);
    }
    size_t order[6];
    const size_t want[6] = {4, 1, 5, 2, 3, 0};
    sweep_point_order(&sw, NULL, order);
    for (size_t i = 0; i < 6; i++)
        cr_expect_eq(order[i], want[i], "place %zu: point %zu, expected %zu", i, order[i], want[i]);
    /* points already done go last, in grid order */
    const bool done[6] = {false, true, false, false, true, false};
    const size_t want_done[6] = {5, 2, 3, 0, 1, 4};
    sweep_point_order(&sw, done, order);
    for (size_t i = 0; i < 6; i++)
        cr_expect_eq(order[i], want_done[i], "with points 1 and 4 done, place %zu: point %zu", i,
                     order[i]);
    sweep_release(&sw);
    ptest_rmdir(dir);
}
