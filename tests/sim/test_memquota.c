/*
 * test_memquota.c — GPU-memory quotas under time-slicing (issue 11 part 7):
 * cluster.timeSlicing.memory_quota enforced (HAMi-style: each tenant limited to
 * the memory it asked for) against none (the NVIDIA device plugin: no memory
 * isolation). Hand-built: an 80 GiB card holds a training member that asks for
 * and allocates 40 GiB; a replica of `hog` asks for 40 GiB (memory_gb) and
 * allocates 60 (memory_used_gb). Its request fits the card (80), its real use
 * does not (100). Enforced: the hog's own allocation fails (it is OOM-killed
 * alone at its start) and the training job runs on. None: the hog's excess
 * takes the pool its card-mate allocates from, so the training job dies (it
 * restarts from its checkpoint, queued again) and the hog keeps the card.
 */
#include "tests/simtest.h"

/*
 * One 4-card node, time-sliced 2 ways; the policy places one replica of each
 * service (hog, then svc: 40 GiB asked and allocated) on cards of its own
 * choice; the test uses card 3, which it leaves empty.
 */
static void build(struct scenario *sc, struct sim *s, const char *quota)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: memquota\n"
             "duration: 1h\n"
             "sample_interval: 10m\n"
             "cluster: { nodes: 1, gpus_per_node: 4, sharing: timeslice,\n"
             "           timeSlicing: { replicas: 2, memory_quota: %s } }\n"
             "services:\n"
             "  - name: hog\n"
             "    latency: { a_ms: 2, b_ms: 0.5, dist: deterministic }\n"
             "    batching: { max_batch: 4, max_wait: 1ms }\n"
             "    memory_gb: 40\n"
             "    memory_used_gb: 60\n"
             "    replicas: { count: 0, min: 0, max: 0 }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 0.1 } }\n"
             "  - name: svc\n"
             "    latency: { a_ms: 2, b_ms: 0.5, dist: deterministic }\n"
             "    batching: { max_batch: 4, max_wait: 1ms }\n"
             "    memory_gb: 40\n"
             "    replicas: { count: 0, min: 0, max: 0 }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 0.1 } }\n"
             "training:\n"
             "  jobs: { synthetic: { per_hour: 0 } }\n"
             "  memory_gb_per_gpu: 40\n"
             "  checkpoint: { interval: none }\n"
             "policy: { name: dedicated, inference_gpus: 0 }\n",
             quota);
    simtest_build(sc, s, yaml, 1);
    s->tr.on_requeue = NULL; /* no policy in the loop for training: the test starts it */
    s->tr.on_finish = NULL;
    s->tr.on_submit = NULL;
    cr_assert_eq(s->cl.cards[3].nten, 0, "card 3 is left for the test");
}

/* Start a one-GPU training job of 1000 s on card 3 (40 GiB); returns its index. */
static uint32_t start_job(struct sim *s)
{
    struct job_spec spec = {
        .submit = s->eng.now, .work = 1000 * SIM_SEC, .gpus = 1, .gpu_fraction = 1};
    int64_t id = trainer_submit(&s->tr, &spec);
    cr_assert_geq(id, 0);
    uint32_t g = 3;
    cr_assert_eq(trainer_start(&s->tr, (uint32_t)id, &g), 0);
    return (uint32_t)id;
}

Test(memquota, enforced_quota_kills_the_over_user_alone)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, "enforced");
    uint32_t j = start_job(&s);
    uint64_t oom0 = s.oom_kills;
    uint32_t reps = service_replicas(&s.svcs[0]);
    cr_expect_eq(sim_place_replica(&s, 0, 3), 1, "the hog's own allocation fails");
    engine_run(&s.eng, 10 * SIM_SEC);
    cr_expect_eq(s.oom_kills, oom0 + 1);
    cr_expect_eq(service_replicas(&s.svcs[0]), reps, "no hog replica on card 3");
    cr_expect_eq(s.cl.cards[3].nten, 1);
    cr_expect_eq(s.tr.jobs[j].state, JOB_RUNNING, "the card-mate runs on");
    cr_expect_eq(s.tr.jobs[j].restarts, 0);
    simtest_free(&sc, &s);
}

Test(memquota, without_quota_the_over_user_takes_its_card_mates_down)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, "none");
    uint32_t j = start_job(&s);
    uint64_t oom0 = s.oom_kills;
    uint32_t reps = service_replicas(&s.svcs[0]);
    cr_expect_eq(sim_place_replica(&s, 0, 3), 0, "the hog's request fits");
    engine_run(&s.eng, 10 * SIM_SEC);
    cr_expect_eq(s.oom_kills, oom0 + 1);
    cr_expect_eq(service_replicas(&s.svcs[0]), reps + 1, "the hog keeps card 3");
    cr_expect_eq(s.cl.cards[3].nten, 1);
    cr_expect_eq(s.cl.tenants[s.cl.cards[3].ten[0]].kind, TENANT_INFER);
    cr_expect_eq(s.tr.jobs[j].state, JOB_QUEUED, "killed: queued again");
    cr_expect_eq(s.tr.jobs[j].restarts, 1);
    simtest_free(&sc, &s);
}

/*
 * The same with an inference card-mate: a 40 GiB replica of `svc` placed
 * first on card 3, then the hog. None: svc's replica is killed and leaves the
 * card (not restarted in place: the card is still full); enforced: the hog
 * fails and svc keeps serving.
 */
Test(memquota, replica_card_mate_none_and_enforced)
{
    const char *modes[] = {"none", "enforced"};
    for (int m = 0; m < 2; m++) {
        struct scenario sc;
        struct sim s;
        build(&sc, &s, modes[m]);
        cr_assert_eq(sim_place_replica(&s, 1, 3), 0); /* svc: 40 GiB */
        uint32_t first = s.cl.cards[3].ten[0];
        uint32_t gen = s.cl.tenants[first].gen;
        uint64_t oom0 = s.oom_kills;
        uint32_t svc_reps = service_replicas(&s.svcs[1]);
        int rc = sim_place_replica(&s, 0, 3);
        engine_run(&s.eng, 10 * SIM_SEC);
        cr_expect_eq(s.oom_kills, oom0 + 1, "%s", modes[m]);
        cr_expect_eq(s.cl.cards[3].nten, 1, "%s", modes[m]);
        bool first_alive = s.cl.tenants[first].used && s.cl.tenants[first].gen == gen;
        if (m == 0) {
            cr_expect_eq(rc, 0);
            cr_expect_not(first_alive, "none: svc's replica died of the hog's excess");
            cr_expect_eq(service_replicas(&s.svcs[1]), svc_reps - 1, "and left its card");
        } else {
            cr_expect_eq(rc, 1);
            cr_expect(first_alive, "enforced: svc's replica is untouched");
            cr_expect_eq(service_replicas(&s.svcs[1]), svc_reps);
        }
        simtest_free(&sc, &s);
    }
}

/* Bad input: an unknown quota mode, or a quota on a card that does not time-slice. */
Test(memquota, bad_keys_are_refused_with_their_place)
{
    simtest_expect_rejected("name: q\nduration: 1h\n"
                            "cluster: { nodes: 1, gpus_per_node: 1, sharing: timeslice,\n"
                            "  timeSlicing: { memory_quota: strict } }\n",
                            "bad.yaml:4:32: 'memory_quota'", 0);
    simtest_expect_rejected("name: q\nduration: 1h\n"
                            "cluster: { nodes: 1, gpus_per_node: 1, sharing: timeslice,\n"
                            "  timeSlicing: { memory_quota: strict } }\n",
                            "'memory_quota': expected one of: none, enforced", 1);
    simtest_expect_rejected("name: q\nduration: 1h\n"
                            "cluster: { nodes: 1, gpus_per_node: 1, sharing: mps,\n"
                            "  timeSlicing: { memory_quota: enforced } }\n",
                            "only with 'sharing: timeslice'", 2);
}
