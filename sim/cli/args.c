/* args.c — argument parsing shared by the subcommands (args.h). */
#include "sim/cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool cli_is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int cli_parse_share(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v))
        return -EINVAL;
    if (*end == '%') {
        v /= 100;
        end++;
    } else if (v > 1) {
        return -ERANGE; /* "60" is not a share: 60% or 0.6 was meant */
    }
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

int cli_parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -EINVAL;
    *out = v;
    return 0;
}
