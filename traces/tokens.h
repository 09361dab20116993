/*
 * tokens.h — prompt and output lengths of LLM requests: named distributions
 * fitted to public traces, parametric ones, and ServeGen's per-window token
 * PMFs (dataset.json).
 *
 * Room traces/: includes only sim/core/ of ours.
 *
 * A named distribution ("azure-conv", "azure-code", "servegen-m-small") is
 * the empirical quantile function of its trace at the probabilities tok_grid
 * (dense in the tail), linear between them (scripts/gen_tokens.py says how
 * each was read). A draw is q(U) for U uniform on [0, 1), rounded to the
 * nearest whole token, at least 1, then clamped to [min, max] when given.
 * Parametric: fixed N, or lognormal(median, sigma) rounded the same way.
 *
 * ServeGen dataset.json (traces/data/servegen/SOURCE.md): a JSON object
 * keyed by window start in seconds (6-hour windows), each holding
 * "input_tokens" and "output_tokens" as strings of Python dict literals
 * {tokens: probability}. tok_servegen_load() reads one file; a window with an
 * empty dict has no data and draws fall back to the nearest earlier window
 * with data (else the first one with data).
 *
 * Lifecycle: tok_dist is plain data (named tables are static const);
 * tok_servegen_load() returns a table the caller frees with
 * tok_servegen_free(NULL ok).
 */
#ifndef TIDESIM_TOKENS_H
#define TIDESIM_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/rng.h"
#include "traces/source.h"

#define TOK_GRID_N  62
#define TOK_NAMED_N 3

enum tok_kind { TOK_NONE, TOK_FIXED, TOK_LOGNORMAL, TOK_EMPIRICAL };

struct tok_dist {
    enum tok_kind kind;
    double fixed;      /* TOK_FIXED */
    double mu, sigma;  /* TOK_LOGNORMAL: of log(tokens) */
    const double *q;   /* TOK_EMPIRICAL: quantiles at tok_grid */
    uint32_t min, max; /* clamp (0 = none) */
};

struct tok_named {
    const char *name;
    const double *in, *out;   /* quantiles at tok_grid */
    double mean_in, mean_out; /* of the trace itself */
};

extern const double tok_grid[TOK_GRID_N];
extern const struct tok_named tok_named_table[TOK_NAMED_N];

/* Named table by name (case-insensitive), or NULL. */
const struct tok_named *tok_named_find(const char *name);

/* "azure-conv, azure-code, servegen-m-small" into buf (snprintf convention). */
size_t tok_named_list(char *buf, size_t len);

/* Draw one length (>= 1). A TOK_NONE distribution draws 1. */
uint32_t tok_draw(const struct tok_dist *d, struct rng *r);

/* Mean length of d before rounding and clamping (lognormal: exp(mu + sigma²/2)). */
double tok_mean(const struct tok_dist *d);

/* The largest length d can draw (its clamp, or its table's top; lognormal: 0 = unbounded). */
uint32_t tok_max(const struct tok_dist *d);

/* ServeGen per-window token PMFs of one client. */
struct tok_servegen;

/*
 * Read path (a dataset.json). Returns the table, or NULL with err naming the
 * file, line and column of the first problem (or "out of memory").
 */
struct tok_servegen *tok_servegen_load(const char *path, struct trace_err *err);
void tok_servegen_free(struct tok_servegen *t);

/* Windows with data (for tests and inspection). */
size_t tok_servegen_windows(const struct tok_servegen *t);

/*
 * Draw a prompt and an output length for a request at trace time t_s
 * (seconds, the files' own clock). Returns false (nothing drawn) when the
 * file has no window with data.
 */
bool tok_servegen_draw(const struct tok_servegen *t, double t_s, struct rng *r, uint32_t *in,
                       uint32_t *out);

#endif
