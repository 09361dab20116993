/*
 * texttable.h — a table of strings printed as aligned text or as Markdown,
 * for report and compare. Cells are copied; the table owns them.
 * Text: first column left-aligned, the others right-aligned, widths fitted
 * to the widest cell. Markdown: a pipe table with a header rule.
 */
#ifndef TIDESIM_TEXTTABLE_H
#define TIDESIM_TEXTTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct texttable {
    size_t ncols, nrows; /* nrows counts the header row */
    char **cells;        /* row-major, nrows × ncols */
    int rc;              /* first allocation failure (-ENOMEM), sticky */
};

/* An empty table of ncols columns. */
void texttable_init(struct texttable *t, size_t ncols);
/* Append a row of ncols cells (NULL cell = ""); the first row is the header. */
void texttable_row(struct texttable *t, const char *const *cells);
/* Print with `indent` leading spaces (text) or as Markdown. Returns t->rc. */
int texttable_print(const struct texttable *t, FILE *out, bool markdown, int indent);
void texttable_release(struct texttable *t);

#endif
