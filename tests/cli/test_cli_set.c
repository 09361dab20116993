/*
 * test_cli_set.c — `--set KEY.PATH=VALUE` (sim/override.h): an override is
 * the same as editing the file (identical datasets), and a bad override gets
 * the message the same value in the file gets, with "--set KEY.PATH=VALUE:"
 * in place of "file:line:col:".
 */
#include "tests/cli/clitest.h"

#include "sim/override.h"
#include "sim/scenario.h"

static const char tiny[] = "tests/data/scenarios/tiny.yaml";

/* text with the first occurrence of from replaced by to (malloc'd). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    cr_assert_not_null(at, "'%s' not in the text", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    cr_assert_not_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    return strdup(buf);
}

Test(cli_set, set_nodes_equals_editing_the_file)
{
    char dir[128], edited[256], a[256], b[256], c[256];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "set");
    snprintf(edited, sizeof(edited), "%s/tiny.yaml", dir);
    snprintf(a, sizeof(a), "%s/set.h5", dir);
    snprintf(b, sizeof(b), "%s/edited.h5", dir);
    snprintf(c, sizeof(c), "%s/plain.h5", dir);
    char *text = read_text(tiny);
    char *ed = replace(text, "nodes: 1,", "nodes: 8,");
    clitest_write(edited, ed);

    cr_assert_eq(clitest_tidesim(&r, "run %s --set cluster.nodes=8 -o %s -q", tiny, a), 0, "%s",
                 r.err);
    cr_assert_eq(clitest_tidesim(&r, "run %s -o %s -q", edited, b), 0, "%s", r.err);
    cr_assert_eq(clitest_tidesim(&r, "run %s -o %s -q", tiny, c), 0, "%s", r.err);
    char cmd[1024];
    /* /meta holds wall-clock provenance and the scenario text; every dataset elsewhere must match.
     */
    snprintf(cmd, sizeof(cmd), "h5diff --exclude-path /meta %s %s", a, b);
    cr_expect_eq(clitest_sh(&r, cmd), 0, "--set and the edited file differ: %s", r.out);
    snprintf(cmd, sizeof(cmd), "h5diff -q --exclude-path /meta %s %s", a, c);
    cr_expect_eq(clitest_sh(&r, cmd), 1, "--set cluster.nodes=8 changed nothing");
    /* The override is recorded with the scenario's text in the results file. */
    snprintf(cmd, sizeof(cmd), "h5dump -a /meta/scenario %s", a);
    cr_assert_eq(clitest_sh(&r, cmd), 0);
    cr_expect_not_null(strstr(r.out, "# --set cluster.nodes=8"), "%s", r.out);
    /* The edited file's GPU count: 8 nodes of 8. */
    cr_assert_eq(clitest_tidesim(&r, "validate %s --set cluster.nodes=8", tiny), 0);
    cr_expect_not_null(strstr(r.out, "ok (64 GPUs"), "%s", r.out);
    free(ed);
    free(text);
    clitest_rmdir(dir);
}

struct bad_case {
    const char *set;  /* the override */
    const char *from; /* the file edit giving the same value */
    const char *to;
};

Test(cli_set, bad_set_gets_the_message_of_the_file)
{
    static const struct bad_case cases[] = {
        {"cluster.nodes=eight", "nodes: 1,", "nodes: eight,"},
        {"cluster.gpus_per_nod=8", "nodes: 1,", "nodes: 1, gpus_per_nod: 8,"},
        {"duration=-2h", "duration: 2h", "duration: -2h"},
        {"services.0.arrivals.synthetic.mean_rps=5", "peak_hour: 1 }",
         "peak_hour: 1, mean_rps: 5 }"},
        {"services.chat.batching.max_batch=0", "max_batch: 16", "max_batch: 0"},
        {"policy.name=nosuch", "name: dedicated", "name: nosuch"},
        {"training.jobs.synthetic.gpus={1: 0.5, 64: 0.5}", "gpus: { 1: 0.5, 2: 0.3, 4: 0.2 }",
         "gpus: { 1: 0.5, 64: 0.5 }"},
    };
    char dir[128], bad[256];
    clitest_tmpdir(dir, sizeof(dir), "setbad");
    snprintf(bad, sizeof(bad), "%s/bad.yaml", dir);
    char *text = read_text(tiny);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct clirun f, s;
        char *ed = replace(text, cases[i].from, cases[i].to);
        clitest_write(bad, ed);
        free(ed);
        cr_expect_eq(clitest_tidesim(&f, "validate %s", bad), 1, "%s: file accepted", cases[i].set);
        cr_expect_eq(clitest_tidesim(&s, "validate %s --set '%s'", tiny, cases[i].set), 1,
                     "%s: override accepted", cases[i].set);
        /* file: "DIR/bad.yaml:L:C: REST"; override: "--set SET: REST" */
        size_t n = strlen(bad);
        cr_assert(!strncmp(f.err, bad, n) && f.err[n] == ':', "%s", f.err);
        unsigned line, col;
        int used = 0;
        cr_assert_eq(sscanf(f.err + n, ":%u:%u: %n", &line, &col, &used), 2, "%s", f.err);
        char prefix[256];
        snprintf(prefix, sizeof(prefix), "--set %s: ", cases[i].set);
        cr_assert(!strncmp(s.err, prefix, strlen(prefix)), "%s", s.err);
        cr_expect_str_eq(s.err + strlen(prefix), f.err + n + used);
    }
    free(text);
    clitest_rmdir(dir);
}

static const char two_services[] =
    "name: t\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 8 }\n"
    "services:\n"
    "  - name: a\n"
    "    latency: &lat { a_ms: 1.0, b_ms: 0.25 }\n"
    "    replicas: 1\n"
    "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"
    "  - name: b\n"
    "    latency: *lat\n"
    "    replicas: 1\n"
    "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"
    "policy: { name: dedicated, inference_gpus: 4 }\n";

Test(cli_set, paths_by_index_or_name_new_maps_later_wins_aliases_kept)
{
    struct scenario sc;
    struct conf_err err;
    const char *sets[] = {"services.0.latency.a_ms=2.5", "services.b.replicas=2",
                          "output.warmup=10m", "seed=5", "seed=7"};
    cr_assert_eq(scenario_load_set(&sc, "t.yaml", two_services, sets, 5, &err), 0, "%s", err.msg);
    cr_expect_float_eq(sc.services[0].a_ms, 2.5, 1e-12);
    /* b's latency is an alias of a's: the override of a's must not reach it. */
    cr_expect_float_eq(sc.services[1].a_ms, 1.0, 1e-12);
    cr_expect_eq(sc.services[1].replicas, 2);
    cr_expect_eq(sc.services[0].replicas, 1);
    cr_expect_eq(sc.warmup, 10 * 60 * SIM_SEC); /* `output` was absent: created */
    cr_expect_eq(sc.seed, 7);                   /* the later --set wins */
    cr_expect_not_null(strstr(sc.doc.text, "# --set seed=7\n"));
    scenario_release(&sc);

    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"services.2.replicas=1", "--set services.2.replicas=1: 'services' is a list of 2 "
                                  "item(s): no item '2' (an index from 0, or an item's name)"},
        {"duration.x=1", "--set duration.x=1: 'duration' is a value ('1h'), it has no key 'x'"},
        {"cluster..nodes=1",
         "--set 'cluster..nodes=1': expected KEY.PATH=VALUE, e.g. cluster.nodes=8"},
        {"nodes", "--set 'nodes': expected KEY.PATH=VALUE, e.g. cluster.nodes=8"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_neq(scenario_load_set(&sc, "t.yaml", two_services, &bad[i].set, 1, &err), 0,
                      "%s accepted", bad[i].set);
        cr_expect_str_eq(err.msg, bad[i].msg);
    }
}

Test(cli_set, usage_errors_of_set)
{
    struct clirun r;
    cr_expect_eq(clitest_tidesim(&r, "run %s --set nodes", tiny), 2);
    cr_expect_str_eq(r.err,
                     "tidesim run: --set 'nodes': expected KEY.PATH=VALUE, e.g. cluster.nodes=8");
    cr_expect_eq(clitest_tidesim(&r, "validate %s --set", tiny), 2);
    cr_expect_str_eq(r.err, "tidesim validate: option '--set' needs a value");
}
