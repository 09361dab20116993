/*
 * test_conf.c — the YAML tree, its positions and the getters' messages.
 *
 * Expected line:column pairs are counted by hand from the YAML text next to
 * each test (1-based; the column of a value is that of its first character,
 * of a block mapping that of its first key, of a flow collection its bracket).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/conf.h"

#define FIXTURE "tests/data/conf/scenario.yaml"

static void load(struct conf_doc *doc, const char *text)
{
    struct conf_err err = {{0}};
    int rc = conf_load_string(doc, "t.yaml", text, &err);

    cr_assert_eq(rc, 0, "loading %s failed: %s", text, err.msg);
}

/* Loading text must fail with rc and exactly msg; the doc must come back zeroed. */
static void load_fails(const char *text, int rc, const char *msg)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};

    cr_assert_eq(conf_load_string(&doc, "t.yaml", text, &err), rc, "text: %s", text);
    cr_assert_str_eq(err.msg, msg, "text: %s", text);
    cr_assert_null(doc.root);
    cr_assert_null(doc.arena);
    cr_assert_null(doc.text);
    cr_assert_null(doc.path);
}

Test(conf, tree_of_the_fixture_has_positions)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};

    cr_assert_eq(conf_load_file(&doc, FIXTURE, &err), 0, "%s", err.msg);
    const struct conf_node *root = doc.root;
    cr_assert_eq(root->kind, CONF_MAP);
    cr_assert_eq(root->n, 5);
    const char *keys[] = {"name", "seed", "duration", "cluster", "services"};
    for (size_t i = 0; i < 5; i++)
        cr_assert_str_eq(root->keys[i], keys[i]);
    /* "cluster:" is line 5; its block mapping starts at "gpu" (6:3). */
    cr_assert_eq(root->key_line[3], 5);
    cr_assert_eq(root->key_col[3], 1);
    const struct conf_node *cluster = conf_get(root, "cluster");
    cr_assert_eq(cluster->kind, CONF_MAP);
    cr_assert_eq(cluster->line, 6);
    cr_assert_eq(cluster->col, 3);
    cr_assert_eq(cluster->n, 4);
    cr_assert_str_eq(conf_get(cluster, "gpu")->value, "a100-sxm4-80gb");
    /* "  gpus_per_node: eight": 2 + 14 + 1 characters before the value. */
    const struct conf_node *gpn = conf_get(cluster, "gpus_per_node");
    cr_assert_eq(gpn->line, 8);
    cr_assert_eq(gpn->col, 18);
    cr_assert_eq(cluster->key_col[2], 3);

    const struct conf_node *services = conf_get(root, "services");
    cr_assert_eq(services->kind, CONF_SEQ);
    cr_assert_eq(services->n, 2);
    cr_assert_eq(services->line, 11);
    cr_assert_eq(services->col, 3);
    cr_assert_eq(services->items[0]->kind, CONF_MAP);
    cr_assert_eq(services->items[0]->line, 11);
    cr_assert_eq(services->items[0]->col, 5);
    /* "    replicas: { min: 2, max: 16 }": '{' at 15, the 2 at 22. */
    const struct conf_node *replicas = conf_get(services->items[0], "replicas");
    cr_assert_eq(replicas->line, 12);
    cr_assert_eq(replicas->col, 15);
    cr_assert_eq(conf_get(replicas, "min")->col, 22);
    double p99 = 0;
    cr_assert_eq(conf_double(&doc, conf_get(services->items[1], "slo"), "p99_ms", true, 0, HUGE_VAL,
                             &p99, &err),
                 0, "%s", err.msg);
    cr_assert_eq(p99, 250.5);
    sim_time d = 0;
    cr_assert_eq(conf_duration(&doc, root, "duration", true, 0, &d, &err), 0);
    cr_assert_eq(d, 2 * 86400LL * 1000000);
    conf_release(&doc);
    cr_assert_null(doc.root);
    cr_assert_null(doc.text);
}

Test(conf, file_errors_name_path_line_column_and_key)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    int64_t v = -1;

    cr_assert_eq(conf_load_file(&doc, FIXTURE, &err), 0, "%s", err.msg);
    const struct conf_node *cluster = conf_get(doc.root, "cluster");
    cr_assert_eq(conf_int(&doc, cluster, "gpus_per_node", true, 1, INT64_MAX, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, FIXTURE ":8:18: 'gpus_per_node': expected a positive integer, "
                                      "got 'eight'");
    cr_assert_eq(v, -1);
    cr_assert_eq(conf_int(&doc, cluster, "zones", true, 1, 8, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, FIXTURE ":6:3: 'zones': missing (expected an integer in [1, 8])");
    const char *const allowed[] = {"gpu", "nodes", "gpus_per_node", NULL};
    cr_assert_eq(conf_check_keys(&doc, cluster, "cluster", allowed, &err), -EINVAL);
    cr_assert_str_eq(err.msg, FIXTURE ":9:3: 'sharing': unknown key (expected one of: gpu, nodes, "
                                      "gpus_per_node)");
    conf_release(&doc);
}

Test(conf, text_is_the_whole_file)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    struct stat st;

    cr_assert_eq(stat(FIXTURE, &st), 0);
    cr_assert_eq(conf_load_file(&doc, FIXTURE, &err), 0, "%s", err.msg);
    cr_assert_eq(doc.text_len, (size_t)st.st_size);
    cr_assert_eq(strlen(doc.text), doc.text_len);
    cr_assert_eq(strncmp(doc.text, "# Fixture for tests/sim/test_conf.c", 31), 0);
    cr_assert_str_eq(doc.text + doc.text_len - 23, "slo: { p99_ms: 250.5 }\n");
    cr_assert_str_eq(doc.path, FIXTURE);
    conf_release(&doc);
}

Test(conf, missing_file)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};

    cr_assert_eq(conf_load_file(&doc, "tests/data/conf/nope.yaml", &err), -ENOENT);
    cr_assert_str_eq(err.msg, "tests/data/conf/nope.yaml: cannot open: No such file or directory");
    cr_assert_null(doc.path);
    conf_release(&doc); /* releasing a released doc is harmless */
}

Test(conf, directory_cannot_be_read)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};

    cr_assert_eq(conf_load_file(&doc, "tests/data/conf", &err), -EISDIR);
    cr_assert_str_eq(err.msg, "tests/data/conf: cannot read: Is a directory");
}

Test(conf, files_over_16_mib_are_refused)
{
    char path[] = "/tmp/tidesim-conf-XXXXXX";
    int fd = mkstemp(path);
    struct conf_doc doc;
    struct conf_err err = {{0}};
    char want[128];

    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (16 << 20) + 1), 0); /* sparse: costs no disk */
    close(fd);
    cr_assert_eq(conf_load_file(&doc, path, &err), -EFBIG);
    snprintf(want, sizeof want, "%s: file too large (more than 16 MiB)", path);
    cr_assert_str_eq(err.msg, want);
    unlink(path);

    char *big = malloc((16 << 20) + 2);
    cr_assert_not_null(big);
    memset(big, ' ', (16 << 20) + 1);
    big[(16 << 20) + 1] = '\0';
    cr_assert_eq(conf_load_string(&doc, "big.yaml", big, &err), -EFBIG);
    cr_assert_str_eq(err.msg, "big.yaml: file too large (more than 16 MiB)");
    free(big);
}

Test(conf, syntax_errors_carry_the_problem_position)
{
    /* The second ':' on line 1 is at column 5. */
    load_fails("a: b: c\n", -EINVAL, "t.yaml:1:5: mapping values are not allowed in this context");
    /* A tab cannot indent: libyaml stops at the tab, 2:1. */
    load_fails("a:\n\tb: 1\n", -EINVAL, "t.yaml:2:1: found character that cannot start any token");
    /* Unclosed flow sequence: "2 b" reads as one plain scalar, then the ':' at 2:2 is wrong. */
    load_fails("a: [1, 2\nb: 3\n", -EINVAL, "t.yaml:2:2: did not find expected ',' or ']'");
    /* Invalid UTF-8 byte at offset 3: a reader error, positioned from its byte offset. */
    load_fails("a: \xff\n", -EINVAL, "t.yaml:1:4: invalid leading UTF-8 octet");

    struct conf_doc doc;
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_file(&doc, "tests/data/conf/bad-indent.yaml", &err), -EINVAL);
    cr_assert_str_eq(err.msg, "tests/data/conf/bad-indent.yaml:3:8: mapping values are not "
                              "allowed in this context");
}

Test(conf, duplicate_keys)
{
    load_fails("a: 1\nb: 2\na: 3\n", -EINVAL, "t.yaml:3:1: 'a': duplicate key (first at line 1)");
    /* The first duplicate in file order is reported: x at line 4, not y at line 5. */
    load_fails("m:\n  x: 1\n  y: 2\n  x: 3\n  y: 4\n  x: 5\n", -EINVAL,
               "t.yaml:4:3: 'x': duplicate key (first at line 2)");
    load_fails("{k: 1, j: 2, k: 3}\n", -EINVAL,
               "t.yaml:1:14: 'k': duplicate key (first at line 1)");
    /* Equal keys in different maps are fine. */
    struct conf_doc doc;
    load(&doc, "a: {x: 1}\nb: {x: 2}\n");
    conf_release(&doc);
}

Test(conf, anchors_and_aliases)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    int64_t v = 0;
    const char *s = NULL;

    load(&doc, "defaults: &d\n"
               "  gpus: 8\n"
               "  mode: mig\n"
               "a: *d\n"
               "n: &n 5\n"
               "b: *n\n"
               "list: [*n, *d]\n");
    const struct conf_node *a = conf_get(doc.root, "a");
    cr_assert_eq(a->kind, CONF_MAP);
    cr_assert_eq(a->n, 2);
    cr_assert_eq(a->line, 4); /* the alias's position, not the anchor's */
    cr_assert_eq(a->col, 4);
    cr_assert_eq(conf_int(&doc, a, "gpus", true, 1, 8, &v, &err), 0);
    cr_assert_eq(v, 8);
    cr_assert_eq(conf_string(&doc, a, "mode", true, &s, &err), 0);
    cr_assert_str_eq(s, "mig");
    cr_assert_eq(conf_int(&doc, doc.root, "b", true, 0, INT64_MAX, &v, &err), 0);
    cr_assert_eq(v, 5);
    const struct conf_node *list = conf_get(doc.root, "list");
    cr_assert_eq(list->n, 2);
    cr_assert_str_eq(list->items[0]->value, "5");
    cr_assert_eq(list->items[1]->kind, CONF_MAP);
    cr_assert_str_eq(conf_get(list->items[1], "mode")->value, "mig");
    conf_release(&doc);

    /* A bad aliased value is reported where the alias is used. */
    load(&doc, "x: &v eight\ny: *v\n");
    cr_assert_eq(conf_int(&doc, doc.root, "y", true, 1, INT64_MAX, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:4: 'y': expected a positive integer, got 'eight'");
    conf_release(&doc);

    /* A redefined anchor: aliases see the latest definition before them. */
    load(&doc, "p: &z 1\nq: *z\nr: &z 2\ns: *z\n");
    cr_assert_str_eq(conf_get(doc.root, "q")->value, "1");
    cr_assert_str_eq(conf_get(doc.root, "s")->value, "2");
    conf_release(&doc);

    /* An aliased scalar can be a key. */
    load(&doc, "k: &key gpus\nm: {*key : 3}\n");
    cr_assert_str_eq(conf_get(doc.root, "m")->keys[0], "gpus");
    conf_release(&doc);
}

Test(conf, bad_aliases_and_merge_keys)
{
    load_fails("a: *nope\n", -EINVAL, "t.yaml:1:4: alias '*nope' refers to an undefined anchor");
    /* An alias inside its own anchor's node would be a cycle. */
    load_fails("a: &x [1, *x]\n", -EINVAL, "t.yaml:1:11: alias '*x' refers to an undefined anchor");
    load_fails("base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n", -EINVAL,
               "t.yaml:3:3: '<<': merge keys are not supported (write the keys out)");
    load_fails("m: &m {a: 1}\nk: {*m : 1}\n", -EINVAL,
               "t.yaml:2:5: a mapping key must be a scalar, got a mapping");
    /* A quoted "<<" is an ordinary key. */
    struct conf_doc doc;
    load(&doc, "'<<': 1\n");
    cr_assert_str_eq(doc.root->keys[0], "<<");
    conf_release(&doc);
}

Test(conf, other_structural_errors)
{
    load_fails("? [a, b]\n: 1\n", -EINVAL,
               "t.yaml:1:3: a mapping key must be a scalar, got a sequence");
    load_fails("a: 1\n---\nb: 2\n", -EINVAL,
               "t.yaml:2:1: only one document per file is supported (found a second '---')");
    load_fails("a: \"x\\0y\"\n", -EINVAL, "t.yaml:1:4: NUL characters are not supported");
}

Test(conf, empty_documents)
{
    const char *texts[] = {"", "# only a comment\n", "---\n", "--- \n...\n", "\n\n"};
    struct conf_err err = {{0}};

    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct conf_doc doc;
        int64_t seed = 42;

        load(&doc, texts[i]);
        cr_assert_null(doc.root, "text %zu", i);
        cr_assert_eq(doc.text_len, strlen(texts[i]));
        cr_assert_eq(conf_int(&doc, doc.root, "seed", false, 0, INT64_MAX, &seed, &err), 0);
        cr_assert_eq(seed, 42, "an absent optional key leaves the default");
        cr_assert_eq(conf_int(&doc, doc.root, "seed", true, 0, INT64_MAX, &seed, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "t.yaml: 'seed': missing (expected a non-negative integer)");
        cr_assert_eq(conf_check_keys(&doc, doc.root, NULL, (const char *const[]){NULL}, &err), 0);
        conf_release(&doc);
    }
}

Test(conf, top_level_sequence_is_not_a_mapping)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    int64_t v = 0;
    const char *s = NULL;
    const char *const allowed[] = {"a", NULL};

    load(&doc, "- a\n- b\n");
    cr_assert_eq(doc.root->kind, CONF_SEQ);
    cr_assert_eq(doc.root->n, 2);
    cr_assert_str_eq(doc.root->items[1]->value, "b");
    cr_assert_null(conf_get(doc.root, "a"));
    cr_assert_eq(conf_int(&doc, doc.root, "x", false, 0, 9, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:1: expected a mapping, got a sequence");
    cr_assert_eq(conf_string(&doc, doc.root, "x", true, &s, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:1: expected a mapping, got a sequence");
    cr_assert_eq(conf_check_keys(&doc, doc.root, "scenario", allowed, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:1: 'scenario': expected a mapping, got a sequence");
    conf_release(&doc);

    load(&doc, "cluster: 5\n");
    cr_assert_eq(conf_check_keys(&doc, conf_get(doc.root, "cluster"), "cluster", allowed, &err),
                 -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:10: 'cluster': expected a mapping, got '5'");
    conf_release(&doc);
}

Test(conf, load_string_keeps_a_copy)
{
    char text[] = "name: x\n";
    struct conf_doc doc;

    load(&doc, text);
    text[6] = 'y';
    cr_assert_str_eq(conf_get(doc.root, "name")->value, "x");
    cr_assert_str_eq(doc.text, "name: x\n");
    cr_assert_str_eq(doc.path, "t.yaml");
    cr_assert_eq(doc.root->line, 1);
    cr_assert_eq(doc.root->col, 1);
    conf_release(&doc);

    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, NULL, "a: [", &err), -EINVAL);
    cr_assert_eq(strncmp(err.msg, "<string>:", 9), 0, "%s", err.msg);
}

Test(conf, scalars_keep_text_and_quoting)
{
    struct conf_doc doc;

    load(&doc, "a: 'x y'\n"
               "b: \"tab\\there\"\n"
               "c:\n"
               "d: |\n"
               "  line1\n"
               "  line2\n"
               "e: 08\n"
               "f: !!str 5\n");
    const struct conf_node *r = doc.root;
    cr_assert_str_eq(conf_get(r, "a")->value, "x y");
    cr_assert(conf_get(r, "a")->quoted);
    cr_assert_str_eq(conf_get(r, "b")->value, "tab\there");
    cr_assert_str_eq(conf_get(r, "c")->value, "");
    cr_assert_not(conf_get(r, "c")->quoted);
    cr_assert_str_eq(conf_get(r, "d")->value, "line1\nline2\n");
    cr_assert_eq(conf_get(r, "d")->line, 4);
    cr_assert_eq(conf_get(r, "d")->col, 4);
    cr_assert_str_eq(conf_get(r, "e")->value, "08");
    cr_assert_str_eq(conf_get(r, "f")->value, "5"); /* tags are ignored */
    conf_release(&doc);
}

struct int_case {
    const char *text; /* the value after "v: " */
    int64_t min, max;
    int64_t want;    /* when msg is NULL */
    const char *msg; /* the message after "t.yaml:1:4: 'v': ", or NULL */
};

Test(conf, int_values_and_messages)
{
    static const struct int_case cases[] = {
        {"8", 1, INT64_MAX, 8, NULL},
        {"+5", 1, INT64_MAX, 5, NULL},
        {"\"8\"", 1, INT64_MAX, 8, NULL},
        {"-7", INT64_MIN, INT64_MAX, -7, NULL},
        {"9223372036854775807", INT64_MIN, INT64_MAX, INT64_MAX, NULL},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, INT64_MIN, NULL},
        {"64", 1, 64, 64, NULL},
        {"eight", 1, INT64_MAX, 0, "expected a positive integer, got 'eight'"},
        {"0", 1, INT64_MAX, 0, "expected a positive integer, got '0'"},
        {"-1", 0, INT64_MAX, 0, "expected a non-negative integer, got '-1'"},
        {"x", 0, INT64_MAX, 0, "expected a non-negative integer, got 'x'"},
        {"100", 1, 64, 0, "expected an integer in [1, 64], got '100'"},
        {"1.0", 1, 64, 0, "expected a positive integer, got '1.0'"},
        {"abc", INT64_MIN, INT64_MAX, 0, "expected an integer, got 'abc'"},
        {"0x10", INT64_MIN, INT64_MAX, 0, "expected an integer, got '0x10'"},
        {"1e3", INT64_MIN, INT64_MAX, 0, "expected an integer, got '1e3'"},
        {"' 5'", INT64_MIN, INT64_MAX, 0, "expected an integer, got ' 5'"},
        {"99999999999999999999", INT64_MIN, INT64_MAX, 0,
         "expected an integer, got '99999999999999999999'"},
        {"-5", -3, INT64_MAX, 0, "expected an integer >= -3, got '-5'"},
        {"5", INT64_MIN, 4, 0, "expected an integer <= 4, got '5'"},
        {"{a: 1}", 1, INT64_MAX, 0, "expected a positive integer, got a mapping"},
        {"[1]", 1, INT64_MAX, 0, "expected a positive integer, got a sequence"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, INT64_MAX, 0,
         "expected a positive integer, got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct int_case *c = &cases[i];
        char text[128], want[256];
        struct conf_doc doc;
        struct conf_err err = {{0}};
        int64_t v = -42;

        snprintf(text, sizeof text, "v: %s\n", c->text);
        load(&doc, text);
        int rc = conf_int(&doc, doc.root, "v", true, c->min, c->max, &v, &err);
        if (c->msg) {
            snprintf(want, sizeof want, "t.yaml:1:4: 'v': %s", c->msg);
            cr_assert_eq(rc, -EINVAL, "case %s", c->text);
            cr_assert_str_eq(err.msg, want, "case %s", c->text);
            cr_assert_eq(v, -42, "a failed getter leaves *out alone");
        } else {
            cr_assert_eq(rc, 0, "case %s: %s", c->text, err.msg);
            cr_assert_eq(v, c->want, "case %s", c->text);
        }
        conf_release(&doc);
    }
}

Test(conf, value_quoted_in_messages_stops_at_line_break_and_utf8_boundary)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    int64_t v;

    load(&doc, "v: |\n  two\n  lines\n");
    cr_assert_eq(conf_int(&doc, doc.root, "v", true, 0, 9, &v, &err), -EINVAL);
    /* Not an integer at all: the message names the kind (min 0), not the range. */
    cr_assert_str_eq(err.msg, "t.yaml:1:4: 'v': expected a non-negative integer, got 'two...'");
    conf_release(&doc);

    /* An empty value is positioned just after the ':' by libyaml. */
    load(&doc, "v:\n");
    cr_assert_eq(conf_int(&doc, doc.root, "v", true, 1, INT64_MAX, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:3: 'v': expected a positive integer, got ''");
    conf_release(&doc);

    /* 39 'a' then 'é' (2 bytes): the cut at byte 40 would split 'é', so it backs off to 39. */
    load(&doc, "v: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9z\n");
    cr_assert_eq(conf_int(&doc, doc.root, "v", true, 0, 9, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:4: 'v': expected a non-negative integer, got "
                              "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
    conf_release(&doc);
}

Test(conf, double_values_and_messages)
{
    static const struct {
        const char *text;
        double want;
    } good[] = {
        {"1.5", 1.5}, {"2e-3", 0.002}, {"-0.25", -0.25}, {".5", 0.5},
        {"5.", 5.0},  {"1E3", 1000.0}, {"7", 7.0},       {"+1.25e+2", 125.0},
    };
    static const char *const bad[] = {"nan", "inf",   ".inf", "-.inf", "NaN",   "0x10",
                                      "1e",  "1e999", "abc",  "1,5",   "1.2.3", "."};
    struct conf_err err = {{0}};
    char text[64], want[128];

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct conf_doc doc;
        double v = -1;

        snprintf(text, sizeof text, "v: %s\n", good[i].text);
        load(&doc, text);
        cr_assert_eq(conf_double(&doc, doc.root, "v", true, -HUGE_VAL, HUGE_VAL, &v, &err), 0,
                     "case %s: %s", good[i].text, err.msg);
        cr_assert_eq(v, good[i].want, "case %s", good[i].text);
        conf_release(&doc);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct conf_doc doc;
        double v = -1;

        snprintf(text, sizeof text, "v: %s\n", bad[i]);
        load(&doc, text);
        cr_assert_eq(conf_double(&doc, doc.root, "v", true, 0, 1, &v, &err), -EINVAL);
        snprintf(want, sizeof want, "t.yaml:1:4: 'v': expected a number, got '%s'", bad[i]);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(v, -1);
        conf_release(&doc);
    }

    struct conf_doc doc;
    double v = -1;
    load(&doc, "m:\n  v: 1.5\n  w: -1\n");
    const struct conf_node *m = conf_get(doc.root, "m");
    cr_assert_eq(conf_double(&doc, m, "v", true, 0, 1, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:6: 'v': expected a number in [0, 1], got '1.5'");
    cr_assert_eq(conf_double(&doc, m, "w", true, 0, HUGE_VAL, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:3:6: 'w': expected a number >= 0, got '-1'");
    cr_assert_eq(conf_double(&doc, m, "x", true, 0, 0.5, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:3: 'x': missing (expected a number in [0, 0.5])");
    cr_assert_eq(conf_double(&doc, m, "x", false, 0, 0.5, &v, &err), 0);
    cr_assert_eq(v, -1);
    conf_release(&doc);
}

Test(conf, bool_values)
{
    static const struct {
        const char *text;
        bool want;
    } good[] = {{"true", true}, {"TRUE", true},   {"Yes", true},   {"on", true},
                {"ON", true},   {"false", false}, {"No", false},   {"OFF", false},
                {"no", false},  {"'yes'", true},  {"False", false}};
    static const char *const bad[] = {"1", "0", "y", "maybe", "t", "[true]"};
    struct conf_err err = {{0}};
    char text[64];

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct conf_doc doc;
        bool v = !good[i].want;

        snprintf(text, sizeof text, "v: %s\n", good[i].text);
        load(&doc, text);
        cr_assert_eq(conf_bool(&doc, doc.root, "v", true, &v, &err), 0, "%s", err.msg);
        cr_assert_eq(v, good[i].want, "case %s", good[i].text);
        conf_release(&doc);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct conf_doc doc;
        bool v = true;

        snprintf(text, sizeof text, "v: %s\n", bad[i]);
        load(&doc, text);
        cr_assert_eq(conf_bool(&doc, doc.root, "v", true, &v, &err), -EINVAL);
        cr_assert_eq(strncmp(err.msg, "t.yaml:1:4: 'v': expected true or false, got ", 45), 0, "%s",
                     err.msg);
        conf_release(&doc);
    }
    struct conf_doc doc;
    bool v = false;
    load(&doc, "v: 1\n");
    cr_assert_eq(conf_bool(&doc, doc.root, "v", true, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:4: 'v': expected true or false, got '1'");
    cr_assert_eq(conf_bool(&doc, doc.root, "w", true, &v, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:1: 'w': missing (expected true or false)");
    conf_release(&doc);
}

Test(conf, string_and_enum)
{
    static const char *const sharing[] = {"exclusive", "mig", "timeslice", "mps", NULL};
    struct conf_doc doc;
    struct conf_err err = {{0}};
    const char *s = "default";
    int k = -1;

    load(&doc, "name: search\n"
               "m: {a: 1}\n"
               "l: [1, 2]\n"
               "mode: mig\n"
               "bad: MIG\n");
    cr_assert_eq(conf_string(&doc, doc.root, "name", true, &s, &err), 0);
    cr_assert_str_eq(s, "search");
    cr_assert_eq(conf_string(&doc, doc.root, "m", true, &s, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:4: 'm': expected a string, got a mapping");
    cr_assert_eq(conf_string(&doc, doc.root, "l", true, &s, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:3:4: 'l': expected a string, got a sequence");
    cr_assert_eq(conf_string(&doc, doc.root, "title", true, &s, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:1: 'title': missing (expected a string)");
    cr_assert_eq(conf_string(&doc, doc.root, "title", false, &s, &err), 0);
    cr_assert_str_eq(s, "search");

    cr_assert_eq(conf_enum(&doc, doc.root, "mode", true, sharing, &k, &err), 0);
    cr_assert_eq(k, 1);
    cr_assert_eq(conf_enum(&doc, doc.root, "bad", true, sharing, &k, &err), -EINVAL);
    cr_assert_str_eq(
        err.msg, "t.yaml:5:6: 'bad': expected one of: exclusive, mig, timeslice, mps, got 'MIG'");
    cr_assert_eq(conf_enum(&doc, doc.root, "sharing", true, sharing, &k, &err), -EINVAL);
    cr_assert_str_eq(err.msg,
                     "t.yaml:1:1: 'sharing': missing (expected one of: exclusive, mig, timeslice, "
                     "mps)");
    cr_assert_eq(k, 1);
    conf_release(&doc);
}

#define US_S   1000000LL
#define US_MIN (60 * US_S)
#define US_H   (60 * US_MIN)
#define US_D   (24 * US_H)
#define US_W   (7 * US_D)

Test(conf, duration_table)
{
    static const struct {
        const char *text;
        sim_time want;
    } good[] = {
        {"90s", 90000000},
        {"30m", 1800000000},
        {"2d", 172800000000},
        {"1h30m", 5400000000},
        {"250us", 250},
        {"1.5h", 5400000000},
        {"250ms", 250000},
        {"5min", 300000000},
        {"2h", 7200000000},
        {"1w", 604800000000},
        {"1d12h", 129600000000},
        {"0s", 0},
        {"0.5s", 500000},
        {"1m30s", 90000000},
        {"1s500ms", 1500000},
        {"2h0m", 7200000000},
        {"0.001ms", 1},
        {"1w2d3h4m5s6ms7us", US_W + 2 * US_D + 3 * US_H + 4 * US_MIN + 5 * US_S + 6007},
        {"9223372036854775807us", INT64_MAX},
        /* INT64_MAX µs is 15250284 weeks and a bit over 3 days, or 2562047788 hours. */
        {"15250284w", 15250284 * US_W},
        {"15250284w3d", 15250284 * US_W + 3 * US_D},
        /* An integer count is exact even where a double is not (2^53 + 1 µs). */
        {"9007199254740993us", 9007199254740993LL},
        {"2562047788h", 2562047788 * US_H},
    };
    static const char *const bad[] = {
        "-5s",         "5",
        "5x",          "",
        "s",           "1.s",
        ".s",          "1h 30m",
        "30m1h",       "1m1m",
        "1m1min",      "+5s",
        " 5s",         "5s ",
        "1e3s",        "1.5.5h",
        "1hh",         "5S",
        "nan",         "15250285w",
        "15250284w4d", "9223372036854775808us",
        "2562047789h", "99999999999999999999999s",
    };

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        sim_time t = -1;
        cr_assert_eq(conf_parse_duration(good[i].text, &t), 0, "case %s", good[i].text);
        cr_assert_eq(t, good[i].want, "case %s: %lld", good[i].text, (long long)t);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sim_time t = -1;
        cr_assert_eq(conf_parse_duration(bad[i], &t), -EINVAL, "case '%s'", bad[i]);
        cr_assert_eq(t, -1, "case '%s' wrote *out", bad[i]);
    }
}

Test(conf, duration_getter_messages)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};
    sim_time t = 7;

    load(&doc, "a: 5\nb: 500ms\nc: 2h\nd: [1s]\n");
    cr_assert_eq(conf_duration(&doc, doc.root, "a", true, 0, &t, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:4: 'a': expected a duration with a unit (e.g. 250ms, 90s, "
                              "30m, 2h, 2d), got '5'");
    cr_assert_eq(conf_duration(&doc, doc.root, "b", true, US_S, &t, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:4: 'b': expected a duration >= 1s, got '500ms'");
    cr_assert_eq(conf_duration(&doc, doc.root, "b", true, 90 * US_S, &t, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:4: 'b': expected a duration >= 1m30s, got '500ms'");
    cr_assert_eq(conf_duration(&doc, doc.root, "d", true, 0, &t, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:4:4: 'd': expected a duration with a unit (e.g. 250ms, 90s, "
                              "30m, 2h, 2d), got a sequence");
    cr_assert_eq(conf_duration(&doc, doc.root, "e", true, 0, &t, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:1:1: 'e': missing (expected a duration with a unit (e.g. "
                              "250ms, 90s, 30m, 2h, 2d))");
    cr_assert_eq(t, 7);
    cr_assert_eq(conf_duration(&doc, doc.root, "c", true, US_S, &t, &err), 0);
    cr_assert_eq(t, 2 * US_H);
    conf_release(&doc);
}

Test(conf, format_duration)
{
    static const struct {
        sim_time t;
        const char *want;
    } cases[] = {
        {0, "0s"},           {90 * US_S, "1m30s"},  {1500000, "1s500ms"},   {2 * US_D, "2d"},
        {1, "1us"},          {1001, "1ms1us"},      {-90 * US_S, "-1m30s"}, {14 * US_D, "14d"},
        {US_D + 1, "1d1us"}, {5400000000, "1h30m"},
    };
    char buf[64];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conf_format_duration(cases[i].t, buf, sizeof buf);
        cr_assert_str_eq(buf, cases[i].want);
    }
    /* Whatever is formatted parses back to the same µs. */
    const sim_time back[] = {1, 999, 1000, 59 * US_S + 1, 3 * US_D + 7 * US_MIN, INT64_MAX};
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++) {
        sim_time t = -1;
        conf_format_duration(back[i], buf, sizeof buf);
        cr_assert_eq(conf_parse_duration(buf, &t), 0, "%s", buf);
        cr_assert_eq(t, back[i], "%s", buf);
    }
    conf_format_duration(90 * US_S, buf, 3);
    cr_assert_str_eq(buf, "1m");
}

Test(conf, errf_formats)
{
    struct conf_doc doc;
    struct conf_err err = {{0}};

    load(&doc, "a:\n  b: 1\n");
    const struct conf_node *a = conf_get(doc.root, "a");
    cr_assert_eq(conf_errf(&err, &doc, a, "b", "too %s by %d", "big", 3), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:2:3: 'b': too big by 3");
    conf_errf(&err, &doc, a, NULL, "plain");
    cr_assert_str_eq(err.msg, "t.yaml:2:3: plain");
    conf_errf(&err, &doc, NULL, "k", "no place");
    cr_assert_str_eq(err.msg, "t.yaml: 'k': no place");
    conf_release(&doc);
}

Test(conf, unknown_keys_listed_in_order)
{
    static const char *const allowed[] = {"a", "b", "c", NULL};
    struct conf_doc doc;
    struct conf_err err = {{0}};

    load(&doc, "a: 1\nc: 2\nzz: 3\nyy: 4\n");
    cr_assert_eq(conf_check_keys(&doc, doc.root, NULL, allowed, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:3:1: 'zz': unknown key (expected one of: a, b, c)");
    cr_assert_eq(conf_check_keys(&doc, doc.root, NULL,
                                 (const char *const[]){"yy", "zz", "c", "a", NULL}, &err),
                 0);
    conf_release(&doc);
}

Test(conf, deep_nesting_and_big_maps)
{
    /* Nested flow sequences to the depth limit (the root map is one level) and a 3000-key map:
     * no recursion, no quadratic work. Deeper input: tests/sim/test_conf_limits.c. */
    size_t depth = CONF_LIMIT_DEPTH - 1, keys = 3000;
    size_t cap = 2 * depth + 16 + keys * 16;
    char *text = malloc(cap);
    size_t len = 0;
    struct conf_doc doc;

    cr_assert_not_null(text);
    len += (size_t)snprintf(text + len, cap - len, "deep: ");
    for (size_t i = 0; i < depth; i++)
        text[len++] = '[';
    for (size_t i = 0; i < depth; i++)
        text[len++] = ']';
    text[len++] = '\n';
    for (size_t i = 0; i < keys; i++)
        len += (size_t)snprintf(text + len, cap - len, "k%zu: %zu\n", i, i);
    text[len] = '\0';
    load(&doc, text);
    const struct conf_node *n = conf_get(doc.root, "deep");
    size_t levels = 0;
    while (n->kind == CONF_SEQ && n->n == 1) {
        n = n->items[0];
        levels++;
    }
    cr_assert_eq(levels + 1, depth);
    cr_assert_eq(n->n, 0);
    cr_assert_eq(doc.root->n, keys + 1);
    cr_assert_str_eq(conf_get(doc.root, "k2999")->value, "2999");
    conf_release(&doc);

    /* The same map with one duplicate far down. */
    len += (size_t)snprintf(text + len, cap - len, "k17: x\n");
    struct conf_err err = {{0}};
    cr_assert_eq(conf_load_string(&doc, "t.yaml", text, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.yaml:3002:1: 'k17': duplicate key (first at line 19)");
    free(text);
}

/* Multi-document streams (Kubernetes manifests): each non-empty document is an item of the
 * root sequence, in order, with its own positions; anchors do not cross documents. */
Test(conf, multi_document_stream_keeps_each_document)
{
    struct conf_doc d;
    struct conf_err err = {{0}};
    const char *text = "---\n"
                       "kind: A\n"
                       "x: &v 1\n"
                       "y: *v\n"
                       "---\n"
                       "---\n"
                       "# only a comment\n"
                       "---\n"
                       "kind: B\n";
    cr_assert_eq(conf_load_string_multi(&d, "m.yaml", text, &err), 0, "%s", err.msg);
    cr_assert_not_null(d.root);
    cr_assert_eq(d.root->kind, CONF_SEQ);
    cr_assert_eq(d.root->n, 2, "empty documents are skipped");
    cr_assert_str_eq(conf_get(d.root->items[0], "y")->value, "1");
    cr_assert_str_eq(conf_get(d.root->items[1], "kind")->value, "B");
    cr_assert_eq(conf_get(d.root->items[1], "kind")->line, 9);
    conf_release(&d);
    /* An alias to an anchor of an earlier document is undefined. */
    cr_assert_neq(conf_load_string_multi(&d, "m.yaml", "a: &v 1\n---\nb: *v\n", &err), 0);
    cr_assert(strstr(err.msg, "m.yaml:3:4:"), "%s", err.msg);
    /* The single-document loader still refuses a second document. */
    cr_assert_neq(conf_load_string(&d, "m.yaml", "a: 1\n---\nb: 2\n", &err), 0);
}
