/*
 * sweepidx.h — the index file of a sweep (`tidesim sweep`, docs/sweeps.md):
 * one HDF5 file beside the point files that lists every point with its axis
 * values and headline metrics, links to the points' results files and
 * carries the hash that says which sweep file, base scenario and binary made
 * them.
 *
 * Layout (index_schema 1):
 *   /meta     attributes: kind = "tidesim-sweep-index", index_schema, complete
 *             (1 when every point has a complete results file), points,
 *             points_done, replications, mode ("grid"/"zip"), axes, axis_K (the
 *             dotted scenario path of axis K), hash, sweep_path, sweep_text,
 *             base_path, base_text, tidesim_version, git_commit
 *   /table    float64 columns, one row per point in point order: point, done
 *             (1/0), axis_K (the value as a number; NaN when not numeric; attr
 *             "path"), and for each headline metric M present in a done point
 *             M_mean and M_ci95 (95 % Student-t half-width over the point's
 *             replications; NaN for one replication or a point not done)
 *   /points/point-NNNN   a group per point: attributes file (its results
 *             file's name, relative to the index's folder), done, axis_K (the
 *             value's text as given to --set); link `results` is an external
 *             link to that file's root
 *
 * The datasets depend only on the point files' contents, never on the order
 * in which points finished. Written under a temporary name and renamed
 * (analysis/h5io.h), so a reader never sees a half-written index.
 *
 * Room analysis/: reads results files (analysis/results.h), never simulator
 * memory; never prints except sweepidx_report, which prints to the FILE given.
 */
#ifndef TIDESIM_SWEEPIDX_H
#define TIDESIM_SWEEPIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SWEEPIDX_KIND "tidesim-sweep-index"

/* What the index records; every pointer is the caller's. */
struct sweepidx_desc {
    const char *dir;           /* folder of the index and the point files */
    size_t npoints, naxes;     /* points >= 1, axes >= 1 */
    const char *const *axes;   /* [naxes] dotted paths */
    const char *const *values; /* [npoints * naxes]: point p's value of axis a at p*naxes+a */
    const char *const *files;  /* [npoints] point file names, relative to dir */
    const bool *done;          /* [npoints] a complete results file exists */
    unsigned replications;
    const char *mode;
    const char *hash;
    const char *sweep_path, *sweep_text, *base_path, *base_text;
    const char *version, *git_commit;
};

/* The headline metrics the table holds (NULL-terminated; a metric absent from every done
 * point, e.g. cost_total without a cost block, has no column). */
extern const char *const sweepidx_metrics[];

/*
 * Write DIR/index.h5 from d, reading the done points' files for their
 * metrics. /meta complete = 1 when every point is done. Returns 0, or a
 * negative code with err filled (a point file that cannot be read, a write
 * error); a failure leaves the previous index as it was.
 */
int sweepidx_write(const struct sweepidx_desc *d, char *err, size_t errlen);

/*
 * The hash recorded in the index at path: *hash malloc'd (the caller frees).
 * 0; -ENOENT no file; -EINVAL not a sweep index (err filled).
 */
int sweepidx_read_hash(const char *path, char **hash, char *err, size_t errlen);

/* True when path is an HDF5 file whose /meta kind is SWEEPIDX_KIND. */
bool sweepidx_is_index(const char *path);

/*
 * 1 when path is a results file with /meta complete = 1, 0 otherwise
 * (absent, unreadable, partial).
 */
int sweepidx_point_complete(const char *path);

/*
 * Print the index's point table (point, axis values, each metric as mean ±
 * half-width) to out. json: one JSON object instead. Returns 0, or a negative
 * code with err filled.
 */
int sweepidx_report(FILE *out, const char *path, bool json, char *err, size_t errlen);

#endif
