/*
 * test_cli_paths.c — where tidesim run writes (issue 14, finding 8): a
 * scenario's name becomes a file name only when it is a plain token, a
 * service's name becomes an HDF5 group only when it is one too, an output
 * that is a folder is refused before anything runs, and long paths are
 * either handled whole or refused whole, never cut.
 */
#include <hdf5.h>

#include "tests/proctest.h"

static const char body[] = "duration: 1h\n"
                           "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1 }\n"
                           "policy: { name: dedicated, inference_gpus: 0 }\n";

struct name_case {
    const char *yaml_name; /* as written after "name: " */
    const char *shown;     /* as the message quotes it */
};

static const struct name_case bad_names[] = {
    {"../../x", "../../x"},
    {"/dev/null/x", "/dev/null/x"},
    {"a/b", "a/b"},
    {"\"\"", ""},
    {".", "."},
    {".hidden", ".hidden"},
    {"a b", "a b"},
    {"a*b", "a*b"},
};

static const char plain_rule[] = "expected a plain name (letters, digits, '-', '_', '.'; not "
                                 "starting with '.'; at most 128 characters), got '";

Test(cli_paths, scenario_names_that_are_not_plain_tokens_are_refused_at_load)
{
    char scratch[128], deep[192], scen[192], text[512], err[1024], want[1024];
    ptest_tmpdir(scratch, sizeof(scratch), "names");
    /* Run from scratch/a/b: a default output "../../x.h5" would land in scratch. */
    snprintf(deep, sizeof(deep), "%s/a", scratch);
    cr_assert_eq(mkdir(deep, 0755), 0);
    snprintf(deep, sizeof(deep), "%s/a/b", scratch);
    cr_assert_eq(mkdir(deep, 0755), 0);
    snprintf(scen, sizeof(scen), "%s/s.yaml", scratch);
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        snprintf(text, sizeof(text), "name: %s\n%s", bad_names[i].yaml_name, body);
        ptest_write(scen, text);
        snprintf(want, sizeof(want), "%s:1:7: 'name': %s%s'", scen, plain_rule, bad_names[i].shown);
        const char *run[] = {"run", scen, "--quiet", NULL};
        cr_expect_eq(ptest_run(deep, run, err, sizeof(err), 60), 1, "case %zu", i);
        cr_expect_str_eq(err, want, "case %zu", i);
        const char *val[] = {"validate", scen, NULL};
        cr_expect_eq(ptest_run(NULL, val, err, sizeof(err), 60), 1, "case %zu", i);
        cr_expect_str_eq(err, want, "case %zu", i);
        char x[256];
        snprintf(x, sizeof(x), "%s/x.h5", scratch);
        cr_expect_neq(access(x, F_OK), 0, "case %zu wrote outside the working folder", i);
        char *left[8];
        size_t n = ptest_list(deep, "", left, 8);
        cr_expect_eq(n, 0, "case %zu wrote %s", i, n ? left[0] : "");
        ptest_free_list(left, n < 8 ? n : 8);
    }
    /* A plain name is the default output, in the working folder. */
    snprintf(text, sizeof(text), "name: ok-name_1.2\n%s", body);
    ptest_write(scen, text);
    const char *run[] = {"run", scen, "--quiet", NULL};
    cr_expect_eq(ptest_run(deep, run, err, sizeof(err), 60), 0, "%s", err);
    char made[256];
    snprintf(made, sizeof(made), "%s/ok-name_1.2.h5", deep);
    cr_expect_eq(access(made, F_OK), 0);
    ptest_rmdir(scratch);
}

Test(cli_paths, service_names_that_are_not_plain_tokens_are_refused_by_validate)
{
    char scratch[128], scen[192], text[1024], err[1024], want[1024];
    ptest_tmpdir(scratch, sizeof(scratch), "svcnames");
    snprintf(scen, sizeof(scen), "%s/s.yaml", scratch);
    static const struct name_case cases[] = {
        {"\"\"", ""}, {".", "."}, {"a/b", "a/b"}, {"..", ".."}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text),
                 "name: svc\n"
                 "duration: 1h\n"
                 "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1 }\n"
                 "services:\n"
                 "  - name: %s\n"
                 "    replicas: 1\n"
                 "    arrivals: { synthetic: { peak_rps: 10 } }\n"
                 "policy: { name: dedicated, inference_gpus: 1 }\n",
                 cases[i].yaml_name);
        ptest_write(scen, text);
        snprintf(want, sizeof(want), "%s:5:11: 'name': %s%s'", scen, plain_rule, cases[i].shown);
        const char *val[] = {"validate", scen, NULL};
        cr_expect_eq(ptest_run(NULL, val, err, sizeof(err), 60), 1, "case %zu", i);
        cr_expect_str_eq(err, want, "case %zu", i);
    }
    ptest_rmdir(scratch);
}

/*
 * -o naming a folder is refused before the run starts. The proof that nothing
 * ran: the scenario's trace is a pipe nobody writes, so a run that got as far
 * as its set-up would block there (and be killed by the limit, exit -1).
 */
Test(cli_paths, output_that_is_a_folder_is_refused_before_the_run)
{
    char scratch[128], scen[192], fifo[192], err[1024], want[1024];
    ptest_tmpdir(scratch, sizeof(scratch), "outdir");
    snprintf(scen, sizeof(scen), "%s/s.yaml", scratch);
    snprintf(fifo, sizeof(fifo), "%s/never.csv", scratch);
    ptest_write(scen, "name: blocked\n"
                      "duration: 1h\n"
                      "cluster: { gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2 }\n"
                      "services:\n"
                      "  - name: chat\n"
                      "    replicas: 1\n"
                      "    arrivals: { trace: { path: never.csv, format: azure } }\n"
                      "policy: { name: dedicated, inference_gpus: 1 }\n");
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    const char *args[] = {"run", scen, "-o", scratch, NULL};
    snprintf(want, sizeof(want), "tidesim: output %s is a folder; name a file (e.g. %s/results.h5)",
             scratch, scratch);
    cr_expect_eq(ptest_run(NULL, args, err, sizeof(err), 20), 1);
    cr_expect_str_eq(err, want);
    const char *reps[] = {"run", scen, "-o", scratch, "--replications", "2", NULL};
    cr_expect_eq(ptest_run(NULL, reps, err, sizeof(err), 20), 1);
    cr_expect_str_eq(err, want);
    /* A missing folder likewise. */
    char missing[256];
    snprintf(missing, sizeof(missing), "%s/nope/r.h5", scratch);
    snprintf(want, sizeof(want),
             "tidesim: cannot write %s: folder %s/nope: No such file or directory", missing,
             scratch);
    const char *miss[] = {"run", scen, "-o", missing, NULL};
    cr_expect_eq(ptest_run(NULL, miss, err, sizeof(err), 20), 1);
    cr_expect_str_eq(err, want);
    /* Nothing was opened beside the folder either ("<folder>.tmp.<pid>"). */
    char *left[8], beside[160];
    snprintf(beside, sizeof(beside), "%s.", strrchr(scratch, '/') + 1);
    size_t n = ptest_list("/tmp", beside, left, 8);
    cr_expect_eq(n, 0, "left %s", n ? left[0] : "");
    ptest_free_list(left, n < 8 ? n : 8);
    ptest_rmdir(scratch);
}

/* A folder chain under scratch making the path `total` bytes long with file name `file`. */
static void long_path(char *out, size_t n, const char *scratch, size_t total, const char *file)
{
    size_t len = (size_t)snprintf(out, n, "%s", scratch);
    while (len + 1 + 60 + 1 + strlen(file) < total) {
        out[len++] = '/';
        memset(out + len, 'd', 60);
        len += 60;
        out[len] = 0;
        cr_assert(mkdir(out, 0755) == 0 || errno == EEXIST);
    }
    size_t pad = total - len - 2 - strlen(file); /* one more folder to land on `total` */
    out[len++] = '/';
    memset(out + len, 'e', pad);
    len += pad;
    out[len] = 0;
    cr_assert(mkdir(out, 0755) == 0 || errno == EEXIST);
    snprintf(out + len, n - len, "/%s", file);
    cr_assert_eq(strlen(out), total);
}

static int64_t seed_of(hid_t f, const char *rep)
{
    char where[32];
    snprintf(where, sizeof(where), "%s/meta", rep);
    hid_t a = H5Aopen_by_name(f, where, "seed", H5P_DEFAULT, H5P_DEFAULT);
    int64_t v = -1;
    if (a >= 0) {
        if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
            v = -1;
        H5Aclose(a);
    }
    return v;
}

/*
 * Before the fix the per-replication names lived in 512-byte buffers: at a
 * 507-byte output path both workers' names were cut to the same string, and
 * the merge took one replication twice (seeds 4 and 4).
 */
Test(cli_paths, replications_into_a_507_byte_path_keep_their_own_files)
{
    char scratch[128], path[1024], err[1024];
    ptest_tmpdir(scratch, sizeof(scratch), "longpath");
    long_path(path, sizeof(path), scratch, 507, "results.h5");
    const char *args[] = {
        "run", "tests/data/scenarios/tiny.yaml", "-o", path, "--replications", "2", "--quiet",
        NULL};
    int rc = ptest_run(NULL, args, err, sizeof(err), 120);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    cr_expect_eq(seed_of(f, "rep0000"), 3); /* tiny.yaml: seed 3 */
    cr_expect_eq(seed_of(f, "rep0001"), 4);
    H5Fclose(f);
    ptest_rmdir(scratch);
}

/* Messages that name a long path name all of it (they were cut at 511 bytes). */
Test(cli_paths, long_paths_are_named_whole_or_refused_whole)
{
    char scratch[128], path[8192], want[9000], err[9000];
    ptest_tmpdir(scratch, sizeof(scratch), "longmsg");
    long_path(path, sizeof(path), scratch, 700, "results.h5");
    /* A 700-byte path into a folder that is not there: the message quotes it whole. */
    char *slash = strrchr(path, '/');
    char missing[1024];
    snprintf(missing, sizeof(missing), "%.*s/gone/results.h5", (int)(slash - path), path);
    const char *a1[] = {"run", "tests/data/scenarios/tiny.yaml", "-o", missing, NULL};
    snprintf(want, sizeof(want),
             "tidesim: cannot write %s: folder %.*s/gone: No such file or "
             "directory",
             missing, (int)(slash - path), path);
    cr_expect_eq(ptest_run(NULL, a1, err, sizeof(err), 60), 1);
    cr_expect_str_eq(err, want);
    cr_expect_gt(strlen(err), 511);

    /* A path longer than the system allows once tidesim adds its suffixes: refused up front. */
    size_t n = 4090;
    memset(path, 'p', n);
    path[0] = '/';
    path[n] = 0;
    const char *a2[] = {"run", "tests/data/scenarios/tiny.yaml", "-o", path, NULL};
    cr_expect_eq(ptest_run(NULL, a2, err, sizeof(err), 60), 1);
    cr_expect(strstr(err, "tidesim: output path too long (4090 bytes") == err, "%s", err);
    ptest_rmdir(scratch);
}
