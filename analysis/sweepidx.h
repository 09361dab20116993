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

#include "analysis/results.h"

#define SWEEPIDX_KIND      "tidesim-sweep-index"
#define SWEEPIDX_KIND_PLAN "tidesim-plan-index" /* tidesim plan: the same layout plus /plan */

/* An extra float64 column of /table (one value per point). */
struct sweepidx_col {
    const char *name;
    const double *v;
};

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
    /* Optional (zero/NULL for a sweep): */
    const char *kind; /* NULL = SWEEPIDX_KIND */
    bool unfinished;  /* /meta complete = 0 even when every point listed is done (a plan whose
                       * search was interrupted) */
    const struct sweepidx_col *extra; /* more /table columns */
    size_t nextra;
    /* Called with the open file before it is committed (e.g. to write /plan); 0 or < 0. */
    int (*write_more)(long long file_id, void *ctx);
    void *ctx;
};

/* The headline metrics the table holds (NULL-terminated; a metric absent from every done
 * point, e.g. cost_total without a cost block, has no column). */
extern const char *const sweepidx_metrics[];
#define SWEEPIDX_NMETRICS 7

/* An index read back (sweepidx_table_load): every point's axis values, done flag and metric
 * columns; a plan's columns too (NULL for a sweep). */
struct sweepidx_table {
    double points, done_n, reps;
    char *mode, *sweep_path;
    size_t naxes, np;
    char **axes;                                             /* [naxes] dotted paths */
    double *done;                                            /* [np] 1/0 */
    double *mean[SWEEPIDX_NMETRICS], *ci[SWEEPIDX_NMETRICS]; /* NULL: no such column */
    char **vals;                                             /* [np * naxes] as given to --set */
    char **files;                                            /* [np] relative to the index */
    double *size, *choice, *verdict, *reps_col;              /* a plan's (else NULL) */
};

/*
 * An index is not trusted (analysis/h5read.h), and libhdf5 itself may crash
 * or hang inside a damaged one: every reader below (sweepidx_table_load,
 * sweepidx_report, sweepidx_select, planidx_print, planidx_answers,
 * sweepidx_read_hash) reads the file only after a child process read
 * everything any of them reads of it (h5_rd_preflight) and returned in time.
 * v: the verdict of sweepidx_is_index_vet's child on this file (taken when
 * the file is still the one it read: no second child), or NULL (a child of
 * the reader's own). A refusal is "PATH: why" in err ("PATH: the HDF5
 * library crashed reading it (signal 11); ...", "PATH: /table/done: cannot
 * read the data (damaged file?)").
 */

/* Read the index at path. 0, or < 0 with err; release always. */
int sweepidx_table_load(struct sweepidx_table *t, const char *path, const struct results_vet *v,
                        char *err, size_t errlen);
void sweepidx_table_release(struct sweepidx_table *t);

/*
 * For tests: what the child that reads an index sends the command (its answer: the table, a
 * plan's printed /plan table and its answers), made by reading path in this process and
 * written to fd (0, or the refusal with err); and the table decoded from such an answer,
 * buf[0..n) (0, or -EIO / -ENOMEM for anything that is not an answer whole; *t then empty).
 */
int sweepidx_answer(const char *path, int fd, char *err, size_t errlen);
int sweepidx_from_answer(struct sweepidx_table *t, const void *buf, size_t n);

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

/*
 * True when path is an HDF5 file whose /meta kind is SWEEPIDX_KIND or
 * SWEEPIDX_KIND_PLAN. Asked of a child process (results_vet): no libhdf5 call
 * is made in this one.
 */
bool sweepidx_is_index(const char *path);

/*
 * The same, and the same child reads the file for the command: an index as
 * every reader of an index does (*v keeps the verdict for them: v->other),
 * any other file as results_open_for(path, by) would (*v keeps the verdict
 * for results_open_vetted). One child per file and command.
 */
bool sweepidx_is_index_vet(const char *path, unsigned by, struct results_vet *v);

/*
 * 1 when path is a results file with /meta complete = 1, 0 otherwise
 * (absent, unreadable, partial, or libhdf5 crashed or hung on it: the file is
 * read in a child process, h5_rd_preflight).
 */
int sweepidx_point_complete(const char *path);

/*
 * Print the index's point table (point, axis values, each metric as mean ±
 * half-width) to out. json: one JSON object instead. Returns 0, or a negative
 * code with err filled.
 */
int sweepidx_report(FILE *out, const char *path, bool json, const struct results_vet *v, char *err,
                    size_t errlen);

/*
 * Print a plan index's answer table (/plan: per choice the smallest passing
 * size, GPUs, cost per 30 days, binding gate and margin, the size below, runs,
 * search) and the answer. Returns 0, or a negative code with err filled.
 */
#define SWEEPIDX_MAX_CHOICES 100000
int planidx_print(FILE *out, const char *path, const struct results_vet *v, char *err,
                  size_t errlen);

/* Each choice's answer (its size value, NaN for none) into size_value[0..n) and the number of
 * choices into *nchoices. 0, -ENOENT (no /plan: a sweep's index) or < 0. */
int planidx_answers(const char *path, const struct results_vet *v, double *size_value, size_t n,
                    size_t *nchoices);

/* Which points of an index a command takes: by number and/or by axis value (all must hold). */
#define SWEEPIDX_SEL_MAX 64
struct sweepidx_sel {
    size_t npoints, nwhere;
    size_t points[SWEEPIDX_SEL_MAX];
    const char *where[SWEEPIDX_SEL_MAX]; /* "PATH=VALUE": axis PATH has the text VALUE */
};

/* The points chosen, each with its results file and a label of its axis values. */
struct sweepidx_points {
    size_t n;
    size_t *point; /* point numbers */
    char **path;   /* results file (the index's folder + its file name) */
    char **label;  /* "policy.name=kueue cluster.nodes=4" */
    bool *done;    /* a complete results file exists */
    bool complete; /* the index says every point is done */
    char *kind;    /* SWEEPIDX_KIND or SWEEPIDX_KIND_PLAN */
};

/*
 * The points of index `path` that sel chooses (sel NULL or empty: every point)
 * into *out (release with sweepidx_points_release). Returns 0; -EINVAL with err
 * filled when a --where names no axis of the index or a point number is out of
 * range; -ENOENT/-EIO for an unreadable index. No point chosen is not an error
 * (out->n = 0).
 */
int sweepidx_select(const char *path, const struct results_vet *v, const struct sweepidx_sel *sel,
                    struct sweepidx_points *out, char *err, size_t errlen);

void sweepidx_points_release(struct sweepidx_points *p);

#endif
