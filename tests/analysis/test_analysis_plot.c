/*
 * test_analysis_plot.c — every chart renders, through gnuplot, to a valid and
 * non-trivial PNG and SVG; each SVG is read back for its title, its axis
 * labels with their units, and its number of series (gnuplot's SVG terminal
 * draws each plotted series as a group id="gnuplot_plot_N"), counted against
 * what the results files hold (runs, services, GPU-time states). Names are
 * text ('_' is no subscript: the SVG holds the name whole) and no title
 * carries a file path. A missing gnuplot gives a clear error naming the package.
 */
#include <math.h>

#include <hdf5.h>

#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "tests/analysistest.h"

#define SMALL "tests/data/scenarios/small.yaml"
#define TIDAL "tests/data/scenarios/small_tidal.yaml"

static void read_head(const char *p, unsigned char *buf, size_t n)
{
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f, "%s", p);
    cr_assert_eq(fread(buf, 1, n, f), n, "%s", p);
    fclose(f);
}

/* The text "<text>s</text>" is drawn (a title, a label, a legend entry). */
static bool svg_text(const char *svg, const char *s)
{
    char want[300];
    snprintf(want, sizeof(want), "<text>%s</text>", s);
    return strstr(svg, want) != NULL;
}

struct chart_want {
    const char *name, *title, *xlabel, *ylabel;
    int series;
};

static void check_chart(const char *dir, const struct chart_want *w)
{
    char img[256];
    snprintf(img, sizeof(img), "%s/%s.svg", dir, w->name);
    char *svg = atest_slurp(img, NULL);
    cr_expect(strstr(svg, "</svg>") != NULL, "%s is truncated", img);
    cr_expect(svg_text(svg, w->title), "%s lacks its title '%s'", img, w->title);
    if (w->xlabel)
        cr_expect(svg_text(svg, w->xlabel), "%s lacks its x label '%s'", img, w->xlabel);
    cr_expect(svg_text(svg, w->ylabel), "%s lacks its y label '%s'", img, w->ylabel);
    cr_expect_eq(atest_svg_series(svg), w->series, "%s: %d series, want %d", img,
                 atest_svg_series(svg), w->series);
    cr_expect(strstr(svg, "/tmp/") == NULL, "%s names a file path", img);
    free(svg);
}

/* GPU-time states a run used: share_<state> columns with a non-zero value (free always drawn). */
static int states_used(const char *file, const char *root)
{
    static const char *const cols[] = {"share_inference",     "share_training",  "share_checkpoint",
                                       "share_restore",       "share_recompute", "share_overhead",
                                       "share_reconfiguring", "share_idle"};
    h5io_quiet();
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    char path[64];
    snprintf(path, sizeof(path), "%s/timeseries", root);
    hid_t g = H5Gopen2(f, path, H5P_DEFAULT);
    cr_assert_geq(g, 0);
    int used = 1;
    for (size_t k = 0; k < 8; k++) {
        double *v;
        size_t n;
        cr_assert_eq(h5_read_f64(g, cols[k], &v, &n), 0, "%s", cols[k]);
        double any = 0;
        for (size_t i = 0; i < n; i++)
            any += fabs(v[i]);
        used += any > 0;
        free(v);
    }
    H5Gclose(g);
    H5Fclose(f);
    return used;
}

Test(analysis_plot, png_and_svg_of_every_chart)
{
    char dir[64], f[128], cmd[1024], img[256], out_dir[128], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    atest_sim(SMALL, f, "--replications 2");
    static const char *const charts[] = {"util", "queue", "jobs",  "busy",
                                         "p99",  "cdf",   "daily", "compare"};
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    for (int svg = 0; svg < 2; svg++) {
        snprintf(cmd, sizeof(cmd), "%s plot %s -o %s/out --format %s", atest_bin(), f, dir,
                 svg ? "svg" : "png");
        cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
        cr_expect(strstr(out, "8 charts in") != NULL, "%s", out);
        cr_expect(strstr(out, "warning") == NULL, "gnuplot warned:\n%s", out);
        free(out);
        for (size_t i = 0; i < 8; i++) {
            snprintf(img, sizeof(img), "%s/out/%s.%s", dir, charts[i], svg ? "svg" : "png");
            long size = atest_size(img);
            cr_expect_gt(size, 5000, "%s: %ld bytes", img, size);
            if (size > 0 && !svg) {
                unsigned char head[8];
                read_head(img, head, 8);
                cr_expect_arr_eq(head, png_sig, 8, "%s is not a PNG", img);
            }
        }
    }
    /* One file, one service ("chat"), replicated. */
    snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
    const struct chart_want want[] = {
        {"util", "GPU-time by use over the time of day", "time of day (h)",
         "share of the cluster's GPU-time (%)", states_used(f, "/rep0000") + 1},
        {"queue", "Training jobs queued and running over time", "simulated time (h)", "jobs", 2},
        {"jobs", "Training job timeline: waits, runs, checkpoints, preemptions and restores",
         "simulated time (h)", "job (submission order)", 6},
        {"busy", "GPU utilisation over time, busy and allocated", "simulated time (h)",
         "share of the cluster's GPU-time (%)", 2},
        {"p99", "p99 latency over time, with the SLO targets", "simulated time (h)",
         "p99 latency (ms, log scale)", 2},
        {"cdf", "Request latency distribution (tail), log axes", "latency (ms, log scale)",
         "share of requests slower (%, log scale)", 1},
        {"daily", "GPU-time busy per day (mean, 95 % CI whiskers)", "simulated day",
         "GPU-time busy (% of the cluster's)", 1},
        /* Six panels: 3 utilisation kinds, 2 SLO shares, then one bar each. */
        {"compare", "Policy comparison", NULL, "share of GPU-time (%)", 3 + 2 + 4},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        check_chart(out_dir, &want[i]);
    char *svg = NULL;
    snprintf(img, sizeof(img), "%s/compare.svg", out_dir);
    svg = atest_slurp(img, NULL);
    static const char *const units[] = {"requests outside the SLO (% of arrivals)",
                                        "p99 latency (ms)", "training work (GPU-h per day)",
                                        "checkpoint overhead (% of busy GPU-time)", "energy (kWh)"};
    for (size_t i = 0; i < 5; i++)
        cr_expect(svg_text(svg, units[i]), "compare lacks the panel axis '%s'", units[i]);
    free(svg);
    snprintf(img, sizeof(img), "%s/util.svg", out_dir);
    svg = atest_slurp(img, NULL);
    cr_expect(svg_text(svg, "free") && svg_text(svg, "idle (allocated)"), "util: free vs idle");
    free(svg);
    /* The exported data are kept for restyling. */
    snprintf(img, sizeof(img), "%s/out/data/util.dat", dir);
    cr_expect(atest_exists(img));
    atest_rmdir(dir);
}

/* Lines of block `index` (0-based) of a gnuplot data file, comments and clipped rows left out. */
static int dat_rows(const char *path, int index, int kind)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[256];
    int block = 0, blanks = 0, rows = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '\n') {
            if (++blanks == 2) {
                block++;
                blanks = 0;
            }
            continue;
        }
        blanks = 0;
        if (line[0] == '#' || block != index)
            continue;
        double a, b, c, d;
        int k = sscanf(line, "%lf %lf %lf %lf", &a, &b, &c, &d);
        if (b < 0)
            continue; /* the clipped rows that keep every series non-empty */
        rows += kind < 0 || (k == 4 && (int)d == kind);
    }
    fclose(f);
    return rows;
}

Test(analysis_plot, timeline_shows_preemptions_checkpoints_and_restores)
{
    char dir[64], f[128], cmd[1024], path[256], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/t.h5", dir);
    atest_sim(TIDAL, f, NULL);
    snprintf(cmd, sizeof(cmd), "%s plot %s -o %s/out --format svg", atest_bin(), f, dir);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    free(out);
    /* The hand count from /jobs: preemptions, checkpoints and restores. */
    h5io_quiet();
    hid_t h = H5Fopen(f, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t g = H5Gopen2(h, "/jobs", H5P_DEFAULT);
    double *pre, *ck, *res;
    size_t n, m, k;
    cr_assert_eq(h5_read_f64(g, "preemptions", &pre, &n), 0);
    cr_assert_eq(h5_read_f64(g, "checkpoints", &ck, &m), 0);
    cr_assert_eq(h5_read_f64(g, "checkpoint_restore_s", &res, &k), 0);
    double npre = 0, nck = 0;
    int restored = 0;
    for (size_t i = 0; i < n; i++) {
        npre += pre[i];
        nck += ck[i];
        restored += res[i] > 0;
    }
    free(pre);
    free(ck);
    free(res);
    H5Gclose(g);
    H5Fclose(h);
    cr_assert_geq(npre, 2, "small_tidal.yaml's day edge preempts jobs (%g)", npre);
    snprintf(path, sizeof(path), "%s/out/data/jobs.dat", dir);
    cr_expect_eq(dat_rows(path, 2, -1), (int)npre, "one cross per preemption");
    /* Completed saves: periodic checkpoints (kind 3) and preemption saves (3 or 4). */
    cr_expect_geq(dat_rows(path, 1, 3) + dat_rows(path, 1, 4), (int)nck);
    cr_expect_geq(dat_rows(path, 1, 1), restored, "a restore segment per restored job");
    cr_expect_gt(dat_rows(path, 1, 1), 0);
    snprintf(path, sizeof(path), "%s/out/jobs.svg", dir);
    char *svg = atest_slurp(path, NULL), want[64];
    snprintf(want, sizeof(want), "preempted (%d)", (int)npre);
    cr_expect(svg_text(svg, want), "jobs.svg lacks '%s'", want);
    free(svg);
    /* The service "chat_bert" is drawn whole, not as chat + subscript b. */
    snprintf(path, sizeof(path), "%s/out/p99.svg", dir);
    svg = atest_slurp(path, NULL);
    cr_expect(svg_text(svg, "chat_bert p99"), "p99.svg: the name is not drawn as text");
    free(svg);
    atest_rmdir(dir);
}

Test(analysis_plot, several_runs_on_one_chart)
{
    char dir[64], a[128], b[128], cmd[1024], *out = NULL, od[128];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(a, sizeof(a), "%s/a.h5", dir);
    snprintf(b, sizeof(b), "%s/b.h5", dir);
    atest_sim(SMALL, a, "--replications 2");
    atest_sim(TIDAL, b, NULL);
    snprintf(cmd, sizeof(cmd), "%s plot %s %s -o %s/out --format svg", atest_bin(), a, b, dir);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "11 charts in") != NULL, "%s", out); /* 3 per file + 5 of both */
    free(out);
    snprintf(od, sizeof(od), "%s/out", dir);
    /* Two runs (dedicated, tidal), one service each. */
    const struct chart_want want[] = {
        {"busy", "GPU utilisation over time, busy and allocated", "simulated time (h)",
         "share of the cluster's GPU-time (%)", 4},
        {"p99", "p99 latency over time, with the SLO targets", "simulated time (h)",
         "p99 latency (ms, log scale)", 4},
        {"cdf", "Request latency distribution (tail), log axes", "latency (ms, log scale)",
         "share of requests slower (%, log scale)", 2},
        {"daily", "GPU-time busy per day (mean, 95 % CI whiskers)", "simulated day",
         "GPU-time busy (% of the cluster's)", 2},
        {"compare", "Policy comparison", NULL, "share of GPU-time (%)", 9},
        {"a_jobs", "Training job timeline: waits, runs, checkpoints, preemptions and restores",
         "simulated time (h)", "job (submission order)", 6},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        check_chart(od, &want[i]);
    char path[256];
    snprintf(path, sizeof(path), "%s/busy.svg", od);
    char *svg = atest_slurp(path, NULL);
    cr_expect(svg_text(svg, "dedicated busy") && svg_text(svg, "tidal busy"), "legend by policy");
    cr_expect(svg_text(svg, "2 runs: dedicated, tidal; mean of each file's replications"),
              "subtitle names the runs");
    free(svg);
    atest_rmdir(dir);
}

/* Numbers of the rows of a whitespace-separated .dat file (comments skipped): rows[r][k] is
 * column k (0-based) of row r; returns the number of rows read (at most maxr). */
static int dat_table(const char *path, double rows[][16], int maxr, int ncols)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[1024];
    int n = 0;
    while (n < maxr && fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *p = line;
        for (int k = 0; k < ncols; k++) {
            char *end;
            rows[n][k] = strtod(p, &end);
            cr_assert_neq(end, p, "%s: row %d has %d columns, want %d", path, n, k, ncols);
            p = end;
        }
        n++;
    }
    fclose(f);
    return n;
}

/*
 * Queues and GPU flavors (scenarios/mixed-fleet-kueue cut to 2 h: ClusterQueues inference,
 * team-a, team-b, each with quota on the flavors h100 and a100, on pools a100 and h100).
 * `quota` draws the three queues, not their flavors as queues (3 × admitted + borrowed = 6
 * series); `flavors` one panel per flavor, titled by it, each with the three queues (2 × 3
 * × 2 = 12 series); `pools` busy and allocated of each pool (4). Its data agree with the
 * queues': at every sample a queue's admitted and borrowed GPUs are the sums over its flavors
 * of the flavor figures (results.md: /queues/<q> holds the totals over its flavors).
 */
Test(analysis_plot, queues_per_gpu_flavor_and_pools)
{
    char dir[64], f[128], cmd[1024], od[128], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/m.h5", dir);
    atest_sim("scenarios/mixed-fleet-kueue/scenario.yaml", f, "--set duration=2h");
    snprintf(cmd, sizeof(cmd), "%s plot %s -o %s/out --format svg", atest_bin(), f, dir);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    /* util, queue, quota, flavors, jobs, pools, then busy, p99, cdf, daily, compare */
    cr_expect(strstr(out, "11 charts in") != NULL, "%s", out);
    cr_expect(strstr(out, "warning") == NULL, "gnuplot warned:\n%s", out);
    free(out);
    snprintf(od, sizeof(od), "%s/out", dir);
    const struct chart_want want[] = {
        {"quota", "Quota held per queue over time (dashed: borrowed)", "simulated time (h)", "GPUs",
         6},
        {"flavors", "Quota held per queue and GPU flavor over time (dashed: borrowed)",
         "simulated time (h)", "GPUs", 12},
        {"pools", "GPU utilisation over time, busy and allocated", "simulated time (h)",
         "share of each pool's GPU-time (%)", 4},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        check_chart(od, &want[i]);
    char path[256];
    snprintf(path, sizeof(path), "%s/flavors.svg", od);
    char *svg = atest_slurp(path, NULL);
    cr_expect(svg_text(svg, "flavor h100") && svg_text(svg, "flavor a100"), "panel titles");
    cr_expect(svg_text(svg, "inference") && svg_text(svg, "team-a") && svg_text(svg, "team-b"),
              "queue names in the legend");
    cr_expect(svg_text(svg, "scenario mixed-fleet-kueue, policy kueue"), "subtitle");
    free(svg);
    snprintf(path, sizeof(path), "%s/quota.svg", od);
    svg = atest_slurp(path, NULL);
    cr_expect(!strstr(svg, "team-a/h100"), "a flavor drawn as a queue");
    free(svg);
    snprintf(path, sizeof(path), "%s/pools.svg", od);
    svg = atest_slurp(path, NULL);
    cr_expect(svg_text(svg, "a100 busy") && svg_text(svg, "h100 allocated"), "pool legend");
    free(svg);

    /* 2 h at 60 s: 120 samples. quota: time + 3 × 2; flavors: time + 2 flavors × 3 × 2. */
    static double q[130][16], fl[130][16];
    snprintf(path, sizeof(path), "%s/out/data/quota.dat", dir);
    int nq = dat_table(path, q, 130, 7);
    snprintf(path, sizeof(path), "%s/out/data/flavors.dat", dir);
    int nf = dat_table(path, fl, 130, 13);
    cr_assert_eq(nq, 120);
    cr_assert_eq(nf, 120);
    double held = 0;
    for (int r = 0; r < nq; r++) {
        cr_assert_float_eq(q[r][0], fl[r][0], 1e-9);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 2; k++) { /* admitted, borrowed: h100 block, then a100 */
                double sum = fl[r][1 + 2 * i + k] + fl[r][1 + 6 + 2 * i + k];
                cr_assert_float_eq(q[r][1 + 2 * i + k], sum, 1e-6, "row %d queue %d col %d", r, i,
                                   k);
            }
        held += fl[r][1] + fl[r][3] + fl[r][5];
    }
    cr_expect_gt(held, 0, "nothing held on h100");
    atest_rmdir(dir);
}

Test(analysis_plot, missing_gnuplot_names_the_package)
{
    char dir[64], f[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    atest_sim(SMALL, f, NULL);
    snprintf(cmd, sizeof(cmd), "TIDESIM_GNUPLOT=/nonexistent/gnuplot %s plot %s -o %s/out",
             atest_bin(), f, dir);
    cr_expect_eq(atest_run(cmd, &out), 1, "%s", out);
    cr_expect(strstr(out, "gnuplot not found") != NULL && strstr(out, "gnuplot-nox") != NULL, "%s",
              out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s plot %s", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    atest_rmdir(dir);
}
