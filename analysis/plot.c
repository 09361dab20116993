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

/* Bytes of a path handed to gnuplot (folder + file name). */
#define PLOT_PATH_MAX 1024

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
    snprintf(buf, n, "%s", s);
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
        else if (word && *p == ' ')
            *p = '_';
}

/* Run gnuplot on script with variables; 0 or -EIO. */
static int run_gnuplot(const char *gnuplot, const char *script, const char *vars)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -EIO;
    if (pid == 0) {
        execlp(gnuplot, gnuplot, "-e", vars, script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -EIO;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
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
    const char *file; /* results file being drawn (for messages) */
    struct h5_rd rd;  /* its reading session */
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

static int draw(struct chart_ctx *c, const char *chart, const char *data, const char *extra)
{
    const char *ext = c->o->format == PLOT_SVG ? "svg" : "png";
    const char *term =
        c->o->format == PLOT_SVG
            ? "svg size 1000,600 dynamic enhanced font 'sans,11' background '#ffffff'"
            : "pngcairo size 1000,600 enhanced font 'sans,10'";
    char out[PLOT_PATH_MAX], script[PLOT_PATH_MAX], qd[2 * PLOT_PATH_MAX], qo[2 * PLOT_PATH_MAX],
        qs[1100], qp[2 * PLOT_PATH_MAX], vars[16384];
    int k = c->stem[0] ? snprintf(out, sizeof(out), "%s/%s_%s.%s", c->dir, c->stem, chart, ext)
                       : snprintf(out, sizeof(out), "%s/%s.%s", c->dir, chart, ext);
    if (k < 0 || (size_t)k >= sizeof(out))
        return too_long(c, c->dir);
    k = snprintf(script, sizeof(script), "%s/%s.gp", c->scripts, chart);
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
    if (run_gnuplot(c->o->gnuplot, script, vars)) {
        snprintf(c->err, c->errlen, "gnuplot failed on %s (chart %s)", script, out);
        return -EIO;
    }
    c->made++;
    return 0;
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

/* A column of the results file, or NULL (absent, or refused: c->rd.rc set). */
static double *read_col(struct chart_ctx *c, hid_t g, const char *name, size_t *n)
{
    double *v = NULL;
    *n = 0;
    if (h5_rd_f64(&c->rd, g, name, &v, n))
        return NULL;
    return v;
}

/* A refusal of the reader as this chart's error. */
static int refused(struct chart_ctx *c)
{
    snprintf(c->err, c->errlen, "%s: %s", c->file, c->rd.why);
    return c->rd.rc;
}

/* GPUs by use, averaged by time of day at the sample interval, as cumulative shares (%). */
static int chart_util(struct chart_ctx *c, hid_t root, double gpus)
{
    static const char *const uses[] = {"gpus_inference", "gpus_training",  "gpus_checkpoint",
                                       "gpus_restore",   "gpus_recompute", "gpus_reconfiguring"};
    static const char *const names[] = {"inference", "training",  "checkpoint",
                                        "restore",   "recompute", "reconfiguring"};
    hid_t g = h5_rd_group(&c->rd, root, "timeseries");
    if (g < 0)
        return c->rd.rc ? refused(c) : 0;
    size_t n = 0, m, mb = 0;
    double *t = read_col(c, g, "time_s", &n), *busy = read_col(c, g, "util_busy", &mb);
    double *col[6] = {0};
    char labels[256] = "";
    size_t ncol = 0;
    for (size_t k = 0; k < 6; k++) {
        col[ncol] = read_col(c, g, uses[k], &m);
        if (col[ncol] && m == n) {
            snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s ", names[k]);
            ncol++;
        } else {
            free(col[ncol]);
            col[ncol] = NULL;
        }
    }
    H5Gclose(g);
    int rc = 0;
    if (c->rd.rc) {
        rc = refused(c);
        goto out;
    }
    if (!t || n == 0 || ncol == 0 || !(gpus > 0))
        goto out;
    snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "idle");
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
            a[1 + k] += col[k][i] / gpus * 100;
        a[1 + ncol] += busy && mb == n ? busy[i] * 100 : NAN;
    }
    char path[PLOT_PATH_MAX];
    FILE *f = dat_open(c, path, sizeof(path), "util");
    if (!f) {
        free(acc);
        rc = -EIO;
        goto out;
    }
    fprintf(f, "# hour_of_day cumulative%% (%s) busy%%\n", labels);
    for (size_t b = 0; b < nb; b++) {
        double *a = acc + b * (ncol + 2);
        if (a[0] == 0)
            continue;
        double cum = 0;
        fprintf(f, "%.4f", ((double)b + 0.5) * bw / 3600);
        for (size_t k = 0; k < ncol; k++) {
            cum += a[1 + k] / a[0];
            fprintf(f, " %.4f", cum);
        }
        fprintf(f, " 100 %.4f\n", a[1 + ncol] / a[0]);
    }
    fclose(f);
    free(acc);
    char extra[400];
    snprintf(extra, sizeof(extra), "ncum=%zu; labels='%s'; step_h=%g", ncol + 1, labels, bw / 3600);
    rc = draw(c, "util", path, extra);
out:
    free(t);
    free(busy);
    for (size_t k = 0; k < 6; k++)
        free(col[k]);
    return rc;
}

struct svc_list {
    char names[16][128];
    size_t n;
};

static herr_t list_svc(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    struct svc_list *l = data;
    (void)g;
    (void)info;
    if (l->n < 16)
        snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", name);
    return 0;
}

/* One service's p99 series (drawn |= 1) and latency CDF (drawn |= 2) as .dat files. */
static int export_service(struct chart_ctx *c, hid_t s, size_t i, const char *label, size_t *drawn)
{
    char name[64], path[PLOT_PATH_MAX];
    double slo = NAN;
    h5_rd_attr_double(&c->rd, s, "slo_ms", &slo);
    size_t n = 0, m = 0;
    hid_t ts = h5_rd_group(&c->rd, s, "timeseries");
    double *t = ts >= 0 ? read_col(c, ts, "time_s", &n) : NULL;
    double *p = ts >= 0 ? read_col(c, ts, "p99_ms", &m) : NULL;
    if (ts >= 0)
        H5Gclose(ts);
    snprintf(name, sizeof(name), "p99_%zu", i);
    FILE *f = !c->rd.rc && t && p && m == n ? dat_open(c, path, sizeof(path), name) : NULL;
    if (f) {
        fprintf(f, "# time_h p99_ms slo_ms  (service %s)\n", label);
        for (size_t k = 0; k < n; k++)
            fprintf(f, "%.4f %.6g %.6g\n", t[k] / 3600, p[k], slo);
        fclose(f);
        *drawn |= 1;
    }
    free(t);
    free(p);
    hid_t h = c->rd.rc ? H5I_INVALID_HID : h5_rd_group(&c->rd, s, "histogram");
    double *cnt = h >= 0 ? read_col(c, h, "count", &n) : NULL;
    double *hi = h >= 0 ? read_col(c, h, "hi_us", &m) : NULL;
    if (h >= 0)
        H5Gclose(h);
    snprintf(name, sizeof(name), "cdf_%zu", i);
    f = !c->rd.rc && cnt && hi && m == n ? dat_open(c, path, sizeof(path), name) : NULL;
    if (f) {
        double tot = 0, cum = 0;
        for (size_t k = 0; k < n; k++)
            tot += cnt[k];
        fprintf(f, "# latency_ms cumulative_fraction  (service %s)\n", label);
        for (size_t k = 0; k < n && tot > 0; k++) {
            if (cnt[k] == 0)
                continue;
            cum += cnt[k];
            fprintf(f, "%.6g %.8f\n", hi[k] / 1e3, cum / tot);
        }
        fclose(f);
        *drawn |= 2;
    }
    free(cnt);
    free(hi);
    return c->rd.rc ? refused(c) : 0;
}

/* Per service: p99 over time (with SLO) and the latency CDF. */
static int chart_services(struct chart_ctx *c, hid_t root)
{
    hid_t g = h5_rd_group(&c->rd, root, "services");
    if (g < 0)
        return c->rd.rc ? refused(c) : 0;
    struct svc_list l = {.n = 0};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, list_svc, &l) < 0) {
        idx = 0;
        l.n = 0;
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, list_svc, &l);
    }
    char list[2200] = "", prefix[PLOT_PATH_MAX], path[PLOT_PATH_MAX + 8];
    int k = snprintf(prefix, sizeof(prefix), "%s/%s%s", c->datadir, c->stem, c->stem[0] ? "_" : "");
    int rc = k < 0 || (size_t)k + 8 >= sizeof(prefix) ? too_long(c, c->datadir) : 0;
    size_t drawn = 0;
    for (size_t i = 0; i < l.n && !rc; i++) {
        hid_t s = h5_rd_group(&c->rd, g, l.names[i]);
        if (s < 0) {
            rc = c->rd.rc ? refused(c) : 0;
            continue;
        }
        char label[128];
        gp_clean(label, sizeof(label), l.names[i], true);
        rc = export_service(c, s, i, label, &drawn);
        H5Gclose(s);
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? " " : "", label);
    }
    H5Gclose(g);
    char extra[4600], ql[4400];
    if (!rc && gq(ql, sizeof(ql), list))
        rc = too_long(c, "services");
    if (!rc)
        snprintf(extra, sizeof(extra), "services='%s'", ql);
    if (!rc && (drawn & 1)) {
        snprintf(path, sizeof(path), "%sp99_", prefix);
        rc = draw(c, "p99", path, extra);
    }
    if (!rc && (drawn & 2)) {
        snprintf(path, sizeof(path), "%scdf_", prefix);
        rc = draw(c, "cdf", path, extra);
    }
    return rc;
}

static int chart_queue(struct chart_ctx *c, hid_t root)
{
    hid_t g = h5_rd_group(&c->rd, root, "timeseries");
    if (g < 0)
        return c->rd.rc ? refused(c) : 0;
    size_t n = 0, m1 = 0, m2 = 0;
    double *t = read_col(c, g, "time_s", &n), *q = read_col(c, g, "jobs_queued", &m1),
           *r = read_col(c, g, "jobs_running", &m2);
    H5Gclose(g);
    int rc = c->rd.rc ? refused(c) : 0;
    char path[PLOT_PATH_MAX];
    if (!rc && t && q && r && m1 == n && m2 == n && n) {
        FILE *f = dat_open(c, path, sizeof(path), "queue");
        if (!f) {
            rc = -EIO;
        } else {
            fprintf(f, "# time_h jobs_queued jobs_running\n");
            for (size_t k = 0; k < n; k++)
                fprintf(f, "%.4f %g %g\n", t[k] / 3600, q[k], r[k]);
            fclose(f);
            rc = draw(c, "queue", path, NULL);
        }
    }
    free(t);
    free(q);
    free(r);
    return rc;
}

static int chart_jobs(struct chart_ctx *c, hid_t root, double end_s)
{
    hid_t g = h5_rd_group(&c->rd, root, "jobs");
    if (g < 0)
        return c->rd.rc ? refused(c) : 0;
    size_t n = 0, m[4] = {0};
    double *sub = read_col(c, g, "submit_s", &n), *st = read_col(c, g, "start_s", &m[0]),
           *en = read_col(c, g, "end_s", &m[1]), *state = read_col(c, g, "state", &m[2]),
           *gp = read_col(c, g, "gpus", &m[3]);
    H5Gclose(g);
    int rc = c->rd.rc ? refused(c) : 0;
    char path[PLOT_PATH_MAX];
    if (!rc && sub && st && en && state && gp && m[0] == n && m[1] == n && m[2] == n && m[3] == n &&
        n) {
        FILE *f = dat_open(c, path, sizeof(path), "jobs");
        if (!f) {
            rc = -EIO;
        } else {
            fprintf(f, "# job submit_h start_h end_h state gpus  (start/end NaN: not yet; end "
                       "drawn at the run's end)\n");
            for (size_t k = 0; k < n; k++) {
                double s = isfinite(st[k]) ? st[k] : end_s;
                double e = isfinite(en[k]) ? en[k] : (isfinite(st[k]) ? end_s : NAN);
                fprintf(f, "%zu %.5f %.5f %.5f %g %g\n", k, sub[k] / 3600, s / 3600, e / 3600,
                        state[k], gp[k]);
            }
            fclose(f);
            rc = draw(c, "jobs", path, NULL);
        }
    }
    free(sub);
    free(st);
    free(en);
    free(state);
    free(gp);
    return rc;
}

static int plot_file(struct chart_ctx *c, const char *path)
{
    struct results r;
    int rc = results_open(&r, path, c->err, c->errlen);
    if (rc)
        return rc;
    char cpath[256], cname[128], cpol[64];
    gp_clean(cpath, sizeof(cpath), path, false);
    gp_clean(cname, sizeof(cname), r.scenario_name ? r.scenario_name : "-", false);
    gp_clean(cpol, sizeof(cpol), r.policy ? r.policy : "-", false);
    snprintf(c->subtitle, sizeof(c->subtitle), "%s: scenario %s, policy %s%s", cpath, cname, cpol,
             r.replicated ? ", replication 0" : "");
    c->file = path;
    hid_t f = h5_rd_open(&c->rd, path);
    hid_t root = H5I_INVALID_HID;
    if (f >= 0)
        root = r.replicated ? h5_rd_group(&c->rd, f, "rep0000") : H5Gopen2(f, "/", H5P_DEFAULT);
    if (root < 0) {
        snprintf(c->err, c->errlen, "%s: %s", path,
                 c->rd.rc ? c->rd.why : "cannot open the first replication");
        rc = -ENOENT;
    }
    double end_s = isfinite(r.sim_time_reached_s) ? r.sim_time_reached_s : r.duration_s;
    if (!rc)
        rc = chart_util(c, root, r.gpus);
    if (!rc)
        rc = chart_services(c, root);
    if (!rc)
        rc = chart_queue(c, root);
    if (!rc)
        rc = chart_jobs(c, root, end_s);
    if (root >= 0)
        H5Gclose(root);
    if (f >= 0)
        H5Fclose(f);
    results_release(&r);
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

static int plot_compare(struct chart_ctx *c, const char *const *paths, size_t n)
{
    static const char *const keys[] = {"util_allocated", "util_busy", "slo_share"};
    char path[PLOT_PATH_MAX];
    c->stem[0] = 0;
    FILE *f = dat_open(c, path, sizeof(path), "compare");
    if (!f)
        return -EIO;
    fprintf(f,
            "# label alloc%% ci alloc busy%% ci busy within_slo%% ci  (ci 0 for a single run)\n");
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct results r;
        rc = results_open(&r, paths[i], c->err, c->errlen);
        if (rc)
            break;
        char stem[256], pol[64];
        stem_of(paths[i], stem, sizeof(stem));
        dat_field(pol, sizeof(pol), r.policy ? r.policy : "-");
        fprintf(f, "\"%s\\n%s%s\"", stem, pol, r.replicated ? "" : " (1 run)");
        for (size_t k = 0; k < 3; k++) {
            const struct results_metric *m = results_table_find(&r.headline, keys[k]);
            double mean = m && m->s.n ? m->s.mean * 100 : NAN;
            double ci = m && m->s.n >= 2 ? m->s.ci95 * 100 : 0;
            fprintf(f, " %.6g %.6g", mean, ci);
        }
        fputc('\n', f);
        results_release(&r);
    }
    fclose(f);
    if (rc)
        return rc;
    snprintf(c->subtitle, sizeof(c->subtitle), "%zu result file%s; whiskers: 95%% CI of the mean",
             n, n == 1 ? "" : "s");
    return draw(c, "compare", path, NULL);
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

int plot_all(const struct plot_opts *o, const char *const *paths, size_t n, size_t *made, char *err,
             size_t errlen)
{
    struct chart_ctx *c = calloc(1, sizeof(*c));
    *made = 0;
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    c->o = o;
    c->err = err;
    c->errlen = errlen;
    h5io_quiet();
    int rc = 0;
    /* Refuse an unsafe name before creating anything; then resolve it (links too). */
    char probe[PLOT_PATH_MAX];
    snprintf(probe, sizeof(probe), "/%s", o->dir);
    if (!gp_path_safe(probe)) {
        snprintf(err, errlen,
                 "%s: the output folder's name holds a quote, backquote or control character, "
                 "which gnuplot cannot be handed safely; choose another",
                 o->dir);
        rc = -EINVAL;
    } else if (mkdir(o->dir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the folder", o->dir);
        rc = -EIO;
    }
    if (!rc)
        rc = plain_dir(o->dir, c->dir, sizeof(c->dir), "output folder", err, errlen);
    if (!rc)
        rc = plain_dir(o->scripts, c->scripts, sizeof(c->scripts), "scripts folder", err, errlen);
    if (!rc) {
        snprintf(c->datadir, sizeof(c->datadir), "%s/data", c->dir);
        if (mkdir(c->datadir, 0777) && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create the folder", c->datadir);
            rc = -EIO;
        }
    }
    for (size_t i = 0; i < n && !rc; i++) {
        if (n > 1)
            stem_of(paths[i], c->stem, sizeof(c->stem));
        else
            c->stem[0] = 0;
        rc = plot_file(c, paths[i]);
    }
    if (!rc)
        rc = plot_compare(c, paths, n);
    *made = c->made;
    free(c);
    return rc;
}
