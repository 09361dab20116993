/*
 * cmd_run.h — the simulating commands of tidesim:
 *
 * Room sim/cli/: main.c and one cmd_*.c per subcommand, the only code that
 * parses arguments, prints for a person or picks an exit code. Rule:
 * docs/architecture.md.
 *
 *   tidesim run SCENARIO [-o FILE] [--seed N] [--replications R] [--quiet]
 *   tidesim validate SCENARIO
 *
 * Exit status: run 0 complete, 1 error (nothing written), 2 usage error,
 * 130 interrupted (FILE.partial written; nothing when interrupted during
 * set-up); validate 0 valid, 1 invalid, 2 usage error.
 */
#ifndef TIDESIM_CLI_CMD_RUN_H
#define TIDESIM_CLI_CMD_RUN_H

#include <signal.h>

/*
 * Install the SIGINT/SIGTERM handler of the long-running commands (run, sweep)
 * and unblock both; returns the flag it sets. Call it first thing.
 */
volatile sig_atomic_t *cli_catch_signals(void);

/* Entry points for main(): argv[0] is the command name. */
int cli_run(int argc, char **argv);
int cli_validate(int argc, char **argv);

#endif
