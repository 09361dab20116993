/*
 * override.h — `--set key.path=value`: change a parsed scenario's YAML tree
 * (sim/conf.h) before it is validated, so that an override goes through the
 * very checks, and gets the very messages, that the same value in the file
 * would.
 *
 * A path is keys separated by '.', from the top of the document:
 *
 *   cluster.nodes=8                      a key of a mapping
 *   services.0.replicas=2                a list item by its index (from 0) ...
 *   services.chat.slo.p99_ms=300         ... or by its 'name'
 *   training.synthetic.gpus={1: 0.5, 8: 0.5}
 *
 * The value is read as YAML (a plain or quoted scalar, or a flow list or
 * mapping: [1, 2], {a: 1}); an empty value is the empty scalar. It replaces
 * the node at the path, or is added when the last key is absent; absent
 * mappings on the way are created. Overrides apply in order (a later one wins).
 *
 * Grafted nodes carry positions that conf_errf() reports as "--set PATH=VALUE:"
 * in place of "file:line:col:"; the rest of a message is the file's. The
 * document's text (kept for the results file's provenance) gets one comment
 * line per override appended: "# --set PATH=VALUE".
 */
#ifndef TIDESIM_OVERRIDE_H
#define TIDESIM_OVERRIDE_H

#include <stddef.h>

#include "sim/conf.h"

/* Longest "key.path" accepted (bytes). */
#define OVERRIDE_PATH_MAX 512

/*
 * Checks the form of one override ("a.b=value": a non-empty path of non-empty
 * keys before the first '='). Returns 0, or -EINVAL with a message
 * ("--set 'x': expected KEY.PATH=VALUE, e.g. cluster.nodes=8") in err.
 */
int override_check_syntax(const char *set, struct conf_err *err);

/*
 * Applies sets[0..n) to doc's tree. Nodes on each path are copied before they
 * are changed, so nodes shared through YAML aliases keep their other uses.
 * Returns 0, or a negative code with err filled (the doc may be partly
 * changed; the caller releases it): -EINVAL for a malformed override, a path
 * through a scalar, a list index or name that matches no item, or a value
 * that is not valid YAML; -ENOMEM.
 */
int override_apply(struct conf_doc *doc, const char *const *sets, size_t n, struct conf_err *err);

#endif
