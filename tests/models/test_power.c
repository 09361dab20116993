/* test_power.c — linear power model, hand-computed values. */
#include <criterion/criterion.h>

#include "models/gpu.h"
#include "models/power.h"

Test(power, linear_in_busy)
{
    /* idle 50 W (mig-parted #31), TDP 400 W. */
    cr_expect_float_eq(power_watts(50.0, 400.0, 0.0), 50.0, 1e-9);
    cr_expect_float_eq(power_watts(50.0, 400.0, 0.5), 225.0, 1e-9);
    cr_expect_float_eq(power_watts(50.0, 400.0, 1.0), 400.0, 1e-9);
    cr_expect_float_eq(power_watts(50.0, 400.0, 1.7), 400.0, 1e-9);
    cr_expect_float_eq(power_watts(50.0, 400.0, -0.2), 50.0, 1e-9);
}

Test(power, gpu_spec_and_energy)
{
    const struct gpu_spec *a80 = gpu_spec_find("a100-sxm4-80gb");
    cr_expect_float_eq(power_gpu_watts(a80, 0.0), a80->idle_w, 1e-9);
    cr_expect_float_eq(power_gpu_watts(a80, 1.0), a80->tdp_w, 1e-9);
    cr_expect_float_eq(power_kwh(400.0, 3600.0), 0.4, 1e-12);
    cr_expect_float_eq(power_kwh(400.0, -5.0), 0.0, 1e-12);
    /* one A100 busy half of a day: 225 W x 24 h = 5.4 kWh */
    cr_expect_float_eq(power_gpu_kwh(a80, 0.5, 86400.0), 5.4, 1e-9);
}
