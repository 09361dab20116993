/*
 * report.h — the report of a results file: headline metrics (with 95 %
 * intervals when replicated), per-service latency and SLO table, training
 * outcomes and the breakdown of GPU-time by state, as text, Markdown or JSON.
 *
 * Reads only the HDF5 file (never simulator memory), so a report can be made
 * of a file written last month; whatever is missing is printed as "-"
 * (JSON: null). Writes to the given stream.
 */
#ifndef TIDESIM_REPORT_H
#define TIDESIM_REPORT_H

#include <stddef.h>
#include <stdio.h>

struct results;
struct results_vet;

enum report_format { REPORT_TEXT, REPORT_MARKDOWN, REPORT_JSON };

/* "text", "markdown" (or "md"), "json" → *f. Returns 0 or -EINVAL. */
int report_parse_format(const char *s, enum report_format *f);

/* Print the report of an open results file. Returns 0 or -ENOMEM. */
int report_results(FILE *out, const struct results *r, enum report_format fmt);

/* Open path and print its report (vet: a child's verdict on it, sweepidx_is_index_vet, or
 * NULL). Returns 0, or a negative code with err filled. */
int report_write(FILE *out, const char *path, enum report_format fmt, const struct results_vet *vet,
                 char *err, size_t errlen);

#endif
