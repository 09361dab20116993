/* cli_analysis.c — `tidesim report|compare|check|plot` (see cli_analysis.h). */
#include "sim/cli_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/compare.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/results.h"

static bool is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

/* A share given as a fraction (0.95) or a percentage ("95%"). Returns 0 or -EINVAL. */
static int parse_share(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v))
        return -EINVAL;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -EINVAL;
    *out = v;
    return 0;
}

static const char report_usage[] =
    "usage: tidesim report FILE [--format text|markdown|json]\n"
    "\n"
    "Prints a results file's headline metrics (mean and 95% Student-t interval when\n"
    "the file holds replications), the per-service latency and SLO table, training\n"
    "outcomes and GPU-time by state. Figures the file does not hold print as '-'.\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file, 2 usage error\n";

int cli_report_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL;
    enum report_format fmt = REPORT_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(report_usage, out);
            return 0;
        } else if (!strcmp(a, "--format")) {
            if (++i >= argc || report_parse_format(argv[i], &fmt)) {
                fprintf(err, "tidesim report: --format needs text, markdown or json\n");
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(err, "tidesim report: unknown option '%s'\n", a);
            return 2;
        } else if (!path) {
            path = a;
        } else {
            fprintf(err, "tidesim report: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!path) {
        fputs(report_usage, err);
        return 2;
    }
    char msg[512];
    if (report_write(out, path, fmt, msg, sizeof(msg))) {
        fprintf(err, "tidesim: %s\n", msg);
        return 1;
    }
    return 0;
}

static const char compare_usage[] =
    "usage: tidesim compare A.h5 B.h5 [...] [--format text|markdown]\n"
    "\n"
    "Side-by-side headline metrics (and each service's p99 latency and SLO share) of\n"
    "several results files. Each file is compared with the first (A): the difference\n"
    "X - A and, when both files hold replications, Welch's 95% interval of it, marked\n"
    "significant when the interval excludes 0 (and whether that is better or worse).\n"
    "Single runs give the difference only: 'no CI (single run)'.\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file, 2 usage error\n";

int cli_compare_run(int argc, char **argv, FILE *out, FILE *err)
{
    bool md = false;
    int nfiles = 0, rc = 0;
    const char **paths = calloc((size_t)argc, sizeof(*paths));
    if (!paths)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(compare_usage, out);
            free(paths);
            return 0;
        } else if (!strcmp(a, "--format")) {
            if (++i >= argc ||
                (strcmp(argv[i], "text") && strcmp(argv[i], "markdown") && strcmp(argv[i], "md"))) {
                fprintf(err, "tidesim compare: --format needs text or markdown\n");
                free(paths);
                return 2;
            }
            md = strcmp(argv[i], "text") != 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(err, "tidesim compare: unknown option '%s'\n", a);
            free(paths);
            return 2;
        } else {
            paths[nfiles++] = a;
        }
    }
    if (nfiles < 2) {
        fputs(compare_usage, err);
        free(paths);
        return 2;
    }
    struct results *r = calloc((size_t)nfiles, sizeof(*r));
    const struct results **rp = calloc((size_t)nfiles, sizeof(*rp));
    int opened = 0;
    char msg[512];
    if (!r || !rp)
        rc = 1;
    for (; !rc && opened < nfiles; opened++) {
        if (results_open(&r[opened], paths[opened], msg, sizeof(msg))) {
            fprintf(err, "tidesim: %s\n", msg);
            rc = 1;
            break;
        }
        rp[opened] = &r[opened];
    }
    if (!rc && compare_write(out, rp, (size_t)nfiles, md)) {
        fprintf(err, "tidesim compare: out of memory\n");
        rc = 1;
    }
    for (int i = 0; r && i < opened; i++)
        results_release(&r[i]);
    free(r);
    free(rp);
    free(paths);
    return rc;
}

static const char check_usage[] =
    "usage: tidesim check FILE [--min-util X] [--min-slo Y] [--max-ckpt-overhead Z]\n"
    "                     [--max-p99-ms M] [--util-kind busy|allocated|useful]\n"
    "                     [--against BASE.h5 [--tolerance T]]\n"
    "\n"
    "Quality gates for CI. Shares are fractions (0.7) or percentages (70%); a\n"
    "replicated file is judged on its means.\n"
    "  --min-util X           cluster utilisation >= X; busy (SM-active) GPU-time by\n"
    "                         default, --util-kind allocated|useful to choose (useful\n"
    "                         falls back to busy when the file does not record it)\n"
    "  --min-slo Y            worst service's share of requests within its SLO >= Y\n"
    "  --max-ckpt-overhead Z  checkpoint/restore/recompute GPU-time over training\n"
    "                         GPU-time <= Z (0 when the file has no checkpoint data)\n"
    "  --max-p99-ms M         worst service's p99 latency <= M ms\n"
    "  --against BASE.h5      no headline metric worse than BASE's by more than the\n"
    "  --tolerance T          relative tolerance T (default 0)\n"
    "\n"
    "Prints one line per failed gate with its value and bound, then a summary.\n"
    "exit status: 0 all gates hold, 1 a gate failed, 2 usage error or unreadable file\n";

int cli_check_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL, *against = NULL;
    struct check_gates g;
    check_gates_init(&g);
    bool have_tol = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double *share = NULL;
        if (is_help(a)) {
            fputs(check_usage, out);
            return 0;
        }
        if (!strcmp(a, "--min-util"))
            share = &g.min_util;
        else if (!strcmp(a, "--min-slo"))
            share = &g.min_slo;
        else if (!strcmp(a, "--max-ckpt-overhead"))
            share = &g.max_ckpt_overhead;
        else if (!strcmp(a, "--tolerance"))
            share = &g.tolerance;
        if (share) {
            if (++i >= argc || parse_share(argv[i], share) || *share < 0) {
                fprintf(err,
                        "tidesim check: %s needs a non-negative fraction (0.9) or percentage "
                        "(90%%)\n",
                        a);
                return 2;
            }
            have_tol |= share == &g.tolerance;
        } else if (!strcmp(a, "--max-p99-ms")) {
            if (++i >= argc || parse_number(argv[i], &g.max_p99_ms) || g.max_p99_ms < 0) {
                fprintf(err, "tidesim check: --max-p99-ms needs a non-negative number of ms\n");
                return 2;
            }
        } else if (!strcmp(a, "--util-kind")) {
            const char *k = ++i < argc ? argv[i] : "";
            if (!strcmp(k, "busy"))
                g.util_kind = CHECK_UTIL_BUSY;
            else if (!strcmp(k, "allocated"))
                g.util_kind = CHECK_UTIL_ALLOCATED;
            else if (!strcmp(k, "useful"))
                g.util_kind = CHECK_UTIL_USEFUL;
            else {
                fprintf(err, "tidesim check: --util-kind needs busy, allocated or useful\n");
                return 2;
            }
        } else if (!strcmp(a, "--against")) {
            if (++i >= argc) {
                fprintf(err, "tidesim check: --against needs a results file\n");
                return 2;
            }
            against = argv[i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(err, "tidesim check: unknown option '%s'\n", a);
            return 2;
        } else if (!path) {
            path = a;
        } else {
            fprintf(err, "tidesim check: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!path) {
        fputs(check_usage, err);
        return 2;
    }
    if (have_tol && !against) {
        fprintf(err, "tidesim check: --tolerance needs --against BASE.h5\n");
        return 2;
    }
    if (isnan(g.min_util) && isnan(g.min_slo) && isnan(g.max_ckpt_overhead) &&
        isnan(g.max_p99_ms) && !against) {
        fprintf(err, "tidesim check: no gate given (see tidesim check --help)\n");
        return 2;
    }
    struct results r, base;
    char msg[512];
    if (results_open(&r, path, msg, sizeof(msg))) {
        fprintf(err, "tidesim check: %s\n", msg);
        return 2;
    }
    if (against && results_open(&base, against, msg, sizeof(msg))) {
        fprintf(err, "tidesim check: %s\n", msg);
        results_release(&r);
        return 2;
    }
    size_t failed = check_run(out, &r, against ? &base : NULL, &g, NULL);
    results_release(&r);
    if (against)
        results_release(&base);
    return failed ? 1 : 0;
}

static const char plot_usage[] =
    "usage: tidesim plot FILE... -o DIR [--format png|svg]\n"
    "\n"
    "Draws, through gnuplot, for each file (replication 0 of a replicated file):\n"
    "util (GPUs by use over the time of day), p99 (p99 latency over time with the SLO),\n"
    "cdf (latency CDF per service), queue (training queue over time) and jobs (job\n"
    "timeline); and for all files: compare (utilisation and SLO bars with 95% CI\n"
    "whiskers). With several files the per-file charts are named <file>_<chart>.\n"
    "The data go to DIR/data/*.dat; the scripts are analysis/plots/*.gp (found via\n"
    "$TIDESIM_PLOTS, next to the binary, or ./analysis/plots) — copy and restyle them.\n"
    "gnuplot comes from $TIDESIM_GNUPLOT or PATH (Debian package gnuplot-nox).\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file, missing gnuplot or a failed chart, 2 usage\n";

int cli_plot_run(int argc, char **argv, FILE *out, FILE *err)
{
    struct plot_opts o = {NULL, PLOT_PNG, NULL, "gnuplot"};
    const char **paths = calloc((size_t)argc, sizeof(*paths));
    size_t n = 0;
    if (!paths)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(plot_usage, out);
            free(paths);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) {
                fprintf(err, "tidesim plot: %s needs a folder\n", a);
                free(paths);
                return 2;
            }
            o.dir = argv[i];
        } else if (!strcmp(a, "--format")) {
            const char *f = ++i < argc ? argv[i] : "";
            if (!strcmp(f, "png"))
                o.format = PLOT_PNG;
            else if (!strcmp(f, "svg"))
                o.format = PLOT_SVG;
            else {
                fprintf(err, "tidesim plot: --format needs png or svg\n");
                free(paths);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(err, "tidesim plot: unknown option '%s'\n", a);
            free(paths);
            return 2;
        } else {
            paths[n++] = a;
        }
    }
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

int cli_report(int argc, char **argv)
{
    return cli_report_run(argc, argv, stdout, stderr);
}

int cli_compare(int argc, char **argv)
{
    return cli_compare_run(argc, argv, stdout, stderr);
}

int cli_check(int argc, char **argv)
{
    return cli_check_run(argc, argv, stdout, stderr);
}

int cli_plot(int argc, char **argv)
{
    return cli_plot_run(argc, argv, stdout, stderr);
}
