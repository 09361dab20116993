/*
 * test_timeslice.c — the closed form of time-slicing (share_ts_batch) against
 * a slice-by-slice round-robin reference (tests/tsref.h), written separately:
 * mean batch latency and the co-located training rate within 5 % for 1 ms
 * and 20 ms batches with two and three tenants, plus hand-computed cases.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "models/share.h"
#include "tests/tsref.h"

static struct share_knobs knobs(void)
{
    struct share_knobs k;
    share_knobs_init(&k); /* slice 2 ms, overhead 0.05: switch 105.26 µs */
    return k;
}

struct cf {
    double service_sum, sojourn_sum, debt;
};

/*
 * Replay the reference's batches through the closed form as the cluster
 * does: a batch that reaches the head when the previous one ends continues
 * its slice (gap 0); otherwise its gap is the time since the context went
 * idle (or unknown, when `phase_known` is false: the uniform-phase mean).
 */
static struct cf replay(const struct tsref *r, bool phase_known)
{
    struct share_knobs k = knobs();
    k.ts_slice_s = r->t_train;
    struct cf out = {0};
    double done = -1, idle_at = -1, off = 0;
    for (uint64_t i = 0; i < r->narr; i++) {
        double ready = r->arr[i] > done ? r->arr[i] : done;
        double gap = ready == done ? 0 : (!phase_known || idle_at < 0) ? -1 : ready - idle_at;
        struct share_ts_batch b;
        cr_assert_eq(share_ts_batch(&k, r->w, r->t_inf, r->k, r->t_train, gap, off, &b), 0);
        done = ready + b.latency_s;
        idle_at = done;
        off = b.end_offset_s;
        out.service_sum += b.latency_s;
        out.sojourn_sum += done - r->arr[i];
        out.debt += b.debt_s;
    }
    return out;
}

/* Reference and closed form for k trainers, batches of w s at load rho (of the card). */
static void compare(unsigned k, double w, double rho, bool phase_known, double horizon)
{
    struct share_knobs kn = knobs();
    struct tsref r = {.t_inf = kn.ts_slice_s,
                      .t_train = kn.ts_slice_s,
                      .sw = share_ts_switch_s(&kn),
                      .k = k,
                      .lambda = rho / w,
                      .w = w,
                      .horizon = horizon,
                      .seed = 12345 + k};
    cr_assert_eq(tsref_run(&r), 0);
    cr_assert_gt(r.batches, 2000u);
    struct cf c = replay(&r, phase_known);
    double n = (double)r.narr;
    double ref_lat = r.service_sum / (double)r.batches, cf_lat = c.service_sum / n;
    double ref_soj = r.sojourn_sum / (double)r.batches, cf_soj = c.sojourn_sum / n;
    double alone = k == 1 ? 1.0 : r.t_train / (r.t_train + r.sw);
    double ref_train = r.train_s / r.elapsed, cf_train = alone - c.debt / r.elapsed;
    cr_expect(fabs(cf_lat - ref_lat) / ref_lat < 0.05,
              "k=%u w=%g ms: latency closed form %.4f ms, reference %.4f ms", k, w * 1e3,
              cf_lat * 1e3, ref_lat * 1e3);
    cr_expect(fabs(cf_soj - ref_soj) / ref_soj < 0.05,
              "k=%u w=%g ms: sojourn closed form %.4f ms, reference %.4f ms", k, w * 1e3,
              cf_soj * 1e3, ref_soj * 1e3);
    cr_expect(fabs(cf_train - ref_train) / ref_train < 0.05,
              "k=%u w=%g ms: training rate closed form %.4f, reference %.4f", k, w * 1e3, cf_train,
              ref_train);
    tsref_free(&r);
}

Test(timeslice, two_tenants_1ms_batches_match_round_robin)
{
    compare(1, 0.001, 0.3, true, 600);
}

Test(timeslice, two_tenants_20ms_batches_match_round_robin)
{
    compare(1, 0.020, 0.3, true, 3600);
}

Test(timeslice, three_tenants_1ms_batches_match_round_robin)
{
    compare(2, 0.001, 0.2, true, 600);
}

Test(timeslice, three_tenants_20ms_batches_match_round_robin)
{
    compare(2, 0.020, 0.2, true, 3600);
}

/* Sparse batches (each finds the card at a random phase): the uniform-phase mean holds too. */
Test(timeslice, uniform_phase_mean_matches_sparse_batches)
{
    compare(1, 0.001, 0.02, false, 3600);
    compare(2, 0.020, 0.02, false, 36000);
}

Test(timeslice, hand_computed_batches)
{
    struct share_knobs k = knobs();
    double T = 0.002, s = share_ts_switch_s(&k);
    struct share_ts_batch b;
    /* Alone: no wait, no debt. */
    cr_assert_eq(share_ts_batch(&k, 0.001, T, 0, T, -1, 0, &b), 0);
    cr_expect_float_eq(b.latency_s, 0.001, 1e-15);
    cr_expect_float_eq(b.debt_s, 0.0, 1e-15);
    /* One trainer, unknown phase, 1 ms: T/2 + s wait, fits its slice: 2.105 ms; debt w + 2s. */
    cr_assert_eq(share_ts_batch(&k, 0.001, T, 1, T, -1, 0, &b), 0);
    cr_expect_float_eq(b.latency_s, T / 2 + s + 0.001, 1e-12);
    cr_expect_float_eq(b.debt_s, 0.001 + 2 * s, 1e-12);
    cr_expect_eq(b.visits, 1u);
    /* 20 ms fresh: 10 slices, 9 interruptions of T + 2s each. */
    cr_assert_eq(share_ts_batch(&k, 0.020, T, 1, T, -1, 0, &b), 0);
    cr_expect_float_eq(b.latency_s, T / 2 + s + 0.020 + 9 * (T + 2 * s), 1e-12);
    cr_expect_eq(b.visits, 10u);
    /* Ready 0.5 ms after it yielded, one trainer: the trainer's slice ends at s + T. */
    cr_assert_eq(share_ts_batch(&k, 0.001, T, 1, T, 0.0005, 0, &b), 0);
    cr_expect_float_eq(b.wait_s, s + T - 0.0005 + s, 1e-12);
    /* Ready 5 ms after, one trainer: its slices end at s + mT; next after 5 ms is s + 3T. */
    cr_assert_eq(share_ts_batch(&k, 0.001, T, 1, T, 0.005, 0, &b), 0);
    cr_expect_float_eq(b.wait_s, s + 3 * T - 0.005 + s, 1e-12);
    /* Two trainers, 5 ms after: the second's slices end at 2(T + s)·m; next is 4(T + s). */
    cr_assert_eq(share_ts_batch(&k, 0.001, T, 2, T, 0.005, 0, &b), 0);
    cr_expect_float_eq(b.wait_s, 4 * (T + s) - 0.005 + s, 1e-12);
    /* Continuing at offset 1.5 ms with 1 ms of work: one interruption of 2T + 3s (two trainers). */
    cr_assert_eq(share_ts_batch(&k, 0.001, T, 2, T, 0, 0.0015, &b), 0);
    cr_expect_float_eq(b.latency_s, 0.001 + 2 * T + 3 * s, 1e-12);
    cr_expect_float_eq(b.end_offset_s, 0.0005, 1e-12);
    cr_expect_eq(b.visits, 1u);
    cr_expect_float_eq(b.debt_s, T / (T + s) * (0.001 + s), 1e-12);
    /* Bad input. */
    cr_expect_eq(share_ts_batch(&k, -1, T, 1, T, -1, 0, &b), -EINVAL);
    cr_expect_eq(share_ts_batch(&k, 0.001, 0, 1, T, -1, 0, &b), -EINVAL);
    cr_expect_eq(share_ts_batch(&k, 0.001, T, 1, T, 0, 2 * T, &b), -EINVAL);
}

/* Inference priority: a longer inference slice and a short training slice cut the latency. */
Test(timeslice, weighted_slices_shorten_a_long_batch)
{
    struct share_knobs k = knobs();
    double s = share_ts_switch_s(&k);
    struct share_ts_batch eq, pr;
    cr_assert_eq(share_ts_batch(&k, 0.040, 0.002, 1, 0.002, -1, 0, &eq), 0);
    cr_assert_eq(share_ts_batch(&k, 0.040, 0.010, 1, 0.002, -1, 0, &pr), 0);
    /* 40 ms in 10 ms slices: 3 interruptions of 2 ms + 2s, vs 19 with equal 2 ms slices. */
    cr_expect_float_eq(pr.latency_s, 0.001 + s + 0.040 + 3 * (0.002 + 2 * s), 1e-12);
    cr_expect_float_eq(eq.latency_s, 0.001 + s + 0.040 + 19 * (0.002 + 2 * s), 1e-12);
}
