/*
 * bench_reader.c — trace reader throughput.
 *
 * Writes an Azure-format CSV (TIMESTAMP with 7 fractional digits, two token columns) of about
 * `MB` megabytes (argv[1], default 1000) to /tmp, reads it back through the Azure adapter
 * (csvstream + field parsing + monotonic check) and prints
 * "trace reader: X MB/s, Y rows/s (N rows, S bytes)". Goal: >= 100 MB/s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "traces/arrivals.h"
#include "traces/tfield.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double mb = 1000;
    if (argc > 1 && (tfield_f64(argv[1], &mb) < 0 || mb <= 0)) {
        fprintf(stderr, "usage: bench_reader [MB]\n");
        return 2;
    }
    char path[] = "/tmp/tidesim-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    FILE *f = fdopen(fd, "w");
    if (!f)
        return 1;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", f);
    uint64_t target = (uint64_t)(mb * 1e6), written = 40, x = 88172645463325252ULL;
    int64_t t100ns = 0;
    while (written < target) {
        x ^= x << 13; /* xorshift64 (Marsaglia 2003) */
        x ^= x >> 7;
        x ^= x << 17;
        t100ns += (int64_t)(x % 20000);
        int64_t s = t100ns / 10000000, frac = t100ns % 10000000;
        int64_t days = s / 86400, sod = s % 86400;
        int64_t y;
        unsigned m, d;
        tfield_civil_from_days(19677 + days, &y, &m, &d);
        int n = fprintf(f, "%04lld-%02u-%02u %02lld:%02lld:%02lld.%07lld,%llu,%llu\n", (long long)y,
                        m, d, (long long)(sod / 3600), (long long)(sod / 60 % 60),
                        (long long)(sod % 60), (long long)frac,
                        (unsigned long long)(x >> 40) % 8000, (unsigned long long)(x >> 20) % 900);
        if (n < 0)
            return 1;
        written += (uint64_t)n;
    }
    fclose(f);

    struct trace_err e;
    double t0 = now();
    struct arrival_source *src = arrivals_azure_create(path, NULL, &e);
    if (!src) {
        fprintf(stderr, "%s\n", e.msg);
        unlink(path);
        return 1;
    }
    struct arrival a;
    uint64_t rows = 0, sum = 0;
    int rc;
    while ((rc = arrival_source_next(src, &a, &e)) == 0) {
        rows++;
        sum += a.in_tokens;
    }
    double dt = now() - t0;
    arrival_source_destroy(src);
    unlink(path);
    if (rc < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    printf("trace reader: %.1f MB/s, %.0f rows/s (%llu rows, %llu bytes) [token sum %llu]\n",
           (double)written / 1e6 / dt, (double)rows / dt, (unsigned long long)rows,
           (unsigned long long)written, (unsigned long long)sum);
    return 0;
}
