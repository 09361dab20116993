/*
 * test_report_html.c — `tidesim report --format html`: one self-contained
 * page (no script, style sheet, font or image fetched from anywhere; charts
 * inline as SVG) with every section, for one replicated run and for two runs
 * side by side; opened in headless Chromium, which must render it with no
 * console message (a control page with a script error proves the check sees
 * one). Without Chromium (scripts/deps.sh browser) the browser part is
 * skipped with a message saying so.
 */
#include "tests/analysistest.h"

#define SMALL "tests/data/scenarios/small.yaml"
#define TIDAL "tests/data/scenarios/small_tidal.yaml"

static const char *const sections[] = {"summary", "services", "training",  "gpu-time",
                                       "charts",  "scenario", "provenance"};

static int count(const char *s, const char *w)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, w)) != NULL; p += strlen(w))
        n++;
    return n;
}

static void check_page(const char *html, int charts)
{
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        char id[64];
        snprintf(id, sizeof(id), "<section id=\"%s\">", sections[i]);
        cr_expect(strstr(html, id) != NULL, "no section %s", sections[i]);
    }
    cr_expect_eq(count(html, "<figure><svg"), charts, "inline charts: %d, want %d",
                 count(html, "<figure><svg"), charts);
    /* Self-contained: nothing to fetch (SVG's xmlns names are not fetched). */
    cr_expect(strstr(html, "<script") == NULL, "a script");
    cr_expect(strstr(html, "<link") == NULL, "a linked resource");
    cr_expect(strstr(html, " src=") == NULL, "a src attribute");
    cr_expect(strstr(html, "url(") == NULL, "a CSS url()");
    cr_expect(strstr(html, "<img") == NULL, "an image outside the page");
    cr_expect(strstr(html, "<!DOCTYPE svg") == NULL, "an SVG prolog inside HTML");
    cr_expect(strstr(html, "</html>") != NULL, "truncated");
}

/* Chromium's path, or NULL. */
static const char *chromium(void)
{
    static const char *const c[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    for (size_t i = 0; i < 2; i++)
        if (access(c[i], X_OK) == 0)
            return c[i];
    return NULL;
}

/* Open page in headless Chromium: the DOM it built into dom, its log (console lines) into log. */
static int browse(const char *dir, const char *page, const char *dom, const char *log)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "(timeout 90 %s --headless --disable-gpu --no-sandbox --no-first-run "
             "--user-data-dir=%s/profile --enable-logging=stderr --v=0 --dump-dom "
             "'file://%s' >%s 2>%s)",
             chromium(), dir, page, dom, log);
    return atest_run(cmd, NULL);
}

/* Console messages Chromium logged ("CONSOLE" lines: errors, warnings, uncaught exceptions). */
static int console_lines(const char *log, char **text)
{
    if (atest_size(log) <= 0) {
        *text = calloc(1, 1);
        return 0;
    }
    *text = atest_slurp(log, NULL);
    return count(*text, ":CONSOLE");
}

Test(report_html, self_contained_page_renders_in_chromium, .timeout = 240)
{
    char dir[64], a[128], b[128], page[128], one[128], cmd[1024], *out = NULL;
    atest_tmpdir(dir, sizeof(dir));
    snprintf(a, sizeof(a), "%s/a.h5", dir);
    snprintf(b, sizeof(b), "%s/b.h5", dir);
    atest_sim(SMALL, a, "--replications 2");
    atest_sim(TIDAL, b, NULL);

    /* One replicated run: 8 charts (util, queue, jobs, busy, p99, cdf, daily, compare). */
    snprintf(one, sizeof(one), "%s/one.html", dir);
    snprintf(cmd, sizeof(cmd), "%s report %s --format html -o %s", atest_bin(), a, one);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    free(out);
    char *html = atest_slurp(one, NULL);
    check_page(html, 8);
    cr_expect(strstr(html, "2 replications: values are means ± 95 % Student-t intervals") != NULL);
    cr_expect(strstr(html, "name: small") != NULL, "the scenario text");
    free(html);

    /* Two runs side by side: 3 charts each + 5 of both. */
    snprintf(page, sizeof(page), "%s/two.html", dir);
    snprintf(cmd, sizeof(cmd), "%s report %s %s --format html -o %s", atest_bin(), a, b, page);
    cr_assert_eq(atest_run(cmd, &out), 0, "%s", out);
    free(out);
    html = atest_slurp(page, NULL);
    check_page(html, 11);
    cr_expect(strstr(html, "<th>dedicated</th><th>tidal</th>") != NULL, "runs side by side");
    cr_expect(strstr(html, "name: small_tidal") != NULL, "the second scenario");
    cr_expect(strstr(html, "chat_bert") != NULL);
    free(html);

    /* Usage: several files only as HTML; -o never overwrites an input. */
    snprintf(cmd, sizeof(cmd), "%s report %s %s", atest_bin(), a, b);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    snprintf(cmd, sizeof(cmd), "%s report %s --format html -o %s", atest_bin(), a, a);
    cr_expect_eq(atest_run(cmd, NULL), 2);
    cr_expect_gt(atest_size(a), 10000, "the input survived");

    if (!chromium()) {
        atest_rmdir(dir);
        cr_skip_test("chromium is not installed (scripts/deps.sh browser): the HTML report was "
                     "checked but not opened in a browser");
    }
    char dom[128], log[128], *text = NULL;
    snprintf(dom, sizeof(dom), "%s/dom.html", dir);
    snprintf(log, sizeof(log), "%s/chromium.log", dir);
    /* The check sees a console error: a control page with one. */
    char bad[128];
    snprintf(bad, sizeof(bad), "%s/bad.html", dir);
    FILE *f = fopen(bad, "w");
    cr_assert_not_null(f);
    fputs("<!DOCTYPE html><html><body><p>x</p><script>no_such_function();</script></body></html>",
          f);
    fclose(f);
    cr_assert_eq(browse(dir, bad, dom, log), 0);
    cr_expect_geq(console_lines(log, &text), 1, "the control page's error was not seen:\n%s", text);
    free(text);

    cr_assert_eq(browse(dir, page, dom, log), 0, "chromium failed");
    cr_expect_eq(console_lines(log, &text), 0, "console messages:\n%s", text);
    free(text);
    char *d = atest_slurp(dom, NULL);
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        char id[64];
        snprintf(id, sizeof(id), "id=\"%s\"", sections[i]);
        cr_expect(strstr(d, id) != NULL, "the rendered DOM lacks section %s", sections[i]);
    }
    cr_expect_geq(count(d, "<svg"), 11, "the rendered DOM holds %d SVGs", count(d, "<svg"));
    cr_expect(strstr(d, "Capacity report: policy comparison") != NULL);
    free(d);
    atest_rmdir(dir);
}
