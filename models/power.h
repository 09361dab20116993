/*
 * power.h — board power and energy.
 *
 * Linear model P(busy) = idle + (TDP − idle) · busy, busy = fraction of time the
 * card is active (DCGM GR_ENGINE_ACTIVE-like), clamped to [0, 1]: our model,
 * between the measured idle draw and the TDP of gpu.c. MIG slices share one
 * board: pass the board's busy fraction, not one per slice. Units: W, s, kWh.
 */
#ifndef TIDESIM_MODELS_POWER_H
#define TIDESIM_MODELS_POWER_H

#include "models/gpu.h"

/* Power draw at busy fraction busy (clamped to [0, 1]), W. */
double power_watts(double idle_w, double tdp_w, double busy);

/* Same for a GPU spec (its idle_w and tdp_w). */
double power_gpu_watts(const struct gpu_spec *gpu, double busy);

/* Energy of drawing watts for seconds, kWh (negative durations count as 0). */
double power_kwh(double watts, double seconds);

/* Energy of gpu at a mean busy fraction over seconds, kWh. */
double power_gpu_kwh(const struct gpu_spec *gpu, double busy, double seconds);

#endif
