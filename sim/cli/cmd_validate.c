/* cmd_validate.c — `tidesim validate` (sim/cli/cmd_run.h). */
#include "sim/cli/cmd_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/args.h"
#include "sim/override.h"
#include "sim/scenario.h"

static const char validate_usage[] =
    "usage: tidesim validate SCENARIO... [--set KEY.PATH=VALUE]... [--format text|json]\n"
    "\n"
    "Reads and checks each scenario file without running it. For each valid file\n"
    "prints 'FILE: ok (...)'; for each invalid one its first problem, as\n"
    "FILE:LINE:COLUMN: 'key': ..., on stderr. The overrides of --set (see tidesim run\n"
    "--help) apply to every file; a bad one is reported as --set KEY.PATH=VALUE: ...\n"
    "--format json prints one JSON array on stdout instead: per file\n"
    "{\"file\", \"valid\", and \"gpus\", \"services\", \"policy\", \"duration_s\" or \"error\"}.\n"
    "\n"
    "exit status: 0 every file valid, 1 a file invalid (the others are still checked),\n"
    "2 usage error\n";

int cli_validate(int argc, char **argv)
{
    enum { OPT_SET = 256, OPT_FORMAT };
    static const struct option longopts[] = {{"set", required_argument, NULL, OPT_SET},
                                             {"format", required_argument, NULL, OPT_FORMAT},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char **sets = calloc((size_t)argc, sizeof(*sets));
    size_t nsets = 0;
    bool json = false;
    int rc = 2, c;
    if (!sets) {
        fputs("tidesim validate: out of memory\n", stderr);
        return 1;
    }
    cli_getopt_begin();
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        struct conf_err serr;
        if (c == 'h') {
            fputs(validate_usage, stdout);
            free(sets);
            return 0;
        } else if (c == OPT_SET) {
            if (override_check_syntax(optarg, &serr)) {
                fprintf(stderr, "tidesim validate: %s\n", serr.msg);
                goto out;
            }
            sets[nsets++] = optarg;
        } else if (c == OPT_FORMAT) {
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                fprintf(stderr, "tidesim validate: --format needs text or json\n");
                goto out;
            }
            json = !strcmp(optarg, "json");
        } else {
            cli_opt_error(stderr, "validate", c, argv);
            goto out;
        }
    }
    if (optind >= argc) {
        fputs("usage: tidesim validate SCENARIO... [--set KEY.PATH=VALUE]... [--format "
              "text|json]\n",
              stderr);
        goto out;
    }
    rc = 0;
    if (json)
        fputs("[", stdout);
    for (int i = optind; i < argc; i++) {
        struct scenario sc;
        struct conf_err cerr;
        bool ok = scenario_load_set(&sc, argv[i], NULL, sets, nsets, &cerr) == 0;
        if (!ok) {
            fprintf(stderr, "%s\n", cerr.msg);
            rc = 1;
        } else if (sc.warning[0]) {
            fprintf(stderr, "%s: warning: %s\n", argv[i], sc.warning);
        }
        if (ok && sc.policy.warning) {
            fprintf(stderr, "%s: warning: %s\n", argv[i], sc.policy.warning);
        }
        if (json) {
            fprintf(stdout, "%s\n  {\"file\": ", i > optind ? "," : "");
            cli_json_str(stdout, argv[i]);
            fprintf(stdout, ", \"valid\": %s, ", ok ? "true" : "false");
            if (ok) {
                fprintf(stdout, "\"gpus\": %u, \"services\": %zu, \"policy\": ", scenario_gpus(&sc),
                        sc.nservices);
                cli_json_str(stdout, sc.policy.name);
                fputs(", \"duration_s\": ", stdout);
                cli_json_num(stdout, sim_time_to_sec(sc.duration));
            } else {
                fputs("\"error\": ", stdout);
                cli_json_str(stdout, cerr.msg);
            }
            fputs("}", stdout);
        } else if (ok) {
            printf("%s: ok (%u GPUs, %zu services, policy %s, %.1f h)\n", argv[i],
                   scenario_gpus(&sc), sc.nservices, sc.policy.name,
                   sim_time_to_sec(sc.duration) / 3600);
        }
        if (ok)
            scenario_release(&sc);
    }
    if (json)
        fputs("\n]\n", stdout);
out:
    free(sets);
    return rc;
}
