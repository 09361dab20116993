/*
 * test_results_reads.c — what each command reads of a results file after
 * results_open was read by results_open's child first (analysis/results.h,
 * results_reads; docs/security.md), and a file damaged only in such a later
 * column is refused by the commands that read it, cleanly, instead of being
 * read in the command's own process.
 *
 * The first test runs each command's readers (report in every format, every
 * check gate, compare, the charts of plot and of the HTML report) on files
 * of several layouts (replicated with days, node pools and job segments, LLM
 * services) and compares the columns they asked for with the columns the
 * child's read (results_read_all for the same command) read: every one must
 * be among them. A reader that reads past the list gets -EPERM and a refusal,
 * which the test sees too.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/check.h"
#include "analysis/compare.h"
#include "analysis/perday.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "fuzz/targets.h"
#include "tests/analysistest.h"

struct set {
    char **p;
    size_t n;
};

static void set_add(const char *path, void *arg)
{
    struct set *s = arg;
    s->p = realloc(s->p, (s->n + 1) * sizeof(*s->p));
    cr_assert_not_null(s->p);
    s->p[s->n] = strdup(path);
    cr_assert_not_null(s->p[s->n]);
    s->n++;
}

static bool set_has(const struct set *s, const char *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->p[i], p))
            return true;
    return false;
}

static void set_free(struct set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i]);
    free(s->p);
    memset(s, 0, sizeof(*s));
}

static bool have_gnuplot(void)
{
    return plot_have_gnuplot("gnuplot");
}

/* What command `by` does with an open file after results_open (output thrown away). */
static void run_command(unsigned by, const struct results *r, const char *dir)
{
    FILE *null = fopen("/dev/null", "w");
    cr_assert_not_null(null);
    if (by == RESULTS_BY_REPORT) {
        cr_expect_eq(report_results(null, r, REPORT_TEXT), 0);
        cr_expect_eq(report_results(null, r, REPORT_MARKDOWN), 0);
        cr_expect_eq(report_results(null, r, REPORT_JSON), 0);
    } else if (by == RESULTS_BY_CHECK) {
        struct check_gates g;
        fuzz_check_gates_all(&g);
        struct check_outcome o;
        check_run(null, r, r, &g, &o);
        g.confident = true;
        check_run(null, r, NULL, &g, &o);
    } else if (by == RESULTS_BY_COMPARE) {
        const struct results *pair[2] = {r, r};
        cr_expect_eq(compare_write(null, pair, 2, false), 0);
        cr_expect_eq(compare_write(null, pair, 2, true), 0);
    } else if (have_gnuplot()) { /* plot, and the HTML report's charts and texts */
        char out[256];
        snprintf(out, sizeof(out), "%s/charts-%u", dir, by);
        struct plot_opts po = {out, PLOT_SVG, "analysis/plots", "gnuplot", NULL, NULL};
        size_t made = 0;
        char err[1024] = "";
        /* Every chart reads its columns before it draws; whether gnuplot then draws every
         * chart of these small files is test_analysis_plot.c's business. */
        if (plot_results(&po, r, 1, &made, err, sizeof(err)))
            cr_log_info("plot: %s", err);
        cr_expect_gt(made, 0);
        const char *s;
        results_meta_text(r, "scenario", &s);
        cr_expect_eq(s != NULL, by == RESULTS_BY_HTML, "the scenario text is the HTML report's");
    }
    fclose(null);
}

Test(results_reads, each_command_reads_only_what_its_child_read_first, .timeout = 120)
{
    char dir[64], f[3][128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f[0], sizeof(f[0]), "%s/days.h5", dir);
    snprintf(f[1], sizeof(f[1]), "%s/pools.h5", dir);
    snprintf(f[2], sizeof(f[2]), "%s/llm.h5", dir);
    atest_sim("tests/data/scenarios/small_60h.yaml", f[0], "--replications 2");
    atest_sim("tests/data/scenarios/cost_pools.yaml", f[1], NULL);
    atest_sim("tests/data/scenarios/llm_small.yaml", f[2], NULL);
    static const unsigned cmds[] = {RESULTS_BY_REPORT, RESULTS_BY_CHECK, RESULTS_BY_COMPARE,
                                    RESULTS_BY_PLOT, RESULTS_BY_HTML};
    if (!have_gnuplot())
        cr_log_warn("gnuplot is not installed: the charts' reads are not checked");
    size_t asked_total[5] = {0};
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 5; k++) {
            char err[1024];
            struct results r, child;
            cr_assert_eq(results_open_for(&r, f[i], cmds[k], err, sizeof(err)), 0, "%s", err);
            run_command(cmds[k], &r, dir);
            /* No reader asked for a column the list does not give its command. */
            cr_expect_str_empty(results_why(&r), "%s, command %u: %s", f[i], cmds[k],
                                results_why(&r));
            struct set asked = {0}, read = {0};
            results_cols(&r, true, set_add, &asked);
            /* The child's read for the same command, as results_open_for makes it. */
            cr_assert_eq(results_open_for(&child, f[i], cmds[k], err, sizeof(err)), 0, "%s", err);
            cr_assert_eq(results_read_all(&child, cmds[k]), 0, "%s", results_why(&child));
            results_cols(&child, false, set_add, &read);
            for (size_t a = 0; a < asked.n; a++)
                cr_expect(set_has(&read, asked.p[a]),
                          "%s, command %u read %s, which its child did not read first", f[i],
                          cmds[k], asked.p[a]);
            asked_total[k] += asked.n;
            set_free(&asked);
            set_free(&read);
            results_release(&child);
            results_release(&r);
        }
    /* The comparison could fail: each command did read columns after results_open. */
    cr_expect_gt(asked_total[0], 0, "report reads the per-day columns");
    cr_expect_gt(asked_total[1], 0, "check reads the backlog's columns");
    cr_expect_gt(asked_total[2], 0, "compare reads the per-day columns");
    if (have_gnuplot()) {
        cr_expect_gt(asked_total[3], asked_total[0], "plot reads more than the per-day columns");
        cr_expect_eq(asked_total[4], asked_total[3], "the HTML report draws what plot draws");
    }
    atest_rmdir(dir);
}

Test(results_reads, a_column_not_listed_for_the_command_is_refused)
{
    char dir[64], f[128], err[1024];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/a.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", f, NULL);
    struct results r;
    const double *v;
    size_t n;
    /* check reads the backlog's columns, not the time series. */
    cr_assert_eq(results_open_for(&r, f, RESULTS_BY_CHECK, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(results_col(&r, 0, "jobs", "submit_s", &v, &n), 0, "%s", results_why(&r));
    cr_expect_eq(results_col(&r, 0, "timeseries", "util_busy", &v, &n), -EPERM);
    cr_expect(strstr(results_why(&r), "timeseries/util_busy: not in results_reads"), "%s",
              results_why(&r));
    results_release(&r);
    /* No command reads a column the list does not have. */
    cr_assert_eq(results_open(&r, f, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(results_col(&r, 0, "timeseries", "util_busy", &v, &n), 0);
    cr_expect_gt(n, 0);
    cr_expect_eq(results_col(&r, 0, "timeseries", "no_such_column", &v, &n), -EPERM);
    cr_expect_eq(results_col(&r, 0, "services/*/timeseries", "time_s", &v, &n), -ENOENT,
                 "'*' in a request is a name like any other");
    results_release(&r);
    atest_rmdir(dir);
}

/* `tidesim ARGS` (a shell command line), its exit status; its output in *out (freed by the
 * caller). A death by a signal is -1 (atest_run), never an exit status. */
static int tidesim(char **out, const char *fmt, const char *a, const char *b)
{
    char cmd[1024];
    char args[900];
    snprintf(args, sizeof(args), fmt, a, b);
    snprintf(cmd, sizeof(cmd), "%s %s", atest_bin(), args);
    return atest_run(cmd, out);
}

Test(results_reads, a_damaged_column_read_later_is_refused_by_the_commands_reading_it,
     .timeout = 120)
{
    char dir[64], good[128], ts[128], jobs[128], charts[128], err[1024];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(good, sizeof(good), "%s/good.h5", dir);
    snprintf(ts, sizeof(ts), "%s/ts.h5", dir);
    snprintf(jobs, sizeof(jobs), "%s/jobs.h5", dir);
    snprintf(charts, sizeof(charts), "%s/charts", dir);
    atest_sim("tests/data/scenarios/small_60h.yaml", good, NULL);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s %s", good, ts, good, jobs);
    cr_assert_eq(system(cmd), 0);
    /* Per-day figures, plots: read after results_open. The backlog gate, the jobs chart. */
    atest_damage_column(ts, "/timeseries/util_busy");
    atest_damage_column(jobs, "/jobs/submit_s");

    /* Precondition: results_open's own read (nothing read later: RESULTS_BY 0) passes on
     * both, so the damage is in a column only the later reads read. */
    struct results r;
    cr_assert_eq(results_open_for(&r, ts, 0, err, sizeof(err)), 0, "%s", err);
    results_release(&r);
    cr_assert_eq(results_open_for(&r, jobs, 0, err, sizeof(err)), 0, "%s", err);
    results_release(&r);

    char *out = NULL;
    const char *bad_ts = "/timeseries/util_busy: cannot read the data (damaged file?)";
    const char *bad_jobs = "/jobs/submit_s: cannot read the data (damaged file?)";
    /* Refused by name, before any output, by every command that reads the column. */
    cr_expect_eq(tidesim(&out, "report %s", ts, NULL), 1, "%s", out);
    cr_expect(strstr(out, ts) && strstr(out, bad_ts), "%s", out);
    cr_expect(strstr(out, "headline metrics") == NULL, "no half report: %s", out);
    free(out);
    cr_expect_eq(tidesim(&out, "compare %s %s", good, ts), 1, "%s", out);
    cr_expect(strstr(out, bad_ts), "%s", out);
    free(out);
    cr_expect_eq(tidesim(&out, "check %s --backlog-drained-by 3d%s", jobs, ""), 2, "%s", out);
    cr_expect(strstr(out, jobs) && strstr(out, bad_jobs), "%s", out);
    free(out);
    /* check reads the jobs' columns whichever gates it is given. */
    cr_expect_eq(tidesim(&out, "check %s --min-util 0.01%s", jobs, ""), 2, "%s", out);
    cr_expect(strstr(out, bad_jobs), "%s", out);
    free(out);
    if (have_gnuplot()) {
        cr_expect_eq(tidesim(&out, "plot %s -o %s --format svg", ts, charts), 1, "%s", out);
        cr_expect(strstr(out, bad_ts), "%s", out);
        free(out);
        cr_expect_eq(tidesim(&out, "plot %s -o %s --format svg", jobs, charts), 1, "%s", out);
        cr_expect(strstr(out, bad_jobs), "%s", out);
        free(out);
    }
    /* A command that never reads the damaged column reads the file as before. */
    cr_expect_eq(tidesim(&out, "check %s --min-util 0.01%s", ts, ""), 0, "%s", out);
    free(out);
    cr_expect_eq(tidesim(&out, "report %s%s", jobs, ""), 0, "%s", out);
    cr_expect(strstr(out, "headline metrics"), "%s", out);
    free(out);
    atest_rmdir(dir);
}
