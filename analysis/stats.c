/* stats.c — Student-t intervals of replications and Welch intervals of differences. */
#include "analysis/stats.h"

#include <math.h>

#include <gsl/gsl_cdf.h>

double stats_t_quantile(double p, double df)
{
    if (!(df > 0))
        return NAN;
    return gsl_cdf_tdist_Pinv(p, df);
}

void stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(v[i])) {
            sum += v[i];
            k++;
        }
    }
    out->n = k;
    out->mean = k ? sum / (double)k : NAN;
    out->sd = NAN;
    out->ci95 = NAN;
    if (k < 2)
        return;
    /* Two passes: the mean first, then squared deviations (no cancellation). */
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            ss += (v[i] - out->mean) * (v[i] - out->mean);
    out->sd = sqrt(ss / (double)(k - 1));
    out->ci95 = stats_t_quantile(0.975, (double)(k - 1)) * out->sd / sqrt((double)k);
}

void stats_single(double v, struct stats_summary *out)
{
    stats_summarize(&v, 1, out);
}

void stats_welch(const struct stats_summary *a, const struct stats_summary *b,
                 struct stats_diff *out)
{
    stats_welch_conf(a, b, 0.95, out);
}

void stats_welch_conf(const struct stats_summary *a, const struct stats_summary *b, double conf,
                      struct stats_diff *out)
{
    out->diff = b->mean - a->mean;
    out->ci95 = NAN;
    out->df = NAN;
    out->has_ci = a->n >= 2 && b->n >= 2;
    out->significant = false;
    out->paired = false;
    out->npairs = 0;
    if (!out->has_ci)
        return;
    double va = a->sd * a->sd / (double)a->n, vb = b->sd * b->sd / (double)b->n;
    double se2 = va + vb;
    if (se2 <= 0) {
        out->ci95 = 0;
        out->df = (double)(a->n + b->n - 2);
        out->significant = out->diff != 0;
        return;
    }
    out->df = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
    out->ci95 = stats_t_quantile(1 - (1 - conf) / 2, out->df) * sqrt(se2);
    out->significant = fabs(out->diff) > out->ci95;
}

void stats_paired(const double *a, const double *b, size_t n, double conf, struct stats_diff *out)
{
    /* Two passes (mean, then squared deviations): exact zero for identical runs. */
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i])) {
            sum += b[i] - a[i];
            k++;
        }
    out->paired = true;
    out->npairs = k;
    out->diff = k ? sum / (double)k : NAN;
    out->ci95 = NAN;
    out->df = NAN;
    out->has_ci = k >= 2;
    out->significant = false;
    if (!out->has_ci)
        return;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i])) {
            double d = b[i] - a[i] - out->diff;
            ss += d * d;
        }
    double sd = sqrt(ss / (double)(k - 1));
    out->df = (double)(k - 1);
    out->ci95 = stats_t_quantile(1 - (1 - conf) / 2, out->df) * sd / sqrt((double)k);
    out->significant = out->ci95 > 0 ? fabs(out->diff) > out->ci95 : out->diff != 0;
}
