/*
 * cmd_traces.h — `tidesim traces inspect|convert`: look at a trace, or rewrite any supported
 * trace as the generic CSV (docs/traces.md).
 */
#ifndef TIDESIM_CLI_CMD_TRACES_H
#define TIDESIM_CLI_CMD_TRACES_H

/*
 * argv[0] is "traces". Prints to stdout (results) and stderr (errors). Returns the exit code:
 * 0 ok, 1 bad data (any malformed row with --on-bad-row fail, missing or unreadable file),
 * 2 usage error.
 */
int cli_traces(int argc, char **argv);

#endif
