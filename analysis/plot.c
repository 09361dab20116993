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
#include "analysis/results.h"

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

/* Run gnuplot on script with variables; 0 or -EIO. */
static int run_gnuplot(const struct plot_opts *o, const char *script, const char *vars)
{
    char gp[1200];
    snprintf(gp, sizeof(gp), "%s/%s", o->scripts, script);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -EIO;
    if (pid == 0) {
        execlp(o->gnuplot, o->gnuplot, "-e", vars, gp, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -EIO;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* gnuplot single-quoted string: ' doubled. */
static void gq(char *buf, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 3 < n; s++) {
        if (*s == '\'')
            buf[k++] = '\'';
        buf[k++] = *s;
    }
    buf[k] = 0;
}

struct chart_ctx {
    const struct plot_opts *o;
    char datadir[1024];
    char stem[256];
    char subtitle[512];
    size_t made;
    char *err;
    size_t errlen;
};

static int draw(struct chart_ctx *c, const char *chart, const char *data, const char *extra)
{
    const char *ext = c->o->format == PLOT_SVG ? "svg" : "png";
    const char *term =
        c->o->format == PLOT_SVG
            ? "svg size 1000,600 dynamic enhanced font 'sans,11' background '#ffffff'"
            : "pngcairo size 1000,600 enhanced font 'sans,10'";
    char out[1400], qd[1200], qo[1500], qs[1100], qp[1100], vars[8000];
    if (c->stem[0])
        snprintf(out, sizeof(out), "%s/%s_%s.%s", c->o->dir, c->stem, chart, ext);
    else
        snprintf(out, sizeof(out), "%s/%s.%s", c->o->dir, chart, ext);
    gq(qd, sizeof(qd), data);
    gq(qo, sizeof(qo), out);
    gq(qs, sizeof(qs), c->subtitle);
    gq(qp, sizeof(qp), c->o->scripts);
    snprintf(vars, sizeof(vars),
             "scripts='%s'; data='%s'; out='%s'; term=\"%s\"; subtitle='%s'; %s", qp, qd, qo, term,
             qs, extra ? extra : "");
    char script[64];
    snprintf(script, sizeof(script), "%s.gp", chart);
    if (run_gnuplot(c->o, script, vars)) {
        snprintf(c->err, c->errlen, "gnuplot failed on %s/%s (chart %s)", c->o->scripts, script,
                 out);
        return -EIO;
    }
    c->made++;
    return 0;
}

static FILE *dat_open(struct chart_ctx *c, char *path, size_t n, const char *name)
{
    snprintf(path, n, "%s/%s%s%s.dat", c->datadir, c->stem, c->stem[0] ? "_" : "", name);
    FILE *f = fopen(path, "w");
    if (!f)
        snprintf(c->err, c->errlen, "%s: cannot write", path);
    return f;
}

static double *read_col(hid_t g, const char *name, size_t *n)
{
    double *v = NULL;
    if (h5_read_f64(g, name, &v, n))
        return NULL;
    return v;
}

/* GPUs by use, averaged by time of day at the sample interval, as cumulative shares (%). */
static int chart_util(struct chart_ctx *c, hid_t root, double gpus)
{
    static const char *const uses[] = {"gpus_inference", "gpus_training",  "gpus_checkpoint",
                                       "gpus_restore",   "gpus_recompute", "gpus_reconfiguring"};
    static const char *const names[] = {"inference", "training",  "checkpoint",
                                        "restore",   "recompute", "reconfiguring"};
    hid_t g = H5Gopen2(root, "timeseries", H5P_DEFAULT);
    if (g < 0)
        return 0;
    size_t n = 0, m, mb = 0;
    double *t = read_col(g, "time_s", &n), *busy = read_col(g, "util_busy", &mb);
    double *col[6] = {0};
    char labels[256] = "";
    size_t ncol = 0, idx[6];
    for (size_t k = 0; k < 6; k++) {
        col[ncol] = read_col(g, uses[k], &m);
        if (col[ncol] && m == n) {
            idx[ncol] = k;
            snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s ", names[k]);
            ncol++;
        } else {
            free(col[ncol]);
            col[ncol] = NULL;
        }
    }
    H5Gclose(g);
    int rc = 0;
    if (!t || n == 0 || ncol == 0 || !(gpus > 0))
        goto out;
    snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "idle");
    double dt = n > 1 ? t[1] - t[0] : t[0];
    size_t nb = dt > 0 ? (size_t)ceil(86400.0 / dt) : 1;
    double *acc = calloc(nb * (ncol + 2), sizeof(*acc));
    if (!acc) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        double start = t[i] - dt;
        size_t b = (size_t)floor(fmod(start < 0 ? 0 : start, 86400.0) / dt + 1e-9) % nb;
        double *a = acc + b * (ncol + 2);
        a[0] += 1;
        for (size_t k = 0; k < ncol; k++)
            a[1 + k] += col[k][i] / gpus * 100;
        a[1 + ncol] += busy && mb == n ? busy[i] * 100 : NAN;
    }
    char path[1400];
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
        fprintf(f, "%.4f", ((double)b + 0.5) * dt / 3600);
        for (size_t k = 0; k < ncol; k++) {
            cum += a[1 + k] / a[0];
            fprintf(f, " %.4f", cum);
        }
        fprintf(f, " 100 %.4f\n", a[1 + ncol] / a[0]);
    }
    fclose(f);
    free(acc);
    (void)idx;
    char extra[400];
    snprintf(extra, sizeof(extra), "ncum=%zu; labels='%s'; step_h=%g", ncol + 1, labels, dt / 3600);
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

/* Per service: p99 over time (with SLO) and the latency CDF. */
static int chart_services(struct chart_ctx *c, hid_t root)
{
    if (H5Lexists(root, "services", H5P_DEFAULT) <= 0)
        return 0;
    hid_t g = H5Gopen2(root, "services", H5P_DEFAULT);
    struct svc_list l = {.n = 0};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, list_svc, &l) < 0) {
        idx = 0;
        l.n = 0;
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, list_svc, &l);
    }
    char list[2200] = "", prefix[1400], path[1500];
    snprintf(prefix, sizeof(prefix), "%s/%s%s", c->datadir, c->stem, c->stem[0] ? "_" : "");
    int rc = 0;
    size_t drawn = 0;
    for (size_t i = 0; i < l.n && !rc; i++) {
        hid_t s = H5Gopen2(g, l.names[i], H5P_DEFAULT);
        if (s < 0)
            continue;
        double slo = NAN;
        h5_read_attr_double(s, "slo_ms", &slo);
        char name[200];
        snprintf(name, sizeof(name), "p99_%zu", i);
        size_t n = 0, m = 0;
        hid_t ts = H5Lexists(s, "timeseries", H5P_DEFAULT) > 0
                       ? H5Gopen2(s, "timeseries", H5P_DEFAULT)
                       : H5I_INVALID_HID;
        double *t = ts >= 0 ? read_col(ts, "time_s", &n) : NULL;
        double *p = ts >= 0 ? read_col(ts, "p99_ms", &m) : NULL;
        if (ts >= 0)
            H5Gclose(ts);
        FILE *f = t && p && m == n ? dat_open(c, path, sizeof(path), name) : NULL;
        if (f) {
            fprintf(f, "# time_h p99_ms slo_ms  (service %s)\n", l.names[i]);
            for (size_t k = 0; k < n; k++)
                fprintf(f, "%.4f %.6g %.6g\n", t[k] / 3600, p[k], slo);
            fclose(f);
            drawn |= 1;
        }
        free(t);
        free(p);
        snprintf(name, sizeof(name), "cdf_%zu", i);
        hid_t h = H5Lexists(s, "histogram", H5P_DEFAULT) > 0 ? H5Gopen2(s, "histogram", H5P_DEFAULT)
                                                             : H5I_INVALID_HID;
        double *cnt = h >= 0 ? read_col(h, "count", &n) : NULL;
        double *hi = h >= 0 ? read_col(h, "hi_us", &m) : NULL;
        if (h >= 0)
            H5Gclose(h);
        f = cnt && hi && m == n ? dat_open(c, path, sizeof(path), name) : NULL;
        if (f) {
            double tot = 0, cum = 0;
            for (size_t k = 0; k < n; k++)
                tot += cnt[k];
            fprintf(f, "# latency_ms cumulative_fraction  (service %s)\n", l.names[i]);
            for (size_t k = 0; k < n && tot > 0; k++) {
                if (cnt[k] == 0)
                    continue;
                cum += cnt[k];
                fprintf(f, "%.6g %.8f\n", hi[k] / 1e3, cum / tot);
            }
            fclose(f);
            drawn |= 2;
        }
        free(cnt);
        free(hi);
        H5Gclose(s);
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? " " : "",
                 l.names[i]);
    }
    H5Gclose(g);
    char extra[2600], ql[2300];
    gq(ql, sizeof(ql), list);
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
    hid_t g = H5Lexists(root, "timeseries", H5P_DEFAULT) > 0
                  ? H5Gopen2(root, "timeseries", H5P_DEFAULT)
                  : H5I_INVALID_HID;
    if (g < 0)
        return 0;
    size_t n = 0, m1 = 0, m2 = 0;
    double *t = read_col(g, "time_s", &n), *q = read_col(g, "jobs_queued", &m1),
           *r = read_col(g, "jobs_running", &m2);
    H5Gclose(g);
    int rc = 0;
    char path[1400];
    if (t && q && r && m1 == n && m2 == n && n) {
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
    hid_t g = H5Lexists(root, "jobs", H5P_DEFAULT) > 0 ? H5Gopen2(root, "jobs", H5P_DEFAULT)
                                                       : H5I_INVALID_HID;
    if (g < 0)
        return 0;
    size_t n = 0, m[4] = {0};
    double *sub = read_col(g, "submit_s", &n), *st = read_col(g, "start_s", &m[0]),
           *en = read_col(g, "end_s", &m[1]), *state = read_col(g, "state", &m[2]),
           *gp = read_col(g, "gpus", &m[3]);
    H5Gclose(g);
    int rc = 0;
    char path[1400];
    if (sub && st && en && state && gp && m[0] == n && m[1] == n && m[2] == n && m[3] == n && n) {
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
    snprintf(c->subtitle, sizeof(c->subtitle), "%s: scenario %s, policy %s%s", path,
             r.scenario_name ? r.scenario_name : "-", r.policy ? r.policy : "-",
             r.replicated ? ", replication 0" : "");
    char rootname[32];
    results_rep_root(&r, 0, rootname, sizeof(rootname));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t root = f >= 0 ? H5Gopen2(f, rootname, H5P_DEFAULT) : H5I_INVALID_HID;
    if (root < 0) {
        snprintf(c->err, c->errlen, "%s: cannot open %s", path, rootname);
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

static int plot_compare(struct chart_ctx *c, const char *const *paths, size_t n)
{
    static const char *const keys[] = {"util_allocated", "util_busy", "slo_share"};
    char path[1400];
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
        char stem[256];
        stem_of(paths[i], stem, sizeof(stem));
        fprintf(f, "\"%s\\n%s%s\"", stem, r.policy ? r.policy : "-",
                r.replicated ? "" : " (1 run)");
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

int plot_all(const struct plot_opts *o, const char *const *paths, size_t n, size_t *made, char *err,
             size_t errlen)
{
    struct chart_ctx c = {.o = o, .err = err, .errlen = errlen};
    *made = 0;
    h5io_quiet();
    snprintf(c.datadir, sizeof(c.datadir), "%s/data", o->dir);
    if ((mkdir(o->dir, 0777) && errno != EEXIST) || (mkdir(c.datadir, 0777) && errno != EEXIST)) {
        snprintf(err, errlen, "%s: cannot create the folder", c.datadir);
        return -EIO;
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (n > 1)
            stem_of(paths[i], c.stem, sizeof(c.stem));
        else
            c.stem[0] = 0;
        rc = plot_file(&c, paths[i]);
    }
    if (!rc)
        rc = plot_compare(&c, paths, n);
    *made = c.made;
    return rc;
}
