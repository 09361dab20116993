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
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/h5io.h"
#include "sim/cli/args.h"
#include "sim/driver/replicate.h"
#include "sim/output.h"
#include "sim/override.h"
#include "sim/scenario.h"
#include "sim/sim.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/*
 * SIGINT and SIGTERM set the flag. Installed first thing, so that a signal
 * during set-up (loading, opening traces, the first arrivals) is seen by the
 * checks between set-up steps instead of killing the process with its
 * temporary file left behind.
 */
volatile sig_atomic_t *cli_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A blocked mask is inherited through exec (some launchers and test runners block
     * these): a run must stay interruptible all the same. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    return &interrupted;
}

/* Room for what tidesim appends to an output name: ".tmp.<pid>.rep0000.tmp.<pid>.partial". */
#define OUT_SUFFIX_MAX 64

/*
 * Refuse, before anything runs, an output that cannot be written: a path too
 * long for the names made from it, an existing folder, or a folder that is
 * missing or not writable. Returns 0 or 1 (message printed).
 */
static int check_output(const char *path)
{
    size_t n = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t base = slash ? strlen(slash + 1) : n;
    if (n == 0 || base == 0) {
        fprintf(stderr, "tidesim: output '%s' names no file\n", path);
        return 1;
    }
    if (n + OUT_SUFFIX_MAX >= PATH_MAX || base + OUT_SUFFIX_MAX > NAME_MAX) {
        fprintf(stderr,
                "tidesim: output path too long (%zu bytes, file name %zu): tidesim needs it "
                "under %d bytes and the file name under %d, to add its suffixes\n",
                n, base, PATH_MAX - OUT_SUFFIX_MAX, NAME_MAX - OUT_SUFFIX_MAX + 1);
        return 1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tidesim: output %s is a folder; name a file (e.g. %s/results.h5)\n", path,
                path);
        return 1;
    }
    char dir[PATH_MAX];
    size_t dn = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
    memcpy(dir, slash ? path : ".", dn);
    dir[dn] = 0;
    int e = 0;
    if (stat(dir, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (access(dir, W_OK | X_OK) != 0)
        e = errno;
    if (e) {
        fprintf(stderr, "tidesim: cannot write %s: folder %s: %s\n", path, dir, strerror(e));
        return 1;
    }
    return 0;
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

static int set_up_interrupted(void)
{
    fprintf(stderr, "tidesim: interrupted during set-up; no results written\n");
    return 130;
}

/* One simulation of the scenario with this seed into out_path; returns the exit status. */
static int run_once(void *ctx, uint64_t seed, const char *out_path)
{
    const struct run_ctx *c = ctx;
    struct scenario *sc = c->sc;
    char err[PATH_MAX + 256];
    struct sim_output *out = NULL;
    if (interrupted)
        return set_up_interrupted();
    if (sim_output_open(&out, out_path, sc, err, sizeof(err))) {
        fprintf(stderr, "tidesim: %s\n", err);
        return 1;
    }
    struct sim_sink sink;
    sim_output_sink(out, &sink);
    struct sim s;
    if (sim_init(&s, sc, seed, &sink)) {
        sim_output_abort(out);
        if (interrupted) /* e.g. a trace's open() cut short by the signal */
            return set_up_interrupted();
        fprintf(stderr, "tidesim: %s: %s\n", c->scen, s.err);
        return 1;
    }
    if (interrupted) { /* during sim_init: nothing simulated, nothing to keep */
        sim_output_abort(out);
        sim_release(&s);
        return set_up_interrupted();
    }
    struct progress prog = {.duration = sc->duration};
    if (!c->quiet && isatty(STDERR_FILENO)) {
        s.eng.progress = show_progress;
        s.eng.progress_ctx = &prog;
    }

    int rc = sim_run(&s, &interrupted);
    if (prog.shown)
        fputs("\n", stderr);
    if (rc < 0) {
        if (s.sink_error) /* the results file could not be written (a full disk, ...) */
            fprintf(stderr, "tidesim: cannot write %s: %s\n", out_path, strerror(-s.sink_error));
        else
            fprintf(stderr, "tidesim: %s\n", s.err);
        sim_output_abort(out);
        sim_release(&s);
        return 1;
    }
    if (s.unplaceable) /* shown even with --quiet: jobs the scenario can never run */
        fprintf(stderr,
                "tidesim: warning: %llu training job%s rejected at submission: more GPUs than "
                "the pools their require allows (/summary jobs_unplaceable)\n",
                (unsigned long long)s.unplaceable, s.unplaceable == 1 ? " was" : "s were");
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

static const char run_usage[] =
    "usage: tidesim run SCENARIO [-o FILE] [--seed N] [--replications R|auto]\n"
    "                   [--precision P] [--max-replications M] [--quiet]\n"
    "                   [--set KEY.PATH=VALUE]...\n"
    "\n"
    "Simulates the scenario and writes its results to FILE (HDF5; default\n"
    "<scenario name>.h5). The file is written under a temporary name and renamed\n"
    "when the run completes; an interrupted run (Ctrl-C) leaves FILE.partial with\n"
    "/meta complete = 0. FILE may not be '-' (HDF5 needs a file) nor the scenario or\n"
    "one of its traces (also through a link).\n"
    "\n"
    "options (--opt VALUE and --opt=VALUE are the same):\n"
    "  -o, --output FILE        the results file\n"
    "      --seed N             override the scenario's seed\n"
    "  -r, --replications R     run seeds N, N+1, ..., N+R-1 as separate processes (at\n"
    "                           most one per core) and merge them into one file: /rep0000\n"
    "                           ... each with a single run's layout, and /summary with\n"
    "                           <metric>_mean and <metric>_ci95 (95% Student-t\n"
    "                           half-width); interrupted, FILE.partial holds the\n"
    "                           replications started so far\n"
    "      --replications auto  with --precision P (1% or 0.01): 3 seeds (one per core\n"
    "                           if more), then more until the 95% interval of busy\n"
    "                           utilisation, arrivals within SLO, worst p99 and training\n"
    "                           GPU-hours is within P of its mean; /meta records\n"
    "                           precision_target, precision_reached, precision_metric\n"
    "      --max-replications M at most M seeds with auto (default 40; 3..9999)\n"
    "      --set KEY.PATH=VALUE override a scenario key (repeatable; later wins), checked\n"
    "                           as the file is: --set cluster.nodes=8,\n"
    "                           --set services.chat.replicas=6 (a list item by index or\n"
    "                           name), --set 'training.synthetic.gpus={1: 1}'\n"
    "  -q, --quiet              no progress line (shown on a terminal) nor summary\n"
    "  -h, --help               this text\n"
    "\n"
    "exit status: 0 complete, 1 error (nothing written), 2 usage error, 130\n"
    "interrupted (FILE.partial written; nothing when interrupted during set-up)\n";

/* The output may not replace an input: the scenario, or a trace it replays. */
static int check_not_input(const char *out_path, const struct scenario *sc, const char *scen)
{
    const char *hit = cli_same_file(out_path, scen) ? scen : NULL;
    for (size_t i = 0; !hit && i < sc->nservices; i++)
        if (sc->services[i].from_trace && sc->services[i].trace.path &&
            cli_same_file(out_path, sc->services[i].trace.path))
            hit = sc->services[i].trace.path;
    if (!hit && sc->training.from_trace && sc->training.trace.path &&
        cli_same_file(out_path, sc->training.trace.path))
        hit = sc->training.trace.path;
    if (!hit)
        return 0;
    fprintf(stderr, "tidesim run: output %s is the input %s; name another file with -o\n", out_path,
            hit);
    return 1;
}

int cli_run(int argc, char **argv)
{
    const char *scen = NULL, *out_path = NULL;
    uint64_t seed = 0;
    bool have_seed = false, quiet = false;
    uint64_t reps = 1, max_reps = 40;
    bool auto_reps = false;
    double precision = 0;
    const char **sets = calloc((size_t)argc, sizeof(*sets));
    size_t nsets = 0;
    int status = 2;

    h5io_quiet(); /* before the library's first use (see h5io.h) */
    cli_catch_signals();
    if (!sets) {
        fputs("tidesim run: out of memory\n", stderr);
        return 1;
    }

    enum { OPT_SEED = 256, OPT_SET, OPT_PRECISION, OPT_MAXREPS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, OPT_SEED},
        {"replications", required_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {"set", required_argument, NULL, OPT_SET},
        {"precision", required_argument, NULL, OPT_PRECISION},
        {"max-replications", required_argument, NULL, OPT_MAXREPS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_getopt_begin();
    int c;
    while ((c = getopt_long(argc, argv, ":ho:r:q", longopts, NULL)) != -1) {
        struct conf_err serr;
        switch (c) {
        case 'h':
            fputs(run_usage, stdout);
            free(sets);
            return 0;
        case 'o':
            if (!strcmp(optarg, "-")) {
                fprintf(stderr, "tidesim run: -o -: results are an HDF5 file and cannot go to "
                                "standard output; name a file\n");
                goto usage_out;
            }
            out_path = optarg;
            break;
        case OPT_SEED:
            if (parse_u64(optarg, &seed)) {
                fprintf(stderr, "tidesim run: --seed needs a non-negative integer\n");
                goto usage_out;
            }
            have_seed = true;
            break;
        case 'r':
            if (!strcmp(optarg, "auto")) {
                auto_reps = true;
            } else if (parse_u64(optarg, &reps) || reps < 1 || reps > 9999) {
                fprintf(stderr, "tidesim run: --replications needs an integer 1..9999 or 'auto'\n");
                goto usage_out;
            }
            break;
        case 'q':
            quiet = true;
            break;
        case OPT_PRECISION:
            if (cli_parse_share(optarg, &precision) || !(precision > 0) || precision >= 1) {
                fprintf(stderr, "tidesim run: --precision needs a relative half-width above 0 and "
                                "below 1, as a fraction (0.01) or a percentage (1%%)\n");
                goto usage_out;
            }
            break;
        case OPT_MAXREPS:
            if (parse_u64(optarg, &max_reps) || max_reps < 3 || max_reps > 9999) {
                fprintf(stderr, "tidesim run: --max-replications needs an integer 3..9999\n");
                goto usage_out;
            }
            break;
        case OPT_SET:
            if (override_check_syntax(optarg, &serr)) {
                fprintf(stderr, "tidesim run: %s\n", serr.msg);
                goto usage_out;
            }
            sets[nsets++] = optarg;
            break;
        default:
            cli_opt_error(stderr, "run", c, argv);
            goto usage_out;
        }
    }
    if (auto_reps != (precision > 0)) {
        fprintf(stderr, auto_reps ? "tidesim run: --replications auto needs --precision P\n"
                                  : "tidesim run: --precision goes with --replications auto\n");
        goto usage_out;
    }
    if (auto_reps) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        reps = nc > 3 ? (uint64_t)nc : 3;
        if (reps > max_reps)
            reps = max_reps;
    }
    if (optind < argc)
        scen = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "tidesim run: unexpected argument '%s'\n", argv[optind]);
        goto usage_out;
    }
    if (!scen) {
        fprintf(stderr, "usage: tidesim run SCENARIO [-o FILE] [--seed N] [--replications R] "
                        "[--quiet] [--set KEY.PATH=VALUE]...\n");
        goto usage_out;
    }

    if (out_path && check_output(out_path)) {
        free(sets);
        return 1;
    }
    struct scenario sc;
    struct conf_err cerr;
    status = 1;
    if (scenario_load_set(&sc, scen, NULL, sets, nsets, &cerr)) {
        fprintf(stderr, "%s\n", cerr.msg);
        free(sets);
        return 1;
    }
    if (sc.warning[0]) /* cluster.sharing_from: fields of the file tidesim does not model */
        fprintf(stderr, "tidesim: warning: %s\n", sc.warning);
    if (sc.policy.warning && !quiet)
        fprintf(stderr, "%s: warning: %s\n", scen, sc.policy.warning);
    if (have_seed)
        sc.seed = seed;
    /* Default: "<name>.h5" in the working folder (scenario_load allows only plain names). */
    char defpath[NAME_MAX + 1];
    if (!out_path) {
        int n = snprintf(defpath, sizeof(defpath), "%s.h5", sc.name);
        out_path = defpath;
        if (n < 0 || (size_t)n >= sizeof(defpath) || check_output(out_path)) {
            if (n < 0 || (size_t)n >= sizeof(defpath))
                fprintf(stderr,
                        "tidesim: %s: the scenario name is too long for a file name; "
                        "give one with -o\n",
                        scen);
            goto out;
        }
    }
    if (check_not_input(out_path, &sc, scen))
        goto out;
    if (interrupted) {
        status = set_up_interrupted();
        goto out;
    }

    struct run_ctx ctx = {&sc, scen, quiet || reps > 1}; /* replications: parent reports */
    if (reps > 1) {
        struct replicate_opts ro = {.path = out_path,
                                    .seed = sc.seed,
                                    .reps = (unsigned)reps,
                                    .precision = auto_reps ? precision : 0,
                                    .max_reps = (unsigned)max_reps,
                                    .jobs = 0,
                                    .quiet = quiet,
                                    .interrupted = &interrupted};
        status = replicate_run(&ro, run_once, &ctx);
    } else {
        status = run_once(&ctx, sc.seed, out_path);
    }
out:
    scenario_release(&sc);
    free(sets);
    return status;
usage_out:
    free(sets);
    return status;
}
