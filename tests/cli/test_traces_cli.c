/* test_traces_cli.c — `tidesim traces convert` round trips and exit codes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim/cli/cmd_traces.h"
#include "traces/arrivals.h"
#include "traces/jobs.h"
#include "traces/snapshot.h"

static int run(int argc, const char **argv)
{
    return cli_traces(argc, (char **)argv);
}

Test(traces_cli, convert_azure_round_trip)
{
    char out[] = "/tmp/tidesim-conv-XXXXXX";
    int fd = mkstemp(out);
    cr_assert(fd >= 0);
    close(fd);
    const char *argv[] = {
        "traces",   "convert", "traces/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
        "--format", "azure",   "-o",
        out};
    cr_assert_eq(run(7, argv), 0);
    struct trace_err e;
    struct arrival_csv_map m = {"time_s", TFIELD_SEC, "in_tokens", "out_tokens"};
    struct arrival_source *s = arrivals_csv_create(out, &m, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct arrival a;
    uint64_t n = 0, in = 0, outt = 0;
    sim_time first = -1;
    while (arrival_source_next(s, &a, &e) == 0) {
        if (first < 0)
            first = a.t;
        n++;
        in += a.in_tokens;
        outt += a.out_tokens;
    }
    /* Same references as test_traces_arrivals (awk over the original file). */
    cr_assert_eq(n, 19366);
    cr_assert_eq(in, 22361870);
    cr_assert_eq(outt, 4088665);
    cr_assert_eq(first, (sim_time)((18 * 3600 + 15 * 60 + 46) * SIM_SEC + 680590));
    arrival_source_destroy(s);
    unlink(out);
}

Test(traces_cli, convert_helios_round_trip_keeps_outcomes)
{
    char out[] = "/tmp/tidesim-conv-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    const char *argv[] = {"traces",   "convert", "tests/data/helios_cluster_log.csv", "-o", out,
                          "--format", "helios"};
    cr_assert_eq(run(7, argv), 0);
    struct trace_err e;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    struct job_source *s = jobs_csv_create(out, &m, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct job_spec j;
    int outcomes[4] = {0};
    uint32_t gpus = 0;
    while (job_source_next(s, &j, &e) == 0) {
        outcomes[j.outcome]++;
        gpus += j.gpus;
    }
    cr_assert_eq(outcomes[JOB_LOG_COMPLETED], 1);
    cr_assert_eq(outcomes[JOB_LOG_FAILED], 3);
    cr_assert_eq(outcomes[JOB_LOG_CANCELLED], 1);
    cr_assert_eq(gpus, 1 + 8 + 16 + 4 + 1);
    job_source_destroy(s);
    unlink(out);
}

Test(traces_cli, exit_codes)
{
    const char *usage1[] = {"traces", "frobnicate", "x"};
    cr_assert_eq(run(3, usage1), 2);
    const char *usage2[] = {"traces", "convert", "tests/data/counts.csv"};
    cr_assert_eq(run(3, usage2), 2);
    const char *bad[] = {"traces", "inspect", "tests/data/azure_backwards.csv"};
    cr_assert_eq(run(3, bad), 1);
    const char *skip[] = {"traces", "inspect", "tests/data/azure_backwards.csv", "--on-bad-row",
                          "skip"};
    cr_assert_eq(run(5, skip), 0);
    const char *missing[] = {"traces", "inspect", "tests/data/nope.csv", "--format", "azure"};
    cr_assert_eq(run(5, missing), 1);
    const char *badopt[] = {"traces", "inspect", "x.csv", "--on-bad-row", "maybe"};
    cr_assert_eq(run(5, badopt), 2);
}

/*
 * convert --cut: a six-job log cut at 2,600 s with a 1,800 s checkpoint interval.
 * By hand (a job runs [submit, submit + duration)):
 *   1: [0, 5000), 8 GPUs, team-a   -> running: started 2600, remaining 2400, age 2600 mod 1800 =
 * 800 2: [1000, 2000)                -> over before the cut 3: [2000, 5000), 2 GPUs        ->
 * running: started 600, remaining 2400, age 600 4: [2500, 2600), half a GPU    -> ends at the cut:
 * not running 5: submitted 3000 -> rest at 400; 6: submitted 4000 -> rest at 1400 The snapshot is
 * read back with the simulator's own reader (traces/snapshot.h).
 */
Test(traces_cli, convert_cut_writes_the_running_jobs_and_the_rest)
{
    char dir[] = "/tmp/tidesim-cut-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char in[128], snap[128], rest[128];
    snprintf(in, sizeof(in), "%s/log.csv", dir);
    snprintf(snap, sizeof(snap), "%s/snap.csv", dir);
    snprintf(rest, sizeof(rest), "%s/rest.csv", dir);
    FILE *f = fopen(in, "w");
    cr_assert_not_null(f);
    fputs("id,submit_s,duration_s,gpus,gpu_fraction,priority,queue\n"
          "1,0,5000,8,1,0,team-a\n"
          "2,1000,1000,1,1,2,team-b\n"
          "3,2000,3000,2,1,0,\n"
          "4,2500,100,1,0.5,0,\n"
          "5,3000,600,4,1,1,team-a\n"
          "6,4000,1000,1,1,0,team-b\n",
          f);
    fclose(f);
    const char *argv[] = {"traces", "convert", in,   "--cut", "2600", "--checkpoint-interval",
                          "1800",   "--rest",  rest, "-o",    snap};
    cr_assert_eq(run(11, argv), 0);
    const char *names[] = {"default"};
    const uint32_t first[] = {0}, nodes[] = {2}, per[] = {8};
    struct snap_geom g = {1, names, first, nodes, per};
    struct snap_job *v = NULL;
    uint32_t n = 0;
    struct trace_err e;
    cr_assert_eq(snapshot_load(snap, &g, &v, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 2u);
    cr_expect_eq(v[0].id, 1u);
    cr_expect_str_eq(v[0].queue, "team-a");
    cr_expect_eq(v[0].gpus, 8u);
    cr_expect_eq(v[0].node, -1);
    cr_expect_eq(v[0].started, 2600 * SIM_SEC);
    cr_expect_eq(v[0].remaining, 2400 * SIM_SEC);
    cr_expect_eq(v[0].ckpt_age, 800 * SIM_SEC);
    cr_expect_eq(v[1].id, 3u);
    cr_expect_eq(v[1].gpus, 2u);
    cr_expect_eq(v[1].started, 600 * SIM_SEC);
    cr_expect_eq(v[1].remaining, 2400 * SIM_SEC);
    cr_expect_eq(v[1].ckpt_age, 600 * SIM_SEC);
    free(v);
    struct job_csv_map m;
    job_csv_map_generic(&m);
    struct job_source *s = jobs_csv_create(rest, &m, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct job_spec j;
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_expect_eq(j.id, 5u);
    cr_expect_eq(j.submit, 400 * SIM_SEC);
    cr_expect_eq(j.work, 600 * SIM_SEC);
    cr_expect_str_eq(j.queue, "team-a");
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_expect_eq(j.id, 6u);
    cr_expect_eq(j.submit, 1400 * SIM_SEC);
    cr_expect_eq(job_source_next(s, &j, &e), 1);
    job_source_destroy(s);
    /* No checkpoints (--checkpoint-interval 0): the age is the whole run so far. */
    const char *argv0[] = {"traces", "convert", in,  "--cut", "2600", "--checkpoint-interval",
                           "0",      "-o",      snap};
    unlink(snap);
    cr_assert_eq(run(9, argv0), 0);
    cr_assert_eq(snapshot_load(snap, &g, &v, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 2u);
    cr_expect_eq(v[0].ckpt_age, 2600 * SIM_SEC);
    cr_expect_eq(v[1].ckpt_age, 600 * SIM_SEC);
    free(v);
    /* --rest without --cut is a usage error. */
    const char *bad[] = {"traces", "convert", in, "--rest", rest, "-o", snap};
    cr_expect_eq(run(7, bad), 2);
    unlink(in);
    unlink(snap);
    unlink(rest);
    rmdir(dir);
}
