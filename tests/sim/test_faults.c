/*
 * test_faults.c — fatal faults over a run: how many, on which sharing mode,
 * and the restart path.
 *
 * The fault model (docs/models.md "Faults"): every tenant that is up carries
 * one fault clock, exponential with mean 1 / per_tenant_per_hour; a replica
 * that is down (restarting after a fault, or starting) runs no CUDA context
 * and carries none. So over a run the number of faults is Poisson with mean
 * rate × (tenant-time up), whatever the blast radius: the references below
 * are that product (and, for a long restart delay, the renewal-theory count),
 * never a figure the simulator printed.
 *
 * The tests place the replicas by hand (the service asks for none, the
 * `dedicated` policy has no autoscaler), so the tenants never change.
 */
#include <math.h>
#include <string.h>

#include "tests/simtest.h"

/*
 * A run of `hours` on `cards` cards of one sharing mode (`cluster_extra`: the
 * sharing keys; a multiple of 8) with faults at `rate` per tenant-hour and `restart` as the
 * replica restart delay; one light service (0.1 request/s) with no replicas
 * but the one the policy insists on. The test places the others.
 */
static void build(struct scenario *sc, struct sim *s, uint32_t cards, const char *cluster_extra,
                  double rate, const char *restart, double hours, uint64_t seed)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: faults\n"
             "duration: %gh\n"
             "sample_interval: 1h\n"
             "cluster: { nodes: %u, gpus_per_node: 8, %s\n"
             "           faults: { per_tenant_per_hour: %g, restart: %s } }\n"
             "services:\n"
             "  - name: svc\n"
             "    latency: { a_ms: 2, b_ms: 0.5, dist: deterministic }\n"
             "    batching: { max_batch: 4, max_wait: 1ms }\n"
             "    memory_gb: 8\n"
             "    replicas: { count: 0, min: 0, max: 0 }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 0.1 } }\n"
             "policy: { name: dedicated, inference_gpus: 0 }\n",
             hours, cards / 8, cluster_extra, rate, restart);
    simtest_build(sc, s, yaml, seed);
}

/*
 * Fill every card to `per_card` replicas of service 0, up at once (the policy
 * has already put the service's one initial replica on card 0).
 */
static void place_all(struct sim *s, uint32_t per_card)
{
    for (uint32_t g = 0; g < s->cl.ngpus; g++)
        while (s->cl.cards[g].nten < per_card)
            cr_assert_eq(sim_place_replica(s, 0, g), 0, "card %u", g);
    cr_assert_eq(service_replicas(&s->svcs[0]), s->cl.ngpus * per_card);
}

/*
 * Faults over a long run on `cards` cards holding `per_card` replicas each, at
 * 1 per tenant-hour for `hours`, restart delay 1 s. Expected count: rate
 * × tenant-hours up = rate × (tenants × hours − victims × 1 s). The 1 s per
 * victim is exact except for victims killed in the last second of the run
 * (they are down for less), an error below tenants × 1 s × rate = 0.04
 * faults here, far inside σ. Victims per fault: the whole card under
 * time-slicing and MPS, the faulting tenant alone under MIG and exclusive.
 */
static void expect_poisson_count(const char *cluster_extra, uint32_t cards, uint32_t per_card,
                                 double hours, uint32_t blast)
{
    const double rate = 1.0, restart_s = 1.0;
    struct scenario sc;
    struct sim s;
    build(&sc, &s, cards, cluster_extra, rate, "1s", hours, 1);
    place_all(&s, per_card);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    double tenants = (double)cards * per_card;
    double up_h = tenants * hours - (double)s.fault_victims * restart_s / 3600.0;
    double want = rate * up_h, sigma = sqrt(want);
    double got = (double)s.faults;
    cr_log_info("%s %.0f faults, expected %.1f, sigma %.1f", cluster_extra, got, want, sigma);
    cr_expect(fabs(got - want) <= 3 * sigma,
              "%s: %.0f faults, expected %.1f ± %.1f (3σ %.1f) over %.0f tenant-hours",
              cluster_extra, got, want, sigma, 3 * sigma, tenants * hours);
    cr_expect_eq(s.fault_victims, (uint64_t)blast * s.faults,
                 "%s: %llu victims of %llu faults, blast radius %u", cluster_extra,
                 (unsigned long long)s.fault_victims, (unsigned long long)s.faults, blast);
    simtest_expect_conserved(&s);
    simtest_free(&sc, &s);
}

/*
 * 64 cards × 2 tenants × 8 h × 1 /h: 1024 faults expected, σ = 32. (Before
 * the one-clock fix every card-mate's kill added a clock, and this run gave
 * ~354,000.)
 */
Test(faults, timeslice_count_is_rate_times_tenant_hours)
{
    expect_poisson_count("sharing: timeslice, timeSlicing: { replicas: 2 },", 64, 2, 8, 2);
}

/* MPS, three clients a card, 4 h: 768 expected, σ ≈ 28. */
Test(faults, mps_count_is_rate_times_tenant_hours)
{
    expect_poisson_count("sharing: mps, mps: { replicas: 3 },", 64, 3, 4, 3);
}

/* MIG, two instances a card: a fault kills its instance only. 1024 expected. */
Test(faults, mig_count_is_rate_times_tenant_hours)
{
    expect_poisson_count("sharing: mig, mig: { layout: 4g.40gb+3g.40gb },", 64, 2, 8, 1);
}

Test(faults, exclusive_count_is_rate_times_tenant_hours)
{
    expect_poisson_count("", 128, 1, 8, 1);
}

/*
 * A down replica cannot fault. Exclusive cards, rate 1 /h, restart delay
 * d = 1 h: each replica alternates an exponential up time of mean μ = 1 h and
 * a fixed 1 h down, a renewal process of cycle c = up + d, mean m = μ + d,
 * E[c²] = μ² + m². Its k-th fault is at S_k − d (S_k the k-th cycle end), so
 * faults in [0, T] = renewals in [0, T + d], whose mean is (T + d)/m +
 * E[c²]/(2m²) − 1 + o(1) (Smith's renewal theorem, second order) and whose
 * variance is T·Var(c)/m³ = T·μ²/m³ (renewal CLT). T = 40 h on 64 cards:
 * 1288 expected, σ ≈ 18. If down replicas could fault the count would be
 * rate × T per replica, 2560.
 */
Test(faults, a_replica_down_restarting_cannot_fault)
{
    const uint32_t cards = 64;
    const double mu = 1.0, d = 1.0, T = 40.0;
    struct scenario sc;
    struct sim s;
    build(&sc, &s, cards, "", 1 / mu, "1h", T, 1);
    place_all(&s, 1);
    cr_assert_eq(sim_run(&s, NULL), 0, "%s", s.err);
    double m = mu + d;
    double want = cards * ((T + d) / m + (mu * mu + m * m) / (2 * m * m) - 1);
    double sigma = sqrt(cards * T * mu * mu / (m * m * m));
    cr_log_info("restart 1 h: %llu faults, expected %.1f, sigma %.1f", (unsigned long long)s.faults,
                want, sigma);
    cr_expect(fabs((double)s.faults - want) <= 3 * sigma, "%llu faults, expected %.1f ± %.1f (3σ)",
              (unsigned long long)s.faults, want, 3 * sigma);
    cr_expect_eq(s.fault_victims, s.faults);
    simtest_free(&sc, &s);
}

/* Pending fault clocks of tenant tid: 1 or 0 (the handle is the only record). */
static int clocks(const struct sim *s, uint32_t tid)
{
    return evq_is_pending(&s->eng.q, s->cl.tenants[tid].fault_ev);
}

/*
 * One clock per tenant that is up, none while down, none after leaving.
 * Time-sliced card 0 with two replicas, a fault clock of mean 1000 h (it does
 * not run out here): a fault injected into one stops both clocks; both start
 * again when the replicas are up 60 s later; a replica taken out takes its
 * clock with it. Counted in the event queue itself: its live events are the
 * two clocks plus the sampler (the service has no arrivals before 100 s).
 */
Test(faults, one_clock_per_tenant_up_none_down_none_gone)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, 8, "sharing: timeslice, timeSlicing: { replicas: 2 },", 0.001, "60s", 1, 3);
    cr_assert_eq(sim_place_replica(&s, 0, 0), 0); /* beside the policy's one */
    uint32_t a = s.cl.cards[0].ten[0], b = s.cl.cards[0].ten[1];
    cr_expect_eq(clocks(&s, a) + clocks(&s, b), 2);
    engine_run(&s.eng, sim_time_from_sec(10));
    cr_expect_eq(sim_inject_fault(&s, b), 2);
    cr_expect_eq(clocks(&s, a) + clocks(&s, b), 0, "a replica down has no clock");
    cr_expect_eq(sim_inject_fault(&s, a), 0, "a replica down cannot fault");
    cr_expect_eq(s.faults, 1);
    cr_expect_eq(s.fault_victims, 2);
    engine_run(&s.eng, sim_time_from_sec(69));
    cr_expect(s.svcs[0].reps[0].down && s.svcs[0].reps[1].down);
    engine_run(&s.eng, sim_time_from_sec(71));
    cr_expect(!s.svcs[0].reps[0].down && !s.svcs[0].reps[1].down, "up after the 60 s restart");
    cr_expect_eq(clocks(&s, a), 1);
    cr_expect_eq(clocks(&s, b), 1);
    struct evq_handle hb = s.cl.tenants[b].fault_ev;
    size_t live = evq_size(&s.eng.q);
    cr_assert_eq(service_remove_replica(&s.svcs[0], s.cl.tenants[b].member), 0);
    cr_expect(!evq_is_pending(&s.eng.q, hb), "the clock left with its tenant");
    cr_expect_eq(evq_size(&s.eng.q), live - 1);
    simtest_free(&sc, &s);
}

/*
 * The restart path names the replica, not its slot. Replica A (slot 0, card
 * 0) faults at 10 s: its restart is due at 70 s. At 20 s A is scaled down
 * while still down; at 30 s replica B starts on card 1 with a 120 s start-up
 * delay and takes the free slot 0. A's restart at 70 s must leave B alone: B
 * serves from 150 s, not 70 s.
 */
Test(faults, restart_of_a_removed_replica_does_not_start_its_slot_successor)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, 8, "", 0, "60s", 1, 3);
    struct service *sv = &s.svcs[0];
    cr_assert_eq(sv->nreps, 1);
    uint32_t ta = sv->reps[0].tid;
    engine_run(&s.eng, sim_time_from_sec(10));
    cr_assert_eq(sim_inject_fault(&s, ta), 1);
    engine_run(&s.eng, sim_time_from_sec(20));
    uint32_t gpu;
    cr_assert_eq(sim_stop_replica(&s, 0, &gpu), 0);
    cr_expect_eq(gpu, 0);
    cr_assert(sv->reps[0].gone);
    engine_run(&s.eng, sim_time_from_sec(30));
    cr_assert_eq(sim_start_replica(&s, 0, 1, sim_time_from_sec(120)), 0);
    cr_assert_eq(sv->nreps, 1, "B reuses slot 0");
    cr_expect_eq(sv->reps[0].gpu, 1);
    cr_expect(sv->reps[0].down, "B is starting");
    engine_run(&s.eng, sim_time_from_sec(100));
    cr_expect(sv->reps[0].down, "A's restart at 70 s brought B up early");
    engine_run(&s.eng, sim_time_from_sec(149));
    cr_expect(sv->reps[0].down);
    engine_run(&s.eng, sim_time_from_sec(151));
    cr_expect(!sv->reps[0].down, "B up at 150 s");
    cr_expect_eq(service_replicas(sv), 1);
    simtest_free(&sc, &s);
}

/*
 * A replica draining (scaled down while busy) and killed by a card-mate's
 * fault leaves its card at once: its batch is lost and it never comes back.
 * Time-sliced card 0 with two replicas; run event by event until one is
 * busy, scale that one down (it drains), then fault the other.
 */
Test(faults, a_draining_replica_killed_leaves_for_good)
{
    struct scenario sc;
    struct sim s;
    build(&sc, &s, 8, "sharing: timeslice, timeSlicing: { replicas: 2 },", 0, "1s", 1, 3);
    struct service *sv = &s.svcs[0];
    cr_assert_eq(sim_place_replica(&s, 0, 0), 0);
    while (sv->in_service == 0) {
        sim_time next = evq_peek_time(&s.eng.q);
        cr_assert_lt(next, SIM_HOUR, "no batch started");
        engine_run(&s.eng, next);
    }
    uint32_t busy = sv->reps[0].busy ? 0 : 1, other = 1 - busy;
    cr_assert(sv->reps[busy].busy && !sv->reps[other].busy);
    uint64_t lost = sv->in_service;
    cr_assert_eq(service_remove_replica(sv, busy), 0);
    cr_assert(sv->reps[busy].draining);
    cr_expect_eq(sim_inject_fault(&s, sv->reps[other].tid), 2);
    cr_expect(sv->reps[busy].gone && !sv->reps[busy].draining, "the draining replica left");
    cr_expect_eq(s.cl.cards[0].nten, 1);
    cr_expect_eq(sv->tot.failed, lost);
    engine_run(&s.eng, s.eng.now + sim_time_from_sec(2));
    cr_expect(!sv->reps[other].down, "the other is up after its 1 s restart");
    cr_expect(sv->reps[busy].gone, "the drained replica came back");
    cr_expect_eq(service_replicas(sv), 1);
    cr_expect_eq(s.cl.cards[0].nten, 1);
    simtest_free(&sc, &s);
}

/*
 * Checkpoint intervals from Young's or Daly's formula (issue 11 part 8), in a
 * run with no services and no job stream: the test starts one job by hand on
 * the first `gpus` cards. Save time C = state / 2 GB/s + 5 s.
 */
static uint32_t one_job(struct scenario *sc, struct sim *s, const char *cluster,
                        const char *checkpoint, uint32_t gpus)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "name: ckpt\n"
             "duration: 10d\n"
             "sample_interval: 1h\n"
             "cluster: %s\n"
             "training:\n"
             "  jobs: { synthetic: { per_hour: 0 } }\n"
             "  checkpoint: %s\n",
             cluster, checkpoint);
    simtest_build(sc, s, yaml, 1);
    s->tr.on_requeue = s->tr.on_finish = s->tr.on_submit = NULL;
    struct job_spec spec = {.work = 10 * SIM_HOUR, .gpus = gpus, .gpu_fraction = 1, .params_b = 0};
    int64_t j = trainer_submit(&s->tr, &spec);
    cr_assert_geq(j, 0);
    uint32_t cards[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    cr_assert_eq(trainer_start(&s->tr, (uint32_t)j, cards), 0);
    return (uint32_t)j;
}

/*
 * interval: daly, mtbf: 8 h, 110 GB of state: C = 110/2 + 5 = 60 s, M =
 * 28,800 s. By hand: √(2CM) = √3,456,000 = 1859.0320 s; C/2M = 1/960,
 * √(1/960)/3 = 0.0107583, (1/960)/9 = 0.0001157; 1859.0320 × 1.0108740 − 60 =
 * 1819.2472 s. The run checkpoints then: none by 1818 s of running, the first
 * one done by 1819.25 + 60 s.
 */
Test(faults, daly_interval_is_the_one_the_run_uses)
{
    struct scenario sc;
    struct sim s;
    uint32_t j = one_job(&sc, &s, "{ nodes: 1, gpus_per_node: 1 }",
                         "{ interval: daly, mtbf: 8h, state_gb_per_gpu: 110 }", 1);
    const struct job *jb = &s.tr.jobs[j];
    cr_expect_float_eq(jb->save_s, 60.0, 1e-9);
    cr_expect_float_eq(jb->interval_s, 1819.2472, 1e-3);
    cr_expect_eq(jb->next_save, sim_time_from_sec(1819.2471719));
    engine_run(&s.eng, sim_time_from_sec(1818));
    cr_expect_eq(s.tr.jobs[j].checkpoints, 0);
    engine_run(&s.eng, sim_time_from_sec(1819.2472 + 60 + 0.001));
    cr_expect_eq(s.tr.jobs[j].checkpoints, 1);
    simtest_free(&sc, &s);
}

/*
 * mtbf: faults. Time-sliced cards of 2 tenants at 0.5 faults per tenant-hour:
 * each member of a 4-GPU job dies at 2 × 0.5 /h (its own faults and its
 * card-mate's), the job at 4 /h: M = 900 s. 4 × 27.5 GB of state: C = 60 s.
 * Daly by hand: √(2·60·900) = √108,000 = 328.6335 s; C/2M = 1/30,
 * √(1/30)/3 = 0.0608581, (1/30)/9 = 0.0037037; 328.6335 × 1.0645618 − 60 =
 * 289.8507 s. On exclusive cards at 2 /h one member dies at 2 /h: Young with
 * M = 1800 s is √(2·60·1800) = √216,000 = 464.7580 s.
 */
Test(faults, mtbf_from_the_fault_settings)
{
    struct scenario sc;
    struct sim s;
    uint32_t j = one_job(&sc, &s,
                         "{ nodes: 1, gpus_per_node: 4, sharing: timeslice,\n"
                         "    timeSlicing: { replicas: 2 }, faults: { per_tenant_per_hour: 0.5 } }",
                         "{ interval: daly, mtbf: faults, state_gb_per_gpu: 27.5 }", 4);
    cr_expect_float_eq(s.tr.jobs[j].save_s, 60.0, 1e-9);
    cr_expect_float_eq(s.tr.jobs[j].interval_s, 289.8507, 1e-3);
    cr_expect_eq(s.tr.jobs[j].next_save, sim_time_from_sec(289.8506957));
    simtest_free(&sc, &s);

    j = one_job(&sc, &s, "{ nodes: 1, gpus_per_node: 1, faults: { per_tenant_per_hour: 2 } }",
                "{ interval: young, mtbf: faults, state_gb_per_gpu: 110 }", 1);
    cr_expect_float_eq(s.tr.jobs[j].interval_s, 464.7580, 1e-3);
    simtest_free(&sc, &s);
}

Test(faults, mtbf_from_faults_needs_faults)
{
    simtest_expect_rejected("name: x\n"
                            "duration: 1h\n"
                            "cluster: { nodes: 1 }\n"
                            "training:\n"
                            "  checkpoint: { interval: daly, mtbf: faults }\n",
                            "'faults' needs cluster.faults.per_tenant_per_hour > 0", 0);
}
