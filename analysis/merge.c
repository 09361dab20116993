/* merge.c — one replicated results file from the files of its replications. */
#include "analysis/merge.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/stats.h"

struct copy_ctx {
    hid_t dst;
    int rc;
};

static herr_t copy_attr(hid_t src, const char *name, const H5A_info_t *info, void *data)
{
    struct copy_ctx *c = data;
    (void)info;
    hid_t a = H5Aopen(src, name, H5P_DEFAULT);
    if (a < 0) {
        c->rc = -EIO;
        return -1;
    }
    hid_t t = H5Aget_type(a);
    H5T_class_t cls = H5Tget_class(t);
    H5Tclose(t);
    H5Aclose(a);
    int rc = 0;
    if (cls == H5T_STRING) {
        char *v = NULL;
        rc = h5_read_attr_str(src, name, &v);
        if (!rc)
            rc = h5_attr_str(c->dst, name, v);
        free(v);
    } else if (cls == H5T_INTEGER) {
        double v = 0;
        rc = h5_read_attr_double(src, name, &v);
        if (!rc)
            rc = h5_attr_int(c->dst, name, (int64_t)v);
    } else if (cls == H5T_FLOAT) {
        double v = 0;
        rc = h5_read_attr_double(src, name, &v);
        if (!rc)
            rc = h5_attr_double(c->dst, name, v);
    }
    if (rc) {
        c->rc = rc;
        return -1;
    }
    return 0;
}

/*
 * Copy group src/name to dst/name attribute by attribute. H5Ocopy of a group
 * whose attributes are in dense storage and include variable-length strings
 * crashes in HDF5 1.10 (H5T__conv_vlen), and /meta is such a group.
 */
static int copy_attr_group(hid_t src, const char *name, hid_t dst, const char *as)
{
    hid_t s = H5Gopen2(src, name, H5P_DEFAULT);
    if (s < 0)
        return -ENOENT;
    hid_t d = h5_group_create(dst, as);
    struct copy_ctx c = {d, d < 0 ? -EIO : 0};
    hsize_t idx = 0;
    int crt = c.rc ? 0 : h5_rd_crt_order(s, true);
    if (!c.rc &&
        (crt < 0 || H5Aiterate2(s, crt ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC, &idx,
                                copy_attr, &c) < 0) &&
        !c.rc)
        c.rc = -EIO; /* libhdf5 could not list them all: never redone in another order */
    if (d >= 0)
        H5Gclose(d);
    H5Gclose(s);
    return c.rc;
}

static herr_t copy_link(hid_t src, const char *name, const H5L_info_t *info, void *data)
{
    struct copy_ctx *c = data;
    (void)info;
    if (!strcmp(name, "meta")) {
        c->rc = copy_attr_group(src, name, c->dst, name);
        return c->rc ? -1 : 0;
    }
    if (H5Ocopy(src, name, c->dst, name, H5P_DEFAULT, H5P_DEFAULT) < 0) {
        c->rc = -EIO;
        return -1;
    }
    return 0;
}

/* Copy every object under part's root into group dst; set its /meta/replication. */
static int copy_part(hid_t dst, const char *part, size_t index)
{
    hid_t f = H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -ENOENT;
    struct copy_ctx c = {dst, 0};
    hsize_t idx = 0;
    if (H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_link, &c) < 0 && !c.rc)
        c.rc = -EIO;
    H5Fclose(f);
    if (c.rc)
        return c.rc;
    hid_t meta = H5Gopen2(dst, "meta", H5P_DEFAULT);
    if (meta < 0)
        return -EINVAL;
    int rc = h5_attr_int(meta, "replication", (int64_t)index);
    H5Gclose(meta);
    return rc;
}

struct name_list {
    char **names;
    size_t n;
    int rc;
};

static herr_t collect_attr(hid_t obj, const char *name, const H5A_info_t *info, void *data)
{
    struct name_list *l = data;
    (void)obj;
    (void)info;
    char **nn = realloc(l->names, (l->n + 1) * sizeof(*nn));
    size_t len = strlen(name) + 1;
    char *d = malloc(len);
    if (!nn || !d) {
        free(d);
        if (nn)
            l->names = nn;
        l->rc = -ENOMEM;
        return -1;
    }
    memcpy(d, name, len);
    l->names = nn;
    l->names[l->n++] = d;
    return 0;
}

static double attr_or_nan(hid_t g, const char *name)
{
    double v = NAN;
    h5_read_attr_double(g, name, &v);
    return v;
}

/* Open group `what` of replication i in file f. */
static hid_t rep_group(hid_t f, size_t i, const char *what)
{
    char path[64];
    snprintf(path, sizeof(path), "rep%04zu/%s", i, what);
    return H5Gopen2(f, path, H5P_DEFAULT);
}

static int is_numeric_attr(hid_t g, const char *name)
{
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    if (a < 0)
        return 0;
    hid_t t = H5Aget_type(a);
    H5T_class_t cls = H5Tget_class(t);
    H5Tclose(t);
    H5Aclose(a);
    return cls == H5T_INTEGER || cls == H5T_FLOAT;
}

static int write_summary(hid_t f, size_t n)
{
    hid_t s0 = rep_group(f, 0, "summary");
    if (s0 < 0)
        return -EINVAL;
    struct name_list l = {NULL, 0, 0};
    hsize_t idx = 0;
    int crt = h5_rd_crt_order(s0, true);
    herr_t e = crt < 0 ? -1
                       : H5Aiterate2(s0, crt ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC,
                                     &idx, collect_attr, &l);
    if (e < 0 && !l.rc) /* libhdf5 could not list them all: no summary of some of them */
        l.rc = -EIO;
    double *v = malloc(n * sizeof(*v));
    hid_t *g = calloc(n, sizeof(*g));
    hid_t sum = h5_group_create(f, "summary");
    int rc = l.rc ? l.rc : (!v || !g) ? -ENOMEM : sum < 0 ? -EIO : 0;
    for (size_t i = 0; !rc && i < n; i++)
        if ((g[i] = rep_group(f, i, "summary")) < 0)
            rc = -EINVAL;
    for (size_t k = 0; !rc && k < l.n; k++) {
        if (!is_numeric_attr(s0, l.names[k]))
            continue;
        for (size_t i = 0; i < n; i++)
            v[i] = attr_or_nan(g[i], l.names[k]);
        struct stats_summary st;
        stats_summarize(v, n, &st);
        char name[256];
        snprintf(name, sizeof(name), "%s_mean", l.names[k]);
        rc |= h5_attr_double(sum, name, st.mean);
        snprintf(name, sizeof(name), "%s_ci95", l.names[k]);
        rc |= h5_attr_double(sum, name, st.ci95);
        snprintf(name, sizeof(name), "%s_sd", l.names[k]);
        rc |= h5_attr_double(sum, name, st.sd);
        snprintf(name, sizeof(name), "%s_n", l.names[k]);
        rc |= h5_attr_int(sum, name, (int64_t)st.n);
    }
    if (!rc)
        rc = h5_attr_int(sum, "replications", (int64_t)n);
    for (size_t i = 0; g && i < n; i++)
        if (g[i] > 0)
            H5Gclose(g[i]);
    if (sum >= 0)
        H5Gclose(sum);
    H5Gclose(s0);
    for (size_t k = 0; k < l.n; k++)
        free(l.names[k]);
    free(l.names);
    free(v);
    free(g);
    return rc ? -EIO : 0;
}

static int write_meta(hid_t f, size_t n, bool complete, const struct merge_extra *x)
{
    if (copy_attr_group(f, "rep0000/meta", f, "meta"))
        return -EIO;
    hid_t m = H5Gopen2(f, "meta", H5P_DEFAULT);
    if (m < 0)
        return -EIO;
    double reached = INFINITY, events = 0, seed_last = NAN;
    bool all = complete;
    for (size_t i = 0; i < n; i++) {
        hid_t g = rep_group(f, i, "meta");
        if (g < 0)
            continue;
        double r = attr_or_nan(g, "sim_time_reached_s"), e = attr_or_nan(g, "events_processed");
        if (r < reached)
            reached = r;
        if (isfinite(e))
            events += e;
        all = all && attr_or_nan(g, "complete") >= 1;
        seed_last = attr_or_nan(g, "seed");
        H5Gclose(g);
    }
    int rc = 0;
    if (H5Aexists(m, "replication") > 0)
        H5Adelete(m, "replication");
    rc |= h5_attr_int(m, "replications", (int64_t)n);
    rc |= h5_attr_double(m, "seed_first", attr_or_nan(m, "seed"));
    rc |= h5_attr_double(m, "seed_last", seed_last);
    rc |= h5_attr_int(m, "complete", all ? 1 : 0);
    rc |= h5_attr_double(m, "sim_time_reached_s", isfinite(reached) ? reached : 0);
    rc |= h5_attr_double(m, "events_processed", events);
    if (x && !isnan(x->precision_target)) {
        rc |= h5_attr_double(m, "precision_target", x->precision_target);
        rc |= h5_attr_double(m, "precision_reached", x->precision_reached);
        rc |= h5_attr_str(m, "precision_metric", x->precision_metric ? x->precision_metric : "");
    }
    H5Gclose(m);
    return rc ? -EIO : 0;
}

int merge_replications(const char *path, const char *const *parts, size_t n, bool complete,
                       char **written, char *err, size_t errlen)
{
    return merge_replications_ex(path, parts, n, complete, NULL, written, err, errlen);
}

/* What the merge's child is given (merge_replications_ex). */
struct merge_job {
    const char *path, *tmp, *name;
    const char *const *parts;
    size_t n;
    bool complete;
    const struct merge_extra *extra;
};

/* The merge itself, in the child: the file written as job->tmp, then committed as name. */
static int merge_write(void *arg, char *err, size_t errlen)
{
    const struct merge_job *j = arg;
    const char *path = j->path;
    struct h5file f;
    h5io_quiet();
    int rc = h5file_create_as(&f, path, j->tmp);
    if (rc) {
        snprintf(err, errlen,
                 "%s: cannot create the results file (is the folder there and writable?)", path);
        return rc;
    }
    for (size_t i = 0; !rc && i < j->n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "rep%04zu", i);
        hid_t g = h5_group_create(f.id, name);
        rc = g < 0 ? -EIO : copy_part(g, j->parts[i], i);
        if (g >= 0)
            H5Gclose(g);
        if (rc)
            snprintf(err, errlen, "%s: cannot copy replication %zu from %s", path, i, j->parts[i]);
    }
    if (!rc && (rc = write_meta(f.id, j->n, j->complete, j->extra)) != 0)
        snprintf(err, errlen, "%s: cannot write /meta", path);
    if (!rc && (rc = write_summary(f.id, j->n)) != 0)
        snprintf(err, errlen, "%s: cannot write /summary", path);
    if (rc) {
        h5file_abort(&f);
        return rc;
    }
    rc = h5file_commit(&f, j->name, false);
    if (rc)
        snprintf(err, errlen, "%s: cannot write the merged results file (%s)", j->name,
                 strerror(-rc));
    return rc;
}

/*
 * The merge is written in a child process (h5_rd_preflight), as a results file is read in
 * one: libhdf5 1.10.8 crashes in H5Ocopy (H5T_close_real, SIGSEGV) when a write fails while
 * it copies a replication's groups (I/O error testing, tests/cli/test_oom.c: each of the
 * 137th to 142nd of a replicated run's 226 writes, failed, killed the command and left
 * FILE.tmp.PID and the per-seed files). The child's death is now this command's error,
 * and its temporary file is removed here.
 */
int merge_replications_ex(const char *path, const char *const *parts, size_t n, bool complete,
                          const struct merge_extra *extra, char **written, char *err, size_t errlen)
{
    if (written)
        *written = NULL;
    if (n == 0) {
        snprintf(err, errlen, "%s: no replication to merge", path);
        return -EINVAL;
    }
    size_t len = strlen(path) + 48;
    char *name = malloc(len), *tmp = malloc(len);
    if (!name || !tmp) {
        free(name);
        free(tmp);
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    snprintf(name, len, complete ? "%s" : "%s.partial", path);
    snprintf(tmp, len, "%s.tmp.%ld.merge", path, (long)getpid());
    struct merge_job j = {path, tmp, name, parts, n, complete, extra};
    char why[1024] = "";
    /* No limit worth the name: a month of a large cluster takes long to merge. */
    int rc = h5_rd_preflight(merge_write, &j, 24u * 3600u * 1000u, why, sizeof(why));
    if (rc == -ECANCELED || rc == -ETIMEDOUT) {
        unlink(tmp);
        snprintf(err, errlen,
                 "%s: the HDF5 library crashed writing the merged results file (a failing disk "
                 "or file system?); nothing was written",
                 path);
        rc = -EIO;
    } else if (rc) {
        snprintf(err, errlen, "%s", why[0] ? why : "cannot merge the replications");
    }
    free(tmp);
    if (rc) {
        free(name);
        return rc;
    }
    if (written)
        *written = name;
    else
        free(name);
    return 0;
}
