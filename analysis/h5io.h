/*
 * h5io.h — small HDF5 helpers: a results file written under a temporary
 * name and renamed when complete, attributes, whole vectors, and appendable
 * column series for time series written while the simulation runs.
 *
 * Room analysis/ (results files): includes nothing of ours; reads only
 * HDF5 files, never simulator memory. The results writer (sim/output.c)
 * uses this HDF5 layer. Rule: docs/architecture.md.
 *
 * Every dataset is chunked and deflate-compressed (with shuffle), and object
 * modification times are not tracked, so the same data gives the same bytes
 * in every dataset. Units are stored as a string attribute "units" on each
 * dataset. Functions return 0 or a negative code; they never print
 * (HDF5's own error stack printing is switched off by h5io_quiet()).
 */
#ifndef TIDESIM_H5IO_H
#define TIDESIM_H5IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

/*
 * Switch off HDF5's automatic error printing (the CLI reports errors itself)
 * and, with libhdf5 < 1.14.1, its exit handler, which crashes on a file whose
 * close failed (h5io.c says why). Call it before any other HDF5 call.
 */
void h5io_quiet(void);

/*
 * Write errors. Every writer below returns 0 or a negative errno: the
 * system's own code when the file system refused (-ENOSPC for a full disk,
 * -EDQUOT, -EIO, ...; found in the HDF5 error stack of the call that just
 * failed), -ENOMEM, or -EIO when HDF5 gives no cause. After a failure the
 * file is not worth keeping: abort it (h5file_abort).
 */
int h5io_fail(void);

struct h5file {
    hid_t id;
    char *path;     /* final name */
    char *tmp_path; /* name while being written: "<path>.tmp.<pid>" */
};

/*
 * Create path's temporary file. Returns 0, or the cause as a negative errno
 * (-ENOENT: no such folder, -EACCES, -ENOSPC, ...; -ENOMEM) with f holding
 * nothing to release.
 */
int h5file_create(struct h5file *f, const char *path);

/* h5file_create with the temporary file named tmp (a name the caller can remove itself when
 * the process that writes it dies: the merge's child, analysis/merge.c). */
int h5file_create_as(struct h5file *f, const char *path, const char *tmp);

/*
 * Close the temporary file (every object still open in it is closed first),
 * fsync it, rename it to `as` (path, or another name) and fsync the folder,
 * so that a name that exists after a crash names complete data. Returns 0,
 * or a negative errno (-ENOSPC when the last buffers do not fit) with the
 * temporary file deleted and nothing at `as`. f is released either way.
 * One exception with keep: when only the folder's fsync fails, after the rename, the new
 * file (complete and synced) stays at `as` and the error is returned: a sweep's index,
 * which replaced the one written at the sweep's start, is kept for the sweep run again
 * to resume from (without keep, a failure leaves nothing at `as`).
 */
int h5file_commit(struct h5file *f, const char *as, bool keep);

/* Close and delete the temporary file; f is released (a released f is a no-op). */
void h5file_abort(struct h5file *f);

/* Create group `path` (intermediate groups too) under parent. Returns the id or a negative value.
 */
hid_t h5_group_create(hid_t parent, const char *path);

int h5_attr_double(hid_t obj, const char *name, double v);
int h5_attr_int(hid_t obj, const char *name, int64_t v);
int h5_attr_str(hid_t obj, const char *name, const char *s);

/* Whole 1-D datasets (chunked, compressed). units may be NULL. */
int h5_write_f64(hid_t grp, const char *name, const double *v, size_t n, const char *units);
int h5_write_i64(hid_t grp, const char *name, const int64_t *v, size_t n, const char *units);
int h5_write_u64(hid_t grp, const char *name, const uint64_t *v, size_t n, const char *units);
/* A 2-D dataset [rows][cols] of doubles. */
int h5_write_f64_2d(hid_t grp, const char *name, const double *v, size_t rows, size_t cols,
                    const char *units);

/*
 * An appendable set of 1-D float64 columns in one group, written in chunks
 * of `chunk` rows while the run goes on (memory stays O(chunk × columns)).
 * A failed write is remembered: later appends and the close return the same
 * code and touch neither the buffer nor the file.
 */
struct h5_series {
    size_t ncols, chunk, nbuf; /* nbuf < chunk between calls */
    uint64_t rows;             /* rows written to the file */
    hid_t *dsets;
    double *buf; /* column-major: buf[col * chunk + row] */
    int error;   /* first write error (negative errno), 0 while all is well */
};

int h5_series_open(struct h5_series *s, hid_t grp, const char *const names[],
                   const char *const units[], size_t ncols, size_t chunk);
int h5_series_append(struct h5_series *s, const double *row);
/* Flush the buffered rows and close the datasets. Safe on a zeroed struct. */
int h5_series_close(struct h5_series *s);

/* An appendable 2-D float32 dataset [rows][width] (per-GPU values per interval); errors as
 * for h5_series. */
struct h5_matrix {
    size_t width, chunk, nbuf; /* nbuf < chunk between calls */
    uint64_t rows;
    hid_t dset;
    float *buf;
    int error;
};

int h5_matrix_open(struct h5_matrix *m, hid_t grp, const char *name, size_t width, size_t chunk,
                   const char *units);
int h5_matrix_append(struct h5_matrix *m, const float *row);
int h5_matrix_close(struct h5_matrix *m);

/* The readers (report/compare/check/plot, merge) are in analysis/h5read.h: they check
 * what a file declares before reading it, since results files are not trusted. */

#endif
