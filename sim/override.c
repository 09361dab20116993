/*
 * override.c — `--set key.path=value` applied to a parsed YAML tree
 * (sim/override.h).
 *
 * The value is parsed by conf_load_string() into a document of its own, then
 * copied into the scenario document's arena with every position rewritten to
 * CONF_LINE_ORIGIN + k (k: the override's index in doc->origins), which is
 * how conf_errf() knows to name the override instead of a file position.
 */
#include "sim/override.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_MAX_NODES ((size_t)1 << 16) /* a value expanding past this is refused */
#define COPY_MAX_DEPTH 64

static int set_errf(struct conf_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int set_errf(struct conf_err *err, const char *fmt, ...)
{
    va_list ap;

    if (err) {
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

int override_check_syntax(const char *set, struct conf_err *err)
{
    const char *eq = strchr(set, '=');
    size_t n = eq ? (size_t)(eq - set) : 0;
    bool ok = eq && n > 0 && n <= OVERRIDE_PATH_MAX && set[0] != '.' && set[n - 1] != '.';

    for (size_t i = 1; ok && i < n; i++)
        ok = !(set[i] == '.' && set[i - 1] == '.');
    for (size_t i = 0; ok && i < n; i++)
        ok = set[i] != ' ' && set[i] != '\t' && set[i] != '\n';
    if (ok)
        return 0;
    return set_errf(err, "--set '%.100s': expected KEY.PATH=VALUE, e.g. cluster.nodes=8", set);
}

static struct conf_node *new_node(struct conf_doc *doc, enum conf_kind kind, unsigned line)
{
    struct conf_node *n = conf_alloc(doc, sizeof *n);

    if (n) {
        memset(n, 0, sizeof *n);
        n->kind = kind;
        n->line = line;
        n->col = 1;
        n->value = "";
    }
    return n;
}

static char *doc_strdup(struct conf_doc *doc, const char *s)
{
    size_t len = strlen(s);
    char *p = conf_alloc(doc, len + 1);

    if (p)
        memcpy(p, s, len + 1);
    return p;
}

/*
 * Room for cap pairs (maps) or items (seqs) in n's arrays, keeping the first
 * n->n. Returns 0 or -ENOMEM.
 */
static int reserve(struct conf_doc *doc, struct conf_node *n, size_t cap)
{
    struct conf_node **items = conf_alloc(doc, cap * sizeof *items);

    if (!items)
        return -ENOMEM;
    if (n->n)
        memcpy(items, n->items, n->n * sizeof *items);
    n->items = items;
    if (n->kind != CONF_MAP)
        return 0;
    const char **keys = conf_alloc(doc, cap * sizeof *keys);
    unsigned *kl = conf_alloc(doc, cap * sizeof *kl), *kc = conf_alloc(doc, cap * sizeof *kc);
    if (!keys || !kl || !kc)
        return -ENOMEM;
    if (n->n) {
        memcpy(keys, n->keys, n->n * sizeof *keys);
        memcpy(kl, n->key_line, n->n * sizeof *kl);
        memcpy(kc, n->key_col, n->n * sizeof *kc);
    }
    n->keys = keys;
    n->key_line = kl;
    n->key_col = kc;
    return 0;
}

/* Deep copy of src (from the value's document) into doc, every position at line. */
static struct conf_node *copy_tree(struct conf_doc *doc, const struct conf_node *src, unsigned line,
                                   unsigned depth, size_t *budget)
{
    if (depth > COPY_MAX_DEPTH || *budget == 0)
        return NULL;
    --*budget;
    struct conf_node *n = new_node(doc, src->kind, line);
    if (!n)
        return NULL;
    n->col = src->col;
    n->quoted = src->quoted;
    if (src->kind == CONF_SCALAR)
        return (n->value = doc_strdup(doc, src->value)) ? n : NULL;
    if (src->n && reserve(doc, n, src->n))
        return NULL;
    for (size_t i = 0; i < src->n; i++) {
        if (!(n->items[i] = copy_tree(doc, src->items[i], line, depth + 1, budget)))
            return NULL;
        if (src->kind == CONF_MAP) {
            if (!(n->keys[i] = doc_strdup(doc, src->keys[i])))
                return NULL;
            n->key_line[i] = line;
            n->key_col[i] = src->key_col[i];
        }
        n->n = i + 1;
    }
    return n;
}

/* A shallow copy of n with room for one more pair or item. */
static struct conf_node *copy_node(struct conf_doc *doc, const struct conf_node *n)
{
    struct conf_node *c = conf_alloc(doc, sizeof *c);

    if (!c)
        return NULL;
    *c = *n;
    return reserve(doc, c, n->n + 1) ? NULL : c;
}

/* The index of the item of seq that segment names (an index or a name), or seq->n. */
static size_t find_item(const struct conf_node *seq, const char *seg)
{
    char *end;
    errno = 0;
    unsigned long long i = strtoull(seg, &end, 10);
    if (seg[0] >= '0' && seg[0] <= '9' && !*end && !errno)
        return i < seq->n ? (size_t)i : seq->n;
    for (size_t k = 0; k < seq->n; k++) {
        const struct conf_node *nm = conf_get(seq->items[k], "name");
        if (nm && nm->kind == CONF_SCALAR && !strcmp(nm->value, seg))
            return k;
    }
    return seq->n;
}

/* The value text parsed as YAML and copied into doc at line; NULL with err filled. */
static struct conf_node *parse_value(struct conf_doc *doc, const char *label, const char *text,
                                     unsigned line, struct conf_err *err)
{
    struct conf_doc v;
    struct conf_err verr;
    int rc = conf_load_string(&v, label, text, &verr);
    if (rc == -ENOMEM) {
        set_errf(err, "%s: out of memory", label);
        return NULL;
    }
    if (rc) {
        /* "LABEL:line:col: problem" -> "LABEL: the value, column C: problem" */
        size_t n = strlen(label);
        unsigned l, c;
        int used = 0;
        const char *m = verr.msg;
        if (!strncmp(m, label, n) && sscanf(m + n, ":%u:%u: %n", &l, &c, &used) == 2 && used > 0)
            set_errf(err, "%s: the value, column %u: %s", label, c, m + n + used);
        else
            set_errf(err, "%s", m);
        return NULL;
    }
    size_t budget = COPY_MAX_NODES;
    struct conf_node *out;
    if (!v.root) { /* "" or a comment: the empty scalar, as "key:" in a file */
        out = new_node(doc, CONF_SCALAR, line);
    } else {
        out = copy_tree(doc, v.root, line, 0, &budget);
        if (!out && budget == 0) {
            conf_release(&v);
            set_errf(err, "%s: the value is too large (more than %zu nodes)", label,
                     COPY_MAX_NODES);
            return NULL;
        }
    }
    conf_release(&v);
    if (!out)
        set_errf(err, "%s: out of memory, or the value is nested too deeply", label);
    return out;
}

/* Applies one override (index k in doc->origins, already registered there). */
static int apply_one(struct conf_doc *doc, const char *set, unsigned k, struct conf_err *err)
{
    const char *label = doc->origins[k];
    const unsigned line = CONF_LINE_ORIGIN + k;
    const char *eq = strchr(set, '=');
    char path[OVERRIDE_PATH_MAX + 1];
    size_t plen = (size_t)(eq - set);

    memcpy(path, set, plen);
    path[plen] = '\0';
    struct conf_node *value = parse_value(doc, label, eq + 1, line, err);
    if (!value)
        return -EINVAL;

    struct conf_node **slot = &doc->root;
    const char *parent = "the document";
    for (char *seg = path, *next; seg; seg = next) {
        next = strchr(seg, '.');
        if (next)
            *next++ = '\0';
        struct conf_node *cur = *slot, *c;
        /* An absent or empty ("key:") node on the way becomes a mapping. */
        if (!cur || (cur->kind == CONF_SCALAR && !cur->quoted && !cur->value[0]))
            cur = new_node(doc, CONF_MAP, line);
        if (!cur)
            return set_errf(err, "%s: out of memory", label);
        if (cur->kind == CONF_SCALAR)
            return set_errf(err, "%s: '%s' is a value ('%.40s'), it has no key '%s'", label, parent,
                            cur->value, seg);
        if (!(c = copy_node(doc, cur)))
            return set_errf(err, "%s: out of memory", label);
        *slot = c;
        if (c->kind == CONF_SEQ) {
            size_t i = find_item(c, seg);
            if (i == c->n)
                return set_errf(err,
                                "%s: '%s' is a list of %zu item(s): no item '%s' (an index from 0, "
                                "or an item's name)",
                                label, parent, c->n, seg);
            slot = &c->items[i];
        } else {
            size_t i = 0;
            while (i < c->n && strcmp(c->keys[i], seg))
                i++;
            if (i == c->n) { /* a new key, placed by the override */
                if (!(c->keys[i] = doc_strdup(doc, seg)))
                    return set_errf(err, "%s: out of memory", label);
                c->key_line[i] = line;
                c->key_col[i] = 1;
                c->items[i] = NULL;
                c->n++;
            }
            slot = &c->items[i];
        }
        parent = seg;
    }
    *slot = value;
    return 0;
}

/* Appends "# --set ..." lines to the document's text (provenance in the results file). */
static int note_in_text(struct conf_doc *doc, const char *const *sets, size_t n)
{
    size_t len = doc->text_len, need = len + 2;
    for (size_t i = 0; i < n; i++)
        need += strlen(sets[i]) + 9;
    char *t = realloc(doc->text, need);
    if (!t)
        return -ENOMEM;
    doc->text = t;
    if (len && t[len - 1] != '\n')
        t[len++] = '\n';
    for (size_t i = 0; i < n; i++) {
        memcpy(t + len, "# --set ", 8);
        len += 8;
        for (const char *p = sets[i]; *p; p++) /* one comment line, whatever the value holds */
            t[len++] = *p == '\n' || *p == '\r' ? ' ' : *p;
        t[len++] = '\n';
    }
    t[len] = '\0';
    doc->text_len = len;
    return 0;
}

int override_apply(struct conf_doc *doc, const char *const *sets, size_t n, struct conf_err *err)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (override_check_syntax(sets[i], err))
            return -EINVAL;
    if (doc->norigins + n >= (size_t)(0xFFFFFFFFu - CONF_LINE_ORIGIN))
        return set_errf(err, "--set: too many overrides");
    const char **o = conf_alloc(doc, (doc->norigins + n) * sizeof *o);
    if (!o)
        return set_errf(err, "--set: out of memory");
    if (doc->norigins)
        memcpy(o, doc->origins, doc->norigins * sizeof *o);
    size_t base = doc->norigins;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(sets[i]);
        char *label = conf_alloc(doc, len + 7);
        if (!label)
            return set_errf(err, "--set: out of memory");
        memcpy(label, "--set ", 6);
        memcpy(label + 6, sets[i], len + 1);
        o[base + i] = label;
    }
    doc->origins = o;
    doc->norigins = base + n;
    for (size_t i = 0; i < n; i++) {
        int rc = apply_one(doc, sets[i], (unsigned)(base + i), err);
        if (rc)
            return rc;
    }
    if (note_in_text(doc, sets, n))
        return set_errf(err, "--set: out of memory");
    return 0;
}
