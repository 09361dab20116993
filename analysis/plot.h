/*
 * plot.h — charts of results files through gnuplot. The data are exported
 * to whitespace-separated .dat files (DIR/data/) and drawn by the scripts in
 * the analysis/plots/ scripts (one .gp per chart), which users can copy and restyle: every script
 * reads the gnuplot variables `data` (a .dat file or a prefix), `out` (image), `term` (terminal
 * line) and `subtitle`.
 *
 * Charts of one file (replication 0 of a replicated file):
 *   util     GPUs by use over the time of day (stacked shares of the cluster, %)
 *   p99      p99 latency per interval and service with the SLO target (ms)
 *   cdf      latency CDF per service from the run's histogram (ms)
 *   queue    training jobs queued and running over time
 *   jobs     job timeline: queueing and running spans per job (h)
 * Chart of all files: compare, bars of utilisation and SLO share with 95 %
 * interval whiskers (none for single runs).
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
 * -EIO refused file, cannot write or gnuplot failed, naming the chart,
 * -EINVAL or -ENAMETOOLONG a folder that cannot be handed to gnuplot).
 * *made receives the number of images written.
 */
int plot_all(const struct plot_opts *o, const char *const *paths, size_t n, size_t *made, char *err,
             size_t errlen);

#endif
