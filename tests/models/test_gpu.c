/* test_gpu.c — GPU spec table and lookups (numbers and sources: docs/models.md "GPU specs"). */
#include <criterion/criterion.h>
#include <string.h>

#include "models/gpu.h"

Test(gpu, specs_match_sources)
{
    const struct gpu_spec *a40 = gpu_spec_find("a100-sxm4-40gb");
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    const struct gpu_spec *h = gpu_spec_find("h100-sxm5-80gb");
    cr_assert(a40 && a80 && h);
    cr_expect_eq(a40->sms, 108);
    cr_expect_eq(a80->sms, 108);
    cr_expect_eq(h->sms, 132);
    cr_expect_eq(a40->memory_gb, 40);
    cr_expect_eq(a80->memory_gb, 80);
    cr_expect_eq(a40->memory_mib, 40 * 1024);
    cr_expect_eq(a80->memory_mib, 80 * 1024);
    cr_expect_float_eq(a40->tdp_w, 400.0, 1e-9);
    cr_expect_float_eq(a80->tdp_w, 400.0, 1e-9);
    cr_expect_float_eq(h->tdp_w, 700.0, 1e-9);
    cr_expect(a80->idle_w >= 49.0 && a80->idle_w <= 51.0); /* mig-parted #31: 49-51 W */
    cr_expect_float_eq(a40->mem_bw_gbps, 1555.0, 1e-9);
    cr_expect_float_eq(a80->mem_bw_gbps, 2039.0, 1e-9);
    for (size_t i = 0; i < gpu_spec_count(); i++) {
        const struct gpu_spec *g = gpu_spec_at(i);
        cr_expect(g->mig_capable, "%s", g->name);
        cr_expect(g->idle_w > 0.0 && g->idle_w < g->tdp_w, "%s", g->name);
    }
    cr_expect_null(gpu_spec_at(gpu_spec_count()));
}

Test(gpu, lookup_is_case_insensitive)
{
    cr_assert_eq(gpu_spec_find("A100-SXM4-80GB"), gpu_spec_find("a100-sxm4-80gb"));
    cr_assert_eq(gpu_spec_find("H100-Sxm5-80gb"), gpu_spec_find("h100-sxm5-80gb"));
    cr_assert_null(gpu_spec_find("a100"));
    cr_assert_null(gpu_spec_find(""));
    cr_assert_null(gpu_spec_find(NULL));
}

Test(gpu, unknown_message_lists_names)
{
    char buf[256];
    size_t need = gpu_spec_unknown_msg(buf, sizeof buf, "v100");
    cr_assert_str_eq(buf, "unknown GPU 'v100' (expected one of: a100-sxm4-40gb, a100-sxm4-80gb, "
                          "h100-sxm5-80gb)");
    cr_assert_eq(need, strlen(buf));
    char small[16];
    need = gpu_spec_unknown_msg(small, sizeof small, "v100");
    cr_assert_eq(need, strlen(buf));
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert_eq(strncmp(small, buf, sizeof small - 1), 0);
    gpu_spec_names(buf, sizeof buf);
    cr_assert_str_eq(buf, "a100-sxm4-40gb, a100-sxm4-80gb, h100-sxm5-80gb");
}
