/* cmd_check.c — `tidesim check`: gates for CI (sim/cli/cmd_analysis.h). */
#include "sim/cli/cmd_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/results.h"

#include "sim/cli/args.h"

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
    "  --tolerance T          relative tolerance T (default 0), with significance: the\n"
    "                         95% interval of the worsening (paired by seed when the\n"
    "                         files share seeds, else Welch; Bonferroni over the\n"
    "                         metrics) beyond T fails, within T holds, across T is\n"
    "                         inconclusive. Single runs are compared by value.\n"
    "\n"
    "Prints one line per failed or inconclusive gate with its value and bound, then a\n"
    "summary.\n"
    "exit status: 0 all gates hold, 1 a gate failed, 2 usage error or unreadable file,\n"
    "3 no gate failed but one is inconclusive, 4 the file (or BASE) is an incomplete\n"
    "(interrupted) run\n";

int cli_check_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL, *against = NULL;
    struct check_gates g;
    check_gates_init(&g);
    bool have_tol = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double *share = NULL;
        if (cli_is_help(a)) {
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
            int prc = ++i < argc ? cli_parse_share(argv[i], share) : -EINVAL;
            if (prc == -ERANGE) {
                fprintf(err,
                        "tidesim check: %s %s: a share is a fraction 0..1 or a percentage; "
                        "write %s%% or %g\n",
                        a, argv[i], argv[i], strtod(argv[i], NULL) / 100);
                return 2;
            }
            if (prc || *share < 0) {
                fprintf(err,
                        "tidesim check: %s needs a non-negative fraction (0.9) or percentage "
                        "(90%%)\n",
                        a);
                return 2;
            }
            have_tol |= share == &g.tolerance;
        } else if (!strcmp(a, "--max-p99-ms")) {
            if (++i >= argc || cli_parse_number(argv[i], &g.max_p99_ms) || g.max_p99_ms < 0) {
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
    struct check_outcome o;
    check_run(out, &r, against ? &base : NULL, &g, &o);
    const char *incomplete = !r.complete ? path : against && !base.complete ? against : NULL;
    results_release(&r);
    if (against)
        results_release(&base);
    if (incomplete) {
        fprintf(err,
                "tidesim check: %s is an incomplete run: its figures cover only part of the "
                "scenario\n",
                incomplete);
        return 4;
    }
    return o.failed ? 1 : o.inconclusive ? 3 : 0;
}

int cli_check(int argc, char **argv)
{
    return cli_check_run(argc, argv, stdout, stderr);
}
