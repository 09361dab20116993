/* analysistest.h — helpers of the analysis tests: run the tidesim binary, scratch folders. */
#ifndef TIDESIM_ANALYSISTEST_H
#define TIDESIM_ANALYSISTEST_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static inline const char *atest_bin(void)
{
    const char *b = getenv("TIDESIM_BIN");
    return b ? b : "build/tidesim";
}

/* A fresh scratch folder under /tmp (path written to dir, >= 64 bytes). */
static inline void atest_tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/tidesim-analysis-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* A scratch folder with two results paths in it, dir/a.h5 and dir/b.h5 (an A/B pair). */
struct atest_pair {
    char dir[64], a[128], b[128];
};

static inline void atest_pair_init(struct atest_pair *p)
{
    atest_tmpdir(p->dir, sizeof(p->dir));
    snprintf(p->a, sizeof(p->a), "%s/a.h5", p->dir);
    snprintf(p->b, sizeof(p->b), "%s/b.h5", p->dir);
}

static inline void atest_rmdir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Run a shell command; its stdout goes to out (malloc'd, may be NULL), returns its exit code. */
static inline int atest_run(const char *cmd, char **out)
{
    char full[4096], of[] = "/tmp/tidesim-atest-out-XXXXXX";
    int fd = mkstemp(of);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(full, sizeof(full), "%s >%s 2>&1", cmd, of);
    int st = system(full);
    if (out) {
        FILE *f = fopen(of, "r");
        cr_assert_not_null(f);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        *out = calloc((size_t)len + 1, 1);
        cr_assert_eq(fread(*out, 1, (size_t)len, f), (size_t)len);
        fclose(f);
    }
    unlink(of);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline bool atest_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static inline long atest_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* The whole of file p (not empty) in a malloc'd buffer, NUL-terminated; *n its size
 * (n may be NULL). */
static inline char *atest_slurp(const char *p, size_t *n)
{
    long size = atest_size(p);
    cr_assert_gt(size, 0, "%s", p);
    FILE *fp = fopen(p, "rb");
    cr_assert_not_null(fp, "%s", p);
    char *buf = calloc((size_t)size + 1, 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)size, fp), (size_t)size, "%s", p);
    fclose(fp);
    if (n)
        *n = (size_t)size;
    return buf;
}

/* `tidesim run SCENARIO -o OUT --quiet EXTRA`, asserting success. */
static inline void atest_sim(const char *scenario, const char *out, const char *extra)
{
    char cmd[1024], *log = NULL;
    snprintf(cmd, sizeof(cmd), "%s run %s -o %s --quiet %s", atest_bin(), scenario, out,
             extra ? extra : "");
    int rc = atest_run(cmd, &log);
    cr_assert_eq(rc, 0, "%s: exit %d: %s", cmd, rc, log);
    free(log);
}

/* A sweep of 4 points (2 policies × 1..2 nodes, 1 h each) in dir/out; its index in idx. */
static inline void atest_small_sweep(const char *dir, char *idx, size_t n)
{
    char cmd[1200], *log = NULL;
    snprintf(cmd, sizeof(cmd),
             "cp tests/data/scenarios/small.yaml %s/small.yaml && printf 'base: small.yaml\\n"
             "axes:\\n  policy.name: [dedicated, kueue]\\n  cluster.nodes: [1, 2]\\n' >%s/s.yaml",
             dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s sweep %s/s.yaml -o %s/out -j 2", atest_bin(), dir, dir);
    cr_assert_eq(atest_run(cmd, &log), 0, "%s", log);
    free(log);
    snprintf(idx, n, "%s/out/index.h5", dir);
}

/*
 * Make dataset `path` of HDF5 file f (a results file, an index) unreadable: the middle of its first
 * (deflated) chunk overwritten, so that inflating it fails. Its metadata
 * (type, shape, storage) stay as they were: the checks results_open makes of
 * it still pass, only reading its values fails.
 */
static inline void atest_damage_column(const char *f, const char *path)
{
    hid_t file = H5Fopen(f, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(file, 0, "%s", f);
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    cr_assert_geq(d, 0, "%s:%s", f, path);
    haddr_t addr = 0;
    hsize_t size = 0;
    unsigned mask = 0;
    hid_t sp = H5Dget_space(d);
    cr_assert_geq(H5Dget_chunk_info(d, sp, 0, NULL, &mask, &addr, &size), 0, "%s", path);
    H5Sclose(sp);
    cr_assert_gt(size, 8, "%s: a chunk of %llu bytes", path, (unsigned long long)size);
    H5Dclose(d);
    H5Fclose(file);
    int fd = open(f, O_WRONLY);
    cr_assert_geq(fd, 0);
    unsigned char junk[4096];
    memset(junk, 0xA5, sizeof(junk));
    size_t from = (size_t)size / 4, len = (size_t)size - from - 2;
    len = len < sizeof(junk) ? len : sizeof(junk);
    cr_assert_eq(pwrite(fd, junk, len, (off_t)(addr + from)), (ssize_t)len);
    close(fd);
}

/* Distinct series of a gnuplot SVG: groups id="gnuplot_plot_<n><panel letter?>". */
static inline int atest_svg_series(const char *svg)
{
    char seen[64][16];
    int n = 0;
    for (const char *p = svg; (p = strstr(p, "<g id=\"gnuplot_plot_")) != NULL; p++) {
        char id[16] = "";
        sscanf(p + 20, "%15[0-9a-z]", id);
        bool dup = false;
        for (int i = 0; i < n && !dup; i++)
            dup = !strcmp(seen[i], id);
        if (!dup && n < 64)
            snprintf(seen[n++], sizeof(seen[0]), "%s", id);
    }
    return n;
}

#endif
