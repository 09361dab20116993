/*
 * output.h — the results file of a run (HDF5; schema in docs/results.md).
 *
 * The file is written under a temporary name while the run goes on (time
 * series are appended interval by interval, so memory does not grow with the
 * run's length) and renamed when complete. An interrupted run is renamed to
 * "<path>.partial" with /meta complete = 0 and the simulated time reached; a
 * failed run leaves no file.
 *
 * Write errors (a full disk, a quota, an I/O error) come back from every
 * function below as the system's negative errno (-ENOSPC, -EDQUOT, -EIO; see
 * analysis/h5io.h), and err, where there is one, reads
 * "cannot write <path>: <strerror>". After an error only sim_output_abort
 * is left to call; it deletes the temporary file. The final rename happens
 * after the file is fsync'ed, and the folder is fsync'ed after it.
 */
#ifndef TIDESIM_OUTPUT_H
#define TIDESIM_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/core/simtime.h"

struct sim;
struct scenario;
struct sim_output;
struct sim_sink;

#define RESULTS_SCHEMA_VERSION 2 /* 2: "<key>.unit" and "<key>.label" beside figures */

/* Create the temporary file for path. Returns 0, or a negative errno with err filled
 * ("cannot create <path>: <strerror>") and nothing left on disk. */
int sim_output_open(struct sim_output **out, const char *path, const struct scenario *sc, char *err,
                    size_t errlen);

/* Append the interval [t0, t1) just closed (called by the sampler). Returns 0 or the
 * first write error (negative errno); the next calls return it again. */
int sim_output_interval(struct sim_output *o, const struct sim *s, sim_time t0, sim_time t1);

/*
 * Fragmented cards now: free cards (no tenant, not re-laid out) that no
 * queued training job could use under whole-card gang placement — a gang of
 * g <= cards per node needs g free cards on one node, a bigger one
 * ceil(g / per node) wholly free nodes. 0 when no job is queued (free cards
 * then are spare capacity, not fragmentation). Written per interval
 * (/timeseries/gpus_fragmented) and summed over the window (/summary).
 */
uint32_t sim_output_fragmented_gpus(const struct sim *s);

/* The sink (sim/sim.h) that appends each closed interval to o: pass it to sim_init. */
void sim_output_sink(struct sim_output *o, struct sim_sink *sink);

/*
 * Write /meta, /summary, /jobs, /gpus and the histograms, close, rename to
 * the final path (complete) or "<path>.partial" (not complete), and free o.
 * *written (may be NULL) receives a malloc'd copy of the name used. Returns
 * 0, or a negative errno with err filled, o freed and no file left.
 */
int sim_output_finish(struct sim_output *o, const struct sim *s, bool complete, char **written,
                      char *err, size_t errlen);

/* Delete the temporary file and free o (NULL is a no-op). */
void sim_output_abort(struct sim_output *o);

#endif
