/*
 * escape.h — text written into JSON, XML and HTML output: the one escaping
 * every writer of analysis/ and the CLI uses.
 */
#ifndef TIDESIM_ESCAPE_H
#define TIDESIM_ESCAPE_H

#include <stdio.h>

/* A JSON string: " and \ escaped, control characters as \u00XX; NULL as null. */
void esc_json_str(FILE *out, const char *s);

/* A JSON number: %.17g (round-trips a double); NaN and infinities as null. */
void esc_json_num(FILE *out, double v);

/*
 * XML or HTML text or attribute value: & < > " ' as entities (' as &#39;, valid
 * in both), control characters not allowed in XML 1.0 as '?'; NULL as nothing.
 */
void esc_xml(FILE *out, const char *s);

#endif
