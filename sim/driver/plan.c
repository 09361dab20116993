/* plan.c — the smallest passing cluster per choice, by bisection or scan (plan.h). */
#include "sim/driver/plan_search.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/merge.h"
#include "analysis/results.h"
#include "analysis/stats.h"
#include "analysis/sweepidx.h"
#include "sim/driver/dispatch.h"
#include "sim/scenario.h"

#ifndef TIDESIM_VERSION
#define TIDESIM_VERSION "unknown"
#endif
#ifndef TIDESIM_GIT
#define TIDESIM_GIT "unknown"
#endif

#define WHO "tidesim plan"

/* ---- probe files ------------------------------------------------------------------------ */

/* FNV-1a 32 bits of the point's overrides: the probe's identity in its file name. */
static uint32_t sets_hash(char *const *sets, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        for (const char *p = sets[i];; p++) {
            h ^= (unsigned char)*p;
            h *= 16777619u;
            if (!*p)
                break;
        }
    return h;
}

/*
 * "probes/NAME" of point p (no extension): NAME is each override's last path
 * component and value (letters, digits, '.', '-' kept, the rest '_'), cut to 80
 * characters, and 8 hex digits of the overrides' exact text.
 */
int plan_probe_stem(const struct plan *pl, size_t p, char *buf, size_t n)
{
    char *sets[SWEEP_MAX_AXES];
    if (sweep_point_sets(&pl->sw, p, sets))
        return -ENOMEM;
    char name[96] = "";
    size_t k = 0;
    for (size_t a = 0; a < pl->sw.naxes; a++) {
        if (pl->hidden & (1u << a))
            continue;
        const char *dot = strrchr(pl->sw.axes[a].path, '.');
        const char *leaf = dot ? dot + 1 : pl->sw.axes[a].path;
        const char *v = pl->sw.axes[a].vals[sweep_value_index(&pl->sw, p, a)];
        char part[200];
        snprintf(part, sizeof(part), "%s%s-%s", k ? "_" : "", leaf, v);
        for (const char *q = part; *q && k + 1 < 81; q++) {
            char c = *q;
            bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
            name[k++] = keep ? c : '_';
        }
        name[k] = 0;
    }
    uint32_t h = sets_hash(sets, pl->sw.naxes);
    for (size_t a = 0; a < pl->sw.naxes; a++)
        free(sets[a]);
    snprintf(buf, n, "probes/%s-%08x", name, h);
    return 0;
}

static int rep_path(const struct plan *pl, const char *dir, size_t p, unsigned r, char *buf,
                    size_t n)
{
    char stem[160];
    if (plan_probe_stem(pl, p, stem, sizeof(stem)))
        return -ENOMEM;
    snprintf(buf, n, "%s/%s.rep%04u.h5", dir, stem, r);
    return 0;
}

int plan_task(void *ctx, const struct dispatch_task *t)
{
    const struct plan_task_ctx *c = ctx;
    if (t->a >= c->pl->sw.npoints || t->b >= c->pl->reps_max)
        return 1;
    char path[PATH_MAX];
    if (rep_path(c->pl, c->dir, (size_t)t->a, (unsigned)t->b, path, sizeof(path)))
        return 1;
    return sweep_run_seed_here(&c->pl->sw, (size_t)t->a, t->b, path, c->interrupted, WHO);
}

/* ---- the search ------------------------------------------------------------------------- */

const char *const plan_verdict_word[] = {"-", "PASS", "FAIL", "UNCLEAR"};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *plan_size_text(const struct plan *pl, size_t i)
{
    return pl->sw.axes[pl->sw.naxes - 1].vals[i];
}

const char *plan_size_key(const struct plan *pl)
{
    return pl->sw.axes[pl->sw.naxes - 1].path;
}

/* "policy.name=kueue cluster.sharing=mig" of choice c (the base itself when no choices). */
void plan_choice_label(const struct plan *pl, size_t c, char *buf, size_t n)
{
    size_t p = plan_point(pl, c, 0), k = 0;
    buf[0] = 0;
    for (size_t a = 0; a < pl->nchoice_axes; a++) {
        int w = snprintf(buf + k, n - k, "%s%s=%s", a ? " " : "", pl->sw.axes[a].path,
                         pl->sw.axes[a].vals[sweep_value_index(&pl->sw, p, a)]);
        if (w < 0 || (size_t)w >= n - k)
            break;
        k += (size_t)w;
    }
    if (!pl->nchoice_axes)
        snprintf(buf, n, "base scenario");
}

/* Request probe (c, i): mark the seeds already on disk, queue the rest. */
static void request(struct planner *P, size_t c, size_t i)
{
    size_t p = plan_point(P->pl, c, i);
    struct probe *pr = &P->pr[p];
    if (pr->requested)
        return;
    pr->requested = true;
    pr->want = P->pl->reps_min;
    for (unsigned r = 0; r < P->pl->reps_max; r++) {
        char path[PATH_MAX];
        if (pr->rep[r] == R_MISSING && rep_path(P->pl, P->o->dir, p, r, path, sizeof(path)) == 0 &&
            sweepidx_point_complete(path) == 1) {
            pr->rep[r] = R_DONE;
            pr->done++;
        }
    }
}

/* The probe's seeds 0..want-1 all done? */
static bool seeds_ready(const struct planner *P, const struct probe *pr)
{
    for (unsigned r = 0; r < pr->want; r++)
        if (pr->rep[r] != R_DONE)
            return false;
    (void)P;
    return true;
}

/* A figure of a gate item for the table: shares as %, else in the item's unit. */
void plan_fig_text(char *buf, size_t n, const struct check_item *it, double v, bool sign)
{
    const char *u = it->unit;
    double sc = it->scale;
    bool share = !strcmp(it->gate, "min-util") || !strcmp(it->gate, "min-slo") ||
                 !strcmp(it->gate, "max-ckpt-overhead") || (sc == 100 && !strcmp(u, "%"));
    if (share) {
        snprintf(buf, n, sign ? "%+.2f pts" : "%.2f%%", v * 100);
        return;
    }
    if (!strcmp(u, "s")) {
        double a = fabs(v);
        const char *su = a >= 3600 ? "h" : a >= 60 ? "min" : "s";
        double d = a >= 3600 ? 3600 : a >= 60 ? 60 : 1;
        snprintf(buf, n, sign ? "%+.3g %s" : "%.3g %s", v / d, su);
        return;
    }
    snprintf(buf, n, sign ? "%+.4g%s%s" : "%.4g%s%s", v * sc, *u ? " " : "", u);
}

/*
 * Merge the probe's seeds into DIR/probes/NAME.h5 (when the merged file is
 * missing or holds another number of seeds) and judge its gates. 0, or 1
 * (a message printed).
 */
static int evaluate(struct planner *P, size_t p)
{
    const struct plan *pl = P->pl;
    struct probe *pr = &P->pr[p];
    char stem[160], merged[PATH_MAX], err[PATH_MAX + 1200];
    if (plan_probe_stem(pl, p, stem, sizeof(stem)))
        return 1;
    snprintf(merged, sizeof(merged), "%s/%s.h5", P->o->dir, stem);
    struct results r;
    bool fresh = false;
    if (results_open_for(&r, merged, RESULTS_BY_CHECK, err, sizeof(err)) == 0) { /* gates */
        fresh = r.complete && r.reps == pr->want;
        if (!fresh)
            results_release(&r);
    }
    if (!fresh) {
        char **parts = calloc(pr->want, sizeof(char *));
        int rc = parts ? 0 : -ENOMEM;
        for (unsigned k = 0; !rc && k < pr->want; k++) {
            if (!(parts[k] = malloc(PATH_MAX)))
                rc = -ENOMEM;
            else
                rep_path(pl, P->o->dir, p, k, parts[k], PATH_MAX);
        }
        if (!rc)
            rc = merge_replications(merged, (const char *const *)parts, pr->want, true, NULL, err,
                                    sizeof(err));
        for (unsigned k = 0; parts && k < pr->want; k++)
            free(parts[k]);
        free(parts);
        if (rc) {
            fprintf(stderr, WHO ": %s\n", rc == -ENOMEM ? "out of memory" : err);
            return 1;
        }
        if (results_open_for(&r, merged, RESULTS_BY_CHECK, err, sizeof(err))) { /* its gates */
            fprintf(stderr, WHO ": %s\n", err);
            return 1;
        }
    }
    struct check_list l;
    if (check_evaluate(&r, NULL, &pl->gates, &l, err, sizeof(err))) {
        fprintf(stderr, WHO ": %s: %s\n", pl->sw.path, err);
        check_list_release(&l);
        results_release(&r);
        return 1;
    }
    free(pr->items);
    pr->items = l.items;
    pr->nitems = l.n;
    l.items = NULL;
    P->ngates = l.n;
    const struct results_metric *c = results_table_find(&r.headline, "cost_total");
    pr->gpus = r.gpus;
    pr->cost = c && c->s.n ? c->s.mean : NAN;
    /* cost_total covers the measured window: the run less its warm-up */
    pr->days = (r.duration_s - (isfinite(r.warmup_s) ? r.warmup_s : 0)) / 86400;
    snprintf(pr->currency, sizeof(pr->currency), "%s", c && c->unit ? c->unit : "");
    results_release(&r);
    check_list_release(&l);

    /* The verdict: a gate failing with confidence settles it; all holding too; else more seeds. */
    size_t fails = 0, unclear = 0;
    unsigned need = pr->want;
    for (size_t k = 0; k < pr->nitems; k++) {
        const struct check_item *it = &pr->items[k];
        fails += it->status == CHECK_FAIL;
        if (it->status != CHECK_INCONCLUSIVE)
            continue;
        unclear++;
        /* Seeds for the interval to clear the bound at the spread measured:
         * n' = n (half-width / |mean - bound|)^2 (the t quantile still falls: errs low). */
        double hw = (it->hi - it->lo) / 2, gap = fabs(it->value - it->bound);
        unsigned want = pl->reps_max;
        if (isfinite(hw) && gap > 0) {
            double x = (double)pr->want * (hw / gap) * (hw / gap);
            want = x < (double)pl->reps_max ? (unsigned)ceil(x) : pl->reps_max;
        }
        if (want > need)
            need = want;
    }
    if (fails)
        pr->v = V_FAIL;
    else if (!unclear)
        pr->v = V_PASS;
    else if (pr->want < pl->reps_max) {
        pr->want = need > pr->want ? need : pr->want + 1;
        if (pr->want > pl->reps_max)
            pr->want = pl->reps_max;
        return 0; /* not settled: more seeds queued by the main loop */
    } else
        pr->v = V_UNCLEAR;
    pr->settled = true;
    if (!P->o->quiet) {
        char lab[512];
        plan_choice_label(pl, p / pl->nsizes, lab, sizeof(lab));
        fprintf(stderr, WHO ": %s, %s=%s: %s after %u run(s)", lab, plan_size_key(pl),
                plan_size_text(pl, p % pl->nsizes), plan_verdict_word[pr->v], pr->want);
        for (size_t k = 0; k < pr->nitems; k++)
            if (pr->items[k].status != CHECK_PASS) {
                fprintf(stderr, "; %s %s", pr->items[k].status == CHECK_FAIL ? "fails" : "unclear",
                        pr->items[k].gate);
            }
        fputc('\n', stderr);
    }
    return 0;
}

static bool item_pass(const struct probe *pr, size_t g)
{
    return pr->settled && g < pr->nitems && pr->items[g].status == CHECK_PASS;
}

static bool item_fail(const struct probe *pr, size_t g)
{
    return pr->settled && g < pr->nitems && pr->items[g].status == CHECK_FAIL;
}

/*
 * A contradiction of monotonicity among the settled probes of choice c (given
 * each gate's class): returns true and says which in cs->why.
 */
static bool contradiction(struct planner *P, size_t c)
{
    const struct plan *pl = P->pl;
    struct csearch *cs = &P->cs[c];
    for (size_t g = 0; g < P->ngates; g++) {
        for (size_t a = 0; a < pl->nsizes; a++) {
            const struct probe *pa = &P->pr[plan_point(pl, c, a)];
            if (!pa->settled)
                continue;
            for (size_t b = a + 1; b < pl->nsizes; b++) {
                const struct probe *pb = &P->pr[plan_point(pl, c, b)];
                if (!pb->settled)
                    continue;
                bool bad = false;
                const char *how = "";
                switch (cs->cls[g]) {
                case G_UP:
                    bad = item_pass(pa, g) && item_fail(pb, g);
                    how = "holds at the smaller size and fails at the larger";
                    break;
                case G_DOWN:
                    bad = item_fail(pa, g) && item_pass(pb, g);
                    how = "fails at the smaller size and holds at the larger";
                    break;
                case G_BOTH_PASS:
                    bad = (a == 0 && b < pl->nsizes - 1 && item_fail(pb, g)) ||
                          (b == pl->nsizes - 1 && a > 0 && item_fail(pa, g));
                    how = "holds at both ends of the range and fails between";
                    break;
                case G_BOTH_FAIL:
                    bad = (a == 0 && b < pl->nsizes - 1 && item_pass(pb, g)) ||
                          (b == pl->nsizes - 1 && a > 0 && item_pass(pa, g));
                    how = "fails at both ends of the range and holds between";
                    break;
                }
                if (bad) {
                    snprintf(cs->why, sizeof(cs->why),
                             "gate %s is not monotone in %s: it %s (%s=%s: %s, %s=%s: %s, with "
                             "confidence)",
                             pa->items[g].gate, plan_size_key(pl), how, plan_size_key(pl),
                             plan_size_text(pl, a),
                             plan_verdict_word[item_pass(pa, g) ? V_PASS : V_FAIL],
                             plan_size_key(pl), plan_size_text(pl, b),
                             plan_verdict_word[item_pass(pb, g) ? V_PASS : V_FAIL]);
                    return true;
                }
            }
        }
    }
    return false;
}

static void finish(struct planner *P, size_t c, size_t answer, const char *note)
{
    struct csearch *cs = &P->cs[c];
    cs->phase = PH_DONE;
    cs->answer = answer;
    if (note && !cs->note[0])
        snprintf(cs->note, sizeof(cs->note), "%s", note);
}

static void start_scan(struct planner *P, size_t c)
{
    struct csearch *cs = &P->cs[c];
    cs->phase = PH_SCAN;
    cs->scan_next = 0;
}

/* All gates hold at probe p. */
static bool all_pass(const struct probe *pr)
{
    return pr->settled && pr->v == V_PASS;
}

/* Every needs-size gate holds at probe p. */
static bool up_pass(const struct planner *P, size_t c, const struct probe *pr)
{
    for (size_t g = 0; g < P->ngates; g++)
        if (P->cs[c].cls[g] == G_UP && !item_pass(pr, g))
            return false;
    return true;
}

/* Drive choice c's search as far as its settled probes allow; request the next probes. */
static void advance(struct planner *P, size_t c)
{
    const struct plan *pl = P->pl;
    struct csearch *cs = &P->cs[c];
    size_t m = pl->nsizes;
#define PR(i) (&P->pr[plan_point(pl, c, (i))])
    for (;;) {
        switch (cs->phase) {
        case PH_DONE:
            return;
        case PH_SCAN: {
            /* ascending; a few sizes ahead when workers are free */
            while (cs->scan_next < m && PR(cs->scan_next)->settled) {
                if (all_pass(PR(cs->scan_next)) && pl->search != PLAN_SCAN) {
                    finish(P, c, cs->scan_next, NULL);
                    return;
                }
                cs->scan_next++;
            }
            if (cs->scan_next >= m) {
                size_t ans = SIZE_MAX;
                for (size_t i = 0; i < m && ans == SIZE_MAX; i++)
                    if (all_pass(PR(i)))
                        ans = i;
                finish(P, c, ans, NULL);
                return;
            }
            size_t ahead = P->d->slots / pl->reps_min + 1;
            for (size_t i = cs->scan_next; i < m && i < cs->scan_next + ahead; i++)
                request(P, c, i);
            if (pl->search == PLAN_SCAN)
                for (size_t i = 0; i < m; i++)
                    request(P, c, i);
            return;
        }
        case PH_ENDS:
            request(P, c, 0);
            request(P, c, m - 1);
            if (!PR(0)->settled || !PR(m - 1)->settled)
                return;
            if (all_pass(PR(0))) {
                cs->lowest_passes = true;
                finish(P, c, 0,
                       "the smallest size of the range passes: the answer may lie below "
                       "it (widen the range down)");
                return;
            }
            for (size_t g = 0; g < P->ngates; g++) {
                bool p0 = item_pass(PR(0), g), p1 = item_pass(PR(m - 1), g);
                cs->cls[g] = !p0 && p1 ? G_UP : p0 && !p1 ? G_DOWN : p0 ? G_BOTH_PASS : G_BOTH_FAIL;
            }
            bool bothfail = false;
            for (size_t g = 0; g < P->ngates; g++)
                bothfail |= cs->cls[g] == G_BOTH_FAIL;
            if (bothfail) {
                if (m <= 2) {
                    finish(P, c, SIZE_MAX, NULL);
                    return;
                }
                cs->phase = PH_MID;
                cs->mid = (m - 1) / 2;
                continue;
            }
            cs->phase = PH_BISECT;
            cs->lo = 0;
            cs->hi = m - 1;
            continue;
        case PH_MID: {
            request(P, c, cs->mid);
            const struct probe *pm = PR(cs->mid);
            if (!pm->settled)
                return;
            /* A gate failing at both ends that does not fail (with confidence) in the middle
             * may hold somewhere between: scan rather than say "none". */
            for (size_t g = 0; g < P->ngates; g++)
                if (cs->cls[g] == G_BOTH_FAIL && !item_fail(pm, g)) {
                    snprintf(cs->why, sizeof(cs->why),
                             "gate %s fails at both ends of the range (%s=%s and %s) but %s at "
                             "%s=%s",
                             pm->items[g].gate, plan_size_key(pl), plan_size_text(pl, 0),
                             plan_size_text(pl, m - 1),
                             item_pass(pm, g) ? "holds, with confidence," : "is unclear",
                             plan_size_key(pl), plan_size_text(pl, cs->mid));
                    cs->nonmono = true;
                    break;
                }
            if (cs->nonmono) {
                start_scan(P, c);
                continue;
            }
            finish(P, c, SIZE_MAX,
                   "a gate fails at both ends and in the middle of the range: no size passes "
                   "(if the gates are monotone in size)");
            return;
        }
        case PH_BISECT:
            if (contradiction(P, c)) {
                cs->nonmono = true;
                start_scan(P, c);
                continue;
            }
            if (cs->hi - cs->lo <= 1) {
                const struct probe *at = PR(cs->hi);
                if (all_pass(at)) {
                    finish(P, c, cs->hi, NULL);
                    return;
                }
                /* A needs-smallness gate fails where the needs-size ones first hold. */
                for (size_t g = 0; g < P->ngates; g++)
                    if (cs->cls[g] == G_DOWN && !item_pass(at, g)) {
                        char n[512];
                        snprintf(n, sizeof(n),
                                 "no size passes: at %s=%s, the smallest where the gates that "
                                 "need size hold, %s (which needs smallness) does not",
                                 plan_size_key(pl), plan_size_text(pl, cs->hi), at->items[g].gate);
                        finish(P, c, SIZE_MAX, n);
                        return;
                    }
                /* a holds-at-both-ends gate failing there: not monotone */
                snprintf(cs->why, sizeof(cs->why),
                         "a gate that holds at both ends of the range does not hold at %s=%s",
                         plan_size_key(pl), plan_size_text(pl, cs->hi));
                cs->nonmono = true;
                start_scan(P, c);
                continue;
            }
            cs->mid = cs->lo + (cs->hi - cs->lo) / 2;
            request(P, c, cs->mid);
            if (!PR(cs->mid)->settled)
                return;
            if (up_pass(P, c, PR(cs->mid)))
                cs->hi = cs->mid;
            else
                cs->lo = cs->mid;
            continue;
        }
    }
#undef PR
}

/* ---- running ---------------------------------------------------------------------------- */

/* The next seed to run: the first requested probe (in choice-major order) missing one. */
static bool next_task(struct planner *P, struct dispatch_task *t)
{
    for (size_t p = 0; p < P->pl->sw.npoints; p++) {
        struct probe *pr = &P->pr[p];
        if (!pr->requested || pr->settled)
            continue;
        for (unsigned r = 0; r < pr->want; r++)
            if (pr->rep[r] == R_MISSING) {
                t->a = p;
                t->b = r;
                return true;
            }
    }
    return false;
}

/* Evaluate every probe whose seeds are in; advance their searches; repeat until quiet. */
static int settle(struct planner *P)
{
    bool again = true;
    while (again) {
        again = false;
        for (size_t p = 0; p < P->pl->sw.npoints; p++) {
            struct probe *pr = &P->pr[p];
            if (!pr->requested || pr->settled || !seeds_ready(P, pr))
                continue;
            if (evaluate(P, p))
                return 1;
            if (!P->cs[p / P->pl->nsizes].cls) {
                P->cs[p / P->pl->nsizes].cls = calloc(P->ngates ? P->ngates : 1, sizeof(int));
                if (!P->cs[p / P->pl->nsizes].cls)
                    return 1;
            }
            again = true;
        }
        for (size_t c = 0; c < P->pl->nchoices; c++) {
            if (!P->cs[c].cls) {
                if (P->cs[c].phase == PH_ENDS || P->cs[c].phase == PH_SCAN)
                    advance(P, c); /* requests only: nothing settled yet */
                continue;
            }
            enum phase before = P->cs[c].phase;
            size_t lo = P->cs[c].lo, hi = P->cs[c].hi;
            advance(P, c);
            again |= before != P->cs[c].phase || lo != P->cs[c].lo || hi != P->cs[c].hi;
        }
        /* probes just requested whose seeds were all on disk already */
        for (size_t p = 0; p < P->pl->sw.npoints && !again; p++)
            again = P->pr[p].requested && !P->pr[p].settled && seeds_ready(P, &P->pr[p]);
    }
    return 0;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, WHO ": cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, WHO ": %s is not a folder\n", dir);
        return 1;
    }
    return 0;
}

/* Remove leftovers of interrupted runs in DIR/probes: temporary and partial files. */
static void tidy(const char *dir)
{
    char pd[PATH_MAX];
    snprintf(pd, sizeof(pd), "%s/probes", dir);
    DIR *d = opendir(pd);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        bool leftover = strstr(n, ".h5.tmp.") || (len > 8 && !strcmp(n + len - 8, ".partial"));
        if (leftover) {
            char p[PATH_MAX + 300];
            snprintf(p, sizeof(p), "%s/%s", pd, n);
            unlink(p);
        }
    }
    closedir(d);
}

/* Is the folder this plan's (same base scenario, binary and size key)? 0 yes, 1 refused. */
static int check_owner(const struct plan *pl, const char *index, bool force)
{
    char *hash = NULL;
    char err[PATH_MAX + 600];
    int rc = sweepidx_read_hash(index, &hash, err, sizeof(err));
    if (rc == -ENOENT)
        return 0;
    bool same = rc == 0 && !strcmp(hash, pl->hash);
    free(hash);
    if (same || force)
        return 0;
    if (rc)
        fprintf(stderr, WHO ": %s; --force replaces it\n", err);
    else
        fprintf(stderr,
                WHO ": %s was made for another base scenario, size key or binary (its hash "
                    "differs from this plan's %s): its probes would not be this plan's; --force "
                    "uses the folder all the same (old probe files are kept but not reused)\n",
                index, pl->hash);
    return 1;
}

int plan_run(const struct plan *pl, const struct plan_run_opts *o)
{
    if (make_dir(o->dir))
        return 1;
    char probes[PATH_MAX], lockp[PATH_MAX], index[PATH_MAX];
    if (snprintf(probes, sizeof(probes), "%s/probes", o->dir) >= (int)sizeof(probes) - 200) {
        fprintf(stderr, WHO ": folder name too long: %s\n", o->dir);
        return 1;
    }
    if (make_dir(probes))
        return 1;
    snprintf(lockp, sizeof(lockp), "%s/.plan.lock", o->dir);
    snprintf(index, sizeof(index), "%s/index.h5", o->dir);
    int lock = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB)) {
        fprintf(stderr, WHO ": %s: %s\n", o->dir,
                lock < 0 ? strerror(errno) : "another plan is running in this folder");
        if (lock >= 0)
            close(lock);
        return 1;
    }
    int status = 1;
    struct planner P = {.pl = pl, .o = o, .t0 = now_s()};
    P.objective = o->objective >= 0 ? o->objective : (int)pl->objective;
    struct dispatch fork_d;
    bool own_d = !o->d;
    struct plan_task_ctx tctx = {pl, o->dir, o->interrupted};
    if (check_owner(pl, index, o->force))
        goto out_lock;
    tidy(o->dir);
    if (own_d && dispatch_fork_init(&fork_d, o->jobs, plan_task, &tctx)) {
        fprintf(stderr, WHO ": out of memory\n");
        goto out_lock;
    }
    P.d = own_d ? &fork_d : o->d;
    P.pr = calloc(pl->sw.npoints, sizeof(*P.pr));
    P.cs = calloc(pl->nchoices, sizeof(*P.cs));
    P.slot_task = calloc(P.d->slots, sizeof(*P.slot_task));
    bool nomem = !P.pr || !P.cs || !P.slot_task;
    for (size_t p = 0; !nomem && p < pl->sw.npoints; p++)
        nomem = !(P.pr[p].rep = calloc(pl->reps_max, 1));
    if (nomem) {
        fprintf(stderr, WHO ": out of memory\n");
        goto out;
    }
    for (size_t c = 0; c < pl->nchoices; c++) {
        P.cs[c].phase = pl->search == PLAN_SCAN ? PH_SCAN : PH_ENDS;
        P.cs[c].answer = SIZE_MAX;
    }
    if (!o->quiet)
        fprintf(stderr,
                WHO ": %zu choice(s) × %zu size(s) of %s; %u..%u seed(s) a probe; %s on %u %s\n",
                pl->nchoices, pl->nsizes, plan_size_key(pl), pl->reps_min, pl->reps_max,
                pl->search == PLAN_SCAN ? "scan" : "bisection", P.d->slots, P.d->what);
    if (settle(&P)) {
        P.failed = true;
        goto write;
    }
    for (;;) {
        if (*o->interrupted && !P.stopping) {
            P.stopping = true;
            P.d->stop(P.d);
        }
        struct dispatch_task t;
        if (!P.stopping && !P.failed && P.running < P.d->slots && next_task(&P, &t)) {
            unsigned slot;
            int rc = P.d->start(P.d, &t, &slot);
            if (rc) {
                fprintf(stderr, WHO ": cannot start a run: %s\n", strerror(-rc));
                P.failed = P.stopping = true;
                continue;
            }
            P.pr[t.a].rep[t.b] = R_RUNNING;
            P.pr[t.a].running++;
            P.slot_task[slot] = t;
            P.running++;
            continue;
        }
        if (P.running == 0)
            break;
        unsigned slot;
        int code;
        int rc = P.d->wait(P.d, &slot, &code);
        if (rc == -EINTR)
            continue;
        if (rc)
            break;
        P.running--;
        t = P.slot_task[slot];
        struct probe *pr = &P.pr[t.a];
        pr->running--;
        char path[PATH_MAX];
        rep_path(pl, o->dir, (size_t)t.a, (unsigned)t.b, path, sizeof(path));
        if (code == 0 && sweepidx_point_complete(path) == 1) {
            pr->rep[t.b] = R_DONE;
            pr->done++;
            pr->ran_now++;
        } else {
            pr->rep[t.b] = R_MISSING;
            char partial[PATH_MAX + 16];
            snprintf(partial, sizeof(partial), "%s.partial", path);
            unlink(partial);
            if (code != 130 && !(code == -1 && P.stopping)) {
                fprintf(stderr, WHO ": run %s failed (exit status %d)\n", path, code);
                P.failed = P.stopping = true;
                P.d->stop(P.d);
            }
        }
        if (!P.stopping && settle(&P)) {
            P.failed = P.stopping = true;
            P.d->stop(P.d);
        }
    }
write:;
    bool done = true;
    for (size_t c = 0; c < pl->nchoices; c++)
        done &= P.cs[c].phase == PH_DONE;
    int wrc = plan_write_index(&P, done);
    if (P.failed)
        status = 1;
    else if (!done)
        status = *o->interrupted ? 130 : 1;
    else
        status = wrc == 1 ? 1 : 0;
    if (!wrc) {
        char err[PATH_MAX + 600];
        if (planidx_print(stdout, index, NULL, err, sizeof(err)))
            fprintf(stderr, WHO ": %s\n", err);
    }
    if (status == 130)
        fprintf(stderr, WHO ": interrupted; the runs made are kept: run the plan again to go on\n");
    else if (!done && !P.failed)
        fprintf(stderr, WHO ": the search stopped before an answer\n");
out:
    for (size_t p = 0; P.pr && p < pl->sw.npoints; p++) {
        free(P.pr[p].rep);
        free(P.pr[p].items);
    }
    for (size_t c = 0; P.cs && c < pl->nchoices; c++)
        free(P.cs[c].cls);
    free(P.pr);
    free(P.cs);
    free(P.slot_task);
    if (own_d)
        dispatch_fork_release(&fork_d);
out_lock:
    close(lock);
    return status;
}
