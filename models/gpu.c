/* gpu.c — the GPU spec table (sources next to every number). */
#include "models/gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

static const struct gpu_spec gpu_table[] = {
    {
        .name = "a100-sxm4-40gb",
        /* 108 SMs with MIG off: Glenn K. Lockwood's A100 page, glennklockwood.com [weak]. */
        .sms = 108,
        .memory_gb = 40,
        /* nvidia-smi total 40960 MiB (modal-labs/modal-client PR #2797 [data]). */
        .memory_mib = 40960,
        /* SXM4 TDP 400 W: Thunder Compute's A100 spec table, TechPowerUp GPU database [weak]. */
        .tdp_w = 400.0,
        /* Idle 49-51 W measured on the 80 GB SXM4 board (NVIDIA/mig-parted issue #31 [data]);
         * no 40 GB figure was found, the same board family is assumed [derived]. */
        .idle_w = 50.0,
        /* 1,555 GB/s: Thunder Compute's A100 spec table [weak]. */
        .mem_bw_gbps = 1555.0,
        .mig_capable = true,
        /* Taken as the reference board too: no MLPerf pair sets the 40 GB apart (same SMs and
         * clocks, 24 % less bandwidth) [derived]. */
        .train_speed = 1.0,
        .infer_speed = 1.0,
    },
    {
        .name = "a100-sxm4-80gb",
        .sms = 108, /* NJIT ARCS MIG profile comparison: 108 SMs [weak] */
        .memory_gb = 80,
        /* nvidia-smi total 81920 MiB (modal-labs/modal-client PR #2797; mig-parted #31 [data]). */
        .memory_mib = 81920,
        /* 400 W: Thunder Compute, TechPowerUp [weak]; some HGX boards: 500 W (mig-parted #31). */
        .tdp_w = 400.0,
        /* 49-51 W idle, P0, MIG on: NVIDIA/mig-parted issue #31 [data]. */
        .idle_w = 50.0,
        /* 2,039 GB/s SXM: Thunder Compute's A100 spec table [weak]. */
        .mem_bw_gbps = 2039.0,
        .mig_capable = true,
        /* The reference board: work in traces and batch times in scenarios are A100 figures. */
        .train_speed = 1.0,
        .infer_speed = 1.0,
    },
    {
        .name = "h100-sxm5-80gb",
        /* 132 SMs, 80 GB HBM3, 3.35 TB/s, 700 W maximum: glennklockwood.com/garden/processors/h100
         * [weak]; `nvidia-smi mig -lgip` shows 132 SMs for 7g.80gb (jbarrow.ai field notes). */
        .sms = 132,
        .memory_gb = 80,
        /* nvidia-smi total 81559 MiB (modal-labs/modal-client PR #2797 [data]). */
        .memory_mib = 81559,
        .tdp_w = 700.0,
        /* NOT FOUND for H100: calibration default = 20% of nameplate (LBNL via Uptime Institute,
         * uptimeinstitute.com [weak]); on the high side so idle capacity is not undercosted. */
        .idle_w = 140.0,
        .mem_bw_gbps = 3350.0,
        .mig_capable = true,
        /* MLPerf Training v3.0 (mlcommons.org), Dell's same-host pairs of H100-SXM5-80GB vs
         * A100-SXM-80GB: ResNet-50 7.8 vs 14.4 min (16 GPUs, 1.85x), 3D U-Net 7.6 vs 11.0
         * (1.45x), DLRM-dcnv2 4.3 vs 8.4 (8 GPUs, 1.95x), as tabulated by Silverton Consulting,
         * silvertonconsulting.com/2023/07/12/mlperf-results-show-h100-v-a100-and-v-habana-gaudi2-gpus
         * [weak]; geometric mean 1.73 [derived]. */
        .train_speed = 1.73,
        /* MLPerf Inference v3.0 closed, NVIDIA DGX-H100 (8x H100-SXM-80GB) vs DGX-A100 (8x
         * A100-SXM-80GB), TensorRT, Offline: BERT-99 73,107.6 vs 28,275.7 samples/s (2.59x),
         * ResNet-50 727,437 vs 324,612 (2.24x) (github.com/mlcommons/inference_results_v3.0,
         * closed/NVIDIA/results/DGX-{H,A}100_{H,A}100-SXM-80GBx8_TRT/{bert-99,resnet50}/Offline/
         * performance/run_1/mlperf_log_summary.txt [data]);
         * geometric mean 2.41 [derived]. */
        .infer_speed = 2.41,
    },
};

#define GPU_TABLE_LEN (sizeof gpu_table / sizeof gpu_table[0])

size_t gpu_spec_count(void)
{
    return GPU_TABLE_LEN;
}

const struct gpu_spec *gpu_spec_at(size_t i)
{
    return i < GPU_TABLE_LEN ? &gpu_table[i] : NULL;
}

const struct gpu_spec *gpu_spec_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < GPU_TABLE_LEN; i++)
        if (strcasecmp(gpu_table[i].name, name) == 0)
            return &gpu_table[i];
    return NULL;
}

/* Append formatted text at *pos; keeps counting past len so the caller learns the full size. */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t len, size_t *pos,
                                                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = *pos < len ? buf + *pos : NULL;
    size_t room = *pos < len ? len - *pos : 0;
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n;
}

size_t gpu_spec_names(char *buf, size_t len)
{
    size_t pos = 0;
    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < GPU_TABLE_LEN; i++)
        append(buf, len, &pos, "%s%s", i ? ", " : "", gpu_table[i].name);
    return pos;
}

size_t gpu_spec_unknown_msg(char *buf, size_t len, const char *name)
{
    size_t pos = 0;
    if (len > 0)
        buf[0] = '\0';
    append(buf, len, &pos, "unknown GPU '%s' (expected one of: ", name ? name : "");
    for (size_t i = 0; i < GPU_TABLE_LEN; i++)
        append(buf, len, &pos, "%s%s", i ? ", " : "", gpu_table[i].name);
    append(buf, len, &pos, ")");
    return pos;
}
