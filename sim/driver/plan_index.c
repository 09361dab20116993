/* plan_index.c — a plan's search written as an index with its answer table (plan.h). */
#include "sim/driver/plan_search.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5io.h"
#include "analysis/sweepidx.h"

#ifndef TIDESIM_VERSION
#define TIDESIM_VERSION "unknown"
#endif
#ifndef TIDESIM_GIT
#define TIDESIM_GIT "unknown"
#endif

#define WHO "tidesim plan"

struct choice_row {
    char label[512], size[64], binding[160], margin[64], detail[640], below[400], method[640],
        note[512], currency[16];
    double size_value, gpus, cost30;
    unsigned runs, runs_now, probes;
    bool monotone;
};

/* Relative margin of item it: margin over |bound| (the margin itself for a bound of 0). */
static double rel_margin(const struct check_item *it)
{
    return fabs(it->bound) > 0 ? it->margin / fabs(it->bound) : it->margin;
}

static void row_of(const struct planner *P, size_t c, struct choice_row *row)
{
    const struct plan *pl = P->pl;
    const struct csearch *cs = &P->cs[c];
    memset(row, 0, sizeof(*row));
    plan_choice_label(pl, c, row->label, sizeof(row->label));
    row->size_value = row->gpus = row->cost30 = NAN;
    row->monotone = !cs->nonmono;
    for (size_t i = 0; i < pl->nsizes; i++) {
        const struct probe *pr = &P->pr[plan_point(pl, c, i)];
        if (!pr->requested)
            continue;
        row->probes += pr->settled;
        row->runs += pr->settled ? pr->want : pr->done; /* the seeds the search used */
        row->runs_now += pr->ran_now;
    }
    if (pl->search == PLAN_SCAN)
        snprintf(row->method, sizeof(row->method), "scan (every size: search: scan)");
    else if (cs->nonmono)
        snprintf(row->method, sizeof(row->method), "scan: %s", cs->why);
    else if (cs->phase == PH_DONE && cs->lowest_passes)
        snprintf(row->method, sizeof(row->method), "ends of the range");
    else
        snprintf(row->method, sizeof(row->method), "bisection");
    snprintf(row->note, sizeof(row->note), "%s", cs->note);
    if (cs->phase != PH_DONE) {
        snprintf(row->size, sizeof(row->size), "(searching)");
        return;
    }
    /* The probe that explains the answer, and the settled probe just below it. */
    size_t at = cs->answer, below = SIZE_MAX;
    if (at != SIZE_MAX) {
        snprintf(row->size, sizeof(row->size), "%s", plan_size_text(pl, at));
        row->size_value = pl->size_num[at];
        for (size_t j = 0; j < at; j++)
            if (P->pr[plan_point(pl, c, j)].settled)
                below = j;
    } else {
        snprintf(row->size, sizeof(row->size), "none");
        for (size_t j = pl->nsizes; j-- > 0 && at == SIZE_MAX;)
            if (P->pr[plan_point(pl, c, j)].settled)
                at = j; /* the largest size probed: how far off the gates are there */
    }
    if (at == SIZE_MAX)
        return;
    const struct probe *pa = &P->pr[plan_point(pl, c, at)];
    row->gpus = pa->gpus;
    if (isfinite(pa->cost) && pa->days > 0)
        row->cost30 = pa->cost / pa->days * 30;
    snprintf(row->currency, sizeof(row->currency), "%s", pa->currency);
    const struct probe *pb = below != SIZE_MAX ? &P->pr[plan_point(pl, c, below)] : NULL;
    size_t best = SIZE_MAX;
    for (size_t g = 0; g < pa->nitems; g++) {
        bool cand = cs->answer == SIZE_MAX
                        ? pa->items[g].status != CHECK_PASS
                        : !pb || (g < pb->nitems && pb->items[g].status != CHECK_PASS);
        if (!cand || !isfinite(pa->items[g].margin))
            continue;
        if (best == SIZE_MAX || rel_margin(&pa->items[g]) < rel_margin(&pa->items[best]))
            best = g;
    }
    if (best != SIZE_MAX) {
        const struct check_item *it = &pa->items[best];
        snprintf(row->binding, sizeof(row->binding), "%s", it->gate);
        plan_fig_text(row->margin, sizeof(row->margin), it, it->margin, true);
        const char *m = strchr(it->msg, ':');
        snprintf(row->detail, sizeof(row->detail), "%s", m ? m + 2 : it->msg);
    }
    if (pb) {
        int k = snprintf(row->below, sizeof(row->below), "%s:", plan_size_text(pl, below));
        for (size_t g = 0; g < pb->nitems && k > 0 && (size_t)k < sizeof(row->below); g++)
            if (pb->items[g].status != CHECK_PASS)
                k += snprintf(row->below + k, sizeof(row->below) - (size_t)k, " %s %s",
                              pb->items[g].status == CHECK_FAIL ? "fails" : "unclear",
                              pb->items[g].gate);
    }
}

struct index_ctx {
    const struct planner *P;
    bool done;
};

static int write_plan_group(long long file, void *vctx)
{
    const struct index_ctx *x = vctx;
    const struct planner *P = x->P;
    const struct plan *pl = P->pl;
    hid_t g = h5_group_create((hid_t)file, "plan");
    if (g < 0)
        return h5io_fail();
    /* The answer: the passing choice of least cost (or GPUs; ties: GPUs, then cost, then
     * the first). */
    struct choice_row *rows = calloc(pl->nchoices, sizeof(*rows));
    if (!rows) {
        H5Gclose(g);
        return -ENOMEM;
    }
    long long answer = -1;
    for (size_t c = 0; c < pl->nchoices; c++) {
        row_of(P, c, &rows[c]);
        if (!isfinite(rows[c].size_value))
            continue;
        if (answer < 0) {
            answer = (long long)c;
            continue;
        }
        const struct choice_row *a = &rows[answer], *b = &rows[c];
        double ka = P->objective == PLAN_GPUS ? a->gpus : a->cost30;
        double kb = P->objective == PLAN_GPUS ? b->gpus : b->cost30;
        double ta = P->objective == PLAN_GPUS ? a->cost30 : a->gpus;
        double tb = P->objective == PLAN_GPUS ? b->cost30 : b->gpus;
        if (kb < ka || (kb == ka && tb < ta))
            answer = (long long)c;
    }
    int rc = h5_attr_str(g, "objective", P->objective == PLAN_GPUS ? "gpus" : "cost");
    rc = rc ? rc : h5_attr_str(g, "size_key", plan_size_key(pl));
    rc = rc ? rc : h5_attr_str(g, "gates", pl->gates_text);
    rc = rc ? rc : h5_attr_int(g, "replications_min", pl->reps_min);
    rc = rc ? rc : h5_attr_int(g, "replications_max", pl->reps_max);
    rc = rc ? rc : h5_attr_str(g, "search", pl->search == PLAN_SCAN ? "scan" : "bisect");
    rc = rc ? rc : h5_attr_int(g, "complete", x->done);
    rc = rc ? rc : h5_attr_int(g, "choices", (int64_t)pl->nchoices);
    rc = rc ? rc : h5_attr_int(g, "answer", answer);
    for (size_t c = 0; !rc && c < pl->nchoices; c++) {
        char name[32];
        snprintf(name, sizeof(name), "choice-%04zu", c);
        hid_t cg = h5_group_create(g, name);
        if (cg < 0) {
            rc = h5io_fail();
            break;
        }
        const struct choice_row *r = &rows[c];
        rc = h5_attr_str(cg, "label", r->label);
        rc = rc ? rc : h5_attr_str(cg, "size", r->size);
        rc = rc ? rc : h5_attr_double(cg, "size_value", r->size_value);
        rc = rc ? rc : h5_attr_double(cg, "gpus", r->gpus);
        rc = rc ? rc : h5_attr_double(cg, "cost_30d", r->cost30);
        rc = rc ? rc : h5_attr_str(cg, "currency", r->currency);
        rc = rc ? rc : h5_attr_str(cg, "binding_gate", r->binding);
        rc = rc ? rc : h5_attr_str(cg, "margin", r->margin);
        rc = rc ? rc : h5_attr_str(cg, "binding_detail", r->detail);
        rc = rc ? rc : h5_attr_str(cg, "below", r->below);
        rc = rc ? rc : h5_attr_int(cg, "runs", r->runs);
        rc = rc ? rc : h5_attr_int(cg, "runs_now", r->runs_now);
        rc = rc ? rc : h5_attr_int(cg, "probes", r->probes);
        rc = rc ? rc : h5_attr_str(cg, "search", r->method);
        rc = rc ? rc : h5_attr_int(cg, "monotone", r->monotone);
        rc = rc ? rc : h5_attr_str(cg, "note", r->note);
        H5Gclose(cg);
    }
    free(rows);
    H5Gclose(g);
    return rc;
}

int plan_write_index(const struct planner *P, bool done)
{
    const struct plan *pl = P->pl;
    size_t n = 0, na = 0;
    const char *axes[SWEEP_MAX_AXES];
    size_t axmap[SWEEP_MAX_AXES];
    for (size_t a = 0; a < pl->sw.naxes; a++)
        if (!(pl->hidden & (1u << a))) {
            axmap[na] = a;
            axes[na++] = pl->sw.axes[a].path;
        }
    for (size_t p = 0; p < pl->sw.npoints; p++)
        n += P->pr[p].nitems > 0;
    size_t cap = n ? n : 1;
    const char **vals = calloc(cap * na, sizeof(char *));
    char **files = calloc(cap, sizeof(char *));
    bool *isdone = calloc(cap, sizeof(bool));
    double *reps = calloc(cap, sizeof(double)), *verdict = calloc(cap, sizeof(double)),
           *choice = calloc(cap, sizeof(double)), *size = calloc(cap, sizeof(double));
    int rc = vals && files && isdone && reps && verdict && choice && size ? 0 : -ENOMEM;
    size_t k = 0;
    for (size_t p = 0; !rc && p < pl->sw.npoints; p++) {
        const struct probe *pr = &P->pr[p];
        if (!pr->nitems)
            continue;
        char stem[160];
        plan_probe_stem(pl, p, stem, sizeof(stem));
        size_t len = strlen(stem) + 4;
        if (!(files[k] = malloc(len))) {
            rc = -ENOMEM;
            break;
        }
        snprintf(files[k], len, "%s.h5", stem);
        for (size_t a = 0; a < na; a++)
            vals[k * na + a] = pl->sw.axes[axmap[a]].vals[sweep_value_index(&pl->sw, p, axmap[a])];
        isdone[k] = true;
        reps[k] = pr->want;
        verdict[k] = pr->v == V_PASS ? 1 : pr->v == V_FAIL ? 0 : pr->v == V_UNCLEAR ? -1 : NAN;
        choice[k] = (double)(p / pl->nsizes);
        size[k] = pl->size_num[p % pl->nsizes];
        k++;
    }
    struct sweepidx_col extra[] = {
        {"replications", reps}, {"verdict", verdict}, {"choice", choice}, {"size", size}};
    struct index_ctx x = {P, done};
    struct sweepidx_desc d = {.dir = P->o->dir,
                              .npoints = n,
                              .naxes = na,
                              .axes = axes,
                              .values = vals,
                              .files = (const char *const *)files,
                              .done = isdone,
                              .replications = pl->reps_max,
                              .mode = "plan",
                              .hash = pl->hash,
                              .sweep_path = pl->sw.path,
                              .sweep_text = pl->sw.doc.text,
                              .base_path = pl->sw.base_path,
                              .base_text = pl->sw.base_text,
                              .version = TIDESIM_VERSION,
                              .git_commit = TIDESIM_GIT,
                              .kind = SWEEPIDX_KIND_PLAN,
                              .unfinished = !done,
                              .extra = extra,
                              .nextra = 4,
                              .write_more = write_plan_group,
                              .ctx = &x};
    char err[PATH_MAX + 600];
    if (!rc && n == 0) {
        /* nothing probed yet (interrupted at once): no index to write */
        rc = 0;
    } else if (!rc && sweepidx_write(&d, err, sizeof(err))) {
        fprintf(stderr, WHO ": %s\n", err);
        rc = -EIO;
    } else if (rc) {
        fprintf(stderr, WHO ": out of memory\n");
    }
    for (size_t i = 0; files && i < k; i++)
        free(files[i]);
    free(files);
    free(vals);
    free(isdone);
    free(reps);
    free(verdict);
    free(choice);
    free(size);
    return rc ? 1 : (n == 0 ? 2 : 0);
}
