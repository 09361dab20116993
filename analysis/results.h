/*
 * results.h — a results file read back as tables of metrics: headline
 * metrics (/summary), per-service latency and SLO figures (/services), the
 * share of GPU-time by state (/gpus), training outcomes (/jobs) and the
 * node pools of a mixed fleet (/pools/<name>, the same keys as /summary).
 *
 * A file is either a single run (flat layout) or a replicated run (groups
 * /rep0000, /rep0001, ... each with the flat layout; docs/results.md). Every
 * metric holds one value per replication and their summary (mean and 95 %
 * Student-t interval; no interval for a single run). A metric missing from a
 * file (older or newer schema) has s.n = 0 and is shown as "-"; summary
 * attributes this reader does not know are kept too (label = key), so new
 * schema columns flow into report, compare and check without code changes.
 * Units and labels come from the file (schema 2: "<key>.unit" and
 * "<key>.label" beside each figure; unit "1", a fraction, is shown as %);
 * files of schema 1 use the reader's table for the figures it knows and
 * print other figures without a unit: a unit is never guessed from a key.
 */
#ifndef TIDESIM_RESULTS_H
#define TIDESIM_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "analysis/h5read.h"
#include "analysis/stats.h"

/* Which direction is an improvement: compare and check --against use it. */
enum results_better { RESULTS_NEUTRAL = 0, RESULTS_HIGHER = 1, RESULTS_LOWER = -1 };

struct results_metric {
    char *key;                  /* attribute / dataset name (owned) */
    const char *label;          /* human label (static, or own_label) */
    const char *unit;           /* unit of the displayed value (static or own_unit; "" = none) */
    char *own_label, *own_unit; /* from the file's "<key>.label" / "<key>.unit" (owned) */
    char *kept;                 /* label and unit as results_open's child sent them (owned) */
    double scale;               /* displayed value = stored value × scale (100 for shares in %) */
    int better;                 /* enum results_better */
    double *values;             /* one per replication, NaN when absent (owned) */
    struct stats_summary s;
};

struct results_table {
    struct results_metric *m;
    size_t n;
};

struct results_service {
    char *name;
    char *board;            /* a pool's board (/pools/<name> gpu), NULL for a service (owned) */
    char *sharing;          /* a pool's sharing mode (/pools/<name> sharing), NULL when absent
                               (a service, or a file written before pools had it; owned) */
    struct results_table t; /* arrived, dropped, mean_ms, p50_ms, ... slo_met */
};

struct results_src; /* the open file: its session, its columns (results.c) */

struct results {
    char *path;
    struct results_src *src; /* open for the life of r: read once, by results_col */
    char *scenario_name, *policy, *gpu, *sharing, *version, *git_commit; /* NULL when absent */
    double seed;     /* first replication's seed (NaN when absent) */
    double *seeds;   /* each replication's seed (reps of them; NaN when absent; owned) */
    bool replicated; /* /rep0000 layout */
    size_t reps;     /* replications (1 for a single run) */
    bool complete;   /* /meta complete (every replication complete) */
    double sim_time_reached_s, duration_s, gpus, wall_seconds, events;
    double warmup_s; /* /summary warmup_s: headline figures cover [warmup_s, duration_s] (NaN: 0) */
    double *rep_gpus; /* each replication's /summary gpus (reps of them; NaN when absent) */
    struct results_table headline; /* /summary */
    struct results_service *svcs;  /* /services/<name> */
    size_t nsvcs;
    struct results_service *pools; /* /pools/<name> (cluster.pools; none otherwise) */
    size_t npools;
    struct results_service *queues; /* /queues/<name> (kueue manifests; none otherwise) */
    size_t nqueues;
    struct results_table gpu_states; /* share of offered GPU-time per /gpus/<state>_s */
    struct results_table training;   /* jobs by outcome, preemptions, summed job seconds */
};

/*
 * What the commands read of a results file after results_open, in one place:
 * every column of every table that report (its per-day table), check (the
 * backlog gate), compare (per-day), plot and the HTML report (charts) read,
 * relative to a replication's root (the file, or /repNNNN). In `group`, "*"
 * stands for each name results_open found there (services, pools, queues and
 * their flavors). results_open's child process (the preflight) reads all of
 * it, with the HTML report's /meta texts (results_meta_text), and sends it to
 * the command's process; results_col hands out only what the child sent, and
 * refuses a column that is not listed here for the command.
 */
enum {
    RESULTS_BY_REPORT = 1,
    RESULTS_BY_CHECK = 2,
    RESULTS_BY_COMPARE = 4,
    RESULTS_BY_PLOT = 8,
    RESULTS_BY_HTML = 16, /* the HTML report inlines the charts of plot */
    RESULTS_BY_ALL = 31,
};
struct results_read {
    const char *group; /* a table under the root; a component "*" is any name */
    const char *name;  /* a column (1-D dataset) of it */
    unsigned by;       /* RESULTS_BY_* */
};
extern const struct results_read results_reads[];
extern const size_t results_nreads;

/*
 * Read path into *r (zeroed first). The file is not trusted (analysis/h5read.h):
 * its structure is checked before its data are read (groups are groups, the
 * columns of each table are float datasets of equal length within the
 * reader's limits, attributes hold one value of the expected type). It is read
 * in a child process (h5_rd_preflight), which sends what it read back: this
 * process makes no libhdf5 call on the file (results.c, "the child's read").
 * Returns 0; -ENOENT when the file cannot be opened as HDF5; -EINVAL when it
 * is not a tidesim results file; -EIO when an object is refused; -ENOMEM.
 * err gets a message naming the file and the object ("r.h5: /summary/util_busy:
 * expected a scalar numeric attribute, found an array of 3"). On failure *r
 * holds nothing to release.
 */
int results_open(struct results *r, const char *path, char *err, size_t errlen);

/*
 * A child's verdict on a file, kept between results_vet and
 * results_open_vetted: the file's identity when the child read it, the reads
 * it made, its code and message.
 */
struct results_vet {
    struct stat st;
    bool known; /* a verdict on a results file (false: none, or the other kind) */
    bool other; /* a verdict on the other kind of file (is_other): its read's code and message */
    unsigned by;
    int rc;
    char why[512];
    int ship; /* what the child read, for results_open_vetted or the other kind's reader
                 (an open file, answer.h; -1 or 0: none) */
};

/*
 * The child's read of path, for a command that must first know what kind of
 * file it was handed (sweepidx_is_index_vet): in a child process,
 * is_other(path, ship, why, n), which returns 0 when path is no file of the
 * other kind, 1 when it is one and its reader read everything it reads of one
 * and wrote its answer to ship (answer.h), or a negative code with its message
 * in why when that reader refused it; for the other kind results_vet returns
 * true and *v keeps that verdict and answer (v->other, v->rc 0 or -EIO, v->why,
 * v->ship) for the other kind's reader (sweepidx.c). Else the same child makes
 * the read results_open_for(path, by) makes in its child, its verdict and
 * answer kept in *v for results_open_vetted. No libhdf5 call is made in this
 * process. Release *v with results_vet_release.
 */
bool results_vet(const char *path, unsigned by,
                 int (*is_other)(const char *path, int ship, char *why, size_t n),
                 struct results_vet *v);

/*
 * Whether v is a verdict on the file at path as it is now (device, inode,
 * size, modification and change times as when the child read it).
 */
bool results_vet_current(const struct results_vet *v, const char *path);

/* Close what results_vet keeps of the child's read (v->ship); v stays a verdict. */
void results_vet_release(struct results_vet *v);

/*
 * results_open_for, taking v's verdict instead of starting a child of its
 * own when v is a verdict on this file (still the one read: device, inode,
 * size, times) for these reads or more. v may be NULL: results_open_for.
 */
int results_open_vetted(struct results *r, const char *path, unsigned by,
                        const struct results_vet *v, char *err, size_t errlen);

/*
 * results_open for a command that reads, after results_open, only the columns
 * results_reads lists for `by` (RESULTS_BY_*, or 0: none): its child reads
 * those (rather than every command's), and results_col refuses the others.
 * results_open is results_open_for(..., RESULTS_BY_ALL, ...).
 */
int results_open_for(struct results *r, const char *path, unsigned by, char *err, size_t errlen);

/*
 * Whether results_open_for(path, by) would open path and its /meta complete
 * is 1, read in a child process (no libhdf5 call in this one): false for an
 * absent, damaged, partial or hostile file, or one libhdf5 crashed or hung on.
 */
bool results_complete(const char *path, unsigned by);

/*
 * results_open for a results file held in memory, buf[0..n), named name in
 * r->path and in messages, WITHOUT the child process: libhdf5 reads the bytes
 * in this process, so a file on which libhdf5 itself crashes crashes the
 * caller. For the fuzz harness only (fuzz/targets.c: the fuzzer catches the
 * crash, and skips a fork and a file per input); anything reading a file from
 * outside uses results_open. The bytes are borrowed, not copied: they must
 * outlive r, because report, check and compare read columns later
 * (results_col; every column results_reads lists may be read). Same returns
 * as results_open.
 */
int results_open_image(struct results *r, const char *name, const void *buf, size_t n, char *err,
                       size_t errlen);

/*
 * What results_open's child sends the command's process (results.c, "the child's read"),
 * for tests and the fuzz harness, which read a file in a process of their own:
 * results_answer writes r, a file read (and results_read_all'd) in this process, to fd from
 * its current offset (0 or -errno); results_from_answer decodes buf[0..n) into *r (zeroed
 * first) for a command that reads `by`, refusing anything that is not such an answer whole
 * (0, or -EIO / -ENOMEM with err naming path; *r then holds nothing).
 */
int results_answer(const struct results *r, int fd);
int results_from_answer(struct results *r, const char *path, unsigned by, const void *buf, size_t n,
                        char *err, size_t errlen);

/*
 * Column `name` of table `group` (relative to replication rep's root; a pair
 * results_reads lists) of r's file, read once and kept: *v points into r (valid
 * until results_release), *n values. The file stays open from results_open to
 * results_release (one open per file and command), and a column results_open
 * checked is read through the dataset it opened then. Returns 0; -ENOENT when
 * the group or column is absent; -EPERM for a pair results_reads does not list
 * (a bug of the caller); or the refusal (results_why says why).
 */
int results_col(const struct results *r, size_t rep, const char *group, const char *name,
                const double **v, size_t *n);

/*
 * The HTML report's texts of /meta (of /rep0000/meta when /meta lacks the
 * scenario): "scenario" (the scenario's YAML, up to H5READ_MAX_TEXT bytes),
 * "host", "wall_start", "scenario_path". *s points into r, or is NULL when
 * absent or refused (those texts are informative: a refusal is no error here,
 * as before; results_open's child refuses the file for it). Only for a file
 * opened for RESULTS_BY_HTML (NULL otherwise).
 */
void results_meta_text(const struct results *r, const char *name, const char **s);

/* The first refusal of r's reader ("" when none), object path first. */
const char *results_why(const struct results *r);

/*
 * Read everything results_reads lists for `by` (each replication, each name
 * "*" stands for), and the /meta texts when by has RESULTS_BY_HTML: what
 * results_open's child does after results_open's own read, so that every
 * later read of a command was made there first. Returns 0 or the first
 * refusal (results_why). Absent columns are no error.
 */
int results_read_all(const struct results *r, unsigned by);

/*
 * For tests: call fn(path, arg) for each column of r's file (absolute path,
 * "/rep0000/timeseries/util_busy") a command asked for through results_col
 * (asked true), or that r read or looked up in vain (asked false: absent
 * or refused; results_open's and results_read_all's too; a column
 * results_open only checked is not counted), and return how many there were.
 */
size_t results_cols(const struct results *r, bool asked, void (*fn)(const char *path, void *arg),
                    void *arg);

/*
 * Make node pool `name`'s figures (/pools/<name>) the headline table, so the
 * gates and comparisons of the cluster apply to the pool (check --pool,
 * compare --pool): utilisation, slo_share (of the requests its replicas
 * served), training_gpu_hours, share_fragmented, energy and cost. Services
 * stay as they are (they are not split by pool). Returns 0, or -ENOENT when
 * the file has no such pool (nothing changed).
 */
int results_use_pool(struct results *r, const char *name);

/* Free everything r owns (a zeroed struct is fine). */
void results_release(struct results *r);

/* The metric `key` of a table, or NULL when the table has no such key. */
const struct results_metric *results_table_find(const struct results_table *t, const char *key);

/* A metric's label: its label, or its key when it has none. */
const char *results_label(const struct results_metric *m);

/*
 * Format stored value v of metric m for display (scaled, unit-appropriate
 * precision, no unit); "-" for NaN. Always NUL-terminates buf.
 */
void results_format(char *buf, size_t n, const struct results_metric *m, double v);

/* HDF5 root group name of replication i of a file ("/" for a single run). buf ≥ 16 bytes. */
void results_rep_root(const struct results *r, size_t i, char *buf, size_t n);

#endif
