/*
 * test_analysis_plot.c — every chart renders, through gnuplot, to a valid and
 * non-trivial PNG (signature, size) and SVG (XML with the expected title);
 * a missing gnuplot gives a clear error naming the package.
 */
#include "tests/analysistest.h"

static const char *const charts[] = {"util", "p99", "cdf", "queue", "jobs", "compare"};
static const char *const titles[] = {"GPU utilisation by time of day",  "p99 latency over time",
                                     "Request latency CDF per service", "Training queue over time",
                                     "Training job timeline",           "Policy comparison"};

static void read_head(const char *p, unsigned char *buf, size_t n)
{
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f, "%s", p);
    cr_assert_eq(fread(buf, 1, n, f), n, "%s", p);
    fclose(f);
}

Test(analysis_plot, png_and_svg_of_every_chart)
{
    char dir[64], f[128], cmd[1024], img[256], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", f, "--replications 2");
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    for (int svg = 0; svg < 2; svg++) {
        snprintf(cmd, sizeof(cmd), "%s plot %s -o %s/out --format %s", atest_bin(), f, dir,
                 svg ? "svg" : "png");
        cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
        cr_expect(strstr(out, "6 charts in") != NULL, "%s", out);
        free(out);
        for (size_t i = 0; i < 6; i++) {
            snprintf(img, sizeof(img), "%s/out/%s.%s", dir, charts[i], svg ? "svg" : "png");
            long size = atest_size(img);
            cr_expect_gt(size, 8000, "%s: %ld bytes", img, size);
            if (size <= 0)
                continue;
            if (!svg) {
                unsigned char head[8];
                read_head(img, head, 8);
                cr_expect_arr_eq(head, png_sig, 8, "%s is not a PNG", img);
            } else {
                FILE *fp = fopen(img, "r");
                char *text = calloc((size_t)size + 1, 1);
                cr_assert_eq(fread(text, 1, (size_t)size, fp), (size_t)size);
                fclose(fp);
                cr_expect(strstr(text, "<svg") != NULL, "%s", img);
                cr_expect(strstr(text, "</svg>") != NULL, "%s is truncated", img);
                cr_expect(strstr(text, titles[i]) != NULL, "%s lacks its title '%s'", img,
                          titles[i]);
                free(text);
            }
        }
    }
    /* The exported data are kept for restyling. */
    snprintf(img, sizeof(img), "%s/out/data/util.dat", dir);
    cr_expect(atest_exists(img));
    atest_rmdir(dir);
}

Test(analysis_plot, missing_gnuplot_names_the_package)
{
    char dir[64], f[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(f, sizeof(f), "%s/s.h5", dir);
    atest_sim("tests/data/scenarios/small.yaml", f, NULL);
    snprintf(cmd, sizeof(cmd), "TIDESIM_GNUPLOT=/nonexistent/gnuplot %s plot %s -o %s/out",
             atest_bin(), f, dir);
    cr_expect_eq(atest_run(cmd, &out), 1, "%s", out);
    cr_expect(strstr(out, "gnuplot not found") != NULL && strstr(out, "gnuplot-nox") != NULL, "%s",
              out);
    free(out);
    snprintf(cmd, sizeof(cmd), "%s plot %s", atest_bin(), f);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    atest_rmdir(dir);
}
