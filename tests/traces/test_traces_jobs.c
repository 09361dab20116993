/* test_traces_jobs.c — training job log adapters: openb sample, hand-made Helios/PAI/generic
 * fixtures. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "traces/jobs.h"

#define OPENB "traces/data/alibaba-gpu-v2023-openb/openb_pod_list_default.csv"

/*
 * Reference counts from awk at test-writing time:
 *   awk -F, 'NR>1{n++; if($4==0)cpu++; else if($8=="Pending"){pend++; if($4==1&&$5<1000)fp++}
 *            else {sz[$4]++; if($4==1&&$5<1000)fr++; if($7=="LS")ls++}; if($4==1&&$5<1000)fall++}
 *            END{print n, cpu, pend, fp, fr, fall, ls; for(k in sz) print k, sz[k]}' OPENB
 *   -> 8152 1088 861 505 2573 3078 3590 / sizes of pods that ran: 1:6129 2:15 4:15 8:44
 * (file totals: num_gpu 1:6989 2:16 4:15 8:44, 0:1088; 3,078 fractional single-GPU pods).
 */
Test(traces_jobs, openb_pod_list_counts)
{
    struct trace_err e;
    struct job_source *s = jobs_openb_create(OPENB, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct job_spec j;
    uint64_t by_size[9] = {0}, frac = 0, services = 0, n = 0;
    sim_time last = 0;
    int rc;
    while ((rc = job_source_next(s, &j, &e)) == 0) {
        cr_assert(j.submit >= last);
        last = j.submit;
        cr_assert(j.work > 0);
        cr_assert(j.gpus >= 1 && j.gpus <= 8);
        by_size[j.gpus]++;
        if (j.gpu_fraction < 1.0) {
            cr_assert_eq(j.gpus, 1);
            frac++;
        }
        services += j.outcome == JOB_LOG_SERVICE;
        n++;
    }
    cr_assert_eq(rc, 1, "%s", e.msg);
    struct job_stats st;
    jobs_stats(s, &st);
    cr_assert_eq(st.rows, 8152);
    cr_assert_eq(st.cpu_only, 1088);
    cr_assert_eq(st.never_ran, 861);
    cr_assert_eq(n, 8152 - 1088 - 861);
    cr_assert_eq(by_size[1], 6129);
    cr_assert_eq(by_size[2], 15);
    cr_assert_eq(by_size[4], 15);
    cr_assert_eq(by_size[8], 44);
    cr_assert_eq(frac, 2573);
    cr_assert_eq(frac + 505, 3078); /* 505 fractional pods stayed Pending */
    cr_assert_eq(services, 3590);
    job_source_destroy(s);
}

Test(traces_jobs, openb_first_pods)
{
    struct trace_err e;
    struct job_source *s = jobs_openb_create(OPENB, NULL, &e);
    struct job_spec j;
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    /* openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0 */
    cr_assert_eq(j.id, 0);
    cr_assert_eq(j.submit, 0);
    cr_assert_eq(j.work, 12537496 * SIM_SEC);
    cr_assert_eq(j.outcome, JOB_LOG_SERVICE);
    cr_assert_str_eq(j.queue, "LS");
    /* openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061 */
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.id, 1);
    cr_assert_float_eq(j.gpu_fraction, 0.46, 1e-12);
    cr_assert_eq(j.work, (12902960 - 427061) * SIM_SEC);
    job_source_destroy(s);
}

Test(traces_jobs, helios_outcomes_and_filters)
{
    struct trace_err e;
    struct job_source *s = jobs_helios_create("tests/data/helios_cluster_log.csv", NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    static const struct {
        uint64_t id;
        uint32_t gpus;
        sim_time submit, work;
        enum job_log_outcome out;
    } want[] = {
        {1425511, 1, (18 * 3600 + 41 * 60 + 1) * SIM_SEC, 36848 * SIM_SEC, JOB_LOG_COMPLETED},
        {1425513, 8, (18 * 3600 + 45 * 60 + 30) * SIM_SEC, 600 * SIM_SEC, JOB_LOG_FAILED},
        {1425514, 16, 19 * SIM_HOUR, 7200 * SIM_SEC, JOB_LOG_CANCELLED},
        {1425516, 4, (19 * 3600 + 6 * 60) * SIM_SEC, 86400 * SIM_SEC, JOB_LOG_FAILED},
        {1425517, 1, (19 * 3600 + 7 * 60) * SIM_SEC, 600 * SIM_SEC, JOB_LOG_FAILED},
    };
    struct job_spec j;
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(job_source_next(s, &j, &e), 0, "%s", e.msg);
        cr_assert_eq(j.id, want[i].id);
        cr_assert_eq(j.gpus, want[i].gpus);
        cr_assert_eq(j.submit, want[i].submit);
        cr_assert_eq(j.work, want[i].work);
        cr_assert_eq(j.outcome, want[i].out);
    }
    cr_assert_str_eq(j.queue, "vcWoR");
    cr_assert_eq(job_source_next(s, &j, &e), 1);
    struct job_stats st;
    jobs_stats(s, &st);
    cr_assert_eq(st.rows, 7);
    cr_assert_eq(st.cpu_only, 1);
    cr_assert_eq(st.never_ran, 1);
    job_source_destroy(s);
}

Test(traces_jobs, helios_time_zone_and_offset)
{
    struct trace_err e;
    struct job_trace_opts o;
    job_trace_opts_init(&o);
    o.tz_s = 8 * 3600; /* stamps in +08:00, origin 2020-06-09 18:00 local */
    o.origin = "2020-06-09 18:00:00";
    o.offset = SIM_HOUR;
    struct job_source *s = jobs_helios_create("tests/data/helios_cluster_log.csv", &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct job_spec j;
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.submit, SIM_HOUR + (41 * 60 + 1) * SIM_SEC);
    job_source_destroy(s);
}

Test(traces_jobs, pai_task_table_headerless)
{
    struct trace_err e;
    struct job_source *s = jobs_pai_task_create("tests/data/pai_task_table.csv", NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct job_spec j;
    cr_assert_eq(job_source_next(s, &j, &e), 0, "%s", e.msg);
    cr_assert_eq(j.gpus, 1);
    cr_assert_float_eq(j.gpu_fraction, 0.5, 1e-12); /* plan_gpu 50 = half a GPU */
    cr_assert_eq(j.submit, 5000 * SIM_SEC);
    cr_assert_eq(j.work, 3600 * SIM_SEC);
    cr_assert_eq(j.outcome, JOB_LOG_COMPLETED);
    cr_assert_str_eq(j.queue, "MISC");
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.gpus, 4); /* 4 instances x 100% */
    cr_assert_eq(j.submit, 5100 * SIM_SEC + 500 * SIM_MS);
    cr_assert_eq(j.work, 300 * SIM_SEC);
    cr_assert_eq(j.outcome, JOB_LOG_FAILED);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.gpus, 2); /* 8 instances x 25% */
    cr_assert_float_eq(j.gpu_fraction, 1.0, 0);
    cr_assert_eq(job_source_next(s, &j, &e), 1);
    struct job_stats st;
    jobs_stats(s, &st);
    cr_assert_eq(st.cpu_only, 1);
    cr_assert_eq(st.never_ran, 1);
    job_source_destroy(s);
}

Test(traces_jobs, generic_csv_fields)
{
    struct trace_err e;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    struct job_source *s = jobs_csv_create("tests/data/jobs_generic.csv", &m, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct job_spec j;
    cr_assert_eq(job_source_next(s, &j, &e), 0, "%s", e.msg);
    cr_assert_eq(j.gpus, 8);
    cr_assert_float_eq(j.params_b, 7.0, 0);
    cr_assert_str_eq(j.queue, "train");
    cr_assert_eq(j.work, SIM_HOUR);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.submit, 10500 * SIM_MS);
    cr_assert_float_eq(j.gpu_fraction, 0.25, 0);
    cr_assert_eq(j.priority, 1);
    cr_assert_eq(j.outcome, JOB_LOG_FAILED);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_str_eq(j.mig_profile, "3g.40gb");
    cr_assert_eq(j.outcome, JOB_LOG_CANCELLED);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.gpus, 1);
    cr_assert_float_eq(j.gpu_fraction, 1.0, 0);
    cr_assert_eq(j.outcome, JOB_LOG_COMPLETED);
    cr_assert_eq(job_source_next(s, &j, &e), 1);
    job_source_destroy(s);
}

Test(traces_jobs, reorder_window)
{
    struct trace_err e;
    struct job_trace_opts o;
    job_trace_opts_init(&o);
    struct job_spec j;
    const char *p = "tests/data/helios_unsorted.csv";
    struct job_source *s = jobs_helios_create(p, &o, &e);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_lt(job_source_next(s, &j, &e), 0);
    cr_assert_str_eq(e.msg, "tests/data/helios_unsorted.csv:3: column 'submit_time': submit time "
                            "goes backwards ('2020-06-09 18:41:03' after '2020-06-09 18:41:05' "
                            "at line 2)");
    job_source_destroy(s);

    o.reorder_window = 1;
    s = jobs_helios_create(p, &o, &e);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.id, 2);
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(j.id, 1);
    cr_assert_lt(job_source_next(s, &j, &e), 0);
    cr_assert_str_eq(e.msg, "tests/data/helios_unsorted.csv:5: column 'submit_time': submit time "
                            "goes backwards ('2020-06-09 18:40:00' after '2020-06-09 18:41:05' "
                            "at line 2)");
    job_source_destroy(s);

    o.reorder_window = 3;
    s = jobs_helios_create(p, &o, &e);
    uint64_t ids[4];
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(job_source_next(s, &j, &e), 0);
        ids[i] = j.id;
    }
    cr_assert(ids[0] == 4 && ids[1] == 2 && ids[2] == 1 && ids[3] == 3);
    cr_assert_eq(job_source_next(s, &j, &e), 1);
    job_source_destroy(s);
}

static void expect_error(struct job_source *s, const char *msg)
{
    struct trace_err e;
    struct job_spec j;
    int rc;
    cr_assert_not_null(s);
    while ((rc = job_source_next(s, &j, &e)) == 0)
        ;
    cr_assert_lt(rc, 0);
    cr_assert_str_eq(e.msg, msg);
    job_source_destroy(s);
}

Test(traces_jobs, bad_rows_named_with_line)
{
    struct trace_err e;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    expect_error(jobs_csv_create("tests/data/jobs_bad_mig.csv", &m, NULL, &e),
                 "tests/data/jobs_bad_mig.csv:3: column 'mig_profile': expected a MIG profile "
                 "(1g.5gb 1g.10gb 1g.20gb 2g.10gb 2g.20gb 3g.20gb 3g.40gb 4g.20gb 4g.40gb 7g.40gb "
                 "7g.80gb, 1g.*+me), got '3g.30gb'");
    expect_error(jobs_csv_create("tests/data/jobs_zero_gpu.csv", &m, NULL, &e),
                 "tests/data/jobs_zero_gpu.csv:3: column 'gpus': expected a positive GPU count (a "
                 "training job needs a GPU), got '0'");
    expect_error(jobs_csv_create("tests/data/jobs_negative.csv", &m, NULL, &e),
                 "tests/data/jobs_negative.csv:3: column 'duration_s': expected a non-negative "
                 "duration, got '-10'");
    expect_error(jobs_helios_create("tests/data/helios_bad_state.csv", NULL, &e),
                 "tests/data/helios_bad_state.csv:3: column 'state': expected COMPLETED, "
                 "CANCELLED, FAILED, TIMEOUT, NODE_FAIL or OUT_OF_MEMORY, got 'RUNNING'");
    expect_error(jobs_helios_create("tests/data/helios_negative.csv", NULL, &e),
                 "tests/data/helios_negative.csv:3: column 'duration': expected a non-negative "
                 "duration in seconds, got '-60'");
    expect_error(jobs_pai_task_create("tests/data/pai_task_negative.csv", NULL, &e),
                 "tests/data/pai_task_negative.csv:2: column 'end_time': expected an end time >= "
                 "start_time 5100.0 (negative duration), got '5000.0'");
    expect_error(jobs_openb_create("tests/data/openb_bad_milli.csv", NULL, &e),
                 "tests/data/openb_bad_milli.csv:3: column 'gpu_milli': expected 1000 (whole "
                 "GPUs) when num_gpu > 1, got '500'");
}

Test(traces_jobs, bad_files_and_skip)
{
    struct trace_err e;
    cr_assert_null(jobs_openb_create("tests/data/empty.csv", NULL, &e));
    cr_assert_str_eq(e.msg, "tests/data/empty.csv: empty file");
    cr_assert_null(jobs_openb_create("tests/data/helios_cluster_log.csv", NULL, &e));
    cr_assert_str_eq(e.msg, "tests/data/helios_cluster_log.csv:1: missing column 'name'");
    struct job_trace_opts o;
    job_trace_opts_init(&o);
    o.skip_bad = true;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    struct job_source *s = jobs_csv_create("tests/data/jobs_zero_gpu.csv", &m, &o, &e);
    struct job_spec j;
    cr_assert_eq(job_source_next(s, &j, &e), 0);
    cr_assert_eq(job_source_next(s, &j, &e), 1);
    struct job_stats st;
    jobs_stats(s, &st);
    cr_assert_eq(st.skipped, 1);
    cr_assert(strstr(jobs_first_skip(s), "jobs_zero_gpu.csv:3:") != NULL);
    job_source_destroy(s);
}

Test(traces_jobs, mig_profile_list)
{
    cr_assert(jobs_mig_profile_known("1g.5gb"));
    cr_assert(jobs_mig_profile_known("7g.80gb"));
    cr_assert(jobs_mig_profile_known("1g.10gb+me"));
    cr_assert_not(jobs_mig_profile_known("3g.30gb"));
    cr_assert_not(jobs_mig_profile_known("7g.40gb+me"));
    cr_assert_not(jobs_mig_profile_known(""));
}
