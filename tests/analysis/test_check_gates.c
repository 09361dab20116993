/*
 * test_check_gates.c — `tidesim check`'s training gates (backlog drained by,
 * mean queueing delay, training GPU-hours per day), the generic --min/--max
 * gates on any /summary figure, and --format junit checked against the
 * elements the JUnit schema requires (parsed with Python's ElementTree).
 *
 * References: the figures are recomputed here from the file's /jobs and
 * /summary datasets by hand (not through analysis/), and every gate is tried
 * just above and just below its figure so both verdicts are reached.
 */
#include <math.h>

#include <hdf5.h>

#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "tests/analysistest.h"
#include "tests/h5test.h"

#define SMALL   "tests/data/scenarios/small.yaml"
#define BACKLOG "tests/data/scenarios/backlog_long.yaml"

/* The hand count: latest end of a job submitted at t = 0 in replication group `rep`. */
static double backlog_end(const char *file, const char *rep, int *njobs)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    char path[64];
    snprintf(path, sizeof(path), "%s/jobs", rep);
    hid_t g = H5Gopen2(f, path, H5P_DEFAULT);
    cr_assert_geq(g, 0, "%s", path);
    double *sub, *end, *st;
    size_t n, m1, m2;
    cr_assert_eq(h5_read_f64(g, "submit_s", &sub, &n), 0);
    cr_assert_eq(h5_read_f64(g, "end_s", &end, &m1), 0);
    cr_assert_eq(h5_read_f64(g, "state", &st, &m2), 0);
    double last = 0;
    *njobs = 0;
    for (size_t i = 0; i < n; i++)
        if (sub[i] == 0) {
            cr_assert_eq(st[i], 2, "small.yaml's backlog finishes within its hour");
            last = end[i] > last ? end[i] : last;
            ++*njobs;
        }
    free(sub);
    free(end);
    free(st);
    H5Gclose(g);
    H5Fclose(f);
    return last;
}

static int check(const char *file, const char *args, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s check %s %s", atest_bin(), file, args);
    return atest_run(cmd, out);
}

Test(check_gates, training_gates_against_hand_computed_figures)
{
    char dir[64], f[128], args[256], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/r2.h5", dir);
    atest_sim(SMALL, f, "--replications 2");

    /* Backlog: mean over the two replications of the last backlog job's end. */
    int n0, n1;
    double e0 = backlog_end(f, "/rep0000", &n0), e1 = backlog_end(f, "/rep0001", &n1);
    cr_assert_eq(n0, 2, "small.yaml has a backlog of 2");
    cr_assert_eq(n1, 2);
    double drained = (e0 + e1) / 2;
    cr_assert(drained > 60 && drained < 3600, "%g", drained);
    snprintf(args, sizeof(args), "--backlog-drained-by %.0fs", ceil(drained) + 1);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--backlog-drained-by %.0fs", floor(drained) - 1);
    cr_expect_eq(check(f, args, &out), 1, "%s", out);
    char want[200];
    snprintf(want, sizeof(want), "initial backlog drained at %.4g min (mean of 2 replications",
             drained / 60);
    cr_expect(strstr(out, want) != NULL, "want '%s' in:\n%s", want, out);
    free(out);

    /* Mean queueing delay: the mean of the replications' queue_delay_mean_s. */
    double qd = (h5test_file_f64(f, "/rep0000/summary", "queue_delay_mean_s") +
                 h5test_file_f64(f, "/rep0001/summary", "queue_delay_mean_s")) /
                2;
    snprintf(args, sizeof(args), "--max-queue-delay %.3fs", qd * 1.01 + 0.01);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    free(out);
    if (qd > 1) {
        snprintf(args, sizeof(args), "--max-queue-delay %.3fs", qd * 0.99);
        cr_expect_eq(check(f, args, &out), 1, "%s", out);
        cr_expect(strstr(out, "FAIL max-queue-delay: queue_delay_mean_s = ") != NULL, "%s", out);
        free(out);
    }

    /* GPU-hours per day: training_gpu_hours over a 1 h run is x 24 per day. */
    double gh = (h5test_file_f64(f, "/rep0000/summary", "training_gpu_hours") +
                 h5test_file_f64(f, "/rep0001/summary", "training_gpu_hours")) /
                2 * 24;
    cr_assert_gt(gh, 0);
    snprintf(args, sizeof(args), "--min-training-gpu-h-per-day %.6g", gh * 0.999);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--min-training-gpu-h-per-day %.6g", gh * 1.001);
    cr_expect_eq(check(f, args, &out), 1, "%s", out);
    snprintf(want, sizeof(want), "training_gpu_hours per day = %.4g GPU-h/day < bound", gh);
    cr_expect(strstr(out, want) != NULL, "want '%s' in:\n%s", want, out);
    free(out);

    /* Usage: a duration needs its unit. */
    cr_expect_eq(check(f, "--max-queue-delay 30", &out), 2, "%s", out);
    cr_expect(strstr(out, "needs a duration with a unit") != NULL, "%s", out);
    free(out);
    atest_rmdir(dir);
}

Test(check_gates, backlog_still_running_at_the_end_fails)
{
    char dir[64], f[128], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/b.h5", dir);
    atest_sim(BACKLOG, f, NULL);
    /* Each backlog job needs ~3 h of a 1 h run: none can have finished, whatever the bound. */
    cr_expect_eq(check(f, "--backlog-drained-by 100d", &out), 1, "%s", out);
    cr_expect(strstr(out, "3 jobs of the initial backlog still queued or running at the end") !=
                  NULL,
              "%s", out);
    free(out);
    atest_rmdir(dir);
}

Test(check_gates, generic_gates_on_any_summary_figure)
{
    char dir[64], f[128], args[256], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    atest_sim(SMALL, f, NULL);
    double e = h5test_file_f64(f, "/summary", "energy_kwh");
    double busy = h5test_file_f64(f, "/summary", "util_busy");
    cr_assert_gt(e, 0);
    snprintf(args, sizeof(args), "--max energy_kwh=%.6g --min util_busy=%.4f%%", e * 1.01,
             busy * 100 * 0.99);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    cr_expect(strstr(out, "check: all 2 gates hold") != NULL, "%s", out);
    free(out);
    /* A fraction given as a fraction, failing; the line says label, value and unit. */
    snprintf(args, sizeof(args), "--min util_busy=%.6f", busy * 1.01 > 1 ? 1 : busy * 1.01);
    cr_expect_eq(check(f, args, &out), 1, "%s", out);
    char want[200];
    snprintf(want, sizeof(want), "FAIL min util_busy: GPU-time busy (SM active) = %.3f %% <",
             busy * 100);
    cr_expect(strstr(out, want) != NULL, "want '%s' in:\n%s", want, out);
    free(out);
    /* A duration-valued figure takes a duration. */
    cr_expect_eq(check(f, "--max completion_mean_s=100d", &out), 0, "%s", out);
    free(out);
    /* A key the file lacks (a metric another version adds) is a usage error naming it. */
    cr_expect_eq(check(f, "--max fragmentation=0.2", &out), 2, "%s", out);
    cr_expect(strstr(out, "no figure 'fragmentation' in /summary; it holds: util_allocated") !=
                  NULL,
              "%s", out);
    free(out);
    /* A share above 1 without % is a usage error, as for --min-util. */
    cr_expect_eq(check(f, "--min util_busy=60", &out), 2, "%s", out);
    cr_expect(strstr(out, "write a fraction 0..1 or a percentage (60%)") != NULL, "%s", out);
    free(out);
    cr_expect_eq(check(f, "--max energy_kwh", &out), 2, "%s", out);
    cr_expect(strstr(out, "needs KEY=VALUE") != NULL, "%s", out);
    free(out);
    atest_rmdir(dir);
}

/*
 * The JUnit schema (Jenkins' junit-4.xsd, the one GitLab and GitHub test
 * reporters read) requires: <testsuites> or <testsuite> root; a testsuite's
 * name and tests (and failures, errors); a testcase's name and classname; a
 * failure's message (type optional); skipped may carry a message. The
 * counts must agree with the elements.
 */
static const char junit_py[] =
    "import sys, xml.etree.ElementTree as ET\n"
    "root = ET.parse(sys.argv[1]).getroot()\n"
    "assert root.tag == 'testsuites', root.tag\n"
    "suites = root.findall('testsuite')\n"
    "assert len(suites) == 1\n"
    "s = suites[0]\n"
    "for a in ('name', 'tests', 'failures', 'errors'):\n"
    "    assert s.get(a) is not None, a\n"
    "cases = s.findall('testcase')\n"
    "assert int(s.get('tests')) == len(cases) == int(root.get('tests'))\n"
    "fails = [c for c in cases if c.find('failure') is not None]\n"
    "assert int(s.get('failures')) == len(fails) == int(root.get('failures'))\n"
    "errs = [c for c in cases if c.find('error') is not None]\n"
    "assert int(s.get('errors')) == len(errs)\n"
    "skips = [c for c in cases if c.find('skipped') is not None]\n"
    "assert int(s.get('skipped')) == len(skips)\n"
    "for c in cases:\n"
    "    assert c.get('name') and c.get('classname'), c.attrib\n"
    "for c in fails:\n"
    "    assert c.find('failure').get('message'), c.get('name')\n"
    "for c in errs:\n"
    "    assert c.find('error').get('message'), c.get('name')\n"
    "print('cases', len(cases), 'failures', len(fails), 'errors', len(errs), 'skipped',\n"
    "      len(skips))\n"
    "print('names', ','.join(c.get('name') for c in cases))\n";

static void junit_validate(const char *dir, const char *xmlfile, char **out)
{
    char py[128], cmd[512];
    snprintf(py, sizeof(py), "%s/junit.py", dir);
    FILE *p = fopen(py, "w");
    cr_assert_not_null(p);
    fputs(junit_py, p);
    fclose(p);
    snprintf(cmd, sizeof(cmd), "python3 %s %s", py, xmlfile);
    int rc = atest_run(cmd, out);
    cr_assert_eq(rc, 0, "JUnit XML fails the schema's required elements:\n%s", *out);
}

Test(check_gates, junit_has_the_schemas_required_elements)
{
    char dir[64], f[128], x[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    snprintf(x, sizeof(x), "%s/check.xml", dir);
    atest_sim(SMALL, f, NULL);
    /* Two gates fail, two hold: exit 1 as in text mode, 4 testcases, 2 failures. */
    snprintf(cmd, sizeof(cmd),
             "%s check %s --min-util 0.99 --max-p99-ms 0.5 --min-slo 0.1 --max energy_kwh=1e9 "
             "--format junit > %s",
             atest_bin(), f, x);
    cr_expect_eq(system(cmd) >> 8, 1);
    junit_validate(dir, x, &out);
    cr_expect(strstr(out, "cases 4 failures 2 errors 0 skipped 0") != NULL, "%s", out);
    cr_expect(strstr(out, "names min-util,min-slo,max-p99-ms,max energy_kwh") != NULL, "%s", out);
    free(out);
    /* All hold: exit 0, no failure element. */
    snprintf(cmd, sizeof(cmd), "%s check %s --min-slo 0.1 --format junit > %s", atest_bin(), f, x);
    cr_expect_eq(system(cmd) >> 8, 0);
    junit_validate(dir, x, &out);
    cr_expect(strstr(out, "cases 1 failures 0 errors 0") != NULL, "%s", out);
    free(out);
    /* The file marked incomplete (as an interrupted run leaves it): exit 4, an error testcase. */
    h5test_mark_incomplete(f);
    cr_expect_eq(system(cmd) >> 8, 4);
    junit_validate(dir, x, &out);
    cr_expect(strstr(out, "cases 2 failures 0 errors 1") != NULL, "%s", out);
    cr_expect(strstr(out, "names complete run,min-slo") != NULL, "%s", out);
    free(out);
    atest_rmdir(dir);
}

/*
 * --confident: a gate judged on the 95 % interval of its figure over the
 * replications. The interval is computed here from the three replications'
 * util_busy by hand: mean ± t(0.975, 2) · sd / √3 with t = 4.302652729911275
 * (Student's t, 2 degrees of freedom). A bound below the lower end holds,
 * one inside the interval is inconclusive (exit 3), one above the upper end
 * fails; a single run has no interval (inconclusive).
 */
Test(check_gates, confident_judges_the_interval_not_the_mean)
{
    char dir[64], f[128], one[128], args[256], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/r3.h5", dir);
    snprintf(one, sizeof(one), "%s/r1.h5", dir);
    atest_sim(SMALL, f, "--replications 3");
    atest_sim(SMALL, one, "");
    double v[3], m = 0, ss = 0;
    for (int i = 0; i < 3; i++) {
        char g[32];
        snprintf(g, sizeof(g), "/rep%04d/summary", i);
        v[i] = h5test_file_f64(f, g, "util_busy");
        m += v[i] / 3;
    }
    for (int i = 0; i < 3; i++)
        ss += (v[i] - m) * (v[i] - m);
    double hw = 4.302652729911275 * sqrt(ss / 2) / sqrt(3);
    cr_assert_gt(hw, 1e-4, "the replications differ (%g %g %g)", v[0], v[1], v[2]);
    double lo = m - hw, hi = m + hw;
    /* just below the lower end: holds; the mean alone would too */
    snprintf(args, sizeof(args), "--confident --min-util %.9f", lo - 1e-6);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    free(out);
    /* between the mean and the lower end: the mean passes, the interval straddles */
    snprintf(args, sizeof(args), "--min-util %.9f", (lo + m) / 2);
    cr_expect_eq(check(f, args, &out), 0, "on the mean: %s", out);
    free(out);
    snprintf(args, sizeof(args), "--confident --min-util %.9f", (lo + m) / 2);
    cr_expect_eq(check(f, args, &out), 3, "%s", out);
    char want[200];
    snprintf(want, sizeof(want), "(95%% interval %.4g .. %.4g over 3 replications) straddles", lo,
             hi);
    cr_expect(strstr(out, want) != NULL, "want '%s' in:\n%s", want, out);
    free(out);
    /* just above the upper end: fails with confidence */
    snprintf(args, sizeof(args), "--confident --min-util %.9f", hi + 1e-6);
    cr_expect_eq(check(f, args, &out), 1, "%s", out);
    cr_expect(strstr(out, "wholly < bound") != NULL, "%s", out);
    free(out);
    /* a maximum mirrors it: below the upper end but above the lower is inconclusive */
    snprintf(args, sizeof(args), "--confident --max util_busy=%.9f", (m + hi) / 2);
    cr_expect_eq(check(f, args, &out), 3, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--confident --max util_busy=%.9f", hi + 1e-6);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    free(out);
    /* one run: no interval to be confident with */
    cr_expect_eq(check(one, "--confident --min-util 0.01", &out), 3, "%s", out);
    cr_expect(strstr(out, "a single run has no interval") != NULL, "%s", out);
    free(out);
    /* JSON carries the interval and the margin (lower end - bound for a minimum) */
    snprintf(args, sizeof(args), "--confident --min-util %.9f --format json", lo - 0.01);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    snprintf(want, sizeof(want), "\"margin\": ");
    const char *mp = strstr(out, want);
    cr_assert_not_null(mp, "%s", out);
    cr_expect(fabs(strtod(mp + strlen(want), NULL) - 0.01) < 1e-6, "%s", out);
    free(out);
    atest_rmdir(dir);
}
