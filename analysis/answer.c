/* answer.c — a reading child's answer: encoding, checked decoding (answer.h). */
#include "analysis/answer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int answer_fd(void)
{
    int fd = -1;
#ifdef SYS_memfd_create
    fd = (int)syscall(SYS_memfd_create, "tidesim-answer", 1u /* MFD_CLOEXEC */);
#endif
    if (fd < 0) {
        const char *dir = getenv("TMPDIR");
        char tmpl[512];
        snprintf(tmpl, sizeof(tmpl), "%s/tidesim-read-XXXXXX", dir && *dir ? dir : "/tmp");
        if ((fd = mkstemp(tmpl)) < 0)
            return -errno;
        unlink(tmpl);
    }
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int e = errno;
    close(fd);
    return high >= 0 ? high : -e;
}

FILE *answer_open(int fd)
{
    int d = dup(fd);
    FILE *f = d >= 0 ? fdopen(d, "w") : NULL;
    if (!f && d >= 0) {
        int e = errno;
        close(d);
        errno = e;
    }
    return f;
}

int answer_close(FILE *f)
{
    errno = 0;
    int rc = fflush(f) != 0 || ferror(f) ? -(errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !rc)
        rc = -(errno ? errno : EIO);
    return rc;
}

void answer_put(FILE *f, const void *p, size_t n)
{
    if (n)
        fwrite(p, 1, n, f);
}

void answer_put_u64(FILE *f, uint64_t v)
{
    answer_put(f, &v, sizeof(v));
}

void answer_put_f64(FILE *f, double v)
{
    answer_put(f, &v, sizeof(v));
}

void answer_put_str(FILE *f, const char *s)
{
    answer_put_u64(f, s ? strlen(s) : UINT64_MAX);
    if (s)
        answer_put(f, s, strlen(s));
}

bool answer_get(struct answer_in *in, void *out, size_t n)
{
    if (in->bad || n > in->left) {
        in->bad = true;
        if (n)
            memset(out, 0, n);
        return false;
    }
    if (n)
        memcpy(out, in->p, n);
    in->p += n;
    in->left -= n;
    return true;
}

uint64_t answer_get_u64(struct answer_in *in)
{
    uint64_t v;
    answer_get(in, &v, sizeof(v));
    return v;
}

double answer_get_f64(struct answer_in *in)
{
    double v;
    answer_get(in, &v, sizeof(v));
    return v;
}

size_t answer_get_count(struct answer_in *in, size_t each, uint64_t max)
{
    uint64_t n = answer_get_u64(in);
    if (in->bad || n > max || n > in->left / each) {
        in->bad = true;
        return 0;
    }
    return (size_t)n;
}

bool answer_get_str(struct answer_in *in, char **out)
{
    *out = NULL;
    uint64_t n = answer_get_u64(in);
    if (in->bad || n == UINT64_MAX)
        return !in->bad;
    if (n > in->left || memchr(in->p, 0, (size_t)n)) {
        in->bad = true;
        return false;
    }
    *out = malloc((size_t)n + 1);
    if (!*out) {
        in->bad = in->oom = true;
        return false;
    }
    answer_get(in, *out, (size_t)n);
    (*out)[n] = 0;
    return true;
}

bool answer_get_f64s(struct answer_in *in, size_t n, double **out)
{
    *out = NULL;
    if (in->bad || n > in->left / sizeof(double)) {
        in->bad = true;
        return false;
    }
    *out = malloc((n ? n : 1) * sizeof(double));
    if (!*out) {
        in->bad = in->oom = true;
        return false;
    }
    answer_get(in, *out, n * sizeof(double));
    return true;
}

bool answer_get_mark(struct answer_in *in, const char *s)
{
    size_t n = strlen(s);
    if (in->bad || in->left < n || memcmp(in->p, s, n)) {
        in->bad = true;
        return false;
    }
    in->p += n;
    in->left -= n;
    return true;
}

int answer_map(int fd, struct answer_map *m)
{
    m->p = NULL;
    m->n = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0)
        return -EIO;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    m->p = p;
    m->n = (size_t)st.st_size;
    return 0;
}

void answer_unmap(struct answer_map *m)
{
    if (m->p)
        munmap(m->p, m->n);
    m->p = NULL;
    m->n = 0;
}
