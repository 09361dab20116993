/*
 * test_units.c — units and labels come from the results file (schema 2):
 * every numeric /summary and service attribute the writer puts has a
 * "<key>.unit" and "<key>.label" beside it, and `tidesim report` prints each
 * headline figure under the file's label with the file's unit ("1", a
 * fraction, shown as %), never another.
 */
#include <hdf5.h>

#include "tests/analysistest.h"

struct attr_list {
    char names[256][96];
    size_t n;
};

static herr_t collect(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)loc;
    (void)info;
    struct attr_list *l = data;
    if (l->n < 256 && !strchr(name, '.'))
        snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", name);
    return 0;
}

static char *attr_str(hid_t g, const char *name)
{
    if (H5Aexists(g, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    cr_assert_eq(H5Tget_class(t), H5T_STRING, "%s: not a string", name);
    cr_assert(H5Tis_variable_str(t) <= 0, "%s: variable-length (the merge cannot copy it)", name);
    size_t n = H5Tget_size(t);
    char *copy = calloc(n + 1, 1);
    cr_assert_geq(H5Aread(a, t, copy), 0);
    H5Tclose(t);
    H5Aclose(a);
    return copy;
}

static bool numeric(hid_t g, const char *name)
{
    hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    H5T_class_t c = H5Tget_class(t);
    H5Tclose(t);
    H5Aclose(a);
    return c == H5T_INTEGER || c == H5T_FLOAT;
}

/* The line of `report` whose metric column is exactly `label`; its last token in *unit. */
static bool report_unit(const char *report, const char *label, char *unit, size_t n)
{
    size_t ll = strlen(label);
    for (const char *p = report; (p = strstr(p, label)) != NULL; p += ll) {
        if (p < report + 2 || p[-1] != ' ' || p[-2] != ' ' || (p > report + 2 && p[-3] != '\n'))
            continue;
        const char *after = p + ll;
        if (*after != ' ' || after[1] != ' ')
            continue; /* a longer label that starts the same */
        const char *eol = strchr(after, '\n');
        if (!eol)
            eol = after + strlen(after);
        const char *q = eol;
        while (q > after && q[-1] == ' ')
            q--;
        const char *u = q;
        while (u > after && u[-1] != ' ')
            u--;
        snprintf(unit, n, "%.*s", (int)(q - u), u);
        return true;
    }
    return false;
}

Test(units, every_figure_has_its_unit_in_the_file_and_in_the_report)
{
    char dir[64], f[128], cmd[512], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/u.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", f, NULL);
    snprintf(cmd, sizeof(cmd), "%s report %s", atest_bin(), f);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);

    hid_t file = H5Fopen(f, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(file, 0);
    static const char *const groups[] = {"/summary", "/services/chat"};
    size_t shown = 0;
    for (size_t gi = 0; gi < 2; gi++) {
        hid_t g = H5Gopen(file, groups[gi], H5P_DEFAULT);
        struct attr_list l = {.n = 0};
        hsize_t idx = 0;
        H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &l);
        cr_assert_gt(l.n, 10);
        for (size_t i = 0; i < l.n; i++) {
            if (!numeric(g, l.names[i]))
                continue;
            char key[128];
            snprintf(key, sizeof(key), "%s.unit", l.names[i]);
            char *unit = attr_str(g, key);
            snprintf(key, sizeof(key), "%s.label", l.names[i]);
            char *label = attr_str(g, key);
            cr_expect_not_null(unit, "%s/%s has no unit", groups[gi], l.names[i]);
            cr_expect_not_null(label, "%s/%s has no label", groups[gi], l.names[i]);
            if (gi == 0 && unit && label && strcmp(l.names[i], "duration_s") &&
                strcmp(l.names[i], "gpus") && strcmp(l.names[i], "gpu_hours")) {
                /* Every headline figure is printed under its label with its unit. */
                char got[32];
                cr_expect(report_unit(out, label, got, sizeof(got)), "'%s' (%s) not in report",
                          label, l.names[i]);
                const char *want = !strcmp(unit, "1") ? "%" : unit;
                cr_expect_str_eq(got, want, "%s: printed '%s', file says '%s'", l.names[i], got,
                                 unit);
                shown++;
            }
            free(unit);
            free(label);
        }
        H5Gclose(g);
    }
    cr_expect_gt(shown, 40u);
    H5Fclose(file);
    free(out);
    atest_rmdir(dir);
}
