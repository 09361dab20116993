/* power.c — linear power model (see power.h). */
#include "models/power.h"

double power_watts(double idle_w, double tdp_w, double busy)
{
    if (!(busy > 0.0))
        busy = 0.0;
    else if (busy > 1.0)
        busy = 1.0;
    return idle_w + (tdp_w - idle_w) * busy;
}

double power_gpu_watts(const struct gpu_spec *gpu, double busy)
{
    return power_watts(gpu->idle_w, gpu->tdp_w, busy);
}

double power_kwh(double watts, double seconds)
{
    return seconds > 0.0 ? watts * seconds / 3.6e6 : 0.0;
}

double power_gpu_kwh(const struct gpu_spec *gpu, double busy, double seconds)
{
    return power_kwh(power_gpu_watts(gpu, busy), seconds);
}
