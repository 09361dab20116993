/*
 * test_mixed_modes.c — pools of different sharing modes in one fleet (docs/scenario.md
 * "Pools of different sharing modes"), each against an independent reference:
 *   - a MIG pool beside a time-sliced pool, a service required onto each: each service's
 *     served requests, waits and replica busy time equal those of a run of its pool alone
 *     (same seed), where the pool's mode is the cluster's;
 *   - tenants per card follow each card's own pool: 3 one-GPU jobs share a card of a pool
 *     with replicas 3, each at (1 − o) / 3 of the card (models/share.h: equal slices less
 *     the switch overhead o = 0.05), a 4th waits; the MIG card takes one job per
 *     instance of its 2-instance layout and never a third;
 *   - faults per pool: a MIG pool of 2 replicas and a time-sliced card of 4 replicas, one
 *     fault per tenant-hour: each pool's faults are Poisson with mean rate × its own
 *     tenants × hours (400 and 800), and a fault kills 1 tenant on the MIG card, all 4 on
 *     the time-sliced one (exactly);
 *   - three pools, three modes: each card runs its own pool's model (time-slicing's
 *     (1 − o) / n, MPS max-min share less interference and its replicas' memory split, the
 *     MIG instance speed), all by hand;
 *   - mtbf: faults follows each job's cards (Young's interval by hand);
 *   - each pool's sharing_from gives its mode; a time-sliced pool whose mig.config label
 *     enables MIG is refused;
 *   - each policy runs the MIG + time-sliced fleet or refuses it with its message (kueue
 *     with its built-in queues and with manifests covering nvidia.com/mig-<profile>);
 *   - malformed combinations named at file:line:col.
 */
#include <math.h>
#include <string.h>

#include "sim/policy/kueue_admit.h"
#include "tests/polsubmit.h"

/* A 1-card MIG pool (two 3g.40gb) and a 1-card pool time-sliced by `replicas`. */
#define MIXED_POOLS(REPLICAS)                                                               \
    "cluster:\n"                                                                            \
    "  pools:\n"                                                                            \
    "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, labels: { p: m },\n" \
    "        sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } }\n"                          \
    "    - { name: t, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, labels: { p: t },\n" \
    "        sharing: timeslice, timeSlicing: { replicas: " #REPLICAS " } }\n"

#define SVC(NAME, POOL, RPS)                                              \
    "  - name: " NAME "\n"                                                \
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.2 }\n" \
    "    batching: { max_batch: 8, max_wait: 5ms }\n"                     \
    "    slo: { p99_ms: 40 }\n"                                           \
    "    replicas: 2\n"                                                   \
    "    memory_gb: 10\n"                                                 \
    "    require: { labels: { p: " POOL " } }\n"                          \
    "    arrivals: { synthetic: { peak_rps: " RPS ", trough_ratio: 0.3, peak_hour: 2 } }\n"

#define HEAD    "name: mixed\nseed: 7\nduration: 4h\nsample_interval: 10m\n"
#define NOTRAIN "training: { jobs: { synthetic: { per_hour: 0 } } }\n"

static const struct service *svc_named(const struct sim *s, const char *name)
{
    for (uint32_t i = 0; i < s->nsvcs; i++)
        if (!strcmp(s->svcs[i].cfg->name, name))
            return &s->svcs[i];
    cr_assert_fail("no service %s", name);
    return NULL;
}

/* The figures of service `name` in both runs agree (the same requests, the same batches). */
static void expect_same_service(const struct sim *a, const struct sim *b, const char *name)
{
    const struct service *x = svc_named(a, name), *y = svc_named(b, name);
    cr_expect_gt(x->tot.served, 1000u, "%s: something served", name);
    cr_expect_eq(x->tot.arrived, y->tot.arrived, "%s arrived", name);
    cr_expect_eq(x->tot.served, y->tot.served, "%s served", name);
    cr_expect_eq(x->tot.within_slo, y->tot.within_slo, "%s within SLO", name);
    cr_expect_eq(x->tot.batches, y->tot.batches, "%s batches", name);
    cr_expect(fabs(x->tot.wait_us - y->tot.wait_us) <= 1e-9 * y->tot.wait_us, "%s wait %f vs %f",
              name, x->tot.wait_us, y->tot.wait_us);
    cr_expect(fabs(x->tot.busy_us - y->tot.busy_us) <= 1e-9 * y->tot.busy_us, "%s busy %f vs %f",
              name, x->tot.busy_us, y->tot.busy_us);
}

Test(mixed_modes, each_pool_serves_as_it_does_alone)
{
    /* mig-static takes the time-sliced card by its slots: both replicas of `ts` on it. */
    static const char *const mixed = HEAD MIXED_POOLS(2) "services:\n" SVC("mig", "m", "400")
        SVC("ts", "t", "300") NOTRAIN "policy: { name: mig-static }\n";
    /* Each pool alone, its mode the cluster's: MIG under mig-static, time-slicing under the
     * timeslice policy (two replicas, two slots of the one card). */
    static const char *const mig_alone =
        HEAD "cluster:\n  sharing: mig\n  mig: { layout: '3g.40gb+3g.40gb' }\n  pools:\n"
             "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, labels: { p: m } "
             "}\n"
             "services:\n" SVC("mig", "m", "400") NOTRAIN "policy: { name: mig-static }\n";
    static const char *const ts_alone =
        HEAD "cluster:\n  sharing: timeslice\n  timeSlicing: { replicas: 2 }\n  pools:\n"
             "    - { name: t, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1, labels: { p: t } "
             "}\n"
             "services:\n" SVC("ts", "t", "300") NOTRAIN "policy: { name: timeslice }\n";
    struct scenario sm, sa, sb;
    struct sim m, a, b;
    simtest_run(&sm, &m, mixed, 7);
    cr_assert(sm.mixed, "pools of two modes");
    cr_expect_eq(m.cl.pools[0].mode, SHARE_MIG);
    cr_expect_eq(m.cl.pools[1].mode, SHARE_TIMESLICE);
    cr_expect_eq(m.cl.pools[1].slots, 2u);
    /* The two `ts` replicas share card 1; the `mig` ones hold an instance each on card 0. */
    cr_expect_eq(m.cl.cards[1].nten, 2u);
    cr_expect_eq(m.cl.cards[0].nten, 2u);
    for (uint32_t i = 0; i < m.cl.cards[0].nten; i++)
        cr_expect_eq(m.cl.tenants[m.cl.cards[0].ten[i]].instance, (int)i);
    simtest_run(&sa, &a, mig_alone, 7);
    simtest_run(&sb, &b, ts_alone, 7);
    cr_expect_eq(b.cl.cards[0].nten, 2u, "both replicas on the one card alone too");
    expect_same_service(&m, &a, "mig");
    expect_same_service(&m, &b, "ts");
    /* The two modes did give the services different batch times (the equalities above
     * are not those of two identical set-ups). */
    const struct service *x = svc_named(&m, "mig"), *y = svc_named(&m, "ts");
    cr_expect(
        fabs(x->tot.busy_us / (double)x->tot.served - y->tot.busy_us / (double)y->tot.served) > 1.0,
        "per-request busy time differs between the modes");
    simtest_free(&sm, &m);
    simtest_free(&sa, &a);
    simtest_free(&sb, &b);
}

static void build_jobs(struct scenario *sc, struct sim *s, const char *training)
{
    polsubmit_build(sc, s,
                    "{ pools: ["
                    " { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
                    "   labels: { p: m }, sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } },"
                    " { name: t, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
                    "   labels: { p: t }, sharing: timeslice, timeSlicing: { replicas: 3 } } ] }",
                    training, NULL, "{ name: mig-static }");
}

Test(mixed_modes, tenants_per_card_follow_the_cards_pool)
{
    struct scenario sc;
    struct sim s;
    /* Required onto the time-sliced pool: three jobs share its card, a fourth waits
     * although both MIG instances are free. */
    build_jobs(&sc, &s, "  memory_gb_per_gpu: 20\n  require: { labels: { p: t } }\n");
    uint32_t j[4];
    for (int i = 0; i < 4; i++)
        j[i] = polsubmit_job(&s, 3600, 1, NULL);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(s.tr.jobs[j[i]].state, JOB_RUNNING, "job %d", i);
        cr_expect_eq(s.tr.jobs[j[i]].gpus[0], 1u, "on the time-sliced card");
    }
    cr_expect_eq(s.tr.jobs[j[3]].state, JOB_QUEUED, "the card's 3 replicas are taken");
    cr_expect_eq(s.cl.cards[0].nten, 0u, "the MIG pool is not required");
    cr_assert_eq(s.cl.cards[1].nten, 3u);
    /* Equal slices: each gets (1 − o) / 3 of the card, o = 0.05 (SHARE_TS_OVERHEAD_DEFAULT). */
    for (uint32_t i = 0; i < 3; i++) {
        const struct tenant *t = &s.cl.tenants[s.cl.cards[1].ten[i]];
        cr_expect(fabs(t->speed - 0.95 / 3) < 1e-12, "tenant %u at %.15f", i, t->speed);
        cr_expect_eq(t->instance, -1);
    }
    simtest_free(&sc, &s);

    /* Anywhere: whole-card places first (the time-sliced card's 3), then one job per
     * 3g.40gb instance of the MIG card; the 6th and 7th wait. */
    build_jobs(&sc, &s, "  memory_gb_per_gpu: 20\n");
    uint32_t k[7];
    for (int i = 0; i < 7; i++)
        k[i] = polsubmit_job(&s, 3600, 1, NULL);
    cr_expect_eq(s.cl.cards[1].nten, 3u, "replicas: 3");
    cr_expect_eq(s.cl.cards[0].nten, 2u, "two instances, never a third tenant");
    for (uint32_t i = 0; i < s.cl.cards[0].nten; i++) {
        const struct tenant *t = &s.cl.tenants[s.cl.cards[0].ten[i]];
        cr_expect_eq(t->instance, (int)i, "one tenant per instance");
        cr_expect(fabs(t->speed - mig_knobs_speed(cluster_card_mig(&s.cl, 0),
                                                  s.cl.cards[0].layout.inst[i].profile)) < 1e-12);
    }
    cr_expect_eq(s.tr.jobs[k[5]].state, JOB_QUEUED);
    cr_expect_eq(s.tr.jobs[k[6]].state, JOB_QUEUED);
    /* Both cards full: running the loop places nothing more until a job ends. */
    simtest_free(&sc, &s);
}

Test(mixed_modes, faults_per_pool_follow_its_own_tenants)
{
    /* 2 replicas on the MIG card's 2 instances, 4 on the time-sliced card (replicas 4); one
     * fault per tenant-hour, restart at once: tenant-hours = replicas × 200 h. */
    static const char *const yaml =
        "name: faults\nseed: 3\nduration: 200h\nsample_interval: 1h\n" MIXED_POOLS(
            4) "  faults: { per_tenant_per_hour: 1, restart: 0s }\n"
               "services:\n"
               "  - { name: a, latency: { a_ms: 1, b_ms: 0.1 }, batching: { max_batch: 4, "
               "max_wait: 5ms },\n"
               "      replicas: 2, memory_gb: 10, require: { labels: { p: m } },\n"
               "      arrivals: { synthetic: { shape: constant, rate_rps: 0.2 } } }\n"
               "  - { name: b, latency: { a_ms: 1, b_ms: 0.1 }, batching: { max_batch: 4, "
               "max_wait: 5ms },\n"
               "      replicas: 4, memory_gb: 10, require: { labels: { p: t } },\n"
               "      arrivals: { synthetic: { shape: constant, rate_rps: 0.2 } } }\n" NOTRAIN
               "policy: { name: mig-static }\n";
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, yaml, 3);
    cr_assert_eq(s.cl.cards[0].nten, 2u);
    cr_assert_eq(s.cl.cards[1].nten, 4u);
    double fm = (double)s.pool_faults[0], ft = (double)s.pool_faults[1];
    /* Poisson: mean λ, sd √λ; 4 sd either side. */
    cr_expect(fabs(fm - 400) < 4 * 20, "MIG pool: %.0f faults, expected 400 ± 80", fm);
    cr_expect(fabs(ft - 800) < 4 * sqrt(800), "time-sliced pool: %.0f faults, expected 800", ft);
    cr_expect_eq(s.pool_faults[0] + s.pool_faults[1], s.faults);
    /* Blast radius by the card's own mode: its instance on MIG, the whole card time-sliced. */
    cr_expect_eq(s.pool_fault_victims[0], s.pool_faults[0]);
    cr_expect_eq(s.pool_fault_victims[1], 4 * s.pool_faults[1]);
    simtest_free(&sc, &s);
}

/* ---- each policy on the MIG + time-sliced fleet ---- */

/* Two cards a pool: the MIG pool's cut in two 3g.40gb, the other's time-sliced by 2. */
static const char *const pol_fleet = HEAD
    "cluster:\n"
    "  pools:\n"
    "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2, labels: { p: m },\n"
    "        sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } }\n"
    "    - { name: t, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 2, labels: { p: t },\n"
    "        sharing: timeslice, timeSlicing: { replicas: 2 } }\n"
    "services:\n" SVC("mig", "m", "100") SVC(
        "ts", "t", "100") "training:\n  memory_gb_per_gpu: 20\n  require: { labels: { p: t } }\n"
                          "  jobs: { synthetic: { per_hour: 0 } }\n";

static void policy_refuses(const char *policy, const char *why)
{
    char yaml[4096];
    snprintf(yaml, sizeof(yaml), "%spolicy: { name: %s }\n", pol_fleet, policy);
    struct scenario sc;
    struct conf_err err;
    int rc = scenario_load_string(&sc, "fleet.yaml", yaml, &err);
    cr_assert_lt(rc, 0, "policy %s accepted the mixed fleet", policy);
    cr_expect(strstr(err.msg, "policy '") && strstr(err.msg, "does not model this mixed fleet "
                                                             "(pool 'm' mig, pool 't' timeslice)"),
              "%s", err.msg);
    cr_expect(strstr(err.msg, why), "%s: %s", policy, err.msg);
    cr_expect(strstr(err.msg, "fleet.yaml:") == err.msg, "file:line:col: %s", err.msg);
}

static void policy_runs(const char *policy, struct scenario *sc, struct sim *s)
{
    char yaml[4096];
    snprintf(yaml, sizeof(yaml), "%spolicy: { name: %s }\n", pol_fleet, policy);
    simtest_run(sc, s, yaml, 7);
    simtest_expect_conserved(s);
}

Test(mixed_modes, policy_dedicated_runs_one_pod_a_card)
{
    struct scenario sc;
    struct sim s;
    policy_runs("dedicated", &sc, &s);
    /* Four replicas, two required onto each pool of two cards: one pod a card. */
    for (uint32_t g = 0; g < 4; g++) {
        cr_assert_eq(s.cl.cards[g].nten, 1u, "card %u", g);
        const struct tenant *t = &s.cl.tenants[s.cl.cards[g].ten[0]];
        cr_expect_eq(t->instance, g < 2 ? 0 : -1, "card %u: an instance on MIG only", g);
        cr_expect_str_eq(s.svcs[t->owner].cfg->name, g < 2 ? "mig" : "ts");
    }
    cr_expect_eq(svc_named(&s, "mig")->tot.dropped + svc_named(&s, "ts")->tot.dropped, 0u);
    simtest_free(&sc, &s);
}

Test(mixed_modes, policy_mig_static_runs_instances_and_slots)
{
    struct scenario sc;
    struct sim s;
    policy_runs("mig-static", &sc, &s);
    /* The smallest place first, lowest card on ties: card 0's two instances, card 2's two
     * time-slicing slots; cards 1 and 3 stay free. */
    uint32_t want[4] = {2, 0, 2, 0};
    for (uint32_t g = 0; g < 4; g++)
        cr_expect_eq(s.cl.cards[g].nten, want[g], "card %u: %u tenants", g, s.cl.cards[g].nten);
    for (uint32_t i = 0; i < s.cl.cards[0].nten; i++)
        cr_expect_eq(s.cl.tenants[s.cl.cards[0].ten[i]].instance, (int)i);
    simtest_free(&sc, &s);
}

Test(mixed_modes, policy_timeslice_refuses)
{
    policy_refuses("timeslice", "not on MIG instances");
}

Test(mixed_modes, policy_mps_refuses)
{
    policy_refuses("mps", "not on MIG instances or time-sliced cards");
}

/*
 * kueue, with the built-in queues and with tests/data/kueue/mig-ts.yaml (nvidia.com/mig-3g.40gb
 * on the MIG flavor, nvidia.com/gpu on the time-sliced one), the same placement: `mig` (10 GB:
 * the smallest profile of '3g.40gb+3g.40gb' holding it is 3g.40gb) has its 2 replicas on
 * 3g.40gb instances, both on card 0 (equal instances: the lowest card); `ts` has its 2 on
 * cards 2 and 3, one a card (kueue takes whole cards): 2 of 4 mig-3g.40gb and 2 nvidia.com/gpu
 * admitted. Built-in quotas: inference_gpus defaults to the 4 replicas; the 2 MIG cards count
 * for inference first, so the inference queue's nvidia.com/gpu nominal is 4 − 2 = 2, and its
 * mig-3g.40gb nominal the pool's 4 instances. A single-pool MIG cluster is refused.
 */
static void kueue_mig_ts_placement(const struct sim *s)
{
    uint32_t mig_on[4] = {0}, ts_on[4] = {0};
    for (uint32_t g = 0; g < 4; g++)
        for (uint32_t i = 0; i < s->cl.cards[g].nten; i++) {
            const struct tenant *t = &s->cl.tenants[s->cl.cards[g].ten[i]];
            cr_assert_eq(t->kind, TENANT_INFER);
            if (!strcmp(s->svcs[t->owner].cfg->name, "mig")) {
                mig_on[g]++;
                cr_assert_geq(t->instance, 0);
                cr_expect_str_eq(s->cl.cards[g].layout.inst[t->instance].profile->name, "3g.40gb");
            } else {
                ts_on[g]++;
            }
        }
    cr_expect(mig_on[0] == 2 && mig_on[1] == 0 && mig_on[2] + mig_on[3] == 0, "mig: %u %u %u %u",
              mig_on[0], mig_on[1], mig_on[2], mig_on[3]);
    cr_expect(ts_on[2] == 1 && ts_on[3] == 1 && ts_on[0] + ts_on[1] == 0, "ts: %u %u %u %u",
              ts_on[0], ts_on[1], ts_on[2], ts_on[3]);
}

Test(mixed_modes, policy_kueue_runs_with_mig_quota)
{
    char yaml[4096];
    struct scenario sc;
    struct sim s;
    snprintf(yaml, sizeof(yaml), "%spolicy: { name: kueue }\n", pol_fleet);
    simtest_run(&sc, &s, yaml, 7);
    simtest_expect_conserved(&s);
    kueue_mig_ts_placement(&s);
    const struct kueue *q = kueue_policy_kueue(&s);
    cr_assert_not_null(q);
    /* Built-in cells: 0 nvidia.com/gpu, 1 nvidia.com/mig-3g.40gb; queue 0 is inference. */
    cr_expect_float_eq(kueue_usage_flavor(q, 0, 1), 2, 1e-9);
    cr_expect_float_eq(kueue_usage_flavor(q, 0, 0), 2, 1e-9);
    cr_expect_float_eq(kueue_cq_potential_mask((struct kueue *)q, 0, 2u), 4, 1e-9,
                       "the inference queue's mig-3g.40gb quota: the 4 instances");
    cr_expect_float_eq(kueue_cq_potential_mask((struct kueue *)q, 1, 1u), 2, 1e-9,
                       "training: the 2 whole cards (nominal 0 + borrowable 2)");
    simtest_free(&sc, &s);

    snprintf(yaml, sizeof(yaml),
             "%spolicy: { name: kueue, manifests: [tests/data/kueue/mig-ts.yaml],\n"
             "  inference_queue: all/q }\n",
             pol_fleet);
    simtest_run(&sc, &s, yaml, 7);
    simtest_expect_conserved(&s);
    kueue_mig_ts_placement(&s);
    struct pol_queue_stat st;
    cr_assert_eq(s.pol->queues(&s, s.pol_state, &st, 1), 1u);
    cr_assert_eq(st.nflavors, 2u);
    cr_expect_str_eq(st.flavors[0].name, "mig:mig-3g.40gb");
    cr_expect_float_eq(st.flavors[0].admitted, 2, 1e-9);
    cr_expect_float_eq(st.flavors[0].nominal, 4, 0);
    cr_expect_float_eq(st.flavors[1].admitted, 2, 1e-9);
    simtest_free(&sc, &s);

    simtest_expect_rejected(HEAD "cluster:\n  sharing: mig\n  nodes: 1\n  gpus_per_node: 2\n"
                                 "  mig: { layout: '3g.40gb+3g.40gb' }\n"
                                 "policy: { name: kueue }\n",
                            "kueue on MIG instances needs cluster.pools", 0);
}

Test(mixed_modes, policy_kai_refuses)
{
    policy_refuses("kai", "are not one unit");
}

Test(mixed_modes, policy_tidal_refuses)
{
    policy_refuses("tidal", "day and night inference pools");
}

Test(mixed_modes, policy_adaptive_refuses)
{
    policy_refuses("adaptive", "whole cards");
}

/* ---- loading ---- */

Test(mixed_modes, one_mode_given_per_pool_is_the_clusters)
{
    /* Every pool says mig, the cluster nothing: the same as cluster.sharing: mig. */
    static const char *const yaml =
        "name: x\nduration: 1h\ncluster:\n  mig: { layout: 7g.80gb }\n  pools:\n"
        "    - { name: a, gpu: a100-sxm4-80gb, nodes: 1, sharing: mig }\n"
        "    - { name: b, gpu: h100-sxm5-80gb, nodes: 1 }\n"
        "    - { name: c, gpu: h100-sxm5-80gb, nodes: 1, sharing: mig,"
        " mig: { layout: '3g.40gb+3g.40gb' } }\n";
    struct scenario sc;
    struct conf_err err;
    cr_assert_eq(scenario_load_string(&sc, "x.yaml", yaml, &err), 0, "%s", err.msg);
    cr_expect_eq(sc.sharing, SHARE_MIG);
    cr_expect(!sc.mixed);
    cr_expect(sc.pools[1].whole, "b took the cluster's exclusive mode: whole cards");
    cr_expect_eq(scenario_pool_mode(&sc, 0), SHARE_MIG);
    scenario_release(&sc);
}

Test(mixed_modes, bad_combinations_name_the_place)
{
#define M \
    "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, sharing: mig, mig: { layout: 7g.80gb } }\n"
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        /* cluster.timeSlicing with no time-sliced pool (MIG + MPS). */
        {"cluster:\n  timeSlicing: { replicas: 2 }\n  pools:\n" M
         "    - { name: p, gpu: h100-sxm5-80gb, nodes: 1, sharing: mps }\n",
         "bad.yaml:4:16: 'timeSlicing': only with 'sharing: timeslice' (no pool shares so)"},
        /* cluster.mig with no MIG pool (time-sliced + MPS). */
        {"cluster:\n  mig: { layout: 7g.80gb }\n  pools:\n"
         "    - { name: t, gpu: a100-sxm4-80gb, nodes: 1, sharing: timeslice }\n"
         "    - { name: p, gpu: h100-sxm5-80gb, nodes: 1, sharing: mps }\n",
         "bad.yaml:4:8: 'mig': only with 'sharing: mig' (no pool shares so)"},
        /* A MIG pool with no layout, in a time-sliced cluster. */
        {"cluster:\n  sharing: timeslice\n  pools:\n"
         "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, sharing: mig }\n"
         "    - { name: t, gpu: h100-sxm5-80gb, nodes: 1 }\n",
         "bad.yaml:6:58: 'layout': pool 'm' has no MIG layout"},
        /* MIG settings on a time-sliced pool of a mixed fleet. */
        {"cluster:\n  pools:\n" M
         "    - { name: t, gpu: h100-sxm5-80gb, nodes: 1, sharing: timeslice,"
         " mig: { layout: 7g.80gb } }\n",
         "bad.yaml:6:74: 'mig': pool 't': only in a pool that shares by mig (this one shares by "
         "timeslice"},
        /* An LLM service that may land on MIG and on time-sliced cards. */
        {"cluster:\n  pools:\n" M
         "    - { name: t, gpu: h100-sxm5-80gb, nodes: 1, sharing: timeslice }\n"
         "services:\n  - name: chat\n    kind: llm\n    llm: { model: llama-3.1-8b }\n"
         "    arrivals: { synthetic: { peak_rps: 1 } }\n",
         "bad.yaml:10:10: 'llm': service 'chat': an LLM replica is sized either for MIG instances "
         "or for cards"},
    };
#undef M
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[2048];
        snprintf(yaml, sizeof(yaml), "name: x\nduration: 1h\n%s", cases[i].yaml);
        simtest_expect_rejected(yaml, cases[i].want, i);
    }
}

Test(mixed_modes, each_pools_sharing_from_gives_its_mode)
{
    /* A mig-parted configuration, a device-plugin time-slicing file and an MPS file, one per
     * pool: MIG (two 3g.40gb), time-slicing with the file's replicas (4), MPS (its replicas). */
    static const char *const yaml =
        "name: from\nduration: 1h\ncluster:\n  pools:\n"
        "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
        " sharing_from: { file: sharing/mig-parted-pools.yaml, config: all-3g.40gb } }\n"
        "    - { name: t, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 1,"
        " sharing_from: sharing/device-plugin-timeslicing.yaml }\n"
        "    - { name: p, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
        " sharing_from: sharing/device-plugin-mps.yaml }\n";
    struct scenario sc;
    struct conf_err err;
    cr_assert_eq(scenario_load_string(&sc, "tests/data/from.yaml", yaml, &err), 0, "%s", err.msg);
    cr_expect(sc.mixed);
    cr_expect_eq(scenario_pool_mode(&sc, 0), SHARE_MIG);
    cr_expect_eq(scenario_pool_mode(&sc, 1), SHARE_TIMESLICE);
    cr_expect_eq(scenario_pool_mode(&sc, 2), SHARE_MPS);
    struct sim s;
    cr_assert_eq(sim_init(&s, &sc, 1, NULL), 0, "%s", s.err);
    cr_expect_eq(s.cl.cards[0].layout.n, 2u, "all-3g.40gb");
    cr_expect_eq(s.cl.cards[1].layout.n, 0u);
    cr_expect_eq(cluster_card_slots(&s.cl, 1), 4u, "the file's replicas");
    cr_expect_eq(cluster_card_mode(&s.cl, 2), SHARE_MPS);
    simtest_free(&sc, &s);

    /* The mig-manager's label per pool: a time-sliced pool must leave MIG off there. */
    static const char *const labelled =
        "name: from\nduration: 1h\ncluster:\n"
        "  sharing_from: sharing/mig-parted-pools.yaml\n  pools:\n"
        "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1,"
        " labels: { nvidia.com/mig.config: all-1g.10gb } }\n"
        "    - { name: t, gpu: h100-sxm5-80gb, nodes: 1, sharing: timeslice,"
        " labels: { nvidia.com/mig.config: all-disabled } }\n";
    cr_assert_eq(scenario_load_string(&sc, "tests/data/from.yaml", labelled, &err), 0, "%s",
                 err.msg);
    cr_expect(sc.mixed);
    cr_expect_eq(scenario_pool_mode(&sc, 0), SHARE_MIG);
    cr_expect_eq(scenario_pool_mode(&sc, 1), SHARE_TIMESLICE);
    cr_expect_eq(sc.pools[1].slots, 4u, "time-slicing's default replicas");
    scenario_release(&sc);
    char bad[1024];
    snprintf(bad, sizeof(bad), "%s", labelled);
    char *at = strstr(bad, "mig.config: all-disabled");
    cr_assert(at);
    memcpy(at, "mig.config: all-1g.10gb ", 24);
    cr_expect_lt(scenario_load_string(&sc, "tests/data/from.yaml", bad, &err), 0);
    cr_expect(strstr(err.msg, "tests/data/from.yaml:7:") &&
                  strstr(err.msg, "pool 't' shares by timeslice but its label "
                                  "nvidia.com/mig.config=all-1g.10gb enables MIG"),
              "%s", err.msg);
}

/*
 * mtbf: faults in a mixed fleet, Young's interval √(2·C·M) with C = 110/2 + 5 = 60 s
 * (test_faults.c) and 2 faults per tenant-hour: a member on the time-sliced card
 * (replicas 3) dies of its own faults and its 2 card-mates' slots, M = 3600 / (2 × 3) =
 * 600 s, √72,000 = 268.3282 s; on a MIG instance of its own, M = 1800 s, √216,000 =
 * 464.7580 s. (The cluster's exclusive default would give every job 464.7580 s.)
 */
Test(mixed_modes, mtbf_from_faults_follows_the_jobs_cards)
{
    static const char *const yaml =
        "name: mtbf\nduration: 10d\nsample_interval: 1h\n"
        "cluster:\n  faults: { per_tenant_per_hour: 2 }\n  pools:\n"
        "    - { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
        " sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } }\n"
        "    - { name: t, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
        " sharing: timeslice, timeSlicing: { replicas: 3 } }\n"
        "training:\n  memory_gb_per_gpu: 20\n  jobs: { synthetic: { per_hour: 0 } }\n"
        "  checkpoint: { interval: young, mtbf: faults, state_gb_per_gpu: 110 }\n"
        "policy: { name: mig-static }\n";
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, yaml, 1);
    uint32_t j[4];
    for (int i = 0; i < 4; i++)
        j[i] = polsubmit_job(&s, 36000, 1, NULL);
    for (int i = 0; i < 4; i++) {
        const struct job *jb = &s.tr.jobs[j[i]];
        cr_assert_eq(jb->state, JOB_RUNNING, "job %d", i);
        cr_expect_float_eq(jb->save_s, 60.0, 1e-9);
        bool ts = jb->gpus[0] == 1;
        cr_expect_eq(ts, i < 3, "job %d: the time-sliced card's 3 places first", i);
        cr_expect_float_eq(jb->interval_s, ts ? 268.3282 : 464.7580, 1e-4, "job %d: %f", i,
                           jb->interval_s);
    }
    simtest_free(&sc, &s);
}

/*
 * Three pools, three modes, one card each, eight 1-GPU jobs of 15 GB under mig-static:
 * the time-sliced card's 2 places, the MPS card's 4, then the 2 MIG instances. Each card's
 * model by its own pool: time-slicing (1 − 0.05) / 2 = 0.475 each; MPS, 4 clients of
 * demand 1 share the SMs max-min (0.25 each), less interference 0.2 per co-runner's SM
 * use: 0.25 / (1 + 0.2 × 3) = 0.15625 (models/share.h), each pinned to 80 / 4 = 20 GiB
 * (the k8s MPS plugin's split of its own pool's replicas); MIG, the 3g.40gb speed.
 */
Test(mixed_modes, each_card_runs_its_own_pools_model)
{
    struct scenario sc;
    struct sim s;
    polsubmit_build(&sc, &s,
                    "{ pools: ["
                    " { name: m, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
                    "   sharing: mig, mig: { layout: '3g.40gb+3g.40gb' } },"
                    " { name: t, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
                    "   sharing: timeslice, timeSlicing: { replicas: 2 } },"
                    " { name: p, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 1,"
                    "   sharing: mps, mps: { replicas: 4 } } ] }",
                    "  memory_gb_per_gpu: 15\n", NULL, "{ name: mig-static }");
    for (int i = 0; i < 8; i++)
        polsubmit_job(&s, 3600, 1, NULL);
    cr_assert_eq(s.cl.cards[0].nten, 2u);
    cr_assert_eq(s.cl.cards[1].nten, 2u);
    cr_assert_eq(s.cl.cards[2].nten, 4u);
    for (uint32_t i = 0; i < 2; i++) {
        const struct tenant *t = &s.cl.tenants[s.cl.cards[1].ten[i]];
        cr_expect(fabs(t->speed - 0.475) < 1e-12, "time-sliced: %.15f", t->speed);
        cr_expect_eq(t->st.mem_limit_gib, 0, "the device plugin does not isolate memory");
    }
    for (uint32_t i = 0; i < 4; i++) {
        const struct tenant *t = &s.cl.tenants[s.cl.cards[2].ten[i]];
        cr_expect(fabs(t->speed - 0.15625) < 1e-12, "MPS: %.15f", t->speed);
        cr_expect(fabs(t->st.mem_limit_gib - 20) < 1e-12, "MPS limit %f", t->st.mem_limit_gib);
    }
    for (uint32_t i = 0; i < 2; i++) {
        const struct tenant *t = &s.cl.tenants[s.cl.cards[0].ten[i]];
        cr_expect(fabs(t->speed - mig_knobs_speed(cluster_card_mig(&s.cl, 0),
                                                  s.cl.cards[0].layout.inst[i].profile)) < 1e-12);
        cr_expect_eq(t->st.mem_limit_gib, 0);
    }
    simtest_free(&sc, &s);
}
