/*
 * output_schema.h — the unit and human label of every figure the results
 * writer puts in /summary and /services/<name> (schema version 2,
 * docs/results.md "Units and labels").
 *
 * The writer stores them beside each attribute as string attributes
 * "<key>.unit" and "<key>.label", so the analysis tools print what the file
 * says, never a guess from a key's suffix. Units: "1" a fraction 0..1
 * (shown as %), "ms", "s", "GPU-h", "kWh", "W", or a count noun
 * ("requests", "jobs", "events", "GPUs", "faults", "tenants", "rows",
 * "batches", "services").
 */
#ifndef TIDESIM_OUTPUT_SCHEMA_H
#define TIDESIM_OUTPUT_SCHEMA_H

struct output_field {
    const char *key, *unit, *label;
};

/*
 * The unit and label of /summary attribute key (also the gpu_hours_<state>
 * family), of a service attribute (service = 1) or of a node pool's
 * (/pools/<name>, service = 2). NULL when unknown.
 */
const struct output_field *output_field_find(const char *key, int service);

#endif
