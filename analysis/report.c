/* report.c — text report of a tidesim results file. */
#include "analysis/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/h5io.h"

static double attr(hid_t g, const char *name)
{
    double v = NAN;
    h5_read_attr_double(g, name, &v);
    return v;
}

static void hours(char *buf, size_t n, double s)
{
    if (isnan(s))
        snprintf(buf, n, "-");
    else if (s >= 3600)
        snprintf(buf, n, "%.2f h", s / 3600);
    else if (s >= 60)
        snprintf(buf, n, "%.1f min", s / 60);
    else
        snprintf(buf, n, "%.1f s", s);
}

struct svc_ctx {
    FILE *out;
};

static herr_t print_service(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    struct svc_ctx *c = data;
    (void)info;
    hid_t g = H5Gopen2(grp, name, H5P_DEFAULT);
    if (g < 0)
        return 0;
    double q = attr(g, "slo_quantile"), slo = attr(g, "slo_ms"), pq = attr(g, "slo_quantile_ms");
    fprintf(c->out,
            "  %-14s %12.0f %10.0f %8.2f %8.2f %8.2f %8.2f  p%g<=%gms: %s (p%g %.2f ms, %.3f%% "
            "within)\n",
            name, attr(g, "arrived"), attr(g, "dropped"), attr(g, "mean_ms"), attr(g, "p50_ms"),
            attr(g, "p95_ms"), attr(g, "p99_ms"), q * 100, slo,
            attr(g, "slo_met") > 0 ? "met" : "MISSED", q * 100, pq, attr(g, "slo_share") * 100);
    H5Gclose(g);
    return 0;
}

int report_write(FILE *out, const char *path, char *err, size_t errlen)
{
    h5io_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        snprintf(err, errlen, "%s: cannot open as an HDF5 results file", path);
        return -ENOENT;
    }
    if (H5Lexists(f, "meta", H5P_DEFAULT) <= 0 || H5Lexists(f, "summary", H5P_DEFAULT) <= 0) {
        snprintf(err, errlen, "%s: not a tidesim results file (no /meta or /summary)", path);
        H5Fclose(f);
        return -EINVAL;
    }
    hid_t meta = H5Gopen2(f, "meta", H5P_DEFAULT);
    hid_t sum = H5Gopen2(f, "summary", H5P_DEFAULT);
    char *name = NULL, *policy = NULL, *gpu = NULL, *sharing = NULL, *version = NULL;
    h5_read_attr_str(meta, "scenario_name", &name);
    h5_read_attr_str(meta, "policy", &policy);
    h5_read_attr_str(meta, "gpu", &gpu);
    h5_read_attr_str(meta, "sharing", &sharing);
    h5_read_attr_str(meta, "tidesim_version", &version);
    char b1[32], b2[32], b3[32], b4[32], b5[32];

    fprintf(out, "tidesim %s report: %s\n", version ? version : "?", path);
    if (attr(meta, "complete") < 1)
        fprintf(out, "  WARNING: incomplete run (interrupted at %.0f s of %.0f s simulated)\n",
                attr(meta, "sim_time_reached_s"), attr(meta, "duration_s"));
    hours(b1, sizeof(b1), attr(sum, "duration_s"));
    fprintf(out, "  scenario %s, policy %s, seed %.0f, %s simulated\n", name ? name : "?",
            policy ? policy : "?", attr(meta, "seed"), b1);
    fprintf(out, "  cluster: %.0f x %s (%s), %.0f events processed in %.2f s wall\n",
            attr(sum, "gpus"), gpu ? gpu : "?", sharing ? sharing : "?",
            attr(meta, "events_processed"), attr(meta, "wall_seconds"));

    fprintf(out, "\nutilization (share of GPU-time)\n");
    fprintf(out, "  allocated %6.2f %%   busy %6.2f %%   useful %6.2f %%\n",
            attr(sum, "util_allocated") * 100, attr(sum, "util_busy") * 100,
            attr(sum, "util_useful") * 100);
    fprintf(out,
            "  GPU-hours: training %.1f, inference %.1f, checkpoint %.1f, restore %.1f, "
            "recompute %.1f, overhead %.1f, reconfiguring %.1f, idle %.1f\n",
            attr(sum, "gpu_hours_training"), attr(sum, "gpu_hours_inference"),
            attr(sum, "gpu_hours_checkpoint"), attr(sum, "gpu_hours_restore"),
            attr(sum, "gpu_hours_recompute"), attr(sum, "gpu_hours_overhead"),
            attr(sum, "gpu_hours_reconfiguring"), attr(sum, "gpu_hours_idle"));
    fprintf(out, "  checkpoint overhead %.2f %% of busy time; energy %.1f kWh (mean %.1f kW)\n",
            attr(sum, "checkpoint_overhead") * 100, attr(sum, "energy_kwh"),
            attr(sum, "power_mean_w") / 1e3);

    fprintf(out, "\ninference (latency in ms)\n");
    fprintf(out, "  %-14s %12s %10s %8s %8s %8s %8s  SLO\n", "service", "requests", "dropped",
            "mean", "p50", "p95", "p99");
    if (H5Lexists(f, "services", H5P_DEFAULT) > 0) {
        hid_t sv = H5Gopen2(f, "services", H5P_DEFAULT);
        struct svc_ctx c = {out};
        H5Literate(sv, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, print_service, &c);
        H5Gclose(sv);
    }
    fprintf(out, "  all services: %.4f %% of requests within their SLO target\n",
            attr(sum, "slo_share") * 100);

    fprintf(out, "\ntraining\n");
    fprintf(out,
            "  jobs: %.0f submitted, %.0f completed, %.0f running, %.0f queued, %.0f rejected\n",
            attr(sum, "jobs_submitted"), attr(sum, "jobs_completed"), attr(sum, "jobs_running"),
            attr(sum, "jobs_queued"), attr(sum, "jobs_rejected"));
    fprintf(out, "  failed (OOM) %.0f, preemptions %.0f, restarts after faults %.0f, faults %.0f\n",
            attr(sum, "jobs_failed"), attr(sum, "preemptions"), attr(sum, "restarts"),
            attr(sum, "faults"));
    fprintf(out, "  GPU-hours of training work done: %.1f\n", attr(sum, "training_gpu_hours"));
    double lf = attr(sum, "jobs_failed_in_log"), lc = attr(sum, "jobs_cancelled_in_log");
    if (lf > 0 || lc > 0)
        fprintf(out,
                "  replayed as logged: %.0f failed and %.0f cancelled jobs (%.1f GPU-hours, not "
                "counted as work done)\n",
                lf, lc, attr(sum, "training_gpu_hours_failed_in_log"));
    hours(b1, sizeof(b1), attr(sum, "queue_delay_mean_s"));
    hours(b2, sizeof(b2), attr(sum, "queue_delay_p50_s"));
    hours(b3, sizeof(b3), attr(sum, "queue_delay_p95_s"));
    fprintf(out, "  queueing delay: mean %s, p50 %s, p95 %s\n", b1, b2, b3);
    hours(b4, sizeof(b4), attr(sum, "completion_mean_s"));
    hours(b5, sizeof(b5), attr(sum, "completion_p95_s"));
    fprintf(out, "  completion time (submit to end): mean %s, p95 %s\n", b4, b5);

    free(name);
    free(policy);
    free(gpu);
    free(sharing);
    free(version);
    H5Gclose(meta);
    H5Gclose(sum);
    H5Fclose(f);
    return 0;
}
