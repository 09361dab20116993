/*
 * conf.h — a YAML document tree with source positions, and typed getters
 * whose errors name file, line, column and key.
 *
 * conf_load_file() parses the whole file with libyaml into a small tree of
 * nodes (scalar, map, sequence), each with its 1-based line and column. The
 * scenario loader then reads it through the getters below. Every getter that
 * fails writes one message into err and returns a negative code:
 *
 *   scenarios/x.yaml:12:9: 'gpus_per_node': expected a positive integer, got 'eight'
 *
 * The position is the value's (or, for a missing key, the map's). Unknown keys
 * are errors: conf_check_keys() lists the allowed ones; so are duplicate keys.
 * An alias is resolved to a shallow copy of its anchored node carrying the
 * alias's position; the children are shared (the tree may be a DAG, never a
 * cycle). "<<" merge keys are rejected; tags are ignored; one document per
 * file. The doc owns every node and string (one arena, freed by conf_release).
 *
 * Limits, each an error "path:line:col: <what> (limit N)" at the node that
 * crosses it: nesting depth CONF_LIMIT_DEPTH (counting what aliases stand
 * for), CONF_LIMIT_ALIASES aliases, and CONF_LIMIT_NODES nodes of the tree
 * with every alias expanded (the "billion laughs" defence); files over 16 MiB.
 * Anchors are hashed: loading is linear in the file's size.
 */
#ifndef TIDESIM_CONF_H
#define TIDESIM_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/simtime.h"

#define CONF_LIMIT_DEPTH   64u      /* nested collections */
#define CONF_LIMIT_ALIASES 10000u   /* aliases in one document */
#define CONF_LIMIT_NODES   1000000u /* nodes (keys, values, items) with aliases expanded */

enum conf_kind { CONF_SCALAR, CONF_MAP, CONF_SEQ };

struct conf_node {
    enum conf_kind kind;
    unsigned line, col; /* 1-based position of the node in the file */
    const char *value;  /* CONF_SCALAR: the text ("" for an empty/null value) */
    bool quoted;        /* CONF_SCALAR: written in quotes */
    size_t n;           /* CONF_MAP: pairs; CONF_SEQ: items */
    const char **keys;  /* CONF_MAP: keys[i] */
    unsigned *key_line, *key_col;
    struct conf_node **items; /* CONF_MAP: values; CONF_SEQ: items */
};

struct conf_doc {
    char *path; /* as given, used in messages */
    char *text; /* whole file, NUL-terminated (stored in results /meta) */
    size_t text_len;
    struct conf_node *root; /* NULL for an empty document */
    void *arena;            /* private */
    /*
     * Where nodes grafted onto the tree after parsing came from (sim/override.h):
     * a node or key whose line is CONF_LINE_ORIGIN + k is reported as
     * "origins[k]: 'key': ..." instead of "path:line:col: 'key': ...". The
     * strings and the array live in the arena.
     */
    const char **origins;
    size_t norigins;
};

#define CONF_LINE_ORIGIN 0xF0000000u

struct conf_err {
    char msg[512];
};

/* Format err->msg as "path:line:col: 'key': <fmt...>". key may be NULL. Returns -EINVAL. */
int conf_errf(struct conf_err *err, const struct conf_doc *doc, const struct conf_node *at,
              const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Load and parse a file. On failure returns -ENOENT (cannot open: message
 * "path: cannot open: <strerror>"; other open/read failures return their own
 * -errno), -EFBIG (over 16 MiB: "path: file too large (more than 16 MiB)"),
 * -EINVAL (YAML syntax: "path:line:col: <problem>"; also duplicate keys,
 * undefined aliases, "<<" merge keys, several documents, the limits above) or -ENOMEM, and the
 * doc is released (all fields zero). doc need not be initialised; err may be NULL.
 * An empty document (nothing, comments only, or a bare "---") has root == NULL.
 */
int conf_load_file(struct conf_doc *doc, const char *path, struct conf_err *err);

/* Same from a string (copied into doc->text); name is used in messages ("<string>" if NULL). */
int conf_load_string(struct conf_doc *doc, const char *name, const char *text,
                     struct conf_err *err);

/*
 * Same for a multi-document stream (Kubernetes manifests, "---" between
 * objects): doc->root is a sequence (at 1:1) whose items are the non-empty
 * documents' roots in file order, or NULL when every document is empty.
 * Anchors are local to their document. Errors as above.
 */
int conf_load_file_multi(struct conf_doc *doc, const char *path, struct conf_err *err);
int conf_load_string_multi(struct conf_doc *doc, const char *name, const char *text,
                           struct conf_err *err);

/*
 * conf_load_file_multi of path resolved against the folder of base->path
 * (kept as it is when absolute), for files a scenario names (Kubernetes
 * manifests). A file that cannot be read is reported at node `at` of base,
 * key `key`: "scenario.yaml:40:14: 'manifests': cannot read 'dir/k.yaml':
 * No such file or directory". Other errors as conf_load_file_multi.
 */
int conf_load_relative_multi(struct conf_doc *doc, const struct conf_doc *base,
                             const struct conf_node *at, const char *key, const char *path,
                             struct conf_err *err);

/*
 * size bytes, aligned for any type, owned by the doc (freed by conf_release);
 * NULL when out of memory. For trees edited after parsing (sim/override.c).
 */
void *conf_alloc(struct conf_doc *doc, size_t size);

/* Free everything the doc owns and zero it. No-op on NULL, a zeroed or a released doc. */
void conf_release(struct conf_doc *doc);

/* Value of key in a map, or NULL when absent (or map is NULL / not a map). */
const struct conf_node *conf_get(const struct conf_node *map, const char *key);

/*
 * Require node to be a map whose keys are all in allowed[] (NULL-terminated).
 * An unknown key yields "path:l:c: 'key': unknown key (expected one of: a, b, c)"
 * (the first unknown key in file order, at the key's position); a non-map yields
 * "path:l:c: 'where': expected a mapping, got 'text'" (or "got a sequence").
 * where names the map in messages (may be NULL). A NULL map (absent section) passes.
 * Returns 0 or -EINVAL.
 */
int conf_check_keys(const struct conf_doc *doc, const struct conf_node *map, const char *where,
                    const char *const allowed[], struct conf_err *err);

/*
 * Typed getters. If the key is absent: required ⇒ error "'key': missing (expected …)"
 * at the map's position (no position when map is NULL, e.g. an empty document),
 * otherwise *out is left unchanged (holding the caller's default) and 0 is returned.
 * A bad value ⇒ "path:l:c: 'key': expected <what>, got 'text'" (text cut at 40 bytes
 * or a line break, then "...") or "got a mapping" / "got a sequence". A map that is
 * not a mapping ⇒ "path:l:c: expected a mapping, got …" at its position. On any
 * error *out is unchanged and -EINVAL is returned. Quoted scalars are read like plain
 * ones ("8" is the integer 8).
 *
 * <what> for conf_int: a value that is not a decimal integer ⇒ "a positive integer"
 * (min == 1), "a non-negative integer" (min == 0), else "an integer"; a value out of
 * [min, max] (or missing) ⇒ the same phrase when max == INT64_MAX and min is 0 or 1
 * or INT64_MIN, else "an integer in [min, max]" ("an integer >= min" when max ==
 * INT64_MAX, "an integer <= max" when min == INT64_MIN).
 * conf_double: decimals with optional exponent, no nan/inf/hex; not a number ⇒ "a
 * number"; out of range (or missing) ⇒ "a number in [min, max]" (%g; ">= min" or
 * "<= max" when the other bound is ±HUGE_VAL). conf_bool: true/false/yes/no/on/off,
 * any case ⇒ "true or false". conf_string ⇒ "a string". conf_enum ⇒ "one of: a, b".
 * conf_duration ⇒ "a duration with a unit (e.g. 250ms, 90s, 30m, 2h, 2d)", above
 * SIM_TIME_LIMIT "a duration of at most 100 years", or when below min "a duration
 * >= <min as conf_format_duration writes it>".
 */
int conf_int(const struct conf_doc *doc, const struct conf_node *map, const char *key,
             bool required, int64_t min, int64_t max, int64_t *out, struct conf_err *err);
int conf_double(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                bool required, double min, double max, double *out, struct conf_err *err);
int conf_bool(const struct conf_doc *doc, const struct conf_node *map, const char *key,
              bool required, bool *out, struct conf_err *err);
/* *out points into the doc (valid until conf_release). */
int conf_string(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                bool required, const char **out, struct conf_err *err);
/* One of choices[] (NULL-terminated); *out = its index. */
int conf_enum(const struct conf_doc *doc, const struct conf_node *map, const char *key,
              bool required, const char *const choices[], int *out, struct conf_err *err);
/* A duration with a unit: "250us", "5ms", "90s", "30m", "2h", "2d", "1w", or compound "1h30m". */
int conf_duration(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                  bool required, sim_time min, sim_time *out, struct conf_err *err);

/*
 * Parse a duration string as above into µs. Units: us, ms, s, m or min, h, d,
 * w; terms in strictly decreasing units; decimals allowed ("1.5h", rounded to
 * the nearest µs). Returns 0, or -EINVAL (no unit, unknown unit, sign, empty,
 * overflow of int64 µs) leaving *out unchanged.
 */
int conf_parse_duration(const char *s, sim_time *out);

/*
 * Write t as a compound duration that conf_parse_duration() reads back:
 * 0 ⇒ "0s", 90 s ⇒ "1m30s", 1.5 s ⇒ "1s500ms", 2 days ⇒ "2d" (no weeks).
 * Always NUL-terminates when size > 0 (truncating if needed).
 */
void conf_format_duration(sim_time t, char *buf, size_t size);

#endif
