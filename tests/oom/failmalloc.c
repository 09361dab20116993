/*
 * failmalloc.c — an allocator that fails on purpose, for the out-of-memory tests
 * (tests/cli/test_oom.c), preloaded into the tidesim binary (LD_PRELOAD). SQLite's testing
 * page calls this "out-of-memory testing": the Nth allocation fails, for every N, and the
 * program must neither crash nor say something false.
 *
 * FAILMALLOC_AT=N     the Nth allocation (malloc, calloc, realloc, aligned allocations)
 *                     counted from this library's start, in each process, returns NULL
 *                     with errno ENOMEM; every other one is glibc's. A process forked
 *                     after allocation k counts on from k, so N > k fails in the parent
 *                     and in the child.
 * FAILMALLOC_HIT=F    file F is created when an allocation is failed (by any process): a
 *                     run without it never reached the Nth allocation, so every N below
 *                     has been tried (the loop's end, as in SQLite's tests).
 * FAILMALLOC_SPARE=L  allocations made within a call into library L (a part of its file
 *                     name, "libhdf5": one of the 8 innermost frames is its code, so its
 *                     strdup and vasprintf too) are neither counted nor failed: those the
 *                     test does not hold tidesim to (tests/cli/test_oom.c says why).
 * FAILMALLOC_COUNT=F  at exit, the process's count is written to file F (only processes
 *                     that exit through exit(), so the command's own, not its children's).
 * FAILMALLOC_MAIN=1   only the process that loaded this library counts and fails (its forked
 *                     children, which count on from its count, would otherwise reach each
 *                     N first: a sweep's points before the sweep's own last writes).
 * FAILMALLOC_IO=1     I/O error testing instead (SQLite's "I/O error testing"): what is
 *                     counted and failed is a write to a regular file (write, pwrite, and
 *                     fsync, fdatasync, ftruncate and rename of one, and the fsync of a
 *                     folder, which makes a rename durable), never an allocation;
 *                     the Nth fails with ENOSPC (a write, ftruncate) or EIO (the others). Writes
 *                     to pipes, sockets and terminals (messages, a child's verdict) are
 *                     neither counted nor failed. Calls glibc makes inside stdio (fwrite,
 *                     fclose) do not pass through here: its buffers reach the file by an
 *                     internal call.
 *
 * glibc's own calls (strdup, fopen's buffer, open_memstream, getline...) go through these
 * too: glibc is built so that malloc can be replaced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

static long fail_at = -1, count;
static int io_mode, ending; /* FAILMALLOC_IO; the count being written at exit */
static pid_t main_pid;      /* FAILMALLOC_MAIN: the only process that counts (0: all) */
static const char *count_file, *hit_file;
static uintptr_t spare_lo, spare_hi; /* the spared library's code */

/* dl_iterate_phdr visitor: the executable segment of the library named like *data. */
static int find_spared(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, (const char *)data))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            spare_lo = info->dlpi_addr + ph->p_vaddr;
            spare_hi = spare_lo + ph->p_memsz;
        }
    }
    return 1;
}

__attribute__((constructor)) static void failmalloc_start(void)
{
    const char *at = getenv("FAILMALLOC_AT");
    fail_at = at ? atol(at) : -1;
    count_file = getenv("FAILMALLOC_COUNT");
    hit_file = getenv("FAILMALLOC_HIT");
    const char *io = getenv("FAILMALLOC_IO");
    io_mode = io && !strcmp(io, "1");
    const char *only = getenv("FAILMALLOC_MAIN");
    main_pid = only && !strcmp(only, "1") ? (pid_t)syscall(SYS_getpid) : 0;
    const char *spare = getenv("FAILMALLOC_SPARE");
    if (spare && *spare)
        dl_iterate_phdr(find_spared, (void *)spare);
    if (spare_hi) { /* backtrace loads its unwinder with its first call: not counted */
        void *frame[1];
        backtrace(frame, 1);
    }
    count = 0; /* the loader's and libraries' allocations before this are not counted */
}

__attribute__((destructor)) static void failmalloc_end(void)
{
    if (!count_file)
        return;
    ending = 1;
    int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    char buf[32];
    int k = snprintf(buf, sizeof(buf), "%ld\n", count);
    if (k > 0 && write(fd, buf, (size_t)k) < 0)
        k = 0;
    close(fd);
}

/* Whether this allocation is made within a call into the spared library. */
static int spared(void)
{
    static __thread int busy; /* backtrace's own first allocation */
    if (!spare_hi || busy)
        return busy;
    busy = 1;
    void *frames[8];
    int n = backtrace(frames, 8);
    busy = 0;
    for (int i = 0; i < n; i++)
        if ((uintptr_t)frames[i] >= spare_lo && (uintptr_t)frames[i] < spare_hi)
            return 1;
    return 0;
}

/* Whether this call is the Nth counted one (then marked in FAILMALLOC_HIT, errno set). */
static int nth(int err)
{
    if (main_pid && (pid_t)syscall(SYS_getpid) != main_pid)
        return 0;
    if (++count != fail_at)
        return 0;
    if (hit_file) { /* open and close allocate nothing and are not counted */
        int fd = open(hit_file, O_WRONLY | O_CREAT, 0600);
        if (fd >= 0)
            close(fd);
    }
    errno = err;
    return 1;
}

/* Whether this allocation fails. */
static int fails(void)
{
    if (io_mode || spared())
        return 0;
    return nth(ENOMEM);
}

/* Whether this write-side call on fd (or, fd < 0, on the file at path) fails: a regular
 * file's, or a folder's when dirs (an fsync that makes a rename durable). */
static int fails_io(int fd, const char *path, int err, int dirs)
{
    struct stat st;
    if (!io_mode || ending || (fd >= 0 && fd <= 2))
        return 0;
    if (fd >= 0 ? syscall(SYS_fstat, fd, &st) != 0 : syscall(SYS_lstat, path, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode) && !(dirs && S_ISDIR(st.st_mode)))
        return 0;
    return nth(err);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    return fails_io(fd, NULL, ENOSPC, 0) ? -1 : syscall(SYS_write, fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return fails_io(fd, NULL, ENOSPC, 0) ? -1 : syscall(SYS_pwrite64, fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return fails_io(fd, NULL, ENOSPC, 0) ? -1 : syscall(SYS_pwrite64, fd, buf, n, off);
}

int fsync(int fd)
{
    return fails_io(fd, NULL, EIO, 1) ? -1 : (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
    return fails_io(fd, NULL, EIO, 1) ? -1 : (int)syscall(SYS_fdatasync, fd);
}

int ftruncate(int fd, off_t len)
{
    return fails_io(fd, NULL, ENOSPC, 0) ? -1 : (int)syscall(SYS_ftruncate, fd, len);
}

int ftruncate64(int fd, off_t len)
{
    return fails_io(fd, NULL, ENOSPC, 0) ? -1 : (int)syscall(SYS_ftruncate, fd, len);
}

int rename(const char *from, const char *to)
{
    return fails_io(-1, from, EIO, 0) ? -1 : (int)syscall(SYS_rename, from, to);
}

void *malloc(size_t n)
{
    return fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    return fails() ? NULL : __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    return fails() ? NULL : __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    return fails() ? NULL : __libc_memalign(align, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
    if (fails())
        return ENOMEM;
    void *q = __libc_memalign(align, n);
    if (!q)
        return ENOMEM;
    *p = q;
    return 0;
}
