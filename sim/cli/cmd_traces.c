/* cmd_traces.c — `tidesim traces inspect` and `tidesim traces convert`. */
#include "sim/cli/cmd_traces.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <csv.h>

#include "traces/arrivals.h"
#include "traces/jobs.h"

enum fmt { F_NONE, F_AZURE, F_CSV, F_SERVEGEN, F_OPENB, F_PAI, F_HELIOS, F_JOBS };

static const struct {
    char name[12];
    enum fmt f;
} fmt_names[] = {{"azure", F_AZURE}, {"csv", F_CSV},      {"servegen", F_SERVEGEN},
                 {"openb", F_OPENB}, {"pai-task", F_PAI}, {"helios", F_HELIOS},
                 {"acme", F_HELIOS}, {"jobs-csv", F_JOBS}};

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
    bool skip;
    sim_time end;
    uint64_t seed;
};

static int usage(void)
{
    fputs("usage: tidesim traces inspect FILE [--format F] [--on-bad-row fail|skip]\n"
          "       tidesim traces convert IN --format F -o OUT.csv [--on-bad-row fail|skip]\n"
          "                              [--end SECONDS] [--seed N]\n"
          "formats: azure csv servegen openb pai-task helios acme jobs-csv\n",
          stderr);
    return 2;
}

static struct arrival_source *open_arrivals(const struct cli_opts *c, struct trace_err *e)
{
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.skip_bad = c->skip;
    o.clip_end = c->end;
    o.seed = c->seed;
    struct arrival_csv_map m = {"time_s", TFIELD_SEC, "in_tokens", "out_tokens"};
    struct stat st;
    switch (c->fmt) {
    case F_AZURE:
        return arrivals_azure_create(c->in, &o, e);
    case F_CSV:
        return arrivals_csv_create(c->in, &m, &o, e);
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

#define TOKBINS 65537u /* exact 0..65535, then overflow */

static int inspect_arrivals(const struct cli_opts *c)
{
    struct trace_err e;
    struct stat st;
    if (c->fmt == F_SERVEGEN && c->end == 0 && stat(c->in, &st) == 0 && S_ISDIR(st.st_mode)) {
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
        printf("servegen: %zu client files, %zu windows of 600 s = %.2f days\n", nfiles, nwin,
               days);
        printf("mean rate: %.1f req/s, expected requests: %.4g\n", tot / (double)nwin, tot * 600.0);
        print_hours(hours);
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
    printf("requests: %llu\n", (unsigned long long)n);
    if (n) {
        double span = sim_time_to_sec(last - first);
        printf("time span: %.6f s .. %.6f s (%.1f s, mean %.3f req/s)\n", sim_time_to_sec(first),
               sim_time_to_sec(last), span, span > 0 ? (double)(n - 1) / span : 0.0);
        print_hours(hours);
        static const double qs[4] = {0.5, 0.9, 0.99, 1.0};
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
    free(hin);
    free(hout);
    arrival_source_destroy(s);
    return rc < 0 ? 1 : 0;
}

#define DURBINS 4000u /* log buckets of 1%: 1.01^i seconds */

static int inspect_jobs(const struct cli_opts *c)
{
    struct trace_err e;
    struct job_source *s = open_jobs(c, &e);
    if (!s) {
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
        return 1;
    }
    uint64_t *dur = calloc(DURBINS, sizeof(*dur));
    if (!dur) {
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
        static const double qs[5] = {0.1, 0.5, 0.9, 0.99, 1.0};
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

static int convert(const struct cli_opts *c)
{
    struct trace_err e;
    FILE *out = strcmp(c->out, "-") == 0 ? stdout : fopen(c->out, "w");
    if (!out) {
        fprintf(stderr, "tidesim traces: %s: cannot create: %s\n", c->out, strerror(errno));
        return 1;
    }
    int rc;
    uint64_t n = 0, skipped = 0;
    if (is_jobs(c->fmt)) {
        struct job_source *s = open_jobs(c, &e);
        if (!s) {
            fprintf(stderr, "tidesim traces: %s\n", e.msg);
            if (out != stdout)
                fclose(out);
            return 1;
        }
        fputs("id,submit_s,duration_s,gpus,gpu_fraction,mig_profile,priority,queue,params_b,"
              "outcome\n",
              out);
        struct job_spec j;
        while ((rc = job_source_next(s, &j, &e)) == 0) {
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
            fprintf(stderr, "tidesim traces: %s\n", e.msg);
            if (out != stdout)
                fclose(out);
            return 1;
        }
        fputs("time_s,in_tokens,out_tokens\n", out);
        struct arrival a;
        while ((rc = arrival_source_next(s, &a, &e)) == 0) {
            put_time(out, a.t);
            fprintf(out, ",%u,%u\n", a.in_tokens, a.out_tokens);
            n++;
        }
        skipped = arrivals_skipped(s);
        arrival_source_destroy(s);
    }
    bool werr = ferror(out) != 0;
    if (out != stdout && fclose(out) != 0)
        werr = true;
    if (rc < 0) {
        fprintf(stderr, "tidesim traces: %s\n", e.msg);
        return 1;
    }
    if (werr) {
        fprintf(stderr, "tidesim traces: %s: write error\n", c->out);
        return 1;
    }
    fprintf(stderr, "tidesim traces: wrote %llu records to %s (%llu malformed rows skipped)\n",
            (unsigned long long)n, c->out, (unsigned long long)skipped);
    return 0;
}

int cli_traces(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    const char *cmd = argv[1];
    bool is_convert = strcmp(cmd, "convert") == 0;
    if (!is_convert && strcmp(cmd, "inspect") != 0)
        return usage();
    struct cli_opts c = {.seed = 1};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--format") == 0 && v) {
            c.fmt = fmt_parse(v);
            if (c.fmt == F_NONE) {
                fprintf(stderr, "tidesim traces: --format: unknown format '%s'\n", v);
                return usage();
            }
            i++;
        } else if (strcmp(a, "-o") == 0 && v) {
            c.out = v;
            i++;
        } else if (strcmp(a, "--on-bad-row") == 0 && v) {
            if (strcmp(v, "skip") == 0)
                c.skip = true;
            else if (strcmp(v, "fail") != 0) {
                fprintf(stderr, "tidesim traces: --on-bad-row: expected fail or skip, got '%s'\n",
                        v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--end") == 0 && v) {
            double sec;
            if (tfield_f64(v, &sec) < 0 || sec <= 0) {
                fprintf(stderr, "tidesim traces: --end: expected seconds > 0, got '%s'\n", v);
                return 2;
            }
            c.end = sim_time_from_sec(sec);
            i++;
        } else if (strcmp(a, "--seed") == 0 && v) {
            int64_t sd;
            if (tfield_i64(v, &sd) < 0 || sd < 0) {
                fprintf(stderr, "tidesim traces: --seed: expected a non-negative integer\n");
                return 2;
            }
            c.seed = (uint64_t)sd;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tidesim traces: unknown option '%s'\n", a);
            return usage();
        } else if (!c.in) {
            c.in = a;
        } else {
            return usage();
        }
    }
    if (!c.in || (is_convert && (!c.out || c.fmt == F_NONE)))
        return usage();
    if (c.fmt == F_NONE) {
        c.fmt = fmt_detect(c.in);
        if (c.fmt == F_NONE) {
            struct stat st;
            if (stat(c.in, &st) != 0) {
                fprintf(stderr, "tidesim traces: %s: cannot open: %s\n", c.in, strerror(errno));
                return 1;
            }
            fprintf(stderr, "tidesim traces: %s: unknown format (use --format)\n", c.in);
            return 2;
        }
    }
    if (is_convert)
        return convert(&c);
    for (size_t i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
        if (fmt_names[i].f == c.fmt) {
            printf("file: %s\nformat: %s\n", c.in, fmt_names[i].name);
            break;
        }
    return is_jobs(c.fmt) ? inspect_jobs(&c) : inspect_arrivals(&c);
}
