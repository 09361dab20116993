/*
 * answer.h — what a child process that read an untrusted file sends back to the command
 * that forked it: the child encodes what it read into an anonymous file the command made
 * before the fork (answer_fd), and the command decodes it with every count and length
 * checked against the bytes it was sent, since a file that subverted libhdf5 in the child
 * could have written anything there (docs/security.md, "The command never reads a results
 * file with libhdf5"). Native byte order, between two processes of one binary; never a file
 * on disk under a name. Used by results.c (results files) and sweepidx.c (indexes).
 */
#ifndef TIDESIM_ANSWER_H
#define TIDESIM_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Why an answer was refused: the text every reader of one gives after the file's name. */
#define ANSWER_DAMAGED                                                                      \
    "the process that read it sent a damaged answer (the file may be hostile: it may have " \
    "subverted the HDF5 library there)"

/*
 * An anonymous file for a child's answer (memfd; an unlinked file in $TMPDIR or /tmp when
 * the kernel has no memfd), closed on exec, numbered 3 or above (0 in a zeroed struct is
 * none). -errno when none could be made.
 */
int answer_fd(void);

/* In the child: a stream writing to fd from its current offset (NULL: -errno in errno), and
 * its end: flushed and closed, 0 or -errno. */
FILE *answer_open(int fd);
int answer_close(FILE *f);

void answer_put(FILE *f, const void *p, size_t n);
void answer_put_u64(FILE *f, uint64_t v);
void answer_put_f64(FILE *f, double v);
void answer_put_str(FILE *f, const char *s); /* a string, or NULL */

/* The decoder's cursor: bad once anything did not fit (or memory ran out: oom too). */
struct answer_in {
    const unsigned char *p;
    size_t left;
    bool bad, oom;
};

bool answer_get(struct answer_in *in, void *out, size_t n); /* zeroes out when bad */
uint64_t answer_get_u64(struct answer_in *in);
double answer_get_f64(struct answer_in *in);
/* A count of things of at least `each` bytes: at most what is left, and at most max. */
size_t answer_get_count(struct answer_in *in, size_t each, uint64_t max);
/* A string (owned copy, or NULL when NULL was sent); false when bad. No NUL inside. */
bool answer_get_str(struct answer_in *in, char **out);
/* n doubles into a new array; false when bad. */
bool answer_get_f64s(struct answer_in *in, size_t n, double **out);
/* The mark s (the answer's start or end); false when not there. */
bool answer_get_mark(struct answer_in *in, const char *s);

/* The bytes of the answer in fd, mapped read-only: 0, -EIO (empty), -ENOMEM. */
struct answer_map {
    void *p;
    size_t n;
};
int answer_map(int fd, struct answer_map *m);
void answer_unmap(struct answer_map *m);

#endif
