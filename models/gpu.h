/*
 * gpu.h — static specifications of the GPU models tidesim simulates.
 *
 * Room models/ (pure models): includes nothing of ours. Rule:
 * docs/architecture.md.
 *
 * One row per board: SM count with MIG off, nominal and visible memory, power
 * envelope (for power.h) and memory bandwidth. Units: memory in GiB (NVIDIA's
 * "40GB"/"80GB" names are binary: nvidia-smi reports 40960 / 81920 MiB) and MiB,
 * power in W, bandwidth in GB/s (10^9 B/s, as vendors quote it).
 *
 * The table is static const; a returned pointer stays valid for the life of
 * the program and must not be freed. Names are matched case-insensitively.
 * Sources are cited next to each number in gpu.c and in docs/models.md.
 */
#ifndef TIDESIM_MODELS_GPU_H
#define TIDESIM_MODELS_GPU_H

#include <stdbool.h>
#include <stddef.h>

struct gpu_spec {
    char name[24];      /* canonical CLI/scenario name, e.g. "a100-sxm4-80gb" */
    int sms;            /* streaming multiprocessors, MIG off */
    int memory_gb;      /* nominal memory, GiB */
    int memory_mib;     /* total memory nvidia-smi reports, MiB */
    double tdp_w;       /* board power limit, W */
    double idle_w;      /* idle power, W */
    double mem_bw_gbps; /* HBM bandwidth, GB/s */
    bool mig_capable;   /* has a MIG profile table in mig.h */
    /* Speed relative to the reference board (A100-SXM4, 1.0): a job's work and a batch's time
     * are A100 figures, divided by these on this board (MLPerf results, gpu.c). */
    double train_speed; /* training throughput / A100's */
    double infer_speed; /* inference throughput / A100's */
};

/* Number of known GPUs (>= 1). */
size_t gpu_spec_count(void);

/* The i-th spec (0 <= i < gpu_spec_count()), or NULL when i is out of range. */
const struct gpu_spec *gpu_spec_at(size_t i);

/* Spec by name, case-insensitive; NULL when name is NULL or unknown. */
const struct gpu_spec *gpu_spec_find(const char *name);

/*
 * Write the known names, comma-separated ("a100-sxm4-40gb, a100-sxm4-80gb, ..."),
 * into buf (always NUL-terminated when len > 0). Returns the length the full
 * text needs (like snprintf): a value >= len means it was truncated.
 */
size_t gpu_spec_names(char *buf, size_t len);

/*
 * Format "unknown GPU 'NAME' (expected one of: a, b, c)" into buf, for CLI and
 * scenario errors. Same return convention as gpu_spec_names().
 */
size_t gpu_spec_unknown_msg(char *buf, size_t len, const char *name);

#endif
