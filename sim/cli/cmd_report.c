/* cmd_report.c — `tidesim report`: print a results file's figures (sim/cli/cmd_analysis.h). */
#include "sim/cli/cmd_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/report_html.h"
#include "analysis/results.h"
#include "analysis/sweepidx.h"

#include "sim/cli/args.h"

static const char report_usage[] =
    "usage: tidesim report FILE [--format text|markdown|json] [-o OUT]\n"
    "       tidesim report FILE... --format html -o report.html\n"
    "\n"
    "Prints a results file's headline metrics (mean and 95% Student-t interval when\n"
    "the file holds replications), the per-service latency and SLO table, training\n"
    "outcomes and GPU-time by state. Figures the file does not hold print as '-'.\n"
    "A sweep's index (DIR/index.h5 of tidesim sweep) prints as its point table: axis\n"
    "values and headline metrics ± 95% half-width (text; json with --format json).\n"
    "\n"
    "--format html writes one self-contained page (no script, font or image from\n"
    "outside: it reads offline) for one run, a replicated run or several runs side by\n"
    "side: headline metrics, services, training, GPU-time by state, the charts of\n"
    "`tidesim plot` inlined as SVG (when gnuplot is installed), each run's scenario\n"
    "text and provenance.\n"
    "\n"
    "options (--opt VALUE and --opt=VALUE are the same):\n"
    "  -f, --format F    text (default), markdown, json or html\n"
    "  -o, --output OUT  write to OUT (complete or not at all) instead of standard output\n"
    "  -h, --help        this text\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file or cannot write OUT, 2 usage error\n";

int cli_report_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char **paths = calloc((size_t)argc, sizeof(*paths));
    const char *output = NULL;
    size_t n = 0;
    bool html = false;
    enum report_format fmt = REPORT_TEXT;
    int rc = 2;
    if (!paths) {
        fputs("tidesim report: out of memory\n", err);
        return 1;
    }
    static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c;
    while ((c = getopt_long(argc, argv, ":hf:o:", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(report_usage, out);
            rc = 0;
            goto done;
        } else if (c == 'f') {
            html = !strcmp(optarg, "html");
            if (!html && report_parse_format(optarg, &fmt)) {
                fprintf(err, "tidesim report: --format needs text, markdown, json or html\n");
                goto done;
            }
        } else if (c == 'o') {
            if (!*optarg) {
                fprintf(err, "tidesim report: -o needs a file name\n");
                goto done;
            }
            output = optarg;
        } else {
            rc = cli_opt_error(err, "report", c, argv);
            goto done;
        }
    }
    while (optind < argc)
        paths[n++] = argv[optind++];
    if (n == 0) {
        fputs(report_usage, err);
        goto done;
    }
    if (n > 1 && !html) {
        fprintf(err, "tidesim report: several files only with --format html (or use tidesim "
                     "compare)\n");
        goto done;
    }
    for (size_t i = 0; output && i < n; i++)
        if (cli_same_file(output, paths[i])) {
            fprintf(err, "tidesim report: -o %s is an input file; refusing to overwrite it\n",
                    output);
            goto done;
        }
    /* OUT is written under a temporary name and renamed when complete. */
    char tmp[4200] = "";
    FILE *dst = out;
    if (output && strcmp(output, "-")) {
        snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", output, (long)getpid());
        dst = fopen(tmp, "w");
        if (!dst) {
            fprintf(err, "tidesim report: cannot write %s: %s\n", output, strerror(errno));
            rc = 1;
            goto done;
        }
    }
    char msg[1024];
    int wrc;
    struct results_vet vet = {.ship = -1};
    if (html) {
        char scripts[1024];
        const char *gp = getenv("TIDESIM_GNUPLOT");
        struct report_html_opts ho = {gp && *gp ? gp : "gnuplot", NULL, getenv("TMPDIR")};
        if (plot_find_scripts(argv[0], scripts, sizeof(scripts)) == 0)
            ho.scripts = scripts;
        wrc = report_html(dst, paths, n, &ho, msg, sizeof(msg));
    } else if (sweepidx_is_index_vet(paths[0], RESULTS_BY_REPORT, &vet)) { /* a sweep's index */
        wrc = sweepidx_report(dst, paths[0], fmt == REPORT_JSON, &vet, msg, sizeof(msg));
    } else { /* the child that told it is no index read it for the report (one child) */
        wrc = report_write(dst, paths[0], fmt, &vet, msg, sizeof(msg));
    }
    results_vet_release(&vet);
    if (wrc)
        fprintf(err, "tidesim: %s\n", msg);
    rc = wrc ? 1 : 0;
    if (dst != out) {
        bool wrote = !ferror(dst);
        wrote &= fclose(dst) == 0;
        if (!wrote && !wrc)
            fprintf(err, "tidesim report: cannot write %s: %s\n", output, strerror(errno));
        if (wrc || !wrote || rename(tmp, output)) {
            if (!wrc && wrote)
                fprintf(err, "tidesim report: cannot write %s: %s\n", output, strerror(errno));
            unlink(tmp);
            rc = 1;
        }
    }
done:
    free(paths);
    return rc;
}

int cli_report(int argc, char **argv)
{
    return cli_report_run(argc, argv, stdout, stderr);
}
