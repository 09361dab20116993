/*
 * test_ab_stats.c — A/B statistics a platform team can act on: runs that
 * share seeds are paired (common random numbers), so a small real effect is
 * found where Welch's unpaired interval cannot see it; identical runs differ
 * by exactly zero; `check --against` fails only on a significant worsening
 * (no false alarm between two replicated runs of one scenario with other
 * seeds) and does fail on a real 5 % regression.
 */
#include <hdf5.h>
#include <math.h>

#include "analysis/compare.h"
#include "analysis/results.h"
#include "analysis/stats.h"
#include "tests/analysistest.h"
#include "tests/h5test.h"

static void open_results(struct results *r, const char *path)
{
    char err[512];
    cr_assert_eq(results_open(r, path, err, sizeof(err)), 0, "%s", err);
}

static const struct results_metric *headline(const struct results *r, const char *key)
{
    const struct results_metric *m = results_table_find(&r->headline, key);
    cr_assert_not_null(m, "%s missing", key);
    return m;
}

Test(ab_stats, paired_difference_of_identical_runs_is_exactly_zero)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small.yaml", pr.a, "--replications 3 --seed 7");
    atest_sim("tests/data/scenarios/small.yaml", pr.b, "--replications 3 --seed 7");
    struct results ra, rb;
    open_results(&ra, pr.a);
    open_results(&rb, pr.b);
    size_t checked = 0;
    for (size_t i = 0; i < ra.headline.n; i++) {
        const struct results_metric *ma = &ra.headline.m[i];
        const struct results_metric *mb = results_table_find(&rb.headline, ma->key);
        if (!ma->s.n || !mb || !mb->s.n)
            continue;
        struct stats_diff d;
        compare_diff(&ra, ma, &rb, mb, 0.95, &d);
        cr_expect(d.paired, "%s not paired", ma->key);
        cr_expect_eq(d.npairs, 3u, "%s", ma->key);
        cr_expect_eq(d.diff, 0.0, "%s: %g", ma->key, d.diff);
        cr_expect_eq(d.ci95, 0.0, "%s: %g", ma->key, d.ci95);
        cr_expect(!d.significant, "%s", ma->key);
        checked++;
    }
    cr_expect_gt(checked, 15u);
    results_release(&ra);
    results_release(&rb);
    atest_rmdir(pr.dir);
}

Test(ab_stats, two_percent_more_load_found_paired_not_by_welch)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small.yaml", pr.a, "--replications 5 --seed 1");
    atest_sim("tests/data/scenarios/small_load102.yaml", pr.b, "--replications 5 --seed 1");
    struct results ra, rb;
    open_results(&ra, pr.a);
    open_results(&rb, pr.b);
    /* Arrivals: +2 % by construction (the same thinned streams at a 2 % higher peak). */
    const struct results_metric *aa = headline(&ra, "requests_arrived");
    const struct results_metric *ab = headline(&rb, "requests_arrived");
    struct stats_diff d;
    compare_diff(&ra, aa, &rb, ab, 0.95, &d);
    cr_expect(d.paired);
    cr_expect_lt(fabs(d.diff / aa->s.mean - 0.02), 0.002, "arrivals +%.3f %%",
                 100 * d.diff / aa->s.mean);
    /* Busy GPU-time: the inference part grows 2 %; the training part, the same job stream
     * under both, varies across seeds by far more than that. */
    const struct results_metric *ua = headline(&ra, "util_busy");
    const struct results_metric *ub = headline(&rb, "util_busy");
    compare_diff(&ra, ua, &rb, ub, 0.95, &d);
    cr_expect(d.paired);
    cr_expect(d.significant, "paired: %+.5f ± %.5f", d.diff, d.ci95);
    cr_expect_gt(d.diff, 0);
    struct stats_diff w;
    stats_welch(&ua->s, &ub->s, &w);
    cr_expect(!w.significant, "Welch: %+.5f ± %.5f", w.diff, w.ci95);
    cr_expect_lt(d.ci95, w.ci95 / 100, "paired %.5f vs Welch %.5f", d.ci95, w.ci95);
    results_release(&ra);
    results_release(&rb);
    atest_rmdir(pr.dir);
}

static int check_against(const char *cand, const char *base, const char *extra, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s check %s --against %s %s", atest_bin(), cand, base,
             extra ? extra : "");
    return atest_run(cmd, out);
}

Test(ab_stats, check_against_no_false_alarm_between_seeds, .timeout = 240)
{
    char dir[64];
    atest_tmpdir(dir, sizeof(dir));
    unsigned alarms = 0, pairs = 20;
    for (unsigned k = 0; k < pairs; k++) {
        char a[128], b[128], opt[64], *out = NULL;
        snprintf(a, sizeof(a), "%s/a%u.h5", dir, k);
        snprintf(b, sizeof(b), "%s/b%u.h5", dir, k);
        snprintf(opt, sizeof(opt), "--replications 4 --seed %u", 1000 + 10 * k);
        atest_sim("tests/data/scenarios/small.yaml", a, opt);
        snprintf(opt, sizeof(opt), "--replications 4 --seed %u", 5000 + 10 * k);
        atest_sim("tests/data/scenarios/small.yaml", b, opt);
        int rc = check_against(b, a, "--tolerance 2%", &out);
        cr_expect(rc == 0 || rc == 1 || rc == 3, "pair %u: exit %d: %s", k, rc, out);
        if (rc == 1) {
            alarms++;
            cr_log_warn("false alarm on pair %u:\n%s", k, out);
        }
        free(out);
    }
    cr_expect_leq(alarms, 1u, "%u false alarms in %u pairs", alarms, pairs);
    atest_rmdir(dir);
}

Test(ab_stats, check_against_fails_a_real_five_percent_regression)
{
    struct atest_pair pr;
    char c[128], *out = NULL;
    atest_pair_init(&pr);
    snprintf(c, sizeof(c), "%s/c.h5", pr.dir);
    atest_sim("tests/data/scenarios/small.yaml", pr.a, "--replications 4 --seed 1000");
    atest_sim("tests/data/scenarios/small_p99_105.yaml", pr.b, "--replications 4 --seed 5000");
    atest_sim("tests/data/scenarios/small_p99_105.yaml", c, "--replications 4 --seed 1000");
    /* Other seeds: unpaired (Welch), still beyond a 2 % tolerance as a whole. */
    cr_expect_eq(check_against(pr.b, pr.a, "--tolerance 2%", &out), 1, "%s", out);
    cr_expect(strstr(out, "FAIL against: p99_ms_worst_service") != NULL, "%s", out);
    cr_expect(strstr(out, "Welch, unpaired") != NULL, "%s", out);
    free(out);
    /* Same seeds: paired. */
    cr_expect_eq(check_against(c, pr.a, "--tolerance 2%", &out), 1, "%s", out);
    cr_expect(strstr(out, "FAIL against: p99_ms_worst_service") != NULL, "%s", out);
    cr_expect(strstr(out, "paired by seed") != NULL, "%s", out);
    free(out);
    /* Against itself: every gate holds. */
    cr_expect_eq(check_against(pr.a, pr.a, NULL, &out), 0, "%s", out);
    free(out);
    atest_rmdir(pr.dir);
}

Test(ab_stats, check_refuses_bare_percentages_and_incomplete_files)
{
    char dir[64], a[128], cmd[512], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(a, sizeof(a), "%s/a.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", a, NULL);
    /* 60 without % is not a bound of 60: a usage error naming both spellings. */
    snprintf(cmd, sizeof(cmd), "%s check %s --min-util 60", atest_bin(), a);
    cr_expect_eq(atest_run(cmd, &out), 2, "%s", out);
    cr_expect(strstr(out, "write 60% or 0.6") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s check %s --min-util 0.1", atest_bin(), a);
    cr_expect_eq(atest_run(cmd, NULL), 0);
    /* The same file marked incomplete (as an interrupted run leaves it): exit 4. */
    h5test_mark_incomplete(a);
    cr_expect_eq(atest_run(cmd, &out), 4, "%s", out);
    cr_expect(strstr(out, "is an incomplete run") != NULL, "%s", out);
    free(out);
    atest_rmdir(dir);
}
