/*
 * test_sharing.c — the sharing models inside the simulator: rates under
 * time-slicing, memory without isolation, fault blast radius, checkpoints and
 * preemption losses, and the per-card time accounting. Expected values are
 * computed by hand from the model's definition (models/share.h, models/ckpt.h).
 */
#include <math.h>
#include <string.h>

#include "tests/simtest.h"

/* A scenario with no services and no job stream: tests drive the trainer by hand. */
static void bare(struct scenario *sc, struct sim *s, const char *cluster, const char *training)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: bare\n"
             "duration: 10d\n"
             "sample_interval: 1h\n"
             "cluster: %s\n"
             "training:\n"
             "  jobs: { synthetic: { per_hour: 0 } }\n"
             "%s",
             cluster, training ? training : "");
    simtest_build(sc, s, yaml, 1);
    /* No policy in the loop: a preempted job stays queued until the test restarts it. */
    s->tr.on_requeue = NULL;
    s->tr.on_finish = NULL;
    s->tr.on_submit = NULL;
}

/* Queue a job of `work` seconds on `gpus` GPUs now (no policy: the test starts it). */
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

/* Every card: the use states plus free time add up to the elapsed time. */
static void expect_accounting_adds_up(struct sim *s)
{
    cluster_account_all(&s->cl, s->eng.now);
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++) {
            cr_expect_geq(s->cl.cards[g].acc[k], -1e-6);
            sum += s->cl.cards[g].acc[k];
        }
        cr_expect_leq(sum, (double)s->eng.now + 1e-3, "card %u: %f > %ld", g, sum,
                      (long)s->eng.now);
        cr_expect_leq(s->cl.cards[g].alloc_us, (double)s->eng.now + 1e-3);
    }
}

Test(sharing, two_timesliced_jobs_share_then_one_runs_alone)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 1, sharing: timeslice, timeSlicing: { replicas: 2 } }",
         "  memory_gb_per_gpu: 30\n  checkpoint: { interval: none }\n");
    double o = sc.knobs.ts_overhead; /* 0.05 by default */
    uint32_t g0 = 0;
    uint32_t a = add_job(&s, 3600, 1, 0), b = add_job(&s, 7200, 1, 0);
    cr_assert_eq(trainer_start(&s.tr, a, &g0), 0);
    cr_assert_eq(trainer_start(&s.tr, b, &g0), 0);
    cr_expect_float_eq(s.tr.jobs[a].rate, (1 - o) / 2, 1e-12);
    cr_expect_float_eq(s.tr.jobs[b].rate, (1 - o) / 2, 1e-12);
    engine_run(&s.eng, 30 * SIM_DAY);
    /* A: 3600 s of work at (1-o)/2. B: the same progress by then, the rest (3600 s) alone. */
    double ta = 3600 / ((1 - o) / 2);
    cr_expect(fabs(sim_time_to_sec(s.tr.jobs[a].end) - ta) < 1e-5, "A ended at %f, expected %f",
              sim_time_to_sec(s.tr.jobs[a].end), ta);
    double tb = ta + 3600;
    cr_expect(fabs(sim_time_to_sec(s.tr.jobs[b].end) - tb) < 1e-5, "B ended at %f, expected %f",
              sim_time_to_sec(s.tr.jobs[b].end), tb);
    /* Card time: while both ran, o of it was switching overhead. */
    cluster_account_all(&s.cl, s.eng.now);
    const struct card *c = &s.cl.cards[0];
    cr_expect(fabs(c->acc[USE_OVERHEAD] / 1e6 - o * ta) < 1e-3);
    cr_expect(fabs(c->acc[USE_USEFUL] / 1e6 - (1 - o) * ta - 3600) < 1e-3);
    expect_accounting_adds_up(&s);
    simtest_free(&sc, &s);
}

Test(sharing, timeslice_oom_kills_exactly_the_overflowing_tenant)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 1, sharing: timeslice, timeSlicing: { replicas: 4 } }",
         "  memory_gb_per_gpu: 30\n");
    uint32_t g0 = 0, j[3];
    for (int i = 0; i < 3; i++)
        j[i] = add_job(&s, 3600, 1, 0);
    /* 30 + 30 GiB fit the 80 GiB card; the third 30 GiB allocation overflows it. */
    cr_expect_eq(trainer_start(&s.tr, j[0], &g0), 0);
    cr_expect_eq(trainer_start(&s.tr, j[1], &g0), 0);
    cr_expect_eq(trainer_start(&s.tr, j[2], &g0), 1);
    cr_expect_eq(s.tr.jobs[j[0]].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j[1]].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j[2]].state, JOB_FAILED);
    cr_expect_eq(s.cl.cards[0].nten, 2);
    simtest_free(&sc, &s);
}

Test(sharing, mig_refuses_an_allocation_larger_than_the_slice)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 1, sharing: mig, mig: { layout: '3g.40gb+2g.20gb+1g.10gb' } }",
         "  memory_gb_per_gpu: 30\n");
    uint32_t g0 = 0;
    struct tenant_req big = {.kind = TENANT_TRAIN, .mem_gib = 30, .mig_profile = "2g.20gb"};
    uint32_t tid = 12345;
    cr_expect_eq(cluster_can_place(&s.cl, 0, &big), -ENOSPC);
    cr_expect_eq(cluster_place(&s.cl, 0, 0, &big, &tid), -ENOSPC);
    cr_expect_eq(tid, 12345u, "a refused placement wrote a tenant id");
    cr_expect_eq(s.cl.cards[0].nten, 0);
    cr_expect_eq(s.cl.live_tenants, 0);
    /* Without a profile it lands on the only instance that holds 30 GiB: the 3g.40gb. */
    uint32_t j = add_job(&s, 60, 1, 0);
    cr_expect_eq(trainer_start(&s.tr, j, &g0), 0);
    int inst = s.cl.tenants[s.tr.jobs[j].tids[0]].instance;
    cr_expect_str_eq(s.cl.cards[0].layout.inst[inst].profile->name, "3g.40gb");
    /* Its speed is the 3g instance's speed factor. */
    cr_expect_float_eq(s.tr.jobs[j].rate,
                       mig_knobs_speed(&sc.mig, s.cl.cards[0].layout.inst[inst].profile), 1e-12);
    /* A re-layout of a card with a tenant is refused and changes nothing. */
    char err[256];
    cr_expect_eq(cluster_relayout_begin(&s.cl, 0, 0, "7g.80gb", err, sizeof(err)), -EBUSY);
    cr_expect_eq(s.cl.cards[0].layout.n, 3);
    simtest_free(&sc, &s);
}

Test(sharing, gang_runs_at_its_slowest_member)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 2, sharing: mig, mig: { layout: '3g.40gb+1g.10gb' } }",
         "  memory_gb_per_gpu: 5\n  checkpoint: { interval: none }\n");
    /* Member 0 on card 0 takes the 1g (smallest that fits), member 1 on card 1 too. */
    uint32_t gpus[2] = {0, 1};
    uint32_t j = add_job(&s, 1000, 2, 0);
    struct tenant_req pin = {.kind = TENANT_TRAIN, .mem_gib = 5, .mig_profile = "1g.10gb"};
    uint32_t blocker;
    cr_assert_eq(cluster_place(&s.cl, 1, 0, &pin, &blocker), 0); /* card 1's 1g is taken */
    cr_assert_eq(trainer_start(&s.tr, j, gpus), 0);
    const struct mig_profile *p1 = mig_profile_find(sc.spec, "1g.10gb");
    double slow = mig_knobs_speed(&sc.mig, p1);
    cr_expect_float_eq(s.tr.jobs[j].rate, slow, 1e-12);
    engine_run(&s.eng, SIM_DAY);
    cr_expect(fabs(sim_time_to_sec(s.tr.jobs[j].end) - 1000 / slow) < 1e-5);
    simtest_free(&sc, &s);
}

Test(sharing, hard_preemption_loses_the_work_since_the_last_checkpoint)
{
    struct scenario sc;
    struct sim s;
    /* 1 h interval; 20 GB state at 2 GB/s + 5 s fixed = 15 s saves. */
    bare(&sc, &s, "{ nodes: 1, gpus_per_node: 1 }", "  checkpoint: { interval: 1h }\n");
    uint32_t g0 = 0, j = add_job(&s, 10 * 3600, 1, 0);
    cr_assert_eq(trainer_start(&s.tr, j, &g0), 0);
    double save = s.tr.jobs[j].save_s;
    cr_expect_float_eq(save, 20e9 / 2e9 + 5, 1e-9);
    /* Checkpoint at 1 h (15 s), then 50 minutes more of work. */
    sim_time t = SIM_HOUR + sim_time_from_sec(save) + 50 * SIM_MIN;
    engine_run(&s.eng, t);
    cr_expect_eq(s.tr.jobs[j].checkpoints, 1);
    cr_assert_eq(trainer_preempt(&s.tr, j, false), 0);
    cr_expect_float_eq(s.tr.jobs[j].lost_us, 50.0 * 60 * 1e6, 1e-3);
    cr_expect_float_eq(s.tr.jobs[j].done_us, 3600e6, 1e-3);
    cr_expect_eq(s.tr.jobs[j].state, JOB_QUEUED);
    cr_expect_eq(s.cl.cards[0].nten, 0);
    /* Restart: restore, then the 50 lost minutes are recompute, then useful again. */
    cr_assert_eq(trainer_start(&s.tr, j, &g0), 0);
    engine_run(&s.eng, 30 * SIM_DAY);
    cr_expect_eq(s.tr.jobs[j].state, JOB_DONE);
    cluster_account_all(&s.cl, s.eng.now);
    const struct card *c = &s.cl.cards[0];
    cr_expect(fabs(c->acc[USE_RECOMPUTE] - 50.0 * 60 * 1e6) < 2, "recompute %f s",
              c->acc[USE_RECOMPUTE] / 1e6);
    cr_expect(fabs(c->acc[USE_RESTORE] / 1e6 - s.tr.jobs[j].restore_s) < 1e-5);
    cr_expect(fabs(c->acc[USE_USEFUL] / 1e6 - 10 * 3600) < 1e-3);
    cr_expect(fabs(c->acc[USE_CKPT] / 1e6 - s.tr.jobs[j].checkpoints * save) < 1e-3);
    expect_accounting_adds_up(&s);
    simtest_free(&sc, &s);
}

Test(sharing, graceful_preemption_whose_save_fits_loses_nothing)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s, "{ nodes: 1, gpus_per_node: 1 }", "  checkpoint: { interval: 1h }\n");
    uint32_t g0 = 0, j = add_job(&s, 10 * 3600, 1, 0);
    cr_assert_eq(trainer_start(&s.tr, j, &g0), 0);
    double save = s.tr.jobs[j].save_s; /* 15 s <= 30 s grace */
    engine_run(&s.eng, SIM_HOUR + sim_time_from_sec(save) + 50 * SIM_MIN);
    cr_assert_eq(trainer_preempt(&s.tr, j, true), 0);
    /* Still on the card while it saves, then queued with nothing lost. */
    cr_expect_eq(s.tr.jobs[j].state, JOB_RUNNING);
    engine_run(&s.eng, s.eng.now + sim_time_from_sec(save) + 1);
    cr_expect_eq(s.tr.jobs[j].state, JOB_QUEUED);
    cr_expect_float_eq(s.tr.jobs[j].lost_us, 0.0, 1e-9);
    cr_expect_float_eq(s.tr.jobs[j].ckpt_us, (3600.0 + 3000) * 1e6, 1e-3);
    expect_accounting_adds_up(&s);
    simtest_free(&sc, &s);
}

Test(sharing, graceful_preemption_whose_save_does_not_fit_loses_since_checkpoint)
{
    struct scenario sc;
    struct sim s;
    /* 200 GB/GPU at 2 GB/s: 105 s saves, more than the 30 s grace period. */
    bare(&sc, &s, "{ nodes: 1, gpus_per_node: 1 }",
         "  checkpoint: { interval: 1h, state_gb_per_gpu: 200 }\n");
    uint32_t g0 = 0, j = add_job(&s, 10 * 3600, 1, 0);
    cr_assert_eq(trainer_start(&s.tr, j, &g0), 0);
    double save = s.tr.jobs[j].save_s;
    cr_expect_float_eq(save, 105.0, 1e-9);
    engine_run(&s.eng, SIM_HOUR + sim_time_from_sec(save) + 20 * SIM_MIN);
    cr_assert_eq(trainer_preempt(&s.tr, j, true), 0);
    engine_run(&s.eng, s.eng.now + 30 * SIM_SEC);
    cr_expect_eq(s.tr.jobs[j].state, JOB_QUEUED);
    cr_expect_float_eq(s.tr.jobs[j].lost_us, 20.0 * 60 * 1e6, 1e-3);
    expect_accounting_adds_up(&s);
    simtest_free(&sc, &s);
}

Test(sharing, mps_fault_ends_the_card_not_the_next_card)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s, "{ nodes: 1, gpus_per_node: 2, sharing: mps, mps: { replicas: 4 } }",
         "  memory_gb_per_gpu: 10\n");
    uint32_t g0 = 0, g1 = 1, j[5];
    for (int i = 0; i < 5; i++)
        j[i] = add_job(&s, 36000, 1, 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(trainer_start(&s.tr, j[i], &g0), 0);
    for (int i = 3; i < 5; i++)
        cr_assert_eq(trainer_start(&s.tr, j[i], &g1), 0);
    engine_run(&s.eng, SIM_HOUR);
    cr_expect_eq(sim_inject_fault(&s, s.tr.jobs[j[1]].tids[0]), 3);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(s.tr.jobs[j[i]].state, JOB_QUEUED, "client %d on the faulting card", i);
        cr_expect_eq(s.tr.jobs[j[i]].restarts, 1);
    }
    for (int i = 3; i < 5; i++)
        cr_expect_eq(s.tr.jobs[j[i]].state, JOB_RUNNING, "client %d on the other card", i);
    simtest_free(&sc, &s);
}

Test(sharing, mig_fault_leaves_the_neighbours_running)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 1, sharing: mig, mig: { layout: '3g.40gb+2g.20gb+1g.10gb' } }",
         "  memory_gb_per_gpu: 8\n");
    uint32_t g0 = 0, j[3];
    for (int i = 0; i < 3; i++) {
        j[i] = add_job(&s, 36000, 1, 0);
        cr_assert_eq(trainer_start(&s.tr, j[i], &g0), 0);
    }
    cr_expect_eq(sim_inject_fault(&s, s.tr.jobs[j[0]].tids[0]), 1);
    cr_expect_eq(s.tr.jobs[j[0]].state, JOB_QUEUED);
    cr_expect_eq(s.tr.jobs[j[1]].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[j[2]].state, JOB_RUNNING);
    simtest_free(&sc, &s);
}

Test(sharing, youngs_interval_per_job)
{
    struct scenario sc;
    struct sim s;
    /* Save cost 60 s: 110 GB at 2 GB/s + 5 s. MTBF 8 h. */
    bare(&sc, &s, "{ nodes: 1, gpus_per_node: 1 }",
         "  checkpoint: { interval: young, mtbf: 8h, state_gb_per_gpu: 110 }\n");
    uint32_t j = add_job(&s, 3600, 1, 0);
    cr_expect_float_eq(s.tr.jobs[j].save_s, 60.0, 1e-9);
    cr_expect_float_eq(s.tr.jobs[j].interval_s, sqrt(2.0 * 60 * 28800), 1e-9);
    simtest_free(&sc, &s);
}

Test(sharing, energy_is_idle_plus_busy_share_of_the_range)
{
    /* One card, one 1 h job, 2 h run: busy 1 h, then free. */
    const char *yaml = "name: energy\n"
                       "duration: 2h\n"
                       "cluster: { nodes: 1, gpus_per_node: 1 }\n"
                       "training:\n"
                       "  backlog: 1\n"
                       "  checkpoint: { interval: none }\n"
                       "  jobs: { synthetic: { per_hour: 0, duration: { lognormal: { median: 1h, "
                       "sigma: 0 } }, gpus: { 1: 1 } } }\n"
                       "policy: { name: dedicated, inference_gpus: 0 }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 1);
    cr_assert_eq(s.tr.done, 1);
    const struct gpu_spec *g = sc.spec;
    double kwh = (g->idle_w * 2 + (g->tdp_w - g->idle_w) * 1) / 1000;
    cr_expect(fabs(sim_energy_kwh(&s) - kwh) < 1e-9, "%f kWh, expected %f", sim_energy_kwh(&s),
              kwh);
    cr_expect_float_eq(sim_util_busy(&s), 0.5, 1e-12);
    cr_expect_float_eq(sim_util_useful(&s), 0.5, 1e-12);
    simtest_free(&sc, &s);
}

Test(sharing, gang_members_faster_than_the_gang_count_the_gap_as_idle)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 2, sharing: timeslice, timeSlicing: { replicas: 2 } }",
         "  memory_gb_per_gpu: 10\n  checkpoint: { interval: none }\n");
    double o = sc.knobs.ts_overhead;
    uint32_t g1 = 1, both[2] = {0, 1};
    uint32_t other = add_job(&s, 100000, 1, 0), gang = add_job(&s, 3600, 2, 0);
    cr_assert_eq(trainer_start(&s.tr, other, &g1), 0);
    cr_assert_eq(trainer_start(&s.tr, gang, both), 0);
    /* Member 0 alone on card 0 (speed 1), member 1 time-sliced on card 1: the gang runs at (1-o)/2.
     */
    double r = (1 - o) / 2;
    cr_expect_float_eq(s.tr.jobs[gang].rate, r, 1e-12);
    engine_run(&s.eng, SIM_HOUR);
    cluster_account_all(&s.cl, s.eng.now);
    const struct card *c0 = &s.cl.cards[0];
    cr_expect(fabs(c0->acc[USE_USEFUL] / 1e6 - r * 3600) < 1e-3, "useful %f",
              c0->acc[USE_USEFUL] / 1e6);
    cr_expect(fabs(c0->acc[USE_IDLE] / 1e6 - (1 - r) * 3600) < 1e-3, "idle %f",
              c0->acc[USE_IDLE] / 1e6);
    simtest_free(&sc, &s);
}

Test(sharing, model_numbers_are_overridden_from_the_scenario)
{
    struct scenario sc;
    struct sim s;
    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 1, sharing: mig, spec: { tdp_w: 500, idle_w: 60 },\n"
         "  mig: { layout: '1g.10gb*7', speeds: { 1g.10gb: 0.132 } } }",
         "  memory_gb_per_gpu: 5\n  checkpoint: { interval: none }\n");
    cr_expect_float_eq(sc.spec->tdp_w, 500.0, 1e-12);
    cr_expect_float_eq(sc.spec->idle_w, 60.0, 1e-12);
    /* The published table is untouched. */
    cr_expect_float_eq(gpu_spec_find("a100-sxm4-80gb")->tdp_w, 400.0, 1e-12);
    uint32_t g0 = 0, j = add_job(&s, 132, 1, 0);
    cr_assert_eq(trainer_start(&s.tr, j, &g0), 0);
    cr_expect_float_eq(s.tr.jobs[j].rate, 0.132, 1e-12);
    engine_run(&s.eng, SIM_DAY);
    cr_expect(fabs(sim_time_to_sec(s.tr.jobs[j].end) - 1000) < 1e-5);
    simtest_free(&sc, &s);

    bare(&sc, &s,
         "{ nodes: 1, gpus_per_node: 1, sharing: mps, mps: { replicas: 2, pinned_mem_limit_gb: "
         "30 } }",
         "  memory_gb_per_gpu: 35\n");
    /* 35 GiB fits the 40 GiB default split but not the 30 GiB pinned limit: OOM-killed. */
    j = add_job(&s, 60, 1, 0);
    cr_expect_eq(trainer_start(&s.tr, j, &g0), 1);
    cr_expect_eq(s.tr.jobs[j].state, JOB_FAILED);
    simtest_free(&sc, &s);
}
