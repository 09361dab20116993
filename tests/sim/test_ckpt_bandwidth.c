/*
 * test_ckpt_bandwidth.c — training.checkpoint.bandwidth: per_job (one writer
 * moves the whole job's state) against per_gpu (sharded checkpoints: every
 * member writes and reads its share in parallel, each at the bandwidths).
 * Every figure is computed by hand from models/ckpt.h:
 *   save    = state / ranks / write_gbps + save_fixed
 *   restore = state / ranks / read_gbps  + warmup
 * with ranks = 1 (per_job) or the job's GPU count (per_gpu).
 */
#include <math.h>
#include <string.h>

#include "models/ckpt.h"
#include "tests/simtest.h"

/* One node of 8 cards, no services, no job stream; the test starts its jobs itself. */
static void bare(struct scenario *sc, struct sim *s, const char *checkpoint)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "name: ckpt-bw\n"
             "duration: 10d\n"
             "sample_interval: 1h\n"
             "cluster: { nodes: 1, gpus_per_node: 8 }\n"
             "training:\n"
             "  jobs: { synthetic: { per_hour: 0 } }\n"
             "  checkpoint: %s\n",
             checkpoint);
    simtest_build(sc, s, yaml, 1);
    s->tr.on_requeue = NULL;
    s->tr.on_finish = NULL;
    s->tr.on_submit = NULL;
}

static uint32_t add_job(struct sim *s, double work_s, uint32_t gpus, double params_b)
{
    struct job_spec spec = {
        .id = s->tr.njobs,
        .submit = s->eng.now,
        .work = sim_time_from_sec(work_s),
        .gpus = gpus,
        .gpu_fraction = 1,
        .params_b = params_b,
    };
    int64_t id = trainer_submit(&s->tr, &spec);
    cr_assert_geq(id, 0);
    return (uint32_t)id;
}

Test(ckpt_bandwidth, sharded_cost_divides_the_state_by_the_ranks)
{
    struct ckpt_knobs k;
    ckpt_knobs_init(&k);
    /* 80 GB: one writer 80/2 + 5 = 45 s, 80/4 + 60 = 80 s;
     * four 20/2 + 5 = 15 s, 20/4 + 60 = 65 s. */
    cr_expect_float_eq(ckpt_save_sharded_s(&k, 80e9, 1), 45.0, 1e-9);
    cr_expect_float_eq(ckpt_restore_sharded_s(&k, 80e9, 1), 80.0, 1e-9);
    cr_expect_float_eq(ckpt_save_sharded_s(&k, 80e9, 4), 15.0, 1e-9);
    cr_expect_float_eq(ckpt_restore_sharded_s(&k, 80e9, 4), 65.0, 1e-9);
    cr_expect_float_eq(ckpt_save_sharded_s(&k, 80e9, 0), ckpt_save_s(&k, 80e9), 1e-12);
}

/*
 * A 4-GPU job of 7200 s of work, 20 GB/GPU of state (80 GB), a checkpoint every
 * 30 min of running: saves at 1800, 3600 and 5400 s of work (the one due at
 * 7200 s coincides with the end, which comes first). per_job: 45 s saves, the
 * job ends at 7200 + 3 × 45 = 7335 s; per_gpu: 15 s saves, it ends at 7245 s.
 * The cards see 4 members × 3 saves × the save time in USE_CKPT.
 */
static void run_4gpu(const char *bandwidth, double want_save, double want_restore)
{
    char ck[256];
    struct scenario sc;
    struct sim s;
    snprintf(ck, sizeof(ck),
             "{ interval: 30m, state_gb_per_gpu: 20, write_gbps: 2, read_gbps: 4, "
             "save_fixed: 5s, warmup: 60s%s%s }",
             bandwidth ? ", bandwidth: " : "", bandwidth ? bandwidth : "");
    bare(&sc, &s, ck);
    uint32_t gpus[4] = {0, 1, 2, 3}, j = add_job(&s, 7200, 4, 0);
    cr_expect_float_eq(s.tr.jobs[j].save_s, want_save, 1e-9);
    cr_expect_float_eq(s.tr.jobs[j].restore_s, want_restore, 1e-9);
    cr_assert_eq(trainer_start(&s.tr, j, gpus), 0);
    engine_run(&s.eng, SIM_DAY);
    const struct job *jb = &s.tr.jobs[j];
    cr_expect_eq(jb->state, JOB_DONE);
    cr_expect_eq(jb->checkpoints, 3);
    cr_expect_eq(jb->end, sim_time_from_sec(7200 + 3 * want_save), "end %.3f s",
                 sim_time_to_sec(jb->end));
    cr_expect_float_eq(jb->save_us, 3 * want_save * 1e6, 1);
    cluster_account_all(&s.cl, s.eng.now);
    double ckpt = 0;
    for (uint32_t g = 0; g < s.cl.ngpus; g++)
        ckpt += s.cl.cards[g].acc[USE_CKPT];
    cr_expect_float_eq(ckpt / 1e6, 4 * 3 * want_save, 1e-3);
    simtest_free(&sc, &s);
}

Test(ckpt_bandwidth, per_job_is_the_default_and_one_writer_moves_the_job_state)
{
    run_4gpu(NULL, 45.0, 80.0);
    run_4gpu("per_job", 45.0, 80.0);
}

Test(ckpt_bandwidth, per_gpu_every_member_writes_its_shard)
{
    run_4gpu("per_gpu", 15.0, 65.0);
}

/*
 * A known model size shards the same way: 7e9 parameters × 14 B = 98 GB on
 * 8 GPUs. per_job 98/2 + 5 = 54 s; per_gpu 12.25/2 + 5 = 11.125 s, restore
 * 12.25/4 + 60 = 63.0625 s. A 1-GPU job is the same either way (20/2 + 5 =
 * 15 s). Young's interval follows the save: sqrt(2 × 11.125 × 28,800) s.
 */
Test(ckpt_bandwidth, per_gpu_with_model_size_and_young_interval)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s, "{ interval: young, mtbf: 8h, bandwidth: per_gpu }");
    uint32_t big = add_job(&s, 3600, 8, 7), one = add_job(&s, 3600, 1, 0);
    cr_expect_float_eq(s.tr.jobs[big].save_s, 11.125, 1e-9);
    cr_expect_float_eq(s.tr.jobs[big].restore_s, 63.0625, 1e-9);
    cr_expect_float_eq(s.tr.jobs[big].interval_s, sqrt(2.0 * 11.125 * 28800.0), 1e-9);
    cr_expect_float_eq(s.tr.jobs[one].save_s, 15.0, 1e-9);
    simtest_free(&sc, &s);
    bare(&sc, &s, "{ interval: young, mtbf: 8h }");
    big = add_job(&s, 3600, 8, 7);
    cr_expect_float_eq(s.tr.jobs[big].save_s, 54.0, 1e-9);
    simtest_free(&sc, &s);
}

Test(ckpt_bandwidth, an_unknown_choice_names_the_key)
{
    simtest_expect_rejected("name: x\n"
                            "duration: 1h\n"
                            "cluster: { nodes: 1 }\n"
                            "training:\n"
                            "  jobs: { synthetic: { per_hour: 1 } }\n"
                            "  checkpoint: { bandwidth: per_rank }\n",
                            "'bandwidth': expected one of: per_job, per_gpu, got 'per_rank'", 0);
}
