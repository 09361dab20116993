/*
 * test_scenario_limits.c — a scenario's training load is bounded up front (issue 14,
 * finding 9): `backlog` or `per_hour` at 1e7 used to grow the trainer to 3.1 GB and die with
 * a bare "tidesim: "; now the loader refuses at the key's line:col, naming the limit. And a
 * job log whose value would have become a 0-GPU job (finding 4) stops the run with the
 * trace's file:line message under `kai` instead of crashing it.
 */
#include <stdio.h>
#include <string.h>

#include "sim/train.h"
#include "tests/simtest.h"

/* A 1-node scenario with the given training block (`training:` included) after it. */
static void scenario_text(char *buf, size_t n, const char *duration, const char *training)
{
    snprintf(buf, n,
             "name: limits\n"
             "duration: %s\n"
             "cluster: { nodes: 1, gpus_per_node: 8 }\n"
             "%s"
             "policy: { name: dedicated, inference_gpus: 0 }\n",
             duration, training);
}

static void expect_refused(const char *yaml, const char *msg)
{
    struct scenario sc;
    struct conf_err err = {{0}};
    cr_assert_lt(scenario_load_string(&sc, "s.yaml", yaml, &err), 0, "accepted:\n%s", yaml);
    cr_assert_str_eq(err.msg, msg);
}

static void expect_loads(const char *yaml)
{
    struct scenario sc;
    struct conf_err err = {{0}};
    cr_assert_eq(scenario_load_string(&sc, "s.yaml", yaml, &err), 0, "%s", err.msg);
    scenario_release(&sc);
}

Test(scenario_limits, backlog_beyond_a_million_jobs_refused_at_its_key)
{
    char y[1024];
    /* Line 4 is "training:", line 5 "  backlog: ...": the value starts at column 12. */
    scenario_text(y, sizeof(y), "1h",
                  "training:\n"
                  "  backlog: 10000000\n"
                  "  jobs: { synthetic: { per_hour: 1 } }\n");
    expect_refused(y, "s.yaml:5:12: 'backlog': expected an integer in [0, 1000000], got "
                      "'10000000'");
    /* The limit itself loads (nothing is allocated per job at load time). */
    scenario_text(y, sizeof(y), "1h",
                  "training:\n"
                  "  backlog: 1000000\n"
                  "  jobs: { synthetic: { per_hour: 0 } }\n");
    expect_loads(y);
}

Test(scenario_limits, per_hour_times_duration_bounded)
{
    char y[1024];
    /* 1e7/h for one hour: 10,000,000 jobs. "  jobs: { synthetic: { per_hour: " puts the
     * value of per_hour at column 34 of line 5. */
    scenario_text(y, sizeof(y), "1h",
                  "training:\n"
                  "  jobs: { synthetic: { per_hour: 1e7 } }\n");
    expect_refused(y, "s.yaml:5:34: 'per_hour': expected at most 1000000 training jobs per run "
                      "(backlog + per_hour x duration; each is kept in memory, about 0.5 kB), "
                      "got 0 + 1e+07/h x 1 h = 10000000");
    /* A modest rate over a long run adds up the same way: 200/h x 7 days = 33,600, fine;
     * 200/h over 365 days = 1,752,000: too many. */
    scenario_text(y, sizeof(y), "7d",
                  "training:\n"
                  "  jobs: { synthetic: { per_hour: 200 } }\n");
    expect_loads(y);
    scenario_text(y, sizeof(y), "365d",
                  "training:\n"
                  "  jobs: { synthetic: { per_hour: 200 } }\n");
    expect_refused(y, "s.yaml:5:34: 'per_hour': expected at most 1000000 training jobs per run "
                      "(backlog + per_hour x duration; each is kept in memory, about 0.5 kB), "
                      "got 0 + 200/h x 8760 h = 1752000");
    /* The default rate (6/h) with a large backlog: the backlog is named. */
    scenario_text(y, sizeof(y), "1h",
                  "training:\n"
                  "  backlog: 999999\n"
                  "  jobs: { synthetic: { duration: { lognormal: { median: 1h } } } }\n");
    expect_refused(y, "s.yaml:5:12: 'backlog': expected at most 1000000 training jobs per run "
                      "(backlog + per_hour x duration; each is kept in memory, about 0.5 kB), "
                      "got 999999 + 6/h x 1 h = 1000005");
}

Test(scenario_limits, trainer_refuses_jobs_it_cannot_hold)
{
    struct scenario sc;
    struct sim s;
    char y[1024];
    scenario_text(y, sizeof(y), "1h",
                  "training:\n"
                  "  jobs: { synthetic: { per_hour: 0 } }\n");
    simtest_build(&sc, &s, y, 1);
    struct job_spec j = {.gpus = 1, .gpu_fraction = 1.0, .work = SIM_HOUR};
    cr_expect_geq(trainer_submit(&s.tr, &j), 0);
    j.gpus = 0; /* what a 1e22 % PAI plan_gpu became (a double to uint32 cast) */
    cr_expect_eq(trainer_submit(&s.tr, &j), -EINVAL);
    j.gpus = JOB_MAX_GPUS + 1;
    cr_expect_eq(trainer_submit(&s.tr, &j), -EINVAL);
    j.gpus = 1;
    j.work = SIM_TIME_LIMIT + 1; /* a Helios duration of 9e15 s wrapped to negative work */
    cr_expect_eq(trainer_submit(&s.tr, &j), -EINVAL);
    j.work = 0;
    cr_expect_eq(trainer_submit(&s.tr, &j), -EINVAL);
    cr_expect_eq(s.tr.njobs, 1, "only the good job is held");
    /* Starting a queued job on no cards is refused, not dereferenced. */
    cr_expect_eq(trainer_start(&s.tr, 0, NULL), -EINVAL);
    simtest_free(&sc, &s);
}

Test(scenario_limits, huge_pai_gpu_request_stops_a_kai_run_with_the_row)
{
    /* Before: row 2's plan_gpu 1e22 became a 0-GPU job and kai crashed starting it. */
    const char *y = "name: pai-kai\n"
                    "duration: 4h\n"
                    "cluster: { nodes: 1, gpus_per_node: 8 }\n"
                    "training:\n"
                    "  jobs: { trace: { path: tests/data/pai_huge_plan_gpu.csv, format: pai } }\n"
                    "policy: { name: kai }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, y, 1);
    int rc = sim_run(&s, NULL);
    cr_expect_neq(rc, 0, "the run ended cleanly on a bad row");
    cr_expect(strstr(s.err, "tests/data/pai_huge_plan_gpu.csv:2: column 'plan_gpu': expected a "
                            "GPU request in percent of a GPU, 0..6553600, got '1e22'"),
              "%s", s.err);
    for (uint32_t i = 0; i < s.tr.njobs; i++)
        cr_expect_geq(s.tr.jobs[i].spec.gpus, 1, "job %u has no GPU", i);
    simtest_free(&sc, &s);
}
