/*
 * test_hostile_results.c — results files are not trusted (issue 14, findings
 * 1, 3 and 6). A valid file from a short run is copied and altered with the
 * HDF5 C API the way a hostile or damaged file would be: an attribute stored
 * as an array, a string attribute of another type or shape, a dataset that
 * declares far more values than it stores or than the reader takes, a group
 * that is a dataset, a link into another file, table columns of unequal
 * length. `report`, `compare`, `check` and `plot` each refuse every such file
 * with one message naming the file and the object, and the documented exit
 * code (check 2, the others 1), instead of crashing or reading on. And
 * `plot -o` with a folder name gnuplot would take for a pipe runs nothing.
 */
#include <errno.h>
#include <hdf5.h>

#include "analysis/h5read.h"
#include "tests/analysistest.h"

#define SMALL "tests/data/scenarios/small.yaml"

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "%s -> %s", from, to);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        cr_assert_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
}

/* Replace attribute name of group path with one of type t and space sp holding v. */
static void put_attr(hid_t f, const char *path, const char *name, hid_t t, hid_t sp, const void *v)
{
    hid_t g = H5Gopen2(f, path, H5P_DEFAULT);
    cr_assert_geq(g, 0, "%s", path);
    if (H5Aexists(g, name) > 0)
        cr_assert_geq(H5Adelete(g, name), 0);
    hid_t a = H5Acreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(a, 0, "%s/%s", path, name);
    cr_assert_geq(H5Awrite(a, t, v), 0);
    H5Aclose(a);
    H5Gclose(g);
}

/* /summary/util_busy as an array of 3 doubles (the reader had room for one). */
static void array_attr(hid_t f)
{
    const double v[3] = {0.5, 0.6, 0.7};
    hsize_t dims[1] = {3};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    put_attr(f, "/summary", "util_busy", H5T_NATIVE_DOUBLE, sp, v);
    H5Sclose(sp);
}

/* A service's p99_ms as a 2-D array of 64 values. */
static void service_array_attr(hid_t f)
{
    double v[64];
    for (int i = 0; i < 64; i++)
        v[i] = 1e300;
    hsize_t dims[2] = {8, 8};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    put_attr(f, "/services/chat", "p99_ms", H5T_NATIVE_DOUBLE, sp, v);
    H5Sclose(sp);
}

/* /meta/policy as an integer. */
static void int_string_attr(hid_t f)
{
    const int64_t v = 42;
    hid_t sp = H5Screate(H5S_SCALAR);
    put_attr(f, "/meta", "policy", H5T_NATIVE_INT64, sp, &v);
    H5Sclose(sp);
}

/* /meta/scenario_name as an array of 8 variable-length strings (8 pointers into room for one). */
static void vlen_string_array(hid_t f)
{
    const char *v[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    hsize_t dims[1] = {8};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    put_attr(f, "/meta", "scenario_name", t, sp, v);
    H5Tclose(t);
    H5Sclose(sp);
}

/* /meta/gpu as a fixed-length string of 1 MiB (a single value, but far over the limit). */
static void huge_fixed_string(hid_t f)
{
    size_t n = (size_t)1 << 20;
    char *v = calloc(n, 1);
    cr_assert_not_null(v);
    memset(v, 'x', n - 1);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, n);
    put_attr(f, "/meta", "gpu", t, sp, v);
    H5Tclose(t);
    H5Sclose(sp);
    free(v);
}

/* Replace dataset group/name by a chunked, deflated one declaring n values and storing none. */
static void lying_dataset(hid_t f, const char *group, const char *name, hsize_t n)
{
    hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
    cr_assert_geq(g, 0);
    cr_assert_geq(H5Ldelete(g, name, H5P_DEFAULT), 0);
    hsize_t dims[1] = {n}, maxd[1] = {H5S_UNLIMITED}, chunk[1] = {1024};
    hid_t sp = H5Screate_simple(1, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_deflate(dcpl, 4);
    hid_t d = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    cr_assert_geq(d, 0, "%s/%s", group, name);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Gclose(g);
}

/* /jobs/state declares 2^40 values: past the reader's limit whatever it stores. */
static void huge_dataset(hid_t f)
{
    lying_dataset(f, "/jobs", "state", (hsize_t)1 << 40);
}

/* /jobs/state declares 2^25 values (256 MiB) and stores none: a few KB cost a quarter GB. */
static void unstored_dataset(hid_t f)
{
    lying_dataset(f, "/jobs", "state", (hsize_t)1 << 25);
}

/* /summary is a dataset, not a group. */
static void summary_dataset(hid_t f)
{
    cr_assert_geq(H5Ldelete(f, "summary", H5P_DEFAULT), 0);
    hsize_t dims[1] = {1};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t d =
        H5Dcreate2(f, "summary", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(d, 0);
    H5Dclose(d);
    H5Sclose(sp);
}

/* /jobs is a link into another file. */
static void external_jobs(hid_t f)
{
    cr_assert_geq(H5Ldelete(f, "jobs", H5P_DEFAULT), 0);
    cr_assert_geq(
        H5Lcreate_external("/nonexistent/other.h5", "/jobs", f, "jobs", H5P_DEFAULT, H5P_DEFAULT),
        0);
}

/* /timeseries/util_busy with 5 rows where the other columns have 12. */
static void short_column(hid_t f)
{
    hid_t g = H5Gopen2(f, "/timeseries", H5P_DEFAULT);
    cr_assert_geq(H5Ldelete(g, "util_busy", H5P_DEFAULT), 0);
    const double v[5] = {0.1, 0.2, 0.3, 0.4, 0.5};
    hsize_t dims[1] = {5};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t d =
        H5Dcreate2(g, "util_busy", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(d, 0);
    cr_assert_geq(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Gclose(g);
}

struct hostile {
    const char *name;
    void (*make)(hid_t f);
    const char *want; /* in every command's message, after "<file>: " */
};

static const struct hostile cases[] = {
    {"array_attr", array_attr,
     "/summary/util_busy: expected a scalar numeric attribute, found an array of 3"},
    {"service_array_attr", service_array_attr,
     "/services/chat/p99_ms: expected a scalar numeric attribute, found a 2-D array of 64"},
    {"int_string_attr", int_string_attr,
     "/meta/policy: expected a string attribute, found an 8-byte integer"},
    {"vlen_string_array", vlen_string_array,
     "/meta/scenario_name: expected a scalar string attribute, found an array of 8"},
    {"huge_fixed_string", huge_fixed_string,
     "/meta/gpu: fixed-length string of 1048576 bytes (limit 65536)"},
    {"huge_dataset", huge_dataset, "/jobs/state: declares 1099511627776 values (limit 268435456)"},
    {"unstored_dataset", unstored_dataset,
     "/jobs/state: declares 33554432 values (268435456 bytes) but stores only 0 bytes"},
    {"summary_dataset", summary_dataset, "/summary: expected a group, found a dataset"},
    {"external_jobs", external_jobs,
     "/jobs: expected a group, found an external link (not followed)"},
    {"short_column", short_column,
     "/timeseries/util_busy: 5 values, but /timeseries/checkpoint_gpu_s has 12"},
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The valid run and one altered copy of it per case, in dir. */
static void make_files(const char *dir, char good[128])
{
    snprintf(good, 128, "%s/good.h5", dir);
    atest_sim(SMALL, good, NULL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t i = 0; i < NCASES; i++) {
        char p[160];
        snprintf(p, sizeof(p), "%s/%s.h5", dir, cases[i].name);
        copy_file(good, p);
        hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
        cr_assert_geq(f, 0, "%s", p);
        cases[i].make(f);
        cr_assert_geq(H5Fclose(f), 0);
    }
}

/* Run cmd: exit code want_rc, output holding "<file>: <want>", and no crash report. */
static void expect_refused(const char *cmd, int want_rc, const char *file, const char *want)
{
    char *out = NULL, msg[512];
    int rc = atest_run(cmd, &out);
    snprintf(msg, sizeof(msg), "%s: %s", file, want);
    cr_expect_eq(rc, want_rc, "%s: exit %d, want %d:\n%s", cmd, rc, want_rc, out);
    cr_expect(strstr(out, msg) != NULL, "%s: want '%s' in:\n%s", cmd, msg, out);
    cr_expect(strstr(out, "AddressSanitizer") == NULL && strstr(out, "runtime error") == NULL,
              "%s:\n%s", cmd, out);
    free(out);
}

Test(hostile_results, every_command_refuses_every_hostile_file, .timeout = 120)
{
    char dir[64], good[128], cmd[1024];
    atest_tmpdir(dir, sizeof(dir));
    make_files(dir, good);
    /* The unaltered file reads: what is refused below is the alteration. */
    snprintf(cmd, sizeof(cmd), "%s check %s --min-util 0.01", atest_bin(), good);
    cr_assert_eq(atest_run(cmd, NULL), 0, "%s", cmd);
    for (size_t i = 0; i < NCASES; i++) {
        char p[160];
        snprintf(p, sizeof(p), "%s/%s.h5", dir, cases[i].name);
        snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), p);
        expect_refused(cmd, 1, p, cases[i].want);
        snprintf(cmd, sizeof(cmd), "%s compare %s %s", atest_bin(), good, p);
        expect_refused(cmd, 1, p, cases[i].want);
        snprintf(cmd, sizeof(cmd), "%s check %s --min-util 0.01", atest_bin(), p);
        expect_refused(cmd, 2, p, cases[i].want);
        snprintf(cmd, sizeof(cmd), "%s check %s --against %s", atest_bin(), good, p);
        expect_refused(cmd, 2, p, cases[i].want);
        snprintf(cmd, sizeof(cmd), "%s plot %s -o %s/plot_%s", atest_bin(), p, dir, cases[i].name);
        expect_refused(cmd, 1, p, cases[i].want);
    }
    atest_rmdir(dir);
}

/* The library readers themselves, in this process: refusals, not writes past one value. */
Test(hostile_results, readers_refuse_without_writing_past_one_value)
{
    char dir[64], good[128], p[160];
    atest_tmpdir(dir, sizeof(dir));
    make_files(dir, good);
    struct h5_rd rd;

    snprintf(p, sizeof(p), "%s/array_attr.h5", dir);
    hid_t f = h5_rd_open(&rd, p);
    cr_assert_geq(f, 0, "%s", rd.why);
    hid_t g = h5_rd_group(&rd, f, "summary");
    cr_assert_geq(g, 0, "%s", rd.why);
    double guard[3] = {-1, -2, -3};
    cr_expect_eq(h5_rd_attr_double(&rd, g, "util_busy", &guard[1]), -EIO);
    cr_expect(guard[0] == -1 && guard[1] == -2 && guard[2] == -3, "%g %g %g", guard[0], guard[1],
              guard[2]);
    cr_expect_str_eq(
        rd.why, "/summary/util_busy: expected a scalar numeric attribute, found an array of 3");
    /* The session keeps its first refusal; a good attribute still reads. */
    double gpus = 0;
    cr_expect_eq(h5_rd_attr_double(&rd, g, "gpus", &gpus), 0);
    cr_expect_float_eq(gpus, 4, 0); /* small.yaml: 4 cards */
    cr_expect_eq(h5_rd_attr_double(&rd, g, "no_such_attribute", &gpus), -ENOENT);
    cr_expect_eq(rd.rc, -EIO);
    H5Gclose(g);
    H5Fclose(f);

    snprintf(p, sizeof(p), "%s/vlen_string_array.h5", dir);
    f = h5_rd_open(&rd, p);
    g = h5_rd_group(&rd, f, "meta");
    char *s = (char *)&rd; /* any non-NULL value: a refusal sets NULL */
    cr_expect_eq(h5_rd_attr_str(&rd, g, "scenario_name", &s), -EIO);
    cr_expect_null(s);
    H5Gclose(g);
    H5Fclose(f);

    snprintf(p, sizeof(p), "%s/unstored_dataset.h5", dir);
    f = h5_rd_open(&rd, p);
    g = h5_rd_group(&rd, f, "jobs");
    double *v = NULL;
    size_t n = 7;
    cr_expect_eq(h5_rd_f64(&rd, g, "state", &v, &n), -EIO);
    cr_expect(v == NULL && n == 0);
    /* A column next to it reads: 4 jobs in small.yaml's 1-hour run. */
    cr_expect_eq(h5_rd_f64(&rd, g, "gpus", &v, &n), 0);
    cr_expect_eq(n, 4);
    free(v);
    H5Gclose(g);
    H5Fclose(f);
    atest_rmdir(dir);
}

/* `plot -o NAME` where gnuplot would take NAME/... for a pipe: nothing runs, charts land in NAME.
 */
Test(hostile_results, plot_output_names_are_never_pipes, .timeout = 120)
{
    char dir[64], good[128], cmd[2048], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(good, sizeof(good), "%s/s.h5", dir);
    atest_sim(SMALL, good, NULL);
    char *bin = realpath(atest_bin(), NULL);
    cr_assert_not_null(bin, "%s", atest_bin());
    /* '|touch X #' made gnuplot run `touch X #/util.png`; '<touch Y #' ran `touch Y` for data. */
    static const char *const names[] = {"|touch X", "|touch X #", "<touch Y #"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(cmd, sizeof(cmd), "cd %s && %s plot s.h5 -o '%s'", dir, bin, names[i]);
        int rc = atest_run(cmd, &out);
        cr_expect_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out);
        cr_expect(strstr(out, "touch:") == NULL, "%s:\n%s", cmd, out);
        free(out);
        char img[256];
        snprintf(img, sizeof(img), "%s/%s/util.png", dir, names[i]);
        cr_expect_gt(atest_size(img), 1000, "%s: no chart in the folder named so", img);
    }
    char p[128];
    snprintf(p, sizeof(p), "%s/X", dir);
    cr_expect(!atest_exists(p), "gnuplot ran a command: %s exists", p);
    snprintf(p, sizeof(p), "%s/Y", dir);
    cr_expect(!atest_exists(p), "gnuplot ran a command: %s exists", p);

    /* A quote cannot be handed to gnuplot safely: refused, nothing created. */
    snprintf(cmd, sizeof(cmd), "cd %s && %s plot s.h5 -o \"a'b\"", dir, bin);
    cr_expect_eq(atest_run(cmd, &out), 1, "%s", out);
    cr_expect(strstr(out, "a'b: the output folder's name holds a quote") != NULL, "%s", out);
    free(out);
    snprintf(p, sizeof(p), "%s/a'b", dir);
    cr_expect(!atest_exists(p));
    free(bin);
    atest_rmdir(dir);
}
