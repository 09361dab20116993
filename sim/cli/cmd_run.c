/*
 * cmd_run.c — `tidesim run` (sim/cli/cmd_run.h): one run, or replications
 * through sim/driver/replicate.h.
 *
 * Linked into the binary only, not the library: the interrupt flag is the one
 * piece of writable static data, because a signal handler can reach nothing
 * else.
 */
#include "sim/cli/cmd_run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/driver/replicate.h"
#include "sim/output.h"
#include "sim/scenario.h"
#include "sim/sim.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
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
    struct sim_sink sink;
    sim_output_sink(out, &sink);
    struct sim s;
    if (sim_init(&s, sc, seed, &sink)) {
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

int cli_run(int argc, char **argv)
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
        struct replicate_opts ro = {out_path, sc.seed, (unsigned)reps, 0, quiet, &interrupted};
        status = replicate_run(&ro, run_once, &ctx);
    } else {
        status = run_once(&ctx, sc.seed, out_path);
    }
    scenario_release(&sc);
    return status;
}
