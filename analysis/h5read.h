/*
 * h5read.h — reading HDF5 files that are not trusted: results files that
 * `report`, `compare`, `check` and `plot` take from anywhere (CI runs `check`
 * on files of other branches). Every reader checks what an object declares
 * before HDF5 writes a byte into our memory, and a refusal names the object:
 * "/summary/util_busy: expected a scalar numeric attribute, found an array of 3".
 *
 * Room analysis/: includes nothing of ours. Functions never print.
 *
 * What a reader accepts (docs/results.md, "Limits of the readers"):
 *  - numeric attribute: scalar (or one-element) dataspace, integer or float
 *    class of 1..8 bytes in a standard layout (IEEE floats, two's-complement integers);
 *  - string attribute: scalar (or one-element) dataspace, fixed-length of at
 *    most str_max bytes, or variable-length of at most str_max bytes once read;
 *  - 1-D dataset: reached through a hard link, a dataset (not a group), an
 *    IEEE float of 4 or 8 bytes or a standard integer of 1..8 bytes (histogram
 *    counts and bounds are integers), rank 1, at most H5READ_MAX_ELEMS values, its data
 *    in the file itself (contiguous, chunked or compact: no external or
 *    virtual storage), filters only deflate, shuffle and fletcher32, a
 *    declared size no larger than deflate could expand from the bytes it
 *    stores (H5READ_MAX_RATIO), and within the session's budget;
 *  - group: reached through a hard link (no soft or external link, so a file
 *    cannot make us open another file or a FIFO), a group.
 * HDF5's filter plugins are never loaded while a file is open for reading.
 */
#ifndef TIDESIM_H5READ_H
#define TIDESIM_H5READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hdf5.h>

#define H5READ_MAX_STR   ((size_t)64 << 10) /* bytes of a string attribute (default) */
#define H5READ_MAX_TEXT  ((size_t)17 << 20) /* bytes: /meta/scenario holds a scenario (≤ 16 MiB) */
#define H5READ_MAX_ELEMS ((uint64_t)1 << 28) /* values of one dataset (2 GiB as float64) */
/*
 * Declared bytes per stored byte: deflate cannot expand more than 1032:1
 * (RFC 1951: a 258-byte match costs at least 2 bits), so a dataset that
 * declares more than this times what it stores (plus H5READ_SLACK) is lying.
 */
#define H5READ_MAX_RATIO 1100u
#define H5READ_SLACK     ((uint64_t)64 << 10)
/* Bytes the dataset reads of one session may allocate, in total: the larger of
 * this and H5READ_MAX_RATIO × the file's size. */
#define H5READ_MIN_BUDGET ((uint64_t)64 << 20)
/* Links of one group, attributes of one object a walk visits. */
#define H5READ_MAX_LINKS 4096u

/*
 * What a whole command that reads results files (report, compare, check,
 * plot) may spend, whatever libhdf5 does inside a damaged file (it may loop or
 * allocate on its own account, below the checks above): H5READ_MAX_CPU_S
 * seconds of CPU time and H5READ_MAX_AS bytes of address space.
 */
#define H5READ_MAX_CPU_S 120u
#define H5READ_MAX_AS    ((uint64_t)8 << 30)

/*
 * Bound this process (and the children it starts) for reading untrusted
 * files: CPU time to the whole seconds it has used plus cpu_s (RLIMIT_CPU;
 * 0 = no change), address space to as_bytes (RLIMIT_AS; 0 = no change; never
 * under AddressSanitizer, whose shadow memory needs terabytes of it). A limit
 * already lower is kept. Passing the CPU limit ends the process at once with
 * "tidesim: stopped: reading results files took more CPU time than allowed
 * (N s; docs/security.md); the file may be damaged or hostile" on stderr (N:
 * the limit in seconds) and exit status exit_code (2; anything else is 1); passing the memory
 * limit makes allocations fail, which the readers report as "out of memory".
 * Returns 0 or -errno (nothing changed) from getrusage/setrlimit/sigaction.
 */
int h5_rd_limit_process(unsigned cpu_s, uint64_t as_bytes, int exit_code);

/*
 * libhdf5 itself may crash or loop inside a corrupted file, in calls no check
 * of ours can come before (fuzzing found a free of a wild pointer while
 * iterating a damaged dense link table). So a file is read first in a child
 * process: probe(arg, why, n) runs there, and the caller reads the file itself
 * only when the probe returned 0 in time. Returns 0; the probe's own
 * non-zero code with its message in why; -ECANCELED with "the HDF5 library
 * crashed reading it (signal N)..." when the child died; -ETIMEDOUT with "reading it
 * took more than N s" (or "N ms" for a limit under a whole second count) after
 * timeout_ms milliseconds of wall time (the child is killed); or -errno when no child could be
 * started (pipe, fork). The child reports nothing itself: sanitizer reports and libFuzzer's crash
 * handlers are turned off in it (its verdict is the answer).
 */
#define H5READ_PREFLIGHT_MS 120000u
int h5_rd_preflight(int (*probe)(void *arg, char *why, size_t n), void *arg, unsigned timeout_ms,
                    char *why, size_t n);

/*
 * The two halves of h5_rd_preflight's child, for a caller that keeps its own reading process
 * (the results fuzz harness's worker, fuzz/targets.c). h5_rd_child_quiet, in the reading
 * process: its death is the verdict, so nothing in it may report it or save the input
 * (standard error to /dev/null, sanitizer reports there, no death callback, the default
 * action for the deadly signals). h5_rd_child_lost, in the caller: the verdict on a reading
 * process that died (st, its waitpid status) or was killed after timeout_ms (timed_out),
 * -ECANCELED or -ETIMEDOUT with h5_rd_preflight's message in why.
 */
void h5_rd_child_quiet(void);
int h5_rd_child_lost(int st, bool timed_out, unsigned timeout_ms, char *why, size_t n);

/*
 * In any child of tidesim's, right after fork (h5_rd_preflight's, a replication's, a sweep
 * point's, an MPI rank's task, the fuzz harness's helper and worker): ask the kernel for
 * SIGKILL when the parent dies (Linux PR_SET_PDEATHSIG), and exit at once if it died before.
 */
void h5_rd_die_with_parent(pid_t parent);

/*
 * One reading session of one file: its limits and the first refusal. A
 * reader that refuses records its code and message here (the first one
 * wins) and returns it; an absent object is -ENOENT and records nothing.
 */
struct h5_rd {
    uint64_t filesize; /* bytes; stored sizes claimed above it are lies */
    uint64_t budget;   /* bytes dataset reads may still allocate */
    size_t str_max;    /* bytes of a string attribute */
    int rc;            /* first refusal: 0 or a negative code */
    char why[400];     /* its message, object path first ("" when none) */
};

/*
 * Open path read-only for a session (rd is initialised). Refuses what is not
 * a regular file (a FIFO or device would block or never end). Returns the
 * file id, or a negative value with rd->rc = -ENOENT and rd->why set.
 */
hid_t h5_rd_open(struct h5_rd *rd, const char *path);

/*
 * h5_rd_open for a file held in memory: buf[0..n) is a whole file's bytes
 * (the caller keeps them; libhdf5 reads a copy). Opened read-only with the same
 * settings (no error printing, no filter plugins) through HDF5's core driver
 * without a backing store, so nothing is read from or written to disk. For the
 * fuzz harness (fuzz/targets.c), which reads one input many times a second.
 * Returns the file id, or a negative value with rd->rc and rd->why set.
 */
hid_t h5_rd_open_image(struct h5_rd *rd, const void *buf, size_t n);

/* Initialise rd for a file already open (budget from its size). */
void h5_rd_init(struct h5_rd *rd, hid_t file);

/*
 * Record a refusal (printf-style message, object first) unless one is
 * recorded already. Returns rc, so callers can `return h5_rd_fail(...)`.
 */
int h5_rd_fail(struct h5_rd *rd, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Open group `name` (one path component) of parent. Returns its id (the
 * caller closes it), or H5I_INVALID_HID: absent (nothing recorded), or a
 * soft/external link or not a group (-EIO recorded).
 */
hid_t h5_rd_group(struct h5_rd *rd, hid_t parent, const char *name);
/* The same, with *rc = 0, -ENOENT (absent) or -EIO (refused, recorded). */
hid_t h5_rd_group_rc(struct h5_rd *rd, hid_t parent, const char *name, int *rc);

/*
 * Whether link `name` of parent (attribute `name` of obj) exists: 1, 0, or -1 when libhdf5
 * could not tell (it failed: out of memory, a damaged index), recorded as -EIO "PATH: cannot
 * look up the link". Never taken for absent: an object libhdf5 failed to find is no object
 * the file lacks (a missing /meta/complete would make a complete run incomplete, a missing
 * /summary a gate "not recorded").
 */
int h5_rd_link_exists(struct h5_rd *rd, hid_t parent, const char *name);
int h5_rd_attr_exists(struct h5_rd *rd, hid_t obj, const char *name);

/*
 * Whether group obj tracks its links' (attrs: its attributes') creation order, as tidesim's
 * files do for links (the scenario's order): 1, 0 (walk by name), or -1 when libhdf5 could
 * not tell. Asked before a walk in that order, so that a walk
 * libhdf5 fails is refused and never redone in another order.
 */
int h5_rd_crt_order(hid_t obj, bool attrs);

/* Numeric attribute into *out. 0; -ENOENT absent; -EIO refused (recorded). */
int h5_rd_attr_double(struct h5_rd *rd, hid_t obj, const char *name, double *out);
/*
 * The same for an attribute known to exist (met by H5Aiterate2), and a string
 * is no refusal: 1 (nothing read). One open of the attribute, no lookup.
 */
int h5_rd_attr_number(struct h5_rd *rd, hid_t obj, const char *name, double *out);

/*
 * String attribute: *out malloc'd (the caller frees it), NULL on failure.
 * 0; -ENOENT absent; -EIO refused; -ENOMEM (both recorded).
 */
int h5_rd_attr_str(struct h5_rd *rd, hid_t obj, const char *name, char **out);

/*
 * A string attribute if there is one: an attribute of another type is taken
 * as absent (-ENOENT, nothing recorded), with one lookup and one open.
 */
int h5_rd_attr_str_opt(struct h5_rd *rd, hid_t obj, const char *name, char **out);

/*
 * Check 1-D numeric dataset `name` of grp without reading it: *n gets its
 * length. 0; -ENOENT absent; -EIO refused (recorded).
 */
int h5_rd_f64_len(struct h5_rd *rd, hid_t grp, const char *name, uint64_t *n);

/*
 * The two steps of h5_rd_f64, for a reader that checks a dataset first and
 * reads it later without opening it again (analysis/results.c): open and check
 * 1-D numeric dataset `name` of grp (*len its values); returns its id (the
 * caller closes it with H5Oclose) or a negative value with *rc = -ENOENT
 * (absent) or -EIO (recorded). li: the hard link a walk of grp (H5Literate)
 * just met under that name, opened without looking the name up again, or
 * NULL. Then read the len values of dataset d as float64 into *out
 * (malloc'd), charged to the budget: 0, -EIO or -ENOMEM (recorded); path
 * names it in messages (NULL: libhdf5's name of d).
 */
hid_t h5_rd_dset_open(struct h5_rd *rd, hid_t grp, const char *name, const H5L_info_t *li,
                      uint64_t *len, int *rc);
int h5_rd_dset_read(struct h5_rd *rd, hid_t d, const char *path, uint64_t len, double **out);

/*
 * Read 1-D numeric dataset `name` of grp as float64: *out malloc'd (the caller
 * frees it; NULL on failure), *n values. Charges n × 8 bytes to the budget.
 * 0; -ENOENT absent; -EIO refused; -ENOMEM (both recorded).
 */
int h5_rd_f64(struct h5_rd *rd, hid_t grp, const char *name, double **out, size_t *n);

/*
 * The same checks without a session (merge, tests): no message, the budget
 * of a file of obj's size, strings up to H5READ_MAX_TEXT bytes. Return 0,
 * -ENOENT when absent, -EIO when refused, -ENOMEM.
 */
int h5_read_attr_double(hid_t obj, const char *name, double *out);
/* *out is malloc'd; the caller frees it. */
int h5_read_attr_str(hid_t obj, const char *name, char **out);
int h5_read_f64(hid_t grp, const char *name, double **out, size_t *n);

#endif
