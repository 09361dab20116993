/*
 * test_index_reads.c — a sweep's index file (analysis/sweepidx.h) is read in
 * a child process before the command reads it (docs/security.md, "libhdf5
 * crashing or hanging inside a file"), as results files are: the child of
 * sweepidx_is_index_vet reads the whole index as every reader of one does,
 * and the readers take its verdict.
 *
 * A copy of a sweep's index with one column of /table damaged (its deflated
 * chunk overwritten: the metadata still pass every check, only reading the
 * values fails) is refused by report, check, plot and compare with
 * "FILE: /table/util_busy_mean: cannot read the data (damaged file?)" and the
 * commands' exit codes for an unreadable file (report, plot and compare 1,
 * check 2), before any output. The intact index reads as it did (its points, every gate holding,
 * its charts); a point file damaged in a column check reads is refused
 * through the results files' own child. The verdict-taking itself is shown
 * on the API: a reader handed a refusal for the file as it is takes it
 * without reading the file, and a verdict on an older state of the file is
 * not taken.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analysis/sweepidx.h"
#include "tests/analysistest.h"

/* `tidesim ARGS`, its exit status (-1: killed by a signal); its output in *out (freed by the
 * caller). */
static int tidesim(char **out, const char *args)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "%s %s", atest_bin(), args);
    return atest_run(cmd, out);
}

static bool have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

Test(index_reads, a_damaged_index_is_refused_by_every_command_and_an_intact_one_reads_as_before,
     .timeout = 120)
{
    char dir[64], idx[128], bad[128], args[1000];
    atest_tmpdir(dir, sizeof(dir));
    atest_small_sweep(dir, idx, sizeof(idx));
    snprintf(bad, sizeof(bad), "%s/out/bad.h5", dir); /* beside the points: they resolve */
    snprintf(args, sizeof(args), "cp %s %s", idx, bad);
    cr_assert_eq(system(args), 0);
    atest_damage_column(bad, "/table/util_busy_mean");

    /* Still an index (its /meta is intact), and the child that tells so read the table. */
    struct results_vet v;
    cr_assert(sweepidx_is_index_vet(bad, RESULTS_BY_REPORT, &v));
    const char *why = "/table/util_busy_mean: cannot read the data (damaged file?)";
    cr_expect(v.other && v.rc == -EIO && strstr(v.why, why), "rc %d: %s", v.rc, v.why);
    cr_expect(sweepidx_is_index_vet(idx, RESULTS_BY_REPORT, &v) && v.other && v.rc == 0,
              "rc %d: %s", v.rc, v.why);

    char *out = NULL;
    snprintf(args, sizeof(args), "report %s", bad);
    cr_expect_eq(tidesim(&out, args), 1, "%s", out);
    cr_expect(strstr(out, bad) && strstr(out, why), "%s", out);
    cr_expect(strstr(out, "point") == NULL, "no half table: %s", out);
    free(out);
    snprintf(args, sizeof(args), "report %s --format json", bad);
    cr_expect_eq(tidesim(&out, args), 1, "%s", out);
    cr_expect(strstr(out, why) && !strstr(out, "\"table\""), "%s", out);
    free(out);
    snprintf(args, sizeof(args), "check %s --min-slo 0.5", bad);
    cr_expect_eq(tidesim(&out, args), 2, "%s", out);
    cr_expect(strstr(out, bad) && strstr(out, why), "%s", out);
    cr_expect(strstr(out, "gates hold") == NULL, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "check %s --min-slo 0.5 --where policy.name=kueue", bad);
    cr_expect_eq(tidesim(&out, args), 2, "%s", out);
    cr_expect(strstr(out, why), "%s", out);
    free(out);
    snprintf(args, sizeof(args), "compare %s --where cluster.nodes=2", bad);
    cr_expect_eq(tidesim(&out, args), 1, "an unreadable file (its --help): %s", out);
    cr_expect(strstr(out, why), "%s", out);
    free(out);
    if (have_gnuplot()) {
        snprintf(args, sizeof(args), "plot %s -o %s/charts --format svg", bad, dir);
        cr_expect_eq(tidesim(&out, args), 1, "%s", out);
        cr_expect(strstr(out, bad) && strstr(out, why), "%s", out);
        free(out);
        snprintf(args, sizeof(args), "%s/charts/index_busy.svg", dir);
        cr_expect(!atest_exists(args), "no chart of the damaged index");
    } else {
        cr_log_warn("gnuplot not found: plot of a damaged index not tested");
    }

    /* The intact index: its 4 points (2 policies × 2 sizes), every gate held, its charts. */
    snprintf(args, sizeof(args), "report %s", idx);
    cr_expect_eq(tidesim(&out, args), 0, "%s", out);
    cr_expect(strstr(out, "4 point(s), 4 done") &&
                  strstr(out, "  3            kueue              2"),
              "%s", out);
    free(out);
    snprintf(args, sizeof(args), "check %s --min-slo 0.5", idx);
    cr_expect_eq(tidesim(&out, args), 0, "%s", out);
    cr_expect(strstr(out, "check: 4 of 4 point(s) hold every gate"), "%s", out);
    free(out);
    if (have_gnuplot()) {
        snprintf(args, sizeof(args), "plot %s -o %s/charts --format svg", idx, dir);
        cr_expect_eq(tidesim(&out, args), 0, "%s", out);
        free(out);
        snprintf(args, sizeof(args), "%s/charts/index_busy.svg", dir);
        cr_expect(atest_exists(args), "the intact index's chart");
    }

    /* A point file damaged in a column check reads: refused by the results files' child. */
    char pt[128];
    snprintf(pt, sizeof(pt), "%s/out/point-0001.h5", dir);
    atest_damage_column(pt, "/jobs/submit_s");
    snprintf(args, sizeof(args), "check %s --min-slo 0.5", idx);
    cr_expect_eq(tidesim(&out, args), 2, "%s", out);
    cr_expect(strstr(out, pt) && strstr(out, "/jobs/submit_s: cannot read the data"), "%s", out);
    free(out);
    atest_rmdir(dir);
}

Test(index_reads, a_reader_takes_the_childs_verdict_on_the_file_as_it_still_is, .timeout = 60)
{
    char dir[64], idx[128], err[1200];
    atest_tmpdir(dir, sizeof(dir));
    atest_small_sweep(dir, idx, sizeof(idx));

    struct results_vet v;
    cr_assert(sweepidx_is_index_vet(idx, RESULTS_BY_CHECK, &v));
    cr_assert(v.other && v.rc == 0, "%s", v.why);
    struct sweepidx_table t;
    cr_expect_eq(sweepidx_table_load(&t, idx, &v, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(t.np, 4);
    sweepidx_table_release(&t);

    /* A refusal for the file as it is: taken, the intact file not read (nothing loaded). */
    struct results_vet no = v;
    no.rc = -EIO;
    snprintf(no.why, sizeof(no.why), "%s: /table/done: refused by the child", idx);
    cr_expect_eq(sweepidx_table_load(&t, idx, &no, err, sizeof(err)), -EIO);
    cr_expect_str_eq(err, no.why);
    cr_expect_eq(t.np, 0);
    sweepidx_table_release(&t);
    struct sweepidx_points pts;
    cr_expect_eq(sweepidx_select(idx, &no, NULL, &pts, err, sizeof(err)), -EIO);
    cr_expect_str_eq(err, no.why);
    sweepidx_points_release(&pts);
    FILE *null = fopen("/dev/null", "w");
    cr_assert_not_null(null);
    cr_expect_eq(sweepidx_report(null, idx, false, &no, err, sizeof(err)), -EIO);
    fclose(null);

    /* The file changed since (its times): that verdict is not taken, a child of the reader's
     * own reads the file as it is now. */
    struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    cr_assert_eq(utimensat(AT_FDCWD, idx, ts, 0), 0);
    cr_expect_not(results_vet_current(&no, idx));
    cr_expect_eq(sweepidx_table_load(&t, idx, &no, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(t.np, 4);
    sweepidx_table_release(&t);
    /* Not an index: results_vet's child says so (other false), and a reader refuses it. */
    char res[128];
    snprintf(res, sizeof(res), "%s/out/point-0000.h5", dir);
    cr_expect_not(sweepidx_is_index_vet(res, RESULTS_BY_CHECK, &v));
    cr_expect_not(v.other);
    cr_expect_eq(sweepidx_table_load(&t, res, NULL, err, sizeof(err)), -EINVAL, "%s", err);
    cr_expect(strstr(err, "not a tidesim sweep index"), "%s", err);
    sweepidx_table_release(&t);
    atest_rmdir(dir);
}

/* Add a 1-row column to /timeseries of results file f, whose columns must be equally long. */
static void add_short_column(const char *f)
{
    hid_t file = H5Fopen(f, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(file, 0, "%s", f);
    hsize_t one = 1;
    hid_t sp = H5Screate_simple(1, &one, NULL);
    hid_t d = H5Dcreate2(file, "/timeseries/short", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    cr_assert_geq(d, 0);
    double v = 1;
    cr_assert_geq(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(file);
}

/* Rewrite /meta complete of results file f as an array of two 1s. */
static void complete_as_array(const char *f)
{
    hid_t file = H5Fopen(f, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(file, 0, "%s", f);
    hid_t m = H5Gopen2(file, "meta", H5P_DEFAULT);
    cr_assert_geq(m, 0);
    cr_assert_geq(H5Adelete(m, "complete"), 0);
    hsize_t two = 2;
    hid_t sp = H5Screate_simple(1, &two, NULL);
    hid_t a = H5Acreate2(m, "complete", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(a, 0);
    int ones[2] = {1, 1};
    cr_assert_geq(H5Awrite(a, H5T_NATIVE_INT, ones), 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Gclose(m);
    H5Fclose(file);
}

Test(index_reads, a_point_file_found_on_a_rerun_is_judged_in_a_child, .timeout = 120)
{
    /* A sweep run again into its folder skips the points whose files are complete results
     * files (sweepidx_point_complete). Those files may be anything; they are read in a child
     * now, by the read the index makes of them (results_open_for(path, 0)), and what is not a
     * complete results file by that read is run again: a file that says it is complete but
     * whose /timeseries columns differ in length (before: skipped as complete, then the index
     * refused it and the sweep failed), one whose /meta complete is an array, and a cut
     * copy. */
    char dir[64], idx[128], p0[160], p1[160], p2[160], p3[160], cmd[1200], *log = NULL;
    atest_tmpdir(dir, sizeof(dir));
    atest_small_sweep(dir, idx, sizeof(idx));
    snprintf(p0, sizeof(p0), "%s/out/point-0000.h5", dir);
    snprintf(p1, sizeof(p1), "%s/out/point-0001.h5", dir);
    snprintf(p2, sizeof(p2), "%s/out/point-0002.h5", dir);
    snprintf(p3, sizeof(p3), "%s/out/point-0003.h5", dir);
    cr_expect_eq(sweepidx_point_complete(p0), 1);
    cr_expect_eq(sweepidx_point_complete(p1), 1);

    add_short_column(p1);
    complete_as_array(p3);
    snprintf(cmd, sizeof(cmd), "head -c 3000 %s >%s.cut && mv %s.cut %s", p0, p2, p2, p2);
    cr_assert_eq(system(cmd), 0);
    cr_expect_eq(sweepidx_point_complete(p1), 0, "a file the index refuses is no complete point");
    cr_expect_eq(sweepidx_point_complete(p2), 0, "a cut file is no complete point");
    cr_expect_eq(sweepidx_point_complete(p3), 0, "an array-valued complete is no complete point");
    char missing[200];
    snprintf(missing, sizeof(missing), "%s/out/point-0009.h5", dir);
    cr_expect_eq(sweepidx_point_complete(missing), 0);

    /* Run again: the three are run anew, the index holds the 4 points, all complete. */
    snprintf(cmd, sizeof(cmd), "%s sweep %s/s.yaml -o %s/out -j 2", atest_bin(), dir, dir);
    cr_assert_eq(atest_run(cmd, &log), 0, "%s", log);
    free(log);
    cr_expect_eq(sweepidx_point_complete(p1), 1);
    cr_expect_eq(sweepidx_point_complete(p2), 1);
    cr_expect_eq(sweepidx_point_complete(p3), 1);
    struct sweepidx_table t;
    char err[1200];
    cr_expect_eq(sweepidx_table_load(&t, idx, NULL, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(t.np, 4);
    sweepidx_table_release(&t);

    /* The results fuzzer's reproducer, on which libhdf5 crashes or not depending on its heap
     * (docs/security.md): whether it passes for complete or not, the sweep never dies of it.
     * Either it is run again, or the index's own child refuses it and the sweep says which
     * file, exit 1. Before, the completeness check read it in the sweep's process. */
    snprintf(cmd, sizeof(cmd),
             "cp tests/data/fuzz/results/crash-44d8fb0d6c4db8b6a7a4f2351f7b3ce86a08e6f5 %s", p1);
    cr_assert_eq(system(cmd), 0);
    int c = sweepidx_point_complete(p1);
    cr_expect(c == 0 || c == 1);
    snprintf(cmd, sizeof(cmd), "%s sweep %s/s.yaml -o %s/out -j 2", atest_bin(), dir, dir);
    int rc = atest_run(cmd, &log);
    cr_expect(rc == 0 || (rc == 1 && strstr(log, "point-0001.h5: ")), "exit %d: %s", rc, log);
    free(log);
    atest_rmdir(dir);
}

/*
 * The ID libhdf5 gives the next file opened in this process. IDs of one type only grow, so
 * two of these around a call tell whether the call opened a file with libhdf5 here.
 */
static hid_t next_file_id(const char *dir)
{
    char p[128];
    snprintf(p, sizeof(p), "%s/probe.h5", dir);
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    H5Fclose(f);
    return f;
}

/*
 * Like a results file, an index is read in a child only, which sends the command what it
 * read: report, check, compare and plot make no libhdf5 call on it (before, the command read
 * it again after its child). Shown by the file IDs libhdf5 hands out in this process.
 */
Test(index_reads, the_command_opens_no_index_with_libhdf5, .timeout = 60)
{
    char dir[64], idx[128], err[1200];
    atest_tmpdir(dir, sizeof(dir));
    atest_small_sweep(dir, idx, sizeof(idx));
    hid_t before = next_file_id(dir);
    struct sweepidx_table t;
    cr_expect_eq(sweepidx_table_load(&t, idx, NULL, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(t.np, 4);
    cr_expect_str_eq(t.axes[0], "policy.name");
    sweepidx_table_release(&t);
    struct results_vet v;
    cr_assert(sweepidx_is_index_vet(idx, RESULTS_BY_REPORT, &v));
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    cr_expect_eq(sweepidx_report(out, idx, false, &v, err, sizeof(err)), 0, "%s", err);
    fclose(out);
    cr_expect(strstr(buf, "4 point(s), 4 done"), "%s", buf);
    free(buf);
    struct sweepidx_points pts;
    struct sweepidx_sel sel = {.nwhere = 1, .where = {"policy.name=kueue"}};
    cr_expect_eq(sweepidx_select(idx, &v, &sel, &pts, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(pts.n, 2u);
    sweepidx_points_release(&pts);
    results_vet_release(&v);
    char *hash = NULL;
    cr_expect_eq(sweepidx_read_hash(idx, &hash, err, sizeof(err)), 0, "%s", err);
    cr_expect(hash && strlen(hash) > 8, "the sweep's hash: %s", hash ? hash : "(none)");
    free(hash);
    cr_expect_eq(next_file_id(dir), before + 1,
                 "a file was opened with libhdf5 in the command's process");
    atest_rmdir(dir);
}

/* An index's answer, cut anywhere or damaged anywhere, is refused or decoded, never a crash
 * (AddressSanitizer in make test SANITIZE=...): it is as hostile as the file. */
Test(index_reads, a_cut_or_damaged_index_answer_is_refused_or_read_whole, .timeout = 120)
{
    char dir[64], idx[128], err[1200];
    atest_tmpdir(dir, sizeof(dir));
    atest_small_sweep(dir, idx, sizeof(idx));
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    cr_assert_eq(sweepidx_answer(idx, fileno(f), err, sizeof(err)), 0, "%s", err);
    long end = lseek(fileno(f), 0, SEEK_END);
    cr_assert_gt(end, 0);
    size_t len = (size_t)end;
    unsigned char *a = malloc(len);
    cr_assert_eq(pread(fileno(f), a, len, 0), end);
    fclose(f);
    struct sweepidx_table t;
    cr_assert_eq(sweepidx_from_answer(&t, a, len), 0);
    cr_expect_eq(t.np, 4u);
    sweepidx_table_release(&t);
    for (size_t cut = 0; cut < len; cut++)
        cr_assert_eq(sweepidx_from_answer(&t, a, cut), -EIO, "cut at %zu of %zu", cut, len);
    size_t refused = 0, read = 0;
    static const unsigned char junk[] = {0xff, 0x00, 0x80, 0x7f};
    for (size_t i = 0; i < len; i++) {
        unsigned char keep = a[i];
        for (size_t j = 0; j < sizeof(junk); j++) {
            if (junk[j] == keep)
                continue;
            a[i] = junk[j];
            int rc = sweepidx_from_answer(&t, a, len);
            cr_assert(rc == 0 || rc == -EIO, "byte %zu set to %#x: %d", i, junk[j], rc);
            if (rc == 0) {
                read++;
                for (size_t p = 0; p < t.np; p++) /* what readers use: every cell there */
                    for (size_t x = 0; x < t.naxes; x++)
                        cr_assert_not_null(t.vals[p * t.naxes + x]);
            } else {
                refused++;
            }
            sweepidx_table_release(&t);
        }
        a[i] = keep;
    }
    cr_expect(refused > 100 && read > 100, "refused %zu, read %zu of %zu bytes", refused, read,
              len);
    cr_log_info("index answer of %zu bytes: %zu damaged copies refused, %zu read", len, refused,
                read);
    free(a);
    atest_rmdir(dir);
}
