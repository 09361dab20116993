/* h5read.c — checked readers of untrusted HDF5 files (h5read.h). */
#include "analysis/h5read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

#define CHUNK_MAX_BYTES ((uint64_t)16 << 20) /* one chunk HDF5 would allocate to read */
#define MAX_FILTERS     8

static uint64_t budget_for(uint64_t filesize)
{
    uint64_t b =
        filesize > UINT64_MAX / H5READ_MAX_RATIO ? UINT64_MAX : filesize * H5READ_MAX_RATIO;
    return b > H5READ_MIN_BUDGET ? b : H5READ_MIN_BUDGET;
}

static void rd_reset(struct h5_rd *rd, uint64_t filesize, size_t str_max)
{
    memset(rd, 0, sizeof(*rd));
    rd->filesize = filesize;
    rd->budget = budget_for(filesize);
    rd->str_max = str_max;
}

void h5_rd_init(struct h5_rd *rd, hid_t file)
{
    hsize_t size = 0;
    if (H5Fget_filesize(file, &size) < 0)
        size = 0;
    rd_reset(rd, (uint64_t)size, H5READ_MAX_STR);
}

int h5_rd_fail(struct h5_rd *rd, int rc, const char *fmt, ...)
{
    if (rd->rc)
        return rc;
    rd->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rd->why, sizeof(rd->why), fmt, ap);
    va_end(ap);
    /* Names come from the file: no control characters reach a terminal. */
    for (char *p = rd->why; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return rc;
}

/* Open name read-only with fapl, as every reader of an untrusted file does. */
static hid_t open_untrusted(struct h5_rd *rd, const char *name, hid_t fapl)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* A filter this reader does not know is refused, never searched for on disk. */
    H5PLset_loading_state(0);
    /* A chunk cache of few slots: a reader reads each dataset whole, once, and keeps the
     * datasets it checked open (analysis/results.c), each of which would otherwise hold a
     * table of 521 slots; the 1 MiB of chunks it may keep stays. */
    H5Pset_cache(fapl, 0, 7, (size_t)1 << 20, 0.75);
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    if (f < 0) {
        h5_rd_fail(rd, -ENOENT, "cannot open as an HDF5 results file");
        return H5I_INVALID_HID;
    }
    h5_rd_init(rd, f);
    return f;
}

hid_t h5_rd_open(struct h5_rd *rd, const char *path)
{
    rd_reset(rd, 0, H5READ_MAX_STR);
    struct stat st;
    if (stat(path, &st) != 0) {
        h5_rd_fail(rd, -ENOENT, "cannot open as an HDF5 results file (%s)", strerror(errno));
        return H5I_INVALID_HID;
    }
    if (!S_ISREG(st.st_mode)) {
        h5_rd_fail(rd, -ENOENT, "cannot open as an HDF5 results file (not a regular file)");
        return H5I_INVALID_HID;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) {
        h5_rd_fail(rd, -ENOMEM, "cannot open as an HDF5 results file (out of memory)");
        return H5I_INVALID_HID;
    }
    hid_t f = open_untrusted(rd, path, fapl);
    H5Pclose(fapl);
    return f;
}

hid_t h5_rd_open_image(struct h5_rd *rd, const void *buf, size_t n)
{
    rd_reset(rd, 0, H5READ_MAX_STR);
    if (!buf || n == 0) {
        h5_rd_fail(rd, -ENOENT, "cannot open as an HDF5 results file (empty)");
        return H5I_INVALID_HID;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* The core driver reads the image from memory; without a backing store it never
     * touches the disk, but it refuses an image whose name exists as a file: a name
     * under /dev/null can never exist. */
    if (fapl < 0 || H5Pset_fapl_core(fapl, 64 << 10, 0) < 0 ||
        H5Pset_file_image(fapl, (void *)(uintptr_t)buf, n) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        h5_rd_fail(rd, -ENOMEM, "cannot open as an HDF5 results file (out of memory)");
        return H5I_INVALID_HID;
    }
    char name[64];
    snprintf(name, sizeof(name), "/dev/null/tidesim-image-%p", buf);
    hid_t f = open_untrusted(rd, name, fapl);
    H5Pclose(fapl);
    return f;
}

/* "<obj's path>/<name>" for messages (name may be NULL: the object itself). */
static void obj_path(hid_t obj, const char *name, char *buf, size_t n)
{
    char base[200] = "";
    ssize_t k = H5Iget_name(obj, base, sizeof(base));
    if (k <= 0)
        snprintf(base, sizeof(base), "?");
    if (!name)
        snprintf(buf, n, "%s", base);
    else
        snprintf(buf, n, "%s/%.120s", strcmp(base, "/") ? base : "", name);
}

/* H5Lexists' or H5Aexists' answer e on `name` of obj: 1, 0, or -1 recorded as a failure. */
static int exists_or_fail(struct h5_rd *rd, htri_t e, hid_t obj, const char *name, const char *what)
{
    if (e >= 0)
        return e > 0;
    char path[400];
    obj_path(obj, name, path, sizeof(path));
    h5_rd_fail(rd, -EIO, "%s: cannot look up the %s (the HDF5 library failed)", path, what);
    return -1;
}

int h5_rd_link_exists(struct h5_rd *rd, hid_t parent, const char *name)
{
    return exists_or_fail(rd, H5Lexists(parent, name, H5P_DEFAULT), parent, name, "link");
}

int h5_rd_crt_order(hid_t obj, bool attrs)
{
    hid_t p = H5Gget_create_plist(obj);
    if (p < 0)
        return -1;
    unsigned flags = 0;
    herr_t e =
        attrs ? H5Pget_attr_creation_order(p, &flags) : H5Pget_link_creation_order(p, &flags);
    H5Pclose(p);
    if (e < 0)
        return -1;
    return (flags & H5P_CRT_ORDER_TRACKED) != 0;
}

int h5_rd_attr_exists(struct h5_rd *rd, hid_t obj, const char *name)
{
    return exists_or_fail(rd, H5Aexists(obj, name), obj, name, "attribute");
}

static void describe_space(hid_t sp, char *buf, size_t n)
{
    H5S_class_t sc = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sc == H5S_SCALAR)
        snprintf(buf, n, "a scalar");
    else if (sc == H5S_NULL)
        snprintf(buf, n, "an empty (null) dataspace");
    else if (sc == H5S_SIMPLE && rank == 1)
        snprintf(buf, n, "an array of %lld", (long long)np);
    else if (sc == H5S_SIMPLE)
        snprintf(buf, n, "a %d-D array of %lld", rank, (long long)np);
    else
        snprintf(buf, n, "an unreadable dataspace");
}

static void describe_type(hid_t t, char *buf, size_t n)
{
    size_t size = t >= 0 ? H5Tget_size(t) : 0;
    char digits[24];
    snprintf(digits, sizeof(digits), "%zu", size);
    /* "an 8-byte", "an 11-byte", "an 18-byte", else "a": as the number is spoken. */
    const char *an = digits[0] == '8' || size == 11 || size == 18 ? "an" : "a";
    switch (t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS) {
    case H5T_INTEGER:
        snprintf(buf, n, "%s %zu-byte integer", an, size);
        break;
    case H5T_FLOAT:
        snprintf(buf, n, "%s %zu-byte float", an, size);
        break;
    case H5T_STRING:
        snprintf(buf, n, "a string");
        break;
    case H5T_COMPOUND:
        snprintf(buf, n, "a compound");
        break;
    case H5T_ENUM:
        snprintf(buf, n, "an enum");
        break;
    case H5T_ARRAY:
        snprintf(buf, n, "an array type");
        break;
    case H5T_VLEN:
        snprintf(buf, n, "a variable-length sequence");
        break;
    case H5T_REFERENCE:
        snprintf(buf, n, "a reference");
        break;
    default:
        snprintf(buf, n, "a type of class %d", t >= 0 ? (int)H5Tget_class(t) : -1);
    }
}

/* An IEEE float of 4 or 8 bytes (HDF5's own conversions; no hand-made float layouts). */
static bool std_float(hid_t t)
{
    return H5Tequal(t, H5T_IEEE_F64LE) > 0 || H5Tequal(t, H5T_IEEE_F64BE) > 0 ||
           H5Tequal(t, H5T_IEEE_F32LE) > 0 || H5Tequal(t, H5T_IEEE_F32BE) > 0;
}

static bool std_number(hid_t t)
{
    const hid_t ints[] = {H5T_STD_I8LE,  H5T_STD_I8BE,  H5T_STD_U8LE,  H5T_STD_U8BE,
                          H5T_STD_I16LE, H5T_STD_I16BE, H5T_STD_U16LE, H5T_STD_U16BE,
                          H5T_STD_I32LE, H5T_STD_I32BE, H5T_STD_U32LE, H5T_STD_U32BE,
                          H5T_STD_I64LE, H5T_STD_I64BE, H5T_STD_U64LE, H5T_STD_U64BE};
    if (std_float(t))
        return true;
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        if (H5Tequal(t, ints[i]) > 0)
            return true;
    return false;
}

/* Whether attribute a holds exactly one value (scalar or one-element simple dataspace). */
static bool one_value(hid_t a, char *got, size_t n)
{
    hid_t sp = H5Aget_space(a);
    H5S_class_t sc = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    bool ok = sc == H5S_SCALAR || (sc == H5S_SIMPLE && np == 1);
    if (!ok)
        describe_space(sp, got, n);
    if (sp >= 0)
        H5Sclose(sp);
    return ok;
}

/*
 * Open attribute name of obj and check it holds one value. Returns the id
 * and its file type in *ft, or a negative value: *rc = -ENOENT (absent) or
 * -EIO (recorded, what = "numeric" / "string").
 */
/* How attr_open treats an attribute: */
enum {
    ATTR_KNOWN = 1,    /* the caller knows it exists (H5Aiterate2 met it): no lookup first */
    ATTR_SKIP_STR = 2, /* a string of any shape is skipped: *rc = 1, nothing recorded */
    ATTR_ONLY_STR = 4, /* anything but a string is absent */
};

static hid_t attr_open(struct h5_rd *rd, hid_t obj, const char *name, const char *what, int flags,
                       hid_t *ft, int *rc)
{
    char path[400], got[80];
    *ft = H5I_INVALID_HID;
    int there = flags & ATTR_KNOWN ? 1 : h5_rd_attr_exists(rd, obj, name);
    if (there <= 0) {
        *rc = there < 0 ? -EIO : -ENOENT;
        return H5I_INVALID_HID;
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    *rc = -EIO;
    if (a < 0) { /* it exists: libhdf5 failed (never taken for absent, which it is not) */
        obj_path(obj, name, path, sizeof(path));
        h5_rd_fail(rd, -EIO, "%s: cannot open the attribute", path);
        return H5I_INVALID_HID;
    }
    if (flags & (ATTR_SKIP_STR | ATTR_ONLY_STR)) { /* decided by its class, whatever its shape */
        hid_t t = H5Aget_type(a);
        H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
        if (t >= 0)
            H5Tclose(t);
        if (cls == H5T_NO_CLASS) {
            obj_path(obj, name, path, sizeof(path));
            h5_rd_fail(rd, -EIO, "%s: cannot read the attribute's type", path);
            H5Aclose(a);
            return H5I_INVALID_HID;
        }
        bool str = cls == H5T_STRING;
        if (str == !!(flags & ATTR_SKIP_STR)) {
            H5Aclose(a);
            *rc = str ? 1 : -ENOENT;
            return H5I_INVALID_HID;
        }
    }
    if (!one_value(a, got, sizeof(got))) {
        obj_path(obj, name, path, sizeof(path));
        h5_rd_fail(rd, -EIO, "%s: expected a scalar %s attribute, found %s", path, what, got);
        H5Aclose(a);
        return H5I_INVALID_HID;
    }
    *ft = H5Aget_type(a);
    if (*ft < 0) {
        obj_path(obj, name, path, sizeof(path));
        h5_rd_fail(rd, -EIO, "%s: unreadable attribute type", path);
        H5Aclose(a);
        return H5I_INVALID_HID;
    }
    *rc = 0;
    return a;
}

/* h5_rd_attr_double; skip_str: a string is skipped (1, nothing read); known: it exists. */
static int attr_double(struct h5_rd *rd, hid_t obj, const char *name, bool known, bool skip_str,
                       double *out)
{
    hid_t ft;
    int rc;
    hid_t a = attr_open(rd, obj, name, "numeric",
                        (known ? ATTR_KNOWN : 0) | (skip_str ? ATTR_SKIP_STR : 0), &ft, &rc);
    if (a < 0)
        return rc;
    char path[400], got[80];
    if (!std_number(ft)) {
        obj_path(obj, name, path, sizeof(path));
        describe_type(ft, got, sizeof(got));
        rc = h5_rd_fail(rd, -EIO, "%s: expected a scalar numeric attribute, found %s", path, got);
    } else {
        double v;
        if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) {
            obj_path(obj, name, path, sizeof(path));
            rc = h5_rd_fail(rd, -EIO, "%s: cannot read the attribute", path);
        } else {
            *out = v;
        }
    }
    H5Tclose(ft);
    H5Aclose(a);
    return rc;
}

int h5_rd_attr_double(struct h5_rd *rd, hid_t obj, const char *name, double *out)
{
    return attr_double(rd, obj, name, false, false, out);
}

int h5_rd_attr_number(struct h5_rd *rd, hid_t obj, const char *name, double *out)
{
    return attr_double(rd, obj, name, true, true, out);
}

static char *dup_bounded(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = 0;
    }
    return d;
}

/* h5_rd_attr_str; opt: an attribute that is no string is absent (-ENOENT, nothing recorded). */
static int attr_str(struct h5_rd *rd, hid_t obj, const char *name, bool opt, char **out)
{
    *out = NULL;
    hid_t ft;
    int rc;
    hid_t a = attr_open(rd, obj, name, "string", opt ? ATTR_ONLY_STR : 0, &ft, &rc);
    if (a < 0)
        return rc;
    char path[400], got[80];
/* The attribute's path, for a message only (H5Iget_name is not free). */
#define PATH (obj_path(obj, name, path, sizeof(path)), path)
    if (H5Tget_class(ft) != H5T_STRING) {
        describe_type(ft, got, sizeof(got));
        rc = h5_rd_fail(rd, -EIO, "%s: expected a string attribute, found %s", PATH, got);
    } else if (H5Tis_variable_str(ft) > 0) {
        char *s = NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ft));
        if (H5Aread(a, mt, &s) < 0 || !s) {
            rc = h5_rd_fail(rd, -EIO, "%s: cannot read the string attribute", PATH);
        } else {
            size_t len = strnlen(s, rd->str_max + 1);
            if (len > rd->str_max) {
                rc = h5_rd_fail(rd, -EIO, "%s: string attribute longer than %zu bytes", PATH,
                                rd->str_max);
            } else {
                *out = dup_bounded(s, len);
                rc = *out ? 0 : h5_rd_fail(rd, -ENOMEM, "%s: out of memory", PATH);
            }
        }
        if (s)
            H5free_memory(s);
        H5Tclose(mt);
    } else {
        size_t n = H5Tget_size(ft);
        char *s = n && n <= rd->str_max ? calloc(n + 1, 1) : NULL;
        if (n == 0 || n > rd->str_max)
            rc = h5_rd_fail(rd, -EIO, "%s: fixed-length string of %zu bytes (limit %zu)", PATH, n,
                            rd->str_max);
        else if (!s)
            rc = h5_rd_fail(rd, -ENOMEM, "%s: out of memory", PATH);
        else if (H5Aread(a, ft, s) < 0)
            rc = h5_rd_fail(rd, -EIO, "%s: cannot read the string attribute", PATH);
        if (rc)
            free(s);
        else
            *out = s;
    }
    H5Tclose(ft);
    H5Aclose(a);
    return rc;
#undef PATH
}

int h5_rd_attr_str(struct h5_rd *rd, hid_t obj, const char *name, char **out)
{
    return attr_str(rd, obj, name, false, out);
}

int h5_rd_attr_str_opt(struct h5_rd *rd, hid_t obj, const char *name, char **out)
{
    return attr_str(rd, obj, name, true, out);
}

/*
 * Open the object a hard link `name` of parent names. Returns its id (of
 * whatever type), or a negative value: *rc = -ENOENT absent, -EIO recorded.
 */
static hid_t link_open(struct h5_rd *rd, hid_t parent, const char *name, const char *want, int *rc)
{
    char path[400];
    int there = h5_rd_link_exists(rd, parent, name);
    *rc = there < 0 ? -EIO : -ENOENT;
    if (there <= 0)
        return H5I_INVALID_HID;
    *rc = -EIO;
    H5L_info_t li;
    if (H5Lget_info(parent, name, &li, H5P_DEFAULT) < 0) {
        obj_path(parent, name, path, sizeof(path));
        h5_rd_fail(rd, -EIO, "%s: unreadable link", path);
        return H5I_INVALID_HID;
    }
    if (li.type != H5L_TYPE_HARD) {
        obj_path(parent, name, path, sizeof(path));
        h5_rd_fail(rd, -EIO, "%s: expected %s, found %s (not followed)", path, want,
                   li.type == H5L_TYPE_SOFT ? "a soft link" : "an external link");
        return H5I_INVALID_HID;
    }
    hid_t o = H5Oopen(parent, name, H5P_DEFAULT);
    if (o < 0) {
        obj_path(parent, name, path, sizeof(path));
        h5_rd_fail(rd, -EIO, "%s: cannot open the object", path);
        return H5I_INVALID_HID;
    }
    *rc = 0;
    return o;
}

static const char *kind_of(hid_t o)
{
    switch (H5Iget_type(o)) {
    case H5I_GROUP:
        return "a group";
    case H5I_DATASET:
        return "a dataset";
    case H5I_DATATYPE:
        return "a named datatype";
    default:
        return "an object of unknown kind";
    }
}

hid_t h5_rd_group_rc(struct h5_rd *rd, hid_t parent, const char *name, int *rc)
{
    hid_t o = link_open(rd, parent, name, "a group", rc);
    if (o < 0)
        return H5I_INVALID_HID;
    if (H5Iget_type(o) != H5I_GROUP) {
        char path[400];
        obj_path(parent, name, path, sizeof(path));
        *rc = h5_rd_fail(rd, -EIO, "%s: expected a group, found %s", path, kind_of(o));
        H5Oclose(o);
        return H5I_INVALID_HID;
    }
    return o;
}

hid_t h5_rd_group(struct h5_rd *rd, hid_t parent, const char *name)
{
    int rc;
    return h5_rd_group_rc(rd, parent, name, &rc);
}

/* How the data are stored: in the file, with filters we know. NULL when fine, else what is wrong.
 */
static const char *storage_problem(hid_t d, bool *deflated, uint64_t *chunk_elems, char *buf,
                                   size_t n)
{
    hid_t dcpl = H5Dget_create_plist(d);
    const char *bad = NULL;
    *deflated = false;
    *chunk_elems = 0;
    if (dcpl < 0)
        return "unreadable creation properties";
    H5D_layout_t lay = H5Pget_layout(dcpl);
    if (lay == H5D_CHUNKED) {
        hsize_t cd[H5S_MAX_RANK];
        int r = H5Pget_chunk(dcpl, H5S_MAX_RANK, cd);
        uint64_t e = r > 0 ? 1 : 0;
        for (int i = 0; i < r && e; i++)
            e = cd[i] && e <= CHUNK_MAX_BYTES / cd[i] ? e * cd[i] : 0;
        if (!e) {
            snprintf(buf, n, "chunks over %llu MiB", (unsigned long long)(CHUNK_MAX_BYTES >> 20));
            bad = buf;
        }
        *chunk_elems = e;
    } else if (lay != H5D_CONTIGUOUS && lay != H5D_COMPACT) {
        bad = lay == H5D_VIRTUAL ? "virtual storage (data in other files)" : "an unknown layout";
    }
    if (!bad && H5Pget_external_count(dcpl) != 0)
        bad = "external storage (data in other files)";
    int nf = bad ? 0 : H5Pget_nfilters(dcpl);
    if (nf < 0 || nf > MAX_FILTERS)
        bad = "an unreadable filter pipeline";
    for (int i = 0; !bad && i < nf; i++) {
        unsigned flags, conf;
        size_t ne = 0;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ne, NULL, 0, NULL, &conf);
        if (id == H5Z_FILTER_DEFLATE)
            *deflated = true;
        else if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32) {
            snprintf(buf, n, "filter %d (only deflate, shuffle and fletcher32 are read)", (int)id);
            bad = buf;
        }
    }
    H5Pclose(dcpl);
    return bad;
}

/*
 * Open and check 1-D numeric dataset name of grp: *len its values, *bytes
 * what it declares in the file. Returns the dataset id or a negative value
 * (*rc = -ENOENT absent, -EIO recorded).
 */
static hid_t dset_open(struct h5_rd *rd, hid_t grp, const char *name, const H5L_info_t *li,
                       uint64_t *len, int *rc)
{
    static const char want[] = "a 1-D numeric dataset";
    char path[400], got[80], sbuf[96];
    hid_t d;
    if (li) { /* a hard link a walk of grp just met: the object it names, without a lookup */
        d = H5Oopen_by_addr(grp, li->u.address);
        *rc = d >= 0 ? 0
                     : h5_rd_fail(rd, -EIO, "%s: cannot open the object",
                                  (obj_path(grp, name, path, sizeof(path)), path));
    } else {
        d = link_open(rd, grp, name, want, rc);
    }
    if (d < 0)
        return H5I_INVALID_HID;
/* The dataset's path, for a message only (H5Iget_name is not free). */
#define PATH (obj_path(grp, name, path, sizeof(path)), path)
    *rc = -EIO;
    if (H5Iget_type(d) != H5I_DATASET) {
        h5_rd_fail(rd, -EIO, "%s: expected %s, found %s", PATH, want, kind_of(d));
        H5Oclose(d);
        return H5I_INVALID_HID;
    }
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    size_t tsize = ft >= 0 ? H5Tget_size(ft) : 0;
    bool deflated = false;
    uint64_t chunk = 0;
    if (ft < 0 || !std_number(ft)) {
        describe_type(ft, got, sizeof(got));
        h5_rd_fail(rd, -EIO, "%s: expected %s, found a dataset of %s", PATH, want, got);
        goto fail;
    }
    if (sp < 0 || H5Sget_simple_extent_type(sp) != H5S_SIMPLE ||
        H5Sget_simple_extent_ndims(sp) != 1) {
        describe_space(sp, got, sizeof(got));
        h5_rd_fail(rd, -EIO, "%s: expected %s, found %s", PATH, want, got);
        goto fail;
    }
    hsize_t dims[1] = {0};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    if ((uint64_t)dims[0] > H5READ_MAX_ELEMS) {
        h5_rd_fail(rd, -EIO, "%s: declares %llu values (limit %llu)", PATH,
                   (unsigned long long)dims[0], (unsigned long long)H5READ_MAX_ELEMS);
        goto fail;
    }
    const char *bad = storage_problem(d, &deflated, &chunk, sbuf, sizeof(sbuf));
    if (bad) {
        h5_rd_fail(rd, -EIO, "%s: stored with %s", PATH, bad);
        goto fail;
    }
    /* No overflow: dims ≤ 2^28 and tsize ≤ 8. */
    uint64_t declared = (uint64_t)dims[0] * tsize, stored = (uint64_t)H5Dget_storage_size(d);
    if (stored > rd->filesize) {
        h5_rd_fail(rd, -EIO, "%s: claims to store %llu bytes, more than the file's %llu", PATH,
                   (unsigned long long)stored, (unsigned long long)rd->filesize);
        goto fail;
    }
    uint64_t can = stored * (deflated ? H5READ_MAX_RATIO : 1) + H5READ_SLACK;
    if (declared > can) {
        h5_rd_fail(rd, -EIO,
                   "%s: declares %llu values (%llu bytes) but stores only %llu bytes (a "
                   "lying size: %s)",
                   PATH, (unsigned long long)dims[0], (unsigned long long)declared,
                   (unsigned long long)stored,
                   deflated ? "deflate expands at most 1032:1" : "raw storage does not expand");
        goto fail;
    }
    H5Tclose(ft);
    H5Sclose(sp);
    *len = dims[0];
    *rc = 0;
    return d;
fail:
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Oclose(d);
    return H5I_INVALID_HID;
#undef PATH
}

hid_t h5_rd_dset_open(struct h5_rd *rd, hid_t grp, const char *name, const H5L_info_t *li,
                      uint64_t *len, int *rc)
{
    *len = 0;
    return dset_open(rd, grp, name, li, len, rc);
}

int h5_rd_dset_read(struct h5_rd *rd, hid_t d, const char *name, uint64_t len, double **out)
{
    *out = NULL;
    char path[400];
/* The dataset's path, for a message only. */
#define PATH (name ? name : (obj_path(d, NULL, path, sizeof(path)), path))
    uint64_t bytes = len * sizeof(double);
    if (bytes > rd->budget || len > SIZE_MAX / sizeof(double))
        return h5_rd_fail(rd, -EIO,
                          "%s: reading its %llu values would pass this file's read limit of %llu "
                          "MiB (%u × its size, at least %llu MiB)",
                          PATH, (unsigned long long)len,
                          (unsigned long long)(budget_for(rd->filesize) >> 20), H5READ_MAX_RATIO,
                          (unsigned long long)(H5READ_MIN_BUDGET >> 20));
    rd->budget -= bytes;
    double *v = malloc(len ? (size_t)bytes : sizeof(double));
    int rc = 0;
    if (!v)
        rc = h5_rd_fail(rd, -ENOMEM, "%s: out of memory for %llu values", PATH,
                        (unsigned long long)len);
    else if (len && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        rc = h5_rd_fail(rd, -EIO, "%s: cannot read the data (damaged file?)", PATH);
#undef PATH
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    return 0;
}

int h5_rd_f64_len(struct h5_rd *rd, hid_t grp, const char *name, uint64_t *n)
{
    int rc;
    *n = 0;
    hid_t d = dset_open(rd, grp, name, NULL, n, &rc);
    if (d >= 0)
        H5Oclose(d);
    return rc;
}

int h5_rd_f64(struct h5_rd *rd, hid_t grp, const char *name, double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    uint64_t len = 0;
    int rc;
    hid_t d = dset_open(rd, grp, name, NULL, &len, &rc);
    if (d < 0)
        return rc;
    rc = h5_rd_dset_read(rd, d, NULL, len, out);
    H5Oclose(d);
    if (!rc)
        *n = (size_t)len;
    return rc;
}

/* A session for one call of the sessionless readers: obj's file's size, long strings. */
static void rd_for(struct h5_rd *rd, hid_t obj)
{
    hid_t f = H5Iget_file_id(obj);
    if (f >= 0) {
        h5_rd_init(rd, f);
        H5Fclose(f);
    } else {
        rd_reset(rd, 0, H5READ_MAX_STR);
    }
    rd->str_max = H5READ_MAX_TEXT;
}

int h5_read_attr_double(hid_t obj, const char *name, double *out)
{
    struct h5_rd rd;
    rd_for(&rd, obj);
    return h5_rd_attr_double(&rd, obj, name, out);
}

int h5_read_attr_str(hid_t obj, const char *name, char **out)
{
    struct h5_rd rd;
    rd_for(&rd, obj);
    return h5_rd_attr_str(&rd, obj, name, out);
}

int h5_read_f64(hid_t grp, const char *name, double **out, size_t *n)
{
    struct h5_rd rd;
    rd_for(&rd, grp);
    return h5_rd_f64(&rd, grp, name, out, n);
}

/* ------------------------------------------------ process-wide bounds */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Whole seconds of CPU time (user + system) in ru. */
static unsigned long long cpu_seconds(const struct rusage *ru)
{
    unsigned long long us =
        (unsigned long long)ru->ru_utime.tv_usec + (unsigned long long)ru->ru_stime.tv_usec;
    return (unsigned long long)ru->ru_utime.tv_sec + (unsigned long long)ru->ru_stime.tv_sec +
           us / 1000000;
}

/*
 * SIGXCPU: say why and leave. Async-signal-safe: getrlimit and write are plain
 * system calls, the message is built on the stack. The figure is the limit.
 */
static void cpu_exceeded(int code)
{
    static const char head[] =
        "tidesim: stopped: reading results files took more CPU time than allowed (";
    static const char tail[] = " s; docs/security.md); the file may be damaged or hostile\n";
    char msg[sizeof(head) + sizeof(tail) + 24];
    size_t n = 0;
    memcpy(msg, head, sizeof(head) - 1);
    n += sizeof(head) - 1;
    /* Linux raises the soft limit by one second as it signals (so that SIGXCPU comes again
     * a second later): the limit passed is one less than the one now set. */
    struct rlimit rl;
    unsigned long long v = 0;
    if (getrlimit(RLIMIT_CPU, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 0)
        v = (unsigned long long)rl.rlim_cur - 1;
    char digits[24];
    size_t k = 0;
    do {
        digits[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && k < sizeof(digits));
    while (k)
        msg[n++] = digits[--k];
    memcpy(msg + n, tail, sizeof(tail) - 1);
    n += sizeof(tail) - 1;
    ssize_t w = write(STDERR_FILENO, msg, n);
    (void)w;
    _exit(code);
}

static void cpu_exceeded_1(int sig)
{
    (void)sig;
    cpu_exceeded(1);
}

static void cpu_exceeded_2(int sig)
{
    (void)sig;
    cpu_exceeded(2);
}

int h5_rd_limit_process(unsigned cpu_s, uint64_t as_bytes, int exit_code)
{
    if (cpu_s > 0) {
        struct rusage ru;
        struct rlimit rl;
        if (getrusage(RUSAGE_SELF, &ru) != 0 || getrlimit(RLIMIT_CPU, &rl) != 0)
            return -errno;
        /* Whole seconds used so far plus the allowance (RLIMIT_CPU counts whole seconds:
         * the process gets between cpu_s - 1 and cpu_s more). */
        rlim_t want = (rlim_t)cpu_seconds(&ru) + cpu_s;
        if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
            want = rl.rlim_max;
        if (rl.rlim_cur == RLIM_INFINITY || want < rl.rlim_cur) {
            struct sigaction sa;
            memset(&sa, 0, sizeof(sa));
            sa.sa_handler = exit_code == 2 ? cpu_exceeded_2 : cpu_exceeded_1;
            sigemptyset(&sa.sa_mask);
            if (sigaction(SIGXCPU, &sa, NULL) != 0)
                return -errno;
            rl.rlim_cur = want;
            if (setrlimit(RLIMIT_CPU, &rl) != 0)
                return -errno;
        }
    }
    if (as_bytes > 0 && !UNDER_ASAN) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_AS, &rl) != 0)
            return -errno;
        rlim_t want = (rlim_t)as_bytes;
        if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
            want = rl.rlim_max;
        if (rl.rlim_cur == RLIM_INFINITY || want < rl.rlim_cur) {
            rl.rlim_cur = want;
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                return -errno;
        }
    }
    return 0;
}

/* ------------------------------------------------ reading in a child first */

/* Sanitizer runtime hooks, present only in sanitizer and fuzz builds. */
void __sanitizer_set_report_path(const char *path) __attribute__((weak));
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

void h5_rd_child_quiet(void)
{
    /* Standard error is /dev/null below; "stderr" sends reports there (a path would get
     * ".<pid>" appended and be created). */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
    }
    if (__sanitizer_set_report_path)
        __sanitizer_set_report_path("stderr");
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(NULL);
    static const int sigs[] = {SIGSEGV, SIGBUS,  SIGABRT, SIGFPE, SIGILL,
                               SIGTRAP, SIGALRM, SIGXCPU, SIGINT, SIGTERM};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int h5_rd_child_lost(int st, bool timed_out, unsigned timeout_ms, char *why, size_t n)
{
    if (timed_out) {
        if (timeout_ms % 1000 == 0)
            snprintf(why, n, "reading it took more than %u s (the limit; docs/security.md)",
                     timeout_ms / 1000);
        else
            snprintf(why, n, "reading it took more than %u ms (the limit; docs/security.md)",
                     timeout_ms);
        return -ETIMEDOUT;
    }
    if (WIFSIGNALED(st))
        snprintf(why, n,
                 "the HDF5 library crashed reading it (signal %d); the file is damaged or "
                 "hostile",
                 WTERMSIG(st));
    else
        snprintf(why, n,
                 "the HDF5 library failed reading it (exit status %d); the file is damaged "
                 "or hostile",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return -ECANCELED;
}

/*
 * The kernel sends SIGKILL when the parent dies (kill -9 included), so no child runs on and
 * writes into a folder nobody will merge; a parent that died before the prctl is caught by
 * getppid(), which then names another process.
 */
void h5_rd_die_with_parent(pid_t parent)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(1);
}

int h5_rd_preflight(int (*probe)(void *arg, char *why, size_t n), void *arg, unsigned timeout_ms,
                    char *why, size_t n)
{
    int fd[2];
    if (pipe(fd) != 0) {
        int e = errno;
        snprintf(why, n, "cannot start the reading process (%s)", strerror(e));
        return -e;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        snprintf(why, n, "cannot start the reading process (%s)", strerror(e));
        return -e;
    }
    if (pid == 0) {
        close(fd[0]);
        /* Dies with the command (kill -9 of a replicated run must leave nothing running
         * that could still write a complete-looking file: the merge is written here too). */
        h5_rd_die_with_parent(parent);
        h5_rd_child_quiet();
        char msg[1024] = "";
        int32_t rc = (int32_t)probe(arg, msg, sizeof(msg));
        uint32_t len = (uint32_t)strnlen(msg, sizeof(msg) - 1);
        char head[8];
        memcpy(head, &rc, 4);
        memcpy(head + 4, &len, 4);
        write_all(fd[1], head, sizeof(head));
        write_all(fd[1], msg, len);
        _exit(0);
    }
    close(fd[1]);
    /* The child's verdict: an 8-byte header (code, message length), then the message. */
    char buf[8 + 1024];
    size_t got = 0;
    bool timed_out = false;
    double deadline = now_s() + (double)timeout_ms / 1000.0;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {.fd = fd[0], .events = POLLIN};
        int pr = poll(&p, 1, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue; /* timeout: the deadline test above decides */
        ssize_t r = read(fd[0], buf + got, sizeof(buf) - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* EOF: the child exited (or closed its end by dying) */
        got += (size_t)r;
        if (got == sizeof(buf))
            break;
    }
    close(fd[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (timed_out)
        return h5_rd_child_lost(st, true, timeout_ms, why, n);
    int32_t rc;
    uint32_t len;
    if (got >= 8) {
        memcpy(&rc, buf, 4);
        memcpy(&len, buf + 4, 4);
    }
    if (got < 8 || len > got - 8 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return h5_rd_child_lost(st, false, timeout_ms, why, n);
    if (rc == 0)
        return 0;
    snprintf(why, n, "%.*s", (int)len, buf + 8);
    return rc;
}
