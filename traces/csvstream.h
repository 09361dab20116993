/*
 * csvstream.h — a streaming CSV record reader on libcsv.
 *
 * The file is read in fixed blocks (64 KiB) and fed to libcsv; complete
 * records are handed out one at a time, so memory stays flat however long the
 * file is (one block plus one record). Every record knows the physical line it
 * starts on (1-based; a quoted newline inside a field counts as a line, "\r\n"
 * counts once, a lone "\r" counts as a line end). Blank lines are skipped.
 *
 * Invariants: a field never exceeds CSVSTREAM_MAX_FIELD bytes and a record
 * never has more than CSVSTREAM_MAX_FIELDS fields; larger input is an error,
 * never an allocation spree. Fields are NUL-terminated copies valid until the
 * next csvstream_next() call.
 *
 * Header: with `header` set the first record is the header and csvstream_col()
 * finds columns by name; headerless files (PAI, ServeGen) pass `columns`
 * instead, a comma-separated list of names.
 */
#ifndef TIDESIM_CSVSTREAM_H
#define TIDESIM_CSVSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/source.h"

#define CSVSTREAM_BLOCK      (64u * 1024u)
#define CSVSTREAM_MAX_FIELD  (64u * 1024u) /* bytes */
#define CSVSTREAM_MAX_FIELDS 1024u

struct csvstream_opts {
    bool header;         /* the first record is a header line */
    const char *columns; /* headerless: "a,b,c" column names (copied); NULL = none */
    char delim;          /* 0 = ',' */
};

struct csvstream;

/*
 * Open `path` and, with opts->header, read its header. Returns a reader the
 * caller owns, or NULL with err filled: "PATH: cannot open: <strerror>",
 * "PATH: empty file", or the header's parse error.
 */
struct csvstream *csvstream_open(const char *path, const struct csvstream_opts *opts,
                                 struct trace_err *err);

/* Close and free; NULL is a no-op. */
void csvstream_destroy(struct csvstream *cs);

/*
 * Advance to the next record. Returns 0 (a record is current), 1 at end of file,
 * or a negative errno-style code with err filled ("PATH:LINE: ..."): -EIO read
 * error, -EINVAL malformed quoting / field too long / too many fields, -ENOMEM.
 * After an error the stream is finished (further calls return the same code).
 */
int csvstream_next(struct csvstream *cs, struct trace_err *err);

/*
 * Rewind to the first data record (after the header). Returns 0 or a negative
 * code with err filled.
 */
int csvstream_rewind(struct csvstream *cs, struct trace_err *err);

/* Current record: number of fields, field i (NUL-terminated; "" when i is out of range). */
size_t csvstream_nfields(const struct csvstream *cs);
const char *csvstream_field(const struct csvstream *cs, size_t i);
size_t csvstream_field_len(const struct csvstream *cs, size_t i);

/* Physical line the current record starts on (1-based). */
int64_t csvstream_line(const struct csvstream *cs);

/* Path as given to csvstream_open(). */
const char *csvstream_path(const struct csvstream *cs);

/* Bytes read from the file so far. */
uint64_t csvstream_bytes(const struct csvstream *cs);

/* Column index of `name` in the header / column list (exact match), or -1. */
int csvstream_col(const struct csvstream *cs, const char *name);

/* Number of columns in the header / column list; name of column i ("" if none). */
size_t csvstream_ncols(const struct csvstream *cs);
const char *csvstream_colname(const struct csvstream *cs, size_t i);

/*
 * Format "PATH:LINE: column 'NAME': expected EXPECTED, got 'FIELD'" into err
 * for field `col` of the current record (the field is quoted with non-printable
 * bytes escaped and cut at 40 bytes). Returns -EINVAL for convenience.
 */
int csvstream_field_error(const struct csvstream *cs, struct trace_err *err, size_t col,
                          const char *expected);

/* Format "PATH:LINE: " + message into err. Returns -EINVAL. */
int csvstream_error(const struct csvstream *cs, struct trace_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
