/*
 * test_plot_degenerate.c — charts of results whose series leave gnuplot no range of its own:
 * runs without services (the compare chart's SLO and p99 panels have no figure: it failed with
 * "x range is invalid"), a run of one sample (one point: gnuplot warned of an empty x range and
 * drew nothing of a step or line), all-zero series (an empty y range), and a replicated file
 * whose replication 0 has no /pools (a stray pools.dat was left). Each case is drawn (exit 0,
 * no gnuplot warning or error on the terminal), with the series the file holds; a chart that
 * gnuplot refuses is an error naming the chart and the file.
 */
#include <math.h>

#include <hdf5.h>

#include "analysis/h5io.h"
#include "tests/analysistest.h"

/* Occurrences of s in svg. */
static int count(const char *svg, const char *s)
{
    int n = 0;
    for (const char *p = svg; (p = strstr(p, s)) != NULL; p += strlen(s))
        n++;
    return n;
}

static char *slurp_chart(const char *dir, const char *name)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s.svg", dir, name);
    char *svg = atest_slurp(p, NULL);
    cr_expect(strstr(svg, "</svg>") != NULL, "%s is truncated", p);
    return svg;
}

/* `tidesim plot FILES -o DIR --format svg`: exit 0, `charts` images, nothing from gnuplot. */
static void plot_ok(const char *files, const char *dir, int charts)
{
    char cmd[1024], want[64], *out = NULL;
    snprintf(cmd, sizeof(cmd), "%s plot %s -o %s --format svg", atest_bin(), files, dir);
    int rc = atest_run(cmd, &out);
    cr_assert_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out);
    snprintf(want, sizeof(want), "%d charts in", charts);
    cr_expect(strstr(out, want) != NULL, "want %d charts:\n%s", charts, out);
    cr_expect(!strstr(out, "warning") && !strstr(out, "Warning") && !strstr(out, "gnuplot"),
              "gnuplot spoke:\n%s", out);
    free(out);
}

/*
 * scenarios/warm-start.yaml: training only (no services), 2 replications. Its /summary has no
 * SLO share and no p99 (NaN): the compare chart draws those two panels with a "no data" note
 * (and the runs' names), the four others with one bar group each — 3 utilisation series, a
 * blank series in each empty panel, one bar in each of the other three: 8.
 */
Test(plot_degenerate, compare_of_runs_without_services)
{
    char dir[64], f[128], od[128], path[256];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/ws.h5", dir);
    atest_sim("scenarios/warm-start.yaml", f, "--replications 2");
    snprintf(od, sizeof(od), "%s/out", dir);
    /* util, queue, jobs; busy, daily, compare (no services: no p99, cdf) */
    plot_ok(f, od, 6);
    /* The data say why: the SLO and p99 columns (8..13) are NaN, the others are numbers. */
    snprintf(path, sizeof(path), "%s/data/compare.dat", od);
    char *dat = atest_slurp(path, NULL), *row = strstr(dat, "\n\"");
    cr_assert_not_null(row);
    double v[18];
    char *p = strchr(row + 2, '"') + 1;
    for (int k = 0; k < 18; k++) {
        char *end;
        v[k] = strtod(p, &end);
        cr_assert_neq(end, p, "column %d", k + 2);
        p = end;
    }
    for (int k = 6; k < 12; k += 2)
        cr_expect(isnan(v[k]), "column %d: %g, want NaN (no services)", k + 2, v[k]);
    cr_expect_gt(v[0], 0, "allocated share");
    cr_expect_gt(v[12], 0, "training GPU-h per day");
    free(dat);
    char *svg = slurp_chart(od, "compare");
    cr_expect_eq(atest_svg_series(svg), 8, "%d series", atest_svg_series(svg));
    cr_expect_eq(count(svg, "<text>no data in these runs</text>"), 2, "the two empty panels");
    cr_expect_eq(count(svg, "<text>dedicated</text>"), 6, "the run named under every panel");
    cr_expect(strstr(svg, "<text>requests outside the SLO (% of arrivals)</text>") != NULL);
    cr_expect(strstr(svg, "<text>training work (GPU-h per day)</text>") != NULL);
    free(svg);
    atest_rmdir(dir);
}

/*
 * tests/data/scenarios/small_60h.yaml cut to one sample interval (10 min), 2 replications:
 * every time series has one sample. Each chart is drawn, a lone sample as a point (gnuplot's
 * SVG: a <use> of a point symbol) on a time axis that holds it; util across its bucket.
 */
Test(plot_degenerate, one_sample_draws_every_chart)
{
    char dir[64], f[128], od[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/one.h5", dir);
    atest_sim("tests/data/scenarios/small_60h.yaml", f, "--set duration=10m --replications 2");
    snprintf(od, sizeof(od), "%s/out", dir);
    plot_ok(f, od, 8);
    static const struct {
        const char *chart;
        int series, points; /* series drawn; point symbols at least (one per series' sample) */
    } want[] = {
        {"queue", 2, 2}, /* queued, running */
        {"busy", 2, 2},  /* busy, allocated */
        {"p99", 2, 1},   /* chat's p99; its SLO target, a line */
        {"daily", 1, 0}, /* one bar */
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char *svg = slurp_chart(od, want[i].chart);
        cr_expect_eq(atest_svg_series(svg), want[i].series, "%s: %d series", want[i].chart,
                     atest_svg_series(svg));
        /* A point symbol is drawn as <use xlink:href='#gpPt..'>; the key's samples too. */
        int pts = count(svg, "xlink:href='#gpPt");
        cr_expect_geq(pts, 2 * want[i].points, "%s: %d point symbols", want[i].chart, pts);
        free(svg);
    }
    /* util: the one 10-minute bucket written at its two edges, 0 and 1/6 h. */
    char path[256];
    snprintf(path, sizeof(path), "%s/data/util.dat", od);
    FILE *u = fopen(path, "r");
    cr_assert_not_null(u);
    char line[512];
    double x[4];
    int rows = 0;
    while (fgets(line, sizeof(line), u))
        if (line[0] != '#' && line[0] != '\n' && rows < 4)
            x[rows++] = strtod(line, NULL);
    fclose(u);
    cr_assert_eq(rows, 2);
    cr_expect_float_eq(x[0], 0.0, 1e-9);
    cr_expect_float_eq(x[1], 10.0 / 60, 1e-4);
    atest_rmdir(dir);
}

/*
 * tests/data/scenarios/overloaded.yaml: one service, no training at all: the queue chart's
 * series are all zero. It is drawn on 0..1 jobs without gnuplot's "empty y range" warning.
 */
Test(plot_degenerate, all_zero_series)
{
    char dir[64], f[128], od[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/ov.h5", dir);
    atest_sim("tests/data/scenarios/overloaded.yaml", f, NULL);
    snprintf(od, sizeof(od), "%s/out", dir);
    plot_ok(f, od, 7);
    char *svg = slurp_chart(od, "queue");
    cr_expect_eq(atest_svg_series(svg), 2);
    cr_expect(strstr(svg, "<text> 1</text>") != NULL, "the y axis reaches 1");
    free(svg);
    atest_rmdir(dir);
}

/* Remove link `path` of the results file f. */
static void h5_unlink(const char *f, const char *path)
{
    h5io_quiet();
    hid_t h = H5Fopen(f, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(h, 0, "%s", f);
    cr_assert_geq(H5Ldelete(h, path, H5P_DEFAULT), 0, "%s", path);
    H5Fclose(h);
}

/*
 * scenarios/mixed-fleet-kueue (pools a100 and h100) cut to 2 h, 2 replications, then /pools
 * removed from replication 0: the pools chart is drawn from replication 1 (named in its
 * subtitle, both pools: 4 series). With the pools' series removed from replication 1 too, no
 * replication has them: no chart, and no pools.dat left in the data folder.
 */
Test(plot_degenerate, pools_missing_in_replication_0)
{
    char dir[64], f[128], od[128], path[256];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/m.h5", dir);
    atest_sim("scenarios/mixed-fleet-kueue/scenario.yaml", f, "--set duration=2h --replications 2");
    h5_unlink(f, "/rep0000/pools");
    snprintf(od, sizeof(od), "%s/out", dir);
    /* util, queue, quota, flavors, jobs, pools, then busy, p99, cdf, daily, compare */
    plot_ok(f, od, 11);
    char *svg = slurp_chart(od, "pools");
    cr_expect_eq(atest_svg_series(svg), 4);
    cr_expect(strstr(svg, "replication 1 (0 has no pools)") != NULL, "subtitle");
    cr_expect(strstr(svg, "<text>a100 busy</text>") && strstr(svg, "<text>h100 allocated</text>"));
    free(svg);
    snprintf(path, sizeof(path), "%s/data/pools.dat", od);
    cr_expect(atest_exists(path));

    h5_unlink(f, "/rep0001/pools/a100/timeseries");
    h5_unlink(f, "/rep0001/pools/h100/timeseries");
    snprintf(od, sizeof(od), "%s/out2", dir);
    plot_ok(f, od, 10);
    snprintf(path, sizeof(path), "%s/pools.svg", od);
    cr_expect(!atest_exists(path), "a pools chart without pools' series");
    snprintf(path, sizeof(path), "%s/data/pools.dat", od);
    cr_expect(!atest_exists(path), "a stray pools.dat");
    atest_rmdir(dir);
}

/*
 * A chart gnuplot refuses is an error naming the chart, the file and gnuplot's reason, not
 * gnuplot's echo of the command: a copy of the scripts whose compare.gp plots a column that
 * is not there ("x range is invalid" when no row has it).
 */
Test(plot_degenerate, failed_chart_names_chart_and_file)
{
    char dir[64], f[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/ws.h5", dir);
    atest_sim("scenarios/warm-start.yaml", f, NULL);
    snprintf(cmd, sizeof(cmd),
             "mkdir %s/gp && cp analysis/plots/*.gp %s/gp/ && "
             "printf 'load scripts.\"/common.gp\"\\nplot data using 1:40\\n' > %s/gp/compare.gp",
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "TIDESIM_PLOTS=%s/gp %s plot %s -o %s/out --format svg", dir,
             atest_bin(), f, dir);
    cr_assert_eq(atest_run(cmd, &out), 1, "%s", out);
    char want[300];
    snprintf(want, sizeof(want), "tidesim plot: chart compare of %s not drawn: gnuplot failed (",
             f);
    cr_expect(strstr(out, want) != NULL, "%s", out);
    cr_expect(strstr(out, "compare.gp line 2:") != NULL, "the script line:\n%s", out);
    cr_expect(strstr(out, "data/compare.dat") != NULL, "its data:\n%s", out);
    cr_expect(strstr(out, "^") == NULL, "gnuplot's echo:\n%s", out);
    free(out);
    atest_rmdir(dir);
}
