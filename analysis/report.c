/* report.c — text, Markdown and JSON reports of a tidesim results file. */
#include "analysis/report.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/escape.h"
#include "analysis/perday.h"
#include "analysis/results.h"
#include "analysis/texttable.h"

int report_parse_format(const char *s, enum report_format *f)
{
    if (!strcmp(s, "text"))
        *f = REPORT_TEXT;
    else if (!strcmp(s, "markdown") || !strcmp(s, "md"))
        *f = REPORT_MARKDOWN;
    else if (!strcmp(s, "json"))
        *f = REPORT_JSON;
    else
        return -EINVAL;
    return 0;
}

static void hours(char *buf, size_t n, double s)
{
    if (!isfinite(s))
        snprintf(buf, n, "-");
    else if (s >= 3600)
        snprintf(buf, n, "%.2f h", s / 3600);
    else if (s >= 60)
        snprintf(buf, n, "%.1f min", s / 60);
    else
        snprintf(buf, n, "%.1f s", s);
}

static const char *or_q(const char *s)
{
    return s ? s : "-";
}

/* "value" and "± ci" cells of a metric. */
static void value_cells(const struct results_metric *m, bool replicated, char *v, size_t vn,
                        char *ci, size_t cn)
{
    results_format(v, vn, m, m->s.mean);
    if (!replicated) {
        ci[0] = 0;
        return;
    }
    char b[48];
    results_format(b, sizeof(b), m, m->s.ci95);
    snprintf(ci, cn, "± %s", b);
}

static void heading(FILE *out, bool md, const char *title)
{
    if (md)
        fprintf(out, "\n### %s\n\n", title);
    else
        fprintf(out, "\n%s\n", title);
}

static int print_metric_table(FILE *out, const struct results *r, const struct results_table *t,
                              bool md, bool skip_absent)
{
    struct texttable tt;
    const char *hdr[] = {"metric", "value", r->replicated ? "95% CI" : "", "unit"};
    texttable_init(&tt, r->replicated ? 4 : 3);
    const char *hdr1[] = {hdr[0], hdr[1], hdr[3]};
    texttable_row(&tt, r->replicated ? hdr : hdr1);
    for (size_t i = 0; i < t->n; i++) {
        const struct results_metric *m = &t->m[i];
        /* Cost figures exist only with a cost block: absent, they are not "-" rows. */
        if (m->s.n == 0 && (skip_absent || !strncmp(m->key, "cost_", 5)))
            continue;
        char v[48], ci[64];
        value_cells(m, r->replicated, v, sizeof(v), ci, sizeof(ci));
        const char *row[] = {results_label(m), v, ci, m->unit};
        const char *row1[] = {row[0], row[1], row[3]};
        texttable_row(&tt, r->replicated ? row : row1);
    }
    int rc = texttable_print(&tt, out, md, 2);
    texttable_release(&tt);
    return rc;
}

static int print_services(FILE *out, const struct results *r, bool md)
{
    static const char *const cols[] = {"arrived",         "dropped",  "mean_ms",     "p50_ms",
                                       "p95_ms",          "p99_ms",   "wait_p99_ms", "slo_ms",
                                       "slo_quantile_ms", "slo_share"};
    static const char *const hdr[] = {"service", "requests", "dropped",  "mean ms",
                                      "p50 ms",  "p95 ms",   "p99 ms",   "wait p99 ms",
                                      "SLO",     "SLO-q ms", "within %", "SLO met"};
    enum { NCOLS = sizeof(cols) / sizeof(cols[0]), NHDR = NCOLS + 2 };
    struct texttable tt;
    texttable_init(&tt, NHDR);
    texttable_row(&tt, hdr);
    for (size_t i = 0; i < r->nsvcs; i++) {
        const struct results_service *s = &r->svcs[i];
        char cells[NHDR][112];
        const char *row[NHDR];
        snprintf(cells[0], sizeof(cells[0]), "%s", s->name);
        for (size_t k = 0; k < NCOLS; k++) {
            const struct results_metric *m = results_table_find(&s->t, cols[k]);
            char v[48], ci[48];
            results_format(v, sizeof(v), m, m->s.mean);
            if (r->replicated && m->s.n >= 2 &&
                (!strcmp(cols[k], "p99_ms") || !strcmp(cols[k], "slo_share"))) {
                results_format(ci, sizeof(ci), m, m->s.ci95);
                snprintf(cells[k + 1], sizeof(cells[k + 1]), "%s ± %s", v, ci);
            } else {
                snprintf(cells[k + 1], sizeof(cells[k + 1]), "%s", v);
            }
        }
        const struct results_metric *q = results_table_find(&s->t, "slo_quantile");
        const struct results_metric *slo = results_table_find(&s->t, "slo_ms");
        if (q->s.n && slo->s.n)
            snprintf(cells[8], sizeof(cells[8]), "p%g <= %g ms", q->s.mean * 100, slo->s.mean);
        const struct results_metric *met = results_table_find(&s->t, "slo_met");
        if (met->s.n == 0)
            snprintf(cells[NHDR - 1], sizeof(cells[NHDR - 1]), "-");
        else if (r->replicated)
            snprintf(cells[NHDR - 1], sizeof(cells[NHDR - 1]), "%.0f/%zu reps",
                     met->s.mean * (double)met->s.n, met->s.n);
        else
            snprintf(cells[NHDR - 1], sizeof(cells[NHDR - 1]), "%s",
                     met->s.mean > 0 ? "met" : "MISSED");
        for (size_t k = 0; k < NHDR; k++)
            row[k] = cells[k];
        texttable_row(&tt, row);
    }
    int rc = texttable_print(&tt, out, md, 2);
    texttable_release(&tt);
    return rc;
}

/* One row per node pool (cluster.pools): its board, size, utilisation, SLO, training, cost. */
static int print_pools(FILE *out, const struct results *r, bool md)
{
    static const char *const cols[] = {"gpus",        "util_allocated",     "util_busy",
                                       "util_useful", "share_fragmented",   "requests_served",
                                       "slo_share",   "training_gpu_hours", "energy_kwh",
                                       "cost_total"};
    static const char *const hdr[] = {"pool",     "board",          "GPUs",       "allocated %",
                                      "busy %",   "useful %",       "fragm. %",   "served",
                                      "within %", "training GPU-h", "energy kWh", "cost"};
    enum { NCOLS = sizeof(cols) / sizeof(cols[0]), NHDR = NCOLS + 2 };
    struct texttable tt;
    texttable_init(&tt, NHDR);
    texttable_row(&tt, hdr);
    for (size_t i = 0; i < r->npools; i++) {
        const struct results_service *p = &r->pools[i];
        char cells[NHDR][112];
        const char *row[NHDR];
        snprintf(cells[0], sizeof(cells[0]), "%s", p->name);
        snprintf(cells[1], sizeof(cells[1]), "%s", p->board ? p->board : "?");
        for (size_t k = 0; k < NCOLS; k++) {
            const struct results_metric *m = results_table_find(&p->t, cols[k]);
            char v[48], ci[48];
            results_format(v, sizeof(v), m, m->s.mean);
            if (r->replicated && m->s.n >= 2 && m->scale == 100) {
                results_format(ci, sizeof(ci), m, m->s.ci95);
                snprintf(cells[k + 2], sizeof(cells[k + 2]), "%s ± %s", v, ci);
            } else {
                snprintf(cells[k + 2], sizeof(cells[k + 2]), "%s", v);
            }
        }
        for (size_t k = 0; k < NHDR; k++)
            row[k] = cells[k];
        texttable_row(&tt, row);
    }
    int rc = texttable_print(&tt, out, md, 2);
    texttable_release(&tt);
    return rc;
}

/* The per-queue table (/queues: kueue with manifests); nothing when the run has no queues. */
static int print_queues(FILE *out, const struct results *r, bool md)
{
    static const char *const cols[] = {"nominal_gpus",   "admitted_mean_gpus", "borrowed_mean_gpus",
                                       "lent_mean_gpus", "admissions",         "evictions",
                                       "delay_mean_s",   "delay_p99_s",        "delay_max_s"};
    static const char *const hdr[] = {"queue",       "nominal",     "admitted", "borrowed",
                                      "lent",        "admitted wl", "evicted",  "delay mean s",
                                      "delay p99 s", "delay max s"};
    enum { NCOLS = sizeof(cols) / sizeof(cols[0]), NHDR = NCOLS + 1 };
    if (r->nqueues == 0)
        return 0;
    heading(out, md,
            "queues (GPUs of quota: nominal, and admitted / borrowed / lent, means over "
            "the intervals)");
    struct texttable tt;
    texttable_init(&tt, NHDR);
    texttable_row(&tt, hdr);
    for (size_t i = 0; i < r->nqueues; i++) {
        const struct results_service *q = &r->queues[i];
        char cells[NHDR][64];
        const char *row[NHDR];
        snprintf(cells[0], sizeof(cells[0]), "%s", q->name);
        for (size_t k = 0; k < NCOLS; k++) {
            const struct results_metric *m = results_table_find(&q->t, cols[k]);
            if (!m || m->s.n == 0 || !isfinite(m->s.mean))
                snprintf(cells[k + 1], sizeof(cells[k + 1]), "-");
            else
                snprintf(cells[k + 1], sizeof(cells[k + 1]), k >= 6 ? "%.0f" : "%.1f", m->s.mean);
        }
        for (size_t k = 0; k < NHDR; k++)
            row[k] = cells[k];
        texttable_row(&tt, row);
    }
    int rc = texttable_print(&tt, out, md, 2);
    texttable_release(&tt);
    return rc;
}

/* The token-level table of the LLM services (those with a TTFT recorded); 0 rows: nothing. */
static int print_llm(FILE *out, const struct results *r, bool md, const char *ind)
{
    static const char *const cols[] = {"ttft_p50_ms", "ttft_p99_ms",       "tpot_p50_ms",
                                       "tpot_p99_ms", "tokens_per_s",      "kv_occupancy_mean",
                                       "preemptions", "rejected_too_long", "slo_share"};
    static const char *const hdr[] = {"service",     "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms",
                                      "TPOT p99 ms", "tokens/s",    "KV used %",   "preempted",
                                      "too long",    "SLO",         "within %"};
    enum { NCOLS = sizeof(cols) / sizeof(cols[0]), NHDR = NCOLS + 2 };
    size_t nllm = 0;
    for (size_t i = 0; i < r->nsvcs; i++) {
        const struct results_metric *m = results_table_find(&r->svcs[i].t, "ttft_p99_ms");
        nllm += m && m->s.n > 0;
    }
    if (!nllm)
        return 0;
    heading(out, md, "LLM services (time to first token, time per output token, tokens, KV cache)");
    struct texttable tt;
    texttable_init(&tt, NHDR);
    texttable_row(&tt, hdr);
    for (size_t i = 0; i < r->nsvcs; i++) {
        const struct results_service *sv = &r->svcs[i];
        const struct results_metric *p = results_table_find(&sv->t, "ttft_p99_ms");
        if (!p || !p->s.n)
            continue;
        char cells[NHDR][112];
        const char *row[NHDR];
        snprintf(cells[0], sizeof(cells[0]), "%s", sv->name);
        for (size_t k = 0; k < NCOLS; k++) {
            const struct results_metric *m = results_table_find(&sv->t, cols[k]);
            char v[48], ci[48];
            results_format(v, sizeof(v), m, m->s.mean);
            if (r->replicated && m->s.n >= 2 && strstr(cols[k], "p99")) {
                results_format(ci, sizeof(ci), m, m->s.ci95);
                snprintf(cells[k + 1 + (k == NCOLS - 1)], sizeof(cells[0]), "%s ± %s", v, ci);
            } else {
                snprintf(cells[k + 1 + (k == NCOLS - 1)], sizeof(cells[0]), "%s", v);
            }
        }
        const struct results_metric *a = results_table_find(&sv->t, "ttft_slo_ms");
        const struct results_metric *b = results_table_find(&sv->t, "tpot_slo_ms");
        const struct results_metric *q = results_table_find(&sv->t, "slo_quantile");
        snprintf(cells[NHDR - 2], sizeof(cells[0]), "p%g: TTFT <= %g, TPOT <= %g ms",
                 q->s.n ? q->s.mean * 100 : 99, a->s.mean, b->s.mean);
        for (size_t k = 0; k < NHDR; k++)
            row[k] = cells[k];
        texttable_row(&tt, row);
    }
    (void)ind;
    int rc = texttable_print(&tt, out, md, 2);
    texttable_release(&tt);
    return rc;
}

static int report_human(FILE *out, const struct results *r, bool md)
{
    char dur[32], reached[32];
    hours(dur, sizeof(dur), r->duration_s);
    hours(reached, sizeof(reached), r->sim_time_reached_s);
    if (md)
        fprintf(out, "## tidesim report: `%s`\n\n", r->path);
    else
        fprintf(out, "tidesim %s report: %s\n", or_q(r->version), r->path);
    const char *ind = md ? "- " : "  ";
    if (!r->complete)
        fprintf(out, "%sWARNING: incomplete run (interrupted; simulated time reached %s)\n", ind,
                reached);
    fprintf(out, "%sscenario %s, policy %s, %s simulated\n", ind, or_q(r->scenario_name),
            or_q(r->policy), dur);
    if (r->replicated)
        fprintf(out,
                "%s%zu replications, seeds %.0f..%.0f; values are means with 95%% "
                "Student-t intervals\n",
                ind, r->reps, r->seed, r->seed + (double)r->reps - 1);
    else
        fprintf(out, "%ssingle run, seed %.0f (no confidence intervals)\n", ind, r->seed);
    if (r->npools) { /* a mixed fleet: its pools, not the first pool's board */
        fprintf(out, "%scluster: %.0f GPUs in %zu pools:", ind, r->gpus, r->npools);
        for (size_t i = 0; i < r->npools; i++) {
            const struct results_metric *g = results_table_find(&r->pools[i].t, "gpus");
            fprintf(out, "%s %s %.0f x %s", i ? "," : "", r->pools[i].name, g ? g->s.mean : NAN,
                    or_q(r->pools[i].board));
            /* Pools of different sharing modes: each pool's ("mixed" in /meta). */
            if (r->sharing && !strcmp(r->sharing, "mixed"))
                fprintf(out, " %s", or_q(r->pools[i].sharing));
        }
        fprintf(out, " (%s); tidesim %s (%s)\n", or_q(r->sharing), or_q(r->version),
                or_q(r->git_commit));
    } else {
        fprintf(out, "%scluster: %.0f x %s (%s); tidesim %s (%s)\n", ind, r->gpus, or_q(r->gpu),
                or_q(r->sharing), or_q(r->version), or_q(r->git_commit));
    }
    if (!r->replicated && isfinite(r->events))
        fprintf(out, "%s%.0f events processed in %.2f s wall\n", ind, r->events, r->wall_seconds);

    int rc = 0;
    heading(out, md, "headline metrics");
    rc |= print_metric_table(out, r, &r->headline, md, false);
    struct perday pd;
    char pderr[512];
    if (perday_read_results(r, &pd, pderr, sizeof(pderr)) == 0) {
        if (pd.ndays >= 2) {
            heading(out, md, "per day (simulated days from t = 0, whole run, warm-up included)");
            rc |= perday_print(out, &pd, md, 2);
        }
        perday_release(&pd);
    }
    heading(out, md, "inference services");
    if (r->nsvcs)
        rc |= print_services(out, r, md);
    else
        fprintf(out, "%sno services\n", ind);
    rc |= print_llm(out, r, md, ind);
    if (r->npools) {
        heading(out, md, "node pools (utilisation and cost: measured window; served: whole run)");
        rc |= print_pools(out, r, md);
    }
    rc |= print_queues(out, r, md);
    heading(out, md, "training outcomes (jobs at the end of the run; job seconds summed, in h)");
    rc |= print_metric_table(out, r, &r->training, md, true);
    heading(out, md, "GPU-time by state (share of GPU-time offered)");
    if (r->gpu_states.n)
        rc |= print_metric_table(out, r, &r->gpu_states, md, true);
    else
        fprintf(out, "%s-\n", ind);
    return rc ? -ENOMEM : 0;
}

static void json_table(FILE *out, const struct results_table *t, const char *ind)
{
    fputs("{", out);
    for (size_t i = 0; i < t->n; i++) {
        const struct results_metric *m = &t->m[i];
        fprintf(out, "%s\n%s  ", i ? "," : "", ind);
        esc_json_str(out, m->key);
        fputs(": {\"mean\": ", out);
        esc_json_num(out, m->s.mean);
        fputs(", \"ci95\": ", out);
        esc_json_num(out, m->s.ci95);
        fputs(", \"sd\": ", out);
        esc_json_num(out, m->s.sd);
        fprintf(out, ", \"n\": %zu}", m->s.n);
    }
    fprintf(out, "\n%s}", ind);
}

static int report_json(FILE *out, const struct results *r)
{
    fputs("{\n  \"file\": ", out);
    esc_json_str(out, r->path);
    fputs(",\n  \"scenario\": ", out);
    esc_json_str(out, r->scenario_name);
    fputs(",\n  \"policy\": ", out);
    esc_json_str(out, r->policy);
    fputs(",\n  \"gpu\": ", out);
    esc_json_str(out, r->gpu);
    fputs(",\n  \"sharing\": ", out);
    esc_json_str(out, r->sharing);
    fputs(",\n  \"tidesim_version\": ", out);
    esc_json_str(out, r->version);
    fprintf(out, ",\n  \"replications\": %zu,\n  \"complete\": %s,\n  \"seed\": ", r->reps,
            r->complete ? "true" : "false");
    esc_json_num(out, r->seed);
    fputs(",\n  \"duration_s\": ", out);
    esc_json_num(out, r->duration_s);
    fputs(",\n  \"sim_time_reached_s\": ", out);
    esc_json_num(out, r->sim_time_reached_s);
    fputs(",\n  \"gpus\": ", out);
    esc_json_num(out, r->gpus);
    fputs(",\n  \"headline\": ", out);
    json_table(out, &r->headline, "  ");
    fputs(",\n  \"services\": {", out);
    for (size_t i = 0; i < r->nsvcs; i++) {
        fprintf(out, "%s\n    ", i ? "," : "");
        esc_json_str(out, r->svcs[i].name);
        fputs(": ", out);
        json_table(out, &r->svcs[i].t, "    ");
    }
    fputs("\n  },\n  \"pools\": {", out);
    for (size_t i = 0; i < r->npools; i++) {
        fprintf(out, "%s\n    ", i ? "," : "");
        esc_json_str(out, r->pools[i].name);
        fputs(": ", out);
        json_table(out, &r->pools[i].t, "    ");
    }
    fputs("\n  },", out);
    if (r->sharing && !strcmp(r->sharing, "mixed")) { /* pools of different modes: each's */
        fputs("\n  \"pool_sharing\": {", out);
        for (size_t i = 0; i < r->npools; i++) {
            fprintf(out, "%s\n    ", i ? "," : "");
            esc_json_str(out, r->pools[i].name);
            fputs(": ", out);
            esc_json_str(out, r->pools[i].sharing);
        }
        fputs("\n  },", out);
    }
    if (r->nqueues) {
        fputs("\n  \"queues\": {", out);
        for (size_t i = 0; i < r->nqueues; i++) {
            fprintf(out, "%s\n    ", i ? "," : "");
            esc_json_str(out, r->queues[i].name);
            fputs(": ", out);
            json_table(out, &r->queues[i].t, "    ");
        }
        fputs("\n  },", out);
    }
    fputs("\n  \"training\": ", out);
    json_table(out, &r->training, "  ");
    fputs(",\n  \"gpu_states\": ", out);
    json_table(out, &r->gpu_states, "  ");
    fputs("\n}\n", out);
    return 0;
}

int report_results(FILE *out, const struct results *r, enum report_format fmt)
{
    if (fmt == REPORT_JSON)
        return report_json(out, r);
    return report_human(out, r, fmt == REPORT_MARKDOWN);
}

int report_write(FILE *out, const char *path, enum report_format fmt, const struct results_vet *vet,
                 char *err, size_t errlen)
{
    struct results r;
    int rc = results_open_vetted(&r, path, RESULTS_BY_REPORT, vet, err, errlen);
    if (rc)
        return rc;
    rc = report_results(out, &r, fmt);
    if (rc)
        snprintf(err, errlen, "%s: out of memory while formatting the report", path);
    results_release(&r);
    return rc;
}
