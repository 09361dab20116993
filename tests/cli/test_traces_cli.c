/* test_traces_cli.c — `tidesim traces convert` round trips and exit codes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "sim/cli/cmd_traces.h"
#include "traces/arrivals.h"
#include "traces/jobs.h"

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
