/* test_tokens.c — token-length distributions: named fits against their traces, ServeGen
 * dataset.json parsing and replay, Azure token columns. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/core/rng.h"
#include "traces/arrivals.h"
#include "traces/tokens.h"

#define AZURE_CONV "traces/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"
#define SERVEGEN   "traces/data/servegen/language_m-small"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The trace's own columns, read here with sscanf (independent of the tidesim reader). */
static size_t read_conv(uint32_t **in, uint32_t **out)
{
    FILE *f = fopen(AZURE_CONV, "r");
    cr_assert_not_null(f);
    char line[256];
    size_t n = 0, cap = 32768;
    *in = malloc(cap * sizeof(**in));
    *out = malloc(cap * sizeof(**out));
    cr_assert(fgets(line, sizeof(line), f)); /* header */
    while (fgets(line, sizeof(line), f)) {
        char *c = strchr(line, ',');
        cr_assert_not_null(c);
        unsigned a, b;
        cr_assert_eq(sscanf(c + 1, "%u,%u", &a, &b), 2);
        cr_assert_lt(n, cap);
        (*in)[n] = a;
        (*out)[n] = b;
        n++;
    }
    fclose(f);
    return n;
}

/* 400,000 draws of azure-conv against the trace: means within 1 %, p20, medians and p90 within
 * 2 %. */
Test(tokens, azure_conv_fit_matches_the_trace)
{
    uint32_t *tin, *tout;
    size_t n = read_conv(&tin, &tout);
    cr_assert_eq(n, 19366);
    double min = 0, mout = 0;
    for (size_t i = 0; i < n; i++) {
        min += tin[i];
        mout += tout[i];
    }
    min /= (double)n;
    mout /= (double)n;
    qsort(tin, n, sizeof(*tin), cmp_u32);
    qsort(tout, n, sizeof(*tout), cmp_u32);

    const struct tok_named *nd = tok_named_find("Azure-Conv");
    cr_assert_not_null(nd);
    struct tok_dist din = {.kind = TOK_EMPIRICAL, .q = nd->in};
    struct tok_dist dout = {.kind = TOK_EMPIRICAL, .q = nd->out};
    struct rng r;
    cr_assert_eq(rng_init(&r, 7, rng_stream_id("test/tokens")), 0);
    enum { N = 400000 };
    uint32_t *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b));
    double sa = 0, sb = 0;
    for (size_t i = 0; i < N; i++) {
        a[i] = tok_draw(&din, &r);
        b[i] = tok_draw(&dout, &r);
        sa += a[i];
        sb += b[i];
        cr_assert_geq(a[i], 1);
        cr_assert_leq(a[i], 14050);
    }
    qsort(a, N, sizeof(*a), cmp_u32);
    qsort(b, N, sizeof(*b), cmp_u32);
    cr_expect_float_eq(sa / N, min, 0.01 * min, "prompt mean %g vs trace %g", sa / N, min);
    cr_expect_float_eq(sb / N, mout, 0.01 * mout, "output mean %g vs trace %g", sb / N, mout);
    cr_expect_float_eq(tok_mean(&din), min, 0.01 * min);
    const size_t at[] = {2, 5, 9}; /* tenths: p20, median, p90 */
    for (size_t k = 0; k < 3; k++) {
        double da = a[N * at[k] / 10], ta = tin[n * at[k] / 10];
        double db = b[N * at[k] / 10], tb = tout[n * at[k] / 10];
        cr_expect_float_eq(da, ta, 0.02 * ta, "prompt p%zu0 %g vs trace %g", at[k], da, ta);
        cr_expect_float_eq(db, tb, 0.02 * tb, "output p%zu0 %g vs trace %g", at[k], db, tb);
    }
    cr_expect_eq(tok_max(&din), 14050);
    free(a);
    free(b);
    free(tin);
    free(tout);
    rng_release(&r);
}

Test(tokens, parametric_and_clamped)
{
    struct rng r;
    cr_assert_eq(rng_init(&r, 1, 2), 0);
    struct tok_dist fx = {.kind = TOK_FIXED, .fixed = 128};
    cr_expect_eq(tok_draw(&fx, &r), 128);
    struct tok_dist cl = {.kind = TOK_FIXED, .fixed = 5000, .max = 4096};
    cr_expect_eq(tok_draw(&cl, &r), 4096);
    /* Lognormal median 200, sigma 0.5: the sample median within 2 %, mean exp(mu + 0.125). */
    struct tok_dist ln = {.kind = TOK_LOGNORMAL, .mu = log(200), .sigma = 0.5};
    enum { N = 200000 };
    uint32_t *v = malloc(N * sizeof(*v));
    double s = 0;
    for (size_t i = 0; i < N; i++) {
        v[i] = tok_draw(&ln, &r);
        s += v[i];
    }
    qsort(v, N, sizeof(*v), cmp_u32);
    cr_expect_float_eq(v[N / 2], 200, 4);
    cr_expect_float_eq(s / N, 200 * exp(0.125), 0.01 * 200 * exp(0.125));
    free(v);
    rng_release(&r);
    char names[128];
    tok_named_list(names, sizeof(names));
    cr_expect_str_eq(names, "azure-conv, azure-code, servegen-m-small");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* A two-window dataset by hand: window 0 gives 10 or 30 input tokens at 1/4 and 3/4, output 5;
 * window 21600 has no data (draws fall back to window 0); window 43200 gives 7 and 9. */
Test(tokens, servegen_dataset_by_hand)
{
    char dir[] = "/tmp/tidesim-tok-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/chunk-1-dataset.json", dir);
    write_text(path, "{\n  \"0\": {\"input_tokens\": \"{10: 0.25, 30: 0.75}\",\n"
                     "         \"output_tokens\": \"{5: 1.0}\"},\n"
                     "  \"21600\": {\"input_tokens\": \"{}\", \"output_tokens\": \"{}\"},\n"
                     "  \"43200\": {\"input_tokens\": \"{7: 2}\", \"output_tokens\": \"{9: 2}\"}\n"
                     "}\n");
    struct trace_err e = {{0}};
    struct tok_servegen *t = tok_servegen_load(path, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_expect_eq(tok_servegen_windows(t), 2);
    struct rng r;
    cr_assert_eq(rng_init(&r, 3, 4), 0);
    uint32_t in, out, ten = 0;
    for (int i = 0; i < 40000; i++) {
        cr_assert(tok_servegen_draw(t, 30000.0, &r, &in, &out)); /* window 21600: empty -> 0 */
        cr_assert(in == 10 || in == 30);
        cr_assert_eq(out, 5);
        ten += in == 10;
    }
    /* 10 000 expected, sd 87: within 5 sd. */
    cr_expect(abs((int)ten - 10000) < 435, "%u of 40000 draws were 10", ten);
    cr_assert(tok_servegen_draw(t, 50000.0, &r, &in, &out));
    cr_expect_eq(in, 7);
    cr_expect_eq(out, 9);
    tok_servegen_free(t);
    rng_release(&r);

    /* Malformed: the place is named. */
    write_text(path,
               "{\n  \"0\": {\"input_tokens\": \"{10: x}\", \"output_tokens\": \"{5: 1}\"}\n}\n");
    cr_expect_null(tok_servegen_load(path, &e));
    cr_expect(strstr(e.msg, "chunk-1-dataset.json:2:") && strstr(e.msg, "expected a probability"),
              "%s", e.msg);
    write_text(path, "{\"0\": {\"input_tokens\": \"{10: 1}\"}}");
    cr_expect_null(tok_servegen_load(path, &e));
    cr_expect(strstr(e.msg, "needs both"), "%s", e.msg);
    write_text(path,
               "{\"0\": {\"input_tokens\": \"{20: 1, 10: 1}\", \"output_tokens\": \"{1: 1}\"}}");
    cr_expect_null(tok_servegen_load(path, &e));
    cr_expect(strstr(e.msg, "must increase"), "%s", e.msg);
    unlink(path);
    rmdir(dir);
}

/*
 * The shipped m-small folder with tokens on: the clients with a dataset.json give lengths (their
 * PMFs' support), the others 0; the arrival times are those drawn without tokens.
 */
Test(tokens, servegen_replay_keeps_times)
{
    struct trace_time_opts o;
    trace_time_opts_init(&o);
    o.clip_end = 3600 * SIM_SEC;
    o.seed = 5;
    o.stream_id = 11;
    struct trace_err e = {{0}};
    struct arrival_source *plain = arrivals_servegen_dir_create(SERVEGEN, &o, &e);
    cr_assert_not_null(plain, "%s", e.msg);
    o.tokens = true;
    struct arrival_source *tok = arrivals_servegen_dir_create(SERVEGEN, &o, &e);
    cr_assert_not_null(tok, "%s", e.msg);
    struct arrival a, b;
    uint64_t n = 0, with = 0;
    int rc;
    while ((rc = arrival_source_next(plain, &a, &e)) == 0) {
        cr_assert_eq(arrival_source_next(tok, &b, &e), 0);
        cr_assert_eq(a.t, b.t);
        cr_assert_eq(a.in_tokens, 0);
        cr_assert_eq(b.in_tokens == 0, b.out_tokens == 0);
        with += b.in_tokens > 0;
        n++;
    }
    cr_assert_eq(rc, 1);
    cr_expect_eq(arrival_source_next(tok, &b, &e), 1);
    /* Clients 14, 17 and 27 carry 8.8 + 10.7 + 5.7 % of the volume (SOURCE.md): ~25 %. */
    double share = (double)with / (double)n;
    cr_expect(share > 0.15 && share < 0.35, "%llu of %llu arrivals have lengths",
              (unsigned long long)with, (unsigned long long)n);
    arrival_source_destroy(plain);
    arrival_source_destroy(tok);
}

/* Azure's token columns reach the arrivals (the first rows of the conv file). */
Test(tokens, azure_columns_replayed)
{
    struct trace_err e = {{0}};
    struct arrival_source *s = arrivals_azure_create(AZURE_CONV, NULL, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct arrival a;
    cr_assert_eq(arrival_source_next(s, &a, &e), 0);
    cr_expect_eq(a.in_tokens, 374);
    cr_expect_eq(a.out_tokens, 44);
    cr_assert_eq(arrival_source_next(s, &a, &e), 0);
    cr_expect_eq(a.in_tokens, 396);
    cr_expect_eq(a.out_tokens, 109);
    arrival_source_destroy(s);
}
