/* snapshot.c — read a warm-start snapshot of running training jobs (traces/snapshot.h). */
#include "traces/snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/csvstream.h"
#include "traces/tfield.h"

/* Columns by name; required ones must be in the header. */
enum { C_ID, C_QUEUE, C_PRIORITY, C_GPUS, C_POOL, C_NODE, C_STARTED, C_REMAINING, C_AGE, C_N };
static const char *const col_names[C_N] = {"id",   "queue",     "priority",    "gpus",      "pool",
                                           "node", "started_s", "remaining_s", "ckpt_age_s"};
static const bool col_required[C_N] = {true, false, false, true, false, false, true, true, false};

struct reader {
    struct csvstream *cs;
    int col[C_N];
    struct trace_err *err;
};

static const char *field(const struct reader *r, int c)
{
    return r->col[c] < 0 ? "" : csvstream_field(r->cs, (size_t)r->col[c]);
}

static int bad(const struct reader *r, int c, const char *expected)
{
    return csvstream_field_error(r->cs, r->err, (size_t)r->col[c], expected);
}

/* Seconds in [lo, SIM_TIME_LIMIT] (lo_open: > lo) into *us. */
static int seconds(const struct reader *r, int c, bool lo_open, sim_time *us)
{
    double v;
    const char *s = field(r, c);
    double lim = sim_time_to_sec(SIM_TIME_LIMIT);
    if (tfield_f64(s, &v) < 0 || v < 0 || (lo_open && v <= 0) || v > lim)
        return bad(
            r, c, lo_open ? "seconds > 0 (at most 100 years)" : "seconds >= 0 (at most 100 years)");
    *us = sim_time_from_sec(v);
    if (lo_open && *us == 0)
        return bad(r, c, "seconds > 0 (at least 1 us)");
    return 0;
}

static int integer(const struct reader *r, int c, int64_t lo, int64_t hi, const char *expected,
                   int64_t *out)
{
    if (tfield_i64(field(r, c), out) < 0 || *out < lo || *out > hi)
        return bad(r, c, expected);
    return 0;
}

/* One row into j (node/pool checks against g; room per node is checked by the caller). */
/* Cards of cluster-wide node n (its pool's node size). */
static uint32_t node_cards(const struct snap_geom *g, int64_t n)
{
    for (uint32_t i = 0; i < g->npools; i++)
        if (n >= g->pool_first_node[i] && n < (int64_t)g->pool_first_node[i] + g->pool_nodes[i])
            return g->pool_per_node[i];
    return 0;
}

static int read_row(const struct reader *r, const struct snap_geom *g, struct snap_job *j)
{
    int64_t v;
    int rc;
    memset(j, 0, sizeof(*j));
    j->line = csvstream_line(r->cs);
    if ((rc = integer(r, C_ID, 0, INT64_MAX, "a non-negative integer job id", &v)))
        return rc;
    j->id = (uint64_t)v;
    const char *q = field(r, C_QUEUE);
    if (strlen(q) >= sizeof(j->queue))
        return bad(r, C_QUEUE, "a queue name of at most 31 bytes");
    memcpy(j->queue, q, strlen(q) + 1);
    if (field(r, C_PRIORITY)[0]) {
        if ((rc = integer(r, C_PRIORITY, INT32_MIN, INT32_MAX, "an integer priority", &v)))
            return rc;
        j->priority = (int32_t)v;
    }
    if ((rc = integer(r, C_GPUS, 1, JOB_MAX_GPUS, "whole GPUs, 1..65536", &v)))
        return rc;
    j->gpus = (uint32_t)v;
    j->pool = -1;
    const char *p = field(r, C_POOL);
    uint64_t pool_gpus = 0;
    if (p[0]) {
        for (uint32_t i = 0; i < g->npools; i++)
            if (strcmp(p, g->pool_names[i]) == 0)
                j->pool = (int32_t)i;
        if (j->pool < 0) {
            char want[256] = "";
            size_t at = 0;
            for (uint32_t i = 0; i < g->npools && at < sizeof(want); i++) {
                int k =
                    snprintf(want + at, sizeof(want) - at, "%s%s", i ? ", " : "", g->pool_names[i]);
                at += k > 0 ? (size_t)k : 0;
            }
            char exp[300];
            snprintf(exp, sizeof(exp), "a pool of cluster.pools (%s)", want);
            return bad(r, C_POOL, exp);
        }
        pool_gpus = (uint64_t)g->pool_nodes[j->pool] * g->pool_per_node[j->pool];
    } else {
        for (uint32_t i = 0; i < g->npools; i++)
            pool_gpus += (uint64_t)g->pool_nodes[i] * g->pool_per_node[i];
    }
    if (j->gpus > pool_gpus) {
        char exp[160];
        snprintf(exp, sizeof(exp), "at most the %llu GPUs of %s", (unsigned long long)pool_gpus,
                 p[0] ? "its pool" : "the cluster");
        return csvstream_field_error(r->cs, r->err, (size_t)r->col[C_GPUS], exp);
    }
    j->node = -1;
    if (field(r, C_NODE)[0]) {
        uint32_t first = 0, nodes = 0;
        if (j->pool >= 0) {
            first = g->pool_first_node[j->pool];
            nodes = g->pool_nodes[j->pool];
        } else {
            for (uint32_t i = 0; i < g->npools; i++)
                nodes += g->pool_nodes[i];
        }
        char exp[160];
        snprintf(exp, sizeof(exp), "a node index 0..%u (%s)", nodes ? nodes - 1 : 0,
                 j->pool >= 0 ? "within its pool" : "of the cluster");
        if ((rc = integer(r, C_NODE, 0, (int64_t)nodes - 1, exp, &v)))
            return rc;
        j->node = (int64_t)first + v;
        if (j->gpus > node_cards(g, j->node)) {
            snprintf(exp, sizeof(exp),
                     "at most the %u GPUs of one node when 'node' is given (leave 'node' empty "
                     "for a job over several nodes)",
                     node_cards(g, j->node));
            return csvstream_field_error(r->cs, r->err, (size_t)r->col[C_GPUS], exp);
        }
    }
    if ((rc = seconds(r, C_STARTED, false, &j->started)) ||
        (rc = seconds(r, C_REMAINING, true, &j->remaining)))
        return rc;
    j->ckpt_age = j->started; /* no checkpoint since it started */
    if (field(r, C_AGE)[0]) {
        if ((rc = seconds(r, C_AGE, false, &j->ckpt_age)))
            return rc;
        if (j->ckpt_age > j->started)
            return bad(r, C_AGE,
                       "seconds between 0 and started_s (a checkpoint taken after "
                       "the job started)");
    }
    return 0;
}

int snapshot_load(const char *path, const struct snap_geom *g, struct snap_job **out, uint32_t *n,
                  struct trace_err *err)
{
    *out = NULL;
    *n = 0;
    struct csvstream_opts o = {.header = true};
    struct reader r = {.cs = csvstream_open(path, &o, err), .err = err};
    if (!r.cs)
        return -EINVAL;
    int rc = 0;
    struct snap_job *v = NULL;
    uint32_t cap = 0, used_n = 0, nodes = 0;
    uint32_t *used = NULL; /* cards taken per node by rows with a node */
    for (uint32_t i = 0; i < g->npools; i++)
        nodes += g->pool_nodes[i];
    for (int c = 0; c < C_N; c++) {
        r.col[c] = csvstream_col(r.cs, col_names[c]);
        if (r.col[c] < 0 && col_required[c]) {
            rc = csvstream_error(r.cs, err,
                                 "column '%s' missing from the header (expected at least "
                                 "id,gpus,started_s,remaining_s)",
                                 col_names[c]);
            goto out;
        }
    }
    used = calloc(nodes ? nodes : 1, sizeof(*used));
    if (!used) {
        rc = -ENOMEM;
        goto out;
    }
    uint64_t total = 0, cluster = 0;
    for (uint32_t i = 0; i < g->npools; i++)
        cluster += (uint64_t)g->pool_nodes[i] * g->pool_per_node[i];
    while ((rc = csvstream_next(r.cs, err)) == 0) {
        if (used_n == SNAPSHOT_MAX_JOBS) {
            rc = csvstream_error(r.cs, err, "more than %u jobs in one snapshot", SNAPSHOT_MAX_JOBS);
            goto out;
        }
        if (used_n == cap) {
            uint32_t nc = cap ? 2 * cap : 64;
            struct snap_job *p = realloc(v, nc * sizeof(*p));
            if (!p) {
                rc = -ENOMEM;
                goto out;
            }
            v = p;
            cap = nc;
        }
        struct snap_job *j = &v[used_n];
        if ((rc = read_row(&r, g, j)))
            goto out;
        for (uint32_t k = 0; k < used_n; k++)
            if (v[k].id == j->id) {
                rc = csvstream_error(r.cs, err, "column 'id': job %llu is already on line %lld",
                                     (unsigned long long)j->id, (long long)v[k].line);
                goto out;
            }
        if (j->node >= 0) {
            uint32_t *u = &used[j->node];
            if (*u + j->gpus > node_cards(g, j->node)) {
                rc = csvstream_error(
                    r.cs, err,
                    "column 'node': node %lld has %u GPUs; the jobs before this "
                    "one hold %u of them, this one asks for %u more",
                    (long long)(j->node - (j->pool >= 0 ? g->pool_first_node[j->pool] : 0)),
                    node_cards(g, j->node), *u, j->gpus);
                goto out;
            }
            *u += j->gpus;
        }
        total += j->gpus;
        if (total > cluster) {
            rc = csvstream_error(r.cs, err,
                                 "column 'gpus': the snapshot's jobs hold %llu GPUs up to this "
                                 "line; the cluster has %llu",
                                 (unsigned long long)total, (unsigned long long)cluster);
            goto out;
        }
        used_n++;
    }
    if (rc == 1)
        rc = 0;
out:
    if (rc == -ENOMEM)
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory reading the snapshot", path);
    free(used);
    csvstream_destroy(r.cs);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = used_n;
    return 0;
}
