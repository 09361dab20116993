/* h5test.h — helpers of tests that read a results file back: one attribute, asserted present. */
#ifndef TIDESIM_H5TEST_H
#define TIDESIM_H5TEST_H

#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdint.h>

static inline double h5test_f64(hid_t obj, const char *name)
{
    double v = NAN;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    cr_assert_geq(a, 0, "attribute %s missing", name);
    cr_assert_geq(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
    H5Aclose(a);
    return v;
}

static inline int64_t h5test_i64(hid_t obj, const char *name)
{
    int64_t v = -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    cr_assert_geq(a, 0, "attribute %s missing", name);
    cr_assert_geq(H5Aread(a, H5T_NATIVE_INT64, &v), 0);
    H5Aclose(a);
    return v;
}

/* Attribute `name` of group `group` of results file `file`, asserted present. */
static inline double h5test_file_f64(const char *file, const char *group, const char *name)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0, "%s", file);
    hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
    cr_assert_geq(g, 0, "%s:%s", file, group);
    double v = h5test_f64(g, name);
    H5Gclose(g);
    H5Fclose(f);
    return v;
}

/* Mark a results file incomplete (/meta complete = 0), as an interrupted run leaves it. */
static inline void h5test_mark_incomplete(const char *file)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(f, 0, "%s", file);
    hid_t m = H5Gopen2(f, "/meta", H5P_DEFAULT);
    hid_t at = H5Aopen(m, "complete", H5P_DEFAULT);
    cr_assert_geq(at, 0);
    int64_t zero = 0;
    cr_assert_geq(H5Awrite(at, H5T_NATIVE_INT64, &zero), 0);
    H5Aclose(at);
    H5Gclose(m);
    H5Fclose(f);
}

#endif
