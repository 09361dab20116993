/* cmd_check.c — `tidesim check`: gates for CI (sim/cli/cmd_analysis.h). */
#include "sim/cli/cmd_analysis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/results.h"
#include "analysis/sweepidx.h"

#include "sim/cli/args.h"
#include "sim/conf.h"

static const char check_usage[] =
    "usage: tidesim check FILE [--min-util X] [--min-slo Y] [--max-ckpt-overhead Z]\n"
    "                     [--max-p99-ms M] [--util-kind busy|allocated|useful]\n"
    "                     [--max-ttft-p99 M] [--max-tpot-p99 M]\n"
    "                     [--against BASE.h5 [--tolerance T]]\n"
    "                     [--max-queue-delay D] [--min-training-gpu-h-per-day G]\n"
    "                     [--backlog-drained-by D] [--min KEY=V] [--max KEY=V]\n"
    "                     [--pool NAME] [--queue NAME] [--confident] [--format text|json|junit]\n"
    "       tidesim check INDEX.h5 [--point N]... [--where PATH=VALUE]... [gates]\n"
    "\n"
    "Quality gates for CI. Shares are fractions (0.7) or percentages (70%); a\n"
    "replicated file is judged on its means (with --confident, on its 95% intervals).\n"
    "  --min-util X           cluster utilisation >= X; busy (SM-active) GPU-time by\n"
    "                         default, --util-kind allocated|useful to choose (useful\n"
    "                         falls back to busy when the file does not record it)\n"
    "  --min-slo Y            worst service's share of requests within its SLO >= Y\n"
    "  --max-ckpt-overhead Z  checkpoint/restore/recompute GPU-time over training\n"
    "                         GPU-time <= Z (0 when the file has no checkpoint data)\n"
    "  --max-p99-ms M         worst service's p99 latency <= M ms\n"
    "  --max-ttft-p99 M       worst LLM service's p99 time to first token <= M ms\n"
    "  --max-tpot-p99 M       worst LLM service's p99 time per output token <= M ms\n"
    "  --against BASE.h5      no headline metric worse than BASE's by more than the\n"
    "  --tolerance T          relative tolerance T (default 0), with significance: the\n"
    "                         95% interval of the worsening (paired by seed when the\n"
    "                         files share seeds, else Welch; Bonferroni over the\n"
    "                         metrics) beyond T fails, within T holds, across T is\n"
    "                         inconclusive. Single runs are compared by value.\n"
    "  --max-queue-delay D    training jobs' mean queueing delay <= D (a duration:\n"
    "                         90min, 2h, 1d)\n"
    "  --queue NAME           judge --max-queue-delay and --min/--max on the\n"
    "                         ClusterQueue NAME (/queues/NAME, a kueue run with\n"
    "                         manifests): its mean queueing delay, and its figures\n"
    "                         (delay_p99_s, delay_max_s, evictions, borrowed_mean_gpus...)\n"
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
    "  --pool NAME            judge node pool NAME (cluster.pools; /pools/NAME) instead\n"
    "                         of the whole cluster: --min-util, --min-slo (its replicas'\n"
    "                         requests), --min-training-gpu-h-per-day, --min/--max KEY\n"
    "                         (share_fragmented, cost_total, energy_kwh) and --against\n"
    "  --confident            judge every gate on its 95% interval over the\n"
    "                         replications, not the mean: it holds when the whole\n"
    "                         interval lies on the passing side, fails when it lies\n"
    "                         wholly on the failing side, else it is inconclusive (a\n"
    "                         single run: inconclusive). tidesim plan judges so.\n"
    "  --point N, --where PATH=VALUE\n"
    "                         on a sweep or plan index: gate only the points chosen\n"
    "                         (a point number of tidesim report INDEX; an axis value,\n"
    "                         e.g. --where policy.name=kueue); repeatable, all must\n"
    "                         match. Without them every point run is gated: one\n"
    "                         line per point, and the exit status of the worst\n"
    "  --format text|json|junit\n"
    "                         json: one JSON object (file, against, complete, status\n"
    "                         pass|fail|inconclusive|incomplete, exit, the counts\n"
    "                         evaluated, failed and inconclusive, gates and findings\n"
    "                         [{result, gate, message}], notes, summary); junit: JUnit\n"
    "                         XML (one testcase per gate) for CI test reports; the\n"
    "                         exit status is the same\n"
    "\n"
    "Prints one line per failed or inconclusive gate with its value and bound, then a\n"
    "summary.\n"
    "exit status: 0 all gates hold, 1 a gate failed, 2 usage error or unreadable file,\n"
    "3 no gate failed but one is inconclusive, 4 the file (or BASE) is an incomplete\n"
    "(interrupted) run\n";

static void json_items(FILE *out, const struct check_list *l, bool all)
{
    static const char *const res[] = {"pass", "fail", "inconclusive"};
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct check_item *it = &l->items[i];
        if (!all && it->status == CHECK_PASS)
            continue;
        fprintf(out, "%s\n    {\"result\": \"%s\", \"gate\": ", k++ ? "," : "", res[it->status]);
        cli_json_str(out, it->gate);
        fputs(", \"value\": ", out);
        cli_json_num(out, it->value);
        fputs(", \"ci_low\": ", out);
        cli_json_num(out, it->lo);
        fputs(", \"ci_high\": ", out);
        cli_json_num(out, it->hi);
        fputs(", \"bound\": ", out);
        cli_json_num(out, it->bound);
        fputs(", \"margin\": ", out);
        cli_json_num(out, it->margin);
        fputs(", \"message\": ", out);
        /* The line without its "FAIL <gate>: " / "INCONCLUSIVE <gate>: " head. */
        const char *m = it->msg, *sp = strchr(m, ' ');
        size_t gl = strlen(it->gate);
        if (sp && !strncmp(sp + 1, it->gate, gl) && !strncmp(sp + 1 + gl, ": ", 2))
            m = sp + 3 + gl;
        cli_json_str(out, m);
        fputs("}", out);
    }
}

/* The verdict as one JSON object, from the evaluated gates (summary: the text's last line). */
static void check_json(FILE *out, const char *path, const char *against, bool complete,
                       const struct check_list *l, int status)
{
    static const char *const names[] = {"pass", "fail", "usage", "inconclusive", "incomplete"};
    fputs("{\n  \"file\": ", out);
    cli_json_str(out, path);
    fputs(",\n  \"against\": ", out);
    cli_json_str(out, against);
    fprintf(out,
            ",\n  \"complete\": %s,\n  \"status\": \"%s\",\n  \"exit\": %d,\n"
            "  \"evaluated\": %zu,\n  \"failed\": %zu,\n  \"inconclusive\": %zu,\n"
            "  \"gates\": [",
            complete ? "true" : "false", names[status], status, l->o.evaluated, l->o.failed,
            l->o.inconclusive);
    json_items(out, l, true);
    fputs("\n  ],\n  \"findings\": [", out);
    json_items(out, l, false);
    fputs("\n  ],\n  \"notes\": [", out);
    size_t nn = 0;
    for (const char *p = l->notes; *p;) {
        size_t len = strcspn(p, "\n");
        char buf[1024];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), p);
        const char *note = strncmp(buf, "note: ", 6) ? buf : buf + 6;
        if (*note) {
            fputs(nn++ ? ",\n    " : "\n    ", out);
            cli_json_str(out, note);
        }
        p += len + (p[len] == '\n');
    }
    fputs("\n  ],\n  \"summary\": ", out);
    char *text = NULL;
    size_t tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    const char *summary = NULL;
    if (m) {
        check_print_text(m, l);
        fclose(m);
        for (char *line = text; line && *line;) {
            if (!strncmp(line, "check: ", 7))
                summary = line + 7;
            char *nl = strchr(line, '\n');
            line = nl ? nl + 1 : NULL;
        }
    }
    if (summary) {
        char buf[512];
        size_t len = strcspn(summary, "\n");
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
                 summary);
        cli_json_str(out, buf);
    } else {
        fputs("null", out);
    }
    free(text);
    fputs("\n}\n", out);
}

/*
 * check on a sweep or plan index: every chosen point that has run is gated
 * as its own file; one line per point, the failing gates under it. Exit
 * status: 1 when a point fails, else 3 when one is inconclusive, else 4 when
 * a chosen point has not run (or the index is incomplete), else 0.
 */
static int check_index(const char *path, const struct results_vet *vet,
                       const struct sweepidx_sel *sel, const struct results *base,
                       const char *against, const struct check_gates *g, bool json, bool junit,
                       FILE *out, FILE *err)
{
    struct sweepidx_points pts;
    char msg[2048];
    if (sweepidx_select(path, vet, sel, &pts, msg, sizeof(msg))) {
        fprintf(err, "tidesim check: %s\n", msg);
        return 2;
    }
    if (pts.n == 0) {
        fprintf(err, "tidesim check: %s: no point matches --point/--where\n", path);
        sweepidx_points_release(&pts);
        return 2;
    }
    size_t pass = 0, fail = 0, unclear = 0, notrun = 0;
    char *body = NULL;
    size_t blen = 0;
    FILE *b = open_memstream(&body, &blen);
    if (!b) {
        fprintf(err, "tidesim check: out of memory\n");
        sweepidx_points_release(&pts);
        return 2;
    }
    size_t tests = 0, failures = 0, skipped = 0, errors = 0;
    static const char *const names[] = {"pass", "fail", "usage", "inconclusive", "incomplete"};
    int rc = 0;
    for (size_t i = 0; i < pts.n && !rc; i++) {
        if (!pts.done[i]) {
            notrun++;
            if (json)
                fprintf(b, "%s\n    {\"point\": %zu, \"label\": ", i ? "," : "", pts.point[i]);
            else if (!junit)
                fprintf(b, "point %zu (%s): NOT RUN\n", pts.point[i], pts.label[i]);
            if (json) {
                cli_json_str(b, pts.label[i]);
                fputs(", \"status\": \"incomplete\", \"gates\": []}", b);
            }
            continue;
        }
        struct results r;
        if (results_open_for(&r, pts.path[i], RESULTS_BY_CHECK, msg, sizeof(msg))) {
            fprintf(err, "tidesim check: %s\n", msg);
            rc = 2;
            break;
        }
        struct check_list l;
        if (check_evaluate(&r, base, g, &l, msg, sizeof(msg))) {
            fprintf(err, "tidesim check: point %zu: %s\n", pts.point[i], msg);
            check_list_release(&l);
            results_release(&r);
            rc = 2;
            break;
        }
        int st = l.o.failed ? 1 : l.o.inconclusive ? 3 : !r.complete ? 4 : 0;
        pass += st == 0;
        fail += st == 1;
        unclear += st == 3;
        notrun += st == 4;
        if (junit) {
            char name[4200];
            snprintf(name, sizeof(name), "point %zu: %s", pts.point[i], pts.label[i]);
            check_print_junit_suite(b, &l, &r, name);
            tests += l.o.evaluated + !r.complete;
            failures += l.o.failed;
            skipped += l.o.inconclusive;
            errors += !r.complete;
        } else if (json) {
            fprintf(b, "%s\n    {\"point\": %zu, \"label\": ", i ? "," : "", pts.point[i]);
            cli_json_str(b, pts.label[i]);
            fputs(", \"file\": ", b);
            cli_json_str(b, pts.path[i]);
            fprintf(b, ", \"status\": \"%s\", \"gates\": [", names[st]);
            json_items(b, &l, true);
            fputs("]}", b);
        } else {
            fprintf(b, "point %zu (%s): %s\n", pts.point[i], pts.label[i],
                    st == 0   ? "all gates hold"
                    : st == 1 ? "FAIL"
                    : st == 3 ? "INCONCLUSIVE"
                              : "INCOMPLETE");
            for (size_t k = 0; k < l.n; k++)
                if (l.items[k].status != CHECK_PASS)
                    fprintf(b, "  %s\n", l.items[k].msg);
        }
        check_list_release(&l);
        results_release(&r);
    }
    fclose(b);
    int status = rc ? rc : fail ? 1 : unclear ? 3 : notrun ? 4 : 0;
    if (!rc) {
        if (junit) {
            fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
            fprintf(out,
                    "<testsuites name=\"tidesim check\" tests=\"%zu\" failures=\"%zu\" "
                    "errors=\"%zu\" skipped=\"%zu\">\n",
                    tests, failures, errors, skipped);
            fputs(body ? body : "", out);
            fputs("</testsuites>\n", out);
        } else if (json) {
            fputs("{\n  \"index\": ", out);
            cli_json_str(out, path);
            fputs(",\n  \"against\": ", out);
            cli_json_str(out, against);
            fprintf(out,
                    ",\n  \"status\": \"%s\",\n  \"exit\": %d,\n  \"points\": %zu,\n"
                    "  \"pass\": %zu,\n  \"fail\": %zu,\n  \"inconclusive\": %zu,\n"
                    "  \"not_run\": %zu,\n  \"results\": [",
                    names[status], status, pts.n, pass, fail, unclear, notrun);
            fputs(body ? body : "", out);
            fputs("\n  ]\n}\n", out);
        } else {
            fputs(body ? body : "", out);
            fprintf(out, "check: %zu of %zu point(s) hold every gate", pass, pts.n);
            if (fail)
                fprintf(out, ", %zu fail", fail);
            if (unclear)
                fprintf(out, ", %zu inconclusive", unclear);
            if (notrun)
                fprintf(out, ", %zu not run or incomplete", notrun);
            fputs("\n", out);
        }
    }
    free(body);
    sweepidx_points_release(&pts);
    return status;
}

int cli_check_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL, *against = NULL, *pool = NULL;
    struct check_gates g;
    check_gates_init(&g);
    bool have_tol = false, junit = false, json = false;
    struct sweepidx_sel sel = {0};
    enum {
        OPT_MIN_UTIL = 256,
        OPT_MIN_SLO,
        OPT_MAX_CKPT,
        OPT_TOLERANCE,
        OPT_MAX_P99,
        OPT_UTIL_KIND,
        OPT_AGAINST,
        OPT_FORMAT,
        OPT_MAX_QDELAY,
        OPT_BACKLOG_BY,
        OPT_MIN_TRAIN,
        OPT_MIN,
        OPT_MAX,
        OPT_MAX_TTFT,
        OPT_MAX_TPOT,
        OPT_CONFIDENT,
        OPT_POINT,
        OPT_WHERE,
        OPT_POOL,
        OPT_QUEUE
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
        {"max-queue-delay", required_argument, NULL, OPT_MAX_QDELAY},
        {"backlog-drained-by", required_argument, NULL, OPT_BACKLOG_BY},
        {"min-training-gpu-h-per-day", required_argument, NULL, OPT_MIN_TRAIN},
        {"min", required_argument, NULL, OPT_MIN},
        {"max", required_argument, NULL, OPT_MAX},
        {"max-ttft-p99", required_argument, NULL, OPT_MAX_TTFT},
        {"max-tpot-p99", required_argument, NULL, OPT_MAX_TPOT},
        {"confident", no_argument, NULL, OPT_CONFIDENT},
        {"point", required_argument, NULL, OPT_POINT},
        {"where", required_argument, NULL, OPT_WHERE},
        {"pool", required_argument, NULL, OPT_POOL},
        {"queue", required_argument, NULL, OPT_QUEUE},
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
        case OPT_MAX_TTFT:
        case OPT_MAX_TPOT: {
            double *v = c == OPT_MAX_TTFT ? &g.max_ttft_p99_ms : &g.max_tpot_p99_ms;
            if (cli_parse_number(optarg, v) || *v < 0) {
                fprintf(err, "tidesim check: --%s needs a non-negative number of ms\n", a);
                return 2;
            }
            break;
        }
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
        case OPT_POOL:
            pool = optarg;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "junit")) {
                fprintf(err, "tidesim check: --format needs text, json or junit\n");
                return 2;
            }
            json = !strcmp(optarg, "json");
            junit = !strcmp(optarg, "junit");
            break;
        case OPT_QUEUE:
            if (!optarg[0] || strlen(optarg) >= sizeof(g.queue)) {
                fprintf(err, "tidesim check: --queue needs a ClusterQueue name\n");
                return 2;
            }
            snprintf(g.queue, sizeof(g.queue), "%s", optarg);
            break;
        case OPT_MAX_QDELAY:
        case OPT_BACKLOG_BY: {
            sim_time t;
            if (conf_parse_duration(optarg, &t)) {
                fprintf(err, "tidesim check: --%s needs a duration with a unit (90min, 2h, 1d)\n",
                        a);
                return 2;
            }
            *(c == OPT_MAX_QDELAY ? &g.max_queue_delay_s : &g.backlog_by_s) = sim_time_to_sec(t);
            break;
        }
        case OPT_MIN_TRAIN:
            if (cli_parse_number(optarg, &g.min_train_gpuh_day) || g.min_train_gpuh_day < 0) {
                fprintf(err, "tidesim check: --%s needs a non-negative number of GPU-hours\n", a);
                return 2;
            }
            break;
        case OPT_CONFIDENT:
            g.confident = true;
            break;
        case OPT_POINT:
        case OPT_WHERE:
            if (cli_sel_add(&sel, c == OPT_POINT, optarg, "check", err))
                return 2;
            break;
        case OPT_MIN:
        case OPT_MAX: {
            int brc = check_add_bound(&g, optarg, c == OPT_MIN ? 1 : -1);
            if (brc == -ENOSPC) {
                fprintf(err, "tidesim check: at most %d --min/--max gates\n", CHECK_MAX_BOUNDS);
                return 2;
            }
            if (brc) {
                fprintf(err, "tidesim check: --%s needs KEY=VALUE (e.g. --%s fragmentation=20%%)\n",
                        a, a);
                return 2;
            }
            break;
        }
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
        isnan(g.max_p99_ms) && isnan(g.max_queue_delay_s) && isnan(g.min_train_gpuh_day) &&
        isnan(g.backlog_by_s) && isnan(g.max_ttft_p99_ms) && isnan(g.max_tpot_p99_ms) &&
        g.nbounds == 0 && !against) {
        fprintf(err, "tidesim check: no gate given (see tidesim check --help)\n");
        return 2;
    }
    struct results r, base;
    char msg[2048];
    struct results_vet vet; /* the child that tells an index reads a results file for check */
    bool index = sweepidx_is_index_vet(path, RESULTS_BY_CHECK, &vet);
    if (!index && (sel.npoints || sel.nwhere)) {
        fprintf(err,
                "tidesim check: --point and --where choose points of a sweep or plan index; "
                "%s is not one\n",
                path);
        return 2;
    }
    if (index && pool) {
        fprintf(err, "tidesim check: --pool judges one results file, not a sweep index\n");
        return 2;
    }
    if (index) {
        if (against && results_open_for(&base, against, RESULTS_BY_CHECK, msg, sizeof(msg))) {
            fprintf(err, "tidesim check: %s\n", msg);
            return 2;
        }
        int st = check_index(path, &vet, &sel, against ? &base : NULL, against, &g, json, junit,
                             out, err);
        results_vet_release(&vet);
        if (against)
            results_release(&base);
        return st;
    }
    int orc = results_open_vetted(&r, path, RESULTS_BY_CHECK, &vet, msg, sizeof(msg));
    results_vet_release(&vet);
    if (orc) {
        fprintf(err, "tidesim check: %s\n", msg);
        return 2;
    }
    if (against && results_open_for(&base, against, RESULTS_BY_CHECK, msg, sizeof(msg))) {
        fprintf(err, "tidesim check: %s\n", msg);
        results_release(&r);
        return 2;
    }
    const char *nopool = !pool                                      ? NULL
                         : results_use_pool(&r, pool)               ? path
                         : against && results_use_pool(&base, pool) ? against
                                                                    : NULL;
    if (nopool) {
        fprintf(err, "tidesim check: %s has no pool '%s' (its scenario's cluster.pools)\n", nopool,
                pool);
        results_release(&r);
        if (against)
            results_release(&base);
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
    const char *incomplete = !r.complete ? path : against && !base.complete ? against : NULL;
    bool complete = r.complete && (!against || base.complete);
    int status = incomplete ? 4 : l.o.failed ? 1 : l.o.inconclusive ? 3 : 0;
    if (junit)
        check_print_junit(out, &l, &r);
    else if (json)
        check_json(out, path, against, complete, &l, status);
    else
        check_print_text(out, &l);
    check_list_release(&l);
    results_release(&r);
    if (against)
        results_release(&base);
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
