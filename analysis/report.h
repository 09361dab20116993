/*
 * report.h — the human-readable report of a results file.
 *
 * Reads only the HDF5 file (never simulator memory), so a report can be made
 * of a file written last month. Writes to the given stream.
 */
#ifndef TIDESIM_REPORT_H
#define TIDESIM_REPORT_H

#include <stdio.h>

/* Returns 0, or a negative code with err filled (cannot open / not a tidesim file). */
int report_write(FILE *out, const char *path, char *err, size_t errlen);

#endif
