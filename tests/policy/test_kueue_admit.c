/* test_kueue_admit.c — Kueue admission, borrowing limits, queueing strategies and
 * classic preemption on hand-built cases with hand-derived victim sets. */
#include <criterion/criterion.h>
#include <errno.h>

#include "sim/policy/kueue_admit.h"

static struct kueue *k;

static void setup(void)
{
    k = kueue_create();
    cr_assert_not_null(k);
}

static void teardown(void)
{
    kueue_destroy(k);
}

static uint32_t add_cq(double nominal, int32_t cohort, enum kueue_within within,
                       enum kueue_reclaim reclaim)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.nominal = nominal;
    c.cohort = cohort;
    c.within = within;
    c.reclaim = reclaim;
    int i = kueue_add_cq(k, &c);
    cr_assert_geq(i, 0);
    return (uint32_t)i;
}

/* Submit and admit at time `at` (asserting it fits). */
static void running(uint32_t id, uint32_t cq, int32_t prio, double gpus, sim_time at)
{
    cr_assert_eq(kueue_submit(k, id, cq, prio, gpus, at), 0);
    cr_assert_eq(kueue_admit(k, id, at), 0, "workload %u does not fit", id);
}

static void expect(uint32_t id, enum kueue_mode mode, uint32_t n, const uint32_t *victims)
{
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert_eq(d.id, id, "admits %u, want %u", d.id, id);
    cr_assert_eq(d.mode, mode);
    cr_assert_eq(d.n_victims, n, "%u victims, want %u", d.n_victims, n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(d.victims[i], victims[i], "victim %u is %u, want %u", i, d.victims[i],
                     victims[i]);
}

TestSuite(kueue, .init = setup, .fini = teardown);

Test(kueue, high_priority_preempts_lowest_priority_most_recent)
{
    uint32_t q = add_cq(8, KUEUE_NO_COHORT, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_NEVER);
    running(1, q, KUEUE_PRIORITY_TRAINING, 2, 10);
    running(2, q, KUEUE_PRIORITY_TRAINING, 2, 30); /* most recent training */
    running(3, q, KUEUE_PRIORITY_TRAINING, 2, 20);
    running(4, q, 200, 2, 40); /* most recent overall, but higher priority */
    cr_assert_float_eq(kueue_usage(k, q), 8.0, 1e-12);
    cr_assert_eq(kueue_submit(k, 9, q, KUEUE_PRIORITY_INFERENCE, 2, 50), 0);
    expect(9, KUEUE_PREEMPT, 1, (uint32_t[]){2});
    /* Needing 4: 2 (admitted at 30) then 3 (at 20); 2 is still needed. */
    cr_assert_eq(kueue_remove(k, 9), 0);
    cr_assert_eq(kueue_submit(k, 9, q, KUEUE_PRIORITY_INFERENCE, 4, 50), 0);
    expect(9, KUEUE_PREEMPT, 2, (uint32_t[]){2, 3});
}

Test(kueue, reverse_removal_drops_unneeded_victim)
{
    uint32_t q = add_cq(8, KUEUE_NO_COHORT, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_NEVER);
    running(1, q, 100, 3, 10);
    running(2, q, 100, 4, 20);
    running(3, q, 100, 1, 30);
    /* Greedy: 3 (frees 1, not enough), then 2 (frees 5). Putting 3 back still
     * leaves 4 free ⇒ only 2 is preempted. */
    cr_assert_eq(kueue_submit(k, 9, q, 1000, 4, 40), 0);
    expect(9, KUEUE_PREEMPT, 1, (uint32_t[]){2});
}

Test(kueue, equal_priority_not_preempted_with_lower_priority_policy)
{
    uint32_t q = add_cq(4, KUEUE_NO_COHORT, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_NEVER);
    running(1, q, 100, 4, 10);
    cr_assert_eq(kueue_submit(k, 2, q, 100, 4, 5), 0);
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 0);
}

Test(kueue, borrowing_queue_preempted_first)
{
    uint32_t a = add_cq(8, 1, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_LOWER_PRIORITY);
    uint32_t b = add_cq(8, 1, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_LOWER_PRIORITY);
    running(1, b, 100, 4, 10);
    running(2, b, 100, 4, 20);
    running(3, b, 100, 4, 30); /* b borrows 4 of a's quota */
    running(4, a, 100, 4, 40); /* most recent, but a is not borrowing */
    cr_assert(kueue_borrowing(k, b));
    cr_assert_not(kueue_borrowing(k, a));
    cr_assert_eq(kueue_submit(k, 9, a, 1000, 4, 50), 0);
    expect(9, KUEUE_PREEMPT, 1, (uint32_t[]){3});
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert_eq(kueue_apply(k, &d, 60), 0);
    cr_assert_float_eq(kueue_usage(k, a), 8.0, 1e-12);
    cr_assert_float_eq(kueue_usage(k, b), 8.0, 1e-12);
    cr_assert_not(kueue_find(k, 3)->admitted);
    cr_assert(kueue_find(k, 9)->admitted);
    /* 3 is pending again and nothing more fits. */
    cr_assert_eq(kueue_next(k, &d), 0);
}

Test(kueue, reclaim_respects_priority_then_falls_back_to_own_queue)
{
    uint32_t a = add_cq(8, 1, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_LOWER_PRIORITY);
    uint32_t b = add_cq(8, 1, KUEUE_WITHIN_NEVER, KUEUE_RECLAIM_NEVER);
    running(1, b, 1000, 12, 10); /* borrowing, but same priority as the preemptor */
    running(2, a, 100, 4, 20);
    (void)b;
    cr_assert_eq(kueue_submit(k, 9, a, 1000, 4, 50), 0);
    /* Only a's own training is a candidate; with it gone a uses 4 ≤ 8 and the
     * cohort 12 + 4 = 16 ≤ 16. */
    expect(9, KUEUE_PREEMPT, 1, (uint32_t[]){2});
}

Test(kueue, strict_fifo_head_blocks_best_effort_does_not)
{
    for (int strict = 0; strict < 2; strict++) {
        struct kueue_cq c;
        kueue_cq_default(&c);
        c.nominal = 8;
        c.strategy = strict ? KUEUE_STRICT_FIFO : KUEUE_BEST_EFFORT_FIFO;
        int q = kueue_add_cq(k, &c);
        cr_assert_geq(q, 0);
        uint32_t base = (uint32_t)strict * 10;
        running(base + 1, (uint32_t)q, 100, 6, 0);
        cr_assert_eq(kueue_submit(k, base + 2, (uint32_t)q, 100, 4, 1), 0); /* head, too big */
        cr_assert_eq(kueue_submit(k, base + 3, (uint32_t)q, 100, 2, 2), 0);
    }
    /* CQ 0 (BestEffortFIFO) admits 3; CQ 1 (StrictFIFO) offers nothing. */
    expect(3, KUEUE_FITS_NOMINAL, 0, NULL);
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert_eq(kueue_apply(k, &d, 5), 0);
    cr_assert_eq(kueue_next(k, &d), 0);
}

Test(kueue, borrowing_and_lending_limits)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.cohort = 7;
    c.nominal = 4;
    c.borrowing_limit = 2;
    uint32_t a = (uint32_t)kueue_add_cq(k, &c);
    c.nominal = 8;
    c.borrowing_limit = KUEUE_UNLIMITED;
    uint32_t b = (uint32_t)kueue_add_cq(k, &c);
    cr_assert_eq(kueue_submit(k, 1, a, 100, 7, 0), 0); /* 7 > 4 + 2 */
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 0);
    cr_assert_eq(kueue_admit(k, 1, 0), -ENOSPC);
    cr_assert_eq(kueue_remove(k, 1), 0);
    cr_assert_eq(kueue_submit(k, 2, a, 100, 6, 0), 0); /* 6 = 4 + 2: by borrowing */
    expect(2, KUEUE_FITS_BORROW, 0, NULL);
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert(d.borrows);
    cr_assert_eq(kueue_apply(k, &d, 1), 0);
    /* b may still use 6 of its 8; the 2 lent to a are gone. */
    cr_assert_eq(kueue_submit(k, 3, b, 100, 7, 2), 0);
    cr_assert_eq(kueue_next(k, &d), 0);
    cr_assert_eq(kueue_remove(k, 3), 0);
    running(4, b, 100, 6, 3);

    /* lendingLimit: c lends at most 1 of its 8. */
    kueue_destroy(k);
    k = kueue_create();
    kueue_cq_default(&c);
    c.cohort = 1;
    c.nominal = 4;
    a = (uint32_t)kueue_add_cq(k, &c);
    c.nominal = 8;
    c.lending_limit = 1;
    b = (uint32_t)kueue_add_cq(k, &c);
    cr_assert_eq(kueue_submit(k, 1, a, 100, 6, 0), 0);
    cr_assert_eq(kueue_next(k, &d), 0);
    cr_assert_eq(kueue_remove(k, 1), 0);
    running(2, a, 100, 5, 0);
    cr_assert(kueue_borrowing(k, a));
    cr_assert_eq(kueue_submit(k, 3, b, 100, 8, 1), 0); /* 1 of b's 8 is lent to a */
    cr_assert_eq(kueue_next(k, &d), 0);
    cr_assert_eq(kueue_remove(k, 3), 0);
    running(4, b, 100, 7, 1);
}

Test(kueue, cycle_prefers_no_borrowing_then_priority)
{
    uint32_t a = add_cq(4, 1, KUEUE_WITHIN_NEVER, KUEUE_RECLAIM_NEVER);
    uint32_t b = add_cq(4, 1, KUEUE_WITHIN_NEVER, KUEUE_RECLAIM_NEVER);
    cr_assert_eq(kueue_submit(k, 1, a, 1000, 6, 0), 0); /* needs borrowing */
    cr_assert_eq(kueue_submit(k, 2, b, 100, 2, 5), 0);  /* fits nominal */
    expect(2, KUEUE_FITS_NOMINAL, 0, NULL);
    cr_assert_eq(kueue_submit(k, 3, b, 500, 2, 9), 0); /* higher priority in b */
    expect(3, KUEUE_FITS_NOMINAL, 0, NULL);
}

/* issue 5's kueue story: an 8-GPU training job preempted by an inference
 * scale-up is requeued and readmitted when the inference replica goes away. */
Test(kueue, preempted_training_requeued_and_readmitted)
{
    uint32_t q = add_cq(16, KUEUE_NO_COHORT, KUEUE_WITHIN_LOWER_PRIORITY, KUEUE_RECLAIM_NEVER);
    running(1, q, KUEUE_PRIORITY_TRAINING, 8, 0);
    running(2, q, KUEUE_PRIORITY_TRAINING, 8, 100);
    cr_assert_eq(kueue_submit(k, 50, q, KUEUE_PRIORITY_INFERENCE, 1, 200), 0);
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1);
    cr_assert_eq(d.n_victims, 1);
    cr_assert_eq(d.victims[0], 2);
    cr_assert_eq(kueue_apply(k, &d, 200), 0);
    cr_assert_eq(kueue_next(k, &d), 0); /* 9 used, 8 more do not fit */
    cr_assert_eq(kueue_remove(k, 50), 0);
    expect(2, KUEUE_FITS_NOMINAL, 0, NULL);
    cr_assert_eq(kueue_find(k, 2)->created, 100);
}

Test(kueue, rejects_bad_input)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.nominal = -1;
    cr_assert_eq(kueue_add_cq(k, &c), -EINVAL);
    uint32_t q = add_cq(4, KUEUE_NO_COHORT, KUEUE_WITHIN_NEVER, KUEUE_RECLAIM_NEVER);
    cr_assert_eq(kueue_submit(k, 1, q + 1, 100, 1, 0), -EINVAL);
    cr_assert_eq(kueue_submit(k, 1, q, 100, 0, 0), -EINVAL);
    cr_assert_eq(kueue_submit(k, 1, q, 100, 1, 0), 0);
    cr_assert_eq(kueue_submit(k, 1, q, 100, 1, 0), -EEXIST);
    cr_assert_eq(kueue_evict(k, 1), -EINVAL);
    cr_assert_eq(kueue_admit(k, 1, 0), 0);
    cr_assert_eq(kueue_admit(k, 1, 0), -EALREADY);
    cr_assert_eq(kueue_remove(k, 2), -ENOENT);
    kueue_destroy(NULL);
}

/*
 * borrowWithinCohort. Cohort of A, B, C, nominal 4 each (12). B runs b1 (4,
 * admitted at 10) and b2 (4, at 20): it borrows 4. A's a1 (6 GPUs, priority
 * 1000) must borrow 2. Without borrowWithinCohort, reclaiming from B requires
 * a1 to fit A's nominal (6 > 4) and A has nothing of its own to preempt: a1
 * waits. With {policy: LowerPriority}: preempting b2 (the most recently
 * admitted of the borrowing CQ) leaves B 4 + A 6 = 10 <= 12: victims {b2}.
 * A threshold of 50 (< b2's 100) forbids it again.
 */
static void borrow_case(enum kueue_borrow policy, bool threshold, int32_t max_prio)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.nominal = 4;
    c.cohort = 0;
    c.within = KUEUE_WITHIN_LOWER_PRIORITY;
    c.reclaim = KUEUE_RECLAIM_ANY;
    c.borrow = policy;
    c.borrow_threshold = threshold;
    c.borrow_max_priority = max_prio;
    uint32_t a = (uint32_t)kueue_add_cq(k, &c);
    c.borrow = KUEUE_BORROW_NEVER;
    uint32_t b = (uint32_t)kueue_add_cq(k, &c);
    cr_assert_geq(kueue_add_cq(k, &c), 0);
    running(1, b, KUEUE_PRIORITY_TRAINING, 4, 10);
    running(2, b, KUEUE_PRIORITY_TRAINING, 4, 20);
    cr_assert_eq(kueue_submit(k, 9, a, KUEUE_PRIORITY_INFERENCE, 6, 30), 0);
}

Test(kueue, borrow_within_cohort_never_waits)
{
    borrow_case(KUEUE_BORROW_NEVER, false, 0);
    struct kueue_decision d;
    cr_expect_eq(kueue_next(k, &d), 0);
}

Test(kueue, borrow_within_cohort_lower_priority_preempts_while_borrowing)
{
    borrow_case(KUEUE_BORROW_LOWER_PRIORITY, false, 0);
    static const uint32_t v[] = {2};
    expect(9, KUEUE_PREEMPT, 1, v);
}

Test(kueue, borrow_within_cohort_threshold_protects_higher_priorities)
{
    borrow_case(KUEUE_BORROW_LOWER_PRIORITY, true, 50);
    struct kueue_decision d;
    cr_expect_eq(kueue_next(k, &d), 0);
}

/*
 * Requeue with backoff: an evicted workload is inadmissible until requeue_at
 * (and does not block a StrictFIFO queue meanwhile); with reorder it queues
 * by its eviction time, behind a workload created after it.
 */
Test(kueue, requeue_backoff_and_eviction_order)
{
    struct kueue_cq c;
    kueue_cq_default(&c);
    c.nominal = 4;
    c.strategy = KUEUE_STRICT_FIFO;
    uint32_t q = (uint32_t)kueue_add_cq(k, &c);
    running(1, q, 100, 4, 0);
    cr_assert_eq(kueue_submit(k, 2, q, 100, 2, 50), 0);
    cr_assert_eq(kueue_usage(k, q), 4);
    cr_assert_eq(kueue_requeue(k, 1, 300, 360, true), 0);
    cr_expect_eq(kueue_usage(k, q), 0, "quota released");
    cr_expect_eq(kueue_find(k, 1)->requeues, 1);
    cr_expect_eq(kueue_next_requeue(k, 300), 360);
    kueue_set_clock(k, 300);
    expect(2, KUEUE_FITS_NOMINAL, 0, NULL); /* 1 backs off: it does not block the head */
    cr_assert_eq(kueue_admit(k, 2, 300), 0);
    kueue_set_clock(k, 360);
    struct kueue_decision d;
    cr_expect_eq(kueue_next(k, &d), 0); /* 1 (4 GPUs) no longer fits beside 2 */
    cr_assert_eq(kueue_remove(k, 2), 0);
    cr_assert_eq(kueue_submit(k, 3, q, 100, 4, 100), 0); /* created before 1's eviction (300) */
    expect(3, KUEUE_FITS_NOMINAL, 0, NULL);
    cr_expect_eq(kueue_requeue(k, 3, 400, 0, false), -EINVAL); /* not admitted */
}
