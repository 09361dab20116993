/* h5io.c — HDF5 helpers: temp-then-rename files, attributes, appendable series. */
#include "analysis/h5io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void h5io_quiet(void)
{
#if !H5_VERSION_GE(1, 14, 1)
    /* libhdf5 before 1.14.1 frees a file whose H5Fclose failed (a full disk) but keeps its
     * id, and its exit handler then dereferences it and crashes (HDFFV-11052,
     * CVE-2020-10812; fixed by HDFGroup/hdf5 pull request 2496). tidesim closes every
     * file it opens, so it needs no exit handler: skip it. This only works before the
     * library's first use, hence the call here, at the start of every command that
     * writes (and fails harmlessly later). */
    H5dont_atexit();
#endif
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* H5Ewalk2 visitor: the first "errno = N" in a description (HDF5's sec2 driver writes one). */
static herr_t find_errno(unsigned n, const H5E_error2_t *e, void *data)
{
    int *out = data;
    const char *p = e->desc ? strstr(e->desc, "errno = ") : NULL;
    (void)n;
    if (!p)
        return 0;
    char *end;
    long v = strtol(p + 8, &end, 10);
    if (end == p + 8 || v <= 0 || v > 4095)
        return 0;
    *out = (int)v;
    return 1; /* stop the walk */
}

int h5io_fail(void)
{
    int err = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_errno, &err);
    return err ? -err : -EIO;
}

/* The first error of a sequence: keep rc unless it is 0. */
static int first_error(int rc, int now)
{
    return rc ? rc : now;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int h5file_create(struct h5file *f, const char *path)
{
    return h5file_create_as(f, path, NULL);
}

int h5file_create_as(struct h5file *f, const char *path, const char *tmp)
{
    size_t n = strlen(tmp ? tmp : path) + 32;
    memset(f, 0, sizeof(*f));
    f->id = H5I_INVALID_HID;
    f->path = dupstr(path);
    f->tmp_path = malloc(n);
    if (!f->path || !f->tmp_path) {
        free(f->path);
        free(f->tmp_path);
        return -ENOMEM;
    }
    if (tmp)
        snprintf(f->tmp_path, n, "%s", tmp);
    else
        snprintf(f->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    /* H5Fclose closes what is still open and flushes it now, reporting a full disk
     * to the caller instead of leaving the flush to the library's exit handler. */
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED);
    f->id = H5Fcreate(f->tmp_path, H5F_ACC_TRUNC, fcpl, fapl);
    int rc = f->id < 0 ? h5io_fail() : 0;
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (rc) {
        unlink(f->tmp_path); /* H5Fcreate may have made it before failing */
        free(f->path);
        free(f->tmp_path);
        f->path = f->tmp_path = NULL;
        f->id = H5I_INVALID_HID;
        return rc;
    }
    return 0;
}

static void h5file_free(struct h5file *f)
{
    free(f->path);
    free(f->tmp_path);
    f->path = f->tmp_path = NULL;
    f->id = H5I_INVALID_HID;
}

/* fsync a file or folder by name. Returns 0 or -errno. */
static int sync_path(const char *p, bool folder)
{
    int fd = open(p, O_RDONLY | O_CLOEXEC | (folder ? O_DIRECTORY : 0));
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    /* Folders of some file systems cannot be synced; that is no reason to fail a run. */
    if (folder && (rc == -EINVAL || rc == -ENOTSUP))
        rc = 0;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* The folder part of path ("." when there is none); malloc'd, NULL when out of memory. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return dupstr(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = 0;
    }
    return d;
}

int h5file_commit(struct h5file *f, const char *as, bool keep)
{
    /* The folder's name is taken before the rename: once the new file has replaced the old
     * one, a failure can only remove it, and the old one (a sweep's index written at its
     * start, which a sweep run again resumes from) would be lost with it. */
    char *dir = folder_of(as);
    int rc = dir ? 0 : -ENOMEM;
    if (H5Fclose(f->id) < 0 && rc == 0)
        rc = h5io_fail();
    f->id = H5I_INVALID_HID;
    if (rc == 0)
        rc = sync_path(f->tmp_path, false);
    if (rc == 0 && rename(f->tmp_path, as) != 0)
        rc = -errno;
    if (rc) {
        unlink(f->tmp_path);
    } else {
        /* The rename is durable once the folder holding the new name is synced. */
        rc = sync_path(dir, true);
        if (rc && !keep)
            unlink(as);
    }
    free(dir);
    h5file_free(f);
    return rc;
}

void h5file_abort(struct h5file *f)
{
    if (f->id >= 0)
        H5Fclose(f->id);
    if (f->tmp_path)
        unlink(f->tmp_path);
    h5file_free(f);
}

hid_t h5_group_create(hid_t parent, const char *path)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED);
    H5Pset_obj_track_times(gcpl, 0);
    hid_t g = H5Gcreate2(parent, path, lcpl, gcpl, H5P_DEFAULT);
    H5Pclose(lcpl);
    H5Pclose(gcpl);
    return g;
}

static int attr_write(hid_t obj, const char *name, hid_t type, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, type, v) < 0 ? h5io_fail() : 0;
    if (a >= 0 && H5Aclose(a) < 0)
        rc = first_error(rc, h5io_fail());
    H5Sclose(sp);
    return rc;
}

int h5_attr_double(hid_t obj, const char *name, double v)
{
    return attr_write(obj, name, H5T_NATIVE_DOUBLE, &v);
}

int h5_attr_int(hid_t obj, const char *name, int64_t v)
{
    return attr_write(obj, name, H5T_NATIVE_INT64, &v);
}

int h5_attr_str(hid_t obj, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int rc = attr_write(obj, name, t, &s);
    H5Tclose(t);
    return rc;
}

static hid_t dcpl_chunked(int rank, const hsize_t *chunk)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    H5Pset_obj_track_times(dcpl, 0);
    return dcpl;
}

static int write_nd(hid_t grp, const char *name, hid_t type, const void *v, int rank,
                    const hsize_t *dims, const char *units)
{
    hsize_t chunk[2];
    for (int i = 0; i < rank; i++) {
        chunk[i] = dims[i] ? dims[i] : 1;
        if (i == 0 && chunk[i] > 4096)
            chunk[i] = 4096;
    }
    if (rank == 2 && chunk[0] * chunk[1] > 65536)
        chunk[0] = 65536 / chunk[1] ? 65536 / chunk[1] : 1;
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = dcpl_chunked(rank, chunk);
    hid_t d = H5Dcreate2(grp, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 ? h5io_fail() : 0;
    size_t total = 1;
    for (int i = 0; i < rank; i++)
        total *= dims[i];
    if (rc == 0 && total && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        rc = h5io_fail();
    if (rc == 0 && units)
        rc = h5_attr_str(d, "units", units);
    if (d >= 0 && H5Dclose(d) < 0) /* the chunk cache is written here */
        rc = first_error(rc, h5io_fail());
    H5Pclose(dcpl);
    H5Sclose(sp);
    return rc;
}

int h5_write_f64(hid_t grp, const char *name, const double *v, size_t n, const char *units)
{
    hsize_t dims[1] = {n};
    return write_nd(grp, name, H5T_NATIVE_DOUBLE, v, 1, dims, units);
}

int h5_write_i64(hid_t grp, const char *name, const int64_t *v, size_t n, const char *units)
{
    hsize_t dims[1] = {n};
    return write_nd(grp, name, H5T_NATIVE_INT64, v, 1, dims, units);
}

int h5_write_u64(hid_t grp, const char *name, const uint64_t *v, size_t n, const char *units)
{
    hsize_t dims[1] = {n};
    return write_nd(grp, name, H5T_NATIVE_UINT64, v, 1, dims, units);
}

int h5_write_f64_2d(hid_t grp, const char *name, const double *v, size_t rows, size_t cols,
                    const char *units)
{
    hsize_t dims[2] = {rows, cols};
    return write_nd(grp, name, H5T_NATIVE_DOUBLE, v, 2, dims, units);
}

/* An extendible dataset with no rows; on failure a negative id and the cause in *rc. */
static hid_t create_extendible(hid_t grp, const char *name, hid_t type, int rank,
                               const hsize_t *chunk, hsize_t width, const char *units, int *rc)
{
    hsize_t dims[2] = {0, width}, maxd[2] = {H5S_UNLIMITED, width};
    hid_t sp = H5Screate_simple(rank, dims, maxd);
    hid_t dcpl = dcpl_chunked(rank, chunk);
    hid_t d = H5Dcreate2(grp, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    *rc = d < 0 ? h5io_fail() : 0;
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (d >= 0 && units && (*rc = h5_attr_str(d, "units", units)) != 0) {
        H5Dclose(d);
        return H5I_INVALID_HID;
    }
    return d;
}

/* Append `count` rows (of `width` elements, width 0 for 1-D) at row `at`. */
static int append_rows(hid_t d, hid_t type, const void *buf, hsize_t at, hsize_t count,
                       hsize_t width)
{
    int rank = width ? 2 : 1;
    hsize_t size[2] = {at + count, width}, start[2] = {at, 0}, cnt[2] = {count, width};
    if (H5Dset_extent(d, size) < 0)
        return h5io_fail();
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(rank, cnt, NULL);
    int rc = 0;
    if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
        H5Dwrite(d, type, ms, fs, H5P_DEFAULT, buf) < 0)
        rc = h5io_fail();
    H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

int h5_series_open(struct h5_series *s, hid_t grp, const char *const names[],
                   const char *const units[], size_t ncols, size_t chunk)
{
    memset(s, 0, sizeof(*s));
    s->ncols = ncols;
    s->chunk = chunk ? chunk : 1024;
    s->dsets = calloc(ncols, sizeof(*s->dsets));
    s->buf = malloc(ncols * s->chunk * sizeof(*s->buf));
    if (!s->dsets || !s->buf) {
        free(s->dsets);
        free(s->buf);
        memset(s, 0, sizeof(*s));
        return -ENOMEM;
    }
    hsize_t ch[1] = {s->chunk};
    for (size_t c = 0; c < ncols; c++) {
        int rc;
        s->dsets[c] = create_extendible(grp, names[c], H5T_NATIVE_DOUBLE, 1, ch, 0,
                                        units ? units[c] : NULL, &rc);
        if (s->dsets[c] < 0) {
            s->ncols = c;
            h5_series_close(s);
            return rc;
        }
    }
    return 0;
}

/*
 * Write the buffered rows. On failure the buffer is dropped and the error
 * kept (s->error): the file is lost anyway, and a full buffer must never be
 * appended to (the overflow of a full disk, issue 14).
 */
static int series_flush(struct h5_series *s)
{
    if (s->error || s->nbuf == 0) {
        s->nbuf = 0;
        return s->error;
    }
    for (size_t c = 0; c < s->ncols; c++) {
        int rc =
            append_rows(s->dsets[c], H5T_NATIVE_DOUBLE, s->buf + c * s->chunk, s->rows, s->nbuf, 0);
        if (rc) {
            s->error = rc;
            s->nbuf = 0;
            return rc;
        }
    }
    s->rows += s->nbuf;
    s->nbuf = 0;
    return 0;
}

int h5_series_append(struct h5_series *s, const double *row)
{
    if (s->error)
        return s->error;
    for (size_t c = 0; c < s->ncols; c++)
        s->buf[c * s->chunk + s->nbuf] = row[c];
    if (++s->nbuf == s->chunk)
        return series_flush(s);
    return 0;
}

int h5_series_close(struct h5_series *s)
{
    int rc = s->dsets ? series_flush(s) : 0;
    for (size_t c = 0; s->dsets && c < s->ncols; c++)
        if (s->dsets[c] >= 0 && H5Dclose(s->dsets[c]) < 0)
            rc = first_error(rc, h5io_fail());
    free(s->dsets);
    free(s->buf);
    memset(s, 0, sizeof(*s));
    return rc;
}

int h5_matrix_open(struct h5_matrix *m, hid_t grp, const char *name, size_t width, size_t chunk,
                   const char *units)
{
    memset(m, 0, sizeof(*m));
    m->width = width ? width : 1;
    m->chunk = chunk ? chunk : 64;
    m->buf = malloc(m->width * m->chunk * sizeof(*m->buf));
    if (!m->buf)
        return -ENOMEM;
    hsize_t ch[2] = {m->chunk, m->width};
    int rc;
    m->dset = create_extendible(grp, name, H5T_NATIVE_FLOAT, 2, ch, m->width, units, &rc);
    if (m->dset < 0) {
        free(m->buf);
        m->buf = NULL;
        return rc;
    }
    return 0;
}

/* As series_flush: a failure drops the buffer and is kept in m->error. */
static int matrix_flush(struct h5_matrix *m)
{
    if (m->error || m->nbuf == 0) {
        m->nbuf = 0;
        return m->error;
    }
    int rc = append_rows(m->dset, H5T_NATIVE_FLOAT, m->buf, m->rows, m->nbuf, m->width);
    if (rc) {
        m->error = rc;
        m->nbuf = 0;
        return rc;
    }
    m->rows += m->nbuf;
    m->nbuf = 0;
    return 0;
}

int h5_matrix_append(struct h5_matrix *m, const float *row)
{
    if (m->error)
        return m->error;
    memcpy(m->buf + m->nbuf * m->width, row, m->width * sizeof(*row));
    if (++m->nbuf == m->chunk)
        return matrix_flush(m);
    return 0;
}

int h5_matrix_close(struct h5_matrix *m)
{
    if (!m->buf)
        return 0;
    int rc = matrix_flush(m);
    if (H5Dclose(m->dset) < 0)
        rc = first_error(rc, h5io_fail());
    free(m->buf);
    memset(m, 0, sizeof(*m));
    return rc;
}
