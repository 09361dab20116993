/*
 * report_html.h — the report of one or several results files as one
 * self-contained HTML file: headline metrics side by side (mean ± 95 %
 * interval for replicated files), each run's services, training outcomes and
 * GPU-time by state, the charts of `tidesim plot` inlined as SVG, each run's
 * scenario text and its provenance (version, commit, seeds, host, wall time).
 * Nothing is fetched: no script, font, style sheet or image outside the file,
 * so it reads the same offline and attached to a mail.
 *
 * Every section has an id (summary, services, training, gpu-time, charts,
 * scenario, provenance) so links and tests can find it. Text from the files
 * is HTML-escaped.
 */
#ifndef TIDESIM_REPORT_HTML_H
#define TIDESIM_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

struct report_html_opts {
    const char *gnuplot; /* gnuplot executable, NULL or missing: no charts (the section says so) */
    const char *scripts; /* folder of the .gp scripts (plot.h) */
    const char *tmpdir;  /* where the charts are drawn before they are inlined (NULL: /tmp) */
};

/* The section ids, in page order (NULL-terminated). */
extern const char *const report_html_sections[];

/*
 * Write the report of paths[0..n) to out. Returns 0, or a negative code with
 * err filled (an unreadable file: -ENOENT/-EIO/-EINVAL as results_open; -ENOMEM).
 * A chart that cannot be drawn is reported in the page, not as an error.
 */
int report_html(FILE *out, const char *const *paths, size_t n, const struct report_html_opts *o,
                char *err, size_t errlen);

#endif
