/* precision.c — precision of replications' headline figures (precision.h). */
#include "analysis/precision.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/h5io.h"
#include "analysis/h5read.h"
#include "analysis/stats.h"

const char *const precision_metrics[] = {"util_busy", "slo_share", "p99_ms_worst_service",
                                         "training_gpu_hours", NULL};

enum { NMETRICS = 4 };

int precision_evaluate(const char *const *parts, size_t n, double target,
                       struct precision_eval *out, char *err, size_t errlen)
{
    *out = (struct precision_eval){.worst = 0, .metric = NULL, .needed = n, .metrics = 0};
    double *v = malloc((n ? n : 1) * NMETRICS * sizeof(*v));
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    h5io_quiet();
    for (size_t i = 0; i < n; i++) {
        struct h5_rd rd;
        hid_t f = h5_rd_open(&rd, parts[i]);
        hid_t g = f >= 0 ? h5_rd_group(&rd, f, "summary") : H5I_INVALID_HID;
        if (g < 0) {
            snprintf(err, errlen, "%s: cannot read /summary", parts[i]);
            if (f >= 0)
                H5Fclose(f);
            free(v);
            return -EIO;
        }
        for (size_t k = 0; k < NMETRICS; k++) {
            double x = NAN;
            if (h5_rd_attr_double(&rd, g, precision_metrics[k], &x) != 0)
                x = NAN;
            v[k * n + i] = x;
        }
        H5Gclose(g);
        H5Fclose(f);
    }
    for (size_t k = 0; k < NMETRICS; k++) {
        struct stats_summary s;
        stats_summarize(v + k * n, n, &s);
        if (s.n < 2 || !isfinite(s.ci95) || !isfinite(s.mean) || s.mean == 0 || s.sd == 0)
            continue;
        out->metrics++;
        double rel = s.ci95 / fabs(s.mean);
        if (rel > out->worst) {
            out->worst = rel;
            out->metric = precision_metrics[k];
        }
        double want = ceil((double)s.n * (rel / target) * (rel / target));
        if (want > (double)out->needed)
            out->needed = want > 1e6 ? 1000000 : (size_t)want;
    }
    free(v);
    return 0;
}
