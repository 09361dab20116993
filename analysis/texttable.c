/* texttable.c — aligned text and Markdown tables. */
#include "analysis/texttable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void texttable_init(struct texttable *t, size_t ncols)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
}

void texttable_row(struct texttable *t, const char *const *cells)
{
    if (t->rc)
        return;
    char **nc = realloc(t->cells, (t->nrows + 1) * t->ncols * sizeof(*nc));
    if (!nc) {
        t->rc = -ENOMEM;
        return;
    }
    t->cells = nc;
    for (size_t c = 0; c < t->ncols; c++) {
        const char *s = cells[c] ? cells[c] : "";
        size_t n = strlen(s) + 1;
        char *d = malloc(n);
        if (d)
            memcpy(d, s, n);
        else
            t->rc = -ENOMEM;
        t->cells[t->nrows * t->ncols + c] = d;
    }
    t->nrows++;
}

/* Display width: count UTF-8 lead bytes only, so "±" and "µ" take one column. */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; s && *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

int texttable_print(const struct texttable *t, FILE *out, bool markdown, int indent)
{
    if (t->rc)
        return t->rc;
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t x = width(t->cells[r * t->ncols + c]);
            if (x > w[c])
                w[c] = x;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        if (!markdown)
            fprintf(out, "%*s", indent, "");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            int pad = (int)(w[c] - width(s));
            if (markdown)
                fprintf(out, "| %s ", s);
            else if (c == 0)
                fprintf(out, "%s%*s", s, pad, "");
            else
                fprintf(out, "  %*s%s", pad, "", s);
        }
        fputs(markdown ? "|\n" : "\n", out);
        if (markdown && r == 0) {
            for (size_t c = 0; c < t->ncols; c++)
                fputs(c == 0 ? "| --- " : "| ---: ", out);
            fputs("|\n", out);
        }
    }
    free(w);
    return 0;
}

void texttable_release(struct texttable *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}
