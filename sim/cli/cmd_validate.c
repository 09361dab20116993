/* cmd_validate.c — `tidesim validate` (sim/cli/cmd_run.h). */
#include "sim/cli/cmd_run.h"

#include <stdio.h>
#include <string.h>

#include "sim/scenario.h"

int cli_validate(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: tidesim validate SCENARIO\n"
             "\n"
             "Reads and checks a scenario file without running it. Prints 'ok' and exits 0, or\n"
             "prints the first problem as FILE:LINE:COLUMN: 'key': ... and exits 1.");
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: tidesim validate SCENARIO\n");
        return 2;
    }
    struct scenario sc;
    struct conf_err cerr;
    if (scenario_load(&sc, argv[1], &cerr)) {
        fprintf(stderr, "%s\n", cerr.msg);
        return 1;
    }
    printf("%s: ok (%u GPUs, %zu services, policy %s, %.1f h)\n", argv[1], scenario_gpus(&sc),
           sc.nservices, sc.policy.name, sim_time_to_sec(sc.duration) / 3600);
    scenario_release(&sc);
    return 0;
}
