/* test_cli_mig.c — `tidesim mig` output and exit codes, through cli_mig_run(). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli/cmd_mig.h"

struct run {
    int rc;
    char out[4096];
    char err[4096];
};

static void slurp(FILE *f, char *buf, size_t len)
{
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static struct run run(int argc, const char **argv)
{
    struct run r;
    FILE *out = tmpfile(), *err = tmpfile();
    cr_assert(out && err);
    r.rc = cli_mig_run(argc, (char **)argv, out, err);
    slurp(out, r.out, sizeof r.out);
    slurp(err, r.err, sizeof r.err);
    return r;
}

Test(cli_mig, validate_valid_layout)
{
    const char *argv[] = {"mig", "validate", "a100-sxm4-80gb", "3g.40gb+4×1g.10gb", NULL};
    struct run r = run(4, argv);
    cr_expect_eq(r.rc, 0);
    cr_expect_str_eq(r.out, "valid: 3g.40gb@4+1g.10gb@0+1g.10gb@1+1g.10gb@2+1g.10gb@3\n");
    cr_expect_str_eq(r.err, "");
}

Test(cli_mig, validate_invalid_layout)
{
    const char *argv[] = {"mig", "validate", "A100-SXM4-80GB", "4g.40gb+4g.40gb", NULL};
    struct run r = run(4, argv);
    cr_expect_eq(r.rc, 1);
    cr_expect_str_eq(r.out, "");
    cr_expect_str_eq(r.err, "invalid: 4g.40gb+4g.40gb: only 1 instance of 4g.40gb fits\n");
}

Test(cli_mig, usage_errors)
{
    const char *bad_gpu[] = {"mig", "validate", "v100", "7g.80gb", NULL};
    struct run r = run(4, bad_gpu);
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, "unknown GPU 'v100' (expected one of: a100-sxm4-40gb, "
                            "a100-sxm4-80gb, h100-sxm5-80gb)") != NULL);
    const char *missing[] = {"mig", "validate", "a100-sxm4-80gb", NULL};
    cr_expect_eq(run(3, missing).rc, 2);
    const char *none[] = {"mig", NULL};
    cr_expect_eq(run(1, none).rc, 2);
    const char *other[] = {"mig", "create", NULL};
    r = run(2, other);
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, "unknown subcommand 'create'") != NULL);
    const char *help[] = {"mig", "--help", NULL};
    r = run(2, help);
    cr_expect_eq(r.rc, 0);
    cr_expect(strstr(r.out, "usage: tidesim mig profiles GPU") != NULL);
}

Test(cli_mig, profiles_table)
{
    const char *argv[] = {"mig", "profiles", "a100-sxm4-40gb", NULL};
    struct run r = run(3, argv);
    cr_expect_eq(r.rc, 0);
    /* a header, a column line, 7 profiles */
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 9);
    cr_expect(strstr(r.out, "1g.10gb        15      1/7     2/8   14       9856    4 0,2,4,6") !=
              NULL);
    cr_expect(strstr(r.out, "7g.40gb         0      7/7     8/8   98      40192    1 0") != NULL);
}
