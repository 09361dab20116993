/* test_kueue_flavors.c — several GPU ResourceFlavors on a mixed fleet: flavor assignment in
 * the ClusterQueue's order with flavorFungibility (Kueue pkg/scheduler/flavorassigner), quota
 * per flavor, flavors mapped onto pools by nodeLabels, and placement on the assigned flavor's
 * pools. Every expected number is derived by hand in the comment above its test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "sim/policy/kueue_admit.h"
#include "sim/policy/kueue_manifest.h"
#include "tests/simtest.h"

enum { H100, A100 }; /* flavor indices in these tests */

/* A CQ of `cohort` listing H100 then A100 with these nominal quotas (unlimited limits). */
static uint32_t add_cq2(struct kueue *k, int32_t cohort, enum kueue_within within,
                        bool borrow_try_next, bool preempt_may_stop)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.cohort = cohort;
    c.within = within;
    c.nflavors = 2;
    c.flavors[0] = H100;
    c.flavors[1] = A100;
    c.borrow_try_next = borrow_try_next;
    c.preempt_may_stop = preempt_may_stop;
    int i = kueue_add_cq(k, &c);
    cr_assert_geq(i, 0);
    return (uint32_t)i;
}

/* Apply the next decision; assert the workload, its flavor and number of victims. */
static void next_is(struct kueue *k, uint32_t id, uint32_t flavor, uint32_t nvict, sim_time now)
{
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1, "no admission, want %u", id);
    cr_assert_eq(d.id, id, "admits %u, want %u", d.id, id);
    cr_assert_eq(d.flavor, flavor, "workload %u on flavor %u, want %u", id, d.flavor, flavor);
    cr_assert_eq(d.n_victims, nvict, "%u victims, want %u", d.n_victims, nvict);
    cr_assert_eq(kueue_apply(k, &d, now), 0);
    cr_assert_eq(kueue_find(k, id)->flavor, flavor);
}

static void nothing_next(struct kueue *k)
{
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 0, "admits %u, want nothing", d.id);
}

/*
 * One CQ (no cohort) listing H100 (nominal 8) then A100 (16). Workloads in
 * creation order: 1..5 of 4 cards, 6 of 8, 7 of 4. By hand: 1 and 2 fill
 * H100 (4 + 4 = 8); 3, 4, 5 go to A100 (H100 full: 8 + 4 > 8, no cohort to
 * borrow from): 4, 8, 12; 6 fits neither (H100 16 > 8, A100 20 > 16) and is
 * skipped (BestEffortFIFO); 7 takes A100 to 16. 24 cards = 8 + 16, nothing
 * more. Freeing 1 leaves H100 at 4: 6 still does not fit (12 > 8); freeing 2
 * too, 6 goes to H100.
 */
Test(kueue_flavors, first_flavor_with_room_then_the_next_and_quota_per_flavor)
{
    struct kueue *k = kueue_create();
    uint32_t q = add_cq2(k, KUEUE_NO_COHORT, KUEUE_WITHIN_NEVER, false, false);
    cr_assert_eq(kueue_set_flavors(k, 2), 0);
    cr_assert_eq(kueue_set_cq_quota(k, q, H100, 8, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, q, A100, 16, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_add_cq(k, &(struct kueue_cq){0}), -EINVAL, "no CQ after the flavors");
    double gpus[] = {4, 4, 4, 4, 4, 8, 4};
    for (uint32_t i = 0; i < 7; i++)
        cr_assert_eq(kueue_submit(k, i + 1, q, 0, gpus[i], (sim_time)(i + 1)), 0);
    next_is(k, 1, H100, 0, 10);
    next_is(k, 2, H100, 0, 10);
    next_is(k, 3, A100, 0, 10);
    next_is(k, 4, A100, 0, 10);
    next_is(k, 5, A100, 0, 10);
    next_is(k, 7, A100, 0, 10);
    nothing_next(k);
    cr_assert_float_eq(kueue_usage_flavor(k, q, H100), 8, 1e-12);
    cr_assert_float_eq(kueue_usage_flavor(k, q, A100), 16, 1e-12);
    cr_assert_float_eq(kueue_usage(k, q), 24, 1e-12);
    cr_assert_eq(kueue_remove(k, 1), 0);
    nothing_next(k);
    cr_assert_eq(kueue_remove(k, 2), 0);
    next_is(k, 6, H100, 0, 20);
    kueue_destroy(k);
}

/*
 * The most a workload of that CQ could ever get (potentialAvailable), over the flavors it
 * may use: H100 8, A100 16, either 16, none 0 — a 12-card job that may use H100 only is
 * rejected at submission, not left waiting.
 */
Test(kueue_flavors, potential_counts_only_the_flavors_a_workload_may_use)
{
    struct kueue *k = kueue_create();
    uint32_t q = add_cq2(k, KUEUE_NO_COHORT, KUEUE_WITHIN_NEVER, false, false);
    cr_assert_eq(kueue_set_flavors(k, 2), 0);
    cr_assert_eq(kueue_set_cq_quota(k, q, H100, 8, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, q, A100, 16, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_float_eq(kueue_cq_potential_mask(k, q, 1u << H100), 8, 1e-12);
    cr_assert_float_eq(kueue_cq_potential_mask(k, q, 1u << A100), 16, 1e-12);
    cr_assert_float_eq(kueue_cq_potential(k, q), 16, 1e-12);
    cr_assert_float_eq(kueue_cq_potential_mask(k, q, 0), 0, 0);
    kueue_destroy(k);
}

/*
 * A cohort of `team` (H100 4, A100 8; lists H100 first) and `lender` (H100 4,
 * A100 0). An 8-card workload of team: on H100 it fits only by borrowing
 * lender's 4 (4 + 4 = 8 in the cohort); on A100 it fits in team's nominal 8.
 * whenCanBorrow MayStopSearch (Kueue's default): stops at H100, borrowing.
 * TryNextFlavor: skips H100 and takes A100 without borrowing. TryNextFlavor
 * with A100 already holding 4 of team's (4 + 8 = 12 > 8, and lender has no
 * A100 to lend): no flavor stops the search, the best seen (H100 by
 * borrowing) wins.
 */
static struct kueue *borrow_case(bool try_next, uint32_t *team)
{
    struct kueue *k = kueue_create();
    *team = add_cq2(k, 0, KUEUE_WITHIN_NEVER, try_next, false);
    uint32_t lender = add_cq2(k, 0, KUEUE_WITHIN_NEVER, false, false);
    cr_assert_eq(kueue_set_flavors(k, 2), 0);
    cr_assert_eq(kueue_set_cq_quota(k, *team, H100, 4, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, *team, A100, 8, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, lender, H100, 4, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, lender, A100, 0, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    return k;
}

Test(kueue_flavors, when_can_borrow_try_next_flavor_skips_a_flavor_it_would_borrow_on)
{
    uint32_t team;
    struct kueue *k = borrow_case(false, &team);
    cr_assert_eq(kueue_submit(k, 1, team, 0, 8, 1), 0);
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert(d.borrows && d.mode == KUEUE_FITS_BORROW && d.flavor == H100,
              "MayStopSearch: borrows on H100 (flavor %u)", d.flavor);
    kueue_destroy(k);

    k = borrow_case(true, &team);
    cr_assert_eq(kueue_submit(k, 1, team, 0, 8, 1), 0);
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert(!d.borrows && d.mode == KUEUE_FITS_NOMINAL && d.flavor == A100,
              "TryNextFlavor: A100 in nominal (flavor %u)", d.flavor);
    kueue_destroy(k);

    k = borrow_case(true, &team);
    cr_assert_eq(kueue_submit(k, 9, team, 0, 4, 0), 0);
    cr_assert_eq(kueue_set_wl_flavors(k, 9, 1u << A100), 0); /* may use A100 only */
    next_is(k, 9, A100, 0, 0);
    cr_assert_eq(kueue_submit(k, 1, team, 0, 8, 1), 0);
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert(d.borrows && d.flavor == H100, "A100 full: back to H100 by borrowing (flavor %u)",
              d.flavor);
    kueue_destroy(k);
}

/*
 * One CQ (no cohort, withinClusterQueue LowerPriority) with H100 4 and A100
 * 4. A priority-0 workload of 4 takes H100. A priority-100 one of 4: on H100
 * it fits only by preempting it; A100 is free. whenCanPreempt TryNextFlavor
 * (Kueue's default) goes on to A100 (no victim); MayStopSearch preempts on
 * H100 (one victim, the priority-0 workload).
 */
Test(kueue_flavors, when_can_preempt_default_tries_the_next_flavor_first)
{
    for (int stop = 0; stop < 2; stop++) {
        struct kueue *k = kueue_create();
        uint32_t q = add_cq2(k, KUEUE_NO_COHORT, KUEUE_WITHIN_LOWER_PRIORITY, false, stop);
        cr_assert_eq(kueue_set_flavors(k, 2), 0);
        cr_assert_eq(kueue_set_cq_quota(k, q, H100, 4, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
        cr_assert_eq(kueue_set_cq_quota(k, q, A100, 4, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
        cr_assert_eq(kueue_submit(k, 1, q, 0, 4, 0), 0);
        next_is(k, 1, H100, 0, 0);
        cr_assert_eq(kueue_submit(k, 2, q, 100, 4, 1), 0);
        struct kueue_decision d;
        cr_assert_eq(kueue_next(k, &d), 1);
        cr_assert_eq(d.flavor, stop ? H100 : A100);
        cr_assert_eq(d.n_victims, stop ? 1u : 0u);
        if (stop)
            cr_assert_eq(d.victims[0], 1u);
        kueue_destroy(k);
    }
}

/* ---- fair sharing over several flavors (Kueue's DRS sums a resource over its flavors) ---- */

/* A fair-sharing cohort 0 of CQs A and B (nominal 0 on both flavors, A listing H100 then A100,
 * B A100 only, reclaimWithinCohort Any) and a lender L (H100 lh, A100 la, uses nothing). */
static struct kueue *fair_case(double lh, double la, uint32_t *a, uint32_t *b)
{
    struct kueue *k = kueue_create();
    enum kueue_fs_strategy st[] = {KUEUE_FS_LESS_OR_EQUAL_FINAL, KUEUE_FS_LESS_THAN_INITIAL};
    kueue_set_fair_sharing(k, st, 2);
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.cohort = 0;
    c.reclaim = KUEUE_RECLAIM_ANY;
    c.nflavors = 2;
    c.flavors[0] = H100;
    c.flavors[1] = A100;
    *a = (uint32_t)kueue_add_cq(k, &c);
    c.nflavors = 1;
    c.flavors[0] = A100;
    *b = (uint32_t)kueue_add_cq(k, &c);
    c.nflavors = 2;
    c.flavors[0] = H100;
    c.flavors[1] = A100;
    uint32_t l = (uint32_t)kueue_add_cq(k, &c);
    cr_assert_eq(kueue_set_flavors(k, 2), 0);
    for (uint32_t q = 0; q < 2; q++)
        for (uint32_t f = 0; f < 2; f++)
            cr_assert_eq(kueue_set_cq_quota(k, q, f, 0, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, l, H100, lh, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, l, A100, la, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    return k;
}

/* Submit n one-card workloads of CQ q (ids from id0) allowed on flavor f only, admit them. */
static void hold(struct kueue *k, uint32_t q, uint32_t f, uint32_t n, uint32_t id0)
{
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(kueue_submit(k, id0 + i, q, 0, 1, (sim_time)(id0 + i)), 0);
        cr_assert_eq(kueue_set_wl_flavors(k, id0 + i, 1u << f), 0);
        next_is(k, id0 + i, f, 0, 0);
    }
}

/* The second set-up below: A holds 2 H100, B 4 A100; A's head (100) may use A100 only, B's
 * head (200) is submitted after it. */
static void second_setup(struct kueue *k, uint32_t a, uint32_t b)
{
    hold(k, a, H100, 2, 1);
    hold(k, b, A100, 4, 11);
    cr_assert_eq(kueue_submit(k, 100, a, 0, 1, 100), 0);
    cr_assert_eq(kueue_set_wl_flavors(k, 100, 1u << A100), 0);
    cr_assert_eq(kueue_submit(k, 200, b, 0, 1, 200), 0);
}

/*
 * Admission order. Cohort quota H100 4 + A100 16 (all the lender's), so a CQ's lendable
 * capacity is 4 + 16 = 20 cards. A holds 4 H100 (borrowed 4: H100 full), B holds 3 A100
 * (borrowed 3). Heads: A's workload 100 (1 card, created at 100), B's 200 (1 card, at 200).
 * A's head finds H100 full (no candidates: nobody else borrows H100) and fits on A100 by
 * borrowing; B's fits on A100 by borrowing. Both borrow, so the lower share wins:
 *   Kueue (Σ over flavors): A (4 + 1) · 1000 / 20 = 250, B (3 + 1) · 1000 / 20 = 200 → B.
 *   share on the tried flavor alone (the old rule): A 1 · 1000 / 16 = 62.5, B 4000 / 16 = 250
 *   → A.
 * Then A's head: A 250 (no competitor). Per-CQ share (kueue_cq_stat) after both: A 5/20 = 250,
 * B 4/20 = 200.
 * Second set-up, where a largest-ratio-over-flavor-resources rule would differ from Kueue's:
 * A holds 2 H100 (2 free), B 4 A100; heads as before, A's listing H100 first now fits there,
 * so A's head is tried on A100 only (mask). Kueue: A (2 + 1) / 20 = 150, B (4 + 1) / 20 = 250
 * → A. Largest over flavor-resources: A max(2/4, 1/16) = 500, B 5/16 = 312.5 → B.
 */
Test(kueue_flavors, fair_sharing_admission_orders_by_the_share_summed_over_flavors)
{
    uint32_t a, b;
    struct kueue *k = fair_case(4, 16, &a, &b);
    hold(k, a, H100, 4, 1);
    hold(k, b, A100, 3, 11);
    cr_assert_eq(kueue_submit(k, 100, a, 0, 1, 100), 0);
    cr_assert_eq(kueue_submit(k, 200, b, 0, 1, 200), 0);
    next_is(k, 200, A100, 0, 300);
    next_is(k, 100, A100, 0, 300);
    struct kueue_cq_stat st;
    kueue_cq_stat(k, a, &st);
    cr_assert_float_eq(st.share, 250, 1e-9);
    cr_assert_float_eq(st.borrowed, 5, 1e-9);
    kueue_cq_stat(k, b, &st);
    cr_assert_float_eq(st.share, 200, 1e-9);
    kueue_cq_stat_flavor(k, a, H100, &st);
    cr_assert_float_eq(st.share, 250, 1e-9, "the share is the CQ's, over all flavors");
    kueue_destroy(k);

    k = fair_case(4, 16, &a, &b);
    second_setup(k, a, b);
    next_is(k, 100, A100, 0, 300);
    next_is(k, 200, A100, 0, 300);
    kueue_destroy(k);
}

/*
 * The same second set-up with the A100 cell made another resource name, as a quota cell of
 * nvidia.com/mig-1g.10gb is (kueue_set_flavor_resource): Kueue's dominant resource share is
 * then the largest ratio over the two resources, each against the cohort's lendable capacity
 * of that resource alone (H100: 4, instances: 16). A (holding 2 H100, its head on the
 * instances): max(2/4, 1/16) · 1000 = 500; B (holding 4 instances, its head on them): 5/16 ·
 * 1000 = 312.5 → B first, where the one-resource sum (A 150, B 250) took A first. After both:
 * A 500 (its 2 H100 of 4 dominate), B 312.5.
 */
Test(kueue_flavors, fair_sharing_weighs_each_resource_name_against_its_own_capacity)
{
    uint32_t a, b;
    struct kueue *k = fair_case(4, 16, &a, &b);
    cr_assert_eq(kueue_set_flavor_resource(k, A100, 1), 0);
    cr_assert_eq(kueue_set_flavor_resource(k, 2, 1), -EINVAL, "no flavor 2");
    cr_assert_eq(kueue_set_flavor_resource(k, A100, KUEUE_MAX_FLAVORS), -EINVAL);
    second_setup(k, a, b);
    next_is(k, 200, A100, 0, 300);
    next_is(k, 100, A100, 0, 300);
    struct kueue_cq_stat st;
    kueue_cq_stat(k, a, &st);
    cr_assert_float_eq(st.share, 500, 1e-9);
    kueue_cq_stat(k, b, &st);
    cr_assert_float_eq(st.share, 312.5, 1e-9);
    kueue_destroy(k);
}

/* Cells in the manifests' order: gpu on flavor 0, its 1g.10gb and 3g.40gb, gpu on flavor 1,
 * its 1g.10gb. By hand: resource numbers 0, 1, 2, 0, 1 (each name by its first cell). */
Test(kueue_flavors, quota_cells_of_one_resource_name_share_its_number)
{
    struct kueue_model m;
    memset(&m, 0, sizeof(m));
    const char *prof[] = {NULL, "1g.10gb", "3g.40gb", NULL, "1g.10gb"};
    const uint32_t want[] = {0, 1, 2, 0, 1};
    for (uint32_t f = 0; f < 5; f++)
        m.mig_profile[f] = prof[f];
    m.ngpu = 5;
    for (uint32_t f = 0; f < 5; f++)
        cr_expect_eq(kueue_cell_resource(&m, f), want[f], "cell %u", f);
    m.mig_profile[0] = "2g.20gb"; /* a flavor without nvidia.com/gpu: its first cell is MIG */
    cr_expect_eq(kueue_cell_resource(&m, 3), 3u);
}

/*
 * Preemption strategies. Lender H100 8 + A100 8: lendable 16. B holds all 8 A100 (8 one-card
 * workloads, borrowed 8). A holds h H100 and its head (1 card) may use A100 only: A100 is full,
 * so it must reclaim from B (A is not within its nominal 0, so the strategies apply).
 * h = 8: A's share with its head (8 + 1) · 1000 / 16 = 562.5; B's before 8000 / 16 = 500,
 * without one workload 7000 / 16 = 437.5. LessThanOrEqualToFinalShare: 562.5 <= 437.5 fails;
 * LessThanInitialShare: 562.5 < 500 fails → no preemption, nothing admitted. (On A100 alone
 * A's share would be 1000 / 8 = 125 <= 7000 / 8 = 875: one victim.)
 * h = 2: A (2 + 1) · 1000 / 16 = 187.5 <= 437.5 → one victim, B's most recently admitted
 * (id 18), and A's head is admitted on A100.
 */
Test(kueue_flavors, fair_sharing_preemption_strategies_use_the_share_over_all_flavors)
{
    for (uint32_t h = 2; h <= 8; h += 6) {
        uint32_t a, b;
        struct kueue *k = fair_case(8, 8, &a, &b);
        hold(k, a, H100, h, 1);
        hold(k, b, A100, 8, 11);
        cr_assert_eq(kueue_submit(k, 100, a, 0, 1, 100), 0);
        cr_assert_eq(kueue_set_wl_flavors(k, 100, 1u << A100), 0);
        if (h == 8) {
            nothing_next(k);
        } else {
            struct kueue_decision d;
            cr_assert_eq(kueue_next(k, &d), 1);
            cr_assert_eq(d.id, 100u);
            cr_assert_eq(d.flavor, A100);
            cr_assert_eq(d.n_victims, 1u);
            cr_assert_eq(d.victims[0], 18u);
        }
        kueue_destroy(k);
    }
}

/* ---- flavorFungibility.preference and Kueue's granular modes ---- */

/* A CQ of cohort `cohort` listing flavors first then second, nominal 0 on both (set below),
 * reclaimWithinCohort Any, both fungibility policies TryNextFlavor (as preference needs). */
static uint32_t add_cq_pref(struct kueue *k, int32_t cohort, uint32_t first, uint32_t second,
                            bool prefer_preemption)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.cohort = cohort;
    c.within = KUEUE_WITHIN_LOWER_PRIORITY;
    c.reclaim = KUEUE_RECLAIM_ANY;
    c.nflavors = 2;
    c.flavors[0] = (uint8_t)first;
    c.flavors[1] = (uint8_t)second;
    c.borrow_try_next = true;
    c.prefer_preemption = prefer_preemption;
    int i = kueue_add_cq(k, &c);
    cr_assert_geq(i, 0);
    return (uint32_t)i;
}

static void quota(struct kueue *k, uint32_t q, double h100, double a100)
{
    cr_assert_eq(kueue_set_cq_quota(k, q, H100, h100, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_set_cq_quota(k, q, A100, a100, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
}

/* n one-card workloads of q at priority prio (ids from id0), admitted on flavor f. */
static void hold_prio(struct kueue *k, uint32_t q, uint32_t f, uint32_t n, uint32_t id0,
                      int32_t prio)
{
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(kueue_submit(k, id0 + i, q, prio, 1, (sim_time)(id0 + i)), 0);
        cr_assert_eq(kueue_set_wl_flavors(k, id0 + i, 1u << f), 0);
        next_is(k, id0 + i, f, 0, 0);
    }
}

/*
 * One flat cohort: team (H100 0, A100 4; lists H100 then A100) and other (H100 4, A100 0),
 * other holding 4 one-card workloads on A100 — all borrowed from team's idle A100 quota.
 * team's 4-card workload 100:
 *   H100: 0 + 4 > nominal 0, the cohort has other's 4 idle H100: fits by borrowing — mode
 *         fit, borrowing level 1 (the root cohort, height 1);
 *   A100: 0 + 4 <= nominal 4 but the cohort's 4 A100 are all used: it must reclaim other's
 *         4 workloads — mode reclaim, level 0 once they are gone.
 * With both policies TryNextFlavor both flavors are tried, and preference decides:
 *   BorrowingOverPreemption (Kueue's default) compares the mode first: fit > reclaim → H100,
 *   no victim, borrowing;
 *   PreemptionOverBorrowing compares the level first: 0 < 1 → A100, victims 4..1 (other's,
 *   most recently admitted first), not borrowing.
 */
Test(kueue_flavors, preference_borrowing_or_preemption_picks_different_flavors)
{
    for (int pp = 0; pp < 2; pp++) {
        struct kueue *k = kueue_create();
        uint32_t team = add_cq_pref(k, 0, H100, A100, pp);
        uint32_t other = add_cq_pref(k, 0, A100, H100, false);
        cr_assert_eq(kueue_set_flavors(k, 2), 0);
        quota(k, team, 0, 4);
        quota(k, other, 4, 0);
        hold_prio(k, other, A100, 4, 1, 0);
        cr_assert_eq(kueue_submit(k, 100, team, 0, 4, 100), 0);
        struct kueue_decision d;
        cr_assert_eq(kueue_next(k, &d), 1);
        cr_assert_eq(d.id, 100u);
        if (!pp) {
            cr_assert(d.flavor == H100 && d.mode == KUEUE_FITS_BORROW && d.borrows,
                      "BorrowingOverPreemption: borrows on H100 (flavor %u)", d.flavor);
            cr_assert_eq(d.n_victims, 0u);
        } else {
            cr_assert(d.flavor == A100 && d.mode == KUEUE_PREEMPT && !d.borrows,
                      "PreemptionOverBorrowing: reclaims on A100 (flavor %u)", d.flavor);
            cr_assert_eq(d.n_victims, 4u);
            for (uint32_t v = 0; v < 4; v++)
                cr_assert_eq(d.victims[v], 4 - v);
        }
        cr_assert_eq(kueue_apply(k, &d, 200), 0);
        cr_assert_float_eq(kueue_usage_flavor(k, team, pp ? A100 : H100), 4, 1e-12);
        kueue_destroy(k);
    }
}

/*
 * Reclaim over preemption. team (H100 4, A100 4; lists H100 then A100, withinClusterQueue
 * LowerPriority) holds 4 priority-0 workloads on H100; other (0, 0) holds 4 on A100, all
 * borrowed from team. team's 4-card workload 100 at priority 10:
 *   H100: 4 + 4 > 4 and no idle H100 in the cohort: it must preempt its own 4 workloads —
 *         mode preempt, level 0;
 *   A100: within nominal, cohort full: it reclaims other's 4 — mode reclaim, level 0.
 * Levels tie, so under either preference the mode decides: reclaim > preempt → A100, victims
 * other's 8..5. (Counting both as one "preempt" mode, the first listed flavor, H100, won.)
 */
Test(kueue_flavors, reclaiming_beats_preempting_in_the_own_queue)
{
    for (int pp = 0; pp < 2; pp++) {
        struct kueue *k = kueue_create();
        uint32_t team = add_cq_pref(k, 0, H100, A100, pp);
        uint32_t other = add_cq_pref(k, 0, A100, H100, false);
        cr_assert_eq(kueue_set_flavors(k, 2), 0);
        quota(k, team, 4, 4);
        quota(k, other, 0, 0);
        hold_prio(k, team, H100, 4, 1, 0);
        hold_prio(k, other, A100, 4, 5, 0);
        cr_assert_eq(kueue_submit(k, 100, team, 10, 4, 100), 0);
        struct kueue_decision d;
        cr_assert_eq(kueue_next(k, &d), 1);
        cr_assert_eq(d.id, 100u);
        cr_assert_eq(d.flavor, A100, "preference %d: flavor %u, want A100", pp, d.flavor);
        cr_assert_eq(d.n_victims, 4u);
        for (uint32_t v = 0; v < 4; v++)
            cr_assert_eq(d.victims[v], 8 - v);
        kueue_destroy(k);
    }
}

/*
 * Borrowing level in a cohort tree. Root R (index 0) ← C (1); team and sib in C, lender in R.
 * Quotas: sib H100 4, lender A100 4, everything else 0. team (A100 listed first,
 * whenCanBorrow TryNextFlavor) asks 4 cards:
 *   A100: C's subtree has no A100 (sib 0): the room is at R (lender's 4) — level = height of
 *         R = 2 (C below it has height 1);
 *   H100: C's subtree has sib's 4 idle H100 — level 1.
 * Both fit by borrowing; the lower level wins: H100, though listed second.
 */
Test(kueue_flavors, borrowing_from_nearer_in_the_cohort_tree_wins)
{
    struct kueue *k = kueue_create();
    struct kueue_cohort co;
    kueue_cohort_default(&co);
    cr_assert_eq(kueue_add_cohort(k, &co), 0);
    co.parent = 0;
    cr_assert_eq(kueue_add_cohort(k, &co), 1);
    uint32_t team = add_cq_pref(k, 1, A100, H100, false);
    uint32_t sib = add_cq_pref(k, 1, H100, A100, false);
    uint32_t lender = add_cq_pref(k, 0, A100, H100, false);
    cr_assert_eq(kueue_set_flavors(k, 2), 0);
    quota(k, team, 0, 0);
    quota(k, sib, 4, 0);
    quota(k, lender, 0, 4);
    for (uint32_t c = 0; c < 2; c++)
        for (uint32_t f = 0; f < 2; f++)
            cr_assert_eq(kueue_set_cohort_quota(k, c, f, 0, KUEUE_UNLIMITED, KUEUE_UNLIMITED), 0);
    cr_assert_eq(kueue_submit(k, 100, team, 0, 4, 100), 0);
    next_is(k, 100, H100, 0, 200);
    /* Now H100 is all used: the next 4 cards can only borrow A100 from the root. */
    cr_assert_eq(kueue_submit(k, 101, team, 0, 4, 101), 0);
    next_is(k, 101, A100, 0, 200);
    kueue_destroy(k);
}

/* ---- manifests on pools ---- */

static struct pool_label a100_lab[] = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}};
static struct pool_label h100_lab[] = {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
static const struct pool_cfg two_pools[] = {
    {.name = "a100", .nodes = 2, .gpus_per_node = 8, .labels = a100_lab, .nlabels = 1},
    {.name = "h100", .nodes = 1, .gpus_per_node = 8, .labels = h100_lab, .nlabels = 1},
};

static const char flavors_yaml[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"
    "spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
    "spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: l40s}\n"
    "spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-L40S}}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: team}\n"
    "spec:\n"
    "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt}\n"
    "  resourceGroups:\n"
    "    - coveredResources: [nvidia.com/gpu]\n"
    "      flavors:\n"
    "        - {name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}\n"
    "        - {name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 16, "
    "borrowingLimit: 0}]}\n"
    "        - {name: l40s, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}\n"
    "  cohort: all\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: other}\n"
    "spec:\n"
    "  cohort: all\n"
    "  resourceGroups:\n"
    "    - coveredResources: [nvidia.com/gpu]\n"
    "      flavors:\n"
    "        - {name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 0}]}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cpu}\n"
    "spec:\n"
    "  cohort: all\n"
    "  resourceGroups:\n"
    "    - coveredResources: [cpu]\n"
    "      flavors:\n"
    "        - {name: a100, resources: [{name: cpu, nominalQuota: 64}]}\n";

/*
 * cluster.pools: pool 0 A100, pool 1 H100 (labels as the NVIDIA GPU feature
 * discovery sets them). h100 maps onto pool 1 only, a100 onto pool 0; l40s onto
 * none: its quota is named in the warning, as with one pool. team lists h100
 * then a100 (l40s dropped); the fungibility fields read, not warned.
 */
Test(kueue_flavors, flavors_map_onto_pools_by_node_labels)
{
    struct kueue_model m;
    const char *names[] = {"k.yaml"}, *texts[] = {flavors_yaml};
    struct conf_err err = {{0}};
    cr_assert_eq(kueue_model_load_strings_pools(&m, names, texts, 1, NULL, two_pools, 2, &err), 0,
                 "%s", err.msg);
    cr_assert_eq(m.ngpu, 2);
    cr_assert_str_eq(m.flavors[m.gpu_flavors[0]].name, "h100");
    cr_assert_str_eq(m.flavors[m.gpu_flavors[1]].name, "a100");
    cr_assert_eq(m.flavors[m.gpu_flavors[0]].pools, 2u, "h100 → pool 1");
    cr_assert_eq(m.flavors[m.gpu_flavors[1]].pools, 1u, "a100 → pool 0");
    cr_assert_eq(m.flavors[2].gpu, -1, "l40s not modelled");
    cr_assert_not_null(m.warning);
    cr_assert(strstr(m.warning, "ClusterQueue/team GPU quota of flavor l40s (no node of this "
                                "cluster)"),
              "%s", m.warning);
    cr_assert_null(strstr(m.warning, "whenCanBorrow"), "modelled, not warned: %s", m.warning);
    const struct kueue_cq_def *t = &m.cqs[kueue_model_cq(&m, "team")];
    cr_assert_eq(t->cq.nflavors, 2);
    cr_assert_eq(t->cq.flavors[0], 0);
    cr_assert_eq(t->cq.flavors[1], 1);
    cr_assert_float_eq(t->q.nominal[0], 8, 0);
    cr_assert_float_eq(t->q.nominal[1], 16, 0);
    cr_assert_float_eq(t->q.bl[1], 0, 0);
    cr_assert(t->q.bl[0] < 0, "H100 borrowingLimit unset: unlimited");
    cr_assert(t->cq.borrow_try_next && t->cq.preempt_may_stop);
    const struct kueue_cq_def *o = &m.cqs[kueue_model_cq(&m, "other")];
    cr_assert(!o->cq.borrow_try_next && !o->cq.preempt_may_stop, "Kueue's defaults");
    /* cpu lists no GPU flavor: no GPU quota, and it may not borrow any (borrowingLimit 0). */
    const struct kueue_cq_def *cpu = &m.cqs[kueue_model_cq(&m, "cpu")];
    cr_assert_eq(cpu->cq.nflavors, 0);
    cr_assert_float_eq(cpu->q.nominal[0] + cpu->q.nominal[1], 0, 0);
    cr_assert_float_eq(cpu->q.bl[0], 0, 0);
    cr_assert_float_eq(cpu->q.bl[1], 0, 0);
    kueue_model_release(&m);

    /* One pool: the single-pool rule is unchanged — flavors match policy.node_labels (none
     * given here), so no GPU flavor maps and the manifests are refused as before. */
    cr_assert_neq(kueue_model_load_strings_pools(&m, names, texts, 1, NULL, two_pools, 1, &err), 0);
    cr_assert(strstr(err.msg, "no ClusterQueue or Cohort gives nvidia.com/gpu quota"), "%s",
              err.msg);
}

/* ---- the policy: placement on the assigned flavor's pools ---- */

#define FLEET_YAML(DURATION, REQUIRE)                                                      \
    "name: t\nseed: 3\nduration: " DURATION "\nsample_interval: 60s\n"                     \
    "cluster:\n  pools:\n"                                                                 \
    "    - {name: a100, gpu: a100-sxm4-80gb, nodes: 2, gpus_per_node: 8,\n"                \
    "       labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}\n"                    \
    "    - {name: h100, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 8,\n"                \
    "       labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n"                    \
    "training:\n  backlog: 40\n" REQUIRE                                                   \
    "  jobs: {synthetic: {per_hour: 6, duration: {lognormal: {median: 1h, sigma: 0.7}},\n" \
    "         gpus: {1: 0.3, 2: 0.3, 4: 0.2, 8: 0.2}}}\n"                                  \
    "policy:\n  name: kueue\n  manifests: [tests/data/kueue/flavors.yaml]\n"               \
    "  training_queues: {team/jobs: 1}\n"

/* Jobs running on flavor f (0 H100 = pool 1, 1 A100 = pool 0); asserts each job's cards all
 * lie in its flavor's pool. */
static void check_placement(const struct sim *s, uint32_t *on)
{
    const struct kueue *q = kueue_policy_kueue(s);
    cr_assert_not_null(q);
    on[0] = on[1] = 0;
    for (uint32_t j = 0; j < s->tr.njobs; j++) {
        const struct job *jb = &s->tr.jobs[j];
        if (jb->state != JOB_RUNNING)
            continue;
        const struct kueue_wl *w = kueue_find(q, j);
        cr_assert(w && w->admitted, "job %u runs without admission", j);
        uint32_t want_pool = w->flavor == 0 ? 1 : 0;
        for (uint32_t i = 0; i < jb->spec.gpus; i++)
            cr_assert_eq(cluster_pool_of_card(&s->cl, jb->gpus[i]), want_pool,
                         "job %u admitted on flavor %u runs on card %u of pool %u", j, w->flavor,
                         jb->gpus[i], cluster_pool_of_card(&s->cl, jb->gpus[i]));
        on[w->flavor] += jb->spec.gpus;
    }
}

/*
 * 40 backlog jobs of 1–8 cards for one CQ of H100 8 + A100 16: at several
 * instants every running job lies on its flavor's pool, and both flavors are
 * in use (H100 first: after 10 minutes, with 40 jobs waiting, it is full, 8
 * cards, and A100 holds the rest; later at most its 8). With `require: {gpu: a100-sxm4-80gb}` no
 * job is ever admitted on H100 (the flavor its constraint refuses is skipped).
 */
Test(kueue_flavors, admitted_job_runs_only_on_its_flavors_pools)
{
    static const char *const runs[] = {FLEET_YAML("10m", ""), FLEET_YAML("1h", ""),
                                       FLEET_YAML("3h", "")};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        struct scenario sc;
        struct sim s;
        simtest_run(&sc, &s, runs[r], 1);
        uint32_t on[2];
        check_placement(&s, on);
        if (r == 0) /* the first jobs of the backlog fill H100 before any goes to A100 */
            cr_assert_eq(on[0], 8u, "H100 flavor holds %u cards, want its 8", on[0]);
        cr_assert_gt(on[0], 0u, "run %zu: nothing on H100", r);
        cr_assert_leq(on[0], 8u);
        cr_assert_gt(on[1], 0u, "run %zu: nothing on A100", r);
        cr_assert_leq(on[1], 16u);
        simtest_free(&sc, &s);
    }
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, FLEET_YAML("1h", "  require: {gpu: a100-sxm4-80gb}\n"), 1);
    uint32_t on[2];
    check_placement(&s, on);
    cr_assert_eq(on[0], 0u, "a job that requires A100 admitted on H100");
    cr_assert_gt(on[1], 0u);
    simtest_free(&sc, &s);
}

/*
 * Per-queue results with two flavors (results /queues/<name>/flavors): the queue's figures
 * per flavor, in ResourceFlavor order (h100, a100), nominal 8 and 16 as in the manifest, the
 * totals the sums over the flavors, and each flavor's admitted quota at least the cards its
 * running jobs hold (admitted jobs may still wait for a node).
 */
Test(kueue_flavors, queue_results_per_flavor_add_up_to_the_totals)
{
    struct scenario sc;
    struct sim s;
    simtest_run(&sc, &s, FLEET_YAML("1h", ""), 1);
    struct pol_queue_stat st[4];
    uint32_t n = s.pol->queues(&s, s.pol_state, st, 4);
    cr_assert_eq(n, 1);
    cr_assert_eq(st[0].nflavors, 2);
    cr_assert_str_eq(st[0].flavors[0].name, "h100");
    cr_assert_str_eq(st[0].flavors[1].name, "a100");
    cr_assert_float_eq(st[0].flavors[0].nominal, 8, 0);
    cr_assert_float_eq(st[0].flavors[1].nominal, 16, 0);
    cr_assert_float_eq(st[0].nominal, 24, 0);
    cr_assert_float_eq(st[0].flavors[0].admitted + st[0].flavors[1].admitted, st[0].admitted, 1e-9);
    cr_assert_float_eq(st[0].borrowed, 0, 0, "no cohort: nothing borrowed");
    uint32_t on[2];
    check_placement(&s, on);
    cr_assert_geq(st[0].flavors[0].admitted, on[0]);
    cr_assert_geq(st[0].flavors[1].admitted, on[1]);
    cr_assert_leq(st[0].flavors[0].admitted, 8 + 1e-9);
    cr_assert_leq(st[0].flavors[1].admitted, 16 + 1e-9);
    simtest_free(&sc, &s);
}

/* A one-service fleet under tests/data/kueue/flavors-serve.yaml, its replicas requiring BOARD. */
static const char *serve_yaml(char *buf, size_t n, const char *board)
{
    snprintf(buf, n,
             "name: t\nduration: 10m\nsample_interval: 60s\n"
             "cluster:\n  pools:\n"
             "    - {name: a100, gpu: a100-sxm4-80gb, nodes: 1, gpus_per_node: 8,\n"
             "       labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}\n"
             "    - {name: h100, gpu: h100-sxm5-80gb, nodes: 1, gpus_per_node: 8,\n"
             "       labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n"
             "services:\n"
             "  - name: chat\n"
             "    latency: { a_ms: 1, b_ms: 0.1 }\n"
             "    replicas: 2\n"
             "    queue: serve/web\n"
             "    require: { gpu: %s }\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 10 } }\n"
             "training:\n  jobs: {synthetic: {per_hour: 0}}\n"
             "policy:\n  name: kueue\n  manifests: [tests/data/kueue/flavors-serve.yaml]\n"
             "  training_queues: {team/jobs: 1}\n",
             board);
    return buf;
}

/*
 * The serving ClusterQueue lists only the A100 flavor. A service that requires H100 could
 * never have a replica admitted through it (Kueue would keep its pods pending for ever): the
 * run is refused at the start with a message naming the service and the queue. Requiring
 * A100, the same file runs, its 2 replicas on A100 cards (0-7).
 */
Test(kueue_flavors, a_service_no_flavor_of_its_queue_can_hold_is_refused_at_the_start)
{
    char yaml[2048];
    struct scenario sc;
    struct conf_err err;
    cr_assert_eq(
        scenario_load_string(&sc, "t.yaml", serve_yaml(yaml, sizeof yaml, "h100-sxm5-80gb"), &err),
        0, "%s", err.msg);
    struct sim s;
    cr_assert_neq(sim_init(&s, &sc, 1, NULL), 0, "an H100-only service was started");
    cr_expect(strstr(s.err, "service 'chat'") && strstr(s.err, "ClusterQueue 'serve'") &&
                  strstr(s.err, "could hold at most 0 GPUs"),
              "%s", s.err);
    scenario_release(&sc);

    simtest_build(&sc, &s, serve_yaml(yaml, sizeof yaml, "a100-sxm4-80gb"), 1);
    cr_assert_eq(service_replicas(&s.svcs[0]), 2);
    for (uint32_t r = 0; r < s.svcs[0].nreps; r++)
        if (!s.svcs[0].reps[r].gone)
            cr_expect_lt(s.svcs[0].reps[r].gpu, 8, "replica %u on card %u", r,
                         s.svcs[0].reps[r].gpu);
    simtest_free(&sc, &s);
}
