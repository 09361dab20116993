/*
 * test_mig.c — MIG profile tables against NVIDIA's (the NVIDIA MIG User
 * Guide, go-nvml's DGX A100 mock and `nvidia-smi mig -lgip`, written out here
 * independently of models/mig.c), and a table of layouts with their verdicts
 * and exact reasons.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "models/gpu.h"
#include "models/mig.h"

struct ref_profile {
    const char *name;
    int compute, memory, sms, max;
    int starts[8]; /* terminated by -1 */
    int size;
};

/* A100-SXM4-40GB (NVIDIA MIG guide + go-nvml dgxa100 mock). */
static const struct ref_profile ref_a100_40[] = {
    {"1g.5gb", 1, 1, 14, 7, {0, 1, 2, 3, 4, 5, 6, -1}, 1},
    {"1g.5gb+me", 1, 1, 14, 1, {0, 1, 2, 3, 4, 5, 6, -1}, 1},
    {"1g.10gb", 1, 2, 14, 4, {0, 2, 4, 6, -1}, 2},
    {"2g.10gb", 2, 2, 28, 3, {0, 2, 4, -1}, 2},
    {"3g.20gb", 3, 4, 42, 2, {0, 4, -1}, 4},
    {"4g.20gb", 4, 4, 56, 1, {0, -1}, 4},
    {"7g.40gb", 7, 8, 98, 1, {0, -1}, 8},
};

/* The 80 GB card: same geometry, names double the memory (NVIDIA MIG guide). */
static const struct ref_profile ref_a100_80[] = {
    {"1g.10gb", 1, 1, 14, 7, {0, 1, 2, 3, 4, 5, 6, -1}, 1},
    {"1g.10gb+me", 1, 1, 14, 1, {0, 1, 2, 3, 4, 5, 6, -1}, 1},
    {"1g.20gb", 1, 2, 14, 4, {0, 2, 4, 6, -1}, 2},
    {"2g.20gb", 2, 2, 28, 3, {0, 2, 4, -1}, 2},
    {"3g.40gb", 3, 4, 42, 2, {0, 4, -1}, 4},
    {"4g.40gb", 4, 4, 56, 1, {0, -1}, 4},
    {"7g.80gb", 7, 8, 98, 1, {0, -1}, 8},
};

/* H100-80GB max instances and SMs (`nvidia-smi mig -lgip`, jbarrow.ai); A100 placements. */
static const struct ref_profile ref_h100[] = {
    {"1g.10gb", 1, 1, 16, 7, {0, 1, 2, 3, 4, 5, 6, -1}, 1},
    {"1g.10gb+me", 1, 1, 16, 1, {0, 1, 2, 3, 4, 5, 6, -1}, 1},
    {"1g.20gb", 1, 2, 26, 4, {0, 2, 4, 6, -1}, 2},
    {"2g.20gb", 2, 2, 32, 3, {0, 2, 4, -1}, 2},
    {"3g.40gb", 3, 4, 60, 2, {0, 4, -1}, 4},
    {"4g.40gb", 4, 4, 64, 1, {0, -1}, 4},
    {"7g.80gb", 7, 8, 132, 1, {0, -1}, 8},
};

static void check_table(const char *gpu_name, const struct ref_profile *ref, size_t nref)
{
    const struct gpu_spec *gpu = gpu_spec_find(gpu_name);
    cr_assert_not_null(gpu);
    size_t n;
    const struct mig_profile *tab = mig_profiles(gpu, &n);
    cr_assert_not_null(tab);
    cr_assert_eq(n, nref, "%s: %zu profiles, expected %zu", gpu_name, n, nref);
    for (size_t i = 0; i < nref; i++) {
        const struct mig_profile *p = mig_profile_find(gpu, ref[i].name);
        cr_assert_not_null(p, "%s: profile %s missing", gpu_name, ref[i].name);
        cr_expect_eq(p->compute_slices, ref[i].compute, "%s %s compute", gpu_name, ref[i].name);
        cr_expect_eq(p->memory_slices, ref[i].memory, "%s %s memory", gpu_name, ref[i].name);
        cr_expect_eq(p->sms, ref[i].sms, "%s %s SMs", gpu_name, ref[i].name);
        cr_expect_eq(p->max_instances, ref[i].max, "%s %s max", gpu_name, ref[i].name);
        cr_expect_eq(p->size, ref[i].size, "%s %s size", gpu_name, ref[i].name);
        for (int s = 0; s < MIG_MEM_SLOTS; s++) {
            bool want = false;
            for (int j = 0; ref[i].starts[j] >= 0; j++)
                want |= ref[i].starts[j] == s;
            bool have = (p->starts >> s) & 1u;
            cr_expect_eq(have, want, "%s %s start %d: allowed=%d, expected %d", gpu_name,
                         ref[i].name, s, have, want);
        }
        /* Every allowed placement lies inside the card. */
        for (int j = 0; ref[i].starts[j] >= 0; j++)
            cr_expect_leq(ref[i].starts[j] + p->size, MIG_MEM_SLOTS);
    }
}

Test(mig, a100_40gb_table_matches_nvidia)
{
    check_table("a100-sxm4-40gb", ref_a100_40, sizeof ref_a100_40 / sizeof ref_a100_40[0]);
}

Test(mig, a100_80gb_table_matches_nvidia)
{
    check_table("a100-sxm4-80gb", ref_a100_80, sizeof ref_a100_80 / sizeof ref_a100_80[0]);
}

Test(mig, h100_80gb_table_matches_nvidia)
{
    check_table("h100-sxm5-80gb", ref_h100, sizeof ref_h100 / sizeof ref_h100[0]);
}

Test(mig, memory_per_profile_from_nvidia_smi)
{
    const struct gpu_spec *a40 = gpu_spec_find("a100-sxm4-40gb");
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    const struct gpu_spec *h = gpu_spec_find("h100-sxm5-80gb");
    /* go-nvml dgxa100 mock. */
    cr_expect_eq(mig_profile_find(a40, "1g.5gb")->memory_mib, 4864);
    cr_expect_eq(mig_profile_find(a40, "3g.20gb")->memory_mib, 19968);
    cr_expect_eq(mig_profile_find(a40, "7g.40gb")->memory_mib, 40192);
    /* nvidia-smi mig -lgip on A100 80GB: 9.50 / 19.50 / 39.25 GiB. */
    cr_expect_eq(mig_profile_find(a80, "1g.10gb")->memory_mib, (int)(9.50 * 1024));
    cr_expect_eq(mig_profile_find(a80, "2g.20gb")->memory_mib, (int)(19.50 * 1024));
    cr_expect_eq(mig_profile_find(a80, "3g.40gb")->memory_mib, (int)(39.25 * 1024));
    /* `nvidia-smi mig -lgip` on an H100 (jbarrow.ai): 9.75 / 39.50 / 79.25 GiB. */
    cr_expect_eq(mig_profile_find(h, "1g.10gb")->memory_mib, (int)(9.75 * 1024));
    cr_expect_eq(mig_profile_find(h, "3g.40gb")->memory_mib, (int)(39.50 * 1024));
    cr_expect_eq(mig_profile_find(h, "7g.80gb")->memory_mib, (int)(79.25 * 1024));
}

Test(mig, profile_lookup_is_case_insensitive)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    cr_assert_eq(mig_profile_find(a80, "3G.40GB"), mig_profile_find(a80, "3g.40gb"));
    cr_assert_null(mig_profile_find(a80, "3g.20gb"));
    cr_assert_null(mig_profile_find(a80, NULL));
    cr_assert_null(mig_profiles(NULL, NULL));
}

struct layout_case {
    const char *gpu;
    const char *layout;
    int rc;             /* 0 valid, else expected negative code */
    const char *result; /* valid: the placement; invalid: the exact reason */
};

static const struct layout_case layout_cases[] = {
    /* valid */
    {"a100-sxm4-80gb", "1g.10gb*7", 0,
     "1g.10gb@0+1g.10gb@1+1g.10gb@2+1g.10gb@3+1g.10gb@4+1g.10gb@5+1g.10gb@6"},
    {"a100-sxm4-80gb", "1g.10gb×7", 0,
     "1g.10gb@0+1g.10gb@1+1g.10gb@2+1g.10gb@3+1g.10gb@4+1g.10gb@5+1g.10gb@6"},
    {"a100-sxm4-80gb", "7×1g.10gb", 0,
     "1g.10gb@0+1g.10gb@1+1g.10gb@2+1g.10gb@3+1g.10gb@4+1g.10gb@5+1g.10gb@6"},
    /* the driver's order strands slice 7 (3g@0, 1g@4-6); another placement works */
    {"a100-sxm4-80gb", "3g.40gb+1g.10gb*4", 0, "3g.40gb@4+1g.10gb@0+1g.10gb@1+1g.10gb@2+1g.10gb@3"},
    {"a100-sxm4-80gb", "3g.40gb+2g.20gb+1g.10gb+1g.10gb", 0,
     "3g.40gb@4+2g.20gb@0+1g.10gb@2+1g.10gb@3"},
    {"a100-sxm4-80gb", "4g.40gb+3g.40gb", 0, "4g.40gb@0+3g.40gb@4"},
    {"a100-sxm4-80gb", "3g.40gb+4g.40gb", 0, "3g.40gb@4+4g.40gb@0"},
    {"a100-sxm4-80gb", "3g.40gb+3g.40gb", 0, "3g.40gb@0+3g.40gb@4"},
    {"a100-sxm4-80gb", "7g.80gb", 0, "7g.80gb@0"},
    {"a100-sxm4-80gb", "4g.40gb+2g.20gb+1g.10gb", 0, "4g.40gb@0+2g.20gb@4+1g.10gb@6"},
    {"a100-sxm4-80gb", "2g.20gb*3+1g.10gb", 0, "2g.20gb@0+2g.20gb@2+2g.20gb@4+1g.10gb@6"},
    {"a100-sxm4-80gb", "1g.20gb*4", 0, "1g.20gb@0+1g.20gb@2+1g.20gb@4+1g.20gb@6"},
    {"a100-sxm4-80gb", "3g.40gb@0+1g.10gb*3", 0, "3g.40gb@0+1g.10gb@4+1g.10gb@5+1g.10gb@6"},
    {"a100-sxm4-80gb", "1g.10gb+me + 1g.10gb*6", 0,
     "1g.10gb+me@0+1g.10gb@1+1g.10gb@2+1g.10gb@3+1g.10gb@4+1g.10gb@5+1g.10gb@6"},
    {"a100-sxm4-40gb", "3g.20gb+2g.10gb+1g.5gb+1g.5gb", 0, "3g.20gb@4+2g.10gb@0+1g.5gb@2+1g.5gb@3"},
    {"a100-sxm4-40gb", "4g.20gb+1g.5gb*3", 0, "4g.20gb@0+1g.5gb@4+1g.5gb@5+1g.5gb@6"},
    {"h100-sxm5-80gb", "3G.40GB + 2g.20gb + 1g.10gb*2", 0,
     "3g.40gb@4+2g.20gb@0+1g.10gb@2+1g.10gb@3"},
    {"a100-sxm4-80gb", "", 0, ""},
    /* invalid: per-profile maximum, instance count, slices */
    {"a100-sxm4-80gb", "4g.40gb+4g.40gb", -ENOSPC,
     "4g.40gb+4g.40gb: only 1 instance of 4g.40gb fits"},
    {"a100-sxm4-80gb", "2g.20gb*4", -ENOSPC, "2g.20gb*4: only 3 instances of 2g.20gb fit"},
    {"a100-sxm4-80gb", "1g.10gb*8", -ENOSPC, "1g.10gb*8: more than 7 instances"},
    {"a100-sxm4-80gb", "3g.40gb+1g.10gb×5", -ENOSPC,
     "3g.40gb+1g.10gb×5: needs 8 compute slices (at most 7)"},
    {"a100-sxm4-80gb", "2g.20gb+1g.10gb×7", -ENOSPC, "2g.20gb+1g.10gb×7: more than 7 instances"},
    {"a100-sxm4-80gb", "1g.20gb×5", -ENOSPC, "1g.20gb×5: only 4 instances of 1g.20gb fit"},
    {"a100-sxm4-80gb", "1g.10gb+me+1g.10gb+me", -ENOSPC,
     "1g.10gb+me+1g.10gb+me: only 1 instance of 1g.10gb+me fits"},
    {"a100-sxm4-80gb", "7g.80gb+1g.10gb", -ENOSPC,
     "7g.80gb+1g.10gb: needs 8 compute slices (at most 7)"},
    {"a100-sxm4-80gb", "4g.40gb+2g.20gb*2", -ENOSPC,
     "4g.40gb+2g.20gb*2: needs 8 compute slices (at most 7)"},
    {"a100-sxm4-80gb", "3g.40gb*2+1g.10gb", -ENOSPC,
     "3g.40gb*2+1g.10gb: needs 9 memory slices (at most 8)"},
    /* invalid: placement (stranding) */
    {"a100-sxm4-80gb", "3g.40gb@0+1g.10gb*4", -ENOSPC,
     "3g.40gb@0+1g.10gb*4: no room for 1g.10gb (memory slices 0-6 used)"},
    {"a100-sxm4-80gb", "1g.10gb@4+4g.40gb@0+2g.20gb", -ENOSPC,
     "1g.10gb@4+4g.40gb@0+2g.20gb: no room for 2g.20gb (memory slices 0-4 used)"},
    {"a100-sxm4-80gb", "2g.20gb@2+4g.40gb", -ENOSPC,
     "2g.20gb@2+4g.40gb: no room for 4g.40gb (memory slices 2-3 used)"},
    /* invalid: names and syntax */
    {"a100-sxm4-80gb", "5g.40gb", -EINVAL,
     "5g.40gb: unknown profile '5g.40gb' for a100-sxm4-80gb (expected one of: 1g.10gb, "
     "1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"},
    {"a100-sxm4-40gb", "3g.40gb", -EINVAL,
     "3g.40gb: unknown profile '3g.40gb' for a100-sxm4-40gb (expected one of: 1g.5gb, "
     "1g.5gb+me, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)"},
    {"a100-sxm4-80gb", "3g.40gb@1", -EINVAL,
     "3g.40gb@1: 3g.40gb cannot start at memory slice 1 (allowed: 0,4)"},
    {"a100-sxm4-80gb", "3g.40gb++1g.10gb", -EINVAL,
     "3g.40gb++1g.10gb: expected a profile name at '+1g.10gb'"},
    {"a100-sxm4-80gb", "1g.10gb*0", -EINVAL, "1g.10gb*0: expected a repetition count 1-99 at '*0'"},
    {"a100-sxm4-80gb", "3g.40gb,1g.10gb", -EINVAL, "3g.40gb,1g.10gb: expected '+' at ',1g.10gb'"},
};

Test(mig, layout_table)
{
    size_t n = sizeof layout_cases / sizeof layout_cases[0];
    cr_assert_geq(n, 20);
    for (size_t i = 0; i < n; i++) {
        const struct layout_case *c = &layout_cases[i];
        struct mig_layout l;
        char err[MIG_ERR_LEN], placed[256];
        int rc = mig_layout_check(gpu_spec_find(c->gpu), c->layout, &l, err, sizeof err);
        cr_expect_eq(rc, c->rc, "[%s] '%s': rc %d, expected %d (%s)", c->gpu, c->layout, rc, c->rc,
                     err);
        if (rc == 0) {
            mig_layout_format(&l, placed, sizeof placed);
            cr_expect_str_eq(placed, c->result, "[%s] '%s'", c->gpu, c->layout);
            cr_expect_leq(mig_layout_compute_slices(&l), MIG_COMPUTE_SLICES);
        } else {
            cr_expect_str_eq(err, c->result, "[%s] '%s'", c->gpu, c->layout);
        }
    }
}

/* A valid layout's placement never overlaps and uses allowed starts only. */
Test(mig, placement_is_consistent)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    struct mig_layout l;
    char err[MIG_ERR_LEN];
    cr_assert_eq(mig_layout_check(a80, "1g.10gb+3g.40gb+2g.20gb+1g.10gb", &l, err, sizeof err), 0,
                 "%s", err);
    unsigned seen = 0;
    for (size_t i = 0; i < l.n; i++) {
        const struct mig_profile *p = l.inst[i].profile;
        unsigned bits = ((1u << p->size) - 1u) << l.inst[i].start;
        cr_assert(p->starts & (1u << l.inst[i].start));
        cr_assert_eq(seen & bits, 0u);
        seen |= bits;
    }
    cr_assert_eq(seen, l.used);
    cr_assert_eq(l.used, 0xffu); /* 1+4+2+1 memory slices */
}

/*
 * Brute-force reference over the test's own table (ref_a100_40), independent of mig.c: place
 * the multiset left[] on the free memory slots; with need_maximal, succeed only on a placement
 * after which no further GI of a profile still under its limit fits anywhere.
 */
struct ref_ctx {
    const struct ref_profile *ref;
    size_t np;
    const int *want; /* the multiset */
    const int *lim;  /* per-profile limit; 0 = profile excluded */
    int total;
    bool need_maximal;
};

static bool ref_allowed(const struct ref_profile *r, int s)
{
    for (int j = 0; r->starts[j] >= 0; j++)
        if (r->starts[j] == s)
            return true;
    return false;
}

static bool ref_free_start(const struct ref_profile *r, unsigned mask)
{
    for (int s = 0; s + r->size <= MIG_MEM_SLOTS; s++)
        if (ref_allowed(r, s) && !(mask & (((1u << r->size) - 1u) << s)))
            return true;
    return false;
}

static bool ref_rec(const struct ref_ctx *x, int *left, unsigned mask, size_t p)
{
    while (p < x->np && left[p] == 0)
        p++;
    if (p == x->np) {
        if (!x->need_maximal || x->total >= MIG_MAX_INSTANCES)
            return true;
        for (size_t q = 0; q < x->np; q++)
            if (x->want[q] < x->lim[q] && ref_free_start(&x->ref[q], mask))
                return false;
        return true;
    }
    const struct ref_profile *r = &x->ref[p];
    bool ok = false;
    left[p]--;
    for (int s = 0; !ok && s + r->size <= MIG_MEM_SLOTS; s++) {
        unsigned bits = ((1u << r->size) - 1u) << s;
        if (ref_allowed(r, s) && !(mask & bits))
            ok = ref_rec(x, left, mask | bits, p);
    }
    left[p]++;
    return ok;
}

static bool model_fits(const struct gpu_spec *gpu, const struct ref_profile *ref, const int *count,
                       size_t np)
{
    struct mig_layout l = {.gpu = gpu};
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < count[p]; k++) {
            if (l.n == MIG_MAX_INSTANCES)
                return false;
            l.inst[l.n].profile = mig_profile_find(gpu, ref[p].name);
            l.inst[l.n++].start = -1;
        }
    return mig_layout_place(&l, "x", NULL, 0) == 0;
}

/*
 * Walk every multiset of A100-40GB profiles within the per-profile maxima: the model's verdict
 * must equal the brute force's, and count the multisets that have a maximal placement.
 */
static int count_maximal(bool with_1g10)
{
    const struct gpu_spec *a40 = gpu_spec_find("a100-sxm4-40gb");
    const struct ref_profile *ref = ref_a100_40;
    size_t np = sizeof ref_a100_40 / sizeof ref_a100_40[0];
    int lim[MIG_MAX_PROFILES] = {0}, c[MIG_MAX_PROFILES] = {0}, left[MIG_MAX_PROFILES];
    for (size_t p = 0; p < np; p++) {
        bool excluded = strstr(ref[p].name, "+me") != NULL ||
                        (!with_1g10 && strcmp(ref[p].name, "1g.10gb") == 0);
        lim[p] = excluded ? 0 : ref[p].max;
    }
    int maximal = 0;
    for (;;) {
        struct ref_ctx x = {.ref = ref, .np = np, .want = c, .lim = lim};
        for (size_t p = 0; p < np; p++)
            x.total += c[p];
        memcpy(left, c, sizeof left);
        bool fits = x.total <= MIG_MAX_INSTANCES && ref_rec(&x, left, 0, 0);
        cr_assert_eq(model_fits(a40, ref, c, np), fits, "verdict differs from brute force");
        x.need_maximal = true;
        if (fits && x.total > 0 && ref_rec(&x, left, 0, 0))
            maximal++;
        size_t p = 0;
        while (p < np && c[p] == lim[p])
            c[p++] = 0;
        if (p == np)
            break;
        c[p]++;
    }
    return maximal;
}

/* 14 maximal A100-40GB layouts without the 1g.10gb/+me variants, 38 with 1g.10gb (research notes
 * §1.3). */
Test(mig, maximal_layouts_match_models_md)
{
    int without = count_maximal(false), with = count_maximal(true);
    cr_expect_eq(without, 14, "%d maximal layouts without 1g.10gb", without);
    cr_expect_eq(with, 38, "%d maximal layouts with 1g.10gb", with);
}

Test(mig, memory_fit_refuses_oversized_jobs)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    const struct mig_profile *p1 = mig_profile_find(a80, "1g.10gb"); /* 9.50 GiB */
    cr_assert(mig_fits_memory(p1, 9.5));
    cr_assert_not(mig_fits_memory(p1, 9.51));
    cr_assert_not(mig_fits_memory(p1, 10.0));
    cr_assert(mig_fits_memory(mig_profile_find(a80, "7g.80gb"), 79.0));
    cr_assert_not(mig_fits_memory(mig_profile_find(a80, "7g.80gb"), 80.0));
}

Test(mig, mask_and_starts_text)
{
    char buf[32];
    mig_mask_text(0x7fu, buf, sizeof buf);
    cr_assert_str_eq(buf, "0-6");
    mig_mask_text(0xffu, buf, sizeof buf);
    cr_assert_str_eq(buf, "0-7");
    mig_mask_text(0x4bu, buf, sizeof buf); /* 0,1,3,6 */
    cr_assert_str_eq(buf, "0-1,3,6");
    mig_mask_text(0, buf, sizeof buf);
    cr_assert_str_eq(buf, "none");
    size_t need = mig_mask_text(0x55u, buf, 4); /* "0,2,4,6" truncated */
    cr_assert_eq(need, strlen("0,2,4,6"));
    cr_assert_str_eq(buf, "0,2");
    mig_starts_text(mig_profile_find(gpu_spec_find("a100-sxm4-40gb"), "2g.10gb"), buf, sizeof buf);
    cr_assert_str_eq(buf, "0,2,4");
}

Test(mig, speed_factor_calibration)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    struct mig_knobs k;
    cr_assert_eq(mig_knobs_init(&k, a80), 0);
    /* MLPerf v2.0 ResNet-50 offline: 7 x 1g.10gb = 278,648/8 per GPU vs 39,649 full. */
    double per_slice = 278648.0 / 8.0 / 39649.0 / 7.0;
    double one_g = mig_knobs_speed(&k, mig_profile_find(a80, "1g.10gb"));
    cr_expect_float_eq(one_g, per_slice, 0.002);
    /* Within the 0.11-0.14 band for a 1g slice. */
    cr_expect(one_g > 0.11 && one_g < 0.14);
    /* Linear in SMs: 7g = 98/14 = 7 times a 1g. */
    cr_expect_float_eq(mig_knobs_speed(&k, mig_profile_find(a80, "7g.80gb")), 7.0 * one_g, 1e-12);
    cr_expect_float_eq(mig_knobs_speed(&k, mig_profile_find(a80, "3g.40gb")), 3.0 * one_g, 1e-12);

    cr_assert_eq(mig_knobs_set_speed(&k, "1G.10GB", 0.132), 0);
    cr_expect_float_eq(mig_knobs_speed(&k, mig_profile_find(a80, "1g.10gb")), 0.132, 1e-12);
    cr_expect_eq(mig_knobs_set_speed(&k, "5g.40gb", 0.5), -ENOENT);
    cr_expect_eq(mig_knobs_set_speed(&k, "2g.20gb", 1.5), -EINVAL);
    cr_assert_eq(mig_knobs_set_efficiency(&k, 1.0), 0);
    cr_expect_float_eq(mig_knobs_speed(&k, mig_profile_find(a80, "7g.80gb")), 98.0 / 108.0, 1e-12);
    cr_expect_eq(mig_knobs_set_efficiency(&k, 0.0), -EINVAL);
}

Test(mig, reconfiguration_time_default)
{
    struct mig_knobs k;
    cr_assert_eq(mig_knobs_init(&k, gpu_spec_find("h100-sxm5-80gb")), 0);
    cr_expect_float_eq(mig_reconfig_seconds(&k), 30.0 + 60.0, 1e-12);
    k.reconfig_s = 10.0;
    k.drain_grace_s = 0.0;
    cr_expect_float_eq(mig_reconfig_seconds(&k), 10.0, 1e-12);
}

Test(mig, place_restores_starts_on_failure)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    struct mig_layout l;
    char err[MIG_ERR_LEN];
    cr_assert_eq(mig_layout_parse(a80, "3g.40gb@0+1g.10gb*4", &l, err, sizeof err), 0);
    cr_assert_eq(mig_layout_place(&l, NULL, err, sizeof err), -ENOSPC);
    cr_expect_str_eq(err, "3g.40gb@0+1g.10gb+1g.10gb+1g.10gb+1g.10gb: no room for 1g.10gb "
                          "(memory slices 0-6 used)");
    cr_expect_eq(l.inst[0].start, 0);
    for (size_t i = 1; i < l.n; i++)
        cr_expect_eq(l.inst[i].start, -1);
}
