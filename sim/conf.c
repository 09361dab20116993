/*
 * conf.c — the YAML document tree (built from libyaml's event stream) and the
 * typed getters over it.
 *
 * Memory: every node, key and scalar lives in one arena owned by the doc
 * (a list of chunks), so conf_release() frees the whole tree without walking
 * it. Building uses heap-allocated stacks, never recursion, so deeply nested
 * input cannot overflow the C stack.
 *
 * Aliases: an alias becomes a shallow copy of the anchored node carrying the
 * alias's own position; the children of a collection are shared. Anchors are
 * registered when their node is complete, so an alias inside its own anchor's
 * node is "undefined" and the tree can never contain a cycle. Anchors are kept
 * in an open-addressing hash table (FNV-1a, linear probing), so an alias costs
 * O(1) whatever the number of anchors.
 *
 * Limits (hostile input; docs/security.md "Limits"): nesting depth, number of
 * aliases and number of nodes of the expanded tree, i.e. counting an alias as
 * the whole subtree it stands for (the "billion laughs" defence: ten aliases
 * of ten aliases of ... stay a small DAG here, but any reader walking the tree
 * would walk it expanded). Each node's expanded size and height are known when
 * it is complete, so every limit is checked the moment it is crossed, at the
 * event that crosses it.
 */
#include "sim/conf.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <yaml.h>

#define CONF_MAX_FILE     ((size_t)16 << 20) /* bytes: larger files are refused */
#define CONF_GOT_MAX      40                 /* bytes of a value quoted in a message */
#define ARENA_CHUNK_UNITS 4096               /* × sizeof(max_align_t) = 64 KiB chunks */

/* ------------------------------------------------------------------ arena */

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap; /* in units of max_align_t */
    max_align_t data[];
};

/* Returns size bytes aligned for any type, or NULL when out of memory. */
static void *arena_alloc(void **arena, size_t size)
{
    struct arena_chunk *head = *arena;
    const size_t unit = sizeof(max_align_t);
    size_t units;

    if (size > SIZE_MAX - unit)
        return NULL;
    units = size == 0 ? 1 : (size + unit - 1) / unit;
    if (!head || head->cap - head->used < units) {
        size_t cap = units > ARENA_CHUNK_UNITS ? units : ARENA_CHUNK_UNITS;
        struct arena_chunk *c;

        if (cap > (SIZE_MAX - sizeof *c) / unit)
            return NULL;
        c = malloc(sizeof *c + cap * unit);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        if (head && units > ARENA_CHUNK_UNITS) {
            /* An oversized block gets its own chunk behind the head, whose free space stays usable.
             */
            c->next = head->next;
            head->next = c;
            c->used = units;
            return c->data;
        }
        c->next = head;
        *arena = head = c;
    }
    head->used += units;
    return head->data + (head->used - units);
}

static char *arena_strndup(void **arena, const char *s, size_t len)
{
    char *p = len < SIZE_MAX ? arena_alloc(arena, len + 1) : NULL;

    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

static void arena_free(void *arena)
{
    struct arena_chunk *c = arena;

    while (c) {
        struct arena_chunk *next = c->next;
        free(c);
        c = next;
    }
}

/* --------------------------------------------------------------- messages */

static const char *doc_path(const struct conf_doc *doc)
{
    return doc && doc->path ? doc->path : "(unknown)";
}

/* "path:line:col: 'key': ..." with line == 0 meaning "no position"; key may be NULL. */
static void vformat(struct conf_err *err, const char *path, unsigned line, unsigned col,
                    const char *key, const char *fmt, va_list ap)
{
    size_t len;
    int n;

    if (!err)
        return;
    if (line)
        n = snprintf(err->msg, sizeof err->msg, "%s:%u:%u: ", path, line, col);
    else
        n = snprintf(err->msg, sizeof err->msg, "%s: ", path);
    len = n < 0 ? 0 : (size_t)n;
    if (key && len < sizeof err->msg) {
        n = snprintf(err->msg + len, sizeof err->msg - len, "'%s': ", key);
        len += n < 0 ? 0 : (size_t)n;
    }
    if (len < sizeof err->msg)
        vsnprintf(err->msg + len, sizeof err->msg - len, fmt, ap);
}

static int format_at(struct conf_err *err, const char *path, unsigned line, unsigned col,
                     const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int format_at(struct conf_err *err, const char *path, unsigned line, unsigned col,
                     const char *key, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vformat(err, path, line, col, key, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* A position in doc: in its file, or one of its origins (a node grafted by --set). */
static int doc_format_at(struct conf_err *err, const struct conf_doc *doc, unsigned line,
                         unsigned col, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int doc_format_at(struct conf_err *err, const struct conf_doc *doc, unsigned line,
                         unsigned col, const char *key, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (doc && line >= CONF_LINE_ORIGIN && line - CONF_LINE_ORIGIN < doc->norigins)
        vformat(err, doc->origins[line - CONF_LINE_ORIGIN], 0, 0, key, fmt, ap);
    else
        vformat(err, doc_path(doc), line, col, key, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int conf_errf(struct conf_err *err, const struct conf_doc *doc, const struct conf_node *at,
              const char *key, const char *fmt, ...)
{
    va_list ap;
    char msg[sizeof err->msg];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return doc_format_at(err, doc, at ? at->line : 0, at ? at->col : 0, key, "%s", msg);
}

/*
 * How a node reads after "got ": "a mapping", "a sequence" or the quoted text,
 * cut at a line break or after CONF_GOT_MAX bytes (on a UTF-8 boundary) with "...".
 */
static const char *describe(const struct conf_node *n, char *buf, size_t size)
{
    size_t len = 0;
    bool cut;

    if (n->kind == CONF_MAP)
        return "a mapping";
    if (n->kind == CONF_SEQ)
        return "a sequence";
    while (n->value[len] && n->value[len] != '\n' && n->value[len] != '\r' && len < CONF_GOT_MAX)
        len++;
    cut = n->value[len] != '\0';
    if (cut && len == CONF_GOT_MAX) {
        while (len > 0 && ((unsigned char)n->value[len] & 0xC0) == 0x80)
            len--;
    }
    snprintf(buf, size, "'%.*s%s'", (int)len, n->value, cut ? "..." : "");
    return buf;
}

/* ----------------------------------------------------------------- builder */

struct pair {
    const char *key; /* maps only */
    unsigned line, col;
    struct conf_node *val;
};

struct frame {
    struct conf_node *node; /* in the arena; arrays are filled in at the end event */
    const char *anchor;     /* arena copy, or NULL */
    struct pair *v;
    size_t n, cap;
    bool want_key;   /* maps: the next node is a key */
    uint64_t weight; /* expanded size of the children so far (keys count as nodes) */
    unsigned height; /* levels below this node so far (0: no collection child yet) */
};

/* A completed anchored node, with what an alias of it expands to. */
struct anchor {
    const char *name; /* NULL: empty slot */
    uint64_t hash;
    const struct conf_node *node;
    uint64_t weight; /* nodes of its expanded subtree, itself included */
    unsigned height; /* collection levels of its subtree (0 for a scalar) */
};

struct builder {
    struct conf_doc *doc;
    struct conf_err *err;
    struct frame *stack;
    size_t depth, cap;
    struct anchor *slots; /* hash table of anchors, capacity a power of two (or 0) */
    size_t nanchors, nslots;
    uint64_t aliases;  /* aliases met so far */
    uint64_t expanded; /* nodes of the expanded tree so far */
    unsigned ndocs;
    bool multi;              /* conf_load_file_multi: every document is kept */
    struct conf_node **docs; /* multi: the documents' roots so far (heap, not arena) */
    size_t ndocroots, capdocs;
};

/*
 * Returns p grown (realloc) to hold at least need elements of elem bytes and
 * updates *cap; NULL when out of memory, p then still valid and unchanged.
 */
static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;

    if (need <= *cap)
        return p;
    ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return NULL;
        ncap *= 2;
    }
    p = realloc(p, ncap * elem);
    if (p)
        *cap = ncap;
    return p;
}

static int nomem(struct builder *b)
{
    format_at(b->err, doc_path(b->doc), 0, 0, NULL, "out of memory");
    return -ENOMEM;
}

static int mark_err(struct builder *b, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int mark_err(struct builder *b, yaml_mark_t m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vformat(b->err, doc_path(b->doc), (unsigned)m.line + 1, (unsigned)m.column + 1, NULL, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static struct conf_node *new_node(struct builder *b, enum conf_kind kind, yaml_mark_t m)
{
    struct conf_node *n = arena_alloc(&b->doc->arena, sizeof *n);

    if (n) {
        memset(n, 0, sizeof *n);
        n->kind = kind;
        n->line = (unsigned)m.line + 1;
        n->col = (unsigned)m.column + 1;
        n->value = "";
    }
    return n;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot holding name, or the empty slot where it would go (nslots > 0). */
static struct anchor *anchor_slot(const struct builder *b, const char *name, uint64_t h)
{
    size_t mask = b->nslots - 1;

    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        struct anchor *a = &b->slots[i];
        if (!a->name || (a->hash == h && strcmp(a->name, name) == 0))
            return a;
    }
}

/* Doubles the table (kept at most half full). Returns 0 or -ENOMEM, the table unchanged. */
static int anchors_grow(struct builder *b)
{
    size_t n = b->nslots ? 2 * b->nslots : 64;
    struct anchor *old = b->slots, *fresh;
    size_t nold = b->nslots;

    if (n > SIZE_MAX / 2 / sizeof *fresh || !(fresh = calloc(n, sizeof *fresh)))
        return -ENOMEM;
    b->slots = fresh;
    b->nslots = n;
    for (size_t i = 0; i < nold; i++) {
        if (old[i].name)
            *anchor_slot(b, old[i].name, old[i].hash) = old[i];
    }
    free(old);
    return 0;
}

/* Registers (or re-points: YAML lets a later anchor of the same name win) name. */
static int add_anchor(struct builder *b, const char *name, const struct conf_node *node,
                      uint64_t weight, unsigned height)
{
    uint64_t h = fnv1a(name);
    struct anchor *a;

    if (2 * (b->nanchors + 1) > b->nslots && anchors_grow(b))
        return nomem(b);
    a = anchor_slot(b, name, h);
    if (!a->name)
        b->nanchors++;
    *a = (struct anchor){.name = name, .hash = h, .node = node, .weight = weight, .height = height};
    return 0;
}

/* The latest complete node anchored as name, or NULL. */
static const struct anchor *find_anchor(const struct builder *b, const char *name)
{
    const struct anchor *a;

    if (b->nslots == 0)
        return NULL;
    a = anchor_slot(b, name, fnv1a(name));
    return a->name ? a : NULL;
}

/*
 * Counts a complete node delivered at the current depth: `fresh` more nodes of
 * the expanded tree (a scalar 1, an alias its target's whole weight, a closed
 * collection 1: its children were counted as they came), and a node of
 * `weight` expanded nodes and `height` collection levels (0 for a scalar) for
 * the open collection. Returns 0 or -EINVAL (a limit crossed; message at m).
 */
static int count_node(struct builder *b, uint64_t fresh, uint64_t weight, unsigned height,
                      yaml_mark_t m)
{
    if ((size_t)height + b->depth > CONF_LIMIT_DEPTH)
        return mark_err(b, m, "nesting deeper than %u levels once aliases are expanded (limit %u)",
                        CONF_LIMIT_DEPTH, CONF_LIMIT_DEPTH);
    if (fresh > CONF_LIMIT_NODES - b->expanded)
        return mark_err(b, m,
                        "more than %u nodes once aliases are expanded (limit %u; each alias "
                        "counts as the whole node it names)",
                        CONF_LIMIT_NODES, CONF_LIMIT_NODES);
    b->expanded += fresh;
    if (b->depth > 0) {
        struct frame *f = &b->stack[b->depth - 1];
        f->weight += weight;
        if (height > f->height)
            f->height = height;
    }
    return 0;
}

/* Hands a finished node to the open collection (or makes it the root). */
static int deliver(struct builder *b, struct conf_node *node, bool plain)
{
    struct frame *f;
    struct pair *v;

    if (b->depth == 0) {
        /* A document holding only an empty plain scalar ("---" alone) is empty. */
        bool empty = node->kind == CONF_SCALAR && plain && node->value[0] == '\0';
        if (!b->multi) {
            b->doc->root = empty ? NULL : node;
            return 0;
        }
        if (empty)
            return 0;
        struct conf_node **d = grow(b->docs, &b->capdocs, b->ndocroots + 1, sizeof *d);
        if (!d)
            return nomem(b);
        b->docs = d;
        b->docs[b->ndocroots++] = node;
        return 0;
    }
    f = &b->stack[b->depth - 1];
    if (f->node->kind == CONF_MAP && f->want_key) {
        if (node->kind != CONF_SCALAR)
            return format_at(b->err, doc_path(b->doc), node->line, node->col, NULL,
                             "a mapping key must be a scalar, got %s",
                             node->kind == CONF_MAP ? "a mapping" : "a sequence");
        if (plain && strcmp(node->value, "<<") == 0)
            return format_at(b->err, doc_path(b->doc), node->line, node->col, "<<",
                             "merge keys are not supported (write the keys out)");
        if (!(v = grow(f->v, &f->cap, f->n + 1, sizeof *v)))
            return nomem(b);
        f->v = v;
        f->v[f->n] = (struct pair){.key = node->value, .line = node->line, .col = node->col};
        f->n++;
        f->want_key = false;
        return 0;
    }
    if (f->node->kind == CONF_MAP) {
        f->v[f->n - 1].val = node;
        f->want_key = true;
        return 0;
    }
    if (!(v = grow(f->v, &f->cap, f->n + 1, sizeof *v)))
        return nomem(b);
    f->v = v;
    f->v[f->n++] = (struct pair){.val = node};
    return 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
    const char *value = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    yaml_scalar_style_t style = ev->data.scalar.style;
    struct conf_node *n;

    if (memchr(value, '\0', len))
        return mark_err(b, ev->start_mark, "NUL characters are not supported");
    n = new_node(b, CONF_SCALAR, ev->start_mark);
    if (!n || !(n->value = arena_strndup(&b->doc->arena, value, len)))
        return nomem(b);
    n->quoted =
        style == YAML_SINGLE_QUOTED_SCALAR_STYLE || style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    if (ev->data.scalar.anchor) {
        const char *a = (const char *)ev->data.scalar.anchor;
        const char *name = arena_strndup(&b->doc->arena, a, strlen(a));
        if (!name)
            return nomem(b);
        if (add_anchor(b, name, n, 1, 0))
            return -ENOMEM;
    }
    if (count_node(b, 1, 1, 0, ev->start_mark))
        return -EINVAL;
    return deliver(b, n, style == YAML_PLAIN_SCALAR_STYLE);
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    const struct anchor *a = find_anchor(b, name);
    const struct conf_node *target = a ? a->node : NULL;
    struct conf_node *n;

    if (!target)
        return mark_err(b, ev->start_mark, "alias '*%s' refers to an undefined anchor", name);
    if (++b->aliases > CONF_LIMIT_ALIASES)
        return mark_err(b, ev->start_mark, "more than %u aliases (limit %u)", CONF_LIMIT_ALIASES,
                        CONF_LIMIT_ALIASES);
    if (count_node(b, a->weight, a->weight, a->height, ev->start_mark))
        return -EINVAL;
    n = new_node(b, target->kind, ev->start_mark);
    if (!n)
        return nomem(b);
    *n = *target;
    n->line = (unsigned)ev->start_mark.line + 1;
    n->col = (unsigned)ev->start_mark.column + 1;
    /* An aliased "<<" key was written as a plain scalar at its anchor only if unquoted. */
    return deliver(b, n, target->kind == CONF_SCALAR && !target->quoted);
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum conf_kind kind)
{
    const yaml_char_t *anchor =
        kind == CONF_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    struct frame *f;

    if (b->depth > 0) {
        const struct frame *top = &b->stack[b->depth - 1];
        if (top->node->kind == CONF_MAP && top->want_key)
            return mark_err(b, ev->start_mark, "a mapping key must be a scalar, got %s",
                            kind == CONF_MAP ? "a mapping" : "a sequence");
    }
    if (b->depth >= CONF_LIMIT_DEPTH)
        return mark_err(b, ev->start_mark, "nesting deeper than %u levels (limit %u)",
                        CONF_LIMIT_DEPTH, CONF_LIMIT_DEPTH);
    if (!(f = grow(b->stack, &b->cap, b->depth + 1, sizeof *f)))
        return nomem(b);
    b->stack = f;
    f = &b->stack[b->depth];
    memset(f, 0, sizeof *f);
    f->want_key = kind == CONF_MAP;
    f->node = new_node(b, kind, ev->start_mark);
    if (!f->node)
        return nomem(b);
    if (anchor) {
        f->anchor =
            arena_strndup(&b->doc->arena, (const char *)anchor, strlen((const char *)anchor));
        if (!f->anchor)
            return nomem(b);
    }
    b->depth++;
    return 0;
}

struct key_ref {
    const char *key;
    size_t idx;
};

static int key_ref_cmp(const void *pa, const void *pb)
{
    const struct key_ref *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);

    if (c)
        return c;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Reports the duplicate key that comes first in the file, if any. O(n log n). */
static int check_duplicates(struct builder *b, const struct frame *f)
{
    struct key_ref *refs;
    size_t first = 0, dup = SIZE_MAX;

    if (f->n < 2)
        return 0;
    refs = malloc(f->n * sizeof *refs);
    if (!refs)
        return nomem(b);
    for (size_t i = 0; i < f->n; i++)
        refs[i] = (struct key_ref){f->v[i].key, i};
    qsort(refs, f->n, sizeof *refs, key_ref_cmp);
    for (size_t i = 1; i < f->n; i++) {
        if (strcmp(refs[i - 1].key, refs[i].key) == 0 && refs[i].idx < dup &&
            (i < 2 || strcmp(refs[i - 2].key, refs[i].key) != 0)) {
            first = refs[i - 1].idx;
            dup = refs[i].idx;
        }
    }
    free(refs);
    if (dup == SIZE_MAX)
        return 0;
    return format_at(b->err, doc_path(b->doc), f->v[dup].line, f->v[dup].col, f->v[dup].key,
                     "duplicate key (first at line %u)", f->v[first].line);
}

static int on_end(struct builder *b, const yaml_event_t *ev)
{
    struct frame *f = &b->stack[b->depth - 1];
    struct conf_node *n = f->node;
    void **arena = &b->doc->arena;
    uint64_t weight = f->weight + 1; /* itself and its expanded children */
    unsigned height = f->height + 1;
    int rc;

    n->n = f->n;
    if (f->n > 0) {
        if (f->n > SIZE_MAX / sizeof *n->keys)
            return nomem(b);
        n->items = arena_alloc(arena, f->n * sizeof *n->items);
        if (!n->items)
            return nomem(b);
        for (size_t i = 0; i < f->n; i++)
            n->items[i] = f->v[i].val;
    }
    if (n->kind == CONF_MAP && f->n > 0) {
        rc = check_duplicates(b, f);
        if (rc)
            return rc;
        n->keys = arena_alloc(arena, f->n * sizeof *n->keys);
        n->key_line = arena_alloc(arena, f->n * sizeof *n->key_line);
        n->key_col = arena_alloc(arena, f->n * sizeof *n->key_col);
        if (!n->keys || !n->key_line || !n->key_col)
            return nomem(b);
        for (size_t i = 0; i < f->n; i++) {
            n->keys[i] = f->v[i].key;
            n->key_line[i] = f->v[i].line;
            n->key_col[i] = f->v[i].col;
        }
    }
    if (f->anchor && add_anchor(b, f->anchor, n, weight, height))
        return -ENOMEM;
    free(f->v);
    f->v = NULL;
    b->depth--;
    if (count_node(b, 1, weight, height, ev->start_mark))
        return -EINVAL;
    return deliver(b, n, false);
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (b->multi) {
            /* Anchors belong to their document (YAML 1.2, 3.2.2.2). */
            if (b->slots)
                memset(b->slots, 0, b->nslots * sizeof *b->slots);
            b->nanchors = 0;
            return 0;
        }
        if (++b->ndocs > 1)
            return mark_err(b, ev->start_mark,
                            "only one document per file is supported (found a second '---')");
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev);
    case YAML_MAPPING_START_EVENT:
        return on_start(b, ev, CONF_MAP);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(b, ev, CONF_SEQ);
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
        return on_end(b, ev);
    default:
        return 0;
    }
}

/* 1-based line and column (in characters) of a byte offset into the text. */
static void offset_position(const struct conf_doc *doc, size_t offset, unsigned *line,
                            unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < doc->text_len; i++) {
        unsigned char c = (unsigned char)doc->text[i];
        if (c == '\n') {
            ++*line;
            *col = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

static int syntax_error(const struct conf_doc *doc, const yaml_parser_t *p, struct conf_err *err)
{
    const char *problem = p->problem ? p->problem : "syntax error";
    unsigned line, col;

    switch (p->error) {
    case YAML_MEMORY_ERROR:
        format_at(err, doc_path(doc), 0, 0, NULL, "out of memory");
        return -ENOMEM;
    case YAML_READER_ERROR:
        offset_position(doc, p->problem_offset, &line, &col);
        break;
    default:
        line = (unsigned)p->problem_mark.line + 1;
        col = (unsigned)p->problem_mark.column + 1;
        break;
    }
    return format_at(err, doc_path(doc), line, col, NULL, "%s", problem);
}

/* multi: doc->root becomes a sequence of the non-empty documents (at 1:1), NULL if none. */
static int gather_docs(struct builder *b)
{
    struct conf_node *seq;

    if (b->ndocroots == 0)
        return 0;
    seq = arena_alloc(&b->doc->arena, sizeof *seq);
    if (!seq)
        return nomem(b);
    memset(seq, 0, sizeof *seq);
    seq->kind = CONF_SEQ;
    seq->line = seq->col = 1;
    seq->value = "";
    seq->n = b->ndocroots;
    seq->items = arena_alloc(&b->doc->arena, b->ndocroots * sizeof *seq->items);
    if (!seq->items)
        return nomem(b);
    memcpy(seq->items, b->docs, b->ndocroots * sizeof *seq->items);
    b->doc->root = seq;
    return 0;
}

/* Parses doc->text into doc->root. Returns 0, -EINVAL or -ENOMEM; the caller releases. */
static int parse_text(struct conf_doc *doc, bool multi, struct conf_err *err)
{
    struct builder b = {.doc = doc, .err = err, .multi = multi};
    yaml_parser_t parser;
    yaml_event_t ev;
    int rc = 0;

    if (!yaml_parser_initialize(&parser))
        return nomem(&b);
    yaml_parser_set_input_string(&parser, (const unsigned char *)doc->text, doc->text_len);
    for (;;) {
        bool done;

        if (!yaml_parser_parse(&parser, &ev)) {
            rc = syntax_error(doc, &parser, err);
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&b, &ev);
        yaml_event_delete(&ev);
        if (rc || done)
            break;
    }
    yaml_parser_delete(&parser);
    if (rc == 0 && multi)
        rc = gather_docs(&b);
    for (size_t i = 0; i < b.depth; i++)
        free(b.stack[i].v);
    free(b.stack);
    free(b.slots);
    free(b.docs);
    return rc;
}

/* ---------------------------------------------------------------- loading */

static int too_large(struct conf_doc *doc, struct conf_err *err)
{
    format_at(err, doc_path(doc), 0, 0, NULL, "file too large (more than %zu MiB)",
              CONF_MAX_FILE >> 20);
    return -EFBIG;
}

/* Reads the whole stream into doc->text. Returns 0 or a negative errno. */
static int read_all(struct conf_doc *doc, FILE *f, struct conf_err *err)
{
    size_t cap = 64 << 10, len = 0;
    char *buf = malloc(cap);

    if (!buf) {
        format_at(err, doc->path, 0, 0, NULL, "out of memory");
        return -ENOMEM;
    }
    for (;;) {
        size_t got;

        if (len == cap - 1) {
            char *nbuf;
            if (len > CONF_MAX_FILE)
                break;
            cap *= 2;
            nbuf = realloc(buf, cap);
            if (!nbuf) {
                free(buf);
                format_at(err, doc->path, 0, 0, NULL, "out of memory");
                return -ENOMEM;
            }
            buf = nbuf;
        }
        got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(buf);
        format_at(err, doc->path, 0, 0, NULL, "cannot read: %s", strerror(e));
        return -e;
    }
    buf[len] = '\0';
    doc->text = buf;
    doc->text_len = len;
    if (len > CONF_MAX_FILE)
        return too_large(doc, err);
    return 0;
}

static int load_file(struct conf_doc *doc, const char *path, bool multi, struct conf_err *err)
{
    FILE *f;
    int rc;

    memset(doc, 0, sizeof *doc);
    doc->path = strdup(path);
    if (!doc->path) {
        format_at(err, path, 0, 0, NULL, "out of memory");
        return -ENOMEM;
    }
    f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        format_at(err, path, 0, 0, NULL, "cannot open: %s", strerror(e));
        conf_release(doc);
        return -e;
    }
    errno = 0;
    rc = read_all(doc, f, err);
    fclose(f);
    if (rc == 0)
        rc = parse_text(doc, multi, err);
    if (rc)
        conf_release(doc);
    return rc;
}

int conf_load_file(struct conf_doc *doc, const char *path, struct conf_err *err)
{
    return load_file(doc, path, false, err);
}

int conf_load_file_multi(struct conf_doc *doc, const char *path, struct conf_err *err)
{
    return load_file(doc, path, true, err);
}

int conf_load_relative_multi(struct conf_doc *doc, const struct conf_doc *base,
                             const struct conf_node *at, const char *key, const char *path,
                             struct conf_err *err)
{
    const char *slash = base && base->path ? strrchr(base->path, '/') : NULL;
    size_t dir = path[0] == '/' || !slash ? 0 : (size_t)(slash - base->path) + 1;
    char *full = malloc(dir + strlen(path) + 1);
    int rc;

    memset(doc, 0, sizeof *doc);
    if (!full) {
        format_at(err, path, 0, 0, NULL, "out of memory");
        return -ENOMEM;
    }
    if (dir)
        memcpy(full, base->path, dir);
    memcpy(full + dir, path, strlen(path) + 1);
    if (access(full, R_OK) != 0) {
        int e = errno;
        conf_errf(err, base, at, key, "cannot read '%s': %s", full, strerror(e));
        free(full);
        return -e;
    }
    rc = load_file(doc, full, true, err);
    free(full);
    return rc;
}

static int load_string(struct conf_doc *doc, const char *name, const char *text, bool multi,
                       struct conf_err *err)
{
    int rc;

    memset(doc, 0, sizeof *doc);
    doc->path = strdup(name ? name : "<string>");
    doc->text_len = strlen(text);
    doc->text = doc->path && doc->text_len <= CONF_MAX_FILE ? malloc(doc->text_len + 1) : NULL;
    if (doc->path && doc->text_len > CONF_MAX_FILE) {
        rc = too_large(doc, err);
    } else if (!doc->text) {
        format_at(err, doc->path ? doc->path : "<string>", 0, 0, NULL, "out of memory");
        rc = -ENOMEM;
    } else {
        memcpy(doc->text, text, doc->text_len + 1);
        rc = parse_text(doc, multi, err);
    }
    if (rc)
        conf_release(doc);
    return rc;
}

int conf_load_string(struct conf_doc *doc, const char *name, const char *text, struct conf_err *err)
{
    return load_string(doc, name, text, false, err);
}

int conf_load_string_multi(struct conf_doc *doc, const char *name, const char *text,
                           struct conf_err *err)
{
    return load_string(doc, name, text, true, err);
}

void *conf_alloc(struct conf_doc *doc, size_t size)
{
    return arena_alloc(&doc->arena, size);
}

void conf_release(struct conf_doc *doc)
{
    if (!doc)
        return;
    arena_free(doc->arena);
    free(doc->path);
    free(doc->text);
    memset(doc, 0, sizeof *doc);
}

/* ---------------------------------------------------------------- getters */

const struct conf_node *conf_get(const struct conf_node *map, const char *key)
{
    if (!map || map->kind != CONF_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++) {
        if (strcmp(map->keys[i], key) == 0)
            return map->items[i];
    }
    return NULL;
}

static int not_a_map(const struct conf_doc *doc, const struct conf_node *node, const char *where,
                     struct conf_err *err)
{
    char got[CONF_GOT_MAX + 8];

    return conf_errf(err, doc, node, where, "expected a mapping, got %s",
                     describe(node, got, sizeof got));
}

/*
 * Finds key in map. Returns 1 (found, *val set), 0 (absent and optional) or
 * -EINVAL (map is not a map, or a required key is missing: expect names the value).
 */
static int lookup(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                  bool required, const char *expect, const struct conf_node **val,
                  struct conf_err *err)
{
    if (map && map->kind != CONF_MAP)
        return not_a_map(doc, map, NULL, err);
    *val = conf_get(map, key);
    if (*val)
        return 1;
    if (!required)
        return 0;
    return conf_errf(err, doc, map, key, "missing (expected %s)", expect);
}

static int wrong_value(const struct conf_doc *doc, const struct conf_node *val, const char *key,
                       const char *expect, struct conf_err *err)
{
    char got[CONF_GOT_MAX + 8];

    return conf_errf(err, doc, val, key, "expected %s, got %s", expect,
                     describe(val, got, sizeof got));
}

int conf_check_keys(const struct conf_doc *doc, const struct conf_node *map, const char *where,
                    const char *const allowed[], struct conf_err *err)
{
    if (!map)
        return 0;
    if (map->kind != CONF_MAP)
        return not_a_map(doc, map, where, err);
    for (size_t i = 0; i < map->n; i++) {
        char list[400];
        size_t len = 0;
        size_t j;

        for (j = 0; allowed[j]; j++) {
            if (strcmp(map->keys[i], allowed[j]) == 0)
                break;
        }
        if (allowed[j])
            continue;
        list[0] = '\0';
        for (j = 0; allowed[j] && len < sizeof list; j++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "", allowed[j]);
            len += w < 0 ? 0 : (size_t)w;
        }
        return doc_format_at(err, doc, map->key_line[i], map->key_col[i], map->keys[i],
                             "unknown key (expected one of: %s)", list);
    }
    return 0;
}

/* Writes the phrase naming the integers in [min, max]: "a positive integer", "an integer in [1,
 * 64]". */
static void int_phrase(char *buf, size_t size, int64_t min, int64_t max)
{
    if (max == INT64_MAX && min == 1)
        snprintf(buf, size, "a positive integer");
    else if (max == INT64_MAX && min == 0)
        snprintf(buf, size, "a non-negative integer");
    else if (max == INT64_MAX && min == INT64_MIN)
        snprintf(buf, size, "an integer");
    else if (max == INT64_MAX)
        snprintf(buf, size, "an integer >= %lld", (long long)min);
    else if (min == INT64_MIN)
        snprintf(buf, size, "an integer <= %lld", (long long)max);
    else
        snprintf(buf, size, "an integer in [%lld, %lld]", (long long)min, (long long)max);
}

/* Plain decimal integer with an optional sign. 0, -EINVAL (not an integer), -ERANGE. */
static int parse_int(const char *s, int64_t *out)
{
    const char *p = s + (*s == '+' || *s == '-');
    char *end;
    long long v;

    if (!*p)
        return -EINVAL;
    for (const char *q = p; *q; q++) {
        if (!isdigit((unsigned char)*q))
            return -EINVAL;
    }
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

int conf_int(const struct conf_doc *doc, const struct conf_node *map, const char *key,
             bool required, int64_t min, int64_t max, int64_t *out, struct conf_err *err)
{
    const struct conf_node *val;
    char expect[96];
    int64_t v;
    int rc;

    int_phrase(expect, sizeof expect, min, max);
    rc = lookup(doc, map, key, required, expect, &val, err);
    if (rc <= 0)
        return rc;
    rc = val->kind == CONF_SCALAR ? parse_int(val->value, &v) : -EINVAL;
    if (rc == -EINVAL) {
        /* Not an integer at all: name the kind of integer, not the exact range. */
        const char *base = min == 1   ? "a positive integer"
                           : min == 0 ? "a non-negative integer"
                                      : "an integer";
        return wrong_value(doc, val, key, base, err);
    }
    if (rc == -ERANGE || v < min || v > max)
        return wrong_value(doc, val, key, expect, err);
    *out = v;
    return 0;
}

/* Decimal number with optional fraction and exponent; no hex, inf or nan. */
static bool parse_double(const char *s, double *out)
{
    const char *p = s + (*s == '+' || *s == '-');
    size_t digits = 0;
    char *end;
    double v;

    for (; isdigit((unsigned char)*p); p++)
        digits++;
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    }
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '+' || p[1] == '-');
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p)
        return false;
    /* strtod follows the C locale here: the library never calls setlocale(). */
    v = strtod(s, &end);
    if (end != p || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int conf_double(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                bool required, double min, double max, double *out, struct conf_err *err)
{
    const struct conf_node *val;
    char expect[96];
    double v;
    int rc;

    if (min <= -DBL_MAX && max >= DBL_MAX)
        snprintf(expect, sizeof expect, "a number");
    else if (max >= DBL_MAX)
        snprintf(expect, sizeof expect, "a number >= %g", min);
    else if (min <= -DBL_MAX)
        snprintf(expect, sizeof expect, "a number <= %g", max);
    else
        snprintf(expect, sizeof expect, "a number in [%g, %g]", min, max);
    rc = lookup(doc, map, key, required, expect, &val, err);
    if (rc <= 0)
        return rc;
    if (val->kind != CONF_SCALAR || !parse_double(val->value, &v))
        return wrong_value(doc, val, key, "a number", err);
    if (!(v >= min && v <= max))
        return wrong_value(doc, val, key, expect, err);
    *out = v;
    return 0;
}

int conf_bool(const struct conf_doc *doc, const struct conf_node *map, const char *key,
              bool required, bool *out, struct conf_err *err)
{
    /* Arrays of char, not of pointers: no relocated (writable-at-load) data in the library. */
    static const char yes[][6] = {"true", "yes", "on"};
    static const char no[][6] = {"false", "no", "off"};
    const struct conf_node *val;
    int rc = lookup(doc, map, key, required, "true or false", &val, err);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; val->kind == CONF_SCALAR && i < 3; i++) {
        if (strcasecmp(val->value, yes[i]) == 0 || strcasecmp(val->value, no[i]) == 0) {
            *out = strcasecmp(val->value, yes[i]) == 0;
            return 0;
        }
    }
    return wrong_value(doc, val, key, "true or false", err);
}

int conf_string(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                bool required, const char **out, struct conf_err *err)
{
    const struct conf_node *val;
    int rc = lookup(doc, map, key, required, "a string", &val, err);

    if (rc <= 0)
        return rc;
    if (val->kind != CONF_SCALAR)
        return wrong_value(doc, val, key, "a string", err);
    *out = val->value;
    return 0;
}

int conf_enum(const struct conf_doc *doc, const struct conf_node *map, const char *key,
              bool required, const char *const choices[], int *out, struct conf_err *err)
{
    const struct conf_node *val;
    char expect[400];
    size_t len;
    int rc;

    len = (size_t)snprintf(expect, sizeof expect, "one of: ");
    for (size_t j = 0; choices[j] && len < sizeof expect; j++) {
        int w = snprintf(expect + len, sizeof expect - len, "%s%s", j ? ", " : "", choices[j]);
        len += w < 0 ? 0 : (size_t)w;
    }
    rc = lookup(doc, map, key, required, expect, &val, err);
    if (rc <= 0)
        return rc;
    for (int j = 0; val->kind == CONF_SCALAR && choices[j]; j++) {
        if (strcmp(val->value, choices[j]) == 0) {
            *out = j;
            return 0;
        }
    }
    return wrong_value(doc, val, key, expect, err);
}

/* ---------------------------------------------------------------- durations */

struct duration_unit {
    char name[4]; /* inline, not a pointer: tables stay in read-only data */
    sim_time us;
};

/* Longest names first so "ms" and "min" are not read as "m". */
static const struct duration_unit duration_units[] = {
    {"min", SIM_MIN}, {"ms", SIM_MS},  {"us", SIM_US}, {"s", SIM_SEC},
    {"m", SIM_MIN},   {"h", SIM_HOUR}, {"d", SIM_DAY}, {"w", 7 * SIM_DAY},
};

static const struct duration_unit *match_unit(const char *p)
{
    for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
        size_t len = strlen(duration_units[i].name);
        if (strncmp(p, duration_units[i].name, len) == 0)
            return &duration_units[i];
    }
    return NULL;
}

/*
 * One or more "<digits>[.<digits>]<unit>" terms in strictly decreasing units.
 * The integer part is exact (strtoll, overflow checked); a fraction of a unit
 * is rounded to the nearest µs (it is below 2^53 µs, so the double is exact enough).
 */
int conf_parse_duration(const char *s, sim_time *out)
{
    sim_time total = 0, prev_unit = 0;
    const char *p = s;

    if (!s || !*s)
        return -EINVAL;
    while (*p) {
        const char *ip = p, *fp = NULL;
        const struct duration_unit *u;
        long long whole = 0;
        sim_time part;

        while (isdigit((unsigned char)*p))
            p++;
        if (*p == '.') {
            fp = ++p;
            while (isdigit((unsigned char)*p))
                p++;
            if (p == fp)
                return -EINVAL;
        }
        if (p == ip)
            return -EINVAL;
        u = match_unit(p);
        if (!u || (prev_unit && u->us >= prev_unit))
            return -EINVAL;
        prev_unit = u->us;
        if (isdigit((unsigned char)*ip)) {
            char *end;
            errno = 0;
            whole = strtoll(ip, &end, 10);
            if (errno == ERANGE)
                return -EINVAL;
        }
        if (whole > INT64_MAX / u->us)
            return -EINVAL;
        part = whole * u->us;
        if (fp) {
            double frac = 0, scale = 0.1;
            for (const char *q = fp; isdigit((unsigned char)*q); q++, scale /= 10)
                frac += (*q - '0') * scale;
            sim_time extra = (sim_time)llround(frac * (double)u->us);
            if (part > INT64_MAX - extra)
                return -EINVAL;
            part += extra;
        }
        if (total > INT64_MAX - part)
            return -EINVAL;
        total += part;
        p += strlen(u->name);
    }
    *out = total;
    return 0;
}

void conf_format_duration(sim_time t, char *buf, size_t size)
{
    static const struct duration_unit parts[] = {
        {"d", SIM_DAY}, {"h", SIM_HOUR}, {"m", SIM_MIN}, {"s", SIM_SEC}, {"ms", SIM_MS}, {"us", 1},
    };
    uint64_t left = t < 0 ? (uint64_t)0 - (uint64_t)t : (uint64_t)t;
    size_t len = 0;

    if (size == 0)
        return;
    buf[0] = '\0';
    if (t == 0) {
        snprintf(buf, size, "0s");
        return;
    }
    if (t < 0)
        len = (size_t)snprintf(buf, size, "-");
    for (size_t i = 0; i < sizeof parts / sizeof parts[0] && left && len < size; i++) {
        uint64_t unit = (uint64_t)parts[i].us, k = left / unit;
        int w;

        if (k == 0)
            continue;
        w = snprintf(buf + len, size - len, "%llu%s", (unsigned long long)k, parts[i].name);
        len += w < 0 ? 0 : (size_t)w;
        left -= k * unit;
    }
}

_Static_assert(SIM_TIME_LIMIT_YEARS == 100, "conf_duration's message names SIM_TIME_LIMIT");

int conf_duration(const struct conf_doc *doc, const struct conf_node *map, const char *key,
                  bool required, sim_time min, sim_time *out, struct conf_err *err)
{
    static const char expect[] = "a duration with a unit (e.g. 250ms, 90s, 30m, 2h, 2d)";
    const struct conf_node *val;
    sim_time v;
    int rc = lookup(doc, map, key, required, expect, &val, err);

    if (rc <= 0)
        return rc;
    if (val->kind != CONF_SCALAR || conf_parse_duration(val->value, &v))
        return wrong_value(doc, val, key, expect, err);
    if (v > SIM_TIME_LIMIT)
        return wrong_value(doc, val, key, "a duration of at most 100 years", err);
    if (v < min) {
        char floor[64], phrase[96];
        conf_format_duration(min, floor, sizeof floor);
        snprintf(phrase, sizeof phrase, "a duration >= %s", floor);
        return wrong_value(doc, val, key, phrase, err);
    }
    *out = v;
    return 0;
}
