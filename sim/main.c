/*
 * main.c — the tidesim command line: git-style subcommands.
 *
 *   tidesim run SCENARIO [-o FILE] [--seed N] [--replications R] [--quiet]
 *   tidesim validate SCENARIO
 *   tidesim report|compare|check|plot ...   (sim/cli_analysis.h)
 *
 * The only place that prints and exits. The interrupt flag is the one piece
 * of writable static data: a signal handler can reach nothing else.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli_analysis.h"
#include "sim/cli_mig.h"
#include "sim/cli_replicate.h"
#include "sim/cli_traces.h"
#include "sim/output.h"
#include "sim/scenario.h"
#include "sim/sim.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage_main(FILE *f)
{
    fputs("usage: tidesim <command> [options]\n"
          "\n"
          "commands:\n"
          "  run SCENARIO [-o FILE] [--seed N] [--replications R] [--quiet]   simulate, write an "
          "HDF5 results file\n"
          "  validate SCENARIO                             check a scenario without running it\n"
          "  report FILE [--format text|markdown|json]     print a results file's report\n"
          "  compare A.h5 B.h5 [...] [--format markdown]   compare runs (Welch 95% CIs)\n"
          "  check FILE [--min-util X] [--min-slo Y] ...   CI gates: exit 0 pass, 1 fail\n"
          "  plot FILE... -o DIR [--format png|svg]        charts through gnuplot\n"
          "  mig profiles GPU | mig validate GPU LAYOUT    MIG profile table, layout check\n"
          "  traces inspect FILE | traces convert IN ...   look into a trace, convert it\n"
          "\n"
          "'tidesim <command> --help' tells more. Version " TIDESIM_VERSION " (" TIDESIM_GIT ").\n",
          f);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return -EINVAL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -EINVAL;
    *out = v;
    return 0;
}

static void fmt_simtime(char *buf, size_t n, sim_time t)
{
    long long s = (long long)(t / SIM_SEC);
    snprintf(buf, n, "%lldd %02lld:%02lld:%02lld", s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
}

struct progress {
    sim_time duration;
    uint64_t last_events;
    bool shown;
};

static void show_progress(void *ctx, const struct engine *e)
{
    struct progress *p = ctx;
    char now[32], end[32];
    fmt_simtime(now, sizeof(now), e->now);
    fmt_simtime(end, sizeof(end), p->duration);
    fprintf(stderr, "\r  simulated %s of %s (%3.0f%%), %.1f M events/s   ", now, end,
            100.0 * (double)e->now / (double)p->duration,
            (double)(e->processed - p->last_events) / 1e6);
    p->last_events = e->processed;
    p->shown = true;
}

struct run_ctx {
    struct scenario *sc;
    const char *scen;
    bool quiet;
};

/* One simulation of the scenario with this seed into out_path; returns the exit status. */
static int run_once(void *ctx, uint64_t seed, const char *out_path)
{
    const struct run_ctx *c = ctx;
    struct scenario *sc = c->sc;
    char err[512];
    struct sim_output *out = NULL;
    if (sim_output_open(&out, out_path, sc, err, sizeof(err))) {
        fprintf(stderr, "tidesim: %s\n", err);
        return 1;
    }
    struct sim s;
    if (sim_init(&s, sc, seed, out)) {
        fprintf(stderr, "tidesim: %s: %s\n", c->scen, s.err);
        sim_output_abort(out);
        return 1;
    }
    struct progress prog = {.duration = sc->duration};
    if (!c->quiet && isatty(STDERR_FILENO)) {
        s.eng.progress = show_progress;
        s.eng.progress_ctx = &prog;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int rc = sim_run(&s, &interrupted);
    if (prog.shown)
        fputs("\n", stderr);
    if (rc < 0) {
        fprintf(stderr, "tidesim: %s\n", s.err);
        sim_output_abort(out);
        sim_release(&s);
        return 1;
    }
    char *written = NULL;
    int wrc = sim_output_finish(out, &s, rc == 0, &written, err, sizeof(err));
    if (wrc) {
        fprintf(stderr, "tidesim: %s\n", err);
    } else if (rc == 1) {
        char at[32];
        fmt_simtime(at, sizeof(at), s.end);
        fprintf(stderr,
                "tidesim: interrupted at simulated %s; partial results in %s (complete = 0)\n", at,
                written);
    } else if (!c->quiet) {
        fprintf(stderr, "tidesim: wrote %s (%llu events)\n", written,
                (unsigned long long)s.eng.processed);
    }
    free(written);
    sim_release(&s);
    if (wrc)
        return 1;
    return rc == 1 ? 130 : 0;
}

static int cmd_run(int argc, char **argv)
{
    const char *scen = NULL, *out_path = NULL;
    uint64_t seed = 0;
    bool have_seed = false, quiet = false;
    uint64_t reps = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            puts("usage: tidesim run SCENARIO [-o FILE] [--seed N] [--replications R] [--quiet]\n"
                 "\n"
                 "Simulates the scenario and writes its results to FILE (HDF5; default\n"
                 "<scenario name>.h5). The file is written under a temporary name and renamed\n"
                 "when the run completes; an interrupted run (Ctrl-C) leaves FILE.partial with\n"
                 "/meta complete = 0. --seed overrides the scenario's seed. A progress line is\n"
                 "shown on a terminal; --quiet hides it.\n"
                 "\n"
                 "--replications R runs seeds N, N+1, ..., N+R-1 as separate processes (at most\n"
                 "one per core) and merges them into one file: /rep0000 ... each with a single\n"
                 "run's layout, and /summary with <metric>_mean and <metric>_ci95 (95% Student-t\n"
                 "half-width). Interrupted, it leaves FILE.partial (complete = 0) holding the\n"
                 "replications started so far.");
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) {
                fprintf(stderr, "tidesim run: '%s' needs a file name\n", a);
                return 2;
            }
            out_path = argv[i];
        } else if (!strcmp(a, "--seed")) {
            if (++i >= argc || parse_u64(argv[i], &seed)) {
                fprintf(stderr, "tidesim run: --seed needs a non-negative integer\n");
                return 2;
            }
            have_seed = true;
        } else if (!strcmp(a, "--replications") || !strcmp(a, "-r")) {
            if (++i >= argc || parse_u64(argv[i], &reps) || reps < 1 || reps > 9999) {
                fprintf(stderr, "tidesim run: --replications needs an integer 1..9999\n");
                return 2;
            }
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = true;
        } else if (a[0] == '-') {
            fprintf(stderr, "tidesim run: unknown option '%s' (see tidesim run --help)\n", a);
            return 2;
        } else if (!scen) {
            scen = a;
        } else {
            fprintf(stderr, "tidesim run: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!scen) {
        fprintf(stderr,
                "usage: tidesim run SCENARIO [-o FILE] [--seed N] [--replications R] [--quiet]\n");
        return 2;
    }

    struct scenario sc;
    struct conf_err cerr;
    if (scenario_load(&sc, scen, &cerr)) {
        fprintf(stderr, "%s\n", cerr.msg);
        return 1;
    }
    if (have_seed)
        sc.seed = seed;
    char defpath[300];
    if (!out_path) {
        snprintf(defpath, sizeof(defpath), "%s.h5", sc.name);
        out_path = defpath;
    }

    struct run_ctx ctx = {&sc, scen, quiet || reps > 1}; /* replications: parent reports */
    int status;
    if (reps > 1) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        struct cli_replicate_opts ro = {out_path, sc.seed, (unsigned)reps, 0, quiet, &interrupted};
        status = cli_replicate(&ro, run_once, &ctx);
    } else {
        status = run_once(&ctx, sc.seed, out_path);
    }
    scenario_release(&sc);
    return status;
}

static int cmd_validate(int argc, char **argv)
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return 2;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {
        {"run", cmd_run},         {"validate", cmd_validate}, {"report", cli_report},
        {"compare", cli_compare}, {"check", cli_check},       {"plot", cli_plot},
        {"mig", cli_mig},         {"traces", cli_traces},
    };
    const char *cmd = argv[1];
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage_main(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        puts("tidesim " TIDESIM_VERSION " (" TIDESIM_GIT ")");
        return 0;
    }
    fprintf(stderr, "tidesim: unknown command '%s'\n", cmd);
    usage_main(stderr);
    return 2;
}
