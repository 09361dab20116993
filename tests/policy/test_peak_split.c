/*
 * test_peak_split.c — a fixed inference pool is split by each service's peak
 * load, read from its trace when it replays one (it was read from the
 * synthetic profile only: a trace-driven service got a single replica).
 *
 * By hand: a counts trace of 600, 6,000 and 1,200 requests in three 60 s
 * intervals peaks at 100 req/s in its second minute (counts are spread within
 * their interval, so the 60 s metrics interval holds them exactly); a second,
 * synthetic service runs at a constant 100 req/s. dedicated's 11 cards split
 * 50/50: round(5.5) = 6 to the first service, the 5 left to the second.
 */
#include <stdio.h>

#include "tests/analysistest.h"
#include "tests/simtest.h"

Test(peak_split, dedicated_splits_its_pool_by_the_traces_peak)
{
    char dir[64], csv[128], yaml[2048];
    atest_tmpdir(dir, sizeof(dir));
    snprintf(csv, sizeof(csv), "%s/counts.csv", dir);
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fputs("t,n\n0,600\n60,6000\n120,1200\n", f);
    fclose(f);
    snprintf(yaml, sizeof(yaml),
             "name: peak-split\n"
             "duration: 3m\n"
             "sample_interval: 60s\n"
             "cluster: { nodes: 2, gpus_per_node: 8 }\n"
             "services:\n"
             "  - name: traced\n"
             "    arrivals: { trace: { format: counts, path: %s, time_column: t, "
             "count_column: n, interval: 60s } }\n"
             "  - name: steady\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 100 } }\n"
             "policy: { name: dedicated, inference_gpus: 11 }\n",
             csv);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    cr_expect_float_eq(s.peak_rate[0], 100.0, 1e-9, "trace peak %.3f", s.peak_rate[0]);
    cr_expect_float_eq(s.first_rate[0], 10.0, 1e-9, "first minute %.3f", s.first_rate[0]);
    cr_expect_float_eq(s.peak_rate[1], 100.0, 1e-9);
    cr_expect_eq(service_replicas(&s.svcs[0]), 6u, "traced: %u", service_replicas(&s.svcs[0]));
    cr_expect_eq(service_replicas(&s.svcs[1]), 5u, "steady: %u", service_replicas(&s.svcs[1]));
    simtest_free(&sc, &s);
    atest_rmdir(dir);
}
