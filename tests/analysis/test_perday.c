/*
 * test_perday.c — per-day figures (analysis/perday.h) against the run's own
 * whole-run accumulators, which the simulator keeps apart from the time
 * series: the day-length-weighted mean of the daily busy share is the
 * summary's util_busy, and the daily training GPU-hours add up to /gpus's
 * training seconds, in every replication.
 */
#include <errno.h>
#include <hdf5.h>
#include <math.h>

#include "analysis/perday.h"
#include "tests/analysistest.h"
#include "tests/h5test.h"

static double gpus_training_h(hid_t rep)
{
    hid_t d = H5Dopen(rep, "gpus/training_s", H5P_DEFAULT);
    cr_assert_geq(d, 0);
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    double *v = malloc((size_t)n * sizeof(*v)), sum = 0;
    cr_assert_geq(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    for (hssize_t i = 0; i < n; i++)
        sum += v[i];
    free(v);
    H5Sclose(sp);
    H5Dclose(d);
    return sum / 3600;
}

Test(perday, days_add_up_to_the_whole_run)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small_60h.yaml", pr.a, "--replications 2");
    struct perday p;
    char err[512];
    cr_assert_eq(perday_read(pr.a, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(p.ndays, 3u);
    cr_assert_eq(p.reps, 2u);
    cr_expect_float_eq(p.day_h[0], 24, 1e-9);
    cr_expect_float_eq(p.day_h[1], 24, 1e-9);
    cr_expect_float_eq(p.day_h[2], 12, 1e-9);
    hid_t f = H5Fopen(pr.a, H5F_ACC_RDONLY, H5P_DEFAULT);
    for (size_t r = 0; r < 2; r++) {
        char name[16];
        snprintf(name, sizeof(name), "rep%04zu", r);
        hid_t rep = H5Gopen(f, name, H5P_DEFAULT), s = H5Gopen(rep, "summary", H5P_DEFAULT);
        double busy = 0, hours = 0, train = 0;
        for (size_t d = 0; d < 3; d++) {
            busy += p.busy[d * 2 + r] * p.day_h[d];
            hours += p.day_h[d];
            train += p.train_gpu_h[d * 2 + r];
            cr_expect(p.slo[d * 2 + r] >= 0 && p.slo[d * 2 + r] <= 1);
        }
        double whole = h5test_f64(s, "util_busy");
        cr_expect(fabs(busy / hours - whole) < 1e-6 * whole, "rep %zu: days %.9f, run %.9f", r,
                  busy / hours, whole);
        double gh = gpus_training_h(rep);
        cr_expect(gh > 1 && fabs(train - gh) < 1e-6 * gh, "rep %zu: training %.6f vs %.6f GPU-h", r,
                  train, gh);
        H5Gclose(s);
        H5Gclose(rep);
    }
    H5Fclose(f);
    /* The two replications differ (other seeds), so the days have intervals. */
    cr_expect_neq(p.busy[0], p.busy[1]);
    perday_release(&p);

    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), pr.a);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "per day") != NULL, "%s", out);
    cr_expect(strstr(out, "\n  2       12 ") != NULL, "no half day 2 row:\n%s", out);
    free(out);
    /* compare: the days of both files side by side (the same file twice: equal columns). */
    snprintf(cmd, sizeof(cmd), "%s compare %s %s", atest_bin(), pr.a, pr.a);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    const char *t = strstr(out, "A busy %");
    cr_expect(t && strstr(t, "B within SLO %") != NULL, "%s", out);
    cr_expect(t && strstr(t, "\n  2  ") != NULL, "no day 2 row:\n%s", out);
    free(out);
    atest_rmdir(pr.dir);
}

/* Set the last value of dataset path of results file f to v (the file is written in place). */
static void set_last(const char *f, const char *path, double v)
{
    hid_t file = H5Fopen(f, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(file, 0, "%s", f);
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    cr_assert_geq(d, 0, "%s", path);
    hid_t sp = H5Dget_space(d);
    hsize_t n = (hsize_t)H5Sget_simple_extent_npoints(sp), at = n - 1, one = 1;
    cr_assert_geq(H5Sselect_hyperslab(sp, H5S_SELECT_SET, &at, NULL, &one, NULL), 0);
    hid_t mem = H5Screate_simple(1, &one, NULL);
    cr_assert_geq(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, sp, H5P_DEFAULT, &v), 0);
    H5Sclose(mem);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(file);
}

/*
 * A file's times are not trusted: a time past any run (a run lasts at most 100 years) is
 * refused with a message, where it was cast to an integer (undefined; on x86-64 the table
 * silently came out wrong). A time far out but within 100 years only lengthens the table.
 */
Test(perday, a_time_past_any_run_is_refused_not_cast)
{
    struct atest_pair pr;
    atest_pair_init(&pr);
    atest_sim("tests/data/scenarios/small_60h.yaml", pr.a, "");
    set_last(pr.a, "/timeseries/time_s", 2.96e19);
    struct perday p;
    char err[512];
    cr_expect_eq(perday_read(pr.a, &p, err, sizeof(err)), -ERANGE);
    cr_expect(strstr(err, "/timeseries: time_s goes past 100 years") != NULL, "%s", err);
    set_last(pr.a, "/timeseries/time_s", 36525.0 * 86400);
    cr_assert_eq(perday_read(pr.a, &p, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(p.ndays, 36525u, "the last sample ends on day 36,525");
    perday_release(&p);
    atest_rmdir(pr.dir);
}
