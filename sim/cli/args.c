/* args.c — argument parsing shared by the subcommands (args.h). */
#include "sim/cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/escape.h"
#include "analysis/sweepidx.h"

bool cli_is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

void cli_getopt_begin(void)
{
    optind = 0; /* glibc: 0 re-initialises the whole scan, permutation state included */
    opterr = 0;
}

int cli_opt_error(FILE *err, const char *cmd, int c, char *const argv[])
{
    const char *opt = optind > 0 ? argv[optind - 1] : "?";
    char shortopt[3] = {'-', (char)optopt, 0};
    if (c == ':') {
        fprintf(err, "tidesim %s: option '%s' needs a value\n", cmd,
                optopt && opt[0] == '-' && opt[1] != '-' ? shortopt : opt);
        return 2;
    }
    if (optopt && (opt[0] != '-' || opt[1] != '-'))
        opt = shortopt; /* an unknown short option, perhaps inside a cluster like -qx */
    fprintf(err, "tidesim %s: unknown option '%s' (see tidesim %s --help)\n", cmd, opt, cmd);
    return 2;
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

bool cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

void cli_json_str(FILE *out, const char *s)
{
    esc_json_str(out, s);
}

void cli_json_num(FILE *out, double v)
{
    esc_json_num(out, v);
}

int cli_sel_add(struct sweepidx_sel *sel, bool point, const char *arg, const char *cmd, FILE *err)
{
    if ((point ? sel->npoints : sel->nwhere) >= SWEEPIDX_SEL_MAX) {
        fprintf(err, "tidesim %s: at most %d --%s\n", cmd, SWEEPIDX_SEL_MAX,
                point ? "point" : "where");
        return 2;
    }
    if (point) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-') {
            fprintf(err,
                    "tidesim %s: --point needs a point number (tidesim report INDEX lists "
                    "them)\n",
                    cmd);
            return 2;
        }
        sel->points[sel->npoints++] = (size_t)v;
        return 0;
    }
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(err, "tidesim %s: --where needs PATH=VALUE (e.g. --where policy.name=kueue)\n",
                cmd);
        return 2;
    }
    sel->where[sel->nwhere++] = arg;
    return 0;
}
