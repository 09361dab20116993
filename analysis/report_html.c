/* report_html.c — one self-contained HTML report of results files (report_html.h). */
#include "analysis/report_html.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/escape.h"
#include "analysis/h5io.h"
#include "analysis/plot.h"
#include "analysis/results.h"

const char *const report_html_sections[] = {"summary", "services", "training",   "gpu-time",
                                            "charts",  "scenario", "provenance", NULL};

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* What /meta says beyond struct results: the scenario text, host, wall clock (owned by r). */
struct run_meta {
    const char *scenario, *host, *wall_start, *scenario_path;
};

static void meta_release(struct run_meta *m)
{
    memset(m, 0, sizeof(*m));
}

static void meta_read(const struct results *r, struct run_meta *m)
{
    results_meta_text(r, "scenario", &m->scenario);
    results_meta_text(r, "host", &m->host);
    results_meta_text(r, "wall_start", &m->wall_start);
    results_meta_text(r, "scenario_path", &m->scenario_path);
}

/* A run's name in the page: its policy, and the file's base name when policies repeat. */
static void run_name(char *buf, size_t n, const struct results *rs, size_t nr, size_t i)
{
    const char *pol = or_dash(rs[i].policy);
    bool shared = false;
    for (size_t k = 0; k < nr; k++)
        shared |= k != i && rs[k].policy && !strcmp(rs[k].policy, pol);
    const char *b = strrchr(rs[i].path, '/');
    if (shared || nr == 1)
        snprintf(buf, n, "%s (%s)", pol, b ? b + 1 : rs[i].path);
    else
        snprintf(buf, n, "%s", pol);
}

/* Durations in s are shown in hours, the unit a planner reads them in. */
static bool in_hours(const struct results_metric *m)
{
    return m && m->unit && !strcmp(m->unit, "s");
}

static void cell(FILE *out, const struct results *r, const struct results_metric *m)
{
    char v[48], c[48];
    if (!m || !m->s.n) {
        fputs("<td>-</td>", out);
        return;
    }
    if (in_hours(m)) {
        fprintf(out, "<td class=\"num\">%.2f", m->s.mean / 3600);
        if (r->replicated && m->s.n >= 2 && isfinite(m->s.ci95))
            fprintf(out, " <span class=\"ci\">± %.2f</span>", m->s.ci95 / 3600);
        fputs("</td>", out);
        return;
    }
    results_format(v, sizeof(v), m, m->s.mean);
    fputs("<td class=\"num\">", out);
    esc_xml(out, v);
    if (r->replicated && m->s.n >= 2 && isfinite(m->s.ci95)) {
        results_format(c, sizeof(c), m, m->s.ci95);
        fputs(" <span class=\"ci\">± ", out);
        esc_xml(out, c);
        fputs("</span>", out);
    }
    fputs("</td>", out);
}

/* The headline figures a capacity report leads with; the others follow folded. */
static bool key_figure(const char *key)
{
    static const char *const keys[] = {"util_allocated",       "util_busy",
                                       "util_useful",          "slo_share",
                                       "slo_share_served",     "slo_share_worst_service",
                                       "p99_ms_worst_service", "requests_arrived",
                                       "requests_dropped",     "jobs_submitted",
                                       "jobs_completed",       "training_gpu_hours",
                                       "queue_delay_mean_s",   "queue_delay_p95_s",
                                       "completion_mean_s",    "completion_p95_s",
                                       "checkpoint_overhead",  "preemptions",
                                       "energy_kwh",           "power_mean_w"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(keys[i], key))
            return true;
    return strstr(key, "fragment") || strstr(key, "cost");
}

/*
 * Rows: every metric of the first file's table (then any other file's), columns: the runs.
 * select: 0 every row, 1 key figures only, -1 all but the key figures.
 */
static void side_table(FILE *out, const struct results *rs, size_t nr, char names[][160],
                       size_t table, bool skip_absent, int select)
{
    fputs("<table><thead><tr><th>metric</th><th>unit</th>", out);
    for (size_t i = 0; i < nr; i++) {
        fputs("<th>", out);
        esc_xml(out, names[i]);
        fputs("</th>", out);
    }
    fputs("</tr></thead><tbody>\n", out);
    for (size_t f = 0; f < nr; f++) {
        const struct results_table *t = table == 0   ? &rs[f].headline
                                        : table == 1 ? &rs[f].training
                                                     : &rs[f].gpu_states;
        for (size_t k = 0; k < t->n; k++) {
            const struct results_metric *m = &t->m[k];
            bool earlier = false, any = false;
            for (size_t g = 0; g < nr; g++) {
                const struct results_table *u = table == 0   ? &rs[g].headline
                                                : table == 1 ? &rs[g].training
                                                             : &rs[g].gpu_states;
                const struct results_metric *x = results_table_find(u, m->key);
                earlier |= g < f && x != NULL;
                any |= x && x->s.n;
            }
            if (earlier || (skip_absent && !any))
                continue;
            if (select && (select > 0) != key_figure(m->key))
                continue;
            fputs("<tr><th scope=\"row\">", out);
            esc_xml(out, results_label(m));
            fputs("</th><td>", out);
            esc_xml(out, in_hours(m) ? "h" : m->unit);
            fputs("</td>", out);
            for (size_t g = 0; g < nr; g++) {
                const struct results_table *u = table == 0   ? &rs[g].headline
                                                : table == 1 ? &rs[g].training
                                                             : &rs[g].gpu_states;
                cell(out, &rs[g], results_table_find(u, m->key));
            }
            fputs("</tr>\n", out);
        }
    }
    fputs("</tbody></table>\n", out);
}

static void services(FILE *out, const struct results *r, const char *name)
{
    static const char *const cols[] = {"arrived", "dropped", "p50_ms",    "p95_ms",
                                       "p99_ms",  "slo_ms",  "slo_share", "slo_share_served"};
    static const char *const hdr[] = {"requests",
                                      "dropped",
                                      "p50 (ms)",
                                      "p95 (ms)",
                                      "p99 (ms)",
                                      "SLO target (ms)",
                                      "arrivals within SLO (%)",
                                      "served within SLO (%)"};
    fputs("<h3>", out);
    esc_xml(out, name);
    fputs("</h3>\n", out);
    if (!r->nsvcs) {
        fputs("<p>No inference services.</p>\n", out);
        return;
    }
    fputs("<table><thead><tr><th>service</th>", out);
    for (size_t k = 0; k < 8; k++)
        fprintf(out, "<th>%s</th>", hdr[k]);
    fputs("<th>SLO met</th></tr></thead><tbody>\n", out);
    for (size_t i = 0; i < r->nsvcs; i++) {
        const struct results_service *s = &r->svcs[i];
        fputs("<tr><th scope=\"row\">", out);
        esc_xml(out, s->name);
        fputs("</th>", out);
        for (size_t k = 0; k < 8; k++)
            cell(out, r, results_table_find(&s->t, cols[k]));
        const struct results_metric *met = results_table_find(&s->t, "slo_met");
        if (!met || !met->s.n)
            fputs("<td>-</td>", out);
        else if (r->replicated)
            fprintf(out, "<td>%.0f of %zu replications</td>", met->s.mean * (double)met->s.n,
                    met->s.n);
        else
            fprintf(out, "<td class=\"%s\">%s</td>", met->s.mean > 0 ? "ok" : "bad",
                    met->s.mean > 0 ? "met" : "MISSED");
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* The per-ClusterQueue table of a run with /queues (kueue with manifests); nothing otherwise. */
static void queues(FILE *out, const struct results *r, const char *name)
{
    static const char *const cols[] = {"nominal_gpus",   "admitted_mean_gpus", "borrowed_mean_gpus",
                                       "lent_mean_gpus", "admissions",         "evictions",
                                       "delay_mean_s",   "delay_p99_s",        "delay_max_s"};
    static const char *const hdr[] = {"nominal (GPUs)",
                                      "admitted, mean (GPUs)",
                                      "borrowed, mean (GPUs)",
                                      "lent, mean (GPUs)",
                                      "admissions",
                                      "evictions",
                                      "queueing delay, mean",
                                      "queueing delay, p99",
                                      "queueing delay, max"};
    if (!r->nqueues)
        return;
    fputs("<h3>Queues: ", out);
    esc_xml(out, name);
    fputs("</h3>\n<table><thead><tr><th>ClusterQueue</th>", out);
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
        fprintf(out, "<th>%s</th>", hdr[k]);
    fputs("</tr></thead><tbody>\n", out);
    for (size_t i = 0; i < r->nqueues; i++) {
        const struct results_service *q = &r->queues[i];
        fputs("<tr><th scope=\"row\">", out);
        esc_xml(out, q->name);
        fputs("</th>", out);
        for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
            cell(out, r, results_table_find(&q->t, cols[k]));
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* Charts drawn by plot_all into a scratch folder, in the order they were made. */
struct chart_list {
    char (*path)[1024];
    char (*name)[300];
    size_t n, cap;
};

static void on_chart(void *ctx, const char *chart, const char *stem, const char *image)
{
    struct chart_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        void *p = realloc(l->path, cap * sizeof(*l->path));
        if (!p)
            return;
        l->path = p;
        p = realloc(l->name, cap * sizeof(*l->name));
        if (!p)
            return;
        l->name = p;
        l->cap = cap;
    }
    snprintf(l->path[l->n], sizeof(l->path[0]), "%s", image);
    snprintf(l->name[l->n], sizeof(l->name[0]), "%s%s%s", stem, *stem ? " " : "", chart);
    l->n++;
}

/* Remove the scratch folder (its files, data/ and its files). */
static void rm_tree(const char *dir)
{
    char sub[1100];
    snprintf(sub, sizeof(sub), "%s/data", dir);
    const char *dirs[] = {sub, dir};
    for (size_t i = 0; i < 2; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1400];
            snprintf(p, sizeof(p), "%s/%s", dirs[i], e->d_name);
            unlink(p);
        }
        closedir(d);
        rmdir(dirs[i]);
    }
}

/* Copy an SVG into the page from its <svg element on (no XML prolog or DOCTYPE). */
static bool inline_svg(FILE *out, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0 || len > (64L << 20)) {
        fclose(f);
        return false;
    }
    char *buf = malloc((size_t)len + 1);
    size_t got = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!buf)
        return false;
    buf[got] = 0;
    char *s = strstr(buf, "<svg");
    if (s)
        fputs(s, out);
    free(buf);
    return s != NULL;
}

static const char *chart_caption(const char *chart)
{
    static const struct {
        const char *name, *caption;
    } caps[] = {
        {"util", "GPU-time by use over the time of day (stacked; idle = allocated but idle, free "
                 "= no tenant)"},
        {"queue", "Training jobs queued and running"},
        {"jobs", "Job timeline: waits, runs, checkpoints, preemptions, restores"},
        {"busy", "Utilisation over time, every run"},
        {"p99", "p99 latency over time (log axis) with SLO targets"},
        {"cdf", "Latency tail: share of requests slower than x (log-log)"},
        {"daily", "GPU-time busy per day with 95 % CI whiskers"},
        {"compare", "Policy comparison: one panel per question"},
    };
    const char *sp = strrchr(chart, ' ');
    const char *c = sp ? sp + 1 : chart;
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
        if (!strcmp(caps[i].name, c))
            return caps[i].caption;
    return c;
}

static void charts(FILE *out, const struct results *rs, size_t n, const struct report_html_opts *o)
{
    if (!o || !o->gnuplot || !o->scripts || !plot_have_gnuplot(o->gnuplot)) {
        fputs("<p class=\"note\">No charts: gnuplot was not found (Debian package gnuplot-nox; "
              "or set TIDESIM_GNUPLOT).</p>\n",
              out);
        return;
    }
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tidesim-report-XXXXXX", o->tmpdir ? o->tmpdir : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(out, "<p class=\"note\">No charts: cannot create a scratch folder (%s).</p>\n",
                strerror(errno));
        return;
    }
    struct chart_list l = {0};
    struct plot_opts po = {dir, PLOT_SVG, o->scripts, o->gnuplot, on_chart, &l};
    char err[1024] = "";
    size_t made = 0;
    int rc = plot_results(&po, rs, n, &made, err, sizeof(err));
    if (rc) {
        fputs("<p class=\"note\">Some charts could not be drawn: ", out);
        esc_xml(out, err);
        fputs("</p>\n", out);
    }
    /* The all-runs charts first (they compare), then each file's. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < l.n; i++) {
            bool per_file = strchr(l.name[i], ' ') != NULL ||
                            (n == 1 && (!strcmp(l.name[i], "util") || !strcmp(l.name[i], "queue") ||
                                        !strcmp(l.name[i], "jobs")));
            if (per_file != (pass == 1))
                continue;
            fputs("<figure>", out);
            if (!inline_svg(out, l.path[i]))
                fputs("<p class=\"note\">(chart missing)</p>", out);
            fputs("<figcaption>", out);
            esc_xml(out, chart_caption(l.name[i]));
            if (strchr(l.name[i], ' ')) {
                fputs(" — ", out);
                fprintf(out, "%.*s", (int)(strchr(l.name[i], ' ') - l.name[i]), l.name[i]);
            }
            fputs("</figcaption></figure>\n", out);
        }
    free(l.path);
    free(l.name);
    rm_tree(dir);
}

static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;"
    "max-width:1280px;padding:0 1.5em 3em;color:#222;line-height:1.4}"
    "h1{font-size:1.6em;margin-top:1em}h2{border-bottom:2px solid #4477aa;padding-bottom:.2em;"
    "margin-top:2em}nav a{margin-right:1em}table{border-collapse:collapse;margin:.5em 0 1em;"
    "font-size:.92em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
    "thead th{background:#eef2f8}td.num{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}.ci{color:#666;font-size:.9em}.ok{color:#1a7f37}.bad{color:#c62828;"
    "font-weight:bold}.note{color:#8a6d3b;background:#fcf8e3;padding:.4em .8em}"
    "figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}"
    "figcaption{color:#555;font-size:.9em}pre{background:#f6f8fa;padding:1em;overflow:auto;"
    "font-size:.85em}.warn{color:#c62828;font-weight:bold}";

int report_html(FILE *out, const char *const *paths, size_t n, const struct report_html_opts *o,
                char *err, size_t errlen)
{
    h5io_quiet();
    struct results *rs = calloc(n ? n : 1, sizeof(*rs));
    struct run_meta *meta = calloc(n ? n : 1, sizeof(*meta));
    char(*names)[160] = calloc(n ? n : 1, sizeof(*names));
    if (!rs || !meta || !names) {
        free(rs);
        free(meta);
        free(names);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = 0;
    size_t opened = 0;
    for (; opened < n && !rc; opened++) {
        rc = results_open_for(&rs[opened], paths[opened], RESULTS_BY_HTML, err, errlen);
        if (rc)
            break;
        meta_read(&rs[opened], &meta[opened]);
    }
    if (rc)
        goto out;
    for (size_t i = 0; i < n; i++)
        run_name(names[i], sizeof(names[i]), rs, n, i);

    const char *title = n == 1 ? or_dash(rs[0].scenario_name) : "policy comparison";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>tidesim report: ",
          out);
    esc_xml(out, title);
    fprintf(out,
            "</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>Capacity report: ", style);
    esc_xml(out, title);
    fputs("</h1>\n<p>", out);
    if (n == 1) {
        fprintf(out, "Policy <b>");
        esc_xml(out, or_dash(rs[0].policy));
        fprintf(out, "</b> on %.0f × ", rs[0].gpus);
        esc_xml(out, or_dash(rs[0].gpu));
        fprintf(out, " (");
        esc_xml(out, or_dash(rs[0].sharing));
        fprintf(out, "), %.4g h simulated, ", rs[0].duration_s / 3600);
        if (rs[0].replicated)
            fprintf(out, "%zu replications: values are means ± 95 %% Student-t intervals.",
                    rs[0].reps);
        else
            fprintf(out, "a single run (seed %.0f): no confidence intervals.", rs[0].seed);
    } else {
        fprintf(out, "%zu runs side by side: ", n);
        for (size_t i = 0; i < n; i++) {
            fputs(i ? ", " : "", out);
            esc_xml(out, names[i]);
            fprintf(out, " (scenario ");
            esc_xml(out, or_dash(rs[i].scenario_name));
            if (rs[i].replicated)
                fprintf(out, ", %zu replications)", rs[i].reps);
            else
                fputs(", single run)", out);
        }
        fputs(". Replicated values are means ± 95 % Student-t intervals.", out);
    }
    fputs("</p>\n", out);
    for (size_t i = 0; i < n; i++)
        if (!rs[i].complete) {
            fputs("<p class=\"warn\">Incomplete run: ", out);
            esc_xml(out, names[i]);
            fprintf(out,
                    " was interrupted at %.4g h of simulated time; its figures cover only "
                    "that part.</p>\n",
                    rs[i].sim_time_reached_s / 3600);
        }
    fputs("<nav><a href=\"#summary\">Headline metrics</a><a href=\"#services\">Services</a>"
          "<a href=\"#training\">Training</a><a href=\"#gpu-time\">GPU-time</a>"
          "<a href=\"#charts\">Charts</a><a href=\"#scenario\">Scenario</a>"
          "<a href=\"#provenance\">Provenance</a></nav>\n</header>\n",
          out);

    fputs("<section id=\"summary\">\n<h2>Headline metrics</h2>\n", out);
    side_table(out, rs, n, names, 0, false, 1);
    fputs("<details><summary>Every other figure of /summary</summary>\n", out);
    side_table(out, rs, n, names, 0, true, -1);
    fputs("</details>\n", out);
    fputs("</section>\n<section id=\"services\">\n<h2>Inference services</h2>\n", out);
    for (size_t i = 0; i < n; i++)
        services(out, &rs[i], names[i]);
    for (size_t i = 0; i < n; i++)
        queues(out, &rs[i], names[i]);
    fputs("</section>\n<section id=\"training\">\n<h2>Training outcomes</h2>\n"
          "<p>Jobs by their state at the end of the run; job seconds summed over jobs.</p>\n",
          out);
    side_table(out, rs, n, names, 1, true, 0);
    fputs("</section>\n<section id=\"gpu-time\">\n<h2>GPU-time by state</h2>\n"
          "<p>Share of the GPU-time offered (per card, summed over cards).</p>\n",
          out);
    side_table(out, rs, n, names, 2, true, 0);
    fputs("</section>\n<section id=\"charts\">\n<h2>Charts</h2>\n", out);
    charts(out, rs, n, o);
    fputs("</section>\n<section id=\"scenario\">\n<h2>Scenario</h2>\n", out);
    for (size_t i = 0; i < n; i++) {
        fputs("<h3>", out);
        esc_xml(out, names[i]);
        fputs("</h3>\n<pre>", out);
        esc_xml(out, meta[i].scenario ? meta[i].scenario : "(the file does not hold the scenario)");
        fputs("</pre>\n", out);
    }
    fputs("</section>\n<section id=\"provenance\">\n<h2>Provenance</h2>\n<table><thead><tr>"
          "<th>run</th><th>file</th><th>scenario file</th><th>tidesim</th><th>git commit</th>"
          "<th>seeds</th><th>complete</th><th>host</th><th>started (UTC)</th>"
          "<th>wall time</th></tr></thead><tbody>\n",
          out);
    for (size_t i = 0; i < n; i++) {
        const struct results *r = &rs[i];
        const char *b = strrchr(r->path, '/');
        fputs("<tr><th scope=\"row\">", out);
        esc_xml(out, names[i]);
        fputs("</th><td>", out);
        esc_xml(out, b ? b + 1 : r->path);
        fputs("</td><td>", out);
        esc_xml(out, or_dash(meta[i].scenario_path));
        fputs("</td><td>", out);
        esc_xml(out, or_dash(r->version));
        fputs("</td><td>", out);
        esc_xml(out, or_dash(r->git_commit));
        fputs("</td><td>", out);
        if (r->replicated && r->seeds)
            fprintf(out, "%.0f..%.0f (%zu replications)", r->seeds[0], r->seeds[r->reps - 1],
                    r->reps);
        else
            fprintf(out, "%.0f", r->seed);
        fprintf(out, "</td><td>%s</td><td>", r->complete ? "yes" : "no (interrupted)");
        esc_xml(out, or_dash(meta[i].host));
        fputs("</td><td>", out);
        esc_xml(out, or_dash(meta[i].wall_start));
        if (isfinite(r->wall_seconds))
            fprintf(out, "</td><td>%.1f s</td></tr>\n", r->wall_seconds);
        else
            fputs("</td><td>-</td></tr>\n", out);
    }
    fputs("</tbody></table>\n<p>Written by <code>tidesim report --format html</code> from the "
          "results files alone; figures and units are the files' own.</p>\n</section>\n"
          "</body>\n</html>\n",
          out);
out:
    for (size_t i = 0; i < opened; i++) {
        results_release(&rs[i]);
        meta_release(&meta[i]);
    }
    free(rs);
    free(meta);
    free(names);
    return rc;
}
