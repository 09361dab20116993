/* cmd_plot.c — `tidesim plot`: charts of results files with gnuplot (sim/cli/cmd_analysis.h). */
#include "sim/cli/cmd_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/results.h"
#include "analysis/plot.h"

#include "sim/cli/args.h"

static const char plot_usage[] =
    "usage: tidesim plot FILE... -o DIR [--format png|svg]\n"
    "\n"
    "  -o, --output DIR   the folder for the charts (created; not '-')\n"
    "  -f, --format F     png (default) or svg\n"
    "\n"
    "Draws, through gnuplot, for each file (replication 0 of a replicated file):\n"
    "util (GPU-time by use over the time of day: use states, idle (allocated), free),\n"
    "queue (training jobs queued and running) and jobs (job timeline: waits, running,\n"
    "checkpoint, preemption-grace and restore segments, a cross per preemption); and\n"
    "for all files on one chart: busy (utilisation over time, busy and allocated),\n"
    "p99 (per interval, log axis, SLO targets), cdf (share of requests slower than x,\n"
    "log-log), daily (busy per day with 95% CI whiskers) and compare (small multiples:\n"
    "utilisation, SLO misses, p99, training GPU-h per day, checkpoint overhead, cost\n"
    "or energy). With several files the per-file charts are named <file>_<chart>.\n"
    "The data go to DIR/data/*.dat; the scripts are analysis/plots/*.gp (found via\n"
    "$TIDESIM_PLOTS, next to the binary, or ./analysis/plots) — copy and restyle them.\n"
    "gnuplot comes from $TIDESIM_GNUPLOT or PATH (Debian package gnuplot-nox).\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file, missing gnuplot or a failed chart, 2 usage\n";

int cli_plot_run(int argc, char **argv, FILE *out, FILE *err)
{
    struct plot_opts o = {NULL, PLOT_PNG, NULL, "gnuplot", NULL, NULL};
    const char **paths = calloc((size_t)argc, sizeof(*paths));
    size_t n = 0;
    if (!paths) {
        fputs("tidesim plot: out of memory\n", err);
        return 1;
    }
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c;
    while ((c = getopt_long(argc, argv, ":ho:f:", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(plot_usage, out);
            free(paths);
            return 0;
        } else if (c == 'o') {
            if (!strcmp(optarg, "-")) {
                fprintf(err, "tidesim plot: -o -: charts go to a folder, not to standard output\n");
                free(paths);
                return 2;
            }
            o.dir = optarg;
        } else if (c == 'f') {
            if (!strcmp(optarg, "png"))
                o.format = PLOT_PNG;
            else if (!strcmp(optarg, "svg"))
                o.format = PLOT_SVG;
            else {
                fprintf(err, "tidesim plot: --format needs png or svg\n");
                free(paths);
                return 2;
            }
        } else {
            free(paths);
            return cli_opt_error(err, "plot", c, argv);
        }
    }
    for (int i = optind; i < argc; i++)
        paths[n++] = argv[i];
    if (n == 0 || !o.dir) {
        fputs(plot_usage, err);
        free(paths);
        return 2;
    }
    const char *gp = getenv("TIDESIM_GNUPLOT");
    if (gp && *gp)
        o.gnuplot = gp;
    if (!plot_have_gnuplot(o.gnuplot)) {
        fprintf(err,
                "tidesim plot: gnuplot not found ('%s'); install it with: apt-get install "
                "gnuplot-nox\n",
                o.gnuplot);
        free(paths);
        return 1;
    }
    char scripts[1024];
    if (plot_find_scripts(argv[0], scripts, sizeof(scripts))) {
        fprintf(err, "tidesim plot: cannot find the gnuplot scripts (analysis/plots); set "
                     "TIDESIM_PLOTS to their folder\n");
        free(paths);
        return 1;
    }
    o.scripts = scripts;
    char msg[1024];
    size_t made = 0;
    int rc = plot_all(&o, paths, n, &made, msg, sizeof(msg));
    free(paths);
    if (rc) {
        fprintf(err, "tidesim plot: %s\n", msg);
        return 1;
    }
    fprintf(out, "tidesim plot: %zu charts in %s\n", made, o.dir);
    return 0;
}

int cli_plot(int argc, char **argv)
{
    return cli_plot_run(argc, argv, stdout, stderr);
}
