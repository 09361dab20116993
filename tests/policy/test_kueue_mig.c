/* test_kueue_mig.c — the kueue policy on a fleet with a MIG pool (the GPU operator's mixed
 * strategy: a MIG node advertises nvidia.com/mig-<profile>, no nvidia.com/gpu) beside whole
 * H100 cards, with Kueue manifests whose ClusterQueue covers nvidia.com/mig-1g.10gb on the MIG
 * flavor and nvidia.com/gpu on the H100 flavor. Every expected number is traced by hand in the
 * comment above its test. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sim/policy/kueue_admit.h"
#include "tests/polsubmit.h"

/* Pool 0 `mig`: 1 node × 2 A100-80GB, each cut 3g.40gb+2g.20gb+1g.10gb+1g.10gb (cards 0, 1:
 * four 1g.10gb instances in all). Pool 1 `h100`: 1 node × 4 whole H100 (cards 2-5). */
#define MIG_FLEET                                                                        \
    "{ sharing: mig, pools: [\n"                                                         \
    "    {name: mig, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2,\n"                 \
    "     labels: {nvidia.com/mig.config: serve, p: m},\n"                               \
    "     mig: {layout: '3g.40gb+2g.20gb+1g.10gb+1g.10gb'}},\n"                          \
    "    {name: h100, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 4, sharing: none,\n" \
    "     labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}] }"

/* `small` (8 GiB: the smallest profile of the MIG layout that holds it is 1g.10gb) asks for 5
 * replicas; REQUIRE narrows its pools. */
#define SMALL(REQUIRE)                      \
    "services:\n"                           \
    "  - name: small\n"                     \
    "    latency: { a_ms: 1, b_ms: 0.1 }\n" \
    "    replicas: 5\n"                     \
    "    memory_gb: 8\n"                    \
    "    queue: team/q\n" REQUIRE           \
    "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"

#define POLICY                                                       \
    "{ name: kueue, manifests: [tests/data/kueue/mig-mixed.yaml],\n" \
    "  training_queues: {team/q: 1} }"

/* The replicas of service 0 serving on each card (cards[g]) and the profile of each one's
 * instance, which must be 1g.10gb. Returns how many. */
static uint32_t replicas_on(const struct sim *s, uint32_t *cards)
{
    const struct service *sv = &s->svcs[0];
    uint32_t n = 0;
    memset(cards, 0, 6 * sizeof *cards);
    for (uint32_t r = 0; r < sv->nreps; r++) {
        const struct replica *rp = &sv->reps[r];
        if (rp->gone || rp->draining)
            continue;
        cr_assert_lt(rp->gpu, 6u);
        cards[rp->gpu]++;
        n++;
    }
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct card *cd = &s->cl.cards[g];
        for (uint32_t i = 0; i < cd->nten; i++) {
            const struct tenant *tn = &s->cl.tenants[cd->ten[i]];
            if (tn->kind != TENANT_INFER)
                continue;
            cr_assert_geq(tn->instance, 0, "a replica on card %u holds no MIG instance", g);
            cr_assert_str_eq(cd->layout.inst[tn->instance].profile->name, "1g.10gb");
        }
    }
    return n;
}

/* No training tenant on a MIG card (0, 1). */
static void no_training_on_mig(const struct sim *s)
{
    for (uint32_t g = 0; g < 2; g++)
        for (uint32_t i = 0; i < s->cl.cards[g].nten; i++)
            cr_assert_neq(s->cl.tenants[s->cl.cards[g].ten[i]].kind, TENANT_TRAIN,
                          "a training member on MIG card %u", g);
}

/* The team queue's figures per cell: [0] a100-mig / nvidia.com/mig-1g.10gb, [1] h100. */
static void cells(struct sim *s, struct pol_queue_stat *st)
{
    cr_assert_eq(s->pol->queues(s, s->pol_state, st, 1), 1u);
    cr_assert_eq(st->nflavors, 2u);
    cr_assert_str_eq(st->flavors[0].name, "a100-mig:mig-1g.10gb");
    cr_assert_str_eq(st->flavors[1].name, "h100");
    cr_assert_float_eq(st->flavors[0].nominal, 3, 0);
    cr_assert_float_eq(st->flavors[1].nominal, 4, 0);
}

/*
 * By hand. Replicas: `small` may use only the MIG pool (require p: m); one replica is one
 * nvidia.com/mig-1g.10gb; its ClusterQueue has 3 of them. Of its 5 replicas, 3 are admitted
 * and placed on 1g.10gb instances, each on the card whose free 1g.10gb instance comes first
 * (pol_mig_card: equal sizes, lowest card): card 0, card 0, card 1. The other 2 wait for
 * quota although card 1 still has a free 1g.10gb instance (and both cards their 2g.20gb and
 * 3g.40gb): the quota binds, not the cards.
 *
 * Jobs (nvidia.com/gpu, H100 only, nominal 4, no cohort; H100 trains at speed v =
 * pools[1].train_speed): at t = 0 j0 (2 GPUs, 3600 s of work), j1 (2, 7200 s), j2 (2, 1800 s).
 * j0 and j1 are admitted (4 of 4), j2 waits. j0 ends at 3600/v; j2 is admitted then and ends
 * at (3600 + 1800)/v; j1 at 7200/v. Admitted nvidia.com/gpu: 4 at 1000 s, 4 at 3600/v + 100,
 * 2 at 5400/v + 100 (only j1), 0 after 7200/v. mig-1g.10gb admitted: 3 throughout.
 */
Test(kueue_mig, quota_per_resource_mig_instances_and_whole_h100)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s, MIG_FLEET, "", SMALL("    require: { labels: { p: m } }\n"), POLICY);
    double v = s.cl.pools[1].train_speed;
    cr_assert_gt(v, 1.0, "H100 trains faster than A100");
    uint32_t j0 = polsubmit_job(&s, 3600, 2, NULL);
    uint32_t j1 = polsubmit_job(&s, 7200, 2, NULL);
    uint32_t j2 = polsubmit_job(&s, 1800, 2, NULL);
    struct pol_queue_stat st;
    uint32_t on[6];
    const double at[] = {1000, 3600 / v + 100, 5400 / v + 100, 7200 / v + 100};
    const double gpu_admitted[] = {4, 4, 2, 0};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(at[i])), 0);
        cells(&s, &st);
        cr_expect_float_eq(st.flavors[0].admitted, 3, 1e-9, "at %.0f s: mig-1g.10gb admitted %g",
                           at[i], st.flavors[0].admitted);
        cr_expect_float_eq(st.flavors[1].admitted, gpu_admitted[i], 1e-9,
                           "at %.0f s: nvidia.com/gpu admitted %g, want %g", at[i],
                           st.flavors[1].admitted, gpu_admitted[i]);
        cr_expect_eq(replicas_on(&s, on), 3u, "at %.0f s", at[i]);
        cr_expect(on[0] == 2 && on[1] == 1, "replicas on cards 0, 1: %u, %u", on[0], on[1]);
        no_training_on_mig(&s);
        /* Card 1 keeps one 1g.10gb instance free while 2 replicas wait for quota. */
        uint32_t free1g = 0;
        const struct card *c1 = &s.cl.cards[1];
        for (size_t k = 0; k < c1->layout.n; k++)
            free1g += c1->inst_tenant[k] == TENANT_NONE &&
                      !strcmp(c1->layout.inst[k].profile->name, "1g.10gb");
        cr_expect_eq(free1g, 1u, "at %.0f s", at[i]);
        cr_expect_geq(st.pending, 2u, "the 2 replicas beyond the quota wait");
    }
    cr_expect_float_eq(polsubmit_end_s(&s, j0), 3600 / v, 1e-6);
    cr_expect_float_eq(polsubmit_end_s(&s, j2), 5400 / v, 1e-6);
    cr_expect_float_eq(polsubmit_end_s(&s, j1), 7200 / v, 1e-6);
    for (uint32_t j = 0; j < 3; j++)
        for (uint32_t i = 0; i < 2; i++)
            cr_expect_geq(s.tr.jobs[j].gpus[i], 2u, "job %u ran on MIG card", j);
    simtest_free(&sc, &s);
}

/* Services `a` (queue other/q) and `b` (serve/q), 8 GiB each (1g.10gb), on the MIG pool. */
#define TWO_SERVICES(NA, NB)                                           \
    "services:\n"                                                      \
    "  - name: a\n"                                                    \
    "    latency: { a_ms: 1, b_ms: 0.1 }\n"                            \
    "    replicas: " #NA "\n"                                          \
    "    memory_gb: 8\n"                                               \
    "    queue: other/q\n"                                             \
    "    require: { labels: { p: m } }\n"                              \
    "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n" \
    "  - name: b\n"                                                    \
    "    latency: { a_ms: 1, b_ms: 0.1 }\n"                            \
    "    replicas: " #NB "\n"                                          \
    "    memory_gb: 8\n"                                               \
    "    queue: serve/q\n"                                             \
    "    require: { labels: { p: m } }\n"                              \
    "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"

/* Replicas of service svc serving now. */
static uint32_t serving(const struct sim *s, uint32_t svc)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->svcs[svc].nreps; r++)
        n += !s->svcs[svc].reps[r].gone && !s->svcs[svc].reps[r].draining;
    return n;
}

/*
 * By hand. The cohort's 4 mig-1g.10gb (2 nominal in `other`, 2 in `serve`) are the pool's 4
 * 1g.10gb instances. With `b` asking for none, `a`'s 4 replicas are all admitted (other
 * borrows serve's unused 2: borrowed 2, serve lends 2) and fill the 4 instances. With `b`
 * asking for 2 at the start too, Kueue admits the workloads that fit their queue's nominal
 * quota before those that would borrow (a's first 2 and b's 2), and a's last 2 find nothing
 * left to borrow: a serves 2 and waits for 2, b serves 2, each queue holds its nominal 2,
 * nothing borrowed, and the 4 instances hold the 4 replicas. (Reclaim of lent mig quota by a
 * later scale-up is not traced here.)
 */
Test(kueue_mig, cohort_borrowing_on_the_mig_resource)
{
    struct scenario sc;
    struct sim s;
    struct pol_queue_stat st[2];
    const char *pol = "{ name: kueue, manifests: [tests/data/kueue/mig-cohort.yaml],\n"
                      "  training_queues: {other/q: 1} }";
    polsubmit_build(&sc, &s, MIG_FLEET, "", TWO_SERVICES(4, 0), pol);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(600)), 0);
    cr_assert_eq(s.pol->queues(&s, s.pol_state, st, 2), 2u);
    cr_assert_str_eq(st[0].name, "other");
    cr_assert_str_eq(st[0].flavors[0].name, "a100-mig:mig-1g.10gb");
    cr_expect_float_eq(st[0].flavors[0].admitted, 4, 1e-9);
    cr_expect_float_eq(st[0].flavors[0].borrowed, 2, 1e-9);
    cr_expect_float_eq(st[1].flavors[0].lent, 2, 1e-9);
    cr_expect_eq(serving(&s, 0), 4u);
    simtest_free(&sc, &s);

    polsubmit_build(&sc, &s, MIG_FLEET, "", TWO_SERVICES(4, 2), pol);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(600)), 0);
    cr_assert_eq(s.pol->queues(&s, s.pol_state, st, 2), 2u);
    cr_expect_float_eq(st[0].flavors[0].admitted, 2, 1e-9, "other holds %g",
                       st[0].flavors[0].admitted);
    cr_expect_float_eq(st[0].flavors[0].borrowed, 0, 1e-9);
    cr_expect_float_eq(st[1].flavors[0].admitted, 2, 1e-9, "serve holds %g",
                       st[1].flavors[0].admitted);
    cr_expect_eq(st[0].pending, 2u, "a's last 2 replicas wait");
    cr_expect_eq(serving(&s, 0), 2u);
    cr_expect_eq(serving(&s, 1), 2u);
    uint32_t used = 0;
    for (uint32_t g = 0; g < 2; g++)
        used += s.cl.cards[g].nten;
    cr_expect_eq(used, 4u, "the 4 instances hold 4 replicas");
    simtest_free(&sc, &s);
}

/* A service of queue LQ under the HPA, 8 GiB (1g.10gb), its load peaking at PEAK h. */
#define TWO_SCALED(SVC, LQ, PEAK)                     \
    "  - name: " SVC "\n"                             \
    "    latency: { a_ms: 20, b_ms: 5 }\n"            \
    "    batching: { max_batch: 8, max_wait: 5ms }\n" \
    "    memory_gb: 8\n"                              \
    "    queue: " LQ "\n"                             \
    "    require: { labels: { p: m } }\n"             \
    "    arrivals: { synthetic: { peak_rps: 20, trough_ratio: 0.05, peak_hour: " PEAK " } }\n"

/* Workloads admitted in queue cq on cell 0 (mig-1g.10gb) against the replicas of svc serving
 * or starting. */
static void admitted_covers(const struct sim *s, uint32_t cq, uint32_t svc, double *usage,
                            uint32_t *reps)
{
    *usage = kueue_usage_flavor(kueue_policy_kueue(s), cq, 0);
    *reps = 0;
    for (uint32_t r = 0; r < s->svcs[svc].nreps; r++)
        *reps += !s->svcs[svc].reps[r].gone && !s->svcs[svc].reps[r].draining;
}

/*
 * Scale-downs on MIG cards shared by two services' replicas: when the HPA takes a replica of
 * one service off a card that also holds the other's, the workload finished must be that
 * service's (kueue_freed). `b` peaks at 2 h, `a` at 5 h: both reach 2 replicas, one of each
 * on each card (a's workloads first in submission order), and b scales back to 1 at about
 * 10 h while a still has 2 — so a card-only match would finish a's workload on that card
 * (checked: with it, "at 600 min: queue 0 admits 1 < 2 replicas"). At every 15 minutes of
 * 24 h each queue's admitted mig-1g.10gb is at least its service's live replicas, the two
 * together never pass the 4 instances, and each service went to 2 or more and back to 1.
 */
Test(kueue_mig, scale_down_on_a_shared_mig_card_finishes_that_services_workload)
{
    struct scenario sc;
    struct sim s;
    const char *pol = "{ name: kueue, manifests: [tests/data/kueue/mig-cohort.yaml],\n"
                      "  training_queues: {other/q: 1},\n"
                      "  autoscale: { target: 0.7, min: 1, max: 8 } }";
    polsubmit_build(&sc, &s, MIG_FLEET, "",
                    "services:\n" TWO_SCALED("a", "other/q", "5") TWO_SCALED("b", "serve/q", "2"),
                    pol);
    uint32_t most[2] = {0}, least_after[2] = {99, 99};
    for (int i = 1; i <= 96; i++) {
        cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(900.0 * i)), 0);
        for (uint32_t v = 0; v < 2; v++) {
            double usage;
            uint32_t reps;
            admitted_covers(&s, v, v, &usage, &reps);
            cr_assert_geq(usage + 1e-9, reps, "at %d min: queue %u admits %g < %u replicas", 15 * i,
                          v, usage, reps);
            if (reps > most[v])
                most[v] = reps;
            if (most[v] >= 2 && reps < least_after[v])
                least_after[v] = reps;
        }
        cr_assert_leq(kueue_usage_flavor(kueue_policy_kueue(&s), 0, 0) +
                          kueue_usage_flavor(kueue_policy_kueue(&s), 1, 0),
                      4 + 1e-9);
    }
    cr_expect_geq(most[0], 2u, "a scaled up: %u", most[0]);
    cr_expect_geq(most[1], 2u, "b scaled up: %u", most[1]);
    cr_expect_eq(least_after[0], 1u, "a scaled back down to %u", least_after[0]);
    cr_expect_eq(least_after[1], 1u, "b scaled back down to %u", least_after[1]);
    simtest_free(&sc, &s);
}

/*
 * Reclaim of lent mig-1g.10gb (cohort of tests/data/kueue/mig-cohort.yaml, 2 + 2 of the 4
 * instances; serve has reclaimWithinCohort: Any). `a` (other/q) holds 4 replicas fixed, `b`
 * (serve/q) is scaled by the HPA from its trough at t = 0 to its peak at 12 h. At the start
 * Kueue admits what fits nominal first — a's 2, b's 1 — then a's third by borrowing serve's
 * unused instance; a's fourth finds the cohort full. By hand at 1 h: a serves 3 (other
 * admitted 3, borrowed 1), b serves 1. When the HPA asks for b's second replica, serve is
 * within its nominal 2 but the cohort is full: it reclaims the instance it lent by
 * preempting a's borrowing replica, and b's second replica takes that instance. At 12 h: a
 * serves 2 (admitted 2, borrowed 0), b serves 2, all 4 instances used. With
 * reclaimWithinCohort: Never (the same file edited) b would stay at 1 and a at 3.
 */
Test(kueue_mig, reclaim_of_lent_mig_quota_preempts_the_borrowing_replica)
{
    struct scenario sc;
    struct sim s;
    struct pol_queue_stat st[2];
    const char *pol = "{ name: kueue, manifests: [tests/data/kueue/mig-cohort.yaml],\n"
                      "  training_queues: {other/q: 1},\n"
                      "  autoscale: { target: 0.7, min: 1, max: 8 } }";
    polsubmit_build(&sc, &s, MIG_FLEET, "",
                    "services:\n"
                    "  - name: a\n"
                    "    latency: { a_ms: 20, b_ms: 5 }\n"
                    "    replicas: 4\n"
                    "    memory_gb: 8\n"
                    "    queue: other/q\n"
                    "    require: { labels: { p: m } }\n"
                    "    arrivals: { synthetic: { shape: constant, rate_rps: 1 } }\n" TWO_SCALED(
                        "b", "serve/q", "12"),
                    pol);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(3600)), 0);
    cr_assert_eq(s.pol->queues(&s, s.pol_state, st, 2), 2u);
    cr_expect_eq(serving(&s, 0), 3u, "a at 1 h");
    cr_expect_eq(serving(&s, 1), 1u, "b at 1 h");
    cr_expect_float_eq(st[0].flavors[0].admitted, 3, 1e-9);
    cr_expect_float_eq(st[0].flavors[0].borrowed, 1, 1e-9);
    cr_assert_eq(engine_run(&s.eng, sim_time_from_sec(12 * 3600)), 0);
    cr_assert_eq(s.pol->queues(&s, s.pol_state, st, 2), 2u);
    cr_expect_eq(serving(&s, 0), 2u, "a at 12 h");
    cr_expect_eq(serving(&s, 1), 2u, "b at 12 h");
    cr_expect_float_eq(st[0].flavors[0].admitted, 2, 1e-9, "other holds %g",
                       st[0].flavors[0].admitted);
    cr_expect_float_eq(st[0].flavors[0].borrowed, 0, 1e-9);
    cr_expect_float_eq(st[1].flavors[0].admitted, 2, 1e-9, "serve holds %g",
                       st[1].flavors[0].admitted);
    cr_expect_geq(st[0].evictions, 1u, "a's borrowing replica was preempted");
    uint32_t used = 0;
    for (uint32_t g = 0; g < 2; g++)
        used += s.cl.cards[g].nten;
    cr_expect_eq(used, 4u);
    simtest_free(&sc, &s);
}
