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

#endif
