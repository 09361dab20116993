/*
 * targets.h — the fuzz entry points: one function per parser family, fed
 * raw bytes and calling the same code `tidesim` runs on a file.
 *
 * Each target takes the input as it is, writes it to a temporary file where
 * the reader wants a path (the trace readers; the results reader reads it from
 * memory), runs the reader to the end of the stream (at most FUZZ_MAX_RECORDS
 * records, FUZZ_MAX_DRAWN for the generating readers) and releases everything. The trace targets
 * read their first byte as options (skip_bad, loop, scale, reorder window, time unit; see
 * targets.c) and the rest as the file, so one corpus covers the option paths too.
 *
 * The same functions are linked into the libFuzzer drivers (fuzz/driver.c,
 * `make fuzz`) and into the test binary, which replays every file under
 * tests/data/fuzz/<target>/ (tests/fuzz/test_fuzz_replay.c) through the
 * target's replay entry (or run, when it has none).
 */
#ifndef TIDESIM_FUZZ_TARGETS_H
#define TIDESIM_FUZZ_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records a trace target reads at most: a few rows can stand for billions of arrivals. */
#define FUZZ_MAX_RECORDS 100000
/*
 * The same for the readers that draw their arrivals from a few numbers per row
 * (ServeGen windows, per-interval counts): one row of either can stand for
 * 600,000,000 or 10^9 of them, so with FUZZ_MAX_RECORDS a typical input read
 * 100,000 draws (50 ms under the fuzzer's instrumentation, 150 inputs/s). Every
 * record is made by the same few lines (a draw, its checks), so more records
 * reach no new code; a window or interval past the first is reached by rows of
 * few arrivals, which the fuzzer finds (they are its cheap inputs).
 */
#define FUZZ_MAX_DRAWN 1000

/*
 * A target's verdict on one input: FUZZ_ACCEPTED (the whole input was read),
 * FUZZ_REJECTED (refused, msg holds the reader's message), FUZZ_BROKEN (the
 * reader broke a promise of its header: a refusal without a message, a time
 * going backwards, a job without a GPU...; msg says which), or a negative
 * errno when the harness itself failed (no temporary file could be written;
 * msg says why). msg is always NUL-terminated. The drivers abort on
 * FUZZ_BROKEN so libFuzzer keeps the input like a crash.
 */
enum { FUZZ_ACCEPTED = 0, FUZZ_REJECTED = 1, FUZZ_BROKEN = 2 };

struct fuzz_target {
    const char *name; /* folder name under tests/data/fuzz/ and harness name */
    int (*run)(const uint8_t *data, size_t n, char *msg, size_t msglen);
    /*
     * How make test replays a kept input, when not through run (NULL): the
     * production path where the fuzzer's entry takes a short cut. `results`
     * fuzzes the reader in memory and in process, but replays through
     * results_open (a file, read first in a child process), which must refuse
     * a file on which libhdf5 itself crashes.
     */
    int (*replay)(const uint8_t *data, size_t n, char *msg, size_t msglen);
};

/* Every target, in a fixed order; fuzz_ntargets of them. */
extern const struct fuzz_target fuzz_targets[];
extern const size_t fuzz_ntargets;

/*
 * Set-up of target name before its first input, called by the libFuzzer
 * driver (LLVMFuzzerInitialize) while the process is still small: `results`
 * forks its preflight helper (targets.c) and limits a read to 250 ms (10 s
 * without it, in make test). Optional: without it every target works, more
 * slowly. Never fails.
 */
void fuzz_target_init(const char *name);

/* The target called name, or NULL. */
const struct fuzz_target *fuzz_target_find(const char *name);

/*
 * Whether a sanitizer report (the text a child of the results harness left when
 * it died) blames tidesim's code rather than libhdf5's: UBSan's "runtime error",
 * or a first frame of the error's stack, past the sanitizer runtime and libc,
 * in a source file of ours; false when it is in libhdf5, or there is no report.
 */
bool fuzz_report_blames_us(const char *rep);

/*
 * The results harness's worker (targets.c: one process reads input after input, where
 * tidesim forks a child per file) on in[0..k) (n[i] bytes each), in order, each input also
 * read by a fresh child as h5_rd_preflight reads it: the index of the first input whose
 * verdict, message or answer differ between the two (msg says how), or k when none does.
 * One difference is allowed: both refuse an input, but libhdf5 crashed in one of them and
 * failed in the other. On such files libhdf5 frees a pointer it never allocated (the
 * reproducers of tests/data/fuzz/results/), undefined behaviour whose outcome depends on
 * the heap it finds: glibc lets it pass in a fresh process and stops it in a worker that
 * has read a file before (AddressSanitizer stops it in both). *workers: the worker processes
 * it took (fewer than k when one read several).
 */
size_t fuzz_results_worker_check(const uint8_t *const *in, const size_t *n, size_t k,
                                 size_t *workers, char *msg, size_t msglen);

struct check_gates;
/*
 * Every gate of `tidesim check` on (check_gates_init, then each limit set to a value that
 * makes its gate read its columns: the backlog gate reads /jobs, the LLM gates /llm); the
 * results harness and tests/analysis/test_results_reads.c check with them.
 */
void fuzz_check_gates_all(struct check_gates *g);

#endif
