/* plot.c — export results to .dat files and draw them with gnuplot (plot.h). */
#include "analysis/plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/results.h"
#include "analysis/stats.h"
#include "analysis/sweepidx.h"

/* Bytes of a path handed to gnuplot (folder + file name). */
#define PLOT_PATH_MAX 1024
/* The right end of a time axis past the last sample (h): times are written with 4 decimals,
 * so the last one, rounded up, still falls inside it (a lone sample is drawn as a point). */
#define PLOT_EDGE_H 1e-4

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int plot_find_scripts(const char *exe, char *buf, size_t n)
{
    const char *env = getenv("TIDESIM_PLOTS");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return is_dir(buf) ? 0 : -ENOENT;
    }
    char self[1024] = "";
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len > 0)
        self[len] = 0;
    else if (exe)
        snprintf(self, sizeof(self), "%s", exe);
    char *slash = strrchr(self, '/');
    if (slash) {
        *slash = 0;
        snprintf(buf, n, "%s/../analysis/plots", self);
        if (is_dir(buf))
            return 0;
        snprintf(buf, n, "%s/../share/tidesim/plots", self);
        if (is_dir(buf))
            return 0;
    }
    snprintf(buf, n, "analysis/plots");
    return is_dir(buf) ? 0 : -ENOENT;
}

bool plot_have_gnuplot(const char *gnuplot)
{
    if (strchr(gnuplot, '/'))
        return access(gnuplot, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char dir[1024];
    while (*path) {
        size_t k = strcspn(path, ":");
        snprintf(dir, sizeof(dir), "%.*s/%s", (int)k, path, gnuplot);
        if (access(dir, X_OK) == 0)
            return true;
        path += k + (path[k] == ':');
    }
    return false;
}

/* A file name stem for prefixes: basename without .h5/.partial, unsafe chars replaced. */
static void stem_of(const char *path, char *buf, size_t n)
{
    const char *b = strrchr(path, '/');
    snprintf(buf, n, "%s", b ? b + 1 : path);
    char *dot = strstr(buf, ".h5");
    if (dot)
        *dot = 0;
    for (char *p = buf; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            *p = '_';
}

/*
 * What gnuplot is handed. gnuplot runs a command for an output name that
 * begins with '|', and for a data or script name that begins with '<', and
 * it ends a command at a line break; inside a single-quoted string only ''
 * is special (no backquote or macro substitution). So every path is made
 * absolute (it begins with '/') and refused when it holds a quote, a
 * backquote or a control character, and every text from a results file
 * (names, subtitle) has its control characters replaced and its quotes doubled.
 */
static bool gp_path_safe(const char *p)
{
    if (p[0] != '/')
        return false;
    for (; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\'' || *p == '"' || *p == '`')
            return false;
    return true;
}

/* Text from a results file for a chart: control characters (a line break would end the
 * gnuplot command) become '?'; in words also blanks become '_'. */
static void gp_clean(char *buf, size_t n, const char *s, bool word)
{
    size_t i = 0; /* a copy cut to the buffer: a label may be longer than its room */
    for (; n && s[i] && i + 1 < n; i++)
        buf[i] = s[i];
    if (n)
        buf[i] = '\0';
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
        else if (word && *p == ' ')
            *p = '_';
}

/* The range lo..hi of the finite values above 0 seen so far (lo = hi = NaN before the first). */
struct span {
    double lo, hi;
};

static void span_add(struct span *r, double v)
{
    if (!isfinite(v) || !(v > 0))
        return;
    r->lo = isnan(r->lo) || v < r->lo ? v : r->lo;
    r->hi = isnan(r->hi) || v > r->hi ? v : r->hi;
}

/* A number as a gnuplot expression: NaN (gnuplot's variable) when not finite. */
static const char *gnum(char *buf, size_t n, double v)
{
    if (isfinite(v))
        snprintf(buf, n, "%.10g", v);
    else
        snprintf(buf, n, "NaN");
    return buf;
}

/*
 * Run gnuplot on script with variables. What it writes to its standard error (warnings, the
 * error that stopped it) is collected into msg (n bytes, the first of it kept; the rest read
 * and dropped). Returns 0, or -EIO when gnuplot could not be run or exited non-zero.
 */
static int run_gnuplot(const char *gnuplot, const char *script, const char *vars, char *msg,
                       size_t n)
{
    msg[0] = '\0';
    int fd[2];
    fflush(NULL);
    if (pipe(fd))
        return -EIO;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -EIO;
    }
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDERR_FILENO) < 0)
            _exit(127);
        close(fd[1]);
        execlp(gnuplot, gnuplot, "-e", vars, script, (char *)NULL);
        static const char no[] = "cannot run gnuplot\n";
        ssize_t w = write(STDERR_FILENO, no, sizeof(no) - 1);
        (void)w;
        _exit(127);
    }
    close(fd[1]);
    size_t at = 0;
    for (;;) {
        char buf[4096];
        ssize_t k = read(fd[0], buf, sizeof(buf));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        size_t take = n - 1 - at < (size_t)k ? n - 1 - at : (size_t)k;
        memcpy(msg + at, buf, take);
        at += take;
    }
    msg[at] = '\0';
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -EIO;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/*
 * The line of gnuplot's messages that says why it stopped: the last line naming a script line
 * ("\"/x/compare.gp\" line 28: x range is invalid", the script's folder left out), else the
 * last non-blank line. Into buf.
 */
static void gnuplot_why(char *buf, size_t n, const char *msg)
{
    const char *best = NULL, *last = NULL;
    size_t bestlen = 0, lastlen = 0;
    for (const char *p = msg; *p;) {
        size_t len = strcspn(p, "\n");
        bool blank = true;
        for (size_t i = 0; i < len && blank; i++)
            blank = p[i] == ' ' || p[i] == '\t' || p[i] == '^' || p[i] == '\r';
        if (!blank) {
            last = p;
            lastlen = len;
            const char *at = strstr(p, "\" line ");
            if (at && at < p + len && (size_t)(at - p) < len) {
                const char *slash = p;
                for (const char *q = p; q < at; q++)
                    if (*q == '/')
                        slash = q + 1;
                best = slash;
                bestlen = len - (size_t)(slash - p);
            }
        }
        p += len + (p[len] == '\n');
    }
    if (!best) {
        best = last;
        bestlen = lastlen;
    }
    if (!best)
        snprintf(buf, n, "no message");
    else
        gp_clean(buf, n < bestlen + 1 ? n : bestlen + 1, best, false);
    char *w = buf; /* the quotes around the script's name dropped */
    for (const char *r = buf; *r; r++)
        if (*r != '"')
            *w++ = *r;
    *w = '\0';
}

/* gnuplot single-quoted string: ' doubled. Returns 0, or -ENAMETOOLONG when buf is too small. */
static int gq(char *buf, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s; s++) {
        if (k + 3 > n)
            return -ENAMETOOLONG;
        if (*s == '\'')
            buf[k++] = '\'';
        buf[k++] = *s;
    }
    buf[k] = 0;
    return 0;
}

struct chart_ctx {
    const struct plot_opts *o;
    char dir[PLOT_PATH_MAX];         /* absolute output folder */
    char datadir[PLOT_PATH_MAX + 8]; /* dir/data */
    char scripts[PLOT_PATH_MAX];     /* absolute scripts folder */
    char stem[256];
    char subtitle[512];
    const char *file;        /* results file being read (for messages) */
    const char *of;          /* the file(s) of the charts being drawn (for messages) */
    char inputs[600];        /* every file, for the charts of all files */
    const struct results *r; /* its reader (results_col: nothing is opened again) */
    size_t rep;              /* the replication drawn */
    int rrc;                 /* the reader's refusal, 0 when none */
    size_t made;
    char *err;
    size_t errlen;
};

static int too_long(struct chart_ctx *c, const char *what)
{
    snprintf(c->err, c->errlen, "%s: path too long for gnuplot (limit %d bytes)", what,
             PLOT_PATH_MAX - 1);
    return -ENAMETOOLONG;
}

/* Draw chart `chart` with script SCRIPT.gp of data at w x h pixels. */
static int draw_script(struct chart_ctx *c, const char *scr, const char *chart, const char *data,
                       const char *extra, int w, int h)
{
    const char *ext = c->o->format == PLOT_SVG ? "svg" : "png";
    char term[160];
    /* noenhanced: a '_' or '^' in a service or policy name is text, never a subscript. */
    if (c->o->format == PLOT_SVG)
        snprintf(term, sizeof(term),
                 "svg size %d,%d dynamic noenhanced font 'sans,11' background '#ffffff'", w, h);
    else
        snprintf(term, sizeof(term), "pngcairo size %d,%d noenhanced font 'sans,10'", w, h);
    char out[PLOT_PATH_MAX], script[PLOT_PATH_MAX], qd[2 * PLOT_PATH_MAX], qo[2 * PLOT_PATH_MAX],
        qs[1100], qp[2 * PLOT_PATH_MAX], vars[16384];
    int k = c->stem[0] ? snprintf(out, sizeof(out), "%s/%s_%s.%s", c->dir, c->stem, chart, ext)
                       : snprintf(out, sizeof(out), "%s/%s.%s", c->dir, chart, ext);
    if (k < 0 || (size_t)k >= sizeof(out))
        return too_long(c, c->dir);
    k = snprintf(script, sizeof(script), "%s/%s.gp", c->scripts, scr);
    if (k < 0 || (size_t)k >= sizeof(script))
        return too_long(c, c->scripts);
    /* Made here from checked parts; checked again as the last word before gnuplot. */
    if (!gp_path_safe(out) || !gp_path_safe(data) || !gp_path_safe(script)) {
        snprintf(c->err, c->errlen, "%s: not a plain absolute path; not handed to gnuplot",
                 !gp_path_safe(out)    ? out
                 : !gp_path_safe(data) ? data
                                       : script);
        return -EINVAL;
    }
    if (gq(qd, sizeof(qd), data) || gq(qo, sizeof(qo), out) || gq(qs, sizeof(qs), c->subtitle) ||
        gq(qp, sizeof(qp), c->scripts))
        return too_long(c, out);
    k = snprintf(vars, sizeof(vars),
                 "scripts='%s'; data='%s'; out='%s'; term=\"%s\"; subtitle='%s'; %s", qp, qd, qo,
                 term, qs, extra ? extra : "");
    if (k < 0 || (size_t)k >= sizeof(vars))
        return too_long(c, out);
    char msg[4096], why[600];
    int grc = run_gnuplot(c->o->gnuplot, script, vars, msg, sizeof(msg));
    if (grc) {
        gnuplot_why(why, sizeof(why), msg);
        snprintf(c->err, c->errlen, "chart %s of %s not drawn: gnuplot failed (%s); its data: %s",
                 chart, c->of ? c->of : "-", why, data);
        return -EIO;
    }
    /* Its warnings, if any, each line named by the chart. */
    for (const char *p = msg; *p;) {
        size_t len = strcspn(p, "\n");
        if (len)
            fprintf(stderr, "tidesim: chart %s of %s: gnuplot: %.*s\n", chart, c->of ? c->of : "-",
                    (int)len, p);
        p += len + (p[len] == '\n');
    }
    c->made++;
    if (c->o->on_chart)
        c->o->on_chart(c->o->ctx, chart, c->stem, out);
    return 0;
}

static int draw_sized(struct chart_ctx *c, const char *chart, const char *data, const char *extra,
                      int w, int h)
{
    return draw_script(c, chart, chart, data, extra, w, h);
}

static int draw(struct chart_ctx *c, const char *chart, const char *data, const char *extra)
{
    return draw_sized(c, chart, data, extra, 1000, 600);
}

static FILE *dat_open(struct chart_ctx *c, char *path, size_t n, const char *name)
{
    int k = snprintf(path, n, "%s/%s%s%s.dat", c->datadir, c->stem, c->stem[0] ? "_" : "", name);
    if (k < 0 || (size_t)k >= n) {
        too_long(c, c->datadir);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        snprintf(c->err, c->errlen, "%s: cannot write", path);
    return f;
}

/*
 * Column `name` of table `group` of replication c->rep of c->r (results_col,
 * read once by the reader) as a copy the caller frees, or NULL (absent, or
 * refused: c->rrc set).
 */
static double *read_col(struct chart_ctx *c, const char *group, const char *name, size_t *n)
{
    const double *v = NULL;
    *n = 0;
    int rc = results_col(c->r, c->rep, group, name, &v, n);
    if (rc) {
        if (rc != -ENOENT && !c->rrc)
            c->rrc = rc;
        *n = 0;
        return NULL;
    }
    double *copy = malloc(*n ? *n * sizeof(*copy) : sizeof(*copy));
    if (!copy) {
        c->rrc = c->rrc ? c->rrc : -ENOMEM;
        *n = 0;
        return NULL;
    }
    if (*n)
        memcpy(copy, v, *n * sizeof(*copy));
    return copy;
}

/* A refusal of the reader as this chart's error. */
static int refused(struct chart_ctx *c)
{
    snprintf(c->err, c->errlen, "%s: %s", c->file,
             c->rrc == -ENOMEM ? "out of memory" : results_why(c->r));
    return c->rrc;
}

/*
 * GPU-time by use over the time of day at the sample interval, stacked (% of
 * the cluster's GPU-time, from /timeseries share_<state>): the use states, then
 * "idle (allocated)" — a tenant holds the card, its SMs are idle — and "free"
 * (no tenant), the names of docs/results.md; busy (SMs active) as a line.
 */
static int chart_util(struct chart_ctx *c)
{
    static const char *const cols[] = {"share_inference",     "share_training",  "share_checkpoint",
                                       "share_restore",       "share_recompute", "share_overhead",
                                       "share_reconfiguring", "share_idle",      "share_free"};
    static const char *const names[] = {"inference",     "training",         "checkpoint",
                                        "restore",       "recompute",        "start-up",
                                        "MIG re-layout", "idle (allocated)", "free"};
    static const char *const colors[] = {"#4477aa", "#66ccee", "#ee6677", "#aa3377", "#ccbb44",
                                         "#228833", "#bb5566", "#999999", "#e8e8e8"};
    enum { NCOL = 9 };
    const char *g = "timeseries";
    size_t n = 0, m, mb = 0;
    double *t = read_col(c, g, "time_s", &n), *busy = read_col(c, g, "util_busy", &mb);
    double *col[NCOL] = {0};
    char labels[256] = "", cl[256] = "";
    size_t ncol = 0;
    for (size_t k = 0; k < NCOL; k++) {
        col[ncol] = read_col(c, g, cols[k], &m);
        if (col[ncol] && m == n) {
            /* A state the run never used (all zeros) is left out of the legend. */
            double any = 0;
            for (size_t i = 0; i < n; i++)
                any += fabs(col[ncol][i]);
            if (any > 0 || k == NCOL - 1) {
                snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s|", names[k]);
                snprintf(cl + strlen(cl), sizeof(cl) - strlen(cl), "%s ", colors[k]);
                ncol++;
                continue;
            }
        }
        free(col[ncol]);
        col[ncol] = NULL;
    }
    int rc = 0;
    if (c->rrc) {
        rc = refused(c);
        goto out;
    }
    if (!t || n == 0 || ncol == 0)
        goto out;
    double dt = n > 1 ? t[1] - t[0] : t[0];
    if (!isfinite(dt) || !(dt > 0))
        dt = 1;
    /* Buckets at least a second wide: at most 86,400 of them whatever time_s says. */
    double bw = dt < 1 ? 1 : dt;
    size_t nb = bw < 86400 ? (size_t)ceil(86400.0 / bw) : 1;
    double *acc = calloc(nb * (ncol + 2), sizeof(*acc));
    if (!acc) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        double start = t[i] - dt;
        if (!isfinite(start))
            continue;
        size_t b = (size_t)floor(fmod(start < 0 ? 0 : start, 86400.0) / bw + 1e-9) % nb;
        double *a = acc + b * (ncol + 2);
        a[0] += 1;
        for (size_t k = 0; k < ncol; k++)
            a[1 + k] += col[k][i] * 100;
        a[1 + ncol] += busy && mb == n ? busy[i] * 100 : NAN;
    }
    char path[PLOT_PATH_MAX];
    FILE *f = dat_open(c, path, sizeof(path), "util");
    if (!f) {
        free(acc);
        rc = -EIO;
        goto out;
    }
    fprintf(f, "# hour_of_day cumulative%% of GPU-time (%s) busy%%\n", labels);
    size_t used = 0;
    for (size_t b = 0; b < nb; b++)
        used += acc[b * (ncol + 2)] > 0;
    for (size_t b = 0; b < nb; b++) {
        double *a = acc + b * (ncol + 2);
        if (a[0] == 0)
            continue;
        /* One bucket only (one sample, or a sample interval of a day or more): drawn across
         * its width, from its start to its end; an area or a line needs two points. */
        for (int edge = used == 1 ? 0 : -1; edge <= (used == 1 ? 1 : -1); edge++) {
            double cum = 0;
            double at = edge < 0 ? (double)b + 0.5 : (double)b + edge;
            fprintf(f, "%.4f", fmin(at * bw / 3600, 24));
            for (size_t k = 0; k < ncol; k++) {
                cum += a[1 + k] / a[0];
                fprintf(f, " %.4f", cum);
            }
            fprintf(f, " %.4f\n", a[1 + ncol] / a[0]);
        }
    }
    fclose(f);
    free(acc);
    char extra[900];
    int x = snprintf(extra, sizeof(extra), "ncum=%zu; colors='%s'; step_h=%g", ncol, cl, bw / 3600);
    /* One variable per label (lab1, lab2, ...): labels hold blanks, words() would split them. */
    const char *lp = labels;
    for (size_t k = 0; k < ncol && x > 0 && (size_t)x < sizeof(extra); k++) {
        size_t len = strcspn(lp, "|");
        x += snprintf(extra + x, sizeof(extra) - (size_t)x, "; lab%zu='%.*s'", k + 1, (int)len, lp);
        lp += len + (lp[len] == '|');
    }
    rc = draw(c, "util", path, extra);
out:
    free(t);
    free(busy);
    for (size_t k = 0; k < NCOL; k++)
        free(col[k]);
    return rc;
}

struct svc_list {
    char names[16][128];
    size_t n;
};

/* The first 16 services of r, in the order the file wrote them (results_open's). */
static void service_names(const struct results *r, struct svc_list *l)
{
    l->n = 0;
    for (size_t k = 0; k < r->nsvcs && l->n < 16; k++)
        snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", r->svcs[k].name);
}

/* Attribute `key` of service `name` in replication 0 (results_open read it), NaN when absent. */
static double svc_attr(const struct results *r, const char *name, const char *key)
{
    for (size_t k = 0; k < r->nsvcs; k++)
        if (!strcmp(r->svcs[k].name, name)) {
            const struct results_metric *m = results_table_find(&r->svcs[k].t, key);
            return m ? m->values[0] : NAN;
        }
    return NAN;
}

static int chart_queue(struct chart_ctx *c)
{
    const char *g = "timeseries";
    size_t n = 0, m1 = 0, m2 = 0;
    double *t = read_col(c, g, "time_s", &n), *q = read_col(c, g, "jobs_queued", &m1),
           *r = read_col(c, g, "jobs_running", &m2);
    int rc = c->rrc ? refused(c) : 0;
    char path[PLOT_PATH_MAX];
    if (!rc && t && q && r && m1 == n && m2 == n && n) {
        FILE *f = dat_open(c, path, sizeof(path), "queue");
        if (!f) {
            rc = -EIO;
        } else {
            fprintf(f, "# time_h jobs_queued jobs_running\n");
            double maxh = 0, ymax = 0;
            for (size_t k = 0; k < n; k++) {
                fprintf(f, "%.4f %g %g\n", t[k] / 3600, q[k], r[k]);
                maxh = isfinite(t[k]) ? fmax(maxh, t[k] / 3600) : maxh;
                ymax = fmax(ymax, fmax(isfinite(q[k]) ? q[k] : 0, isfinite(r[k]) ? r[k] : 0));
            }
            fclose(f);
            char extra[200];
            snprintf(extra, sizeof(extra), "maxh=%.6f; ymax=%g; npts=%zu", maxh + PLOT_EDGE_H, ymax,
                     n);
            rc = draw(c, "queue", path, extra);
        }
    }
    free(t);
    free(q);
    free(r);
    return rc;
}

/* A name from the results file as one gnuplot word inside '...': control characters as '?',
 * blanks and quotes as '_'. */
static void gp_word(char *buf, size_t n, const char *s)
{
    gp_clean(buf, n, s, true);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '_';
}

/* Append word w to the blank-separated list buf (used bytes *at); cut silently when full. */
static void add_word(char *buf, size_t n, size_t *at, const char *w)
{
    int k = snprintf(buf + *at, n - *at, "%s%s", *at ? " " : "", w);
    if (k > 0 && (size_t)k < n - *at)
        *at += (size_t)k;
    else
        buf[*at] = '\0';
}

/*
 * Admitted and borrowed GPUs of the group `ts` (a queue's "queues/NAME/timeseries" or a
 * flavor's "queues/NAME/flavors/F/timeseries"): *adm and *bor (caller frees), their length in
 * *n (0 when absent or of different lengths; time_s too when t is not NULL). 0, or the refusal.
 */
static int quota_cols(struct chart_ctx *c, const char *ts, double **t, double **adm, double **bor,
                      size_t *n)
{
    *adm = *bor = NULL;
    *n = 0;
    size_t m0 = 0, m1 = 0, m2 = 0;
    double *tt = t ? read_col(c, ts, "time_s", &m0) : NULL;
    *adm = read_col(c, ts, "admitted_gpus", &m1);
    *bor = read_col(c, ts, "borrowed_gpus", &m2);
    if (t)
        *t = tt;
    if (c->rrc)
        return refused(c);
    if (*adm && *bor && m1 == m2 && (!t || (tt && m0 == m1)))
        *n = m1;
    return 0;
}

/*
 * Quota per queue over time (/queues, kueue or kai with manifests): for each
 * queue (at most 12) the GPUs its admitted workloads hold and, dashed, how many
 * of them are borrowed. Nothing when the file has no queues. A queue's GPU
 * flavors (results entries "<queue>/<flavor>") are the flavors chart's.
 */
static int chart_quota(struct chart_ctx *c, const struct results *r)
{
    enum { QMAX = 12 };
    size_t qi[QMAX], nq = 0, n = 0;
    for (size_t i = 0; i < r->nqueues && nq < QMAX; i++)
        if (!strchr(r->queues[i].name, '/'))
            qi[nq++] = i;
    if (nq == 0)
        return 0;
    double *t = NULL, *adm[QMAX] = {0}, *bor[QMAX] = {0};
    int rc = 0;
    for (size_t i = 0; i < nq && !rc; i++) {
        char sub[600];
        snprintf(sub, sizeof(sub), "queues/%s/timeseries", r->queues[qi[i]].name);
        size_t m = 0;
        rc = quota_cols(c, sub, i ? NULL : &t, &adm[i], &bor[i], &m);
        if (i == 0)
            n = m;
        if (!rc && (m == 0 || m != n))
            nq = i; /* a queue without its columns: draw those before it */
    }
    char path[PLOT_PATH_MAX], names[1024] = "", extra[1300];
    size_t len = 0;
    double maxh = 0, ymax = 0;
    if (!rc && nq && n) {
        FILE *f = dat_open(c, path, sizeof(path), "quota");
        if (!f) {
            rc = -EIO;
        } else {
            fprintf(f, "# time_h then per queue: admitted_gpus borrowed_gpus\n");
            for (size_t k = 0; k < n; k++) {
                fprintf(f, "%.4f", t[k] / 3600);
                maxh = isfinite(t[k]) ? fmax(maxh, t[k] / 3600) : maxh;
                for (size_t i = 0; i < nq; i++) {
                    fprintf(f, " %g %g", adm[i][k], bor[i][k]);
                    ymax = isfinite(adm[i][k]) ? fmax(ymax, adm[i][k]) : ymax;
                }
                fputc('\n', f);
            }
            fclose(f);
            for (size_t i = 0; i < nq; i++) {
                char clean[128];
                gp_word(clean, sizeof(clean), r->queues[qi[i]].name);
                add_word(names, sizeof(names), &len, clean);
            }
            snprintf(extra, sizeof(extra), "nq=%zu; names='%s'; maxh=%.6f; ymax=%g; npts=%zu", nq,
                     names, maxh + PLOT_EDGE_H, ymax, n);
            rc = draw(c, "quota", path, extra);
        }
    }
    free(t);
    for (size_t i = 0; i < QMAX; i++) {
        free(adm[i]);
        free(bor[i]);
    }
    return rc;
}

/*
 * Quota per queue and GPU flavor over time (kueue manifests with several flavors:
 * /queues/<queue>/flavors/<flavor>, read as entries "<queue>/<flavor>"): one panel per
 * flavor (at most 8), in it per queue (at most 12, one colour each across the panels) the
 * GPUs of that flavor its admitted workloads hold and, dashed, how many are borrowed.
 * Nothing for a file without flavors.
 */
static int chart_flavors(struct chart_ctx *c, const struct results *r)
{
    enum { QMAX = 12, FMAX = 8 };
    const char *qn[QMAX], *fn[FMAX];
    size_t nq = 0, nf = 0;
    for (size_t i = 0; i < r->nqueues; i++) {
        const char *name = r->queues[i].name, *slash = strchr(name, '/');
        if (!slash)
            continue;
        size_t ql = (size_t)(slash - name);
        bool seen = false;
        for (size_t k = 0; k < nq && !seen; k++)
            seen = strlen(qn[k]) == ql && !strncmp(qn[k], name, ql);
        if (!seen && nq < QMAX) { /* the queue entry itself, which comes before its flavors */
            for (size_t k = 0; k < i; k++)
                if (strlen(r->queues[k].name) == ql && !strncmp(r->queues[k].name, name, ql))
                    qn[nq++] = r->queues[k].name;
        }
        seen = false;
        for (size_t k = 0; k < nf && !seen; k++)
            seen = !strcmp(fn[k], slash + 1);
        if (!seen && nf < FMAX)
            fn[nf++] = slash + 1;
    }
    if (nq == 0 || nf == 0)
        return 0;
    double *t = NULL, *adm[FMAX][QMAX] = {{0}}, *bor[FMAX][QMAX] = {{0}};
    size_t n = 0;
    int rc = 0;
    for (size_t f = 0; f < nf && !rc; f++)
        for (size_t q = 0; q < nq && !rc; q++) {
            char sub[600], entry[300];
            snprintf(sub, sizeof(sub), "queues/%s/flavors/%s/timeseries", qn[q], fn[f]);
            snprintf(entry, sizeof(entry), "%s/%s", qn[q], fn[f]);
            size_t m = 0;
            bool first = f == 0 && q == 0;
            /* A pair no replication has (no entry "<queue>/<flavor>") is absent: not looked up. */
            bool have = false;
            for (size_t k = 0; k < r->nqueues && !have; k++)
                have = !strcmp(r->queues[k].name, entry);
            rc = have ? quota_cols(c, sub, first ? &t : NULL, &adm[f][q], &bor[f][q], &m) : 0;
            if (first)
                n = m;
            if (!rc && m != n) { /* absent or of another length: drawn as nothing held */
                free(adm[f][q]);
                free(bor[f][q]);
                adm[f][q] = bor[f][q] = NULL;
            }
        }
    char path[PLOT_PATH_MAX], names[1024] = "", flavors[600] = "", extra[1900];
    size_t ln = 0, lf = 0;
    double maxh = 0, ymax = 0;
    if (!rc && n) {
        FILE *f = dat_open(c, path, sizeof(path), "flavors");
        if (!f) {
            rc = -EIO;
        } else {
            fprintf(f, "# time_h then per flavor, per queue: admitted_gpus borrowed_gpus\n");
            for (size_t k = 0; k < n; k++) {
                fprintf(f, "%.4f", t[k] / 3600);
                maxh = isfinite(t[k]) ? fmax(maxh, t[k] / 3600) : maxh;
                for (size_t fl = 0; fl < nf; fl++)
                    for (size_t q = 0; q < nq; q++)
                        if (adm[fl][q]) {
                            fprintf(f, " %g %g", adm[fl][q][k], bor[fl][q][k]);
                            ymax = isfinite(adm[fl][q][k]) ? fmax(ymax, adm[fl][q][k]) : ymax;
                        } else
                            fprintf(f, " NaN NaN");
                fputc('\n', f);
            }
            fclose(f);
            char w[128];
            for (size_t q = 0; q < nq; q++) {
                gp_word(w, sizeof(w), qn[q]);
                add_word(names, sizeof(names), &ln, w);
            }
            for (size_t fl = 0; fl < nf; fl++) {
                gp_word(w, sizeof(w), fn[fl]);
                add_word(flavors, sizeof(flavors), &lf, w);
            }
            snprintf(extra, sizeof(extra),
                     "nq=%zu; nf=%zu; names='%s'; flavors='%s'; maxh=%.6f; ymax=%g; npts=%zu", nq,
                     nf, names, flavors, maxh + PLOT_EDGE_H, ymax, n);
            rc = draw_sized(c, "flavors", path, extra, 1000, 160 + 300 * (int)nf);
        }
    }
    free(t);
    for (size_t f = 0; f < FMAX; f++)
        for (size_t q = 0; q < QMAX; q++) {
            free(adm[f][q]);
            free(bor[f][q]);
        }
    return rc;
}

/*
 * Job timeline: per job (submission order) a thin grey line from submission
 * to its end (or the run's end) — the time it waited — and on it the segments
 * of /job_segments coloured by phase (running, checkpoint, checkpoint in a
 * preemption's grace period, restore), with a cross where it was preempted
 * (a segment that is followed by a wait, not by the job's end). Files without
 * /job_segments draw one running span from start to end.
 */
static int chart_jobs(struct chart_ctx *c, double end_s)
{
    const char *g = "jobs", *sg = "job_segments";
    size_t n = 0, m[3] = {0};
    double *sub = read_col(c, g, "submit_s", &n), *st = read_col(c, g, "start_s", &m[0]),
           *en = read_col(c, g, "end_s", &m[1]), *state = read_col(c, g, "state", &m[2]);
    size_t ns = 0, k1 = 0, k2 = 0, k3 = 0;
    double *sj = NULL, *s0 = NULL, *s1 = NULL, *sk = NULL;
    if (!c->rrc) {
        sj = read_col(c, sg, "job", &ns);
        s0 = read_col(c, sg, "start_s", &k1);
        s1 = read_col(c, sg, "end_s", &k2);
        sk = read_col(c, sg, "kind", &k3);
    }
    int rc = c->rrc ? refused(c) : 0;
    bool segs = sj && s0 && s1 && sk && k1 == ns && k2 == ns && k3 == ns;
    char path[PLOT_PATH_MAX];
    if (!rc && sub && st && en && state && m[0] == n && m[1] == n && m[2] == n && n) {
        FILE *f = dat_open(c, path, sizeof(path), "jobs");
        if (!f) {
            rc = -EIO;
        } else {
            fprintf(f, "# block 0: job submit_h until_h (waiting line: submission to end)\n");
            for (size_t k = 0; k < n; k++) {
                double e = isfinite(en[k]) ? en[k] : end_s;
                if (isfinite(sub[k]))
                    fprintf(f, "%zu %.5f %.5f\n", k, sub[k] / 3600, e / 3600);
            }
            fprintf(f, "\n\n# block 1: job start_h end_h kind (1 restore 2 run 3 checkpoint 4 "
                       "checkpoint in a preemption's grace)\n");
            /* One clipped row per phase (left of the axis) so that no series is empty. */
            for (int kind = 1; kind <= 4; kind++)
                fprintf(f, "0 -10 -10 %d\n", kind);
            size_t npre = 0;
            if (segs) {
                for (size_t i = 0; i < ns; i++)
                    fprintf(f, "%.0f %.5f %.5f %.0f\n", sj[i], s0[i] / 3600, s1[i] / 3600, sk[i]);
            } else {
                for (size_t k = 0; k < n; k++)
                    if (isfinite(st[k]))
                        fprintf(f, "%zu %.5f %.5f 2\n", k, st[k] / 3600,
                                (isfinite(en[k]) ? en[k] : end_s) / 3600);
            }
            fprintf(f, "\n\n# block 2: job preempted_h (a segment followed by a wait)\n");
            if (segs) {
                /* Segments are in order of their ends; a job's next one starts later or never. */
                for (size_t i = 0; i < ns; i++) {
                    size_t j = (size_t)sj[i];
                    if (j >= n)
                        continue;
                    bool ends_job = isfinite(en[j]) && fabs(en[j] - s1[i]) < 1e-6;
                    bool at_end = fabs(s1[i] - end_s) < 1e-6;
                    bool followed = false;
                    for (size_t q = i + 1; q < ns && !followed; q++)
                        followed = (size_t)sj[q] == j && fabs(s0[q] - s1[i]) < 1e-6;
                    if (!ends_job && !at_end && !followed && state[j] != 4) {
                        fprintf(f, "%zu %.5f\n", j, s1[i] / 3600);
                        npre++;
                    }
                }
            }
            fprintf(f, "0 -10\n"); /* clipped: the series is never empty */
            fclose(f);
            char extra[160];
            snprintf(extra, sizeof(extra), "njobs=%zu; npre=%zu; lw=%.2f; endh=%g", n, npre,
                     n > 100 ? fmax(0.6, 400.0 / (double)n) : 4.0, end_s / 3600);
            rc = draw(c, "jobs", path, extra);
        }
    }
    free(sub);
    free(st);
    free(en);
    free(state);
    free(sj);
    free(s0);
    free(s1);
    free(sk);
    return rc;
}

/*
 * Node pools (cluster.pools, /pools/<name>/timeseries): busy (solid) and
 * allocated (dashed) share of each pool's GPU-time over time, one colour per
 * pool (busy.gp). Drawn from replication 0 like the file's other charts; when
 * it has no pools' series (a replicated file whose replication 0 lacks /pools
 * while another has it), from the first replication that has them, named in
 * the subtitle. No chart, and no pools.dat, for a file without any.
 */
static int chart_pools(struct chart_ctx *c, const struct results *r)
{
    if (r->npools == 0)
        return 0;
    /* The first replication with the first pool's series (results_col: read once, kept). */
    char sub[300];
    snprintf(sub, sizeof(sub), "pools/%s/timeseries", r->pools[0].name);
    size_t rep = 0;
    for (; rep < r->reps; rep++) {
        const double *v = NULL;
        size_t m = 0;
        int rrc = results_col(r, rep, sub, "time_s", &v, &m);
        if (rrc == 0 && m > 0)
            break;
        if (rrc && rrc != -ENOENT) {
            c->rrc = rrc;
            return refused(c);
        }
    }
    if (rep >= r->reps)
        return 0;
    char path[PLOT_PATH_MAX], list[2048] = "";
    FILE *f = dat_open(c, path, sizeof(path), "pools");
    if (!f)
        return -EIO;
    c->rep = rep;
    double maxh = 0;
    int rc = 0;
    size_t at = 0, npts = SIZE_MAX;
    fprintf(f, "# one block per pool: time_h busy%% allocated%%%s\n",
            rep ? " (the first replication with the pools' series)" : "");
    for (size_t i = 0; i < r->npools && !rc; i++) {
        char word[96];
        snprintf(sub, sizeof(sub), "pools/%s/timeseries", r->pools[i].name);
        size_t n = 0, m1 = 0, m2 = 0;
        double *t = read_col(c, sub, "time_s", &n), *b = read_col(c, sub, "util_busy", &m1),
               *a = read_col(c, sub, "util_allocated", &m2);
        rc = c->rrc ? refused(c) : 0;
        if (!rc && !t && !b && !a) { /* this pool's series absent: the pools before it */
            free(t);
            free(b);
            free(a);
            break;
        }
        if (!rc && t && b && a && m1 == n && m2 == n) {
            for (size_t k = 0; k < n; k++) {
                fprintf(f, "%.4f %g %g\n", t[k] / 3600, b[k] * 100, a[k] * 100);
                maxh = fmax(maxh, t[k] / 3600);
            }
            npts = n < npts ? n : npts;
        }
        fprintf(f, "\n\n");
        free(t);
        free(b);
        free(a);
        gp_clean(word, sizeof(word), r->pools[i].name, true);
        int k = snprintf(list + at, sizeof(list) - at, "%s%s", i ? " " : "", word);
        at += k > 0 && (size_t)k < sizeof(list) - at ? (size_t)k : 0;
    }
    fclose(f);
    c->rep = 0;
    if (rc || !(maxh > 0)) {
        unlink(path); /* nothing drawn: no data file left behind */
        return rc;
    }
    char extra[2300], keep[sizeof(c->subtitle)], base[sizeof(c->subtitle)], note[64] = "";
    snprintf(extra, sizeof(extra),
             "runs='%s'; maxh=%.6f; npts=%zu; ylab=\"share of each pool's GPU-time (%%)\"", list,
             maxh + PLOT_EDGE_H, npts);
    memcpy(keep, c->subtitle, sizeof(keep));
    memcpy(base, keep, sizeof(base));
    if (rep) { /* plot_file's ", replication 0" replaced by the one drawn */
        char *r0 = strstr(base, ", replication 0");
        if (r0)
            *r0 = '\0';
        snprintf(note, sizeof(note), ", replication %zu (0 has no pools)", rep);
    }
    snprintf(c->subtitle, sizeof(c->subtitle),
             "%.400s%s; per node pool, %% of each pool's GPU-time", base, note);
    rc = draw_script(c, "busy", "pools", path, extra, 1000, 600);
    memcpy(c->subtitle, keep, sizeof(keep));
    return rc;
}

/* The charts of one file (replication 0), from the reader results_open made of it. */
static int plot_file(struct chart_ctx *c, const struct results *r)
{
    char cname[128], cpol[64];
    gp_clean(cname, sizeof(cname), r->scenario_name ? r->scenario_name : "-", false);
    gp_clean(cpol, sizeof(cpol), r->policy ? r->policy : "-", false);
    snprintf(c->subtitle, sizeof(c->subtitle), "scenario %s, policy %s%s", cname, cpol,
             r->replicated ? ", replication 0" : "");
    c->file = r->path;
    c->of = r->path;
    c->r = r;
    c->rep = 0;
    c->rrc = 0;
    double end_s = isfinite(r->sim_time_reached_s) ? r->sim_time_reached_s : r->duration_s;
    int rc = chart_util(c);
    if (!rc)
        rc = chart_queue(c);
    if (!rc)
        rc = chart_quota(c, r);
    if (!rc)
        rc = chart_flavors(c, r);
    if (!rc)
        rc = chart_jobs(c, end_s);
    if (!rc)
        rc = chart_pools(c, r);
    return rc;
}

/* Text from a results file as a double-quoted field of a .dat file. */
static void dat_field(char *buf, size_t n, const char *s)
{
    gp_clean(buf, n, s, false);
    for (char *p = buf; *p; p++)
        if (*p == '"' || *p == '\\')
            *p = '_';
}

/* The runs of a multi-file chart: open results and a label each (policy; + file stem if shared). */
struct run_set {
    const struct results *r;
    char (*label)[96]; /* words for gnuplot: blanks as '_' */
    size_t n;
};

static void runs_release(struct run_set *s)
{
    free(s->label);
    memset(s, 0, sizeof(*s));
}

/* The labels of runs r[0..n) (opened by the caller, once), read from paths[0..n). */
static int runs_label(struct chart_ctx *c, struct run_set *s, const struct results *r,
                      const char *const *paths, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->r = r;
    s->n = n;
    s->label = calloc(n ? n : 1, sizeof(*s->label));
    if (!s->label) {
        runs_release(s);
        snprintf(c->err, c->errlen, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const char *pol = s->r[i].policy ? s->r[i].policy : "-";
        bool shared = false;
        for (size_t k = 0; k < n; k++)
            shared |= k != i && s->r[k].policy && !strcmp(s->r[k].policy, pol);
        char stem[256], txt[300];
        stem_of(paths[i], stem, sizeof(stem));
        if (shared)
            snprintf(txt, sizeof(txt), "%s (%s)", pol, stem);
        else
            snprintf(txt, sizeof(txt), "%s", pol);
        gp_clean(s->label[i], sizeof(s->label[i]), txt, true);
        for (char *p = s->label[i]; *p; p++)
            if (*p == '\'' || *p == '"')
                *p = '_';
    }
    return 0;
}

/* "3 runs: tidal, dedicated, kueue" (or the one run's scenario and policy) as the subtitle. */
static void runs_subtitle(struct chart_ctx *c, const struct run_set *s, const char *what)
{
    if (s->n == 1) {
        char cname[128], cpol[64];
        gp_clean(cname, sizeof(cname), s->r[0].scenario_name ? s->r[0].scenario_name : "-", false);
        gp_clean(cpol, sizeof(cpol), s->r[0].policy ? s->r[0].policy : "-", false);
        snprintf(c->subtitle, sizeof(c->subtitle), "scenario %s, policy %s%s%s", cname, cpol,
                 what ? "; " : "", what ? what : "");
        return;
    }
    int k = snprintf(c->subtitle, sizeof(c->subtitle), "%zu runs:", s->n);
    for (size_t i = 0; i < s->n && k > 0 && (size_t)k < sizeof(c->subtitle); i++)
        k += snprintf(c->subtitle + k, sizeof(c->subtitle) - (size_t)k, "%s %s", i ? "," : "",
                      s->label[i]);
    if (what && k > 0 && (size_t)k < sizeof(c->subtitle))
        snprintf(c->subtitle + k, sizeof(c->subtitle) - (size_t)k, "; %s", what);
}

/* What the whiskers of a run set's bars are. */
static const char *whisker_note(const struct run_set *s)
{
    size_t rep = 0;
    for (size_t i = 0; i < s->n; i++)
        rep += s->r[i].replicated;
    return rep == s->n ? "whiskers: 95% CI over replications"
           : rep == 0  ? "single runs: no confidence intervals"
                       : "whiskers: 95% CI over replications (none for single runs)";
}

/*
 * A /timeseries column averaged over the replications, interval by interval
 * (replications share the interval grid): *t and *v malloc'd, *n rows.
 */
static int mean_series(struct chart_ctx *c, const struct results *r, const char *sub,
                       const char *col, double **t, double **v, size_t *n)
{
    *t = *v = NULL;
    *n = 0;
    c->r = r;
    c->rrc = 0;
    c->file = r->path;
    char g[600];
    if (strcmp(sub, "timeseries"))
        snprintf(g, sizeof(g), "%s/timeseries", sub);
    else
        snprintf(g, sizeof(g), "%s", sub);
    int rc = 0;
    size_t used = 0;
    for (size_t i = 0; i < r->reps && !rc; i++) {
        c->rep = i;
        size_t m = 0, mt = 0;
        double *x = read_col(c, g, col, &m);
        double *tt = !*t ? read_col(c, g, "time_s", &mt) : NULL;
        if (c->rrc) {
            rc = refused(c);
        } else if (x && !*t && tt && mt == m) {
            *t = tt;
            *v = x;
            *n = m;
            used = 1;
            x = tt = NULL;
        } else if (x && *v && m == *n) {
            for (size_t k = 0; k < m; k++)
                (*v)[k] += x[k];
            used++;
        }
        free(x);
        free(tt);
    }
    c->rep = 0;
    for (size_t k = 0; *v && k < *n; k++)
        (*v)[k] /= (double)used;
    if (rc) {
        free(*t);
        free(*v);
        *t = *v = NULL;
        *n = 0;
    }
    return rc;
}

/*
 * Utilisation over time, every run on one chart: GPU-time busy (solid) and
 * allocated (dashed) per interval, averaged over a file's replications.
 */
static int chart_busy(struct chart_ctx *c, const struct run_set *s)
{
    char path[PLOT_PATH_MAX], list[2048] = "";
    FILE *f = dat_open(c, path, sizeof(path), "busy");
    if (!f)
        return -EIO;
    int rc = 0;
    size_t drawn = 0, npts = SIZE_MAX;
    double maxh = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        double *t, *b, *t2, *a;
        size_t n, n2;
        rc = mean_series(c, &s->r[i], "timeseries", "util_busy", &t, &b, &n);
        if (!rc)
            rc = mean_series(c, &s->r[i], "timeseries", "util_allocated", &t2, &a, &n2);
        else
            t2 = a = NULL;
        if (!rc && t && n) {
            fprintf(f, "# run %zu (%s): time_h busy%% allocated%%\n", i, s->label[i]);
            for (size_t k = 0; k < n; k++) {
                fprintf(f, "%.4f %.4f %.4f\n", t[k] / 3600, b[k] * 100,
                        a && n2 == n ? a[k] * 100 : NAN);
                maxh = fmax(maxh, t[k] / 3600);
            }
            fprintf(f, "\n\n");
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", drawn ? " " : "",
                     s->label[i]);
            drawn++;
            npts = n < npts ? n : npts;
        }
        free(t);
        free(b);
        free(t2);
        free(a);
    }
    fclose(f);
    if (rc || drawn != s->n || drawn == 0)
        return rc;
    runs_subtitle(c, s, "mean of each file's replications");
    char extra[2300];
    snprintf(extra, sizeof(extra), "runs='%s'; maxh=%.6f; npts=%zu", list, maxh + PLOT_EDGE_H,
             npts);
    return draw(c, "busy", path, extra);
}

/*
 * Every run's services on one chart: p99 per interval (log scale; replication
 * 0) with each service's SLO target, and the latency tail from the run's
 * histogram (share of requests slower than x, log-log). Series: run x service.
 */
static int chart_latency(struct chart_ctx *c, const struct run_set *s)
{
    char list[4096] = "", slos[2048] = "", pp[PLOT_PATH_MAX], cp[PLOT_PATH_MAX];
    FILE *fp = dat_open(c, pp, sizeof(pp), "p99");
    FILE *fc = fp ? dat_open(c, cp, sizeof(cp), "cdf") : NULL;
    if (!fp || !fc) {
        if (fp)
            fclose(fp);
        return -EIO;
    }
    size_t series = 0, nslo = 0, npts = SIZE_MAX;
    double slo_seen[64];
    int rc = 0;
    double maxh = 0;
    struct span py = {NAN, NAN}, cx = {NAN, NAN}; /* p99 and SLOs; latencies of the tail */
    for (size_t i = 0; i < s->n && !rc; i++) {
        c->file = s->r[i].path;
        c->r = &s->r[i];
        c->rep = 0;
        c->rrc = 0;
        struct svc_list l = {.n = 0};
        service_names(&s->r[i], &l);
        for (size_t k = 0; k < l.n && !rc; k++) {
            double slo = svc_attr(&s->r[i], l.names[k], "slo_ms");
            char ts[300], h[300];
            snprintf(ts, sizeof(ts), "services/%s/timeseries", l.names[k]);
            snprintf(h, sizeof(h), "services/%s/histogram", l.names[k]);
            size_t n = 0, m = 0, nc = 0, nh = 0;
            double *t = read_col(c, ts, "time_s", &n);
            double *p = read_col(c, ts, "p99_ms", &m);
            double *cnt = c->rrc ? NULL : read_col(c, h, "count", &nc);
            double *hi = c->rrc ? NULL : read_col(c, h, "hi_us", &nh);
            if (c->rrc) {
                rc = refused(c);
            } else if (t && p && m == n && cnt && hi && nc == nh) {
                char svc[128], name[260];
                gp_clean(svc, sizeof(svc), l.names[k], true);
                for (char *q = svc; *q; q++)
                    if (*q == '\'' || *q == '"')
                        *q = '_';
                if (s->n > 1)
                    snprintf(name, sizeof(name), "%s·%s", s->label[i], svc);
                else
                    snprintf(name, sizeof(name), "%s", svc);
                fprintf(fp, "# series %zu (%s): time_h p99_ms (NaN: no request served)\n", series,
                        name);
                for (size_t q = 0; q < n; q++) {
                    fprintf(fp, "%.4f %.6g\n", t[q] / 3600, p[q] > 0 ? p[q] : NAN);
                    maxh = fmax(maxh, t[q] / 3600);
                    span_add(&py, p[q]);
                }
                npts = n < npts ? n : npts;
                span_add(&py, slo);
                span_add(&cx, slo);
                fprintf(fp, "\n\n");
                double tot = 0, cum = 0;
                for (size_t q = 0; q < nc; q++)
                    tot += cnt[q];
                fprintf(fc, "# series %zu (%s): latency_ms share_slower (1 - CDF)\n", series, name);
                for (size_t q = 0; q < nc && tot > 0; q++) {
                    if (cnt[q] == 0)
                        continue;
                    cum += cnt[q];
                    double tail = 1 - cum / tot;
                    fprintf(fc, "%.6g %.8g\n", hi[q] / 1e3, tail > 0 ? tail : NAN);
                    if (tail > 0)
                        span_add(&cx, hi[q] / 1e3);
                }
                if (tot <= 0)
                    fprintf(fc, "NaN NaN\n");
                fprintf(fc, "\n\n");
                size_t len = strlen(list);
                snprintf(list + len, sizeof(list) - len, "%s%s", series ? " " : "", name);
                /* One dashed SLO line per distinct target: equal targets would overlap. */
                bool seen = false;
                for (size_t q = 0; q < nslo && !seen; q++)
                    seen = slo_seen[q] == slo;
                if (!seen && isfinite(slo) && nslo < 64)
                    slo_seen[nslo++] = slo;
                len = strlen(slos);
                snprintf(slos + len, sizeof(slos) - len, "%s%g", series ? " " : "",
                         !seen && isfinite(slo) ? slo : -1);
                series++;
            }
            free(t);
            free(p);
            free(cnt);
            free(hi);
        }
    }
    fclose(fp);
    fclose(fc);
    if (rc || series == 0)
        return rc;
    runs_subtitle(c, s, s->n == 1 && s->r[0].replicated ? "replication 0" : NULL);
    char extra[6600], b[4][32];
    snprintf(extra, sizeof(extra),
             "series='%s'; slos='%s'; maxh=%.6f; npts=%zu; ylo=%s; yhi=%s; xlo=%s; xhi=%s", list,
             slos, maxh + PLOT_EDGE_H, npts, gnum(b[0], 32, py.lo), gnum(b[1], 32, py.hi),
             gnum(b[2], 32, cx.lo), gnum(b[3], 32, cx.hi));
    rc = draw(c, "p99", pp, extra);
    if (!rc) {
        runs_subtitle(c, s, "whole run, from the latency histogram");
        rc = draw(c, "cdf", cp, extra);
    }
    return rc;
}

/*
 * LLM services (those with an llm_timeseries) of every run: TTFT and TPOT
 * p50/p99 per interval against their targets, and KV-cache occupancy
 * (llm.gp). No chart when no run has an LLM service.
 */
static int chart_llm(struct chart_ctx *c, const struct run_set *s)
{
    static const char *const cols[] = {"ttft_p50_ms", "ttft_p99_ms",  "tpot_p50_ms",
                                       "tpot_p99_ms", "kv_occupancy", "tokens_per_s"};
    char list[4096] = "", ts_slos[2048] = "", tp_slos[2048] = "", pp[PLOT_PATH_MAX];
    FILE *fp = dat_open(c, pp, sizeof(pp), "llm");
    if (!fp)
        return -EIO;
    size_t series = 0, npts = SIZE_MAX;
    int rc = 0;
    double maxh = 0;
    struct span ty = {NAN, NAN}, py = {NAN, NAN}; /* TTFT and TPOT with their targets */
    for (size_t i = 0; i < s->n && !rc; i++) {
        c->file = s->r[i].path;
        c->r = &s->r[i];
        c->rep = 0;
        c->rrc = 0;
        struct svc_list l = {.n = 0};
        service_names(&s->r[i], &l);
        for (size_t k = 0; k < l.n && !rc; k++) {
            char ts[300];
            snprintf(ts, sizeof(ts), "services/%s/llm_timeseries", l.names[k]);
            size_t n = 0, m[6] = {0};
            double *t = read_col(c, ts, "time_s", &n), *v[6] = {NULL};
            if (!t && !c->rrc) /* no llm_timeseries: not an LLM service */
                continue;
            double tslo = svc_attr(&s->r[i], l.names[k], "ttft_slo_ms");
            double pslo = svc_attr(&s->r[i], l.names[k], "tpot_slo_ms");
            bool ok = t != NULL;
            for (size_t q = 0; q < 6 && t; q++) {
                v[q] = read_col(c, ts, cols[q], &m[q]);
                ok = ok && v[q] && m[q] == n;
            }
            if (c->rrc) {
                rc = refused(c);
            } else if (ok) {
                char svc[128], name[260];
                gp_clean(svc, sizeof(svc), l.names[k], true);
                for (char *q = svc; *q; q++)
                    if (*q == '\'' || *q == '"')
                        *q = '_';
                if (s->n > 1)
                    snprintf(name, sizeof(name), "%s·%s", s->label[i], svc);
                else
                    snprintf(name, sizeof(name), "%s", svc);
                fprintf(fp,
                        "# series %zu (%s): time_h ttft_p50_ms ttft_p99_ms tpot_p50_ms "
                        "tpot_p99_ms kv_pct tokens_s\n",
                        series, name);
                for (size_t q = 0; q < n; q++) {
                    fprintf(fp, "%.4f %.6g %.6g %.6g %.6g %.6g %.6g\n", t[q] / 3600,
                            v[0][q] > 0 ? v[0][q] : NAN, v[1][q] > 0 ? v[1][q] : NAN,
                            v[2][q] > 0 ? v[2][q] : NAN, v[3][q] > 0 ? v[3][q] : NAN, v[4][q] * 100,
                            v[5][q]);
                    maxh = fmax(maxh, t[q] / 3600);
                    span_add(&ty, v[0][q]);
                    span_add(&ty, v[1][q]);
                    span_add(&py, v[2][q]);
                    span_add(&py, v[3][q]);
                }
                npts = n < npts ? n : npts;
                span_add(&ty, tslo);
                span_add(&py, pslo);
                fprintf(fp, "\n\n");
                size_t len = strlen(list);
                snprintf(list + len, sizeof(list) - len, "%s%s", series ? " " : "", name);
                len = strlen(ts_slos);
                snprintf(ts_slos + len, sizeof(ts_slos) - len, "%s%g", series ? " " : "",
                         isfinite(tslo) ? tslo : -1);
                len = strlen(tp_slos);
                snprintf(tp_slos + len, sizeof(tp_slos) - len, "%s%g", series ? " " : "",
                         isfinite(pslo) ? pslo : -1);
                series++;
            }
            free(t);
            for (size_t q = 0; q < 6; q++)
                free(v[q]);
        }
    }
    fclose(fp);
    if (rc || series == 0)
        return rc;
    runs_subtitle(c, s, s->n == 1 && s->r[0].replicated ? "replication 0" : NULL);
    char extra[8800], b[4][32];
    snprintf(extra, sizeof(extra),
             "series='%s'; ttft_slos='%s'; tpot_slos='%s'; maxh=%.6f; npts=%zu; tlo=%s; thi=%s; "
             "plo=%s; phi=%s",
             list, ts_slos, tp_slos, maxh + PLOT_EDGE_H, npts, gnum(b[0], 32, ty.lo),
             gnum(b[1], 32, ty.hi), gnum(b[2], 32, py.lo), gnum(b[3], 32, py.hi));
    return draw_sized(c, "llm", pp, extra, 900, 900);
}

/*
 * Per-day bars: each run's GPU-time busy per simulated day (mean of the
 * day's intervals), the mean over replications with its 95 % interval as a
 * whisker (none for a single run).
 */
static int chart_daily(struct chart_ctx *c, const struct run_set *s)
{
    enum { MAXDAYS = 62 };
    double(*v)[MAXDAYS][64] = calloc(s->n, sizeof(*v)); /* run, day, replication */
    size_t *ndays = calloc(s->n, sizeof(*ndays));
    if (!v || !ndays) {
        free(v);
        free(ndays);
        return -ENOMEM;
    }
    int rc = 0;
    size_t days = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        const struct results *r = &s->r[i];
        c->file = r->path;
        c->r = r;
        c->rrc = 0;
        for (size_t rep = 0; rep < r->reps && rep < 64 && !rc; rep++) {
            c->rep = rep;
            size_t n = 0, m = 0;
            double *t = read_col(c, "timeseries", "time_s", &n);
            double *b = read_col(c, "timeseries", "util_busy", &m);
            if (c->rrc)
                rc = refused(c);
            double sum[MAXDAYS] = {0}, cnt[MAXDAYS] = {0};
            double dt = n > 1 ? t[1] - t[0] : (n ? t[0] : 1);
            for (size_t k = 0; !rc && t && b && m == n && k < n; k++) {
                double st = t[k] - dt * 0.5;
                if (!isfinite(st) || st < 0 || !isfinite(b[k]))
                    continue;
                size_t d = (size_t)(st / 86400);
                if (d < MAXDAYS) {
                    sum[d] += b[k];
                    cnt[d] += 1;
                }
            }
            for (size_t d = 0; d < MAXDAYS; d++) {
                v[i][d][rep] = cnt[d] > 0 ? sum[d] / cnt[d] * 100 : NAN;
                if (cnt[d] > 0 && d + 1 > ndays[i])
                    ndays[i] = d + 1;
            }
            free(t);
            free(b);
        }
        c->rep = 0;
        days = ndays[i] > days ? ndays[i] : days;
    }
    char path[PLOT_PATH_MAX], list[2048] = "";
    FILE *f = rc ? NULL : dat_open(c, path, sizeof(path), "daily");
    if (!rc && !f)
        rc = -EIO;
    if (f) {
        fprintf(f, "# day then per run: busy%% ci95  (ci 0 for a single run)\n");
        for (size_t d = 0; d < days; d++) {
            fprintf(f, "\"day %zu\"", d + 1);
            for (size_t i = 0; i < s->n; i++) {
                struct stats_summary sm;
                size_t reps = s->r[i].reps < 64 ? s->r[i].reps : 64;
                stats_summarize(v[i][d], reps, &sm);
                fprintf(f, " %.6g %.6g", sm.mean, sm.n >= 2 && isfinite(sm.ci95) ? sm.ci95 : 0);
            }
            fputc('\n', f);
        }
        fclose(f);
        for (size_t i = 0; i < s->n; i++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? " " : "",
                     s->label[i]);
    }
    free(v);
    free(ndays);
    if (rc || days == 0)
        return rc;
    runs_subtitle(c, s, whisker_note(s));
    char extra[2300];
    snprintf(extra, sizeof(extra), "runs='%s'; ndays=%zu", list, days);
    return draw(c, "daily", path, extra);
}

/* A /summary figure of every replication: mean and 95 % half-width (0 when n < 2). */
static void fig(const struct results *r, const char *key, double scale, double per_day,
                double *mean, double *ci)
{
    const struct results_metric *m = results_table_find(&r->headline, key);
    *mean = NAN;
    *ci = 0;
    if (!m || !m->s.n)
        return;
    double *x = calloc(r->reps ? r->reps : 1, sizeof(*x));
    if (!x)
        return;
    for (size_t i = 0; i < r->reps; i++)
        x[i] = m->values[i] * scale / (per_day > 0 ? per_day : 1);
    struct stats_summary s;
    stats_summarize(x, r->reps, &s);
    free(x);
    *mean = s.mean;
    *ci = s.n >= 2 && isfinite(s.ci95) ? s.ci95 : 0;
}

/* A cost figure of the file, if it has one: a /summary key naming cost, or a currency unit. */
static const struct results_metric *cost_metric(const struct results *r)
{
    for (size_t i = 0; i < r->headline.n; i++) {
        const struct results_metric *m = &r->headline.m[i];
        const char *u = m->unit ? m->unit : "";
        if (m->s.n &&
            (strstr(m->key, "cost") || strstr(u, "$") || strstr(u, "USD") || strstr(u, "EUR")))
            return m;
    }
    return NULL;
}

/*
 * Policy comparison as small multiples, one panel per question with its own
 * axis and unit: utilisation (allocated, busy, useful), SLO (arrivals within
 * SLO, worst service), p99 of the worst service, training work per day,
 * checkpoint overhead, and cost (a cost figure of the file; energy when the
 * file has none). Bars are means, whiskers 95 % intervals over replications.
 */
static int plot_compare(struct chart_ctx *c, const struct run_set *s)
{
    char path[PLOT_PATH_MAX];
    c->stem[0] = 0;
    FILE *f = dat_open(c, path, sizeof(path), "compare");
    if (!f)
        return -EIO;
    const struct results_metric *cost = s->n ? cost_metric(&s->r[0]) : NULL;
    char costkey[128] = "energy_kwh", costlabel[200] = "energy (kWh)";
    if (cost) {
        snprintf(costkey, sizeof(costkey), "%s", cost->key);
        char lab[160];
        gp_clean(lab, sizeof(lab), results_label(cost), false);
        for (char *p = lab; *p; p++)
            if (*p == '\'' || *p == '"')
                *p = '_';
        snprintf(costlabel, sizeof(costlabel), "%s (%s)", lab, cost->unit ? cost->unit : "");
    }
    fprintf(f,
            "# label | alloc%% ci | busy%% ci | useful%% ci | within_slo%% ci | worst svc "
            "within_slo%% ci | p99 worst ms ci | training GPU-h/day ci | ckpt overhead%% ci | "
            "%s ci\n",
            costkey);
    double top[5] = {0, 0, 0, 0, 0};
    bool have[6] = {false}; /* a panel with a figure of some run (utilisation, SLO, ..., cost) */
    for (size_t i = 0; i < s->n; i++) {
        const struct results *r = &s->r[i];
        char lab[100];
        dat_field(lab, sizeof(lab), s->label[i]);
        fprintf(f, "\"%s\"", lab);
        double m, ci;
        const char *keys[] = {"util_allocated",
                              "util_busy",
                              "util_useful",
                              "slo_share",
                              "slo_share_worst_service",
                              "p99_ms_worst_service",
                              "training_gpu_hours",
                              "checkpoint_overhead",
                              costkey};
        const double scale[] = {100, 100, 100, 100, 100, 1, 1, 100, 1};
        for (size_t k = 0; k < 9; k++) {
            double days = k == 6 && r->duration_s > 0 ? r->duration_s / 86400 : 0;
            fig(r, keys[k], scale[k], days, &m, &ci);
            fprintf(f, " %.6g %.6g", m, ci);
            /* Panel tops: SLO misses (100 - within), p99, training, overhead, cost. */
            double v = (k == 3 || k == 4 ? 100 - m : m) + ci;
            int panel = k == 3 || k == 4 ? 0 : k >= 5 ? (int)k - 4 : -1;
            if (panel >= 0 && isfinite(v) && v > top[panel])
                top[panel] = v;
            have[panel + 1] |= isfinite(m);
        }
        fputc('\n', f);
    }
    fclose(f);
    runs_subtitle(c, s, whisker_note(s));
    char extra[400];
    snprintf(extra, sizeof(extra),
             "costlabel='%s'; nruns=%zu; top1=%g; top2=%g; top3=%g; top4=%g; top5=%g; "
             "none='%d %d %d %d %d %d'",
             costlabel, s->n, top[0], top[1], top[2], top[3], top[4], !have[0], !have[1], !have[2],
             !have[3], !have[4], !have[5]);
    return draw_sized(c, "compare", path, extra, 1200, 760);
}

/* ---- a sweep or plan index: metric against an axis, one curve per series ------------------ */

/* The x axis of an index: a plan's size axis (the last); else cluster.nodes when it varies,
 * else the last numeric axis with more than one value. SIZE_MAX: none. */
static size_t index_x_axis(const struct sweepidx_table *t)
{
    if (t->size)
        return t->naxes - 1;
    size_t best = SIZE_MAX;
    for (size_t a = 0; a < t->naxes; a++) {
        bool numeric = true, varies = false;
        for (size_t p = 0; p < t->np && numeric; p++) {
            char *end;
            const char *v = t->vals[p * t->naxes + a];
            strtod(v, &end);
            numeric = end != v && !*end;
            varies |= strcmp(v, t->vals[a]) != 0;
        }
        if (!numeric || !varies)
            continue;
        if (!strcmp(t->axes[a], "cluster.nodes"))
            return a;
        best = a;
    }
    return best;
}

/* Series: the points' values of the other axes that vary (a plan: its choice). */
struct series {
    size_t n;
    size_t *of;         /* [np] series of point p */
    char (*label)[160]; /* gnuplot words */
    size_t *first;      /* a point of the series */
};

static int index_series(const struct sweepidx_table *t, size_t xa, struct series *s)
{
    s->n = 0;
    s->of = calloc(t->np, sizeof(size_t));
    s->label = calloc(t->np ? t->np : 1, sizeof(*s->label));
    s->first = calloc(t->np ? t->np : 1, sizeof(size_t));
    if (!s->of || !s->label || !s->first)
        return -ENOMEM;
    bool *varies = calloc(t->naxes, sizeof(bool));
    if (!varies)
        return -ENOMEM;
    for (size_t a = 0; a < t->naxes; a++)
        for (size_t p = 1; p < t->np; p++)
            varies[a] |= strcmp(t->vals[p * t->naxes + a], t->vals[a]) != 0;
    for (size_t p = 0; p < t->np; p++) {
        size_t k = 0;
        for (; k < s->n; k++) {
            size_t q = s->first[k];
            bool same = true;
            for (size_t a = 0; a < t->naxes && same; a++)
                if (a != xa && varies[a])
                    same = !strcmp(t->vals[p * t->naxes + a], t->vals[q * t->naxes + a]);
            if (same)
                break;
        }
        if (k == s->n) {
            s->first[k] = p;
            char txt[400] = "";
            size_t at = 0;
            for (size_t a = 0; a < t->naxes; a++)
                if (a != xa && varies[a]) {
                    /* the key's last word ("policy" for policy.name) */
                    char key[160];
                    snprintf(key, sizeof(key), "%s", t->axes[a]);
                    char *dot = strrchr(key, '.');
                    if (dot && !strcmp(dot + 1, "name")) {
                        *dot = 0;
                        dot = strrchr(key, '.');
                    }
                    int w = snprintf(txt + at, sizeof(txt) - at, "%s%s=%s", at ? "," : "",
                                     dot ? dot + 1 : key, t->vals[p * t->naxes + a]);
                    if (w > 0 && (size_t)w < sizeof(txt) - at)
                        at += (size_t)w;
                }
            gp_clean(s->label[k], sizeof(s->label[k]), at ? txt : "all", true);
            for (char *c = s->label[k]; *c; c++)
                if (*c == '\'' || *c == '"')
                    *c = '_';
            s->n++;
        }
        s->of[p] = k;
    }
    free(varies);
    return 0;
}

static void series_release(struct series *s)
{
    free(s->of);
    free(s->label);
    free(s->first);
}

static int cmp_x(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/*
 * One chart of an index: metric m (its mean ± 95 % half-width, × scale) against the x axis,
 * one curve per series with its interval as a band; a plan's answers marked (when `mark`).
 */
static int index_chart(struct chart_ctx *c, const struct sweepidx_table *t, size_t xa,
                       const struct series *s, const char *chart, const double *mean,
                       const double *ci, double scale, const char *title, const char *ylabel,
                       const double *answer, size_t nanswer)
{
    char path[PLOT_PATH_MAX], apath[PLOT_PATH_MAX];
    FILE *f = dat_open(c, path, sizeof(path), chart);
    if (!f)
        return -EIO;
    double *row = malloc(t->np * 4 * sizeof(double));
    if (!row) {
        fclose(f);
        return -ENOMEM;
    }
    fprintf(f, "# one block per series: x mean low high (95%% interval)\n");
    bool any = false;
    for (size_t k = 0; k < s->n; k++) {
        size_t n = 0;
        for (size_t p = 0; p < t->np; p++) {
            if (s->of[p] != k || t->done[p] != 1 || !isfinite(mean[p]))
                continue;
            double x = strtod(t->vals[p * t->naxes + xa], NULL);
            double h = ci && isfinite(ci[p]) ? ci[p] : 0;
            row[4 * n] = x;
            row[4 * n + 1] = mean[p] * scale;
            row[4 * n + 2] = (mean[p] - h) * scale;
            row[4 * n + 3] = (mean[p] + h) * scale;
            n++;
        }
        qsort(row, n, 4 * sizeof(double), cmp_x);
        if (n == 0) /* an empty block keeps the series numbering: one NaN row */
            fprintf(f, "NaN NaN NaN NaN\n");
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.10g %.10g %.10g %.10g\n", row[4 * i], row[4 * i + 1], row[4 * i + 2],
                    row[4 * i + 3]);
        fputs("\n\n", f);
        any |= n > 0;
    }
    fclose(f);
    /* The plan's answer of each series (its choice), on its curve. */
    bool marks = false;
    if (answer && nanswer) {
        FILE *af = dat_open(c, apath, sizeof(apath), "answers");
        if (!af) {
            free(row);
            return -EIO;
        }
        fprintf(af, "# x y label: each choice's smallest passing size\n");
        for (size_t k = 0; k < s->n; k++) {
            size_t p = s->first[k];
            size_t ch = t->choice ? (size_t)t->choice[p] : k;
            if (ch >= nanswer || !isfinite(answer[ch]))
                continue;
            for (size_t q = 0; q < t->np; q++)
                if (s->of[q] == k && t->done[q] == 1 && isfinite(mean[q]) &&
                    strtod(t->vals[q * t->naxes + xa], NULL) == answer[ch]) {
                    fprintf(af, "%.10g %.10g \"answer %s\"\n", answer[ch], mean[q] * scale,
                            t->vals[q * t->naxes + xa]);
                    marks = true;
                }
        }
        fclose(af);
    }
    free(row);
    if (!any)
        return 0;
    char xl[300], lab[200], list[4096] = "", extra[5200];
    gp_clean(xl, sizeof(xl), t->axes[xa], false);
    for (char *p = xl; *p; p++)
        if (*p == '\'')
            *p = '_';
    size_t at = 0;
    for (size_t k = 0; k < s->n && at + 200 < sizeof(list); k++)
        at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s", k ? " " : "", s->label[k]);
    snprintf(lab, sizeof(lab), "%s", ylabel);
    snprintf(extra, sizeof(extra),
             "series='%s'; xlabel='%s'; ylabel='%s'; ctitle='%s'; answers='%s'", list, xl, lab,
             title, marks ? apath : "");
    return draw_script(c, "index", chart, path, extra, 1000, 600);
}

static int plot_index(struct chart_ctx *c, const char *path, const struct results_vet *v)
{
    struct sweepidx_table t;
    int rc = sweepidx_table_load(&t, path, v, c->err, c->errlen);
    if (rc) {
        sweepidx_table_release(&t);
        return rc;
    }
    size_t xa = index_x_axis(&t);
    if (xa == SIZE_MAX) {
        snprintf(c->err, c->errlen,
                 "%s: no numeric axis with more than one value to draw the metrics against", path);
        sweepidx_table_release(&t);
        return -EINVAL;
    }
    struct series s = {0};
    rc = index_series(&t, xa, &s);
    double answers[256];
    size_t nans = 0;
    bool plan = t.size != NULL;
    if (!rc && plan && planidx_answers(path, v, answers, 256, &nans))
        nans = 0;
    char src[200];
    gp_clean(src, sizeof(src), t.sweep_path ? t.sweep_path : "-", false);
    for (char *p = src; *p; p++)
        if (*p == '\'')
            *p = '_';
    snprintf(c->subtitle, sizeof(c->subtitle), "%s %s: mean and 95%% interval over seeds%s",
             plan ? "plan" : "sweep", src, plan ? "; circles: each choice's answer" : "");
    struct {
        const char *key, *chart, *title, *ylabel;
        double scale;
    } const charts[] = {
        {"slo_share", "index_slo", "SLO compliance", "requests within their SLO (%)", 100},
        {"util_busy", "index_busy", "GPU utilisation, busy (SM active)",
         "GPU-time busy (% of the cluster)", 100},
        {"p99_ms_worst_service", "index_p99", "p99 latency, worst service", "p99 latency (ms)", 1},
        {"training_gpu_hours", "index_training", "Training work done", "training work (GPU-h)", 1},
        {"cost_total", "index_cost", "Cost of the cluster over the run",
         "cost over the simulated run (its currency)", 1},
    };
    for (size_t k = 0; !rc && k < sizeof(charts) / sizeof(charts[0]); k++) {
        size_t m = 0;
        while (sweepidx_metrics[m] && strcmp(sweepidx_metrics[m], charts[k].key))
            m++;
        if (!sweepidx_metrics[m] || !t.mean[m])
            continue;
        bool mark = plan && !strcmp(charts[k].key, "cost_total");
        rc = index_chart(c, &t, xa, &s, charts[k].chart, t.mean[m], t.ci[m], charts[k].scale,
                         charts[k].title, charts[k].ylabel, mark ? answers : NULL, mark ? nans : 0);
    }
    series_release(&s);
    sweepidx_table_release(&t);
    return rc;
}

/* The absolute form of an existing folder into buf, checked plain; 0 or -EINVAL (err set). */
static int plain_dir(const char *dir, char *buf, size_t n, const char *what, char *err,
                     size_t errlen)
{
    char *abs = realpath(dir, NULL);
    if (!abs) {
        snprintf(err, errlen, "%s: cannot resolve the %s (%s)", dir, what, strerror(errno));
        return -EIO;
    }
    int k = snprintf(buf, n, "%s", abs);
    bool fits = k >= 0 && (size_t)k + 64 < n;
    free(abs);
    if (!fits) {
        snprintf(err, errlen, "%s: %s path too long for gnuplot (limit %zu bytes)", dir, what,
                 n - 64);
        return -ENAMETOOLONG;
    }
    if (!gp_path_safe(buf)) {
        snprintf(err, errlen,
                 "%s: the %s's path holds a quote, backquote or control character, which "
                 "gnuplot cannot be handed safely; choose another",
                 dir, what);
        return -EINVAL;
    }
    return 0;
}

/* The context of a drawing: the output and scripts folders made and checked. NULL: see *rc. */
static struct chart_ctx *plot_setup(const struct plot_opts *o, char *err, size_t errlen, int *rc)
{
    struct chart_ctx *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        *rc = -ENOMEM;
        return NULL;
    }
    c->o = o;
    c->err = err;
    c->errlen = errlen;
    h5io_quiet();
    *rc = 0;
    /* Refuse an unsafe name before creating anything; then resolve it (links too). */
    char probe[PLOT_PATH_MAX];
    snprintf(probe, sizeof(probe), "/%s", o->dir);
    if (!gp_path_safe(probe)) {
        snprintf(err, errlen,
                 "%s: the output folder's name holds a quote, backquote or control character, "
                 "which gnuplot cannot be handed safely; choose another",
                 o->dir);
        *rc = -EINVAL;
    } else if (mkdir(o->dir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the folder", o->dir);
        *rc = -EIO;
    }
    if (!*rc)
        *rc = plain_dir(o->dir, c->dir, sizeof(c->dir), "output folder", err, errlen);
    if (!*rc)
        *rc = plain_dir(o->scripts, c->scripts, sizeof(c->scripts), "scripts folder", err, errlen);
    if (!*rc) {
        snprintf(c->datadir, sizeof(c->datadir), "%s/data", c->dir);
        if (mkdir(c->datadir, 0777) && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create the folder", c->datadir);
            *rc = -EIO;
        }
    }
    if (*rc) {
        free(c);
        return NULL;
    }
    return c;
}

/* Every chart of rs[0..n): each file's, then the charts of all of them. */
static int plot_runs(struct chart_ctx *c, const struct results *rs, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (n > 1)
            stem_of(rs[i].path, c->stem, sizeof(c->stem));
        else
            c->stem[0] = 0;
        rc = plot_file(c, &rs[i]);
    }
    struct run_set runs = {0};
    c->stem[0] = 0;
    const char **paths = calloc(n ? n : 1, sizeof(*paths));
    for (size_t i = 0; paths && i < n; i++)
        paths[i] = rs[i].path;
    if (!rc && !paths) {
        snprintf(c->err, c->errlen, "out of memory");
        rc = -ENOMEM;
    }
    /* The charts of all files name them all (cut to the room) in their messages. */
    size_t at = 0;
    c->inputs[0] = '\0';
    for (size_t i = 0; i < n && at + 1 < sizeof(c->inputs); i++) {
        int k = snprintf(c->inputs + at, sizeof(c->inputs) - at, "%s%s", i ? ", " : "", rs[i].path);
        at += k > 0 ? (size_t)k : 0;
    }
    c->of = c->inputs;
    if (!rc)
        rc = runs_label(c, &runs, rs, paths, n);
    if (!rc)
        rc = chart_busy(c, &runs);
    if (!rc)
        rc = chart_latency(c, &runs);
    if (!rc)
        rc = chart_llm(c, &runs);
    if (!rc)
        rc = chart_daily(c, &runs);
    if (!rc)
        rc = plot_compare(c, &runs);
    runs_release(&runs);
    free(paths);
    return rc;
}

int plot_all(const struct plot_opts *o, const char *const *paths, size_t n, size_t *made, char *err,
             size_t errlen)
{
    int rc;
    *made = 0;
    struct chart_ctx *c = plot_setup(o, err, errlen, &rc);
    if (!c)
        return rc;
    /* Each file's child tells whether it is an index and, when not, reads it for plot. */
    struct results_vet *vets = calloc(n ? n : 1, sizeof(*vets));
    if (!vets) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    bool index = n >= 1 && sweepidx_is_index_vet(paths[0], RESULTS_BY_PLOT, &vets[0]);
    for (size_t i = 1; i < n && !rc; i++)
        if (index || sweepidx_is_index_vet(paths[i], RESULTS_BY_PLOT, &vets[i])) {
            snprintf(err, errlen,
                     "%s: a sweep or plan index is drawn on its own (tidesim plot INDEX.h5 -o DIR)",
                     index ? paths[0] : paths[i]);
            rc = -EINVAL;
        }
    if (index && !rc) {
        c->stem[0] = 0;
        c->of = paths[0];
        rc = plot_index(c, paths[0], &vets[0]);
        *made = c->made;
        free(c);
        for (size_t k = 0; k < n; k++)
            results_vet_release(&vets[k]);
        free(vets);
        return rc;
    }
    /* Each file opened once (results_open: read in a child process first), for every chart. */
    struct results *rs = calloc(n ? n : 1, sizeof(*rs));
    size_t opened = 0;
    if (!rs && !rc) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    for (; !rc && opened < n; opened++)
        if ((rc = results_open_vetted(&rs[opened], paths[opened], RESULTS_BY_PLOT, &vets[opened],
                                      err, errlen)) != 0)
            break;
    if (!rc)
        rc = plot_runs(c, rs, n);
    for (size_t i = 0; rs && i < opened; i++)
        results_release(&rs[i]);
    free(rs);
    for (size_t k = 0; k < n; k++)
        results_vet_release(&vets[k]);
    free(vets);
    *made = c->made;
    free(c);
    return rc;
}

int plot_results(const struct plot_opts *o, const struct results *rs, size_t n, size_t *made,
                 char *err, size_t errlen)
{
    int rc;
    *made = 0;
    struct chart_ctx *c = plot_setup(o, err, errlen, &rc);
    if (!c)
        return rc;
    rc = plot_runs(c, rs, n);
    *made = c->made;
    free(c);
    return rc;
}
