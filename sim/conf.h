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
 * are errors: conf_check_keys() lists the allowed ones. Anchors and aliases
 * are resolved by copying; tags are ignored. The doc owns every node and string.
 */
#ifndef TIDESIM_CONF_H
#define TIDESIM_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/simtime.h"

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
};

struct conf_err {
    char msg[512];
};

/* Format err->msg as "path:line:col: 'key': <fmt...>". key may be NULL. Returns -EINVAL. */
int conf_errf(struct conf_err *err, const struct conf_doc *doc, const struct conf_node *at,
              const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Load and parse a file. On failure returns -ENOENT (cannot open: message
 * "path: cannot open: <strerror>"), -EINVAL (YAML syntax: "path:line:col: <problem>")
 * or -ENOMEM, and the doc is released.
 */
int conf_load_file(struct conf_doc *doc, const char *path, struct conf_err *err);

/* Same from a string; name is used in messages. */
int conf_load_string(struct conf_doc *doc, const char *name, const char *text,
                     struct conf_err *err);

void conf_release(struct conf_doc *doc);

/* Value of key in a map, or NULL when absent (or map is NULL / not a map). */
const struct conf_node *conf_get(const struct conf_node *map, const char *key);

/*
 * Require node to be a map whose keys are all in allowed[] (NULL-terminated).
 * An unknown key yields "path:l:c: 'key': unknown key (expected one of: a, b, c)";
 * a non-map yields "expected a mapping". where names the map in messages (may be NULL).
 */
int conf_check_keys(const struct conf_doc *doc, const struct conf_node *map, const char *where,
                    const char *const allowed[], struct conf_err *err);

/*
 * Typed getters. If the key is absent: required ⇒ error "'key': missing (expected …)",
 * otherwise *out is left unchanged (holding the caller's default) and 0 is returned.
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

/* Parse a duration string as above. Returns 0 or -EINVAL. */
int conf_parse_duration(const char *s, sim_time *out);

#endif
