/*
 * args.h — argument parsing shared by the subcommands of sim/cli/.
 */
#ifndef TIDESIM_CLI_ARGS_H
#define TIDESIM_CLI_ARGS_H

#include <stdbool.h>

/* "--help" or "-h". */
bool cli_is_help(const char *a);

/*
 * A share given as a fraction (0.95) or a percentage ("95%"). Returns 0,
 * -ERANGE for a bare number above 1 (a percentage without its "%": refused
 * rather than taken as a bound of 60), or -EINVAL.
 */
int cli_parse_share(const char *s, double *out);

/* A finite number, the whole string. Returns 0 or -EINVAL. */
int cli_parse_number(const char *s, double *out);

#endif
