/*
 * test_llm_gates.c — an LLM service's figures through the analysis tools: `tidesim check`'s
 * --max-ttft-p99 and --max-tpot-p99 gates (tried just above and below the figure, on a single
 * and a replicated run), their refusal on a file without LLM services, the report's LLM table.
 *
 * Reference: the worst-service figure is read back from each service group of the file by
 * hand (h5test) and must be the largest LLM service's p99; the replicated gate judges the mean
 * of the replications' figures.
 */
#include <math.h>

#include "tests/analysistest.h"
#include "tests/h5test.h"

#define LLM   "tests/data/scenarios/llm_small.yaml"
#define SMALL "tests/data/scenarios/small.yaml"

static int check(const char *file, const char *args, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s check %s %s", atest_bin(), file, args);
    return atest_run(cmd, out);
}

Test(llm_gates, ttft_and_tpot_gates)
{
    char dir[64], f[128], r2[128], args[256], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/one.h5", dir);
    snprintf(r2, sizeof(r2), "%s/r2.h5", dir);
    atest_sim(LLM, f, "");
    atest_sim(LLM, r2, "--replications 2");

    double ttft = h5test_file_f64(f, "/services/chat", "ttft_p99_ms");
    double tpot = h5test_file_f64(f, "/services/chat", "tpot_p99_ms");
    cr_expect_eq(h5test_file_f64(f, "/summary", "ttft_p99_ms_worst_service"), ttft);
    cr_expect_eq(h5test_file_f64(f, "/summary", "tpot_p99_ms_worst_service"), tpot);
    /* MLPerf Llama-3.1-8B server bounds: TTFT 2 s, TPOT 100 ms. */
    cr_expect_eq(h5test_file_f64(f, "/services/chat", "ttft_slo_ms"), 2000);
    cr_expect_eq(h5test_file_f64(f, "/services/chat", "tpot_slo_ms"), 100);
    cr_assert(ttft > 10 && tpot > 1, "%g %g", ttft, tpot);

    snprintf(args, sizeof(args), "--max-ttft-p99 %.6g --max-tpot-p99 %.6g", ttft * 1.001,
             tpot * 1.001);
    cr_expect_eq(check(f, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--max-ttft-p99 %.6g", ttft * 0.999);
    cr_expect_eq(check(f, args, &out), 1, "%s", out);
    cr_expect(strstr(out, "FAIL max-ttft-p99: ttft_p99_ms_worst_service = ") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--max-tpot-p99 %.6g", tpot * 0.999);
    cr_expect_eq(check(f, args, &out), 1, "%s", out);
    cr_expect(strstr(out, "FAIL max-tpot-p99: tpot_p99_ms_worst_service = ") != NULL, "%s", out);
    free(out);

    /* Replicated: the mean of the two replications' figures. */
    double m = (h5test_file_f64(r2, "/rep0000/summary", "ttft_p99_ms_worst_service") +
                h5test_file_f64(r2, "/rep0001/summary", "ttft_p99_ms_worst_service")) /
               2;
    snprintf(args, sizeof(args), "--max-ttft-p99 %.6g", m * 1.001);
    cr_expect_eq(check(r2, args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--max-ttft-p99 %.6g", m * 0.999);
    cr_expect_eq(check(r2, args, &out), 1, "%s", out);
    free(out);

    /* Usage and a file without LLM services. */
    cr_expect_eq(check(f, "--max-tpot-p99 -3", &out), 2, "%s", out);
    cr_expect(strstr(out, "--max-tpot-p99 needs a non-negative number of ms") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "%s/small.h5", dir);
    atest_sim(SMALL, args, "");
    cr_expect_eq(check(args, "--max-ttft-p99 1000", &out), 1, "%s", out);
    cr_expect(strstr(out, "ttft_p99_ms_worst_service is not recorded") != NULL, "%s", out);
    free(out);

    /* The report's LLM table names the service and its targets. */
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, &out), 0);
    cr_expect(strstr(out, "LLM services") && strstr(out, "TTFT <= 2000, TPOT <= 100 ms"), "%s",
              out);
    free(out);
    atest_rmdir(dir);
}
