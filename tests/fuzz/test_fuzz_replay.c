/*
 * test_fuzz_replay.c — every input the fuzzers have kept as a finding
 * (every file of tests/data/fuzz/<target>/) runs through the same entry point the
 * libFuzzer driver calls (fuzz/targets.c) without a crash, a sanitizer report
 * (under `make test SANITIZE=...`) or a broken promise: it is accepted, or
 * refused with a message. The entry points themselves are checked on inputs
 * whose verdict the readers' headers fix, so a target that accepted or
 * refused everything would fail here.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/targets.h"
#include "tests/analysistest.h"

#define REPRO_DIR "tests/data/fuzz"

/* The whole of path in a malloc'd buffer (*n bytes). */
static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    cr_assert_geq(len, 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)len + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len, "short read of %s", path);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* Replays every file of REPRO_DIR/name; returns how many there were. */
static size_t replay(const char *name)
{
    const struct fuzz_target *t = fuzz_target_find(name);
    cr_assert_not_null(t, "no fuzz target '%s'", name);
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/%s", REPRO_DIR, name);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[600];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        size_t n;
        uint8_t *data = slurp(path, &n);
        char msg[1024];
        cr_log_info("replaying %s", path);
        int rc = (t->replay ? t->replay : t->run)(data, n, msg, sizeof(msg));
        free(data);
        cr_expect(rc == FUZZ_ACCEPTED || rc == FUZZ_REJECTED, "%s: verdict %d: %s", path, rc, msg);
        if (rc == FUZZ_REJECTED)
            cr_expect(msg[0] != '\0', "%s: refused without a message", path);
        count++;
    }
    closedir(d);
    return count;
}

#define REPLAY(name)                                           \
    Test(fuzz_replay, name)                                    \
    {                                                          \
        cr_log_info(#name ": %zu reproducers", replay(#name)); \
    }

REPLAY(scenario)
REPLAY(arrivals_azure)
REPLAY(arrivals_servegen)
REPLAY(arrivals_csv)
REPLAY(arrivals_counts)
REPLAY(jobs_openb)
REPLAY(jobs_pai)
REPLAY(jobs_helios)
REPLAY(jobs_csv)
REPLAY(results)
REPLAY(results_answer)
REPLAY(index_answer)
REPLAY(snapshot)

/* Every folder of reproducers names a target, and every target has a test above. */
Test(fuzz_replay, folders_name_targets)
{
    DIR *d = opendir(REPRO_DIR);
    cr_assert_not_null(d, "%s is missing", REPRO_DIR);
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[600];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", REPRO_DIR, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) || !S_ISDIR(st.st_mode))
            continue;
        cr_expect_not_null(fuzz_target_find(e->d_name), "%s names no fuzz target", path);
    }
    closedir(d);
    cr_expect_eq(fuzz_ntargets, 13, "a target was added: give it a REPLAY line here");
}

/* One input through a target: its verdict, and its message in msg. */
static int verdict(const char *name, const void *data, size_t n, char *msg, size_t msglen)
{
    const struct fuzz_target *t = fuzz_target_find(name);
    cr_assert_not_null(t, "no fuzz target '%s'", name);
    return t->run(data, n, msg, msglen);
}

/* The option byte comes first in trace inputs; "\0" = defaults. */
#define TRACE(s) ("\0" s), sizeof("\0" s) - 1

Test(fuzz_replay, targets_accept_good_and_refuse_bad_input)
{
    char msg[1024];
    const char *scen = "name: t\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 1 }\n"
                       "policy: { name: dedicated }\n";
    cr_expect_eq(verdict("scenario", scen, strlen(scen), msg, sizeof(msg)), FUZZ_ACCEPTED, "%s",
                 msg);
    const char *bad = "name: t\nduration: [\n";
    cr_expect_eq(verdict("scenario", bad, strlen(bad), msg, sizeof(msg)), FUZZ_REJECTED);
    cr_expect(strstr(msg, "fuzz.yaml:"), "message names the file: %s", msg);

    cr_expect_eq(
        verdict("arrivals_counts", TRACE("minute,requests\n0,3\n60,0\n"), msg, sizeof(msg)),
        FUZZ_ACCEPTED, "%s", msg);
    cr_expect_eq(verdict("arrivals_counts", TRACE("minute,requests\n0,-4\n"), msg, sizeof(msg)),
                 FUZZ_REJECTED);
    cr_expect(strstr(msg, "requests"), "message names the column: %s", msg);
    /* Bit 0 of the option byte is skip_bad: the same bad row is skipped. */
    cr_expect_eq(verdict("arrivals_counts", "\1minute,requests\n0,-4\n",
                         sizeof("\1minute,requests\n0,-4\n") - 1, msg, sizeof(msg)),
                 FUZZ_ACCEPTED, "%s", msg);

    cr_expect_eq(verdict("arrivals_csv", TRACE("time_s,in_tokens,out_tokens\n1,2,3\n2,4,5\n"), msg,
                         sizeof(msg)),
                 FUZZ_ACCEPTED, "%s", msg);
    cr_expect_eq(verdict("arrivals_csv", TRACE("time_s,in_tokens,out_tokens\n2,2,3\n1,4,5\n"), msg,
                         sizeof(msg)),
                 FUZZ_REJECTED, "times going backwards are malformed");

    cr_expect_eq(
        verdict("jobs_csv", TRACE("id,submit_s,duration_s,gpus\n1,0,10,1\n"), msg, sizeof(msg)),
        FUZZ_ACCEPTED, "%s", msg);
    cr_expect_eq(
        verdict("jobs_csv", TRACE("id,submit_s,duration_s,gpus\n1,0,10,0\n"), msg, sizeof(msg)),
        FUZZ_REJECTED, "a zero-GPU job is an error in the generic format");
    cr_expect(msg[0], "refusal has a message");

    const char snap[] = "id,gpus,pool,node,started_s,remaining_s\n1,4,a,1,5,10\n2,4,b,0,0,1\n";
    cr_expect_eq(verdict("snapshot", snap, sizeof(snap) - 1, msg, sizeof(msg)), FUZZ_ACCEPTED, "%s",
                 msg);
    const char snap_bad[] = "id,gpus,node,started_s,remaining_s\n1,3,2,5,10\n2,2,2,5,10\n";
    cr_expect_eq(verdict("snapshot", snap_bad, sizeof(snap_bad) - 1, msg, sizeof(msg)),
                 FUZZ_REJECTED, "node 2 over-full");
    cr_expect(strstr(msg, ":3: column 'node'"), "message names line and column: %s", msg);

    /* results: the fuzzer's entry reads the bytes in memory as "fuzz.h5", the replay
     * writes them to a file and reads it as tidesim does. */
    const char junk[] = "not an HDF5 file";
    cr_expect_eq(verdict("results", junk, sizeof(junk) - 1, msg, sizeof(msg)), FUZZ_REJECTED);
    cr_expect(strstr(msg, "fuzz.h5: cannot open as an HDF5 results file"),
              "message names the file: %s", msg);
    cr_expect_eq(verdict("results", "", 0, msg, sizeof(msg)), FUZZ_REJECTED);
    const struct fuzz_target *t = fuzz_target_find("results");
    cr_assert(t->replay != NULL, "results replays through the production path");
    cr_expect_eq(t->replay((const uint8_t *)junk, sizeof(junk) - 1, msg, sizeof(msg)),
                 FUZZ_REJECTED);
    cr_expect(strstr(msg, "tidesim-fuzz-"), "message names the file: %s", msg);
    cr_expect_eq(t->replay((const uint8_t *)"", 0, msg, sizeof(msg)), FUZZ_REJECTED);
}

/*
 * The results harness tells a child's death by libhdf5 (the file is refused, as tidesim
 * refuses it) from one by our code (a finding) by the sanitizer report the child left. The
 * reports below are shaped as AddressSanitizer and UBSan print them (the first from the
 * libhdf5 crash the fuzzer found, tests/data/fuzz/results/).
 */
Test(fuzz_replay, a_childs_report_blames_libhdf5_or_us_by_its_first_frame)
{
    /* A bad free inside libhdf5, called back from our code further down: libhdf5's. */
    cr_expect_not(fuzz_report_blames_us(
        "==21529==ERROR: AddressSanitizer: attempting free on address which was not malloc()-ed\n"
        "    #0 0x55cc6a6e1fa2 in free (/w/build-fuzzer/fuzzers/results+0x281fa2) (BuildId: 84)\n"
        "    #1 0x7f970ab3990a  (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x13990a)\n"
        "    #2 0x55cc6a639bad in check_columns /w/analysis/results.c:1008:5\n"
        "SUMMARY: AddressSanitizer: bad-free\n"));
    /* A wild read in libhdf5 (the child has the sanitizer's SEGV handler back). */
    cr_expect_not(fuzz_report_blames_us(
        "==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010\n"
        "    #0 0x7f816dc5a04f in H5G__link_iterate_table "
        "(/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x13c71d)\n"
        "    #1 0x55cc6a6315d9 in check_shapes /w/analysis/results.c:1055:9\n"));
    /* Our overflow, through memcpy's interceptor: ours. */
    cr_expect(fuzz_report_blames_us(
        "==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000018\n"
        "WRITE of size 16 at 0x602000000018 thread T0\n"
        "    #0 0x55cc6a6e0e12 in __asan_memcpy (/w/build-fuzzer/fuzzers/results+0x280e12)\n"
        "    #1 0x55cc6a639bad in copy_column /w/analysis/results.c:400:5\n"
        "    #2 0x7f970ab3990a  (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x13990a)\n"
        "\n"
        "0x602000000018 is located 0 bytes to the right of 8-byte region\n"
        "allocated by thread T0 here:\n"
        "    #0 0x55cc6a6e1fa2 in malloc (/w/build-fuzzer/fuzzers/results+0x281fa2)\n"));
    /* Freed by libhdf5 but the use is ours: the error's own stack decides, not "freed by". */
    cr_expect(fuzz_report_blames_us(
        "==9==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000018\n"
        "    #0 0x55cc6a639bad in read_summary /w/analysis/results.c:700:9\n"
        "\n"
        "freed by thread T0 here:\n"
        "    #0 0x7f970ab3990a  (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x13990a)\n"));
    /* libhdf5 aborting on its own assertion, through libc: libhdf5's. */
    cr_expect_not(fuzz_report_blames_us(
        "    #0 0x7f816dc45249 in raise (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f)\n"
        "    #1 0x7f816dc45304 in abort (/lib/x86_64-linux-gnu/libc.so.6+0x2153d)\n"
        "    #2 0x7f970ab3990a in H5FL_reg_free "
        "(/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x13990a)\n"));
    /* UBSan only ever reports our code (libhdf5 is not instrumented). */
    cr_expect(fuzz_report_blames_us(
        "analysis/results.c:55:3: runtime error: signed integer overflow: 2147483647 + 1\n"));
    /* No report at all (a plain signal): no evidence against us. */
    cr_expect_not(fuzz_report_blames_us(""));
}

/* The file answer-* that a harness saved in dir, into path (n bytes); false when none. */
static bool saved_answer(const char *dir, char *path, size_t n)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    path[0] = '\0';
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "answer-", 7))
            snprintf(path, n, "%s/%s", dir, e->d_name);
    closedir(d);
    return path[0] != '\0';
}

/*
 * The results harness reads a file as tidesim does, in a child that sends its answer, and
 * decodes that; with TIDESIM_FUZZ_SAVE_ANSWERS it saves the answer, the seed of the
 * results_answer harness, which decodes the answer whole and refuses it cut.
 */
Test(fuzz_replay, the_results_harness_saves_the_answer_results_answer_decodes)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/tiny.yaml", pr.a, "");
    size_t n;
    uint8_t *file = (uint8_t *)atest_slurp(pr.a, &n);
    char dir[128], msg[1024];
    snprintf(dir, sizeof(dir), "%s/answers", pr.dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(setenv("TIDESIM_FUZZ_SAVE_ANSWERS", dir, 1), 0);
    cr_expect_eq(verdict("results", file, n, msg, sizeof(msg)), FUZZ_ACCEPTED, "%s", msg);
    unsetenv("TIDESIM_FUZZ_SAVE_ANSWERS");
    char path[512];
    cr_assert(saved_answer(dir, path, sizeof(path)), "the results harness saved no answer in %s",
              dir);
    size_t alen;
    uint8_t *ans = (uint8_t *)atest_slurp(path, &alen);
    cr_expect_eq(verdict("results_answer", ans, alen, msg, sizeof(msg)), FUZZ_ACCEPTED, "%s", msg);
    cr_expect_eq(verdict("results_answer", ans, alen - 1, msg, sizeof(msg)), FUZZ_REJECTED);
    cr_expect(strstr(msg, "fuzz.h5: the process that read it sent a damaged answer"), "%s", msg);
    cr_expect_eq(verdict("results_answer", file, n, msg, sizeof(msg)), FUZZ_REJECTED,
                 "a results file is no answer");
    free(ans);
    free(file);
    atest_rmdir(pr.dir);
}

/*
 * The index_answer harness: with TIDESIM_FUZZ_SAVE_ANSWERS, an index (a sweep's, made here)
 * is read for the answer its child would send, which is saved (fuzz/seeds.sh makes the
 * harness's seeds so). That answer is read whole (report, plan, points chosen), refused cut
 * or with one point too many claimed, and the index itself is no answer; every refusal
 * names the file.
 */
Test(fuzz_replay, the_index_harness_saves_an_index_answer_and_decodes_it, .timeout = 120)
{
    char dir[64], idx[128], adir[160], path[512], msg[1024];
    atest_tmpdir(dir, sizeof(dir));
    atest_small_sweep(dir, idx, sizeof(idx));
    size_t n, alen;
    uint8_t *file = (uint8_t *)atest_slurp(idx, &n);
    snprintf(adir, sizeof(adir), "%s/answers", dir);
    cr_assert_eq(mkdir(adir, 0700), 0);
    cr_assert_eq(setenv("TIDESIM_FUZZ_SAVE_ANSWERS", adir, 1), 0);
    cr_expect_eq(verdict("index_answer", file, n, msg, sizeof(msg)), FUZZ_REJECTED, "%s", msg);
    unsetenv("TIDESIM_FUZZ_SAVE_ANSWERS");
    cr_assert(saved_answer(adir, path, sizeof(path)), "the index harness saved no answer");
    uint8_t *ans = (uint8_t *)atest_slurp(path, &alen);
    cr_expect_eq(verdict("index_answer", ans, alen, msg, sizeof(msg)), FUZZ_ACCEPTED, "%s", msg);
    cr_expect_eq(verdict("index_answer", ans, alen - 1, msg, sizeof(msg)), FUZZ_REJECTED);
    cr_expect(strstr(msg, ": the process that read it sent a damaged answer"), "%s", msg);
    /* The point count (a double after the 31-byte mark) says 5 where the table has 4 rows. */
    double points;
    memcpy(&points, ans + 31, sizeof(points));
    cr_expect_eq(points, 4);
    points = 5;
    memcpy(ans + 31, &points, sizeof(points));
    cr_expect_eq(verdict("index_answer", ans, alen, msg, sizeof(msg)), FUZZ_REJECTED);
    cr_expect(strstr(msg, ": the process that read it sent a damaged answer"), "%s", msg);
    cr_expect_eq(verdict("index_answer", file, n, msg, sizeof(msg)), FUZZ_REJECTED,
                 "an index file is no answer");
    free(ans);
    free(file);
    atest_rmdir(dir);
}

/*
 * The results harness reads its inputs in one worker process, input after input, where
 * tidesim reads each file in a fresh child (h5_rd_preflight): the worker must read each
 * input as that child would, whatever came before. A valid file comes after each of the
 * others here: a file on which libhdf5 1.10 itself crashes (signal 11: the worker dies and
 * a new one reads on), the two on which it failed under AddressSanitizer, junk, the file
 * cut in half, and the file with one byte changed in turn at places through it (refused,
 * or accepted with another answer). Every verdict, message and answer must be the fresh
 * child's, and a worker must have read several inputs.
 */
Test(fuzz_replay, the_results_worker_reads_each_input_as_a_fresh_child_does, .timeout = 120)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/tiny.yaml", pr.a, "");
    size_t n;
    uint8_t *file = (uint8_t *)atest_slurp(pr.a, &n);
    static const char *const bad[] = {
        REPRO_DIR "/results/hdf5crash-1412921dc261434a1dfce79fbcbd4c78e2065474",
        REPRO_DIR "/results/crash-3becb7440fc5ac78c7bf950d59bd9c6807c6148c",
        REPRO_DIR "/results/crash-44d8fb0d6c4db8b6a7a4f2351f7b3ce86a08e6f5",
    };
    enum { NBAD = 3, FLIPS = 24, MAX = 2 * (NBAD + FLIPS + 3) + 1 };
    const uint8_t *in[MAX];
    size_t len[MAX], k = 0;
    uint8_t *kept[NBAD + FLIPS];
#define PUSH(p, m)      \
    do {                \
        in[k] = (p);    \
        len[k++] = (m); \
        in[k] = file;   \
        len[k++] = n;   \
    } while (0)
    in[k] = file;
    len[k++] = n;
    for (int i = 0; i < NBAD; i++) {
        size_t m;
        kept[i] = slurp(bad[i], &m);
        PUSH(kept[i], m);
    }
    PUSH((const uint8_t *)"not an HDF5 file", 16);
    PUSH(file, n / 2);
    for (int i = 0; i < FLIPS; i++) {
        uint8_t *f = kept[NBAD + i] = malloc(n);
        cr_assert_not_null(f);
        memcpy(f, file, n);
        f[(size_t)(i + 1) * n / (FLIPS + 2)] ^= 0x5a;
        PUSH(f, n);
    }
    PUSH(kept[0], 163062); /* the crash again, last */
#undef PUSH
    char msg[1024];
    size_t workers;
    size_t at = fuzz_results_worker_check(in, len, k, &workers, msg, sizeof(msg));
    cr_expect_eq(at, k, "%s", msg);
    cr_expect_geq(workers, 3, "each crash of libhdf5 ends a worker: %zu workers", workers);
    cr_expect_lt(workers, k / 2, "a worker reads many inputs: %zu workers for %zu inputs", workers,
                 k);
    for (int i = 0; i < NBAD + FLIPS; i++)
        free(kept[i]);
    free(file);
    atest_rmdir(pr.dir);
}
