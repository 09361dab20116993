/* output_schema.c — units and labels of the results file's figures (output_schema.h). */
#include "sim/output_schema.h"

#include <stdio.h>
#include <string.h>

static const struct output_field summary_fields[] = {
    {"duration_s", "s", "simulated time"},
    {"warmup_s", "s", "warm-up left out of the figures"},
    {"gpus", "GPUs", "GPUs"},
    {"gpu_hours", "GPU-h", "GPU-time offered (measured window)"},
    {"util_allocated", "1", "GPU-time allocated"},
    {"util_busy", "1", "GPU-time busy (SM active)"},
    {"util_useful", "1", "GPU-time useful"},
    {"checkpoint_overhead", "1", "checkpoint overhead (of busy GPU-time)"},
    {"share_fragmented", "1", "GPU-time free but unusable by any queued gang"},
    {"gpus_fragmented_mean", "GPUs", "free GPUs no queued gang can use, mean"},
    {"energy_kwh", "kWh", "energy"},
    {"cost_total", "currency", "cost of the cluster"},
    {"cost_gpu", "currency", "cost of GPU-hours"},
    {"cost_energy", "currency", "cost of energy"},
    {"cost_per_million_within_slo", "currency/1M requests", "cost per million requests within SLO"},
    {"cost_per_training_gpu_hour", "currency/GPU-h", "cost per training GPU-hour done"},
    {"power_mean_w", "W", "mean power"},
    {"faults", "faults", "fatal faults"},
    {"fault_victims", "tenants", "tenants killed by faults"},
    {"oom_kills", "tenants", "tenants OOM-killed"},
    {"requests_arrived", "requests", "requests arrived"},
    {"requests_served", "requests", "requests served"},
    {"requests_dropped", "requests", "requests dropped"},
    {"requests_failed", "requests", "requests lost to faults"},
    {"requests_waiting", "requests", "requests waiting at the end"},
    {"requests_within_slo", "requests", "requests within SLO"},
    {"slo_share", "1", "arrivals within SLO"},
    {"slo_share_served", "1", "served within SLO"},
    {"slo_share_worst_service", "1", "within SLO, worst service"},
    {"p99_ms_worst_service", "ms", "p99 latency, worst service"},
    {"headroom_min_worst_service", "x", "serving headroom, tightest interval, worst service"},
    {"ttft_p99_ms_worst_service", "ms", "p99 time to first token, worst LLM service"},
    {"tpot_p99_ms_worst_service", "ms", "p99 time per output token, worst LLM service"},
    {"tokens_generated", "tokens", "LLM tokens generated"},
    {"tokens_per_s", "tokens/s", "LLM tokens generated per second"},
    {"kv_occupancy_mean", "1", "LLM KV-cache occupancy, mean"},
    {"llm_preemptions", "events", "LLM sequences preempted (KV cache full)"},
    {"jobs_submitted", "jobs", "jobs submitted"},
    {"jobs_completed", "jobs", "jobs completed"},
    {"jobs_running", "jobs", "jobs running at the end"},
    {"jobs_queued", "jobs", "jobs queued at the end"},
    {"jobs_rejected", "jobs", "jobs rejected (never fit)"},
    {"jobs_unplaceable", "jobs", "jobs no allowed pool can hold (rejected at submission)"},

    {"jobs_failed", "jobs", "jobs OOM-killed at start"},
    {"preemptions", "events", "training preemptions"},
    {"restarts", "events", "training restarts after faults"},
    {"training_gpu_hours", "GPU-h", "training work done"},
    {"training_gpu_hours_failed_in_log", "GPU-h", "training GPU-time of jobs failed in the log"},
    {"jobs_failed_in_log", "jobs", "jobs failed in the log"},
    {"jobs_cancelled_in_log", "jobs", "jobs cancelled in the log"},
    {"jobs_services_in_log", "jobs", "long-running services in the job log"},
    {"job_log_services_skipped", "services", "job-log services skipped"},
    {"job_log_rows_skipped", "rows", "job-log rows skipped (malformed)"},
    {"job_log_rows_filtered", "rows", "job-log rows filtered (CPU-only, never ran)"},
    {"queue_delay_mean_s", "s", "queueing delay, mean"},
    {"queue_delay_p50_s", "s", "queueing delay, p50"},
    {"queue_delay_p95_s", "s", "queueing delay, p95"},
    {"completion_mean_s", "s", "completion time, mean"},
    {"completion_p50_s", "s", "completion time, p50"},
    {"completion_p95_s", "s", "completion time, p95"},
};

static const struct output_field gpu_hours_fields[] = {
    {"gpu_hours_training", "GPU-h", "GPU-time training"},
    {"gpu_hours_inference", "GPU-h", "GPU-time inference"},
    {"gpu_hours_checkpoint", "GPU-h", "GPU-time checkpointing"},
    {"gpu_hours_restore", "GPU-h", "GPU-time restoring"},
    {"gpu_hours_recompute", "GPU-h", "GPU-time recomputing lost work"},
    {"gpu_hours_overhead", "GPU-h", "GPU-time start-up and warm-up"},
    {"gpu_hours_reconfiguring", "GPU-h", "GPU-time MIG re-layout"},
    {"gpu_hours_idle", "GPU-h", "GPU-time allocated, idle"},
};

static const struct output_field service_fields[] = {
    {"arrived", "requests", "requests"},
    {"served", "requests", "served"},
    {"dropped", "requests", "dropped"},
    {"failed", "requests", "lost to faults"},
    {"waiting", "requests", "waiting at the end"},
    {"in_service", "requests", "in a batch at the end"},
    {"within_slo", "requests", "served within SLO"},
    {"window_arrived", "requests", "requests (measured window)"},
    {"window_served", "requests", "served (measured window)"},
    {"window_dropped", "requests", "dropped (measured window)"},
    {"window_failed", "requests", "lost to faults (measured window)"},
    {"window_within_slo", "requests", "within SLO (measured window)"},
    {"batches", "batches", "batches"},
    {"trace_rows_skipped", "rows", "trace rows skipped"},
    {"mean_ms", "ms", "mean"},
    {"p50_ms", "ms", "p50"},
    {"p95_ms", "ms", "p95"},
    {"p99_ms", "ms", "p99"},
    {"max_ms", "ms", "max"},
    {"mean_wait_ms", "ms", "mean waiting time"},
    {"wait_p50_ms", "ms", "waiting time, p50"},
    {"wait_p95_ms", "ms", "waiting time, p95"},
    {"wait_p99_ms", "ms", "waiting time, p99"},
    {"wait_max_ms", "ms", "waiting time, max"},
    {"slo_ms", "ms", "SLO target"},
    {"slo_quantile", "1", "SLO quantile"},
    {"slo_quantile_ms", "ms", "SLO-quantile latency"},
    {"slo_share", "1", "within SLO"},
    {"slo_share_served", "1", "served within SLO"},
    {"slo_met", "1", "SLO met"},
    {"headroom_min", "x", "serving headroom, tightest interval"},
    {"headroom_peak", "x", "serving headroom at the busiest interval"},
    /* LLM services (kind: llm) */
    {"tensor_parallel", "GPUs", "cards per replica (tensor parallelism)"},
    {"kv_cache_tokens", "tokens", "KV cache of a replica on whole cards"},
    {"ttft_slo_ms", "ms", "TTFT target"},
    {"tpot_slo_ms", "ms", "TPOT target"},
    {"ttft_mean_ms", "ms", "time to first token, mean"},
    {"ttft_p50_ms", "ms", "time to first token, p50"},
    {"ttft_p90_ms", "ms", "time to first token, p90"},
    {"ttft_p99_ms", "ms", "time to first token, p99"},
    {"ttft_max_ms", "ms", "time to first token, max"},
    {"ttft_quantile_ms", "ms", "time to first token at the SLO quantile"},
    {"tpot_mean_ms", "ms", "time per output token, mean"},
    {"tpot_p50_ms", "ms", "time per output token, p50"},
    {"tpot_p90_ms", "ms", "time per output token, p90"},
    {"tpot_p99_ms", "ms", "time per output token, p99"},
    {"tpot_max_ms", "ms", "time per output token, max"},
    {"tpot_quantile_ms", "ms", "time per output token at the SLO quantile"},
    {"tokens_generated", "tokens", "tokens generated"},
    {"tokens_prefilled", "tokens", "prompt tokens prefilled (recomputation included)"},
    {"tokens_per_s", "tokens/s", "tokens generated per second"},
    {"kv_occupancy_mean", "1", "KV-cache occupancy, mean"},
    {"preemptions", "events", "sequences preempted (KV cache full)"},
    {"swaps", "events", "preemptions by swapping to CPU memory"},
    {"rejected_too_long", "requests", "prompts refused (max_context or more)"},
    {"truncated", "requests", "outputs cut to max_context"},
    {"running_max", "sequences", "most sequences running on one replica"},
};

/* /pools/<name> (cluster.pools): these first, then the summary's keys. */
static const struct output_field pool_fields[] = {
    {"nodes", "nodes", "nodes"},
    {"first_gpu", "index", "first GPU index"},
    {"slots", "tenants", "tenants a card takes (mixed fleets)"},
    {"train_speed", "x", "training speed vs A100"},
    {"infer_speed", "x", "inference speed vs A100"},
    {"gpu_hour_price", "currency/GPU-h", "price per GPU-hour"},
    {"slo_share", "1", "served within SLO (its replicas)"},
    {"training_gpu_hours", "GPU-h", "training work done (A100 GPU-h)"},
    {"cost_total", "currency", "cost of the pool"},
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct output_field *find(const struct output_field *t, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].key, key))
            return &t[i];
    return NULL;
}

const struct output_field *output_field_find(const char *key, int service)
{
    if (service == 2) {
        const struct output_field *f = find(pool_fields, LEN(pool_fields), key);
        if (f)
            return f;
    } else if (service) {
        return find(service_fields, LEN(service_fields), key);
    }
    const struct output_field *f = find(summary_fields, LEN(summary_fields), key);
    return f ? f : find(gpu_hours_fields, LEN(gpu_hours_fields), key);
}
