/* latency.c — batch latency and SLO tables (see latency.h). */
#include "models/latency.h"

#include <strings.h>

/*
 * Linear batch time (Inoue, arXiv 1912.06322), fitted from MLPerf Inference v2.0 A100-SXM-80GB
 * TensorRT, NVIDIA's closed submission (mlcommons/inference_results_v2.0; research notes §4.1-4.2).
 * φ from the batch-1 ratios 1g.10gb / full (SingleStream p90: ResNet-50 0.675 / 0.466 ms =
 * 1.45×, BERT-99 5.35 / 1.55 ms = 3.45×) at the offline speeds s = 5,231/39,649 = 0.132 and
 * 484/3,561 = 0.136 (latency.h). The 1g.10gb rows are the direct fits, kept for reference.
 */
static const struct latency_model latency_table[] = {
    {"resnet50", "full", 0.44e-3, 0.025e-3, 0.0155},
    {"resnet50", "1g.10gb", 0.48e-3, 0.19e-3, 0.0155},
    {"bert", "full", 1.16e-3, 0.28e-3, 0.237},
    {"bert", "1g.10gb", 2.20e-3, 2.07e-3, 0.237},
};

/* MLPerf loadgen mlperf.conf server-scenario bounds (mlcommons/inference, loadgen/mlperf.conf). */
static const struct latency_slo slo_table[] = {
    {"resnet50", 0.015, 0, 0},
    {"retinanet", 0.100, 0, 0},
    {"bert", 0.130, 0, 0},
    {"dlrm", 0.060, 0, 0},
    {"dlrmv2", 0.060, 0, 0},
    {"rnnt", 1.0, 0, 0},
    {"gptj", 20.0, 0, 0},
    {"sdxl", 20.0, 0, 0},
    {"llama2-70b", 0, 2.0, 0.200},
    {"llama2-70b-interactive", 0, 0.450, 0.040},
    {"mixtral-8x7b", 0, 2.0, 0.200},
    {"llama3.1-8b", 0, 2.0, 0.100},
    {"llama3.1-8b-interactive", 0, 0.500, 0.030},
    {"llama3.1-405b", 0, 6.0, 0.175},
    {"llama3.1-405b-interactive", 0, 4.5, 0.080},
    {"deepseek-r1", 0, 2.0, 0.080},
    {"deepseek-r1-interactive", 0, 1.5, 0.015},
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

const struct latency_model *latency_model_find(const char *model, const char *slice)
{
    if (!model)
        return NULL;
    if (!slice)
        slice = "full";
    for (size_t i = 0; i < LEN(latency_table); i++)
        if (strcasecmp(latency_table[i].model, model) == 0 &&
            strcasecmp(latency_table[i].slice, slice) == 0)
            return &latency_table[i];
    return NULL;
}

size_t latency_model_count(void)
{
    return LEN(latency_table);
}

const struct latency_model *latency_model_at(size_t i)
{
    return i < LEN(latency_table) ? &latency_table[i] : NULL;
}

double latency_fixed_scale(double phi, double slice_speed)
{
    if (!(phi > 0))
        phi = 0;
    if (phi > 1)
        phi = 1;
    if (!(slice_speed < 1))
        return 1.0;
    if (!(slice_speed > 0))
        slice_speed = 1e-9;
    return (1 - phi) * slice_speed + phi;
}

double latency_batch_s(const struct latency_model *m, int batch)
{
    return m->a_s + m->b_s * (double)(batch < 1 ? 1 : batch);
}

const struct latency_slo *latency_slo_find(const char *model)
{
    for (size_t i = 0; model && i < LEN(slo_table); i++)
        if (strcasecmp(slo_table[i].model, model) == 0)
            return &slo_table[i];
    return NULL;
}

size_t latency_slo_count(void)
{
    return LEN(slo_table);
}

const struct latency_slo *latency_slo_at(size_t i)
{
    return i < LEN(slo_table) ? &slo_table[i] : NULL;
}
