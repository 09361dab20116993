/* test_traces_arrivals.c — inference trace adapters against the real samples and bad fixtures. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traces/arrivals.h"
#include "traces/csvstream.h"

#define AZURE_CONV "traces/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"
#define SERVEGEN   "traces/data/servegen/language_m-small"

/* Drain a source: count, first/last time, token sums; returns the final code. */
struct drain {
    uint64_t n, in_sum, out_sum;
    sim_time first, last;
    bool sorted;
};

static int drain_all(struct arrival_source *s, struct drain *d, struct trace_err *e)
{
    struct arrival a;
    int rc;
    memset(d, 0, sizeof(*d));
    d->sorted = true;
    while ((rc = arrival_source_next(s, &a, e)) == 0) {
        if (d->n == 0)
            d->first = a.t;
        else if (a.t < d->last)
            d->sorted = false;
        d->last = a.t;
        d->in_sum += a.in_tokens;
        d->out_sum += a.out_tokens;
        d->n++;
    }
    return rc;
}

/*
 * Reference values computed independently with awk at test-writing time:
 *   awk -F, 'NR>1{n++; a+=$2; b+=$3; if(n==1) f=$1; l=$1} END{print n, a, b, f, l}' \
 *       traces/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv
 *   -> 19366 22361870 4088665 2023-11-16 18:15:46.6805900 2023-11-16 19:14:08.4025270
 * Default origin is local (UTC) midnight of 2023-11-16, so first = 18:15:46.680590 after midnight.
 */
Test(traces_arrivals, azure_conv_sample_counts_and_sums)
{
    struct trace_err e;
    struct arrival_source *s = arrivals_azure_create(AZURE_CONV, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct drain d;
    cr_assert_eq(drain_all(s, &d, &e), 1, "%s", e.msg);
    cr_assert_eq(d.n, 19366);
    cr_assert_eq(d.in_sum, 22361870);
    cr_assert_eq(d.out_sum, 4088665);
    cr_assert_eq(d.first, (sim_time)((18 * 3600 + 15 * 60 + 46) * SIM_SEC + 680590));
    cr_assert_eq(d.last, (sim_time)((19 * 3600 + 14 * 60 + 8) * SIM_SEC + 402527));
    cr_assert(d.sorted);
    cr_assert_eq(arrivals_rows(s), 19366);
    arrival_source_destroy(s);
}

Test(traces_arrivals, azure_origin_and_time_zone)
{
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    /* Stamps read as UTC-08:00; origin is 18:00 of that zone: the first request is 15:46.68 in. */
    o.tz_s = -8 * 3600;
    o.origin = "2023-11-16 18:00:00";
    struct arrival_source *s = arrivals_azure_create(AZURE_CONV, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct arrival a;
    cr_assert_eq(arrival_source_next(s, &a, &e), 0);
    cr_assert_eq(a.t, (sim_time)(946 * SIM_SEC + 680590));
    cr_assert_eq(a.in_tokens, 374);
    cr_assert_eq(a.out_tokens, 44);
    arrival_source_destroy(s);
    /* Stamps in UTC, origin with an explicit zone: 10:00-08:00 == 18:00Z. */
    o.tz_s = 0;
    o.origin = "2023-11-16T10:00:00-08:00";
    s = arrivals_azure_create(AZURE_CONV, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(arrival_source_next(s, &a, &e), 0);
    cr_assert_eq(a.t, (sim_time)(946 * SIM_SEC + 680590));
    arrival_source_destroy(s);
}

Test(traces_arrivals, scale_thin_superpose_offset_clip_loop)
{
    struct trace_err e;
    struct trace_time_opts o;
    struct drain d;
    trace_time_opts_init(&o);
    o.seed = 7;
    o.scale = 0.25;
    struct arrival_source *s = arrivals_azure_create(AZURE_CONV, &o, &e);
    cr_assert_eq(drain_all(s, &d, &e), 1);
    /* Binomial(19366, 0.25): mean 4841.5, sd 60.3; 5 sd. */
    cr_assert(fabs((double)d.n - 4841.5) < 5 * 60.3, "thinned n=%llu", (unsigned long long)d.n);
    arrival_source_destroy(s);

    o.scale = 2.5;
    s = arrivals_azure_create(AZURE_CONV, &o, &e);
    cr_assert_eq(drain_all(s, &d, &e), 1);
    /* 2 copies each + Bernoulli(0.5): mean 48415, sd sqrt(19366/4) = 69.6. */
    cr_assert(fabs((double)d.n - 48415.0) < 5 * 69.6, "superposed n=%llu", (unsigned long long)d.n);
    cr_assert(d.sorted);
    arrival_source_destroy(s);

    /* Loop a 1-hour trace daily for 3 days, shifted by 1 h, clipped to days 1..2. */
    o.scale = 1.0;
    o.loop = true;
    o.offset = SIM_HOUR;
    o.clip_start = SIM_DAY;
    o.clip_end = 3 * SIM_DAY;
    s = arrivals_azure_create(AZURE_CONV, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(drain_all(s, &d, &e), 1, "%s", e.msg);
    cr_assert_eq(d.n, 2 * 19366);
    cr_assert_eq(d.first,
                 SIM_DAY + SIM_HOUR + (sim_time)((18 * 3600 + 15 * 60 + 46) * SIM_SEC + 680590));
    cr_assert(d.sorted);
    arrival_source_destroy(s);

    /* Looping without an end is refused at creation. */
    o.clip_end = 0;
    s = arrivals_azure_create(AZURE_CONV, &o, &e);
    cr_assert_null(s);
    cr_assert_str_eq(e.msg, AZURE_CONV ": loop needs an end time (clip_end)");
}

/*
 * Reference: awk -F, '{s[$1]+=$2} END{for(t in s){...}}' over the 43 files gives a mean of
 * 1174.4 req/s over 2016 windows, hourly means lowest at 05:00 (775.2) and highest at 20:00
 * (1709.4) with timestamps taken as seconds since local midnight (no offset needed).
 */
Test(traces_arrivals, servegen_m_small_rates_and_diurnal_shape)
{
    struct trace_err e;
    double *r;
    size_t nwin, nfiles;
    cr_assert_eq(servegen_dir_rates(SERVEGEN, &r, &nwin, &nfiles, &e), 0, "%s", e.msg);
    cr_assert_eq(nfiles, 43);
    cr_assert_eq(nwin, 2016); /* 14 days x 144 windows */
    double tot = 0, hour[24] = {0};
    for (size_t i = 0; i < nwin; i++) {
        tot += r[i];
        hour[(i % 144) / 6] += r[i] / (6.0 * 14.0);
    }
    cr_assert(fabs(tot / (double)nwin - 1174.4) < 1.0, "mean %f", tot / (double)nwin);
    size_t lo = 0, hi = 0;
    for (size_t h = 0; h < 24; h++) {
        if (hour[h] < hour[lo])
            lo = h;
        if (hour[h] > hour[hi])
            hi = h;
    }
    cr_assert_eq(lo, 5);
    cr_assert_eq(hi, 20);
    cr_assert(fabs(hour[5] - 775.2) < 0.5 && fabs(hour[20] - 1709.4) < 0.5);
    free(r);
}

Test(traces_arrivals, servegen_generated_counts_match_window_rates)
{
    struct trace_err e;
    double *r;
    size_t nwin, nfiles;
    cr_assert_eq(servegen_dir_rates(SERVEGEN, &r, &nwin, &nfiles, &e), 0, "%s", e.msg);
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.seed = 3;
    o.clip_start = 19 * SIM_HOUR; /* windows 114..117 of day 0 */
    o.clip_end = 19 * SIM_HOUR + 40 * SIM_MIN;
    struct arrival_source *s = arrivals_servegen_dir_create(SERVEGEN, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    uint64_t cnt[4] = {0};
    struct arrival a;
    int rc;
    while ((rc = arrival_source_next(s, &a, &e)) == 0) {
        cr_assert(a.t >= o.clip_start && a.t < o.clip_end);
        cnt[(a.t - o.clip_start) / (600 * SIM_SEC)]++;
    }
    cr_assert_eq(rc, 1, "%s", e.msg);
    for (size_t w = 0; w < 4; w++) {
        double expect = r[114 + w] * 600.0;
        /* Poisson sd sqrt(expect); gaps with CV > 1 add variance, hence 6 sd. */
        cr_assert(fabs((double)cnt[w] - expect) < 6 * sqrt(expect), "window %zu: %llu vs %f", w,
                  (unsigned long long)cnt[w], expect);
    }
    arrival_source_destroy(s);
    free(r);
}

Test(traces_arrivals, servegen_single_client_all_windows)
{
    /* chunk-14: every window's generated count within Poisson-ish error of rate x 600. */
    const char *path = SERVEGEN "/chunk-14-trace.csv";
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.seed = 11;
    o.clip_end = SIM_DAY;
    struct arrival_source *s = arrivals_servegen_create(path, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    uint64_t cnt[144] = {0};
    struct arrival a;
    while (arrival_source_next(s, &a, &e) == 0)
        cnt[a.t / (600 * SIM_SEC)]++;
    arrival_source_destroy(s);
    struct csvstream_opts co = {.columns = "timestamp,rate,cv,pattern,shape,scale"};
    struct csvstream *cs = csvstream_open(path, &co, &e);
    cr_assert_not_null(cs);
    size_t outside = 0;
    for (size_t w = 0; w < 144; w++) {
        cr_assert_eq(csvstream_next(cs, &e), 0);
        double rate = strtod(csvstream_field(cs, 1), NULL);
        double cv = strtod(csvstream_field(cs, 2), NULL);
        double expect = rate * 600.0;
        if (csvstream_field(cs, 3)[0] == '\0') {
            cr_assert_eq(cnt[w], 0);
            continue;
        }
        double sd = sqrt(expect * (cv > 1 ? cv * cv : 1.0));
        if (fabs((double)cnt[w] - expect) > 3 * sd + 1)
            outside++;
    }
    csvstream_destroy(cs);
    cr_assert(outside <= 2, "%zu of 144 windows outside 3 sd", outside);
}

Test(traces_arrivals, counts_replayed_exactly)
{
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.seed = 5;
    struct arrival_counts_map m = {"minute", TFIELD_SEC, "requests", 60 * SIM_SEC};
    struct arrival_source *s = arrivals_counts_create("tests/data/counts.csv", &m, &o, &e);
    cr_assert_not_null(s, "%s", e.msg);
    uint64_t per_min[3] = {0};
    struct drain d = {0};
    struct arrival a;
    sim_time last = -1;
    while (arrival_source_next(s, &a, &e) == 0) {
        cr_assert(a.t >= last);
        last = a.t;
        cr_assert(a.t >= 0 && a.t < 180 * SIM_SEC);
        per_min[a.t / (60 * SIM_SEC)]++;
        d.n++;
    }
    cr_assert_eq(per_min[0], 120);
    cr_assert_eq(per_min[1], 0);
    cr_assert_eq(per_min[2], 30);
    arrival_source_destroy(s);
}

Test(traces_arrivals, merge_orders_by_time)
{
    struct trace_err e;
    struct arrival_source *srcs[2];
    srcs[0] = arrivals_azure_create(AZURE_CONV, NULL, &e);
    srcs[1] = arrivals_azure_create("traces/data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
                                    NULL, &e);
    cr_assert(srcs[0] && srcs[1]);
    struct arrival_source *m = arrivals_merge_create(srcs, 2);
    struct drain d;
    cr_assert_eq(drain_all(m, &d, &e), 1);
    /* 19366 + 8819 (awk NR-1 of each file). */
    cr_assert_eq(d.n, 19366 + 8819);
    cr_assert(d.sorted);
    cr_assert_eq(d.in_sum, 22361870ULL + 18059974ULL);
    arrival_source_destroy(m);
}

/* ---- bad input: exact messages and line numbers ---- */

static void expect_next_error(struct arrival_source *s, const char *msg)
{
    struct drain d;
    struct trace_err e;
    int rc = drain_all(s, &d, &e);
    cr_assert_lt(rc, 0);
    cr_assert_str_eq(e.msg, msg);
}

Test(traces_arrivals, bad_rows_named_with_line)
{
    struct trace_err e;
    struct arrival_source *s = arrivals_azure_create("tests/data/azure_bad_time.csv", NULL, &e);
    cr_assert_not_null(s);
    expect_next_error(s, "tests/data/azure_bad_time.csv:3: column 'TIMESTAMP': expected a "
                         "wall-clock time YYYY-MM-DD HH:MM:SS[.fffffff], got '2023-11-16 "
                         "18:15:4x.0000000'");
    arrival_source_destroy(s);

    s = arrivals_azure_create("tests/data/azure_backwards.csv", NULL, &e);
    expect_next_error(s, "tests/data/azure_backwards.csv:4: column 'TIMESTAMP': timestamp goes "
                         "backwards ('2023-11-16 18:15:49.9999999' after '2023-11-16 "
                         "18:15:50.0000000' at line 3)");
    arrival_source_destroy(s);

    /* CRLF line ends and a blank line: the bad row is on physical line 4. */
    s = arrivals_azure_create("tests/data/azure_bad_tokens.csv", NULL, &e);
    expect_next_error(s, "tests/data/azure_bad_tokens.csv:4: column 'ContextTokens': expected a "
                         "non-negative integer token count, got '-3'");
    arrival_source_destroy(s);

    /* Quoted newlines count as lines: the bad row starts on line 5. */
    struct arrival_csv_map m = {"time_s", TFIELD_SEC, "in_tokens", "out_tokens"};
    s = arrivals_csv_create("tests/data/generic_quoted.csv", &m, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    expect_next_error(s, "tests/data/generic_quoted.csv:6: column 'in_tokens': expected a "
                         "non-negative integer token count, got 'x'");
    arrival_source_destroy(s);

    s = arrivals_csv_create("tests/data/unterminated.csv", &m, NULL, &e);
    expect_next_error(s, "tests/data/unterminated.csv:3: unterminated quoted field (a '\"' "
                         "opened here is never closed)");
    arrival_source_destroy(s);

    s = arrivals_servegen_create("tests/data/servegen_bad_pattern.csv", NULL, &e);
    expect_next_error(s, "tests/data/servegen_bad_pattern.csv:3: column 'pattern': expected "
                         "'Gamma', 'Weibull' or empty, got 'Poisson'");
    arrival_source_destroy(s);

    s = arrivals_servegen_create("tests/data/servegen_overlap.csv", NULL, &e);
    expect_next_error(s, "tests/data/servegen_overlap.csv:2: column 'timestamp': window at 300 s "
                         "overlaps the previous one (windows are 600 s)");
    arrival_source_destroy(s);

    struct arrival_counts_map cm = {"minute", TFIELD_SEC, "requests", 0};
    s = arrivals_counts_create("tests/data/counts_bad.csv", &cm, NULL, &e);
    expect_next_error(s, "tests/data/counts_bad.csv:3: column 'requests': expected a "
                         "non-negative integer count, got '-4'");
    arrival_source_destroy(s);
}

Test(traces_arrivals, bad_files_named)
{
    struct trace_err e;
    cr_assert_null(arrivals_azure_create("tests/data/azure_missing_col.csv", NULL, &e));
    cr_assert_str_eq(e.msg, "tests/data/azure_missing_col.csv:1: missing column 'ContextTokens' "
                            "(header: TIMESTAMP,Context,GeneratedTokens)");
    cr_assert_null(arrivals_azure_create("tests/data/empty.csv", NULL, &e));
    cr_assert_str_eq(e.msg, "tests/data/empty.csv: empty file");
    cr_assert_null(arrivals_azure_create("tests/data/no-such-file.csv", NULL, &e));
    cr_assert_str_eq(e.msg, "tests/data/no-such-file.csv: cannot open: No such file or directory");
    cr_assert_null(arrivals_servegen_dir_create("tests/data/no-such-dir", NULL, &e));
    cr_assert_str_eq(e.msg,
                     "tests/data/no-such-dir: cannot open folder: No such file or directory");
}

Test(traces_arrivals, skip_bad_rows_counts_them)
{
    struct trace_err e;
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.skip_bad = true;
    struct arrival_source *s = arrivals_azure_create("tests/data/azure_backwards.csv", &o, &e);
    struct drain d;
    cr_assert_eq(drain_all(s, &d, &e), 1);
    cr_assert_eq(d.n, 2);
    cr_assert_eq(arrivals_skipped(s), 1);
    cr_assert(strstr(arrivals_first_skip(s), "azure_backwards.csv:4:") != NULL);
    arrival_source_destroy(s);
}

static void write_tmp(char *path, const void *data, size_t len)
{
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
}

Test(traces_arrivals, huge_field_is_an_error)
{
    char path[] = "/tmp/tidesim-huge-XXXXXX";
    size_t n = 200 * 1024;
    char *buf = malloc(n);
    memcpy(buf, "TIMESTAMP,ContextTokens,GeneratedTokens\n", 40);
    memset(buf + 40, 'x', n - 40);
    write_tmp(path, buf, n);
    free(buf);
    struct trace_err e;
    struct arrival_source *s = arrivals_azure_create(path, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    char want[128];
    snprintf(want, sizeof(want), "%s:2: field 1 is longer than 65536 bytes", path);
    expect_next_error(s, want);
    arrival_source_destroy(s);
    unlink(path);
}

Test(traces_arrivals, random_bytes_never_crash)
{
    /* A fixed LCG (Knuth MMIX constants) makes reproducible garbage. */
    uint64_t x = 12345;
    for (int round = 0; round < 40; round++) {
        char path[] = "/tmp/tidesim-fuzz-XXXXXX";
        size_t n = 1 + (size_t)(round * 997) % 20000;
        unsigned char *buf = malloc(n);
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned char c = (unsigned char)(x >> 56);
            /* Every other round: mostly CSV-ish bytes, to get past the header. */
            if (round % 2 && c < 200)
                c = (unsigned char)"0123456789,.\n\"-: ET"[c % 19];
            buf[i] = c;
        }
        if (round % 4 == 1 && n > 40)
            memcpy(buf, "TIMESTAMP,ContextTokens,GeneratedTokens\n", 40);
        write_tmp(path, buf, n);
        free(buf);
        struct trace_err e;
        struct arrival_source *srcs[2] = {arrivals_azure_create(path, NULL, &e),
                                          arrivals_servegen_create(path, NULL, &e)};
        for (int k = 0; k < 2; k++) {
            if (!srcs[k]) {
                cr_assert(strlen(e.msg) > 0);
                continue;
            }
            struct drain d;
            int rc = drain_all(srcs[k], &d, &e);
            cr_assert(rc == 1 || (rc < 0 && strncmp(e.msg, path, strlen(path)) == 0), "%s", e.msg);
            arrival_source_destroy(srcs[k]);
        }
        unlink(path);
    }
}
