/* cmd_traces.c — `tidesim traces inspect` and `tidesim traces convert`. */
#include "sim/cli/cmd_traces.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csv.h>

#include "sim/cli/args.h"

#include "traces/arrivals.h"
#include "traces/jobs.h"

enum fmt { F_NONE, F_AZURE, F_CSV, F_SERVEGEN, F_COUNTS, F_OPENB, F_PAI, F_HELIOS, F_JOBS };

/*
 * The names of a scenario's `format` keys (sim/scenario.c): arrivals azure,
 * servegen, csv, counts; jobs openb, pai, helios, csv. "csv" is the job CSV
 * when the file's header is the job CSV's (id,submit_s,...), as convert
 * writes it. The names after the first of each are older spellings, still
 * accepted. The first name of each format is the one printed.
 */
static const struct {
    char name[12];
    enum fmt f;
} fmt_names[] = {{"azure", F_AZURE},   {"servegen", F_SERVEGEN}, {"csv", F_CSV},
                 {"counts", F_COUNTS}, {"openb", F_OPENB},       {"pai", F_PAI},
                 {"helios", F_HELIOS}, {"csv", F_JOBS},          {"pai-task", F_PAI},
                 {"acme", F_HELIOS},   {"jobs-csv", F_JOBS}};

#define FORMATS_TEXT "azure servegen csv counts (arrivals); openb pai helios csv (jobs)"

static bool is_jobs(enum fmt f)
{
    return f == F_OPENB || f == F_PAI || f == F_HELIOS || f == F_JOBS;
}

static enum fmt fmt_parse(const char *s)
{
    for (size_t i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
        if (strcmp(s, fmt_names[i].name) == 0)
            return fmt_names[i].f;
    return F_NONE;
}

/* Guess the format from a folder (ServeGen) or the first line of a file. */
static enum fmt fmt_detect(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return F_SERVEGEN;
    FILE *f = fopen(path, "rb");
    if (!f)
        return F_NONE;
    char line[1024] = "";
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, "TIMESTAMP,ContextTokens,GeneratedTokens", 39) == 0)
        return F_AZURE;
    if (strncmp(line, "name,cpu_milli,", 15) == 0 && strstr(line, "num_gpu"))
        return F_OPENB;
    if (strncmp(line, "job_id,", 7) == 0 && strstr(line, "gpu_num") && strstr(line, "submit_time"))
        return F_HELIOS;
    if (strncmp(line, "time_s,", 7) == 0 || strcmp(line, "time_s") == 0)
        return F_CSV;
    if (strncmp(line, "id,submit_s,", 12) == 0)
        return F_JOBS;
    size_t commas = 0;
    for (char *p = line; *p; p++)
        commas += *p == ',';
    if (commas == 5 && (strstr(line, ",Gamma,") || strstr(line, ",Weibull,") || strstr(line, ",,")))
        return F_SERVEGEN;
    if (commas == 9 && (strstr(line, ",Terminated,") || strstr(line, ",Failed,") ||
                        strstr(line, ",Running,") || strstr(line, ",Waiting,")))
        return F_PAI;
    return F_NONE;
}

struct cli_opts {
    const char *in, *out;
    enum fmt fmt;
    bool skip, json, loop;
    sim_time end, loop_period, interval;
    sim_time cut;               /* --cut: > 0 writes a warm-start snapshot at that time */
    bool cut_given;             /* --cut was given (0 is a valid cut) */
    const char *rest;           /* --rest: the jobs submitted at or after the cut, shifted to 0 */
    sim_time ckpt_every;        /* --checkpoint-interval (0: none) */
    uint64_t seed, max_records; /* max_records 0: not given */
    const char *time_col, *count_col, *in_col, *out_col;
    enum tfield_unit unit;
};

static const char traces_usage[] =
    "usage: tidesim traces inspect FILE [--format F] [--format text|json] [options]\n"
    "       tidesim traces convert IN [--format F] -o OUT.csv [options]\n"
    "\n"
    "inspect summarises a trace: records, time span, arrivals per hour of day, token or\n"
    "GPU-size and duration distributions, malformed rows. --format json prints it as\n"
    "one JSON object. convert rewrites any supported trace as the generic CSV\n"
    "(arrivals: time_s,in_tokens,out_tokens; jobs: id,submit_s,duration_s,gpus,...),\n"
    "which a scenario reads with format: csv. OUT is written under a temporary name\n"
    "in its folder and renamed when complete: a bad row leaves no OUT. -o - writes to\n"
    "standard output. OUT may not be the input (also through a link).\n"
    "\n"
    "formats (a scenario's `format` names): " FORMATS_TEXT "\n"
    "  guessed from the header when --format is absent (counts must be named).\n"
    "\n"
    "options (--opt VALUE and --opt=VALUE are the same):\n"
    "  -f, --format F          the input's format; or text|json (inspect's output)\n"
    "  -o, --output OUT        convert: the CSV to write ('-': standard output)\n"
    "      --on-bad-row fail|skip   stop at a malformed row (default; exit 1) or skip it\n"
    "      --end SECONDS       keep records before this trace time (after --loop)\n"
    "      --loop              replay the trace shifted by its period until --end\n"
    "      --loop-period SECONDS    the shift (default: the span rounded up to days)\n"
    "      --max-records N     the output size accepted: needed by convert without --end\n"
    "                          when the input generates its records (servegen, counts)\n"
    "                          or loops; convert fails, writing nothing, past N records\n"
    "      --cut SECONDS       jobs: write OUT as a warm-start snapshot (training.snapshot)\n"
    "                          of the jobs running at that log time (submitted before it,\n"
    "                          ending after it; a job is taken to start at its submit time;\n"
    "                          fractional, MIG and service pods are left out, and counted)\n"
    "      --rest REST.csv     with --cut: also write the jobs submitted at or after the\n"
    "                          cut as a job CSV whose submit times start at 0\n"
    "      --checkpoint-interval SECONDS  with --cut: the interval the jobs checkpointed\n"
    "                          at, for ckpt_age_s = (cut - start) mod it (default 1800,\n"
    "                          the scenario default; 0: no checkpoints, age = started_s)\n"
    "      --seed N            random stream of servegen and counts placement (default 1)\n"
    "      --time-column C     csv, counts: the time column (csv default time_s; counts\n"
    "                          default: the first column)\n"
    "      --time-unit s|ms|us|wall   how the time column is written (default s)\n"
    "      --count-column C    counts: requests per interval (default: the second column)\n"
    "      --interval SECONDS  counts: interval length (default 60)\n"
    "      --in-column C       csv: the prompt token column (default in_tokens)\n"
    "      --out-column C      csv: the output token column (default out_tokens)\n"
    "  -h, --help              this text\n"
    "\n"
    "exit status: 0 ok, 1 bad data (a malformed row with --on-bad-row fail, a missing or\n"
    "unreadable file, an output that cannot be written), 2 usage error\n";

static int usage(void)
{
    fputs("usage: tidesim traces inspect FILE [--format F] [--format text|json] [options]\n"
          "       tidesim traces convert IN [--format F] -o OUT.csv [options]\n"
          "formats: " FORMATS_TEXT "; see tidesim traces --help\n",
          stderr);
    return 2;
}

/* The first (i = 0) or second column name of a CSV file's header, into buf. */
static int header_column(const char *path, size_t i, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    char line[1024] = "";
    if (!f)
        return -errno;
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line;
    for (size_t k = 0; k < i && p; k++)
        p = (p = strchr(p, ',')) ? p + 1 : NULL;
    if (!p || !*p)
        return -EINVAL;
    snprintf(buf, n, "%.*s", (int)strcspn(p, ","), p);
    return 0;
}

static struct arrival_source *open_arrivals(const struct cli_opts *c, struct trace_err *e)
{
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.skip_bad = c->skip;
    o.clip_end = c->end;
    o.seed = c->seed;
    o.loop = c->loop;
    o.loop_period = c->loop_period;
    struct arrival_csv_map m = {c->time_col ? c->time_col : "time_s", c->unit,
                                c->in_col ? c->in_col : "in_tokens",
                                c->out_col ? c->out_col : "out_tokens"};
    char tcol[256], ccol[256];
    struct arrival_counts_map cm = {c->time_col, c->unit, c->count_col, c->interval};
    struct stat st;
    switch (c->fmt) {
    case F_AZURE:
        return arrivals_azure_create(c->in, &o, e);
    case F_CSV:
        return arrivals_csv_create(c->in, &m, &o, e);
    case F_COUNTS:
        if (access(c->in, R_OK) != 0) {
            snprintf(e->msg, sizeof(e->msg), "%s: cannot open: %s", c->in, strerror(errno));
            return NULL;
        }
        if (!cm.time_col && header_column(c->in, 0, tcol, sizeof(tcol)) == 0)
            cm.time_col = tcol;
        if (!cm.count_col && header_column(c->in, 1, ccol, sizeof(ccol)) == 0)
            cm.count_col = ccol;
        if (!cm.time_col || !cm.count_col) {
            snprintf(e->msg, sizeof(e->msg),
                     "%s: no header with a time and a count column (give --time-column and "
                     "--count-column)",
                     c->in);
            return NULL;
        }
        return arrivals_counts_create(c->in, &cm, &o, e);
    case F_SERVEGEN:
        if (stat(c->in, &st) == 0 && S_ISDIR(st.st_mode))
            return arrivals_servegen_dir_create(c->in, &o, e);
        return arrivals_servegen_create(c->in, &o, e);
    default:
        return NULL;
    }
}

static struct job_source *open_jobs(const struct cli_opts *c, struct trace_err *e)
{
    struct job_trace_opts o;
    job_trace_opts_init(&o);
    o.skip_bad = c->skip;
    o.clip_end = c->end;
    struct job_csv_map m;
    job_csv_map_generic(&m);
    switch (c->fmt) {
    case F_OPENB:
        return jobs_openb_create(c->in, &o, e);
    case F_PAI:
        return jobs_pai_task_create(c->in, &o, e);
    case F_HELIOS:
        return jobs_helios_create(c->in, &o, e);
    case F_JOBS:
        return jobs_csv_create(c->in, &m, &o, e);
    default:
        return NULL;
    }
}

static void sparkline(const double *v, size_t n)
{
    static const char bars[8][4] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                    "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        mx = v[i] > mx ? v[i] : mx;
    for (size_t i = 0; i < n; i++) {
        int k = mx > 0 ? (int)floor(v[i] / mx * 7.999) : 0;
        fputs(bars[k < 0 ? 0 : k], stdout);
    }
    putchar('\n');
}

/* Percentile of a histogram of values 0..n-2 plus an overflow bin n-1. */
static size_t hist_pct(const uint64_t *h, size_t n, uint64_t total, double q)
{
    uint64_t want = (uint64_t)ceil(q * (double)total), acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += h[i];
        if (acc >= want && acc > 0)
            return i;
    }
    return n - 1;
}

static void print_hours(const double *per_hour)
{
    printf("per hour of day (00..23): ");
    sparkline(per_hour, 24);
    size_t lo = 0, hi = 0;
    for (size_t h = 0; h < 24; h++) {
        lo = per_hour[h] < per_hour[lo] ? h : lo;
        hi = per_hour[h] > per_hour[hi] ? h : hi;
    }
    printf("  lowest %02zu:00 (%.1f/h)  highest %02zu:00 (%.1f/h)\n", lo, per_hour[lo], hi,
           per_hour[hi]);
}

static void json_hours(const double *per_hour)
{
    fputs(",\n  \"per_hour_of_day\": [", stdout);
    for (size_t h = 0; h < 24; h++) {
        fputs(h ? ", " : "", stdout);
        cli_json_num(stdout, per_hour[h]);
    }
    fputs("]", stdout);
}

static void json_head(const struct cli_opts *c, const char *fmt)
{
    fputs("{\n  \"file\": ", stdout);
    cli_json_str(stdout, c->in);
    fputs(",\n  \"format\": ", stdout);
    cli_json_str(stdout, fmt);
}

static void json_skips(uint64_t skipped, const char *first)
{
    printf(",\n  \"malformed_rows_skipped\": %llu,\n  \"first_skipped\": ",
           (unsigned long long)skipped);
    cli_json_str(stdout, skipped ? first : NULL);
}

static void json_end(int rc, const char *error)
{
    fputs(",\n  \"error\": ", stdout);
    cli_json_str(stdout, rc < 0 ? error : NULL);
    fputs("\n}\n", stdout);
}

#define TOKBINS 65537u /* exact 0..65535, then overflow */

static int inspect_arrivals(const struct cli_opts *c, const char *fmt)
{
    struct trace_err e;
    struct stat st;
    if (c->fmt == F_SERVEGEN && c->end == 0 && !c->loop && stat(c->in, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
        double *r;
        size_t nwin, nfiles;
        if (servegen_dir_rates(c->in, &r, &nwin, &nfiles, &e) < 0) {
            fprintf(stderr, "tidesim traces: %s\n", e.msg);
            return 1;
        }
        double tot = 0, hours[24] = {0};
        for (size_t i = 0; i < nwin; i++) {
            tot += r[i];
            hours[(i % 144) / 6] += r[i] * 600.0;
        }
        double days = (double)nwin / 144.0;
        for (size_t h = 0; h < 24; h++)
            hours[h] /= days;
        if (c->json) {
            json_head(c, fmt);
            printf(",\n  \"client_files\": %zu,\n  \"windows\": %zu,\n  \"window_s\": 600,\n"
                   "  \"days\": ",
                   nfiles, nwin);
            cli_json_num(stdout, days);
            fputs(",\n  \"mean_rps\": ", stdout);
            cli_json_num(stdout, nwin ? tot / (double)nwin : NAN);
            fputs(",\n  \"expected_requests\": ", stdout);
            cli_json_num(stdout, tot * 600.0);
            json_hours(hours);
            json_end(0, NULL);
        } else {
            printf("servegen: %zu client files, %zu windows of 600 s = %.2f days\n", nfiles, nwin,
                   days);
            printf("mean rate: %.1f req/s, expected requests: %.4g\n", tot / (double)nwin,
                   tot * 600.0);
            print_hours(hours);
        }
        free(r);
        return 0;
    }
    struct arrival_source *s = open_arrivals(c, &e);
    if (!s) {
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
        return 1;
    }
    uint64_t *hin = calloc(TOKBINS, sizeof(*hin)), *hout = calloc(TOKBINS, sizeof(*hout));
    if (!hin || !hout) {
        free(hin);
        free(hout);
        arrival_source_destroy(s);
        fputs("tidesim traces: out of memory\n", stderr);
        return 1;
    }
    double hours[24] = {0};
    uint64_t n = 0;
    sim_time first = 0, last = 0;
    struct arrival a;
    int rc;
    while ((rc = arrival_source_next(s, &a, &e)) == 0) {
        if (n++ == 0)
            first = a.t;
        last = a.t;
        hours[(size_t)(((a.t % SIM_DAY) + SIM_DAY) % SIM_DAY / SIM_HOUR)] += 1;
        hin[a.in_tokens < TOKBINS - 1 ? a.in_tokens : TOKBINS - 1]++;
        hout[a.out_tokens < TOKBINS - 1 ? a.out_tokens : TOKBINS - 1]++;
    }
    if (rc < 0)
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
    static const double qs[4] = {0.5, 0.9, 0.99, 1.0};
    static const char *const qn[4] = {"p50", "p90", "p99", "max"};
    double span = n ? sim_time_to_sec(last - first) : 0;
    if (c->json) {
        json_head(c, fmt);
        printf(",\n  \"requests\": %llu,\n  \"first_s\": ", (unsigned long long)n);
        cli_json_num(stdout, n ? sim_time_to_sec(first) : NAN);
        fputs(",\n  \"last_s\": ", stdout);
        cli_json_num(stdout, n ? sim_time_to_sec(last) : NAN);
        fputs(",\n  \"mean_rps\": ", stdout);
        cli_json_num(stdout, span > 0 ? (double)(n - 1) / span : NAN);
        json_hours(hours);
        for (int k = 0; k < 2; k++) {
            printf(",\n  \"%s_tokens\": {", k ? "output" : "prompt");
            for (size_t i = 0; i < 4; i++) {
                printf("%s\"%s\": ", i ? ", " : "", qn[i]);
                if (n)
                    printf("%zu", hist_pct(k ? hout : hin, TOKBINS, n, qs[i]));
                else
                    fputs("null", stdout);
            }
            fputs("}", stdout);
        }
        json_skips(arrivals_skipped(s), arrivals_first_skip(s));
        json_end(rc, e.msg);
    } else {
        printf("requests: %llu\n", (unsigned long long)n);
        if (n) {
            printf("time span: %.6f s .. %.6f s (%.1f s, mean %.3f req/s)\n",
                   sim_time_to_sec(first), sim_time_to_sec(last), span,
                   span > 0 ? (double)(n - 1) / span : 0.0);
            print_hours(hours);
            printf("tokens       p50     p90     p99     max\n");
            printf("  prompt ");
            for (size_t i = 0; i < 4; i++)
                printf(" %7zu", hist_pct(hin, TOKBINS, n, qs[i]));
            printf("\n  output ");
            for (size_t i = 0; i < 4; i++)
                printf(" %7zu", hist_pct(hout, TOKBINS, n, qs[i]));
            printf("\n");
        }
        printf("malformed rows skipped: %llu\n", (unsigned long long)arrivals_skipped(s));
        if (arrivals_skipped(s))
            printf("  first: %s\n", arrivals_first_skip(s));
    }
    free(hin);
    free(hout);
    arrival_source_destroy(s);
    return rc < 0 ? 1 : 0;
}

#define DURBINS 4000u /* log buckets of 1%: 1.01^i seconds */

static int inspect_jobs(const struct cli_opts *c, const char *fmt)
{
    struct trace_err e;
    struct job_source *s = open_jobs(c, &e);
    if (!s) {
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
        return 1;
    }
    uint64_t *dur = calloc(DURBINS, sizeof(*dur));
    if (!dur) {
        fputs("tidesim traces: out of memory\n", stderr);
        job_source_destroy(s);
        return 1;
    }
    uint64_t sizes[12] = {0}, frac = 0, mig = 0, outc[4] = {0}, n = 0;
    double hours[24] = {0}, gpu_hours = 0;
    sim_time first = 0, last = 0;
    struct job_spec j;
    int rc;
    while ((rc = job_source_next(s, &j, &e)) == 0) {
        if (n++ == 0)
            first = j.submit;
        last = j.submit;
        hours[(size_t)(((j.submit % SIM_DAY) + SIM_DAY) % SIM_DAY / SIM_HOUR)] += 1;
        if (j.mig_profile[0])
            mig++;
        else if (j.gpu_fraction < 1.0)
            frac++;
        else {
            size_t b = 0;
            while (b < 11 && (1u << b) < j.gpus)
                b++;
            sizes[b]++;
        }
        outc[j.outcome]++;
        double d = sim_time_to_sec(j.work);
        gpu_hours += d / 3600.0 * j.gpus * j.gpu_fraction;
        size_t k = d < 1 ? 0 : (size_t)(log(d) / log(1.01)) + 1;
        dur[k < DURBINS ? k : DURBINS - 1]++;
    }
    if (rc < 0)
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
    struct job_stats st;
    jobs_stats(s, &st);
    static const double qs[5] = {0.1, 0.5, 0.9, 0.99, 1.0};
    static const char *const qn[5] = {"p10", "p50", "p90", "p99", "max"};
    static const char *const on[4] = {"completed", "failed", "cancelled", "service"};
    if (c->json) {
        json_head(c, fmt);
        printf(",\n  \"jobs\": %llu,\n  \"rows\": %llu,\n  \"cpu_only\": %llu,\n"
               "  \"never_ran\": %llu,\n  \"submit_first_s\": ",
               (unsigned long long)n, (unsigned long long)st.rows, (unsigned long long)st.cpu_only,
               (unsigned long long)st.never_ran);
        cli_json_num(stdout, n ? sim_time_to_sec(first) : NAN);
        fputs(",\n  \"submit_last_s\": ", stdout);
        cli_json_num(stdout, n ? sim_time_to_sec(last) : NAN);
        json_hours(hours);
        printf(",\n  \"gpu_sizes\": {\"fractional\": %llu, \"mig\": %llu", (unsigned long long)frac,
               (unsigned long long)mig);
        for (size_t b = 0; b < 12; b++)
            if (sizes[b])
                printf(", \"<=%u\": %llu", 1u << b, (unsigned long long)sizes[b]);
        fputs("},\n  \"duration_s\": {", stdout);
        for (size_t i = 0; i < 5; i++) {
            printf("%s\"%s\": ", i ? ", " : "", qn[i]);
            cli_json_num(stdout, n ? pow(1.01, (double)hist_pct(dur, DURBINS, n, qs[i])) : NAN);
        }
        fputs("},\n  \"outcomes\": {", stdout);
        for (size_t i = 0; i < 4; i++)
            printf("%s\"%s\": %llu", i ? ", " : "", on[i], (unsigned long long)outc[i]);
        fputs("},\n  \"gpu_hours\": ", stdout);
        cli_json_num(stdout, gpu_hours);
        json_skips(st.skipped, jobs_first_skip(s));
        json_end(rc, e.msg);
    } else {
        printf("jobs: %llu (rows %llu; filtered: %llu CPU-only, %llu never ran)\n",
               (unsigned long long)n, (unsigned long long)st.rows, (unsigned long long)st.cpu_only,
               (unsigned long long)st.never_ran);
        if (n) {
            printf("submit span: %.0f s .. %.0f s (%.2f days)\n", sim_time_to_sec(first),
                   sim_time_to_sec(last), sim_time_to_sec(last - first) / 86400.0);
            print_hours(hours);
            printf("GPU size histogram:\n");
            if (frac)
                printf("  <1 (fractional) %10llu\n", (unsigned long long)frac);
            if (mig)
                printf("  MIG slice       %10llu\n", (unsigned long long)mig);
            for (size_t b = 0; b < 12; b++)
                if (sizes[b])
                    printf("  %s%-5u         %10llu\n", b ? "<=" : "  ", 1u << b,
                           (unsigned long long)sizes[b]);
            printf("duration (s)  p10 %.0f  p50 %.0f  p90 %.0f  p99 %.0f  max %.0f\n",
                   pow(1.01, (double)hist_pct(dur, DURBINS, n, qs[0])),
                   pow(1.01, (double)hist_pct(dur, DURBINS, n, qs[1])),
                   pow(1.01, (double)hist_pct(dur, DURBINS, n, qs[2])),
                   pow(1.01, (double)hist_pct(dur, DURBINS, n, qs[3])),
                   pow(1.01, (double)hist_pct(dur, DURBINS, n, qs[4])));
            printf("outcomes: completed %llu, failed %llu, cancelled %llu, service %llu\n",
                   (unsigned long long)outc[0], (unsigned long long)outc[1],
                   (unsigned long long)outc[2], (unsigned long long)outc[3]);
            printf("GPU-hours: %.1f\n", gpu_hours);
        }
        printf("malformed rows skipped: %llu\n", (unsigned long long)st.skipped);
        if (st.skipped)
            printf("  first: %s\n", jobs_first_skip(s));
    }
    free(dur);
    job_source_destroy(s);
    return rc < 0 ? 1 : 0;
}

static void put_time(FILE *f, sim_time t)
{
    sim_time a = t < 0 ? -t : t;
    fprintf(f, "%s%lld.%06lld", t < 0 ? "-" : "", (long long)(a / SIM_SEC),
            (long long)(a % SIM_SEC));
}

/* Inputs whose records are generated (from rates or counts) or repeated: no size of their own. */
static bool generates(const struct cli_opts *c)
{
    return c->loop || c->fmt == F_SERVEGEN || c->fmt == F_COUNTS;
}

static int convert(const struct cli_opts *c)
{
    struct trace_err e;
    bool to_stdout = strcmp(c->out, "-") == 0;
    if (!to_stdout && cli_same_file(c->out, c->in)) {
        fprintf(stderr, "tidesim traces: output %s is the input %s; name another file\n", c->out,
                c->in);
        return 2;
    }
    if (c->loop && c->end == 0) {
        fprintf(stderr, "tidesim traces: --loop needs --end SECONDS (a looped trace has no "
                        "end of its own)\n");
        return 2;
    }
    if (generates(c) && c->end == 0 && c->max_records == 0) {
        fprintf(stderr,
                "tidesim traces: %s: a %s input has no end of its own (its records are %s): give "
                "--end SECONDS, or --max-records N to accept at most N records\n",
                c->in, c->fmt == F_SERVEGEN ? "servegen" : "counts",
                c->fmt == F_SERVEGEN ? "drawn from its rates" : "spread from its counts");
        return 2;
    }
    /* Written under OUT.tmp.<pid> in OUT's folder and renamed at the end: never a cut file. */
    char *tmp = NULL;
    FILE *out = stdout;
    if (!to_stdout) {
        size_t n = strlen(c->out) + 32;
        tmp = malloc(n);
        if (!tmp) {
            fputs("tidesim traces: out of memory\n", stderr);
            return 1;
        }
        snprintf(tmp, n, "%s.tmp.%ld", c->out, (long)getpid());
        out = fopen(tmp, "wx");
        if (!out) {
            fprintf(stderr, "tidesim traces: %s: cannot create: %s\n", c->out, strerror(errno));
            free(tmp);
            return 1;
        }
    }
    int rc;
    uint64_t n = 0, skipped = 0;
    bool too_many = false;
    if (is_jobs(c->fmt)) {
        struct job_source *s = open_jobs(c, &e);
        if (!s) {
            rc = -EINVAL;
            goto done;
        }
        fputs("id,submit_s,duration_s,gpus,gpu_fraction,mig_profile,priority,queue,params_b,"
              "outcome\n",
              out);
        struct job_spec j;
        while ((rc = job_source_next(s, &j, &e)) == 0) {
            if (c->max_records && n == c->max_records) {
                too_many = true;
                break;
            }
            fprintf(out, "%llu,", (unsigned long long)j.id);
            put_time(out, j.submit);
            fputc(',', out);
            put_time(out, j.work);
            fprintf(out, ",%u,%.6g,%s,%d,", j.gpus, j.gpu_fraction, j.mig_profile, j.priority);
            csv_fwrite(out, j.queue, strlen(j.queue));
            if (j.params_b > 0)
                fprintf(out, ",%.6g,%s\n", j.params_b, jobs_outcome_name(j.outcome));
            else
                fprintf(out, ",,%s\n", jobs_outcome_name(j.outcome));
            n++;
        }
        struct job_stats st;
        jobs_stats(s, &st);
        skipped = st.skipped;
        job_source_destroy(s);
    } else {
        struct arrival_source *s = open_arrivals(c, &e);
        if (!s) {
            rc = -EINVAL;
            goto done;
        }
        fputs("time_s,in_tokens,out_tokens\n", out);
        struct arrival a;
        while ((rc = arrival_source_next(s, &a, &e)) == 0) {
            if (c->max_records && n == c->max_records) {
                too_many = true;
                break;
            }
            put_time(out, a.t);
            fprintf(out, ",%u,%u\n", a.in_tokens, a.out_tokens);
            n++;
        }
        skipped = arrivals_skipped(s);
        arrival_source_destroy(s);
    }
done:;
    int werr = ferror(out) ? EIO : 0;
    if (out == stdout ? fflush(out) != 0 : fclose(out) != 0)
        werr = errno ? errno : EIO;
    int status = 0;
    if (rc < 0) {
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
        status = 1;
    } else if (too_many) {
        fprintf(stderr,
                "tidesim traces: %s holds more than --max-records %llu records; nothing "
                "written (raise it, or give --end)\n",
                c->in, (unsigned long long)c->max_records);
        status = 1;
    } else if (werr) {
        fprintf(stderr, "tidesim traces: cannot write %s: %s\n", c->out, strerror(werr));
        status = 1;
    } else if (tmp && rename(tmp, c->out) != 0) {
        fprintf(stderr, "tidesim traces: cannot write %s: %s\n", c->out, strerror(errno));
        status = 1;
    }
    if (tmp && status)
        unlink(tmp);
    free(tmp);
    if (status == 0)
        fprintf(stderr, "tidesim traces: wrote %llu records to %s (%llu malformed rows skipped)\n",
                (unsigned long long)n, to_stdout ? "standard output" : c->out,
                (unsigned long long)skipped);
    return status;
}

/* A file written under PATH.tmp.<pid> and renamed when complete (or stdout for "-"). */
struct out_file {
    const char *path;
    char *tmp;
    FILE *f;
};

static int out_open(struct out_file *o, const char *path)
{
    o->path = path;
    o->tmp = NULL;
    o->f = stdout;
    if (strcmp(path, "-") == 0)
        return 0;
    size_t n = strlen(path) + 32;
    if (!(o->tmp = malloc(n))) {
        fputs("tidesim traces: out of memory\n", stderr);
        return 1;
    }
    snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    if (!(o->f = fopen(o->tmp, "wx"))) {
        fprintf(stderr, "tidesim traces: %s: cannot create: %s\n", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return 1;
    }
    return 0;
}

/* Close o; keep it (rename into place) when ok, else remove it. Returns 0 or 1 (message out). */
static int out_close(struct out_file *o, bool ok)
{
    if (!o->f)
        return 0;
    int werr = ferror(o->f) ? EIO : 0;
    if (o->f == stdout ? fflush(o->f) != 0 : fclose(o->f) != 0)
        werr = errno ? errno : EIO;
    o->f = NULL;
    int status = 0;
    if (ok && werr) {
        fprintf(stderr, "tidesim traces: cannot write %s: %s\n", o->path, strerror(werr));
        status = 1;
    } else if (ok && o->tmp && rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "tidesim traces: cannot write %s: %s\n", o->path, strerror(errno));
        status = 1;
    }
    if (o->tmp && (!ok || status))
        unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return status;
}

/*
 * convert --cut T: the jobs of a log running at T as a warm-start snapshot
 * (traces/snapshot.h; docs/scenario.md "Warm start") into OUT, and with
 * --rest the jobs submitted at or after T as a job CSV from 0. A job is taken
 * to start at its submit time and run its duration (the log does not say how
 * long it queued); its checkpoint age is (T - start) mod the interval.
 * Fractional and MIG jobs, which a snapshot cannot hold, and long-running
 * service pods (openb LS, which a scenario skips by default) are counted and
 * left out of the snapshot; --rest keeps every later record.
 */
static int convert_cut(const struct cli_opts *c)
{
    if (!is_jobs(c->fmt)) {
        fprintf(stderr, "tidesim traces: --cut takes a job log (openb pai helios csv)\n");
        return 2;
    }
    if ((strcmp(c->out, "-") != 0 && cli_same_file(c->out, c->in)) ||
        (c->rest && strcmp(c->rest, "-") != 0 && cli_same_file(c->rest, c->in))) {
        fprintf(stderr, "tidesim traces: an output is the input %s; name another file\n", c->in);
        return 2;
    }
    if (c->rest && strcmp(c->rest, c->out) == 0) {
        fprintf(stderr, "tidesim traces: --rest and -o name the same file %s\n", c->out);
        return 2;
    }
    struct trace_err e;
    struct out_file snap = {0}, rest = {0};
    int status = 1, rc = 0;
    uint64_t running = 0, later = 0, partial = 0, services = 0, n = 0;
    bool too_many = false;
    struct job_source *s = open_jobs(c, &e);
    if (!s) {
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
        return 1;
    }
    if (out_open(&snap, c->out) || (c->rest && out_open(&rest, c->rest)))
        goto out;
    fputs("id,queue,priority,gpus,pool,node,started_s,remaining_s,ckpt_age_s\n", snap.f);
    if (rest.f)
        fputs("id,submit_s,duration_s,gpus,gpu_fraction,mig_profile,priority,queue,params_b,"
              "outcome\n",
              rest.f);
    struct job_spec j;
    while ((rc = job_source_next(s, &j, &e)) == 0) {
        if (c->max_records && n == c->max_records) {
            too_many = true;
            break;
        }
        n++;
        if (j.submit < c->cut && j.submit + j.work > c->cut) {
            if (j.mig_profile[0] || j.gpu_fraction < 1.0) {
                partial++;
                continue;
            }
            if (j.outcome == JOB_LOG_SERVICE) {
                services++; /* a long-running pod, not a job (a scenario skips them too) */
                continue;
            }
            sim_time started = c->cut - j.submit;
            sim_time age = c->ckpt_every > 0 ? started % c->ckpt_every : started;
            fprintf(snap.f, "%llu,", (unsigned long long)j.id);
            csv_fwrite(snap.f, j.queue, strlen(j.queue));
            fprintf(snap.f, ",%d,%u,,,", j.priority, j.gpus);
            put_time(snap.f, started);
            fputc(',', snap.f);
            put_time(snap.f, j.submit + j.work - c->cut);
            fputc(',', snap.f);
            put_time(snap.f, age);
            fputc('\n', snap.f);
            running++;
        } else if (j.submit >= c->cut && rest.f) {
            fprintf(rest.f, "%llu,", (unsigned long long)j.id);
            put_time(rest.f, j.submit - c->cut);
            fputc(',', rest.f);
            put_time(rest.f, j.work);
            fprintf(rest.f, ",%u,%.6g,%s,%d,", j.gpus, j.gpu_fraction, j.mig_profile, j.priority);
            csv_fwrite(rest.f, j.queue, strlen(j.queue));
            if (j.params_b > 0)
                fprintf(rest.f, ",%.6g,%s\n", j.params_b, jobs_outcome_name(j.outcome));
            else
                fprintf(rest.f, ",,%s\n", jobs_outcome_name(j.outcome));
            later++;
        }
    }
    if (rc < 0)
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
    else if (too_many)
        fprintf(stderr,
                "tidesim traces: %s holds more than --max-records %llu records; nothing "
                "written (raise it, or give --end)\n",
                c->in, (unsigned long long)c->max_records);
    else
        status = 0;
out:;
    bool ok = status == 0;
    int s1 = out_close(&snap, ok), s2 = out_close(&rest, ok && s1 == 0);
    if (ok && s1 == 0 && s2 && snap.tmp == NULL && strcmp(c->out, "-") != 0)
        unlink(c->out); /* the snapshot is in place but the rest failed: neither stays */
    status |= s1 | s2;
    job_source_destroy(s);
    if (status == 0) {
        fprintf(stderr, "tidesim traces: wrote %llu running jobs to %s",
                (unsigned long long)running, strcmp(c->out, "-") ? c->out : "standard output");
        if (c->rest)
            fprintf(stderr, " and %llu later jobs to %s", (unsigned long long)later, c->rest);
        fprintf(stderr,
                " (left out, running at the cut: %llu fractional or MIG jobs, %llu service "
                "pods)\n",
                (unsigned long long)partial, (unsigned long long)services);
    }
    return status;
}

static int parse_seconds(const char *opt, const char *v, bool zero_ok, sim_time *out)
{
    double sec;
    if (tfield_f64(v, &sec) < 0 || sec < 0 || (!zero_ok && sec == 0) || sec > 1e12) {
        fprintf(stderr, "tidesim traces: --%s: expected seconds %s 0, got '%s'\n", opt,
                zero_ok ? ">=" : ">", v);
        return 2;
    }
    *out = sim_time_from_sec(sec);
    return 0;
}

int cli_traces(int argc, char **argv)
{
    if (argc >= 2 && cli_is_help(argv[1])) {
        fputs(traces_usage, stdout);
        return 0;
    }
    if (argc < 2)
        return usage();
    const char *cmd = argv[1];
    bool is_convert = strcmp(cmd, "convert") == 0;
    if (!is_convert && strcmp(cmd, "inspect") != 0) {
        fprintf(stderr, "tidesim traces: unknown subcommand '%s' (expected inspect or convert)\n",
                cmd);
        return usage();
    }
    struct cli_opts c = {.seed = 1, .unit = TFIELD_SEC, .ckpt_every = 1800 * SIM_SEC};
    enum {
        OPT_BADROW = 256,
        OPT_END,
        OPT_SEED,
        OPT_LOOP,
        OPT_LOOP_PERIOD,
        OPT_MAX,
        OPT_TCOL,
        OPT_TUNIT,
        OPT_CCOL,
        OPT_INTERVAL,
        OPT_INCOL,
        OPT_OUTCOL,
        OPT_CUT,
        OPT_REST,
        OPT_CKPT
    };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"on-bad-row", required_argument, NULL, OPT_BADROW},
        {"end", required_argument, NULL, OPT_END},
        {"seed", required_argument, NULL, OPT_SEED},
        {"loop", no_argument, NULL, OPT_LOOP},
        {"loop-period", required_argument, NULL, OPT_LOOP_PERIOD},
        {"max-records", required_argument, NULL, OPT_MAX},
        {"time-column", required_argument, NULL, OPT_TCOL},
        {"time-unit", required_argument, NULL, OPT_TUNIT},
        {"count-column", required_argument, NULL, OPT_CCOL},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"in-column", required_argument, NULL, OPT_INCOL},
        {"out-column", required_argument, NULL, OPT_OUTCOL},
        {"cut", required_argument, NULL, OPT_CUT},
        {"rest", required_argument, NULL, OPT_REST},
        {"checkpoint-interval", required_argument, NULL, OPT_CKPT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *csvfmt = NULL; /* "csv": arrivals or jobs, by the header */
    cli_getopt_begin();
    int o;
    int64_t iv;
    /* argv + 1: "inspect"/"convert" plays the command name for getopt. */
    while ((o = getopt_long(argc - 1, argv + 1, ":hf:o:", longopts, NULL)) != -1) {
        switch (o) {
        case 'h':
            fputs(traces_usage, stdout);
            return 0;
        case 'f':
            if (!strcmp(optarg, "json") || !strcmp(optarg, "text")) {
                if (is_convert) {
                    fprintf(stderr,
                            "tidesim traces convert: --format %s: convert writes CSV; "
                            "the output format is for inspect\n",
                            optarg);
                    return 2;
                }
                c.json = !strcmp(optarg, "json");
                break;
            }
            c.fmt = fmt_parse(optarg);
            csvfmt = !strcmp(optarg, "csv") ? optarg : NULL;
            if (c.fmt == F_NONE) {
                fprintf(stderr, "tidesim traces: --format: unknown format '%s' (expected %s)\n",
                        optarg, FORMATS_TEXT);
                return 2;
            }
            break;
        case 'o':
            c.out = optarg;
            break;
        case OPT_BADROW:
            if (strcmp(optarg, "skip") == 0)
                c.skip = true;
            else if (strcmp(optarg, "fail") != 0) {
                fprintf(stderr, "tidesim traces: --on-bad-row: expected fail or skip, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_END:
            if (parse_seconds("end", optarg, false, &c.end))
                return 2;
            break;
        case OPT_LOOP_PERIOD:
            if (parse_seconds("loop-period", optarg, true, &c.loop_period))
                return 2;
            break;
        case OPT_INTERVAL:
            if (parse_seconds("interval", optarg, false, &c.interval))
                return 2;
            break;
        case OPT_LOOP:
            c.loop = true;
            break;
        case OPT_CUT:
            if (parse_seconds("cut", optarg, true, &c.cut))
                return 2;
            c.cut_given = true;
            break;
        case OPT_REST:
            c.rest = optarg;
            break;
        case OPT_CKPT:
            if (parse_seconds("checkpoint-interval", optarg, true, &c.ckpt_every))
                return 2;
            break;
        case OPT_SEED:
        case OPT_MAX:
            if (tfield_i64(optarg, &iv) < 0 || iv < (o == OPT_MAX)) {
                fprintf(stderr, "tidesim traces: --%s: expected a %s integer, got '%s'\n",
                        o == OPT_MAX ? "max-records" : "seed",
                        o == OPT_MAX ? "positive" : "non-negative", optarg);
                return 2;
            }
            *(o == OPT_MAX ? &c.max_records : &c.seed) = (uint64_t)iv;
            break;
        case OPT_TCOL:
            c.time_col = optarg;
            break;
        case OPT_CCOL:
            c.count_col = optarg;
            break;
        case OPT_INCOL:
            c.in_col = optarg;
            break;
        case OPT_OUTCOL:
            c.out_col = optarg;
            break;
        case OPT_TUNIT:
            if (tfield_unit_parse(optarg, &c.unit)) {
                fprintf(stderr,
                        "tidesim traces: --time-unit: expected s, ms, us or wall, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        default:
            return cli_opt_error(stderr, is_convert ? "traces convert" : "traces inspect", o,
                                 argv + 1);
        }
    }
    optind++; /* an index into argv + 1 */
    if (optind < argc)
        c.in = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "tidesim traces: unexpected argument '%s'\n", argv[optind]);
        return usage();
    }
    if (!c.in || (is_convert && !c.out))
        return usage();
    enum fmt detected = fmt_detect(c.in);
    if (csvfmt && detected == F_JOBS)
        c.fmt = F_JOBS; /* "csv" with the job CSV's header */
    if (c.fmt == F_NONE) {
        c.fmt = detected;
        if (c.fmt == F_NONE) {
            struct stat st;
            if (stat(c.in, &st) != 0) {
                fprintf(stderr, "tidesim traces: %s: cannot open: %s\n", c.in, strerror(errno));
                return 1;
            }
            fprintf(stderr, "tidesim traces: %s: unknown format (use --format: %s)\n", c.in,
                    FORMATS_TEXT);
            return 2;
        }
    }
    if (c.loop && c.end == 0) {
        fprintf(stderr, "tidesim traces: --loop needs --end (a looped trace has no end)\n");
        return 2;
    }
    const char *name = "?";
    for (size_t i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
        if (fmt_names[i].f == c.fmt) {
            name = fmt_names[i].name;
            break;
        }
    if ((c.rest || c.cut_given) && !(is_convert && c.cut_given)) {
        fprintf(stderr, "tidesim traces: --cut and --rest are options of convert, --rest "
                        "only with --cut\n");
        return 2;
    }
    if (is_convert)
        return c.cut_given ? convert_cut(&c) : convert(&c);
    if (!c.json)
        printf("file: %s\nformat: %s\n", c.in, name);
    return is_jobs(c.fmt) ? inspect_jobs(&c, name) : inspect_arrivals(&c, name);
}
