/*
 * test_results_image.c — a results file read from memory (results_open_image,
 * the fuzz harness's entry) is read exactly as the file on disk
 * (results_open, what report, check and compare use): the same report in
 * every format, per-day table included (read again through results_reopen),
 * the same gates (the backlog gate reads the jobs again) and the same
 * comparison, byte for byte, with the file deleted before the in-memory read
 * so nothing can come from disk. And what the command reads instead of the file (below).
 */
#include <errno.h>
#include <hdf5.h>
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

/*
 * The reader walks a group in the order the run wrote it (the scenario's order of services;
 * the /gpus columns from useful_s on), not by name: a walk in creation order is taken for
 * every group that tracks it (h5_rd_crt_order), which the run's groups do.
 */
Test(results_image, keeps_the_order_the_run_wrote)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    char scen[300];
    snprintf(scen, sizeof(scen), "%s/order.yaml", pr.dir);
    FILE *f = fopen(scen, "w");
    cr_assert_not_null(f);
    fputs("name: order\nseed: 1\nduration: 1h\nsample_interval: 30m\n"
          "cluster: { nodes: 1, gpus_per_node: 4 }\nservices:\n",
          f);
    for (int i = 0; i < 2; i++)
        fprintf(f,
                "  - name: %s\n    latency: { a_ms: 1.16, b_ms: 0.28 }\n    replicas: 1\n"
                "    arrivals: { synthetic: { peak_rps: 20, trough_ratio: 0.5, peak_hour: 1 } }\n",
                i ? "alpha" : "zeta");
    fputs("policy: { name: dedicated, inference_gpus: 2 }\n", f);
    fclose(f);
    atest_sim(scen, pr.a, NULL);
    struct results r;
    char err[512];
    cr_assert_eq(results_open_for(&r, pr.a, RESULTS_BY_REPORT, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(r.nsvcs, 2);
    cr_expect_str_eq(r.svcs[0].name, "zeta");
    cr_expect_str_eq(r.svcs[1].name, "alpha");
    results_release(&r);
    char *out = NULL, cmd[600];
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), pr.a);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    const char *useful = strstr(out, "  useful_s "), *ckpt = strstr(out, "  checkpoint_s ");
    cr_expect(useful && ckpt && useful < ckpt, "the /gpus columns in the run's order: %s", out);
    free(out);
    atest_rmdir(pr.dir);
}

/* ------------------------------------------------------------------------------------------
 * What the command reads instead of the file: report, check, compare and plot never call
 * libhdf5 on a results file in their own process: results_open's child reads it and sends
 * what it read (its "answer", analysis/results.c), which the command decodes. The answer is
 * decoded whole or refused, never half: cut anywhere, or with any byte damaged, it gives
 * back a file read the same as before, or a clear refusal, and AddressSanitizer
 * (make test SANITIZE=...) sees no error in the decoder.
 */

/* The answer a child sends for file bytes[0..n), as this process reads it (results_answer). */
static unsigned char *answer_of(const char *name, const void *bytes, size_t n, size_t *len)
{
    struct results r;
    char err[512];
    cr_assert_eq(results_open_image(&r, name, bytes, n, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(results_read_all(&r, RESULTS_BY_ALL), 0, "%s", results_why(&r));
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    cr_assert_eq(results_answer(&r, fileno(f)), 0);
    results_release(&r);
    long end = lseek(fileno(f), 0, SEEK_END);
    cr_assert_gt(end, 0);
    unsigned char *a = malloc((size_t)end);
    cr_assert_not_null(a);
    cr_assert_eq(pread(fileno(f), a, (size_t)end, 0), end);
    fclose(f);
    *len = (size_t)end;
    return a;
}

/* One small results file for every test here: two replications, /jobs and per-day columns. */
static void *fixture(struct atest_pair *pr, size_t *n)
{
    atest_pair_init(pr);
    atest_sim("tests/data/scenarios/small_60h.yaml", pr->a, "--replications 2");
    return atest_slurp(pr->a, n);
}

Test(results_answer, the_command_process_opens_nothing_of_the_file_with_libhdf5)
{
    struct atest_pair pr;
    size_t n;
    void *bytes = fixture(&pr, &n);
    struct results r;
    char err[512];
    H5open();
    ssize_t before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    cr_assert_eq(results_open(&r, pr.a, err, sizeof(err)), 0, "%s", err);
    /* Before the answer, results_open kept the file open here for the columns read later
     * (one file and its groups and datasets); now nothing of it is open in this process. */
    cr_expect_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), before,
                 "libhdf5 objects open in the command's process after results_open");
    const double *v;
    size_t k;
    cr_expect_eq(results_col(&r, 1, "jobs", "submit_s", &v, &k), 0, "%s", results_why(&r));
    cr_expect_gt(k, 0u, "the columns come with the answer");
    cr_expect_eq(results_col(&r, 0, "timeseries", "util_busy", &v, &k), 0);
    cr_expect_eq(k, 60u * 6, "60 h sampled every 10 min: %zu", k);
    cr_expect_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), before);
    cr_expect_eq(results_col(&r, 0, "timeseries", "no_such_column", &v, &k), -EPERM,
                 "a column the commands do not read is still refused");
    results_release(&r);
    free(bytes);
    atest_rmdir(pr.dir);
}

Test(results_answer, decodes_to_the_file_as_read_in_this_process)
{
    struct atest_pair pr;
    size_t n, len;
    void *bytes = fixture(&pr, &n);
    struct results direct, got;
    char err[512];
    cr_assert_eq(results_open_image(&direct, pr.a, bytes, n, err, sizeof(err)), 0, "%s", err);
    char *want = everything(&direct);
    results_release(&direct);
    unsigned char *a = answer_of(pr.a, bytes, n, &len);
    cr_assert_eq(results_from_answer(&got, pr.a, RESULTS_BY_ALL, a, len, err, sizeof(err)), 0, "%s",
                 err);
    char *have = everything(&got);
    cr_expect(strstr(want, "per day") && strstr(want, "initial backlog drained at"), "%s", want);
    cr_expect_str_eq(have, want);
    results_release(&got);
    free(have);
    free(want);
    free(a);
    free(bytes);
    atest_rmdir(pr.dir);
}

/*
 * The child that sends the answer may have been subverted by the file (a libhdf5 bug), so
 * the answer is as hostile as the file: every cut is refused (the answer ends with a mark,
 * and every count and length is checked against what is left), and every damaged byte gives
 * either a refusal or a readable file, never a crash.
 */
Test(results_answer, a_cut_or_damaged_answer_is_refused_or_read_whole, .timeout = 240)
{
    struct atest_pair pr;
    size_t n, len;
    void *bytes = fixture(&pr, &n);
    unsigned char *a = answer_of(pr.a, bytes, n, &len);
    char err[512];
    struct results r;
    for (size_t cut = 0; cut < len; cut += cut < 4096 ? 1 : 127) {
        int rc = results_from_answer(&r, pr.a, RESULTS_BY_ALL, a, cut, err, sizeof(err));
        cr_assert_eq(rc, -EIO, "cut at %zu of %zu: %d", cut, len, rc);
        cr_assert(strstr(err, "sent a damaged answer") && !strncmp(err, pr.a, strlen(pr.a)), "%s",
                  err);
    }
    size_t refused = 0, read = 0;
    static const unsigned char junk[] = {0xff, 0x00, 0x80, 0x7f};
    for (size_t i = 0; i < len; i += i < 4096 ? 1 : 509) {
        unsigned char keep = a[i];
        for (size_t j = 0; j < (i < 4096 ? 2 : sizeof(junk)); j++) {
            if (junk[j] == keep)
                continue;
            a[i] = junk[j];
            int rc = results_from_answer(&r, pr.a, RESULTS_BY_ALL, a, len, err, sizeof(err));
            cr_assert(rc == 0 || rc == -EIO, "byte %zu set to %#x: %d", i, junk[j], rc);
            if (rc == 0) {
                read++;
                char *txt = everything(&r); /* what a command does with it: no crash */
                free(txt);
                results_release(&r);
            } else {
                refused++;
            }
        }
        a[i] = keep;
    }
    /* Both happen: a damaged count or length is refused; a damaged value is just a value. */
    cr_expect_gt(refused, 500u, "refused %zu, read %zu of %zu bytes", refused, read, len);
    cr_expect_gt(read, 500u, "refused %zu, read %zu of %zu bytes", refused, read, len);
    cr_assert_eq(results_from_answer(&r, pr.a, RESULTS_BY_ALL, a, len, err, sizeof(err)), 0);
    results_release(&r);
    cr_log_info("answer of %zu bytes: %zu damaged copies refused, %zu read", len, refused, read);
    free(a);
    free(bytes);
    atest_rmdir(pr.dir);
}

/* An answer claiming more replications than any file holds is refused before any is read. */
Test(results_answer, an_answer_claiming_too_many_replications_is_refused)
{
    struct atest_pair pr;
    size_t n, len;
    void *bytes = fixture(&pr, &n);
    unsigned char *a = answer_of(pr.a, bytes, n, &len);
    /* The replication count follows the magic line and six strings; find it by its value. */
    const char *magic = "tidesim results, read by a child\n";
    cr_assert_eq(memcmp(a, magic, strlen(magic)), 0);
    size_t at = strlen(magic);
    for (int s = 0; s < 6; s++) {
        uint64_t l;
        memcpy(&l, a + at, 8);
        at += 8 + (l == UINT64_MAX ? 0 : l);
    }
    uint64_t reps;
    memcpy(&reps, a + at, 8);
    cr_assert_eq(reps, 2u, "the count is where the format puts it");
    uint64_t many = 1000000000;
    memcpy(a + at, &many, 8);
    struct results r;
    char err[512];
    cr_expect_eq(results_from_answer(&r, pr.a, RESULTS_BY_ALL, a, len, err, sizeof(err)), -EIO);
    cr_expect(strstr(err, "damaged answer") != NULL, "%s", err);
    free(a);
    free(bytes);
    atest_rmdir(pr.dir);
}
