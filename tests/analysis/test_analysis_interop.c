/*
 * test_analysis_interop.c — a results file read by someone else's tool: h5py
 * (Debian's python3-h5py) finds every documented dataset and attribute with
 * the documented shape and units, in a single run and in a replicated file
 * (tests/data/check_schema.py).
 */
#include "tests/analysistest.h"

#define PY "/usr/bin/python3"

Test(analysis_interop, h5py_reads_the_documented_schema)
{
    if (atest_run(PY " -c 'import h5py'", NULL) != 0)
        cr_skip_test("python3-h5py is not installed (apt-get install python3-h5py)");
    char dir[64], f[128], r[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    snprintf(r, sizeof(r), "%s/r.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", f, NULL);
    atest_sim("tests/data/scenarios/small.yaml", r, "--replications 2");
    snprintf(cmd, sizeof(cmd), PY " tests/data/check_schema.py %s", f);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "schema ok") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof(cmd), PY " tests/data/check_schema.py %s 2", r);
    cr_expect_eq(atest_run(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "schema ok") != NULL, "%s", out);
    free(out);
    atest_rmdir(dir);
}
