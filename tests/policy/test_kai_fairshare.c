/* test_kai_fairshare.c — KAI fair-share water-filling, limits, priorities, hierarchy,
 * time-based fair share, reclaim and request units, against hand-computed shares. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "sim/policy/kai_fairshare.h"

static struct kai_queue leaf(double quota, double weight, double request)
{
    return (struct kai_queue){.parent = -1,
                              .quota = quota,
                              .weight = weight,
                              .limit = KAI_UNLIMITED,
                              .priority = 0,
                              .request = request};
}

static void shares(struct kai_queue *q, uint32_t n, double cap, double k, const double *want)
{
    cr_assert_eq(kai_fair_share(q, n, cap, k), 0);
    for (uint32_t i = 0; i < n; i++)
        if (fabs(q[i].fair_share - want[i]) > 1e-9)
            cr_assert_fail("queue %u: share %.12g, want %g", i, q[i].fair_share, want[i]);
}

Test(kai, quotas_60_40_with_equal_large_demand)
{
    struct kai_queue q[] = {leaf(60, 1, 1000), leaf(40, 1, 1000)};
    shares(q, 2, 100, 0, (double[]){60, 40});
}

Test(kai, zero_quota_weights_3_1_split_75_25)
{
    struct kai_queue q[] = {leaf(0, 3, 1000), leaf(0, 1, 1000)};
    shares(q, 2, 100, 0, (double[]){75, 25});
}

Test(kai, limit_caps_a_queue)
{
    struct kai_queue q[] = {leaf(0, 1, 1000), leaf(0, 1, 1000)};
    q[0].limit = 30;
    shares(q, 2, 100, 0, (double[]){30, 70});
    /* limit 0 = nothing beyond quota */
    q[0].quota = 20;
    q[0].limit = 0;
    shares(q, 2, 100, 0, (double[]){20, 80});
}

Test(kai, demand_below_quota_leftover_goes_to_other)
{
    struct kai_queue q[] = {leaf(60, 1, 20), leaf(40, 1, 1000)};
    shares(q, 2, 100, 0, (double[]){20, 80});
}

Test(kai, water_filling_iterates_past_saturated_queue)
{
    /* Round 1 of 100 by 1:1:2 gives 25/25/50, A capped at 10; the 15 left go
     * 1:2 to B and C: 30 and 60. */
    struct kai_queue q[] = {leaf(0, 1, 10), leaf(0, 1, 1000), leaf(0, 2, 1000)};
    shares(q, 3, 100, 0, (double[]){10, 30, 60});
}

Test(kai, higher_priority_served_first)
{
    struct kai_queue q[] = {leaf(0, 1, 70), leaf(0, 10, 1000)};
    q[0].priority = 2;
    q[1].priority = 1;
    shares(q, 2, 100, 0, (double[]){70, 30});
    /* Oversubscribed quotas at one level scale in proportion: 80 + 40 into 60. */
    struct kai_queue r[] = {leaf(80, 1, 1000), leaf(40, 1, 1000)};
    shares(r, 2, 60, 0, (double[]){40, 20});
}

Test(kai, hierarchy_divides_top_down)
{
    struct kai_queue q[] = {leaf(50, 1, 0), leaf(50, 1, 0), leaf(25, 1, 1000), leaf(25, 3, 1000),
                            leaf(0, 1, 10)};
    q[2].parent = 0;
    q[3].parent = 0;
    q[4].parent = 1;
    /* Top: P1 wants 2000, P2 10 ⇒ 50 + 40 over-quota = 90 and 10.
     * P1's 90: 25 + 25 in quota, 40 split 1:3 ⇒ 35 and 55. */
    shares(q, 5, 100, 0, (double[]){90, 10, 35, 55, 10});
    cr_assert_float_eq(q[0].request, 2000, 1e-9);
    cr_assert_float_eq(q[1].request, 10, 1e-9);
}

Test(kai, time_based_fair_share_moves_share_from_heavy_user)
{
    struct kai_queue q[] = {leaf(0, 1, 1000), leaf(0, 1, 1000)};
    q[0].hist = 0.8; /* queue 0 used the cluster recently, queue 1 not at all */
    /* k = 0: plain 50/50. */
    shares(q, 2, 100, 0, (double[]){50, 50});
    /* k = 0.5: w' = 0.5 + 0.5·(0.5 − 1) = 0.25 and 0.5 + 0.5·0.5 = 0.75. */
    shares(q, 2, 100, 0.5, (double[]){25, 75});
    /* In-quota shares are untouched by history. */
    q[0].quota = 40;
    q[1].quota = 40;
    /* 40/40, then the 20 left split 0.25 : 0.75. */
    shares(q, 2, 100, 0.5, (double[]){45, 55});
    /* k = 1: queue 0's weight is 0, queue 1 takes the rest up to its demand... */
    q[0].quota = q[1].quota = 0;
    q[1].request = 60;
    /* ...and what queue 1 cannot take is still given to queue 0 (work-conserving). */
    shares(q, 2, 100, 1.0, (double[]){40, 60});
}

Test(kai, usage_history_decays_and_normalises)
{
    struct kai_usage u;
    cr_assert_eq(kai_usage_init(&u, 0, 168 * SIM_HOUR, SIM_HOUR), 0);
    cr_assert_eq(u.bucket, SIM_HOUR);
    kai_usage_add(&u, 0, SIM_HOUR, 100); /* the whole 100-GPU cluster for 1 h */
    cr_assert_float_eq(kai_usage_normalised(&u, SIM_HOUR, 100), 1.0, 1e-12);
    /* One idle hour later: ages 1.5 h and 0.5 h ⇒ 0.5^1.5 / (0.5^1.5 + 0.5^0.5) = 1/3. */
    cr_assert_float_eq(kai_usage_normalised(&u, 2 * SIM_HOUR, 100), 1.0 / 3, 1e-12);
    /* Half the cluster throughout ⇒ 0.5 whatever the decay. */
    struct kai_usage h;
    cr_assert_eq(kai_usage_init(&h, 0, 168 * SIM_HOUR, 3 * SIM_HOUR), 0);
    kai_usage_add(&h, 0, 30 * SIM_HOUR + 17 * SIM_MIN, 50);
    cr_assert_float_eq(kai_usage_normalised(&h, 30 * SIM_HOUR + 17 * SIM_MIN, 100), 0.5, 1e-12);
    /* Usage older than the 168 h window is forgotten. */
    struct kai_usage w;
    cr_assert_eq(kai_usage_init(&w, 0, 168 * SIM_HOUR, 1000 * SIM_HOUR), 0);
    kai_usage_add(&w, 0, SIM_HOUR, 100);
    cr_assert_gt(kai_usage_normalised(&w, 168 * SIM_HOUR - SIM_SEC, 100), 0);
    cr_assert_float_eq(kai_usage_normalised(&w, 169 * SIM_HOUR, 100), 0, 1e-15);
    kai_usage_add(&w, 170 * SIM_HOUR, 171 * SIM_HOUR, 10); /* slot reuse */
    cr_assert_gt(kai_usage_normalised(&w, 171 * SIM_HOUR, 100), 0);
    cr_assert_eq(kai_usage_init(&w, 0, 10, SIM_HOUR), -EINVAL);
}

Test(kai, reclaim_only_over_quota_preemptible)
{
    struct kai_queue q = leaf(40, 1, 1000);
    q.fair_share = 50;
    cr_assert_float_eq(kai_reclaimable(&q, 70, 10), 20, 1e-12); /* 70 − max(50, 40) */
    cr_assert_float_eq(kai_reclaimable(&q, 70, 65), 5, 1e-12);  /* only 5 preemptible */
    cr_assert_float_eq(kai_reclaimable(&q, 45, 0), 0, 1e-12);   /* below fair share */
    q.fair_share = 30;                                          /* fair share below quota */
    cr_assert_float_eq(kai_reclaimable(&q, 45, 0), 5, 1e-12);   /* in-quota 40 kept */
    q.quota = KAI_UNLIMITED;
    cr_assert_float_eq(kai_reclaimable(&q, 70, 0), 0, 1e-12);
    q.fair_share = 50;
    cr_assert_float_eq(kai_reclaim_need(&q, 35), 15, 1e-12);
    cr_assert_float_eq(kai_reclaim_need(&q, 60), 0, 1e-12);
}

Test(kai, priorities_and_admission)
{
    int32_t v = 0;
    cr_assert_eq(kai_priority_class("train", &v), 0);
    cr_assert_eq(v, 50);
    cr_assert_eq(kai_priority_class("build-preemptible", &v), 0);
    cr_assert_eq(v, 75);
    cr_assert_eq(kai_priority_class("build", &v), 0);
    cr_assert_eq(v, 100);
    cr_assert_eq(kai_priority_class("inference", &v), 0);
    cr_assert_eq(v, 125);
    cr_assert_eq(kai_priority_class("batch", &v), -ENOENT);
    cr_assert(kai_preemptible(KAI_PRIO_TRAIN));
    cr_assert(kai_preemptible(KAI_PRIO_BUILD_PREEMPTIBLE));
    cr_assert_not(kai_preemptible(KAI_PRIO_BUILD));
    cr_assert_not(kai_preemptible(KAI_PRIO_INFERENCE));
    struct kai_queue q = leaf(40, 1, 1000);
    q.limit = 60;
    /* Inference only within quota: 38 + 2 fits, 38 + 3 not, whatever else is held. */
    cr_assert(kai_admissible(&q, 50, 38, 2, KAI_PRIO_INFERENCE));
    cr_assert_not(kai_admissible(&q, 50, 38, 3, KAI_PRIO_INFERENCE));
    /* Training beyond quota up to the limit. */
    cr_assert(kai_admissible(&q, 55, 0, 5, KAI_PRIO_TRAIN));
    cr_assert_not(kai_admissible(&q, 55, 0, 5.5, KAI_PRIO_TRAIN));
}

Test(kai, fractional_request_units)
{
    cr_assert_float_eq(kai_request_units(&(struct kai_request){.gpus = 2}, 81920), 2, 1e-12);
    cr_assert_float_eq(kai_request_units(&(struct kai_request){.fraction = 0.5}, 81920), 0.5,
                       1e-12);
    cr_assert_float_eq(kai_request_units(&(struct kai_request){.memory_mib = 20480}, 81920), 0.25,
                       1e-12);
    cr_assert_float_eq(kai_request_units(&(struct kai_request){.mig_g = 3}, 81920), 3, 1e-12);
    cr_assert_lt(kai_request_units(&(struct kai_request){.fraction = 1.5}, 81920), 0);
    cr_assert_lt(kai_request_units(&(struct kai_request){0}, 81920), 0);
    /* Four half-GPU inference pods and one 2-GPU job fill a 4-GPU queue's quota. */
    double units = 4 * 0.5 + 2;
    struct kai_queue q[] = {leaf(4, 1, units), leaf(0, 1, 1000)};
    shares(q, 2, 8, 0, (double[]){4, 4});
}

Test(kai, rejects_bad_tree_unchanged)
{
    struct kai_queue q[] = {leaf(0, 1, 10), leaf(0, 1, 10)};
    q[0].parent = 1; /* child before parent */
    q[0].fair_share = 7;
    cr_assert_eq(kai_fair_share(q, 2, 100, 0), -EINVAL);
    cr_assert_float_eq(q[0].fair_share, 7, 0);
}
