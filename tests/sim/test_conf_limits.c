/* test_conf_limits.c — the YAML loader's limits on hostile input: nesting depth, aliases,
 * expanded size (billion laughs), the anchor index, the longest duration. The big texts are
 * built here in memory; positions in the expected messages are counted by hand below. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/conf.h"

/* A growing text buffer (asserting on allocation failure). */
struct text {
    char *s;
    size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        cr_assert_geq(n, 0);
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap ? 2 * t->cap + (size_t)n : 4096 + (size_t)n;
        t->s = realloc(t->s, t->cap);
        cr_assert_not_null(t->s);
    }
}

static void expect_refused(const char *text, const char *msg)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", text, &err), -EINVAL);
    cr_assert_str_eq(err.msg, msg);
    cr_assert_null(doc.root);
}

Test(conf_limits, nesting_depth)
{
    /* "deep: " then 64 '[': the root map is level 1, the k-th '[' (column 6 + k) level k + 1,
     * so the 64th, at column 70, would be level 65. 63 of them load (test_conf.c). */
    struct text t = {0};
    put(&t, "deep: ");
    for (int i = 0; i < 64; i++)
        put(&t, "[");
    for (int i = 0; i < 64; i++)
        put(&t, "]");
    put(&t, "\n");
    expect_refused(t.s, "t.yaml:1:70: nesting deeper than 64 levels (limit 64)");
    free(t.s);
}

Test(conf_limits, nesting_depth_through_an_alias)
{
    /* x: 62 nested sequences (levels 2..63 under the root). Put under one map (level 2) it
     * reaches level 64: fine; under two maps (level 3) it would reach 65. */
    struct text t = {0};
    put(&t, "x: &x ");
    for (int i = 0; i < 62; i++)
        put(&t, "[");
    for (int i = 0; i < 62; i++)
        put(&t, "]");
    put(&t, "\nok: {c: *x}\n");
    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", t.s, &err), 0, "%s", err.msg);
    const struct conf_node *n = conf_get(conf_get(doc.root, "ok"), "c");
    int levels = 0;
    while (n->kind == CONF_SEQ && n->n == 1) {
        n = n->items[0];
        levels++;
    }
    cr_assert_eq(n->n, 0);
    cr_assert_eq(levels, 61); /* 62 sequences: 61 steps down to the empty innermost one */
    conf_release(&doc);
    /* "bad: {c: {d: *x}}": the alias is at column 14 of line 3. */
    put(&t, "bad: {c: {d: *x}}\n");
    expect_refused(t.s, "t.yaml:3:14: nesting deeper than 64 levels once aliases are expanded "
                        "(limit 64)");
    free(t.s);
}

Test(conf_limits, alias_count)
{
    /* Line 2 is "l: [*a, *a, ...]": alias k starts at column 5 + 4 (k - 1). */
    struct text t = {0};
    put(&t, "a: &a 1\nl: [");
    for (int i = 0; i < 10000; i++)
        put(&t, "*a, ");
    put(&t, "*a]\n");
    expect_refused(t.s, "t.yaml:2:40005: more than 10000 aliases (limit 10000)");

    /* 10,000 aliases are fine, each reading as its anchor. */
    free(t.s);
    t = (struct text){0};
    put(&t, "a: &a 1\nl: [*a");
    for (int i = 1; i < 10000; i++)
        put(&t, ", *a");
    put(&t, "]\n");
    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", t.s, &err), 0, "%s", err.msg);
    const struct conf_node *l = conf_get(doc.root, "l");
    cr_assert_eq(l->n, 10000);
    cr_assert_str_eq(l->items[9999]->value, "1");
    cr_assert_eq(l->items[9999]->line, 2);
    conf_release(&doc);
    free(t.s);
}

Test(conf_limits, billion_laughs)
{
    /*
     * a: 10 scalars (11 nodes with its sequence); b: 10 aliases of a (1 + 10 · 11 = 111);
     * c..e likewise: 1,111, 11,111, 111,111 nodes. With the keys a..e that is 123,460 nodes,
     * key f makes 123,461, and each *e in f adds 111,111: the 7th leaves 901,238, the 8th
     * would make 1,012,349 > 1,000,000. Line 6 is "f: &f [*e, *e, ...": alias k at column
     * 8 + 4 (k - 1), the 8th at column 36.
     */
    const char *lol = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
    struct text t = {0};
    put(&t, "%sf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", lol);
    expect_refused(t.s, "t.yaml:6:36: more than 1000000 nodes once aliases are expanded (limit "
                        "1000000; each alias counts as the whole node it names)");
    free(t.s);

    /* a..e alone (123,461 nodes with the root map) load, and *e reads as the tree it names. */
    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", lol, &err), 0, "%s", err.msg);
    const struct conf_node *e = conf_get(doc.root, "e");
    cr_assert_eq(e->n, 10);
    cr_assert_str_eq(e->items[9]->items[9]->items[9]->items[9]->items[9]->value, "x");
    conf_release(&doc);
}

Test(conf_limits, many_anchors_each_alias_finds_its_own)
{
    /* 40,000 anchors (the index grows many times), then 9,000 aliases to anchors spread over
     * all of them, the first one included: alias *aK reads "vK". A later anchor of the same
     * name wins (YAML 1.2 §3.2.2.2). */
    struct text t = {0};
    for (int i = 0; i < 40000; i++)
        put(&t, "k%d: &a%d v%d\n", i, i, i);
    put(&t, "again: &a7 seven\nl:\n");
    for (int i = 0; i < 9000; i++)
        put(&t, "  - *a%d\n", (i * 4447) % 40000);
    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", t.s, &err), 0, "%s", err.msg);
    const struct conf_node *l = conf_get(doc.root, "l");
    cr_assert_eq(l->n, 9000);
    for (int i = 0; i < 9000; i++) {
        int k = (i * 4447) % 40000;
        char want[16];
        snprintf(want, sizeof want, "v%d", k);
        cr_assert_str_eq(l->items[i]->value, k == 7 ? "seven" : want, "alias %d (*a%d)", i, k);
    }
    cr_assert_str_eq(l->items[0]->value, "v0");
    conf_release(&doc);
    free(t.s);
}

Test(conf_limits, longest_duration_is_100_years)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    sim_time d = 0;
    cr_assert_eq(conf_load_string(&doc, "t.yaml", "a: 36525d\nb: 36525d1us\nc: 1000000w\n", &err),
                 0);
    cr_assert_eq(conf_duration(&doc, doc.root, "a", true, 0, &d, &err), 0);
    cr_assert_eq(d, SIM_TIME_LIMIT); /* 100 Julian years = 36,525 days */
    cr_assert_eq(conf_duration(&doc, doc.root, "b", true, 0, &d, &err), -EINVAL);
    cr_assert_str_eq(err.msg,
                     "t.yaml:2:4: 'b': expected a duration of at most 100 years, got '36525d1us'");
    cr_assert_eq(conf_duration(&doc, doc.root, "c", true, 0, &d, &err), -EINVAL);
    cr_assert_str_eq(err.msg,
                     "t.yaml:3:4: 'c': expected a duration of at most 100 years, got '1000000w'");
    cr_assert_eq(d, SIM_TIME_LIMIT); /* unchanged by the refusals */
    conf_release(&doc);
}

Test(conf_limits, two_megabytes_of_anchors_and_aliases, .timeout = 30)
{
    /*
     * Issue 14 found anchor lookup linear per alias: a 1 MB file took 47 s, 2 MB 407 s.
     * Here 2 MB are built in memory. (The timeout is a hang guard, not a measurement: each
     * load takes well under a second, see docs/security.md.)
     *
     * First 60,000 anchors and 10,000 aliases (the limit) to anchors spread over all of them
     * (2.09 MB): it loads, and alias i reads as the anchor it names.
     */
    struct text t = {0};
    for (int i = 0; i < 60000; i++)
        put(&t, "key%06d: &anchor%06d v%d\n", i, i, i);
    put(&t, "l:\n");
    for (int i = 0; i < 10000; i++)
        put(&t, "  - *anchor%06d\n", (i * 7919) % 60000);
    cr_assert_gt(t.len, 2000000);
    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", t.s, &err), 0, "%s", err.msg);
    const struct conf_node *l = conf_get(doc.root, "l");
    cr_assert_eq(l->n, 10000);
    for (int i = 0; i < 10000; i += 997) {
        char want[16];
        snprintf(want, sizeof want, "v%d", (i * 7919) % 60000);
        cr_assert_str_eq(l->items[i]->value, want);
    }
    conf_release(&doc);
    free(t.s);

    /* Then 30,000 anchors and 70,000 aliases (2.07 MB; before, 70,000 linear lookups): refused
     * at the 10,001st alias, on line 30,000 + 2 + 10,000 (column 5, after "  - "). */
    t = (struct text){0};
    for (int i = 0; i < 30000; i++)
        put(&t, "key%06d: &anchor%06d v\n", i, i);
    put(&t, "l:\n");
    for (int i = 0; i < 70000; i++)
        put(&t, "  - *anchor%06d\n", (i * 7919) % 30000);
    cr_assert_gt(t.len, 2000000);
    expect_refused(t.s, "t.yaml:40002:5: more than 10000 aliases (limit 10000)");
    free(t.s);
}
