/*
 * test_analysis_cli.c — replications, report, compare and check as a user runs
 * them: the merged file's intervals equal Student-t intervals computed by hand
 * from the separate runs; identical files compare as not different, clearly
 * different ones as significant; check's exit codes and messages; an
 * interrupted replicated run leaves only FILE.partial with complete = 0.
 */
#include <math.h>

#include "analysis/compare.h"
#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/results.h"
#include "tests/analysistest.h"
#include "tests/h5test.h"

#define SMALL "tests/data/scenarios/small.yaml"
#define BUSY  "tests/data/scenarios/small_busy.yaml"

Test(analysis_cli, replications_ci_equals_hand_computed)
{
    char dir[64], merged[128], single[128], seed[32];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(merged, sizeof(merged), "%s/r3.h5", dir);
    atest_sim(SMALL, merged, "--replications 3");
    cr_expect(atest_exists(merged));

    /* The same seeds run one by one (small.yaml's seed is 11). */
    const char *keys[] = {"util_busy", "slo_share", "training_gpu_hours"};
    double v[3][3];
    for (int i = 0; i < 3; i++) {
        snprintf(single, sizeof(single), "%s/s%d.h5", dir, i);
        snprintf(seed, sizeof(seed), "--seed %d", 11 + i);
        atest_sim(SMALL, single, seed);
        for (int k = 0; k < 3; k++)
            v[k][i] = h5test_file_f64(single, "/summary", keys[k]);
        char rep[32];
        snprintf(rep, sizeof(rep), "/rep%04d/meta", i);
        cr_expect_float_eq(h5test_file_f64(merged, rep, "seed"), 11.0 + i, 1e-9);
        cr_expect_float_eq(h5test_file_f64(merged, rep, "replication"), (double)i, 1e-9);
    }
    for (int k = 0; k < 3; k++) {
        double mean = (v[k][0] + v[k][1] + v[k][2]) / 3, ss = 0;
        for (int i = 0; i < 3; i++)
            ss += (v[k][i] - mean) * (v[k][i] - mean);
        double half = 4.302653 * sqrt(ss / 2) / sqrt(3.0); /* t(0.975, 2) = 4.302653 */
        char name[64];
        snprintf(name, sizeof(name), "%s_mean", keys[k]);
        cr_expect_float_eq(h5test_file_f64(merged, "/summary", name), mean,
                           1e-12 * fabs(mean) + 1e-15);
        snprintf(name, sizeof(name), "%s_ci95", keys[k]);
        cr_expect_float_eq(h5test_file_f64(merged, "/summary", name), half, 1e-6 * half + 1e-15,
                           "%s", keys[k]);
        /* The reader computes the same from the replication groups. */
        struct results r;
        char err[256];
        cr_assert_eq(results_open(&r, merged, err, sizeof(err)), 0, "%s", err);
        const struct results_metric *m = results_table_find(&r.headline, keys[k]);
        cr_assert_not_null(m);
        cr_expect_eq(m->s.n, 3);
        cr_expect_float_eq(m->s.ci95, half, 1e-6 * half + 1e-15);
        results_release(&r);
    }
    cr_expect_float_eq(h5test_file_f64(merged, "/summary", "replications"), 3, 0);
    cr_expect_float_eq(h5test_file_f64(merged, "/meta", "complete"), 1, 0);

    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), merged);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "3 replications, seeds 11..13") != NULL, "%s", out);
    cr_expect(strstr(out, "95% CI") != NULL);
    free(out);
    atest_rmdir(dir);
}

Test(analysis_cli, report_formats)
{
    char dir[64], f[128], cmd[512], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    atest_sim(SMALL, f, NULL);
    double busy = h5test_file_f64(f, "/summary", "util_busy");
    char want[64];
    snprintf(want, sizeof(want), "%.3f", busy * 100);

    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 0);
    cr_expect(strstr(out, "single run, seed 11 (no confidence intervals)") != NULL, "%s", out);
    cr_expect(strstr(out, want) != NULL, "util_busy %s not in %s", want, out);
    cr_expect(strstr(out, "GPU-time useful") != NULL);
    free(out);

    snprintf(cmd, sizeof(cmd), "%s report %s --format markdown", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 0);
    cr_expect(strstr(out, "| metric | value | unit |\n| --- | ---: | ---: |") != NULL, "%s", out);
    cr_expect(strstr(out, "| GPU-time useful | ") != NULL, "%s", out);
    free(out);

    /* JSON parses (python3 is part of the build image) and holds the stored value. */
    snprintf(cmd, sizeof(cmd),
             "%s report %s --format json | /usr/bin/python3 -c 'import json,sys; "
             "d=json.load(sys.stdin); print(repr(d[\"headline\"][\"util_busy\"][\"mean\"]), "
             "d[\"headline\"][\"util_useful\"][\"mean\"], d[\"replications\"])'",
             atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    double got = strtod(out, NULL);
    cr_expect_float_eq(got, busy, 1e-15, "%s", out);
    /* util_useful is stored now: a number, never above busy. */
    char *sp = strchr(out, ' ');
    cr_assert(sp != NULL, "%s", out);
    double useful = strtod(sp + 1, NULL);
    cr_expect(useful > 0 && useful <= busy + 1e-12, "%s", out);
    cr_expect(strstr(out, " 1\n") != NULL, "%s", out);
    free(out);

    snprintf(cmd, sizeof(cmd), "%s report %s --format yaml", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    snprintf(cmd, sizeof(cmd), "%s report %s/missing.h5", atest_bin(), dir);
    cr_expect_eq(atest_run(cmd, NULL), 1);
    atest_rmdir(dir);
}

static void open3(struct results *r, const char *p)
{
    char err[256];
    cr_assert_eq(results_open(r, p, err, sizeof(err)), 0, "%s", err);
}

Test(analysis_cli, compare_identical_and_different)
{
    char dir[64], a[128], a2[128], b[128], s1[128], s2[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(a, sizeof(a), "%s/a.h5", dir);
    snprintf(a2, sizeof(a2), "%s/a2.h5", dir);
    snprintf(b, sizeof(b), "%s/b.h5", dir);
    snprintf(s1, sizeof(s1), "%s/s1.h5", dir);
    snprintf(s2, sizeof(s2), "%s/s2.h5", dir);
    atest_sim(SMALL, a, "--replications 3");
    atest_sim(SMALL, a2, "--replications 3"); /* same seeds: identical metrics */
    atest_sim(BUSY, b, "--replications 3");
    atest_sim(SMALL, s1, NULL);
    atest_sim(BUSY, s2, NULL);

    struct results ra, ra2, rb;
    open3(&ra, a);
    open3(&ra2, a2);
    open3(&rb, b);
    const struct results *same[] = {&ra, &ra2}, *diff[] = {&ra, &rb};
    cr_expect_eq(compare_count_significant(same, 2), 0);
    cr_expect_gt(compare_count_significant(diff, 2), 0);
    results_release(&ra);
    results_release(&ra2);
    results_release(&rb);

    snprintf(cmd, sizeof(cmd), "%s compare %s %s", atest_bin(), a, a2);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "yes") == NULL, "identical files reported different:\n%s", out);
    cr_expect(strstr(out, "requests arrived") != NULL);
    free(out);

    /* Four times the load: significantly more arrivals and a worse p99 latency. */
    snprintf(cmd, sizeof(cmd), "%s compare %s %s --format markdown", atest_bin(), a, b);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    const char *row = strstr(out, "| requests arrived |");
    cr_assert_not_null(row, "%s", out);
    const char *eol = strchr(row, '\n');
    cr_expect(strstr(row, "| yes |") != NULL && strstr(row, "| yes |") < eol, "%.*s",
              (int)(eol - row), row);
    row = strstr(out, "| p99 latency, worst service |");
    cr_assert_not_null(row);
    eol = strchr(row, '\n');
    cr_expect(strstr(row, "| yes (worse) |") != NULL && strstr(row, "| yes (worse) |") < eol,
              "%.*s", (int)(eol - row), row);
    free(out);

    snprintf(cmd, sizeof(cmd), "%s compare %s %s", atest_bin(), s1, s2);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "no CI (single run)") != NULL, "%s", out);
    cr_expect(strstr(out, "yes") == NULL, "%s", out);
    free(out);

    snprintf(cmd, sizeof(cmd), "%s compare %s", atest_bin(), a);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    snprintf(cmd, sizeof(cmd), "%s compare %s %s/nope.h5", atest_bin(), a, dir);
    cr_expect_eq(atest_run(cmd, NULL), 1);
    atest_rmdir(dir);
}

Test(analysis_cli, check_exit_codes_and_messages)
{
    char dir[64], f[128], base[128], cmd[1024], *out = NULL, want[256];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    snprintf(base, sizeof(base), "%s/busy.h5", dir);
    atest_sim(SMALL, f, NULL);
    atest_sim(BUSY, base, NULL);
    double busy = h5test_file_f64(f, "/summary", "util_busy");
    double p99 = h5test_file_f64(f, "/summary", "p99_ms_worst_service");
    cr_assert(busy > 0.2 && busy < 0.95, "%g", busy);

    /* 0: every gate holds. */
    snprintf(cmd, sizeof(cmd),
             "%s check %s --min-util 0.2 --min-slo 90%% --max-p99-ms 1000 --max-ckpt-overhead "
             "0.1",
             atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "check: all 4 gates hold") != NULL, "%s", out);

    free(out);

    /* 1: two gates fail, one line each with value and bound. */
    snprintf(cmd, sizeof(cmd), "%s check %s --min-util 0.99 --max-p99-ms 0.5 --min-slo 0.5",
             atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 1, "%s", out);
    snprintf(want, sizeof(want), "FAIL min-util: util_busy = %.4g < bound 0.99\n", busy);
    cr_expect(strstr(out, want) != NULL, "want '%s' in:\n%s", want, out);
    snprintf(want, sizeof(want), "FAIL max-p99-ms: p99_ms_worst_service = %.4g ms > bound 0.5 ms\n",
             p99);
    cr_expect(strstr(out, want) != NULL, "want '%s' in:\n%s", want, out);
    cr_expect(strstr(out, "min-slo") == NULL, "%s", out);
    cr_expect(strstr(out, "check: 2 of 3 gates failed") != NULL, "%s", out);
    free(out);

    /* Against a baseline: itself passes; a much busier baseline makes the jobs/util worse. */
    snprintf(cmd, sizeof(cmd), "%s check %s --against %s", atest_bin(), f, f);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s check %s --against %s --tolerance 1%%", atest_bin(), f, base);
    cr_expect_eq(atest_run(cmd, &out), 1, "%s", out);
    cr_expect(strstr(out, "FAIL against: ") != NULL, "%s", out);
    cr_expect(strstr(out, "(single run: compared by value) > tolerance 1.00 %") != NULL, "%s", out);
    free(out);

    /* 2: usage errors and unreadable files. */
    snprintf(cmd, sizeof(cmd), "%s check %s --min-util abc", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 2);
    cr_expect(strstr(out, "--min-util needs a non-negative fraction") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s check %s", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 2);
    cr_expect(strstr(out, "no gate given") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s check %s/missing.h5 --min-util 0.5", atest_bin(), dir);
    cr_expect_eq(atest_run(cmd, &out), 2);
    cr_expect(strstr(out, "cannot open as an HDF5 results file") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s check %s --min-util 0.5 --tolerance 0.1", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    atest_rmdir(dir);
}

Test(analysis_cli, interrupted_replicated_run_is_partial)
{
    char dir[64], f[128], partial[160], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/int.h5", dir);
    snprintf(partial, sizeof(partial), "%s.partial", f);
    snprintf(cmd, sizeof(cmd),
             "sh -c '%s run scenarios/default.yaml -o %s --quiet --replications 2 & p=$!; "
             "sleep 1; kill -INT $p; wait $p'",
             atest_bin(), f);
    int rc = atest_run(cmd, &out);
    cr_expect_eq(rc, 130, "exit %d: %s", rc, out);
    cr_expect(strstr(out, "merged into") != NULL, "%s", out);
    free(out);
    cr_expect(!atest_exists(f), "an interrupted run left a file that looks complete");
    cr_assert(atest_exists(partial));
    cr_expect_float_eq(h5test_file_f64(partial, "/meta", "complete"), 0, 0);
    cr_expect_lt(h5test_file_f64(partial, "/meta", "sim_time_reached_s"),
                 h5test_file_f64(partial, "/meta", "duration_s"));
    cr_expect_float_eq(h5test_file_f64(partial, "/rep0000/meta", "complete"), 0, 0);
    /* No per-replication leftovers. */
    snprintf(cmd, sizeof(cmd), "ls %s | grep -c rep", dir);
    cr_expect_eq(atest_run(cmd, &out), 1, "leftovers: %s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), partial);
    cr_expect_eq(atest_run(cmd, &out), 0);
    cr_expect(strstr(out, "WARNING: incomplete run") != NULL, "%s", out);
    free(out);
    atest_rmdir(dir);
}
