/*
 * test_results_answer.c — report, check, compare and plot never call libhdf5 on a results
 * file in their own process: results_open's child reads it and sends what it read (its
 * "answer", analysis/results.c), which the command decodes. The answer is decoded whole or
 * refused, never half: cut anywhere, or with any byte damaged, it gives back a file read the
 * same as before, or a clear refusal, and AddressSanitizer (make test SANITIZE=...) sees no
 * error in the decoder.
 */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/check.h"
#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "tests/analysistest.h"

/* The text report of r (with its per-day table). The caller frees it. */
static char *report_of(const struct results *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    cr_expect_eq(report_results(out, r, REPORT_TEXT), 0);
    struct check_gates g;
    check_gates_init(&g);
    g.backlog_by_s = 1; /* reads /jobs: the columns come from the answer */
    struct check_outcome o;
    check_run(out, r, NULL, &g, &o);
    fclose(out);
    return buf;
}

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
    char *want = report_of(&direct);
    results_release(&direct);
    unsigned char *a = answer_of(pr.a, bytes, n, &len);
    cr_assert_eq(results_from_answer(&got, pr.a, RESULTS_BY_ALL, a, len, err, sizeof(err)), 0, "%s",
                 err);
    char *have = report_of(&got);
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
    for (size_t i = 0; i < len; i += i < 4096 ? 1 : 127) {
        unsigned char keep = a[i];
        for (size_t j = 0; j < sizeof(junk); j++) {
            if (junk[j] == keep)
                continue;
            a[i] = junk[j];
            int rc = results_from_answer(&r, pr.a, RESULTS_BY_ALL, a, len, err, sizeof(err));
            cr_assert(rc == 0 || rc == -EIO, "byte %zu set to %#x: %d", i, junk[j], rc);
            if (rc == 0) {
                read++;
                char *txt = report_of(&r); /* what a command does with it: no crash */
                free(txt);
                results_release(&r);
            } else {
                refused++;
            }
        }
        a[i] = keep;
    }
    /* Both happen: a damaged count or length is refused; a damaged value is just a value. */
    cr_expect_gt(refused, 1000u, "refused %zu, read %zu of %zu bytes", refused, read, len);
    cr_expect_gt(read, 1000u, "refused %zu, read %zu of %zu bytes", refused, read, len);
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
