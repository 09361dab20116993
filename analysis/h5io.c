/* h5io.c — HDF5 helpers: temp-then-rename files, attributes, appendable series. */
#include "analysis/h5io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void h5io_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
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
    size_t n = strlen(path) + 32;
    memset(f, 0, sizeof(*f));
    f->id = H5I_INVALID_HID;
    f->path = dupstr(path);
    f->tmp_path = malloc(n);
    if (!f->path || !f->tmp_path) {
        free(f->path);
        free(f->tmp_path);
        return -ENOMEM;
    }
    snprintf(f->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED);
    f->id = H5Fcreate(f->tmp_path, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (f->id < 0) {
        free(f->path);
        free(f->tmp_path);
        f->path = f->tmp_path = NULL;
        return -EIO;
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

int h5file_commit(struct h5file *f, const char *as)
{
    int rc = 0;
    if (H5Fclose(f->id) < 0)
        rc = -EIO;
    if (rc == 0 && rename(f->tmp_path, as) != 0)
        rc = -EIO;
    if (rc)
        unlink(f->tmp_path);
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
    int rc = a < 0 || H5Awrite(a, type, v) < 0 ? -EIO : 0;
    if (a >= 0)
        H5Aclose(a);
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
    int rc = d < 0 ? -EIO : 0;
    size_t total = 1;
    for (int i = 0; i < rank; i++)
        total *= dims[i];
    if (rc == 0 && total && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        rc = -EIO;
    if (rc == 0 && units)
        rc = h5_attr_str(d, "units", units);
    if (d >= 0)
        H5Dclose(d);
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

static hid_t create_extendible(hid_t grp, const char *name, hid_t type, int rank,
                               const hsize_t *chunk, hsize_t width, const char *units)
{
    hsize_t dims[2] = {0, width}, maxd[2] = {H5S_UNLIMITED, width};
    hid_t sp = H5Screate_simple(rank, dims, maxd);
    hid_t dcpl = dcpl_chunked(rank, chunk);
    hid_t d = H5Dcreate2(grp, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (d >= 0 && units && h5_attr_str(d, "units", units)) {
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
        return -EIO;
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(rank, cnt, NULL);
    int rc = 0;
    if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
        H5Dwrite(d, type, ms, fs, H5P_DEFAULT, buf) < 0)
        rc = -EIO;
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
        s->dsets[c] =
            create_extendible(grp, names[c], H5T_NATIVE_DOUBLE, 1, ch, 0, units ? units[c] : NULL);
        if (s->dsets[c] < 0) {
            s->ncols = c;
            h5_series_close(s);
            return -EIO;
        }
    }
    return 0;
}

static int series_flush(struct h5_series *s)
{
    if (s->nbuf == 0)
        return 0;
    for (size_t c = 0; c < s->ncols; c++)
        if (append_rows(s->dsets[c], H5T_NATIVE_DOUBLE, s->buf + c * s->chunk, s->rows, s->nbuf, 0))
            return -EIO;
    s->rows += s->nbuf;
    s->nbuf = 0;
    return 0;
}

int h5_series_append(struct h5_series *s, const double *row)
{
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
        if (s->dsets[c] >= 0)
            H5Dclose(s->dsets[c]);
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
    m->dset = create_extendible(grp, name, H5T_NATIVE_FLOAT, 2, ch, m->width, units);
    if (m->dset < 0) {
        free(m->buf);
        m->buf = NULL;
        return -EIO;
    }
    return 0;
}

static int matrix_flush(struct h5_matrix *m)
{
    if (m->nbuf == 0)
        return 0;
    if (append_rows(m->dset, H5T_NATIVE_FLOAT, m->buf, m->rows, m->nbuf, m->width))
        return -EIO;
    m->rows += m->nbuf;
    m->nbuf = 0;
    return 0;
}

int h5_matrix_append(struct h5_matrix *m, const float *row)
{
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
    H5Dclose(m->dset);
    free(m->buf);
    memset(m, 0, sizeof(*m));
    return rc;
}
