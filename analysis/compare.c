/* compare.c — side-by-side metrics of several results files, paired by seed or Welch. */
#include "analysis/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perday.h"
#include "analysis/results.h"
#include "analysis/stats.h"
#include "analysis/texttable.h"

/* A row of the comparison: a metric key in the headline table or in one service's table. */
struct cmp_row {
    const char *service; /* NULL for headline; else a service's, or a queue's, name */
    const char *key;
    bool queue; /* service names a /queues entry */
};

static const struct results_metric *row_metric(const struct results *r, const struct cmp_row *row)
{
    if (!row->service)
        return results_table_find(&r->headline, row->key);
    const struct results_service *list = row->queue ? r->queues : r->svcs;
    size_t n = row->queue ? r->nqueues : r->nsvcs;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i].name, row->service))
            return results_table_find(&list[i].t, row->key);
    return NULL;
}

static bool present(const struct results_metric *m)
{
    return m && m->s.n > 0;
}

/* Rows: headline metrics present in any file (baseline order first), then services. */
static struct cmp_row *build_rows(const struct results *const *r, size_t n, size_t *nrows)
{
    size_t cap = 0;
    for (size_t f = 0; f < n; f++)
        cap += r[f]->headline.n + 3 * r[f]->nsvcs + 4 * r[f]->nqueues; /* rows per service,
                                                                        queue below */
    struct cmp_row *rows = malloc((cap ? cap : 1) * sizeof(*rows));
    size_t k = 0;
    if (!rows)
        return NULL;
    for (size_t f = 0; f < n; f++)
        for (size_t i = 0; i < r[f]->headline.n; i++) {
            const struct results_metric *m = &r[f]->headline.m[i];
            bool dup = false;
            for (size_t j = 0; j < k && !dup; j++)
                dup = !strcmp(rows[j].key, m->key);
            bool any = false;
            for (size_t g = 0; g < n && !any; g++)
                any = present(results_table_find(&r[g]->headline, m->key));
            if (!dup && any)
                rows[k++] = (struct cmp_row){NULL, m->key, false};
        }
    for (size_t i = 0; i < r[0]->nsvcs; i++) {
        rows[k++] = (struct cmp_row){r[0]->svcs[i].name, "p99_ms", false};
        rows[k++] = (struct cmp_row){r[0]->svcs[i].name, "wait_p99_ms", false};
        rows[k++] = (struct cmp_row){r[0]->svcs[i].name, "slo_share", false};
    }
    for (size_t i = 0; i < r[0]->nqueues; i++) {
        static const char *const qkeys[] = {"delay_mean_s", "delay_p99_s", "borrowed_mean_gpus",
                                            "evictions"};
        for (size_t q = 0; q < 4; q++)
            rows[k++] = (struct cmp_row){r[0]->queues[i].name, qkeys[q], true};
    }
    *nrows = k;
    return rows;
}

static void cell_value(char *buf, size_t n, const struct results_metric *m)
{
    if (!present(m)) {
        snprintf(buf, n, "-");
        return;
    }
    char v[48], c[48];
    results_format(v, sizeof(v), m, m->s.mean);
    if (m->s.n >= 2) {
        results_format(c, sizeof(c), m, m->s.ci95);
        snprintf(buf, n, "%s ± %s", v, c);
    } else {
        snprintf(buf, n, "%s", v);
    }
}

void compare_diff(const struct results *ra, const struct results_metric *a,
                  const struct results *rb, const struct results_metric *b, double conf,
                  struct stats_diff *out)
{
    static const struct stats_summary none = {0, NAN, NAN, NAN};
    if (!present(a) || !present(b)) {
        stats_welch_conf(present(a) ? &a->s : &none, present(b) ? &b->s : &none, conf, out);
        return;
    }
    /* Pairs: replications of ra and rb with the same seed, in ra's order. */
    size_t n = ra->reps < rb->reps ? ra->reps : rb->reps, k = 0;
    double *av = malloc((n ? n : 1) * sizeof(*av)), *bv = malloc((n ? n : 1) * sizeof(*bv));
    for (size_t i = 0; av && bv && ra->seeds && rb->seeds && i < ra->reps; i++) {
        if (!isfinite(ra->seeds[i]) || !isfinite(a->values[i]))
            continue;
        for (size_t j = 0; j < rb->reps && k < n; j++)
            if (rb->seeds[j] == ra->seeds[i]) {
                if (isfinite(b->values[j])) {
                    av[k] = a->values[i];
                    bv[k++] = b->values[j];
                }
                break;
            }
    }
    if (k >= 2)
        stats_paired(av, bv, k, conf, out);
    else
        stats_welch_conf(&a->s, &b->s, conf, out);
    free(av);
    free(bv);
}

/* Difference cell and verdict cell of b against a. Returns true when significant. */
static bool cell_diff(char *dbuf, size_t dn, char *sbuf, size_t sn, const struct results *ra,
                      const struct results_metric *a, const struct results *rb,
                      const struct results_metric *b)
{
    if (!present(a) || !present(b)) {
        snprintf(dbuf, dn, "-");
        snprintf(sbuf, sn, "-");
        return false;
    }
    struct stats_diff d;
    compare_diff(ra, a, rb, b, 0.95, &d);
    char v[48], c[48];
    results_format(v, sizeof(v), a, fabs(d.diff));
    const char *sign = d.diff > 0 ? "+" : d.diff < 0 ? "-" : "";
    if (!d.has_ci) {
        snprintf(dbuf, dn, "%s%s", sign, v);
        snprintf(sbuf, sn, "no CI (single run)");
        return false;
    }
    results_format(c, sizeof(c), a, d.ci95);
    snprintf(dbuf, dn, "%s%s ± %s%s", sign, v, c, d.paired ? " (paired)" : "");
    if (!d.significant)
        snprintf(sbuf, sn, "no");
    else if (a->better == 0)
        snprintf(sbuf, sn, "yes");
    else
        snprintf(sbuf, sn, "yes (%s)", (d.diff > 0) == (a->better > 0) ? "better" : "worse");
    return d.significant;
}

size_t compare_count_significant(const struct results *const *r, size_t n)
{
    size_t nrows = 0, count = 0;
    struct cmp_row *rows = build_rows(r, n, &nrows);
    char d[96], s[64];
    for (size_t i = 0; rows && i < nrows; i++)
        for (size_t f = 1; f < n; f++)
            count += cell_diff(d, sizeof(d), s, sizeof(s), r[0], row_metric(r[0], &rows[i]), r[f],
                               row_metric(r[f], &rows[i]));
    free(rows);
    return count;
}

int compare_write(FILE *out, const struct results *const *r, size_t n, bool markdown)
{
    return compare_write_labeled(out, r, NULL, n, markdown);
}

int compare_write_labeled(FILE *out, const struct results *const *r, const char *const *labels,
                          size_t n, bool markdown)
{
    if (n < 2)
        return -EINVAL;
    size_t nrows = 0;
    struct cmp_row *rows = build_rows(r, n, &nrows);
    size_t ncols = 2 + n + 2 * (n - 1);
    char **cells = calloc(ncols, sizeof(*cells));
    const char **row = calloc(ncols, sizeof(*row));
    if (!rows || !cells || !row) {
        free(rows);
        free(cells);
        free(row);
        return -ENOMEM;
    }
    int rc = 0;
    for (size_t c = 0; c < ncols && !rc; c++)
        if (!(cells[c] = malloc(160)))
            rc = -ENOMEM;

    if (markdown)
        fputs("## tidesim compare\n\n", out);
    else
        fputs("tidesim compare\n", out);
    for (size_t f = 0; f < n; f++) {
        fprintf(out, "%s%c = %s: scenario %s, policy %s, ", markdown ? "- " : "  ",
                (char)('A' + (f < 26 ? f : 25)), labels && labels[f] ? labels[f] : r[f]->path,
                r[f]->scenario_name ? r[f]->scenario_name : "-", r[f]->policy ? r[f]->policy : "-");
        if (r[f]->replicated)
            fprintf(out, "%zu replications (mean ± 95%% CI)%s\n", r[f]->reps,
                    r[f]->complete ? "" : ", INCOMPLETE");
        else
            fprintf(out, "single run%s\n", r[f]->complete ? "" : ", INCOMPLETE");
    }
    fprintf(out,
            "%sdifferences are X - A with a 95%% interval when both are replicated: paired by "
            "seed (common random numbers) where the runs share seeds, marked (paired); "
            "Welch's otherwise\n\n",
            markdown ? "- " : "  ");

    struct texttable tt;
    texttable_init(&tt, ncols);
    for (size_t c = 0; !rc && c < ncols; c++) {
        if (c == 0)
            snprintf(cells[c], 160, "metric");
        else if (c == 1)
            snprintf(cells[c], 160, "unit");
        else if (c < 2 + n)
            snprintf(cells[c], 160, "%c", (char)('A' + (c - 2 < 26 ? c - 2 : 25)));
        else if ((c - 2 - n) % 2 == 0)
            snprintf(cells[c], 160, "%c - A", (char)('A' + (c - 2 - n) / 2 + 1));
        else
            snprintf(cells[c], 160, "significant");
        row[c] = cells[c];
    }
    if (!rc)
        texttable_row(&tt, row);
    for (size_t i = 0; !rc && i < nrows; i++) {
        const struct results_metric *base = row_metric(r[0], &rows[i]);
        const struct results_metric *any = base;
        for (size_t f = 0; f < n && !present(any); f++)
            any = row_metric(r[f], &rows[i]);
        if (!any)
            continue;
        if (rows[i].service && rows[i].queue)
            snprintf(cells[0], 160, "queue %s: %s", rows[i].service, results_label(any));
        else if (rows[i].service)
            snprintf(cells[0], 160, "%s: %s", rows[i].service, results_label(any));
        else
            snprintf(cells[0], 160, "%s", results_label(any));
        snprintf(cells[1], 160, "%s", any->unit);
        for (size_t f = 0; f < n; f++)
            cell_value(cells[2 + f], 160, row_metric(r[f], &rows[i]));
        for (size_t f = 1; f < n; f++)
            cell_diff(cells[2 + n + 2 * (f - 1)], 160, cells[3 + n + 2 * (f - 1)], 160, r[0], base,
                      r[f], row_metric(r[f], &rows[i]));
        texttable_row(&tt, row);
    }
    if (!rc)
        rc = texttable_print(&tt, out, markdown, 2);
    texttable_release(&tt);
    if (!rc)
        rc = perday_print_side_by_side(out, r, n, markdown, 2);
    for (size_t c = 0; c < ncols; c++)
        free(cells[c]);
    free(cells);
    free(row);
    free(rows);
    return rc;
}
