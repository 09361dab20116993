/* cmd_compare.c — `tidesim compare`: several results files side by side, with intervals
 * (sim/cli/cmd_analysis.h). */
#include "sim/cli/cmd_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/results.h"

#include "sim/cli/args.h"

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
        if (cli_is_help(a)) {
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

int cli_compare(int argc, char **argv)
{
    return cli_compare_run(argc, argv, stdout, stderr);
}
