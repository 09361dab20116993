/*
 * test_snapshot.c — a warm start (training.snapshot, traces/snapshot.h), each
 * case against a hand computation:
 *   - jobs of known remaining work on known cards finish at remaining / speed
 *     (an H100 pool at 1.73, models/gpu.c), hold exactly their cards until
 *     then, and new jobs take those cards only once they are free;
 *   - the policies' bookkeeping counts them: kueue's quota is full while a
 *     snapshot job holds it, so a new job waits for it although cards are free;
 *     every whole-card policy keeps a job's node;
 *   - the checkpoint age: a fault right after t = 0 loses the age plus the run
 *     since; the first periodic save comes interval − age after t = 0;
 *   - only the work left at t = 0 counts as work done;
 *   - bad snapshot files are refused with file:line, the column and what was expected.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/simtest.h"

static void tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/tidesim-snap-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void write_file(const char *dir, const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void rm(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    unlink(p);
}

/* The job of the trainer with this id (snapshot and log ids are distinct here). */
static const struct job *job_by_id(const struct sim *s, uint64_t id)
{
    for (uint32_t i = 0; i < s->tr.njobs; i++)
        if (s->tr.jobs[i].spec.id == id)
            return &s->tr.jobs[i];
    cr_assert_fail("no job %llu", (unsigned long long)id);
    return NULL;
}

static void expect_cards(const struct job *j, const uint32_t *want, uint32_t n)
{
    cr_assert_eq(j->spec.gpus, n);
    for (uint32_t i = 0; i < n; i++)
        cr_expect_eq(j->gpus[i], want[i], "job %llu member %u on card %u, expected %u",
                     (unsigned long long)j->spec.id, i, j->gpus[i], want[i]);
}

/* A card's tenant belongs to training job `owner` (trainer index). */
static bool card_held_by(const struct sim *s, uint32_t g, uint32_t owner)
{
    const struct card *c = &s->cl.cards[g];
    for (uint32_t k = 0; k < c->nten; k++) {
        const struct tenant *t = &s->cl.tenants[c->ten[k]];
        if (t->kind == TENANT_TRAIN && t->owner == owner)
            return true;
    }
    return false;
}

/*
 * Two pools of one 4-card node each: A100 (cards 0-3, speed 1) and H100
 * (cards 4-7, training speed 1.73). No periodic checkpoints, so a job runs
 * exactly remaining / speed.
 *   job 1: 2 GPUs on A100 node 0 (cards 0, 1), 7,200 s left  -> ends at 7,200 s
 *   job 2: 4 GPUs on H100 node 0 (cards 4-7), 17,300 s left  -> 17,300 / 1.73 = 10,000 s
 *   job 3: 1 GPU, placed by the policy at t = 0: the H100 node is full, the A100 node has
 *          cards 2, 3 free -> card 2; 1,800 s left            -> ends at 1,800 s
 * New jobs of the log, both 2 GPUs at t = 0 (in that order):
 *   100 (10,000 s): no node has 2 free cards until job 3 leaves at 1,800 s -> cards 2, 3,
 *       ends 11,800 s;
 *   101 (1,000 s): waits for job 1's cards 0, 1, free at 7,200 s -> ends 8,200 s.
 */
Test(snapshot, jobs_finish_at_hand_times_and_hold_their_cards_until_then)
{
    char dir[64], snap[512], log[512], yaml[2048];
    tmpdir(dir, sizeof(dir));
    write_file(dir, "snap.csv",
               "id,queue,gpus,pool,node,started_s,remaining_s,ckpt_age_s\n"
               "1,,2,a100,0,3600,7200,600\n"
               "2,,4,h100,0,600,17300,\n"
               "3,,1,,,0,1800,\n",
               snap, sizeof(snap));
    write_file(dir, "jobs.csv",
               "id,submit_s,duration_s,gpus\n"
               "100,0,10000,2\n"
               "101,0,1000,2\n",
               log, sizeof(log));
    snprintf(yaml, sizeof(yaml),
             "name: warm\nduration: 4h\nsample_interval: 10m\n"
             "cluster:\n  pools:\n"
             "    - { name: a100, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 4 }\n"
             "    - { name: h100, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 4 }\n"
             "training:\n  snapshot: %s\n  checkpoint: { interval: none }\n"
             "  jobs: { trace: { path: %s, format: csv } }\n"
             "policy: { name: dedicated }\n",
             snap, log);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    cr_assert_eq(sc.training.nsnap, 3u);
    /* At t = 0, before any event: the three are running on their cards. */
    const uint32_t c1[] = {0, 1}, c2[] = {4, 5, 6, 7}, c3[] = {2};
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(s.tr.jobs[i].state, JOB_RUNNING, "snapshot job %u not running at t = 0", i);
    expect_cards(&s.tr.jobs[0], c1, 2);
    expect_cards(&s.tr.jobs[1], c2, 4);
    expect_cards(&s.tr.jobs[2], c3, 1);
    cr_expect_eq(s.cl.free_cards, 1u, "only card 3 free at t = 0");

    /* Just before each end: still running, its cards still its own; at the end: done. */
    const struct {
        uint64_t id;
        double end_s;
    } ends[] = {{3, 1800}, {1, 7200}, {2, 10000}};
    for (size_t k = 0; k < 3; k++) {
        const struct job *j = job_by_id(&s, ends[k].id);
        uint32_t idx = (uint32_t)(j - s.tr.jobs);
        sim_time at = sim_time_from_sec(ends[k].end_s);
        cr_assert_eq(engine_run(&s.eng, at - 1), 0);
        j = job_by_id(&s, ends[k].id); /* the jobs array may have grown */
        cr_expect_eq(j->state, JOB_RUNNING, "job %llu ended before %.0f s",
                     (unsigned long long)ends[k].id, ends[k].end_s);
        for (uint32_t m = 0; m < j->spec.gpus; m++)
            cr_expect(card_held_by(&s, j->gpus[m], idx), "job %llu let card %u go early",
                      (unsigned long long)ends[k].id, j->gpus[m]);
        cr_assert_eq(engine_run(&s.eng, at), 0);
        j = job_by_id(&s, ends[k].id);
        cr_expect_eq(j->state, JOB_DONE);
        cr_expect_eq(j->end, at, "job %llu ended at %lld us, expected %lld",
                     (unsigned long long)ends[k].id, (long long)j->end, (long long)at);
        if (ends[k].id == 1) {
            /* New job 101 took cards 0 and 1 at that very instant, not before. */
            const struct job *n = job_by_id(&s, 101);
            cr_expect_eq(n->state, JOB_RUNNING);
            cr_expect_eq(n->start, at, "job 101 started at %lld", (long long)n->start);
            expect_cards(n, c1, 2);
        }
    }
    cr_assert_eq(sim_run(&s, NULL), 0);
    const struct job *a = job_by_id(&s, 100), *b = job_by_id(&s, 101);
    cr_expect_eq(a->start, sim_time_from_sec(1800));
    const uint32_t c23[] = {2, 3};
    expect_cards(a, c23, 2);
    cr_expect_eq(a->end, sim_time_from_sec(11800));
    cr_expect_eq(b->end, sim_time_from_sec(8200));
    /* Work done counts only what was left at t = 0: 2x7200 + 4x17300 + 1x1800 (snapshot) +
     * 2x10000 + 2x1000 (new), GPU-s. */
    double want = 2 * 7200 + 4 * 17300 + 1800 + 2 * 10000 + 2 * 1000;
    cr_expect_float_eq(s.tr.gpu_us_done / 1e6, want, 1e-9, "%.3f GPU-s", s.tr.gpu_us_done / 1e6);
    /* Card 0: job 1 for 7,200 s, job 101 for 1,000 s; card 4: job 2 for 10,000 s. */
    cr_expect_float_eq(s.cl.cards[0].alloc_us / 1e6, 8200.0, 1e-6);
    cr_expect_float_eq(s.cl.cards[4].alloc_us / 1e6, 10000.0, 1e-6);
    simtest_expect_conserved(&s);
    simtest_free(&sc, &s);
    rm(dir, "snap.csv");
    rm(dir, "jobs.csv");
    rmdir(dir);
}

/*
 * Kueue: the training ClusterQueue's nominal quota is 4 cards (no borrowing) on an
 * 8-card node. The snapshot's 4-GPU job (3,600 s left) holds all of it, so a new
 * 1-GPU job submitted at t = 0 waits although four cards are free, and starts when
 * the snapshot job ends: 3,600 s, ends 4,200 s. (Were the snapshot job not counted,
 * it would start at 0.)
 */
Test(snapshot, kueue_quota_counts_the_snapshot_jobs)
{
    char dir[64], snap[512], log[512], yaml[2048];
    tmpdir(dir, sizeof(dir));
    write_file(dir, "snap.csv", "id,gpus,started_s,remaining_s\n7,4,100,3600\n", snap,
               sizeof(snap));
    write_file(dir, "jobs.csv", "id,submit_s,duration_s,gpus\n100,0,600,1\n", log, sizeof(log));
    snprintf(yaml, sizeof(yaml),
             "name: warm-kueue\nduration: 2h\n"
             "cluster: { nodes: 1, gpus_per_node: 8 }\n"
             "training:\n  snapshot: %s\n  checkpoint: { interval: none }\n"
             "  jobs: { trace: { path: %s, format: csv } }\n"
             "policy:\n  name: kueue\n  inference_gpus: 0\n"
             "  queues: { inference: { nominal: 0 }, training: { nominal: 4, "
             "borrowing_limit: 0 } }\n",
             snap, log);
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 1);
    const struct job *w = job_by_id(&s, 7), *n = job_by_id(&s, 100);
    cr_expect_eq(w->start, 0);
    cr_expect_eq(w->end, sim_time_from_sec(3600));
    cr_expect_eq(n->start, sim_time_from_sec(3600), "new job started at %lld us",
                 (long long)n->start);
    cr_expect_eq(n->end, sim_time_from_sec(4200));
    simtest_free(&sc, &s);
    rm(dir, "snap.csv");
    rm(dir, "jobs.csv");
    rmdir(dir);
}

/* Every whole-card policy puts a job with a node on that node's lowest cards at t = 0. */
Test(snapshot, whole_card_policies_keep_the_node)
{
    char dir[64], snap[512], yaml[2048];
    tmpdir(dir, sizeof(dir));
    /* Node 2 of three 4-card nodes: cards 8..11; the 3-GPU job takes 8, 9, 10. */
    write_file(dir, "snap.csv", "id,gpus,node,started_s,remaining_s\n1,3,2,0,900\n", snap,
               sizeof(snap));
    static const char *const pols[] = {"dedicated", "tidal", "adaptive", "kueue", "kai"};
    for (size_t p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
        snprintf(yaml, sizeof(yaml),
                 "name: pin\nduration: 1h\ncluster: { nodes: 3, gpus_per_node: 4 }\n"
                 "training:\n  snapshot: %s\n  checkpoint: { interval: none }\n"
                 "policy: { name: %s }\n",
                 snap, pols[p]);
        struct scenario sc;
        struct sim s;
        simtest_build(&sc, &s, yaml, 1);
        const uint32_t want[] = {8, 9, 10};
        cr_assert_eq(s.tr.jobs[0].state, JOB_RUNNING, "%s: not running", pols[p]);
        expect_cards(&s.tr.jobs[0], want, 3);
        cr_assert_eq(sim_run(&s, NULL), 0, "%s: %s", pols[p], s.err);
        cr_expect_eq(s.tr.jobs[0].end, sim_time_from_sec(900), "%s: ended at %lld", pols[p],
                     (long long)s.tr.jobs[0].end);
        simtest_free(&sc, &s);
    }
    rm(dir, "snap.csv");
    rmdir(dir);
}

/*
 * Checkpoint age 600 s (started 3,000 s ago, 3,600 s left; no periodic saves).
 * A fault kills it at t = 100 s: it loses 600 + 100 = 700 s of progress, restores
 * its checkpoint (20 GB / 4 GB/s + 60 s warm-up = 65 s: training.checkpoint
 * defaults), redoes the 700 s and runs the 3,500 s it still had: it ends at
 * 100 + 65 + 700 + 3,500 = 4,365 s. Work counted done is still 3,600 s.
 */
Test(snapshot, a_fault_right_after_t0_loses_the_checkpoint_age)
{
    char dir[64], snap[512], yaml[2048];
    tmpdir(dir, sizeof(dir));
    write_file(dir, "snap.csv", "id,gpus,started_s,remaining_s,ckpt_age_s\n5,1,3000,3600,600\n",
               snap, sizeof(snap));
    snprintf(yaml, sizeof(yaml),
             "name: age\nduration: 3h\ncluster: { nodes: 1, gpus_per_node: 2 }\n"
             "training:\n  snapshot: %s\n  checkpoint: { interval: none }\n"
             "policy: { name: dedicated }\n",
             snap);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(100)), 0);
    const struct job *j = &s.tr.jobs[0];
    cr_assert_eq(j->state, JOB_RUNNING);
    cr_assert_gt(sim_inject_fault(&s, j->tids[0]), 0);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    j = &s.tr.jobs[0];
    cr_expect_float_eq(j->lost_us / 1e6, 700.0, 1e-6, "lost %.3f s", j->lost_us / 1e6);
    cr_expect_eq(j->restarts, 1u);
    cr_expect_float_eq(j->restore_us / 1e6, 65.0, 1e-6, "restore %.3f s", j->restore_us / 1e6);
    cr_expect_eq(j->end, sim_time_from_sec(4365), "ended at %lld us", (long long)j->end);
    cr_expect_float_eq(s.tr.gpu_us_done / 1e6, 3600.0, 1e-9);
    simtest_free(&sc, &s);
    rm(dir, "snap.csv");
    rmdir(dir);
}

/*
 * Periodic saves every 30 min with a checkpoint age of 600 s: the first save is due
 * 1,800 − 600 = 1,200 s after t = 0 (save 20 GB / 2 GB/s + 5 s = 15 s), the next
 * 1,800 s of running after that save: at 1,215 + 1,800 = 3,015 s.
 */
Test(snapshot, the_first_save_comes_interval_minus_age_after_t0)
{
    char dir[64], snap[512], yaml[2048];
    tmpdir(dir, sizeof(dir));
    write_file(dir, "snap.csv", "id,gpus,started_s,remaining_s,ckpt_age_s\n5,1,3000,7200,600\n",
               snap, sizeof(snap));
    snprintf(yaml, sizeof(yaml),
             "name: age\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 1 }\n"
             "training:\n  snapshot: %s\n  checkpoint: { interval: 30m }\n"
             "policy: { name: dedicated }\n",
             snap);
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(1200) - 1), 0);
    cr_expect_eq(s.tr.jobs[0].phase, PHASE_RUN);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(1200)), 0);
    cr_expect_eq(s.tr.jobs[0].phase, PHASE_SAVE, "no save at 1,200 s");
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(3015) - 1), 0);
    cr_expect_eq(s.tr.jobs[0].checkpoints, 1u);
    cr_expect_eq(s.tr.jobs[0].phase, PHASE_RUN);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(3015)), 0);
    cr_expect_eq(s.tr.jobs[0].phase, PHASE_SAVE, "no second save at 3,015 s");
    simtest_free(&sc, &s);
    rm(dir, "snap.csv");
    rmdir(dir);
}

/* Each bad file is refused at load with PATH:LINE, the column and what it expected. */
Test(snapshot, bad_files_name_file_line_and_column)
{
    static const struct {
        const char *csv, *want;
    } cases[] = {
        {"id,gpus,started_s,remaining_s\n1,2,-5,100\n",
         ":2: column 'started_s': expected seconds >= 0"},
        {"id,gpus,started_s,remaining_s\n1,2,5,0\n",
         ":2: column 'remaining_s': expected seconds > 0"},
        {"id,gpus,started_s\n1,2,5\n", ":1: column 'remaining_s' missing from the header"},
        {"id,gpus,started_s,remaining_s\n1,,5,10\n", ":2: column 'gpus': expected whole GPUs"},
        {"id,gpus,pool,started_s,remaining_s\n1,2,h200,5,10\n",
         ":2: column 'pool': expected a pool of cluster.pools (a100, h100)"},
        {"id,gpus,pool,node,started_s,remaining_s\n1,2,h100,1,5,10\n",
         ":2: column 'node': expected a node index 0..0 (within its pool)"},
        {"id,gpus,node,started_s,remaining_s\n1,5,0,5,10\n",
         ":2: column 'gpus': expected at most the 4 GPUs of one node"},
        {"id,gpus,pool,started_s,remaining_s\n1,5,h100,5,10\n",
         ":2: column 'gpus': expected at most the 4 GPUs of its pool"},
        {"id,gpus,node,started_s,remaining_s\n1,3,1,5,10\n2,2,1,5,10\n",
         ":3: column 'node': node 1 has 4 GPUs; the jobs before this one hold 3"},
        {"id,gpus,started_s,remaining_s,ckpt_age_s\n1,1,5,10,6\n",
         ":2: column 'ckpt_age_s': expected seconds between 0 and started_s"},
        {"id,gpus,started_s,remaining_s\n1,1,5,10\n1,1,5,10\n",
         ":3: column 'id': job 1 is already on line 2"},
        {"id,gpus,started_s,remaining_s\nx,1,5,10\n",
         ":2: column 'id': expected a non-negative integer"},
        {"id,gpus,started_s,remaining_s\n1,8,5,10\n2,1,5,10\n",
         ":3: column 'gpus': the snapshot's jobs hold 9 GPUs up to this line; the cluster has 8"},
    };
    char dir[64], snap[512], yaml[1024];
    tmpdir(dir, sizeof(dir));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_file(dir, "bad.csv", cases[i].csv, snap, sizeof(snap));
        snprintf(yaml, sizeof(yaml),
                 "name: bad\nduration: 1h\n"
                 "cluster:\n  pools:\n"
                 "    - { name: a100, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 4 }\n"
                 "    - { name: h100, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 4 }\n"
                 "training:\n  snapshot: %s\n",
                 snap);
        char want[600];
        snprintf(want, sizeof(want), "%s%s", snap, cases[i].want);
        simtest_expect_rejected(yaml, want, i);
    }
    /* A job the policy does not start at t = 0 stops the run, naming its line: kueue rejects
     * a job its ClusterQueue can never hold (nominal 0, no borrowing), and leaves a job
     * queued while the quota (2 cards) is held by the row before it. */
    static const struct {
        const char *csv, *nominal, *want;
    } run_cases[] = {
        {"id,gpus,started_s,remaining_s\n1,2,5,10\n", "0", ":2: job 1: the policy rejects it"},
        {"id,gpus,started_s,remaining_s\n1,2,5,10\n2,2,5,10\n", "2",
         ":3: job 2: the policy did not start it at t = 0"},
    };
    for (size_t i = 0; i < sizeof(run_cases) / sizeof(run_cases[0]); i++) {
        write_file(dir, "bad.csv", run_cases[i].csv, snap, sizeof(snap));
        snprintf(yaml, sizeof(yaml),
                 "name: bad\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 4 }\n"
                 "training:\n  snapshot: %s\n"
                 "policy:\n  name: kueue\n  inference_gpus: 0\n"
                 "  queues: { inference: { nominal: 0 }, training: { nominal: %s, "
                 "borrowing_limit: 0 } }\n",
                 snap, run_cases[i].nominal);
        struct scenario sc;
        struct conf_err err;
        cr_assert_eq(scenario_load_string(&sc, "t.yaml", yaml, &err), 0, "%s", err.msg);
        struct sim s;
        cr_expect_lt(sim_init(&s, &sc, 1, NULL), 0, "case %zu started", i);
        char want[600];
        snprintf(want, sizeof(want), "%s%s", snap, run_cases[i].want);
        cr_expect(strstr(s.err, want), "case %zu: %s", i, s.err);
        scenario_release(&sc);
    }
    rm(dir, "bad.csv");
    rmdir(dir);
}
