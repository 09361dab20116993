/* tokens.c — token-length distributions and ServeGen dataset.json (see tokens.h). */
#include "traces/tokens.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct tok_named *tok_named_find(const char *name)
{
    for (size_t i = 0; name && i < TOK_NAMED_N; i++)
        if (!strcasecmp(tok_named_table[i].name, name))
            return &tok_named_table[i];
    return NULL;
}

size_t tok_named_list(char *buf, size_t len)
{
    size_t pos = 0;
    for (size_t i = 0; i < TOK_NAMED_N; i++) {
        int w = snprintf(pos < len ? buf + pos : NULL, pos < len ? len - pos : 0, "%s%s",
                         i ? ", " : "", tok_named_table[i].name);
        pos += w > 0 ? (size_t)w : 0;
    }
    return pos;
}

/* q(u) of a quantile table: the segment holding u, linear within it. */
static double quantile_at(const double *q, double u)
{
    size_t lo = 0, hi = TOK_GRID_N - 1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (tok_grid[mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    double w = (u - tok_grid[lo]) / (tok_grid[hi] - tok_grid[lo]);
    return q[lo] + w * (q[hi] - q[lo]);
}

static uint32_t clamp_len(const struct tok_dist *d, double x)
{
    double v = floor(x + 0.5);
    if (!(v >= 1))
        v = 1;
    if (v > TRACE_MAX_TOKENS)
        v = TRACE_MAX_TOKENS;
    uint32_t n = (uint32_t)v;
    if (d->min && n < d->min)
        n = d->min;
    if (d->max && n > d->max)
        n = d->max;
    return n;
}

uint32_t tok_draw(const struct tok_dist *d, struct rng *r)
{
    switch (d->kind) {
    case TOK_FIXED:
        return clamp_len(d, d->fixed);
    case TOK_LOGNORMAL:
        return clamp_len(d, exp(d->mu + d->sigma * rng_normal1(r)));
    case TOK_EMPIRICAL:
        return clamp_len(d, quantile_at(d->q, rng_uniform(r)));
    case TOK_NONE:
    default:
        return 1;
    }
}

double tok_mean(const struct tok_dist *d)
{
    switch (d->kind) {
    case TOK_FIXED:
        return d->fixed;
    case TOK_LOGNORMAL:
        return exp(d->mu + d->sigma * d->sigma / 2);
    case TOK_EMPIRICAL: {
        double m = 0;
        for (size_t i = 0; i + 1 < TOK_GRID_N; i++)
            m += (tok_grid[i + 1] - tok_grid[i]) * (d->q[i] + d->q[i + 1]) / 2;
        return m;
    }
    case TOK_NONE:
    default:
        return 1;
    }
}

uint32_t tok_max(const struct tok_dist *d)
{
    if (d->max)
        return d->max;
    if (d->kind == TOK_FIXED)
        return clamp_len(d, d->fixed);
    if (d->kind == TOK_EMPIRICAL)
        return clamp_len(d, d->q[TOK_GRID_N - 1]);
    return 0;
}

/* ---- ServeGen dataset.json ---- */

struct tok_pmf {
    uint32_t n;
    uint32_t *tokens;
    double *cdf; /* cumulative, last = 1 */
};

struct tok_window {
    double t0; /* window start, s */
    struct tok_pmf in, out;
};

struct tok_servegen {
    struct tok_window *w; /* sorted by t0; only windows with data */
    size_t n;
};

struct jp {
    const char *path;
    const char *s, *p, *end;
    int line;
    const char *line_start;
    struct trace_err *err;
};

static int jp_fail(struct jp *j, const char *what)
{
    snprintf(j->err->msg, sizeof(j->err->msg), "%s:%d:%d: %s", j->path, j->line,
             (int)(j->p - j->line_start) + 1, what);
    return -EINVAL;
}

static void jp_ws(struct jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n')) {
        if (*j->p == '\n') {
            j->line++;
            j->line_start = j->p + 1;
        }
        j->p++;
    }
}

static int jp_expect(struct jp *j, char c, const char *what)
{
    jp_ws(j);
    if (j->p >= j->end || *j->p != c)
        return jp_fail(j, what);
    j->p++;
    return 0;
}

/* A JSON string without escapes other than \" and \\ (dataset.json holds none). Returns its
 * contents [*a, *b) in the file text. */
static int jp_string(struct jp *j, const char **a, const char **b)
{
    jp_ws(j);
    if (j->p >= j->end || *j->p != '"')
        return jp_fail(j, "expected a string");
    j->p++;
    *a = j->p;
    while (j->p < j->end && *j->p != '"') {
        if (*j->p == '\\')
            return jp_fail(j, "escape sequences are not expected in a ServeGen dataset");
        if (*j->p == '\n')
            return jp_fail(j, "unterminated string");
        j->p++;
    }
    if (j->p >= j->end)
        return jp_fail(j, "unterminated string");
    *b = j->p++;
    return 0;
}

static int pmf_push(struct tok_pmf *m, size_t *cap, uint32_t tok, double w)
{
    if (m->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        uint32_t *t = realloc(m->tokens, nc * sizeof(*t));
        if (!t)
            return -ENOMEM;
        m->tokens = t;
        double *c = realloc(m->cdf, nc * sizeof(*c));
        if (!c)
            return -ENOMEM;
        m->cdf = c;
        *cap = nc;
    }
    m->tokens[m->n] = tok;
    m->cdf[m->n] = w;
    m->n++;
    return 0;
}

/*
 * A Python dict literal "{50: 0.23, 51: 0.3}" held in [a, b) of the file
 * (a string value: no newline inside). Token counts are integers >= 0 (0
 * counts as 1), probabilities >= 0 with a positive sum; they are normalised.
 */
static int parse_pmf(struct jp *j, const char *a, const char *b, struct tok_pmf *m)
{
    size_t cap = 0;
    const char *save = j->p;
    j->p = a;
    int rc = 0;
    jp_ws(j);
    if (j->p >= b || *j->p != '{') {
        rc = jp_fail(j, "expected a dict literal {tokens: probability, ...}");
        goto out;
    }
    j->p++;
    for (;;) {
        jp_ws(j);
        if (j->p < b && *j->p == '}') {
            j->p++;
            break;
        }
        if (m->n && (rc = jp_expect(j, ',', "expected ',' or '}' in the dict literal")))
            goto out;
        jp_ws(j);
        char *e;
        errno = 0;
        long tok = strtol(j->p, &e, 10);
        if (e == j->p || e > b || errno || tok < 0 || tok > (long)TRACE_MAX_TOKENS) {
            rc = jp_fail(j, "expected a token count (an integer, 0..10000000)");
            goto out;
        }
        j->p = e;
        if ((rc = jp_expect(j, ':', "expected ':' after a token count")))
            goto out;
        jp_ws(j);
        errno = 0;
        double w = strtod(j->p, &e);
        if (e == j->p || e > b || errno || !(w >= 0) || !isfinite(w)) {
            rc = jp_fail(j, "expected a probability (a number >= 0)");
            goto out;
        }
        j->p = e;
        if (m->n && (uint32_t)(tok ? tok : 1) <= m->tokens[m->n - 1]) {
            rc = jp_fail(j, "token counts must increase within a dict literal");
            goto out;
        }
        if ((rc = pmf_push(m, &cap, (uint32_t)(tok ? tok : 1), w)) < 0) {
            snprintf(j->err->msg, sizeof(j->err->msg), "%s: out of memory", j->path);
            goto out;
        }
    }
    jp_ws(j);
    if (j->p != b) {
        rc = jp_fail(j, "unexpected text after the dict literal");
        goto out;
    }
    double sum = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        sum += m->cdf[i];
        m->cdf[i] = sum;
    }
    if (m->n && !(sum > 0)) {
        rc = jp_fail(j, "the probabilities of a dict literal sum to 0");
        goto out;
    }
    for (uint32_t i = 0; i < m->n; i++)
        m->cdf[i] /= sum;
    if (m->n)
        m->cdf[m->n - 1] = 1.0;
out:
    if (rc == 0)
        j->p = save;
    return rc;
}

static void pmf_free(struct tok_pmf *m)
{
    free(m->tokens);
    free(m->cdf);
    memset(m, 0, sizeof(*m));
}

void tok_servegen_free(struct tok_servegen *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        pmf_free(&t->w[i].in);
        pmf_free(&t->w[i].out);
    }
    free(t->w);
    free(t);
}

static int cmp_window(const void *a, const void *b)
{
    double x = ((const struct tok_window *)a)->t0, y = ((const struct tok_window *)b)->t0;
    return (x > y) - (x < y);
}

/* One window's object {"input_tokens": "...", "output_tokens": "..."} into *w. */
static int parse_window(struct jp *j, struct tok_window *w)
{
    int rc;
    bool seen_in = false, seen_out = false;
    if ((rc = jp_expect(j, '{', "expected '{' (a window's object)")))
        return rc;
    for (bool first = true;; first = false) {
        jp_ws(j);
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            break;
        }
        if (!first && (rc = jp_expect(j, ',', "expected ',' or '}' in a window's object")))
            return rc;
        const char *ka, *kb, *va, *vb;
        if ((rc = jp_string(j, &ka, &kb)) || (rc = jp_expect(j, ':', "expected ':'")))
            return rc;
        const char *at = j->p;
        int at_line = j->line;
        const char *at_ls = j->line_start;
        if ((rc = jp_string(j, &va, &vb)))
            return rc;
        size_t kn = (size_t)(kb - ka);
        struct tok_pmf *m = NULL;
        if (kn == 12 && !memcmp(ka, "input_tokens", 12)) {
            m = &w->in;
            seen_in = true;
        } else if (kn == 13 && !memcmp(ka, "output_tokens", 13)) {
            m = &w->out;
            seen_out = true;
        } else {
            continue; /* other keys are not ours */
        }
        if (m->n) {
            j->p = at;
            return jp_fail(j, "a window gives the same key twice");
        }
        const char *after = j->p;
        int after_line = j->line;
        const char *after_ls = j->line_start;
        j->p = at;
        j->line = at_line;
        j->line_start = at_ls;
        jp_ws(j);
        if ((rc = parse_pmf(j, va, vb, m)))
            return rc;
        j->p = after;
        j->line = after_line;
        j->line_start = after_ls;
    }
    if (!seen_in || !seen_out)
        return jp_fail(j, "a window needs both 'input_tokens' and 'output_tokens'");
    return 0;
}

struct tok_servegen *tok_servegen_load(const char *path, struct trace_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err->msg, sizeof(err->msg), "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 > cap) {
            size_t nc = cap ? 2 * cap : 262144;
            if (nc > (size_t)64 << 20) { /* the shipped files are < 1 MB */
                snprintf(err->msg, sizeof(err->msg), "%s: larger than 64 MiB", path);
                free(text);
                fclose(f);
                return NULL;
            }
            char *t = realloc(text, nc);
            if (!t) {
                snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
                free(text);
                fclose(f);
                return NULL;
            }
            text = t;
            cap = nc;
        }
        size_t k = fread(text + n, 1, cap - n, f);
        n += k;
        if (k == 0)
            break;
    }
    fclose(f);
    struct tok_servegen *t = calloc(1, sizeof(*t));
    struct jp j = {path, text, text, text + n, 1, text, err};
    size_t wcap = 0;
    int rc = t ? 0 : -ENOMEM;
    if (rc)
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
    if (!rc)
        rc = jp_expect(&j, '{', "expected '{' (a JSON object of windows)");
    for (bool first = true; !rc; first = false) {
        jp_ws(&j);
        if (j.p < j.end && *j.p == '}') {
            j.p++;
            break;
        }
        if (!first && (rc = jp_expect(&j, ',', "expected ',' or '}' between windows")))
            break;
        const char *ka, *kb;
        if ((rc = jp_string(&j, &ka, &kb)))
            break;
        char key[32];
        size_t kn = (size_t)(kb - ka);
        char *e;
        snprintf(key, sizeof(key), "%.*s", (int)(kn < 31 ? kn : 31), ka);
        errno = 0;
        double t0 = strtod(key, &e);
        if (kn == 0 || kn > 30 || *e || errno || !(t0 >= 0) || t0 > 1e10) {
            j.p = ka;
            rc = jp_fail(&j, "expected a window start in seconds as the key");
            break;
        }
        if ((rc = jp_expect(&j, ':', "expected ':' after a window key")))
            break;
        struct tok_window w = {.t0 = t0};
        if ((rc = parse_window(&j, &w))) {
            pmf_free(&w.in);
            pmf_free(&w.out);
            break;
        }
        if (!w.in.n || !w.out.n) { /* "{}": no data in this window */
            pmf_free(&w.in);
            pmf_free(&w.out);
            continue;
        }
        if (t->n == wcap) {
            size_t nc = wcap ? 2 * wcap : 64;
            struct tok_window *p = realloc(t->w, nc * sizeof(*p));
            if (!p) {
                pmf_free(&w.in);
                pmf_free(&w.out);
                snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
                rc = -ENOMEM;
                break;
            }
            t->w = p;
            wcap = nc;
        }
        t->w[t->n++] = w;
    }
    if (!rc) {
        jp_ws(&j);
        if (j.p != j.end)
            rc = jp_fail(&j, "unexpected text after the JSON object");
    }
    free(text);
    if (rc) {
        tok_servegen_free(t);
        return NULL;
    }
    qsort(t->w, t->n, sizeof(*t->w), cmp_window);
    return t;
}

size_t tok_servegen_windows(const struct tok_servegen *t)
{
    return t ? t->n : 0;
}

static uint32_t pmf_draw(const struct tok_pmf *m, double u)
{
    uint32_t lo = 0, hi = m->n - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return m->tokens[lo];
}

bool tok_servegen_draw(const struct tok_servegen *t, double t_s, struct rng *r, uint32_t *in,
                       uint32_t *out)
{
    if (!t || !t->n)
        return false;
    size_t lo = 0, hi = t->n; /* the last window starting at or before t_s */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (t->w[mid].t0 <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    const struct tok_window *w = &t->w[lo];
    *in = pmf_draw(&w->in, rng_uniform(r));
    *out = pmf_draw(&w->out, rng_uniform(r));
    return true;
}
