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

/* A sweep of 4 points (2 policies × 1..2 nodes, 1 h each) in dir/out; its index in idx. */
static void small_sweep(const char *dir, char *idx, size_t n)
{
    char cmd[1200], *log = NULL;
    snprintf(cmd, sizeof(cmd),
             "cp tests/data/scenarios/small.yaml %s/small.yaml && printf 'base: small.yaml\\n"
             "axes:\\n  policy.name: [dedicated, kueue]\\n  cluster.nodes: [1, 2]\\n' >%s/s.yaml",
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s sweep %s/s.yaml -o %s/out -j 2", atest_bin(), dir, dir);
    cr_assert_eq(atest_run(cmd, &log), 0, "%s", log);
    free(log);
    snprintf(idx, n, "%s/out/index.h5", dir);
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
    small_sweep(dir, idx, sizeof(idx));
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
    small_sweep(dir, idx, sizeof(idx));

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
