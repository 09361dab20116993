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
#include "analysis/sweepidx.h"

#include "sim/cli/args.h"

static const char compare_usage[] =
    "usage: tidesim compare A.h5 B.h5 [...] [--pool NAME] [--format text|markdown|json]\n"
    "       tidesim compare INDEX.h5 [--point N]... [--where PATH=VALUE]... [...]\n"
    "\n"
    "Side-by-side headline metrics (and each service's p99 latency and SLO share) of\n"
    "several results files. Each file is compared with the first (A): the difference\n"
    "X - A and, when both files hold replications, Welch's 95% interval of it, marked\n"
    "significant when the interval excludes 0 (and whether that is better or worse).\n"
    "Single runs give the difference only: 'no CI (single run)'.\n"
    "A sweep or plan index (DIR/index.h5) stands for its points that have run, in\n"
    "point order, each named by its axis values; --point N (in the order given: the\n"
    "first is A) and --where PATH=VALUE (e.g. --where cluster.nodes=4: the policies at\n"
    "4 nodes) choose them. Points share their seeds, so their differences are paired.\n"
    "At most 8 files or points side by side.\n"
    "--pool NAME compares node pool NAME of each file (cluster.pools: its\n"
    "utilisation, SLO share of its replicas, training work, fragmentation, energy,\n"
    "cost) in place of the headline metrics.\n"
    "--format json prints the same as one JSON object: \"files\" (path, scenario,\n"
    "policy, replications, complete) and \"metrics\", each with key, service (null for\n"
    "headline metrics), label, the stored \"values\" per file (mean, ci95, n; stored\n"
    "units: shown = stored x display_scale in display_unit) and \"diffs\" to A (diff,\n"
    "ci95, paired, significant, verdict better|worse|differs|no|no-ci).\n"
    "\n"
    "exit status: 0 ok, 1 unreadable file, 2 usage error\n";

static bool present(const struct results_metric *m)
{
    return m && m->s.n > 0;
}

static const struct results_metric *find_metric(const struct results *r, const char *service,
                                                const char *key)
{
    if (!service)
        return results_table_find(&r->headline, key);
    for (size_t i = 0; i < r->nsvcs; i++)
        if (!strcmp(r->svcs[i].name, service))
            return results_table_find(&r->svcs[i].t, key);
    return NULL;
}

/* One metric row: its value in each file and its difference to the first. */
/* Returns whether the row was printed (some file holds the metric). */
static bool json_metric(FILE *out, const struct results *const *r, size_t n, const char *service,
                        const char *key, bool first)
{
    const struct results_metric *any = NULL;
    for (size_t f = 0; f < n && !present(any); f++)
        any = find_metric(r[f], service, key);
    if (!present(any))
        return false;
    fprintf(out, "%s\n    {\"key\": ", first ? "" : ",");
    cli_json_str(out, key);
    fputs(", \"service\": ", out);
    cli_json_str(out, service);
    fputs(", \"label\": ", out);
    cli_json_str(out, results_label(any));
    fputs(", \"display_unit\": ", out);
    cli_json_str(out, any->unit);
    fputs(", \"display_scale\": ", out);
    cli_json_num(out, any->scale);
    fprintf(out, ", \"better\": \"%s\",\n     \"values\": [",
            any->better > 0   ? "higher"
            : any->better < 0 ? "lower"
                              : "neutral");
    for (size_t f = 0; f < n; f++) {
        const struct results_metric *m = find_metric(r[f], service, key);
        fputs(f ? ", " : "", out);
        if (!present(m)) {
            fputs("null", out);
            continue;
        }
        fputs("{\"mean\": ", out);
        cli_json_num(out, m->s.mean);
        fputs(", \"ci95\": ", out);
        cli_json_num(out, m->s.n >= 2 ? m->s.ci95 : NAN);
        fprintf(out, ", \"n\": %zu}", m->s.n);
    }
    fputs("],\n     \"diffs\": [", out);
    const struct results_metric *a = find_metric(r[0], service, key);
    for (size_t f = 1; f < n; f++) {
        const struct results_metric *b = find_metric(r[f], service, key);
        fputs(f > 1 ? ", " : "", out);
        if (!present(a) || !present(b)) {
            fputs("null", out);
            continue;
        }
        struct stats_diff d;
        compare_diff(r[0], a, r[f], b, 0.95, &d);
        const char *verdict = !d.has_ci                         ? "no-ci"
                              : !d.significant                  ? "no"
                              : a->better == 0                  ? "differs"
                              : (d.diff > 0) == (a->better > 0) ? "better"
                                                                : "worse";
        fputs("{\"diff\": ", out);
        cli_json_num(out, d.diff);
        fputs(", \"ci95\": ", out);
        cli_json_num(out, d.has_ci ? d.ci95 : NAN);
        fprintf(out, ", \"paired\": %s, \"significant\": %s, \"verdict\": \"%s\"}",
                d.paired ? "true" : "false", d.significant ? "true" : "false", verdict);
    }
    fputs("]}", out);
    return true;
}

/*
 * The comparison as JSON: the rows of compare_write (headline metrics present
 * in any file, in first-seen order; then each service of A's p99 and SLO share).
 */
static int compare_json(FILE *out, const struct results *const *r, size_t n)
{
    fputs("{\n  \"files\": [", out);
    for (size_t f = 0; f < n; f++) {
        fprintf(out, "%s\n    {\"path\": ", f ? "," : "");
        cli_json_str(out, r[f]->path);
        fputs(", \"scenario\": ", out);
        cli_json_str(out, r[f]->scenario_name);
        fputs(", \"policy\": ", out);
        cli_json_str(out, r[f]->policy);
        fprintf(out, ", \"replications\": %zu, \"complete\": %s}", r[f]->reps,
                r[f]->complete ? "true" : "false");
    }
    fputs("\n  ],\n  \"metrics\": [", out);
    bool first = true;
    for (size_t f = 0; f < n; f++)
        for (size_t i = 0; i < r[f]->headline.n; i++) {
            const char *key = r[f]->headline.m[i].key;
            bool seen = false;
            for (size_t g = 0; g < f && !seen; g++)
                seen = results_table_find(&r[g]->headline, key) != NULL;
            for (size_t j = 0; j < i && !seen; j++)
                seen = !strcmp(r[f]->headline.m[j].key, key);
            bool any = false;
            for (size_t g = 0; g < n && !any; g++)
                any = present(results_table_find(&r[g]->headline, key));
            if (seen || !any)
                continue;
            first &= !json_metric(out, r, n, NULL, key, first);
        }
    static const char *const svc_keys[] = {"p99_ms", "slo_share"};
    for (size_t i = 0; i < r[0]->nsvcs; i++)
        for (size_t k = 0; k < 2; k++)
            first &= !json_metric(out, r, n, r[0]->svcs[i].name, svc_keys[k], first);
    fputs("\n  ]\n}\n", out);
    return ferror(out) ? -EIO : 0;
}

int cli_compare_run(int argc, char **argv, FILE *out, FILE *err)
{
    bool md = false, json = false;
    int nfiles = 0, rc = 0;
    const char **paths = calloc((size_t)argc, sizeof(*paths));
    if (!paths) {
        fputs("tidesim compare: out of memory\n", err);
        return 1;
    }
    struct sweepidx_sel sel = {0};
    enum { OPT_POINT = 256, OPT_WHERE, OPT_POOL };
    const char *pool = NULL;
    static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                             {"point", required_argument, NULL, OPT_POINT},
                                             {"where", required_argument, NULL, OPT_WHERE},
                                             {"pool", required_argument, NULL, OPT_POOL},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(compare_usage, out);
            free(paths);
            return 0;
        } else if (c == 'f') {
            if (!strcmp(optarg, "json")) {
                json = true;
            } else if (!strcmp(optarg, "text") || !strcmp(optarg, "markdown") ||
                       !strcmp(optarg, "md")) {
                md = strcmp(optarg, "text") != 0;
                json = false;
            } else {
                fprintf(err, "tidesim compare: --format needs text, markdown or json\n");
                free(paths);
                return 2;
            }
        } else if (c == OPT_POOL) {
            pool = optarg;
        } else if (c == OPT_POINT || c == OPT_WHERE) {
            if (cli_sel_add(&sel, c == OPT_POINT, optarg, "compare", err)) {
                free(paths);
                return 2;
            }
        } else {
            free(paths);
            return cli_opt_error(err, "compare", c, argv);
        }
    }
    /* An index stands for its chosen points that have run. */
    struct sweepidx_points pts[8];
    size_t npts = 0;
    const char *files[9];
    const char *labels[9];
    struct results_vet vets[9]; /* the verdicts of the children that told them no index */
    memset(vets, 0, sizeof(vets));
    char labbuf[9][600];
    int nargs = argc - optind;
    bool any_index = false;
    for (int i = optind; i < argc && !rc; i++) {
        struct results_vet v;
        if (!sweepidx_is_index_vet(argv[i], RESULTS_BY_COMPARE, &v)) {
            if (nfiles < 9) {
                labels[nfiles] = NULL;
                files[nfiles] = argv[i];
                vets[nfiles] = v;
            } else {
                results_vet_release(&v);
            }
            nfiles++;
            continue;
        }
        any_index = true;
        if (npts == 8) {
            fprintf(err, "tidesim compare: at most 8 indexes\n");
            rc = 2;
            break;
        }
        char msg[1200];
        int src = sweepidx_select(argv[i], &v, &sel, &pts[npts], msg, sizeof(msg));
        if (src) {
            fprintf(err, "tidesim compare: %s\n", msg);
            rc =
                src == -EINVAL ? 2 : 1; /* a --where/--point the index lacks; an unreadable index */
            break;
        }
        struct sweepidx_points *pp = &pts[npts++];
        for (size_t k = 0; k < pp->n; k++) {
            if (!pp->done[k])
                continue;
            if (nfiles < 9) {
                snprintf(labbuf[nfiles], sizeof(labbuf[nfiles]), "point %zu (%s)", pp->point[k],
                         pp->label[k]);
                labels[nfiles] = labbuf[nfiles];
                files[nfiles] = pp->path[k];
            }
            nfiles++;
        }
    }
    if (!rc && !any_index && (sel.npoints || sel.nwhere)) {
        fprintf(err, "tidesim compare: --point and --where choose points of a sweep or plan "
                     "index; none is given\n");
        rc = 2;
    }
    if (!rc && nfiles > 8) {
        fprintf(err,
                "tidesim compare: %d files or points to compare; at most 8 side by side (choose "
                "points with --point N or --where PATH=VALUE; tidesim report INDEX lists them)\n",
                nfiles);
        rc = 2;
    }
    if (!rc && any_index && nfiles < 2) {
        fprintf(err, "tidesim compare: %d point(s) run among those chosen: nothing to compare\n",
                nfiles);
        rc = 2;
    }
    for (int i = 0; !rc && i < nfiles; i++)
        paths[i] = files[i];
    (void)nargs;
    if (rc || nfiles < 2) {
        for (size_t k = 0; k < npts; k++)
            sweepidx_points_release(&pts[k]);
        for (size_t k = 0; k < 9; k++)
            results_vet_release(&vets[k]);
        free(paths);
        if (!rc)
            fputs(compare_usage, err);
        return rc ? rc : 2;
    }
    struct results *r = calloc((size_t)nfiles, sizeof(*r));
    const struct results **rp = calloc((size_t)nfiles, sizeof(*rp));
    int opened = 0;
    char msg[512];
    if (!r || !rp) {
        fputs("tidesim compare: out of memory\n", err);
        rc = 1;
    }
    for (; !rc && opened < nfiles; opened++) {
        if (results_open_vetted(&r[opened], paths[opened], RESULTS_BY_COMPARE,
                                opened < 9 ? &vets[opened] : NULL, msg, sizeof(msg))) {
            fprintf(err, "tidesim: %s\n", msg);
            rc = 1;
            break;
        }
        rp[opened] = &r[opened];
        if (pool && results_use_pool(&r[opened], pool)) {
            fprintf(err, "tidesim compare: %s has no pool '%s' (its scenario's cluster.pools)\n",
                    paths[opened], pool);
            opened++;
            rc = 2;
            break;
        }
    }
    if (!rc && json) {
        if (compare_json(out, rp, (size_t)nfiles)) {
            fprintf(err, "tidesim compare: cannot write the output\n");
            rc = 1;
        }
    } else if (!rc && compare_write_labeled(out, rp, labels, (size_t)nfiles, md)) {
        fprintf(err, "tidesim compare: out of memory\n");
        rc = 1;
    }
    for (int i = 0; r && i < opened; i++)
        results_release(&r[i]);
    free(r);
    free(rp);
    free(paths);
    for (size_t k = 0; k < npts; k++)
        sweepidx_points_release(&pts[k]);
    for (size_t k = 0; k < 9; k++)
        results_vet_release(&vets[k]);
    return rc;
}

int cli_compare(int argc, char **argv)
{
    return cli_compare_run(argc, argv, stdout, stderr);
}
