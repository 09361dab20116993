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

#include "analysis/h5read.h"
#include "analysis/stats.h"

/* Which direction is an improvement: compare and check --against use it. */
enum results_better { RESULTS_NEUTRAL = 0, RESULTS_HIGHER = 1, RESULTS_LOWER = -1 };

struct results_metric {
    char *key;                  /* attribute / dataset name (owned) */
    const char *label;          /* human label (static, or own_label) */
    const char *unit;           /* unit of the displayed value (static or own_unit; "" = none) */
    char *own_label, *own_unit; /* from the file's "<key>.label" / "<key>.unit" (owned) */
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

struct results {
    char *path;
    const void *image; /* results_open_image: the file's bytes (borrowed); NULL: read path */
    size_t image_len;
    char *scenario_name, *policy, *gpu, *sharing, *version, *git_commit; /* NULL when absent */
    double seed;     /* first replication's seed (NaN when absent) */
    double *seeds;   /* each replication's seed (reps of them; NaN when absent; owned) */
    bool replicated; /* /rep0000 layout */
    size_t reps;     /* replications (1 for a single run) */
    bool complete;   /* /meta complete (every replication complete) */
    double sim_time_reached_s, duration_s, gpus, wall_seconds, events;
    double warmup_s; /* /summary warmup_s: headline figures cover [warmup_s, duration_s] (NaN: 0) */
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
 * Read path into *r (zeroed first). The file is not trusted (analysis/h5read.h):
 * its structure is checked before its data are read (groups are groups, the
 * columns of each table are float datasets of equal length within the
 * reader's limits, attributes hold one value of the expected type).
 * Returns 0; -ENOENT when the file cannot be opened as HDF5; -EINVAL when it
 * is not a tidesim results file; -EIO when an object is refused; -ENOMEM.
 * err gets a message naming the file and the object ("r.h5: /summary/util_busy:
 * expected a scalar numeric attribute, found an array of 3"). On failure *r
 * holds nothing to release.
 */
int results_open(struct results *r, const char *path, char *err, size_t errlen);

/*
 * results_open for a results file held in memory, buf[0..n), named name in
 * r->path and in messages, WITHOUT the child process: libhdf5 reads the bytes
 * in this process, so a file on which libhdf5 itself crashes crashes the
 * caller. For the fuzz harness only (fuzz/targets.c: the fuzzer catches the
 * crash, and skips a fork and a file per input); anything reading a file from
 * outside uses results_open. The bytes are borrowed, not copied: they must
 * outlive r, because report, check and compare read the file again
 * (results_reopen). Same returns as results_open.
 */
int results_open_image(struct results *r, const char *name, const void *buf, size_t n, char *err,
                       size_t errlen);

/*
 * Open r's file again for a session (analysis/h5read.h): r->path, or the bytes
 * of results_open_image. The file id (the caller closes it), or a negative
 * value with rd->rc and rd->why set. The reports' later reads (per-day
 * figures, the backlog gate, the HTML report's scenario, plots) go through it.
 */
hid_t results_reopen(const struct results *r, struct h5_rd *rd);

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
