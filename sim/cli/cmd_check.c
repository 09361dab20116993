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
#include "sim/conf.h"

static const char check_usage[] =
    "usage: tidesim check FILE [--min-util X] [--min-slo Y] [--max-ckpt-overhead Z]\n"
    "                     [--max-p99-ms M] [--util-kind busy|allocated|useful]\n"
    "                     [--against BASE.h5 [--tolerance T]]\n"
    "                     [--max-queue-delay D] [--min-training-gpu-h-per-day G]\n"
    "                     [--backlog-drained-by D] [--min KEY=V] [--max KEY=V]\n"
    "                     [--format text|junit]\n"
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
    "  --max-queue-delay D    training jobs' mean queueing delay <= D (a duration:\n"
    "                         90min, 2h, 1d)\n"
    "  --min-training-gpu-h-per-day G\n"
    "                         training work done per simulated day >= G GPU-hours\n"
    "  --backlog-drained-by D every job of the initial backlog (submitted at t = 0)\n"
    "                         finished by simulated time D (a job still queued or\n"
    "                         running at the end fails; rejected ones are left out)\n"
    "  --min KEY=V, --max KEY=V\n"
    "                         any /summary figure by key (fragmentation, a cost, ...;\n"
    "                         tidesim report --format json lists the keys), V in the\n"
    "                         unit the file gives it: a fraction 0.2 or 20%, a\n"
    "                         duration in s or 90min/2h, else a number. A key the\n"
    "                         file does not hold is a usage error. Repeatable.\n"
    "  --format text|junit    junit: JUnit XML on stdout (one testcase per gate) for\n"
    "                         CI test reports; the exit status is the same\n"
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
    bool have_tol = false, junit = false;
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
        } else if (!strcmp(a, "--max-queue-delay") || !strcmp(a, "--backlog-drained-by")) {
            sim_time t;
            if (++i >= argc || conf_parse_duration(argv[i], &t)) {
                fprintf(err, "tidesim check: %s needs a duration with a unit (90min, 2h, 1d)\n", a);
                return 2;
            }
            *(a[2] == 'm' ? &g.max_queue_delay_s : &g.backlog_by_s) = sim_time_to_sec(t);
        } else if (!strcmp(a, "--min-training-gpu-h-per-day")) {
            if (++i >= argc || cli_parse_number(argv[i], &g.min_train_gpuh_day) ||
                g.min_train_gpuh_day < 0) {
                fprintf(err, "tidesim check: %s needs a non-negative number of GPU-hours\n", a);
                return 2;
            }
        } else if (!strcmp(a, "--min") || !strcmp(a, "--max")) {
            int brc = ++i < argc ? check_add_bound(&g, argv[i], a[3] == 'i' ? 1 : -1) : -EINVAL;
            if (brc == -ENOSPC) {
                fprintf(err, "tidesim check: at most %d --min/--max gates\n", CHECK_MAX_BOUNDS);
                return 2;
            }
            if (brc) {
                fprintf(err, "tidesim check: %s needs KEY=VALUE (e.g. %s fragmentation=20%%)\n", a,
                        a);
                return 2;
            }
        } else if (!strcmp(a, "--format")) {
            const char *f = ++i < argc ? argv[i] : "";
            if (!strcmp(f, "junit"))
                junit = true;
            else if (strcmp(f, "text")) {
                fprintf(err, "tidesim check: --format needs text or junit\n");
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
        isnan(g.max_p99_ms) && isnan(g.max_queue_delay_s) && isnan(g.min_train_gpuh_day) &&
        isnan(g.backlog_by_s) && g.nbounds == 0 && !against) {
        fprintf(err, "tidesim check: no gate given (see tidesim check --help)\n");
        return 2;
    }
    struct results r, base;
    char msg[2048];
    if (results_open(&r, path, msg, sizeof(msg))) {
        fprintf(err, "tidesim check: %s\n", msg);
        return 2;
    }
    if (against && results_open(&base, against, msg, sizeof(msg))) {
        fprintf(err, "tidesim check: %s\n", msg);
        results_release(&r);
        return 2;
    }
    struct check_list l;
    int erc = check_evaluate(&r, against ? &base : NULL, &g, &l, msg, sizeof(msg));
    if (erc) {
        fprintf(err, "tidesim check: %s\n", msg);
        check_list_release(&l);
        results_release(&r);
        if (against)
            results_release(&base);
        return 2;
    }
    if (junit)
        check_print_junit(out, &l, &r);
    else
        check_print_text(out, &l);
    struct check_outcome o = l.o;
    check_list_release(&l);
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
