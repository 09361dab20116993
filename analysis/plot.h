/*
 * plot.h — charts of results files through gnuplot. The data are exported
 * to whitespace-separated .dat files (DIR/data/) and drawn by the scripts in
 * the analysis/plots/ scripts (one .gp per chart), which users can copy and restyle: every script
 * reads the gnuplot variables `data` (a .dat file or a prefix), `out` (image), `term` (terminal
 * line) and `subtitle`.
 *
 * Charts of each file (replication 0 of a replicated file):
 *   util     GPU-time by use over the time of day, stacked (% of the cluster's
 *            GPU-time: use states, "idle (allocated)", "free"), busy as a line
 *   queue    training jobs queued and running over time
 *   quota    GPUs of quota held and borrowed per queue over time (/queues)
 *   flavors  the same per queue on each GPU flavor, one panel per flavor
 *            (/queues/<q>/flavors/<f>)
 *   jobs     job timeline: waits, and running, checkpoint, preemption-grace and
 *            restore segments (/job_segments) with a cross at each preemption
 *   pools    busy and allocated share of each node pool's GPU-time (/pools; from the first
 *            replication with the pools' series when replication 0 has none)
 * Charts of all files together (one series per run, or run x service):
 *   busy     GPU-time busy and allocated over time (mean of replications, %)
 *   p99      p99 latency per interval and service, log axis, SLO targets (ms)
 *   cdf      latency tail: share of requests slower than x, log-log (ms)
 *   daily    per-day bars of GPU-time busy with 95 % CI whiskers
 *   compare  small multiples: utilisation kinds, SLO, p99, training GPU-h per
 *            day, checkpoint overhead, cost (or energy), with CI whiskers
 * Titles name the chart and a subtitle the scenario, policy or runs, never a
 * file path; every name is drawn as text (gnuplot noenhanced: '_' is no subscript).
 * Degenerate data (one sample, constant or all-zero series, a panel without any value)
 * still give a chart: the scripts get the data's ranges and counts and never leave gnuplot
 * without a range. gnuplot's warnings go to stderr named by chart and file; a .dat file is
 * left only for a chart that is drawn.
 */
#ifndef TIDESIM_PLOT_H
#define TIDESIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>

enum plot_format { PLOT_PNG, PLOT_SVG };

struct plot_opts {
    const char *dir; /* output folder (created if missing) */
    enum plot_format format;
    const char *scripts; /* folder of the .gp scripts */
    const char *gnuplot; /* gnuplot executable (path or name on PATH) */
    /* Called after each image is written (may be NULL): chart name, file stem ("" for one
     * file or an all-files chart), absolute image path. */
    void (*on_chart)(void *ctx, const char *chart, const char *stem, const char *image);
    void *ctx;
};

/*
 * Locate the scripts: $TIDESIM_PLOTS, then <exe dir>/../analysis/plots,
 * <exe dir>/../share/tidesim/plots, then ./analysis/plots. Writes the folder
 * to buf; returns 0 or -ENOENT.
 */
int plot_find_scripts(const char *exe, char *buf, size_t n);

/* Whether `gnuplot` (a path or a name on PATH) is an executable file. */
bool plot_have_gnuplot(const char *gnuplot);

/*
 * Export and draw every chart of paths[0..n). The files are not trusted
 * (analysis/h5read.h). gnuplot gets only absolute paths: o->dir and
 * o->scripts are resolved with realpath, and refused when they hold a quote,
 * a backquote or a control character (gnuplot would take an output name
 * beginning with '|', or a data name beginning with '<', for a command).
 * Returns 0, or a negative code with err filled (-ENOENT unreadable file,
 * -EIO refused file, cannot write or gnuplot failed, naming the chart, its file(s), gnuplot's
 * reason (the script line) and the chart's data file,
 * -EINVAL or -ENAMETOOLONG a folder that cannot be handed to gnuplot).
 * *made receives the number of images written.
 */
int plot_all(const struct plot_opts *o, const char *const *paths, size_t n, size_t *made, char *err,
             size_t errlen);

struct results;
/*
 * plot_all for results files already open (results_open; the HTML report's):
 * every chart of rs[0..n), read through the same readers (nothing is opened
 * again). Same returns.
 */
int plot_results(const struct plot_opts *o, const struct results *rs, size_t n, size_t *made,
                 char *err, size_t errlen);

#endif
