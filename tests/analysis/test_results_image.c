/*
 * test_results_image.c — a results file read from memory (results_open_image,
 * the fuzz harness's entry) is read exactly as the file on disk
 * (results_open, what report, check and compare use): the same report in
 * every format, per-day table included (read again through results_reopen),
 * the same gates (the backlog gate reads the jobs again) and the same
 * comparison, byte for byte, with the file deleted before the in-memory read
 * so nothing can come from disk.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/check.h"
#include "analysis/compare.h"
#include "analysis/h5read.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "tests/analysistest.h"

/* Everything the fuzz harness does with a file, as one text. The caller frees it. */
static char *everything(const struct results *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    cr_expect_eq(report_results(out, r, REPORT_TEXT), 0);
    cr_expect_eq(report_results(out, r, REPORT_MARKDOWN), 0);
    cr_expect_eq(report_results(out, r, REPORT_JSON), 0);
    struct check_gates g;
    check_gates_init(&g);
    g.min_util = 0.5;
    g.min_slo = 0.9;
    g.backlog_by_s = 1; /* s: fails, and says when the backlog drained (read from /jobs) */
    struct check_outcome o;
    check_run(out, r, r, &g, &o);
    fprintf(out, "gates %zu failed %zu\n", o.evaluated, o.failed);
    const struct results *pair[2] = {r, r};
    cr_expect_eq(compare_write(out, pair, 2, false), 0);
    cr_expect_eq(compare_write(out, pair, 2, true), 0);
    fclose(out);
    return buf;
}

Test(results_image, reads_as_the_file_on_disk)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    /* Three simulated days, two replications: the reports hold a per-day table. */
    atest_sim("tests/data/scenarios/small_60h.yaml", pr.a, "--replications 2");
    size_t n;
    void *bytes = atest_slurp(pr.a, &n);

    struct results disk, mem;
    char err[512];
    cr_assert_eq(results_open(&disk, pr.a, err, sizeof(err)), 0, "%s", err);
    char *want = everything(&disk);
    results_release(&disk);
    cr_assert_eq(unlink(pr.a), 0);

    cr_assert_eq(results_open_image(&mem, pr.a, bytes, n, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(mem.reps, 2u);
    cr_expect_str_eq(mem.path, pr.a, "messages and reports name the file as given");
    char *got = everything(&mem);
    results_release(&mem);

    cr_expect(strstr(want, "per day") != NULL, "the per-day table is there to compare");
    cr_expect(strstr(want, "initial backlog drained at") != NULL, "the backlog gate read /jobs");
    cr_expect(strstr(want, "cannot reopen") == NULL, "%s", want);
    cr_expect_str_eq(got, want);
    free(want);
    free(got);
    free(bytes);
    atest_rmdir(pr.dir);
}

Test(results_image, refuses_what_is_not_a_results_file)
{
    struct results r;
    char err[512];
    const char junk[] = "not an HDF5 file";
    cr_expect_eq(results_open_image(&r, "x.h5", junk, sizeof(junk) - 1, err, sizeof(err)), -ENOENT);
    cr_expect_str_eq(err, "x.h5: cannot open as an HDF5 results file");
    cr_expect_eq(results_open_image(&r, "x.h5", NULL, 0, err, sizeof(err)), -ENOENT);
    cr_expect(strstr(err, "x.h5: ") == err, "%s", err);
    /* A session on the image has the budget of a file of its size. */
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small.yaml", pr.a, NULL);
    size_t n;
    void *bytes = atest_slurp(pr.a, &n);
    struct h5_rd rd;
    hid_t f = h5_rd_open_image(&rd, bytes, n);
    cr_assert_geq(f, 0, "%s", rd.why);
    cr_expect_eq(rd.filesize, (uint64_t)n);
    cr_expect_eq(rd.rc, 0);
    H5Fclose(f);
    free(bytes);
    atest_rmdir(pr.dir);
}
