/* test_share.c — per-card sharing: speeds, waits, OOM and fault blast radius. */
#include <criterion/criterion.h>
#include <errno.h>

#include "models/gpu.h"
#include "models/mig.h"
#include "models/share.h"

static struct share_knobs knobs(void)
{
    struct share_knobs k;
    share_knobs_init(&k);
    return k;
}

Test(share, timeslice_two_equal_tenants_then_one)
{
    struct share_knobs k = knobs();
    struct share_tenant t[2];
    double v[2];
    share_tenant_init(&t[0]);
    share_tenant_init(&t[1]);
    cr_assert_eq(share_speeds(SHARE_TIMESLICE, &k, t, 2, v), 0);
    double o = SHARE_TS_OVERHEAD_DEFAULT;
    cr_expect_float_eq(v[0], (1.0 - o) / 2.0, 1e-12);
    cr_expect_float_eq(v[1], (1.0 - o) / 2.0, 1e-12);
    /* the second finishes: the first runs alone at full speed */
    t[1].active = false;
    cr_assert_eq(share_speeds(SHARE_TIMESLICE, &k, t, 2, v), 0);
    cr_expect_float_eq(v[0], 1.0, 1e-12);
    cr_expect_float_eq(v[1], 0.0, 1e-12);
    /* demand does not matter under time-slicing: the slice is the whole card */
    t[1].active = true;
    t[1].demand = 0.2;
    cr_assert_eq(share_speeds(SHARE_TIMESLICE, &k, t, 2, v), 0);
    cr_expect_float_eq(v[1], (1.0 - o) / 2.0, 1e-12);
}

Test(share, timeslice_overhead_knob_and_waits)
{
    struct share_knobs k = knobs();
    k.ts_overhead = 0.1;
    struct share_tenant t[4];
    double v[4];
    for (int i = 0; i < 4; i++)
        share_tenant_init(&t[i]);
    cr_assert_eq(share_speeds(SHARE_TIMESLICE, &k, t, 4, v), 0);
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(v[i], 0.9 / 4.0, 1e-12);

    k = knobs();
    /* switch = o/(1-o) x slice = 0.05/0.95 x 2 ms = 105.26 µs */
    cr_expect_float_eq(share_ts_switch_s(&k), 0.002 * 0.05 / 0.95, 1e-15);
    cr_expect_float_eq(share_ts_expected_wait_s(&k, 0), 0.0, 1e-15);
    /* one other: half its slice then a switch; three others: half their turn 3(T + s), then s */
    double s0 = 0.002 * 0.05 / 0.95;
    cr_expect_float_eq(share_ts_expected_wait_s(&k, 1), 0.001 + s0, 1e-15);
    cr_expect_float_eq(share_ts_expected_wait_s(&k, 3), 1.5 * (0.002 + s0) + s0, 1e-15);
    cr_expect_float_eq(share_ts_max_wait_s(&k, 1), 0.002 + 0.002 * 0.05 / 0.95, 1e-15);
    /* the per-switch cost spread over slice + switch is exactly the overhead fraction */
    double sw = share_ts_switch_s(&k);
    cr_expect_float_eq(sw / (k.ts_slice_s + sw), k.ts_overhead, 1e-12);
}

Test(share, exclusive_is_one_tenant)
{
    struct share_knobs k = knobs();
    struct share_tenant t[2];
    double v[2];
    share_tenant_init(&t[0]);
    share_tenant_init(&t[1]);
    cr_assert_eq(share_speeds(SHARE_EXCLUSIVE, &k, t, 1, v), 0);
    cr_expect_float_eq(v[0], 1.0, 1e-12);
    cr_expect_eq(share_speeds(SHARE_EXCLUSIVE, &k, t, 2, v), -E2BIG);
}

Test(share, mps_caps_water_filling_and_interference)
{
    struct share_knobs k = knobs();
    double kk = SHARE_MPS_INTERFERENCE_DEFAULT;
    struct share_tenant t[3];
    double v[3];
    for (int i = 0; i < 3; i++)
        share_tenant_init(&t[i]);
    /* alone, capped at 50% of the threads: half speed */
    t[0].sm_cap = 0.5;
    cr_assert_eq(share_speeds(SHARE_MPS, &k, t, 1, v), 0);
    cr_expect_float_eq(v[0], 0.5, 1e-12);
    /* two small clients (30% SMs each) fit side by side; only interference slows them */
    share_tenant_init(&t[0]);
    t[0].demand = t[1].demand = 0.3;
    cr_assert_eq(share_speeds(SHARE_MPS, &k, t, 2, v), 0);
    cr_expect_float_eq(v[0], 1.0 / (1.0 + kk * 0.3), 1e-12);
    cr_expect_float_eq(v[1], 1.0 / (1.0 + kk * 0.3), 1e-12);
    /* demands 0.2, 0.9, 0.9 (sum 2.0): 0.2 kept, the others get 0.4 each */
    t[0].demand = 0.2;
    t[1].demand = t[2].demand = 0.9;
    cr_assert_eq(share_speeds(SHARE_MPS, &k, t, 3, v), 0);
    cr_expect_float_eq(v[0], 1.0 / (1.0 + kk * 1.8), 1e-12);
    cr_expect_float_eq(v[1], (0.4 / 0.9) / (1.0 + kk * 1.1), 1e-12);
    cr_expect_float_eq(v[2], v[1], 1e-12);
    /* an idle client neither slows nor takes SMs */
    t[2].active = false;
    cr_assert_eq(share_speeds(SHARE_MPS, &k, t, 3, v), 0);
    cr_expect_float_eq(v[0], 1.0 / (1.0 + kk * 0.9), 1e-12);
    cr_expect_float_eq(v[2], 0.0, 1e-12);
}

Test(share, mps_client_limit)
{
    struct share_knobs k = knobs();
    struct share_tenant t[SHARE_MPS_MAX_CLIENTS + 1];
    double v[SHARE_MPS_MAX_CLIENTS + 1];
    for (int i = 0; i <= SHARE_MPS_MAX_CLIENTS; i++) {
        share_tenant_init(&t[i]);
        t[i].demand = 0.01;
    }
    cr_expect_eq(share_speeds(SHARE_MPS, &k, t, SHARE_MPS_MAX_CLIENTS, v), 0);
    cr_expect_eq(share_speeds(SHARE_MPS, &k, t, SHARE_MPS_MAX_CLIENTS + 1, v), -E2BIG);
    t[0].demand = 0.0;
    cr_expect_eq(share_speeds(SHARE_MPS, &k, t, 2, v), -EINVAL);
}

Test(share, mig_instances_run_at_their_slice_speed)
{
    struct share_knobs k = knobs();
    struct mig_knobs mk;
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    cr_assert_eq(mig_knobs_init(&mk, a80), 0);
    double s3 = mig_knobs_speed(&mk, mig_profile_find(a80, "3g.40gb"));
    double s1 = mig_knobs_speed(&mk, mig_profile_find(a80, "1g.10gb"));
    struct share_tenant t[3];
    double v[3];
    for (int i = 0; i < 3; i++)
        share_tenant_init(&t[i]);
    t[0].slice_speed = s3;
    t[0].group = 0;
    t[1].slice_speed = t[2].slice_speed = s1;
    t[1].group = 1;
    t[2].group = 2;
    cr_assert_eq(share_speeds(SHARE_MIG, &k, t, 3, v), 0);
    cr_expect_float_eq(v[0], s3, 1e-12);
    cr_expect_float_eq(v[1], s1, 1e-12);
    cr_expect_float_eq(v[2], s1, 1e-12);
    /* no cross-slice interference: a neighbour going idle changes nothing */
    t[0].active = false;
    cr_assert_eq(share_speeds(SHARE_MIG, &k, t, 3, v), 0);
    cr_expect_float_eq(v[1], s1, 1e-12);
    /* two tenants time-sliced inside one instance */
    t[2].group = 1;
    cr_assert_eq(share_speeds(SHARE_MIG, &k, t, 3, v), 0);
    cr_expect_float_eq(v[1], s1 * (1.0 - k.ts_overhead) / 2.0, 1e-12);
}

Test(share, timeslice_oom_kills_exactly_the_overflowing_tenant)
{
    struct share_tenant t[3];
    bool killed[3];
    for (int i = 0; i < 3; i++)
        share_tenant_init(&t[i]);
    /* 80 GiB card; allocations in order 50, 40, 20 GiB: the 40 overflows (90), the 20 fits (70) */
    t[0].mem_gib = 50.0;
    t[1].mem_gib = 40.0;
    t[2].mem_gib = 20.0;
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 3, 80.0, killed), 1);
    cr_expect_not(killed[0]);
    cr_expect(killed[1]);
    cr_expect_not(killed[2]);
    /* same tenants, other order: now the last allocation overflows */
    t[0].mem_gib = 20.0;
    t[1].mem_gib = 50.0;
    t[2].mem_gib = 40.0;
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 3, 80.0, killed), 1);
    cr_expect(!killed[0] && !killed[1] && killed[2]);
    /* everything fits: nobody dies */
    t[2].mem_gib = 10.0;
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 3, 80.0, killed), 0);
}

/*
 * Memory quotas under time-slicing, by hand on an 80 GiB card: A asks for and
 * allocates 40 GiB; B asks for 40 GiB and allocates 60 (over its request).
 * Enforced (B's limit = its 40 GiB request, HAMi-style): B's own allocation
 * fails, A lives. None: B's request fits (80), its excess (100 > 80) takes
 * the pool A allocates from, so A dies and B (60 alone) runs. A tenant whose
 * request itself does not fit still fails alone (C: 50 after A's 40).
 */
Test(share, timeslice_quota_kills_alone_none_kills_the_card_mates)
{
    struct share_tenant t[3];
    bool killed[3];
    for (int i = 0; i < 3; i++)
        share_tenant_init(&t[i]);
    t[0].mem_gib = 40.0;
    t[1].mem_gib = 60.0;
    t[1].mem_quota_gib = 40.0;
    t[1].mem_limit_gib = 40.0; /* enforced */
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 2, 80.0, killed), 1);
    cr_expect(!killed[0] && killed[1]);
    t[1].mem_limit_gib = 0.0; /* none */
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 2, 80.0, killed), 1);
    cr_expect(killed[0] && !killed[1]);
    /* B over the whole card (90 > 80): it dies too, after A */
    t[1].mem_gib = 90.0;
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 2, 80.0, killed), 2);
    /* an over-user whose excess still fits harms nobody (40 + 35 <= 80) */
    t[1].mem_gib = 35.0;
    t[1].mem_quota_gib = 30.0;
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 2, 80.0, killed), 0);
    /* a request that does not fit fails alone: A 40, C asks 50 and allocates 70 */
    t[1].mem_gib = 70.0;
    t[1].mem_quota_gib = 50.0;
    cr_assert_eq(share_oom(SHARE_TIMESLICE, t, 2, 80.0, killed), 1);
    cr_expect(!killed[0] && killed[1]);
    /* MPS keeps its rule: no card-mate dies of another client's excess */
    t[1].mem_gib = 60.0;
    t[1].mem_quota_gib = 40.0;
    cr_assert_eq(share_oom(SHARE_MPS, t, 2, 80.0, killed), 1);
    cr_expect(!killed[0] && killed[1]);
}

Test(share, mps_pinned_limit_is_per_client)
{
    struct share_tenant t[3];
    bool killed[3];
    for (int i = 0; i < 3; i++) {
        share_tenant_init(&t[i]);
        t[i].mem_limit_gib = 20.0;
        t[i].mem_gib = 15.0;
    }
    t[1].mem_gib = 25.0; /* over its own limit */
    cr_assert_eq(share_oom(SHARE_MPS, t, 3, 80.0, killed), 1);
    cr_expect(!killed[0] && killed[1] && !killed[2]);
    /* without a limit, the same client fits on the card */
    t[1].mem_limit_gib = 0.0;
    cr_assert_eq(share_oom(SHARE_MPS, t, 3, 80.0, killed), 0);
}

Test(share, mig_refuses_allocation_larger_than_slice)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    const struct mig_profile *p = mig_profile_find(a80, "1g.10gb"); /* 9.50 GiB */
    cr_expect_not(mig_fits_memory(p, 12.0));
    cr_expect(mig_fits_memory(p, 8.0));
    /* and per instance, an overflowing allocation is the one refused */
    struct share_tenant t[1];
    bool killed[1];
    share_tenant_init(&t[0]);
    t[0].mem_gib = 12.0;
    cr_expect_eq(share_oom(SHARE_MIG, t, 1, p->memory_mib / 1024.0, killed), 1);
}

Test(share, mps_fault_ends_all_clients_on_that_card_only)
{
    struct share_tenant card_a[3], card_b[2];
    bool dies_a[3], dies_b[2];
    for (int i = 0; i < 3; i++)
        share_tenant_init(&card_a[i]);
    for (int i = 0; i < 2; i++)
        share_tenant_init(&card_b[i]);
    cr_assert_eq(share_fault_victims(SHARE_MPS, card_a, 3, 1, dies_a), 3);
    cr_expect(dies_a[0] && dies_a[1] && dies_a[2]);
    /* the fault is on card A: no tenant of card B is the faulting one */
    cr_assert_eq(share_fault_victims(SHARE_MPS, card_b, 2, 2, dies_b), 0);
    cr_expect(!dies_b[0] && !dies_b[1]);
    /* time-slicing: one fault domain as well */
    cr_assert_eq(share_fault_victims(SHARE_TIMESLICE, card_a, 3, 0, dies_a), 3);
    /* exclusive: only itself */
    cr_assert_eq(share_fault_victims(SHARE_EXCLUSIVE, card_a, 1, 0, dies_a), 1);
}

Test(share, mig_fault_stays_in_its_instance)
{
    struct share_tenant t[4];
    bool dies[4];
    for (int i = 0; i < 4; i++)
        share_tenant_init(&t[i]);
    t[0].group = 0;
    t[1].group = 1;
    t[2].group = 1; /* shares instance 1 with tenant 1 */
    t[3].group = 2;
    cr_assert_eq(share_fault_victims(SHARE_MIG, t, 4, 3, dies), 1);
    cr_expect(!dies[0] && !dies[1] && !dies[2] && dies[3]);
    cr_assert_eq(share_fault_victims(SHARE_MIG, t, 4, 1, dies), 2);
    cr_expect(!dies[0] && dies[1] && dies[2] && !dies[3]);
}

Test(share, mode_names_round_trip)
{
    enum share_mode m;
    for (int i = SHARE_EXCLUSIVE; i <= SHARE_MIG; i++) {
        cr_assert_eq(share_mode_parse(share_mode_name((enum share_mode)i), &m), 0);
        cr_expect_eq((int)m, i);
    }
    cr_expect_eq(share_mode_parse("MPS", &m), 0);
    cr_expect_eq(m, SHARE_MPS);
    cr_expect_eq(share_mode_parse("vgpu", &m), -EINVAL);
}

Test(share, knob_ranges)
{
    struct share_knobs k = knobs();
    cr_assert_eq(share_knobs_check(&k), 0);
    k.ts_overhead = 1.0;
    cr_expect_eq(share_knobs_check(&k), -EINVAL);
    k = knobs();
    k.mps_max_clients = 49;
    cr_expect_eq(share_knobs_check(&k), -EINVAL);
    cr_expect_float_eq(k.fault_rate_per_h, 0.0, 1e-15);
}
