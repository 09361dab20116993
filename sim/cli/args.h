/*
 * args.h — argument parsing shared by the subcommands of sim/cli/.
 *
 * Conventions (README "Command line"): every subcommand parses with
 * getopt_long, so "--opt value" and "--opt=value" both work, options may
 * follow the files, "--" ends the options, and unique prefixes of long
 * options are accepted; -h/--help prints the command's usage to stdout and
 * exits 0; a usage error prints one line to stderr and exits 2.
 */
#ifndef TIDESIM_CLI_ARGS_H
#define TIDESIM_CLI_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* "--help" or "-h". */
bool cli_is_help(const char *a);

/*
 * Prepares getopt_long for a fresh parse of a subcommand's argv (a process,
 * e.g. the test binary, may parse several): full re-initialisation, no
 * messages from getopt itself (the caller prints them with cli_opt_error).
 * Short option strings passed to getopt_long must start with ':' so that a
 * missing value is told from an unknown option.
 */
void cli_getopt_begin(void);

/*
 * Prints the message for getopt_long's '?' (unknown option, or a value given
 * to an option that takes none) or ':' (missing value) as
 * "tidesim CMD: unknown option '--x' (see tidesim CMD --help)" or
 * "tidesim CMD: option '--seed' needs a value", and returns 2.
 */
int cli_opt_error(FILE *err, const char *cmd, int c, char *const argv[]);

/*
 * A share given as a fraction (0.95) or a percentage ("95%"). Returns 0,
 * -ERANGE for a bare number above 1 (a percentage without its "%": refused
 * rather than taken as a bound of 60), or -EINVAL.
 */
int cli_parse_share(const char *s, double *out);

/* A finite number, the whole string. Returns 0 or -EINVAL. */
int cli_parse_number(const char *s, double *out);

/*
 * True when a and b both exist and are the same file (same st_dev and st_ino
 * after following symbolic links: a hard link or a symlink to the file counts).
 */
bool cli_same_file(const char *a, const char *b);

/* JSON output: a string (escaped; NULL as null) and a number (non-finite as null). */
void cli_json_str(FILE *out, const char *s);
void cli_json_num(FILE *out, double v);

struct sweepidx_sel;

/*
 * Add a point chooser of --point N (point) or --where PATH=VALUE to sel
 * (analysis/sweepidx.h). Returns 0, or prints "tidesim CMD: ..." to err and
 * returns 2 (a usage error).
 */
int cli_sel_add(struct sweepidx_sel *sel, bool point, const char *arg, const char *cmd, FILE *err);

#endif
