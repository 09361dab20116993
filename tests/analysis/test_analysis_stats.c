/*
 * test_analysis_stats.c — confidence intervals against hand-computed Student-t
 * intervals; Welch intervals against the Welch–Satterthwaite formula.
 * t quantiles from a printed table (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "analysis/stats.h"

struct tq {
    double df, t975;
};

/* Two-sided 95 % critical values t(0.975, df). */
static const struct tq t_table[] = {
    {1, 12.706205}, {2, 4.302653}, {4, 2.776445}, {8, 2.306004}, {9, 2.262157}, {29, 2.045230},
};

Test(analysis_stats, t_quantiles_match_the_table)
{
    for (size_t i = 0; i < sizeof(t_table) / sizeof(t_table[0]); i++)
        cr_expect_float_eq(stats_t_quantile(0.975, t_table[i].df), t_table[i].t975, 1e-6, "df %g",
                           t_table[i].df);
    cr_expect(isnan(stats_t_quantile(0.975, 0)));
}

Test(analysis_stats, ci_equals_hand_computed_student_t)
{
    /* 1..5: mean 3, sd sqrt(2.5), half-width t(0.975,4) * sd / sqrt(5) = 2.776445 * 0.7071068. */
    const double v[] = {1, 2, 3, 4, 5};
    struct stats_summary s;
    stats_summarize(v, 5, &s);
    cr_expect_eq(s.n, 5);
    cr_expect_float_eq(s.mean, 3.0, 1e-12);
    cr_expect_float_eq(s.sd, 1.5811388, 1e-7);
    cr_expect_float_eq(s.ci95, 2.776445 * 0.70710678, 1e-6);

    /* Two values: t(0.975,1) * sd / sqrt(2) with sd = |a-b|/sqrt(2) → 12.706205 * |a-b| / 2. */
    const double w[] = {10, NAN, 12};
    stats_summarize(w, 3, &s);
    cr_expect_eq(s.n, 2, "NaN must be skipped");
    cr_expect_float_eq(s.mean, 11.0, 1e-12);
    cr_expect_float_eq(s.ci95, 12.706205, 1e-6);

    /* 0.61, 0.63, 0.65: sd 0.02, half-width 4.302653 * 0.02 / sqrt(3) = 0.0496828. */
    const double u[] = {0.61, 0.63, 0.65};
    stats_summarize(u, 3, &s);
    cr_expect_float_eq(s.ci95, 0.0496828, 1e-7);

    stats_single(4.5, &s);
    cr_expect_eq(s.n, 1);
    cr_expect_float_eq(s.mean, 4.5, 1e-12);
    cr_expect(isnan(s.ci95) && isnan(s.sd));
    stats_summarize(w + 1, 1, &s);
    cr_expect_eq(s.n, 0);
    cr_expect(isnan(s.mean));
}

Test(analysis_stats, welch_interval_and_significance)
{
    /* Equal n = 5 and sd^2 = 2.5: se^2 = 1, df = 1 / (2 * 0.25 / 4) = 8, half-width t(0.975,8). */
    struct stats_summary a = {5, 3, sqrt(2.5), NAN}, b = {5, 10, sqrt(2.5), NAN};
    struct stats_diff d;
    stats_welch(&a, &b, &d);
    cr_expect(d.has_ci);
    cr_expect_float_eq(d.diff, 7.0, 1e-12);
    cr_expect_float_eq(d.df, 8.0, 1e-9);
    cr_expect_float_eq(d.ci95, 2.306004, 1e-6);
    cr_expect(d.significant);

    /* Identical samples: no difference, not significant. */
    stats_welch(&a, &a, &d);
    cr_expect_float_eq(d.diff, 0.0, 1e-15);
    cr_expect(!d.significant);

    /* Unequal variances: va = 4/4 = 1, vb = 36/9 = 4; df = 25 / (1/3 + 16/8) = 10.714286. */
    struct stats_summary c = {4, 0, 2, NAN}, e = {9, 5, 6, NAN};
    stats_welch(&c, &e, &d);
    cr_expect_float_eq(d.df, 10.714286, 1e-6);
    /* t(0.975, 11) = 2.200985 < t(0.975, 10.71) < t(0.975, 10) = 2.228139 */
    cr_expect(d.ci95 > 2.200985 * sqrt(5.0) && d.ci95 < 2.228139 * sqrt(5.0), "%g", d.ci95);
    cr_expect(d.significant, "5 ± %g", d.ci95);

    /* A single run on one side: a difference, but no interval. */
    struct stats_summary one = {1, 4, NAN, NAN};
    stats_welch(&one, &a, &d);
    cr_expect(!d.has_ci && !d.significant);
    cr_expect_float_eq(d.diff, -1.0, 1e-12);
}
