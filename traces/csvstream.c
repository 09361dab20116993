/* csvstream.c — block-fed libcsv reader with physical line numbers. */
#include "traces/csvstream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <csv.h>

struct csv_fld {
    size_t off, len;
};

struct csv_rec {
    size_t first, n;
    int64_t line;
};

struct csvstream {
    char *path;
    FILE *f;
    struct csv_parser p;
    bool parser_live;
    unsigned char *blk;
    uint64_t bytes;
    bool at_start; /* nothing read yet (for the UTF-8 BOM) */

    /* Arena of parsed fields: completed records, then the record in progress. */
    char *buf;
    size_t used, cap;
    struct csv_fld *flds;
    size_t nflds, fcap;
    struct csv_rec *recs;
    size_t nrec, rcap, next_rec;
    const struct csv_rec *cur;

    /* Record in progress. */
    bool in_rec, pending_cr;
    size_t part_first, part_buf;
    int64_t part_line;
    int64_t line; /* physical line the parser is on */

    int cb_err; /* first error met inside a callback */
    struct trace_err cb_msg;
    bool done;
    int done_code;
    struct trace_err done_msg;

    bool header;
    char *colbuf;
    char **cols;
    size_t ncols;
};

static int set_cb_error(struct csvstream *cs, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_cb_error(struct csvstream *cs, int code, const char *fmt, ...)
{
    if (cs->cb_err)
        return cs->cb_err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs->cb_msg.msg, sizeof(cs->cb_msg.msg), fmt, ap);
    va_end(ap);
    cs->cb_err = code;
    return code;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

static void on_field(void *s, size_t len, void *data)
{
    struct csvstream *cs = data;
    if (!cs->in_rec) {
        cs->in_rec = true;
        cs->part_line = cs->line;
        cs->part_first = cs->nflds;
        cs->part_buf = cs->used;
    }
    cs->pending_cr = false;
    if (cs->cb_err)
        return;
    /* Quoted fields may hold newlines: they are physical lines too. */
    const char *q = s, *end = (const char *)s + len;
    while (q && q < end && (q = memchr(q, '\n', (size_t)(end - q))) != NULL) {
        cs->line++;
        q++;
    }
    if (len > CSVSTREAM_MAX_FIELD) {
        set_cb_error(cs, -EINVAL, "%s:%lld: field %zu is longer than %u bytes", cs->path,
                     (long long)cs->part_line, cs->nflds - cs->part_first + 1, CSVSTREAM_MAX_FIELD);
        return;
    }
    if (cs->nflds - cs->part_first >= CSVSTREAM_MAX_FIELDS) {
        set_cb_error(cs, -EINVAL, "%s:%lld: more than %u fields in one record", cs->path,
                     (long long)cs->part_line, CSVSTREAM_MAX_FIELDS);
        return;
    }
    if (grow((void **)&cs->buf, &cs->cap, cs->used + len + 1, 1) < 0 ||
        grow((void **)&cs->flds, &cs->fcap, cs->nflds + 1, sizeof(*cs->flds)) < 0) {
        set_cb_error(cs, -ENOMEM, "%s:%lld: out of memory", cs->path, (long long)cs->part_line);
        return;
    }
    if (len)
        memcpy(cs->buf + cs->used, s, len);
    cs->buf[cs->used + len] = '\0';
    cs->flds[cs->nflds].off = cs->used;
    cs->flds[cs->nflds].len = len;
    cs->nflds++;
    cs->used += len + 1;
}

static void on_record(int c, void *data)
{
    struct csvstream *cs = data;
    if (!cs->in_rec) {
        /* A bare line end: a blank line, or the '\n' of a "\r\n" pair. */
        if (c == '\n' && cs->pending_cr) {
            cs->pending_cr = false;
            return;
        }
        if (c == '\n' || c == '\r')
            cs->line++;
        cs->pending_cr = c == '\r';
        return;
    }
    cs->in_rec = false;
    if (!cs->cb_err) {
        if (grow((void **)&cs->recs, &cs->rcap, cs->nrec + 1, sizeof(*cs->recs)) < 0) {
            set_cb_error(cs, -ENOMEM, "%s:%lld: out of memory", cs->path, (long long)cs->part_line);
        } else {
            cs->recs[cs->nrec].first = cs->part_first;
            cs->recs[cs->nrec].n = cs->nflds - cs->part_first;
            cs->recs[cs->nrec].line = cs->part_line;
            cs->nrec++;
        }
    }
    if (c == '\n' || c == '\r')
        cs->line++;
    cs->pending_cr = c == '\r';
}

/* Drop consumed records; move the record in progress to the front of the arena. */
static void compact(struct csvstream *cs)
{
    if (cs->in_rec) {
        size_t nb = cs->used - cs->part_buf, nf = cs->nflds - cs->part_first;
        memmove(cs->buf, cs->buf + cs->part_buf, nb);
        memmove(cs->flds, cs->flds + cs->part_first, nf * sizeof(*cs->flds));
        for (size_t i = 0; i < nf; i++)
            cs->flds[i].off -= cs->part_buf;
        cs->used = nb;
        cs->nflds = nf;
        cs->part_first = 0;
        cs->part_buf = 0;
    } else {
        cs->used = 0;
        cs->nflds = 0;
    }
    cs->nrec = 0;
    cs->next_rec = 0;
}

static int finish(struct csvstream *cs, int code, const struct trace_err *msg,
                  struct trace_err *err)
{
    cs->done = true;
    cs->done_code = code;
    if (msg)
        cs->done_msg = *msg;
    if (code < 0 && err && msg)
        *err = *msg;
    return code;
}

static int parser_start(struct csvstream *cs)
{
    if (cs->parser_live)
        csv_free(&cs->p);
    cs->parser_live = false;
    if (csv_init(&cs->p, CSV_STRICT | CSV_REPALL_NL | CSV_STRICT_FINI) != 0)
        return -ENOMEM;
    cs->parser_live = true;
    return 0;
}

static int fill(struct csvstream *cs, struct trace_err *err)
{
    struct trace_err m;
    compact(cs);
    size_t n = fread(cs->blk, 1, CSVSTREAM_BLOCK, cs->f);
    if (n == 0) {
        if (ferror(cs->f)) {
            snprintf(m.msg, sizeof(m.msg), "%s:%lld: read error", cs->path, (long long)cs->line);
            return finish(cs, -EIO, &m, err);
        }
        int64_t start = cs->in_rec ? cs->part_line : cs->line;
        if (csv_fini(&cs->p, on_field, on_record, cs) != 0) {
            snprintf(m.msg, sizeof(m.msg),
                     "%s:%lld: unterminated quoted field (a '\"' opened here is never closed)",
                     cs->path, (long long)start);
            return finish(cs, -EINVAL, &m, err);
        }
        if (cs->cb_err)
            return finish(cs, cs->cb_err, &cs->cb_msg, err);
        if (cs->nrec == 0)
            return finish(cs, 1, NULL, err);
        cs->done = true;
        cs->done_code = 1;
        return 0;
    }
    const unsigned char *b = cs->blk;
    cs->bytes += n;
    if (cs->at_start) {
        cs->at_start = false;
        if (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) {
            b += 3;
            n -= 3;
        }
    }
    size_t got = csv_parse(&cs->p, b, n, on_field, on_record, cs);
    if (cs->cb_err)
        return finish(cs, cs->cb_err, &cs->cb_msg, err);
    if (got < n) {
        int e = csv_error(&cs->p);
        if (e == CSV_EPARSE)
            snprintf(m.msg, sizeof(m.msg),
                     "%s:%lld: malformed quoting (a '\"' inside an unquoted field or after a "
                     "closing quote)",
                     cs->path, (long long)cs->line);
        else
            snprintf(m.msg, sizeof(m.msg), "%s:%lld: %s", cs->path, (long long)cs->line,
                     csv_strerror(e));
        return finish(cs, e == CSV_EPARSE ? -EINVAL : -ENOMEM, &m, err);
    }
    if (cs->p.entry_pos > CSVSTREAM_MAX_FIELD) {
        snprintf(m.msg, sizeof(m.msg), "%s:%lld: field %zu is longer than %u bytes", cs->path,
                 (long long)(cs->in_rec ? cs->part_line : cs->line),
                 cs->in_rec ? cs->nflds - cs->part_first + 1 : 1, CSVSTREAM_MAX_FIELD);
        return finish(cs, -EINVAL, &m, err);
    }
    return 0;
}

int csvstream_next(struct csvstream *cs, struct trace_err *err)
{
    for (;;) {
        if (cs->next_rec < cs->nrec) {
            cs->cur = &cs->recs[cs->next_rec++];
            return 0;
        }
        cs->cur = NULL;
        if (cs->done) {
            if (cs->done_code < 0 && err)
                *err = cs->done_msg;
            return cs->done_code;
        }
        int rc = fill(cs, err);
        if (rc != 0)
            return rc;
    }
}

static int read_header(struct csvstream *cs, struct trace_err *err)
{
    int rc = csvstream_next(cs, err);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        snprintf(err->msg, sizeof(err->msg), "%s: empty file (expected a header line)", cs->path);
        return -EINVAL;
    }
    return 0;
}

static int set_columns(struct csvstream *cs, const char *list)
{
    size_t n = 1, len = strlen(list);
    for (size_t i = 0; i < len; i++)
        n += list[i] == ',';
    cs->colbuf = malloc(len + 1);
    cs->cols = calloc(n, sizeof(*cs->cols));
    if (!cs->colbuf || !cs->cols)
        return -ENOMEM;
    memcpy(cs->colbuf, list, len + 1);
    char *p = cs->colbuf;
    cs->ncols = 0;
    for (;;) {
        cs->cols[cs->ncols++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    return 0;
}

static int header_columns(struct csvstream *cs)
{
    size_t n = csvstream_nfields(cs), total = 0;
    for (size_t i = 0; i < n; i++)
        total += csvstream_field_len(cs, i) + 1;
    cs->colbuf = malloc(total ? total : 1);
    cs->cols = calloc(n ? n : 1, sizeof(*cs->cols));
    if (!cs->colbuf || !cs->cols)
        return -ENOMEM;
    char *p = cs->colbuf;
    for (size_t i = 0; i < n; i++) {
        size_t l = csvstream_field_len(cs, i);
        memcpy(p, csvstream_field(cs, i), l + 1);
        cs->cols[i] = p;
        p += l + 1;
    }
    cs->ncols = n;
    return 0;
}

static void reset_state(struct csvstream *cs)
{
    cs->used = cs->nflds = cs->nrec = cs->next_rec = 0;
    cs->cur = NULL;
    cs->in_rec = cs->pending_cr = false;
    cs->line = 1;
    cs->cb_err = 0;
    cs->done = false;
    cs->done_code = 0;
    cs->bytes = 0;
    cs->at_start = true;
}

struct csvstream *csvstream_open(const char *path, const struct csvstream_opts *opts,
                                 struct trace_err *err)
{
    struct csvstream *cs = calloc(1, sizeof(*cs));
    if (!cs) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return NULL;
    }
    size_t pl = strlen(path);
    cs->path = malloc(pl + 1);
    cs->blk = malloc(CSVSTREAM_BLOCK);
    if (!cs->path || !cs->blk || parser_start(cs) < 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        csvstream_destroy(cs);
        return NULL;
    }
    memcpy(cs->path, path, pl + 1);
    reset_state(cs);
    cs->f = fopen(path, "rb");
    if (!cs->f) {
        snprintf(err->msg, sizeof(err->msg), "%s: cannot open: %s", path, strerror(errno));
        csvstream_destroy(cs);
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(cs->f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err->msg, sizeof(err->msg), "%s: is a directory, expected a CSV file", path);
            csvstream_destroy(cs);
            return NULL;
        }
        if (S_ISREG(st.st_mode) && st.st_size == 0) {
            snprintf(err->msg, sizeof(err->msg), "%s: empty file", path);
            csvstream_destroy(cs);
            return NULL;
        }
    }
    if (opts && opts->delim)
        csv_set_delim(&cs->p, (unsigned char)opts->delim);
    cs->header = opts && opts->header;
    int rc = 0;
    if (cs->header) {
        rc = read_header(cs, err);
        if (rc == 0 && header_columns(cs) < 0)
            rc = -ENOMEM;
    } else if (opts && opts->columns) {
        rc = set_columns(cs, opts->columns);
    }
    if (rc == -ENOMEM)
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
    if (rc < 0) {
        csvstream_destroy(cs);
        return NULL;
    }
    return cs;
}

int csvstream_rewind(struct csvstream *cs, struct trace_err *err)
{
    char d = (char)csv_get_delim(&cs->p);
    if (fseek(cs->f, 0, SEEK_SET) != 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: cannot rewind: %s", cs->path, strerror(errno));
        return -EIO;
    }
    clearerr(cs->f);
    if (parser_start(cs) < 0) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", cs->path);
        return -ENOMEM;
    }
    csv_set_delim(&cs->p, (unsigned char)d);
    reset_state(cs);
    if (cs->header)
        return read_header(cs, err);
    return 0;
}

void csvstream_destroy(struct csvstream *cs)
{
    if (!cs)
        return;
    if (cs->f)
        fclose(cs->f);
    if (cs->parser_live)
        csv_free(&cs->p);
    free(cs->path);
    free(cs->blk);
    free(cs->buf);
    free(cs->flds);
    free(cs->recs);
    free(cs->colbuf);
    free(cs->cols);
    free(cs);
}

size_t csvstream_nfields(const struct csvstream *cs)
{
    return cs->cur ? cs->cur->n : 0;
}

const char *csvstream_field(const struct csvstream *cs, size_t i)
{
    if (!cs->cur || i >= cs->cur->n)
        return "";
    return cs->buf + cs->flds[cs->cur->first + i].off;
}

size_t csvstream_field_len(const struct csvstream *cs, size_t i)
{
    if (!cs->cur || i >= cs->cur->n)
        return 0;
    return cs->flds[cs->cur->first + i].len;
}

int64_t csvstream_line(const struct csvstream *cs)
{
    return cs->cur ? cs->cur->line : cs->line;
}

const char *csvstream_path(const struct csvstream *cs)
{
    return cs->path;
}

uint64_t csvstream_bytes(const struct csvstream *cs)
{
    return cs->bytes;
}

int csvstream_col(const struct csvstream *cs, const char *name)
{
    for (size_t i = 0; i < cs->ncols; i++)
        if (strcmp(cs->cols[i], name) == 0)
            return (int)i;
    return -1;
}

size_t csvstream_ncols(const struct csvstream *cs)
{
    return cs->ncols;
}

const char *csvstream_colname(const struct csvstream *cs, size_t i)
{
    return i < cs->ncols ? cs->cols[i] : "";
}

/* Quote a field for an error message: printable ASCII kept, the rest as \xNN, cut at 40 bytes. */
static void quote_field(char *dst, size_t cap, const char *s, size_t len)
{
    size_t o = 0;
    size_t lim = len > 40 ? 40 : len;
    for (size_t i = 0; i < lim && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            dst[o++] = (char)c;
        } else {
            int w = snprintf(dst + o, cap - o, "\\x%02x", c);
            if (w < 0)
                break;
            o += (size_t)w;
        }
    }
    if (len > lim && o + 4 < cap) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o < cap ? o : cap - 1] = '\0';
}

int csvstream_field_error(const struct csvstream *cs, struct trace_err *err, size_t col,
                          const char *expected)
{
    char q[200];
    char cname[64];
    quote_field(q, sizeof(q), csvstream_field(cs, col), csvstream_field_len(cs, col));
    if (col < cs->ncols)
        snprintf(cname, sizeof(cname), "%s", cs->cols[col]);
    else
        snprintf(cname, sizeof(cname), "#%zu", col + 1);
    snprintf(err->msg, sizeof(err->msg), "%s:%lld: column '%s': expected %s, got '%s'", cs->path,
             (long long)csvstream_line(cs), cname, expected, q);
    return -EINVAL;
}

int csvstream_error(const struct csvstream *cs, struct trace_err *err, const char *fmt, ...)
{
    int n =
        snprintf(err->msg, sizeof(err->msg), "%s:%lld: ", cs->path, (long long)csvstream_line(cs));
    if (n < 0 || (size_t)n >= sizeof(err->msg))
        return -EINVAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}
