/*
 * arrivals.h — inference arrival traces: file adapters and time handling.
 *
 * Every adapter is an arrival_source (traces/source.h) that streams its file
 * through csvstream: memory stays flat however long the trace. Times are µs
 * since the run's t = 0 (local midnight of day 0, see sim/core/simtime.h).
 *
 * Time handling, applied in this order to every record of every adapter:
 *   1. trace time: wall-clock stamps (in `tz_s` unless they carry a zone)
 *      minus `origin`; numeric stamps in their unit minus `origin`.
 *      Default origin: local midnight of the first record's day (wall clock),
 *      0 (numeric stamps).
 *   2. loop: with `loop`, when the file ends it is replayed shifted by
 *      `loop_period` (0 = the trace span rounded up to whole days), again and
 *      again until `clip_end` (which must then be set).
 *   3. rate ×k (`scale`): k < 1 keeps each arrival with probability k
 *      (independent thinning; a Poisson process stays Poisson); k > 1 emits
 *      floor(k) copies plus one more with probability frac(k): the original at
 *      its time, the extra ones uniform between it and the next record
 *      (superposition; tokens are copied). The mean rate is exactly ×k; the
 *      shape of the diurnal curve is kept.
 *   4. `offset` is added.
 *   5. clip: arrivals before `clip_start` are dropped; the stream ends at the
 *      first arrival >= `clip_end` (0 = no end).
 *
 * Bad rows: with `skip_bad` a malformed record is counted (arrivals_skipped())
 * and skipped; otherwise next() returns -EINVAL with
 * "PATH:LINE: column 'X': expected ..., got '...'". Timestamps that go
 * backwards are always malformed records.
 */
#ifndef TIDESIM_ARRIVALS_H
#define TIDESIM_ARRIVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/source.h"
#include "traces/tfield.h"

struct trace_time_opts {
    int32_t tz_s;                  /* zone of wall-clock stamps without one, s east of UTC */
    const char *origin;            /* trace time mapped to t = 0; NULL = default (see above) */
    sim_time offset;               /* µs added after loop and scale */
    double scale;                  /* rate ×k; 0 ⇒ 1 */
    bool loop;                     /* replay until clip_end */
    sim_time loop_period;          /* µs; 0 = span rounded up to whole days */
    sim_time clip_start, clip_end; /* keep [start, end); end 0 = no end */
    uint64_t seed, stream_id;      /* draws for scaling and synthesis */
    bool skip_bad;                 /* skip malformed rows instead of failing */
    /* ServeGen: give each arrival prompt/output lengths drawn from its client's
     * <client>-dataset.json beside <client>-trace.csv, when there is one (traces/tokens.h;
     * a draw stream of its own, so arrival times do not change). */
    bool tokens;
};

/* Defaults: UTC, default origin, no offset, ×1, no loop, no clip, fail on bad rows. */
void trace_time_opts_init(struct trace_time_opts *o);

/* Column mapping of a per-request CSV. */
struct arrival_csv_map {
    const char *time_col;  /* required */
    enum tfield_unit unit; /* how time_col is written */
    const char *in_col;    /* prompt tokens column, NULL = unknown (0) */
    const char *out_col;   /* output tokens column, NULL = unknown (0) */
};

/* Column mapping of a per-interval count CSV ("minute,requests"). */
struct arrival_counts_map {
    const char *time_col; /* interval start */
    enum tfield_unit unit;
    const char *count_col; /* requests in the interval (non-negative integer) */
    sim_time interval;     /* µs; 0 ⇒ 60 s */
};

/*
 * Constructors. Each returns a source the caller owns (arrival_source_destroy),
 * or NULL with err filled (missing file, empty file, missing column, bad
 * origin, loop without clip_end, out of memory). Errors in records surface
 * from arrival_source_next().
 */

/* Azure LLM inference trace 2023: TIMESTAMP (wall clock, 100 ns
 * digits),ContextTokens,GeneratedTokens. */
struct arrival_source *arrivals_azure_create(const char *path, const struct trace_time_opts *o,
                                             struct trace_err *err);

/* Any per-request CSV with a header, through a column mapping. */
struct arrival_source *arrivals_csv_create(const char *path, const struct arrival_csv_map *m,
                                           const struct trace_time_opts *o, struct trace_err *err);

/*
 * One ServeGen client file (headerless `timestamp,rate,cv,pattern,shape,scale`,
 * 600 s windows). Within a window arrivals form a renewal process whose gaps
 * are Gamma(shape, scale) or Weibull(shape, scale) draws rescaled so the mean
 * gap is exactly 1/rate; the first arrival is at a uniform fraction of a gap
 * after the window start; an empty pattern (or rate 0) is a silent window.
 * With o->tokens and a <client>-dataset.json beside the file, each arrival
 * carries prompt/output lengths drawn from the file's token PMF of the 6-hour
 * window holding it (tok_servegen_draw); otherwise its lengths are 0 (unknown).
 * Timestamps are seconds since local midnight of day 0 (checked against the
 * m-small sample: its hourly minimum is at 05:00 and maximum at 20:00 with no
 * shift, matching the ServeGen README's "span(72000, 75600) = 20:00-21:00").
 */
struct arrival_source *arrivals_servegen_create(const char *path, const struct trace_time_opts *o,
                                                struct trace_err *err);

/*
 * All `*-trace.csv` client files of a ServeGen folder, merged in time order
 * (each client draws from its own stream derived from o->stream_id and its file name).
 */
struct arrival_source *arrivals_servegen_dir_create(const char *dir,
                                                    const struct trace_time_opts *o,
                                                    struct trace_err *err);

/*
 * Per-interval counts: each row's count of arrivals is placed in
 * [start, start + interval) as a Poisson process conditioned on that count
 * (sorted uniform points), so the counts are replayed exactly.
 */
struct arrival_source *arrivals_counts_create(const char *path, const struct arrival_counts_map *m,
                                              const struct trace_time_opts *o,
                                              struct trace_err *err);

/*
 * Superpose n sources into one stream in time order (ties: lower index first),
 * with a binary heap of the n heads. Takes ownership of srcs[0..n) (also on
 * failure: they are destroyed). Returns NULL on allocation failure.
 */
struct arrival_source *arrivals_merge_create(struct arrival_source **srcs, size_t n);

/* Malformed rows skipped so far (0 for sources not made here). */
uint64_t arrivals_skipped(const struct arrival_source *src);

/* Message of the first skipped row ("" if none). */
const char *arrivals_first_skip(const struct arrival_source *src);

/* Data rows read so far (all passes of a loop). */
uint64_t arrivals_rows(const struct arrival_source *src);

/*
 * Sum of the `rate` column (req/s) of every `*-trace.csv` in a ServeGen folder,
 * window by window: *rates (caller frees) gets *nwin values, window i starting
 * at i·600 s; *nfiles = client files read. Returns 0 or a negative code with err.
 */
int servegen_dir_rates(const char *dir, double **rates, size_t *nwin, size_t *nfiles,
                       struct trace_err *err);

/* Sorted list of the `*-trace.csv` files in dir (caller frees each and the array). */
int servegen_dir_list(const char *dir, char ***paths, size_t *n, struct trace_err *err);

#endif
