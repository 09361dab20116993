/*
 * test_fraction.c — fractional GPUs with memory under the packing policies
 * (issue 11 part 7): a replica or a one-GPU job asks for a card fraction; the
 * card's fractions add up to at most one card; a fractional job allocates its
 * fraction of the card's memory, not the whole-GPU training memory.
 * Hand-counted on two 80 GiB time-sliced cards with 8 slots each.
 */
#include "tests/simtest.h"

static void build(struct scenario *sc, struct sim *s, const char *policy_extra)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: fraction\n"
             "duration: 1h\n"
             "sample_interval: 10m\n"
             "cluster: { nodes: 1, gpus_per_node: 2, sharing: timeslice,\n"
             "           timeSlicing: { replicas: 8 } }\n"
             "services:\n"
             "  - name: svc\n"
             "    latency: { a_ms: 2, b_ms: 0.5, dist: deterministic }\n"
             "    batching: { max_batch: 4, max_wait: 1ms }\n"
             "    memory_gb: 8\n"
             "    gpu_fraction: 0.5\n"
             "    replicas: 1\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 0.1 } }\n"
             "training:\n"
             "  jobs: { synthetic: { per_hour: 0 } }\n"
             "  memory_gb_per_gpu: 40\n"
             "  checkpoint: { interval: none }\n"
             "policy: { name: timeslice, inference_gpus: 1%s }\n",
             policy_extra);
    simtest_build(sc, s, yaml, 1);
}

static uint32_t submit(struct sim *s, double fraction)
{
    struct job_spec spec = {
        .submit = s->eng.now, .work = 1000 * SIM_SEC, .gpus = 1, .gpu_fraction = fraction};
    int64_t id = trainer_submit(&s->tr, &spec);
    cr_assert_geq(id, 0);
    return (uint32_t)id;
}

static double card_share(const struct sim *s, uint32_t g)
{
    double u = 0;
    for (uint32_t i = 0; i < s->cl.cards[g].nten; i++)
        u += tenant_units(&s->cl, &s->cl.tenants[s->cl.cards[g].ten[i]]);
    return u;
}

/*
 * The replica (0.5, 8 GiB) sits on card 0. Three jobs of 0.25: the first two
 * fill card 0 to one card (most-allocated), the third goes to card 1 although
 * card 0 has 5 free slots. Each job allocates 0.25 × 80 = 20 GiB: card 0
 * holds 8 + 20 + 20 = 48 GiB. A job of 0.3 allocates 24 GiB.
 */
Test(fraction, fractions_pack_to_one_card_and_allocate_their_share)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, "");
    cr_assert_eq(s.cl.cards[0].nten + s.cl.cards[1].nten, 1);
    uint32_t rg = s.cl.cards[0].nten ? 0 : 1, other = 1 - rg;
    uint32_t j[3];
    for (int i = 0; i < 3; i++)
        j[i] = submit(&s, 0.25);
    engine_run(&s.eng, 10 * SIM_SEC);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(s.tr.jobs[j[i]].state, JOB_RUNNING, "job %d", i);
    cr_expect_eq(s.cl.cards[rg].nten, 3);
    cr_expect_eq(s.cl.cards[other].nten, 1);
    cr_expect_float_eq(card_share(&s, rg), 1.0, 1e-12);
    double mem = 0;
    for (uint32_t i = 0; i < s.cl.cards[rg].nten; i++)
        mem += s.cl.tenants[s.cl.cards[rg].ten[i]].st.mem_gib;
    cr_expect_float_eq(mem, 48.0, 1e-9);
    cr_expect_float_eq(s.cl.tenants[s.tr.jobs[j[2]].tids[0]].st.mem_gib, 20.0, 1e-9);
    uint32_t k = submit(&s, 0.3);
    engine_run(&s.eng, 20 * SIM_SEC);
    cr_expect_eq(s.tr.jobs[k].state, JOB_RUNNING);
    cr_expect_eq(s.tr.jobs[k].gpus[0], other);
    cr_expect_float_eq(s.cl.tenants[s.tr.jobs[k].tids[0]].st.mem_gib, 24.0, 1e-9);
    cr_expect_eq(s.oom_kills + s.tr.failed, 0);
    simtest_free(&sc, &s);
}

/*
 * Naive packing (check_memory: false), seven 0.25 jobs: the replica's 0.5 and
 * six jobs make two cards' shares, so six run — the replica's card holds
 * 8 + 2 × 20 = 48 GiB, the other 4 × 20 = 80 GiB, exactly full — and the
 * seventh waits although both cards have free slots. None is OOM-killed; at
 * the whole-GPU training memory (40 GiB a member) both cards would overflow
 * (8 + 40 + 40, 4 × 40).
 */
Test(fraction, fractional_jobs_do_not_allocate_whole_gpu_memory)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, ", check_memory: false");
    uint32_t j[7];
    for (int i = 0; i < 7; i++)
        j[i] = submit(&s, 0.25);
    engine_run(&s.eng, 10 * SIM_SEC);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(s.tr.jobs[j[i]].state, JOB_RUNNING, "job %d", i);
    cr_expect_eq(s.tr.jobs[j[6]].state, JOB_QUEUED, "no card has 0.25 left");
    cr_expect_eq(s.oom_kills + s.tr.failed, 0);
    cr_expect_eq(s.cl.cards[0].nten + s.cl.cards[1].nten, 7);
    uint32_t other = s.cl.tenants[s.cl.cards[0].ten[0]].kind == TENANT_INFER ? 1 : 0;
    cr_expect_eq(s.cl.cards[other].nten, 4);
    double mem = 0;
    for (uint32_t i = 0; i < 4; i++)
        mem += s.cl.tenants[s.cl.cards[other].ten[i]].st.mem_gib;
    cr_expect_float_eq(mem, 80.0, 1e-9);
    simtest_free(&sc, &s);
}
