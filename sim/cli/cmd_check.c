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
    "                     [--against BASE.h5 [--tolerance T]] [--format text|json]\n"
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
    "summary. --format json prints one JSON object instead: file, against, complete,\n"
    "status (pass|fail|inconclusive|incomplete), exit, the counts evaluated, failed and\n"
    "inconclusive, findings [{result, gate, message}], notes and summary.\n"
    "exit status: 0 all gates hold, 1 a gate failed, 2 usage error or unreadable file,\n"
    "3 no gate failed but one is inconclusive, 4 the file (or BASE) is an incomplete\n"
    "(interrupted) run\n";

/*
 * The lines check_run() wrote, as JSON: each "FAIL <gate>: ..." and
 * "INCONCLUSIVE <gate>: ..." line a finding, "note: ..." lines notes, the last
 * line the summary.
 */
static void check_json(FILE *out, const char *path, const char *against, bool complete,
                       const struct check_outcome *o, int status, char *text)
{
    static const char *const names[] = {"pass", "fail", "usage", "inconclusive", "incomplete"};
    fputs("{\n  \"file\": ", out);
    cli_json_str(out, path);
    fputs(",\n  \"against\": ", out);
    cli_json_str(out, against);
    fprintf(out,
            ",\n  \"complete\": %s,\n  \"status\": \"%s\",\n  \"exit\": %d,\n"
            "  \"evaluated\": %zu,\n  \"failed\": %zu,\n  \"inconclusive\": %zu,\n"
            "  \"findings\": [",
            complete ? "true" : "false", names[status], status, o->evaluated, o->failed,
            o->inconclusive);
    const char *summary = NULL;
    size_t nf = 0, nn = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            fputs("\n  ],\n  \"notes\": [", out);
        for (char *line = text, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            size_t len = next ? (size_t)(next - line) : strlen(line);
            if (next)
                next++;
            char buf[1024];
            snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
                     line);
            const char *kind = !strncmp(buf, "FAIL ", 5)            ? "fail"
                               : !strncmp(buf, "INCONCLUSIVE ", 13) ? "inconclusive"
                                                                    : NULL;
            if (pass == 0 && kind) {
                char *gate = strchr(buf, ' ') + 1, *colon = strchr(gate, ':');
                if (colon)
                    *colon = '\0';
                fprintf(out, "%s\n    {\"result\": \"%s\", \"gate\": ", nf++ ? "," : "", kind);
                cli_json_str(out, gate);
                fputs(", \"message\": ", out);
                cli_json_str(out, colon ? colon + (colon[1] == ' ' ? 2 : 1) : "");
                fputs("}", out);
            } else if (pass == 1 && !strncmp(buf, "note: ", 6)) {
                fputs(nn++ ? ",\n    " : "\n    ", out);
                cli_json_str(out, buf + 6);
            } else if (pass == 1 && !strncmp(buf, "check: ", 7)) {
                summary = line;
            }
        }
    }
    fputs("\n  ],\n  \"summary\": ", out);
    if (summary) {
        size_t len = strcspn(summary + 7, "\n");
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
                 summary + 7);
        cli_json_str(out, buf);
    } else {
        fputs("null", out);
    }
    fputs("\n}\n", out);
}

int cli_check_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL, *against = NULL;
    struct check_gates g;
    check_gates_init(&g);
    bool have_tol = false, json = false;
    enum {
        OPT_MIN_UTIL = 256,
        OPT_MIN_SLO,
        OPT_MAX_CKPT,
        OPT_TOLERANCE,
        OPT_MAX_P99,
        OPT_UTIL_KIND,
        OPT_AGAINST,
        OPT_FORMAT
    };
    static const struct option longopts[] = {
        {"min-util", required_argument, NULL, OPT_MIN_UTIL},
        {"min-slo", required_argument, NULL, OPT_MIN_SLO},
        {"max-ckpt-overhead", required_argument, NULL, OPT_MAX_CKPT},
        {"tolerance", required_argument, NULL, OPT_TOLERANCE},
        {"max-p99-ms", required_argument, NULL, OPT_MAX_P99},
        {"util-kind", required_argument, NULL, OPT_UTIL_KIND},
        {"against", required_argument, NULL, OPT_AGAINST},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c, li = -1;
    while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
        double *share = NULL;
        const char *a = li >= 0 ? longopts[li].name : "";
        li = -1;
        switch (c) {
        case 'h':
            fputs(check_usage, out);
            return 0;
        case OPT_MIN_UTIL:
            share = &g.min_util;
            break;
        case OPT_MIN_SLO:
            share = &g.min_slo;
            break;
        case OPT_MAX_CKPT:
            share = &g.max_ckpt_overhead;
            break;
        case OPT_TOLERANCE:
            share = &g.tolerance;
            break;
        case OPT_MAX_P99:
            if (cli_parse_number(optarg, &g.max_p99_ms) || g.max_p99_ms < 0) {
                fprintf(err, "tidesim check: --max-p99-ms needs a non-negative number of ms\n");
                return 2;
            }
            break;
        case OPT_UTIL_KIND:
            if (!strcmp(optarg, "busy"))
                g.util_kind = CHECK_UTIL_BUSY;
            else if (!strcmp(optarg, "allocated"))
                g.util_kind = CHECK_UTIL_ALLOCATED;
            else if (!strcmp(optarg, "useful"))
                g.util_kind = CHECK_UTIL_USEFUL;
            else {
                fprintf(err, "tidesim check: --util-kind needs busy, allocated or useful\n");
                return 2;
            }
            break;
        case OPT_AGAINST:
            against = optarg;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                fprintf(err, "tidesim check: --format needs text or json\n");
                return 2;
            }
            json = !strcmp(optarg, "json");
            break;
        default:
            return cli_opt_error(err, "check", c, argv);
        }
        if (share) {
            int prc = cli_parse_share(optarg, share);
            if (prc == -ERANGE) {
                fprintf(err,
                        "tidesim check: --%s %s: a share is a fraction 0..1 or a percentage; "
                        "write %s%% or %g\n",
                        a, optarg, optarg, strtod(optarg, NULL) / 100);
                return 2;
            }
            if (prc || *share < 0) {
                fprintf(err,
                        "tidesim check: --%s needs a non-negative fraction (0.9) or percentage "
                        "(90%%)\n",
                        a);
                return 2;
            }
            have_tol |= share == &g.tolerance;
        }
    }
    if (optind < argc)
        path = argv[optind++];
    if (optind < argc) {
        fprintf(err, "tidesim check: unexpected argument '%s'\n", argv[optind]);
        return 2;
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
    char *text = NULL;
    size_t text_len = 0;
    FILE *sink = json ? open_memstream(&text, &text_len) : out;
    if (!sink) {
        fprintf(err, "tidesim check: out of memory\n");
        results_release(&r);
        if (against)
            results_release(&base);
        return 2;
    }
    check_run(sink, &r, against ? &base : NULL, &g, &o);
    const char *incomplete = !r.complete ? path : against && !base.complete ? against : NULL;
    bool complete = r.complete && (!against || base.complete);
    results_release(&r);
    if (against)
        results_release(&base);
    int status = incomplete ? 4 : o.failed ? 1 : o.inconclusive ? 3 : 0;
    if (json) {
        fclose(sink);
        check_json(out, path, against, complete, &o, status, text);
        free(text);
    }
    if (incomplete)
        fprintf(err,
                "tidesim check: %s is an incomplete run: its figures cover only part of the "
                "scenario\n",
                incomplete);
    return status;
}

int cli_check(int argc, char **argv)
{
    return cli_check_run(argc, argv, stdout, stderr);
}
