/* mig.c — MIG profile tables, layout parsing and placement (see mig.h). */
#include "models/mig.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STARTS_0_6  0x7fu /* {0,1,2,3,4,5,6} */
#define STARTS_EVEN 0x55u /* {0,2,4,6} */
#define STARTS_024  0x15u /* {0,2,4} */
#define STARTS_04   0x11u /* {0,4} */
#define STARTS_0    0x01u /* {0} */

#define MIG_ROWS 7 /* every table below has 7 profiles */

/*
 * A100-SXM4-40GB: NVIDIA MIG User Guide "Supported MIG Profiles" and the DGX-A100
 * mock in NVIDIA/go-nvml pkg/nvml/mock/dgxa100/mig-profile.go (SMs, MiB,
 * placements). GI profile IDs: `nvidia-smi mig -lgip` (jbarrow.ai field notes [weak]).
 * 1g.10gb occupies 2 memory slices per the NVML placements (the guide prints 1/8).
 * One row per GPU, in the order of mig_gpus below.
 */
static const struct mig_profile mig_rows[][MIG_ROWS] = {
    {
        {"1g.5gb", 19, 1, 1, 14, 4864, 7, STARTS_0_6, 1, false},
        {"1g.5gb+me", 20, 1, 1, 14, 4864, 1, STARTS_0_6, 1, true},
        {"1g.10gb", 15, 1, 2, 14, 9856, 4, STARTS_EVEN, 2, false},
        {"2g.10gb", 14, 2, 2, 28, 9856, 3, STARTS_024, 2, false},
        {"3g.20gb", 9, 3, 4, 42, 19968, 2, STARTS_04, 4, false},
        {"4g.20gb", 5, 4, 4, 56, 19968, 1, STARTS_0, 4, false},
        {"7g.40gb", 0, 7, 8, 98, 40192, 1, STARTS_0, 8, false},
    },

    /*
     * A100-SXM4-80GB: same geometry, names double the memory (NVIDIA MIG User
     * Guide). Memory from `nvidia-smi mig -lgip` on an A100 80GB (driver 515,
     * public MIG how-to): 9.50 GiB = 9728 MiB (1g.10gb), 19.50 GiB = 19968 MiB
     * (1g.20gb, 2g.20gb; 19968 MiB 28-SM devices also in XuehaiPan/nvitop PR #8),
     * 39.25 GiB = 40192 MiB (3g/4g), 79.00 GiB = 80896 MiB (7g; 78.50-79.12 GiB
     * across drivers). SMs 14/28/42/56/98 as on the 40 GB card (go-nvml mock).
     */
    {
        {"1g.10gb", 19, 1, 1, 14, 9728, 7, STARTS_0_6, 1, false},
        {"1g.10gb+me", 20, 1, 1, 14, 9728, 1, STARTS_0_6, 1, true},
        {"1g.20gb", 15, 1, 2, 14, 19968, 4, STARTS_EVEN, 2, false},
        {"2g.20gb", 14, 2, 2, 28, 19968, 3, STARTS_024, 2, false},
        {"3g.40gb", 9, 3, 4, 42, 40192, 2, STARTS_04, 4, false},
        {"4g.40gb", 5, 4, 4, 56, 40192, 1, STARTS_0, 4, false},
        {"7g.80gb", 0, 7, 8, 98, 80896, 1, STARTS_0, 8, false},
    },

    /*
     * H100-SXM5-80GB: IDs, max instances, GiB and SMs from `nvidia-smi mig -lgip` run on
     * an H100, as printed in J. Barrow's field notes "NVIDIA MIG"
     * (https://jbarrow.ai/field_notes/nvidia-mig/; a field note, not NVIDIA documentation
     * [weak]): 1g.10gb 9.75 GiB 16 SMs ×7, 1g.20gb 19.62 GiB 26 SMs ×4, 2g.20gb 19.62 GiB
     * 32 SMs ×3, 3g.40gb 39.50 GiB 60 SMs ×2, 4g.40gb 39.50 GiB 64 SMs ×1, 7g.80gb 79.25 GiB
     * 132 SMs ×1; 9.75 / 19.625 / 39.50 / 79.25 GiB -> 9984 / 20096 / 40448 / 81152 MiB.
     * ASSUMED: starts and sizes copied from the A100 geometry (7 compute / 8 memory
     * slices; no public H100 placement table found); the slice counts match.
     */
    {
        {"1g.10gb", 19, 1, 1, 16, 9984, 7, STARTS_0_6, 1, false},
        {"1g.10gb+me", 20, 1, 1, 16, 9984, 1, STARTS_0_6, 1, true},
        {"1g.20gb", 15, 1, 2, 26, 20096, 4, STARTS_EVEN, 2, false},
        {"2g.20gb", 14, 2, 2, 32, 20096, 3, STARTS_024, 2, false},
        {"3g.40gb", 9, 3, 4, 60, 40448, 2, STARTS_04, 4, false},
        {"4g.40gb", 5, 4, 4, 64, 40448, 1, STARTS_0, 4, false},
        {"7g.80gb", 0, 7, 8, 132, 81152, 1, STARTS_0, 8, false},
    },
};

/* The GPU of each row of mig_rows, same order. */
static const char mig_gpus[][24] = {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb"};
_Static_assert(sizeof mig_rows / sizeof mig_rows[0] == sizeof mig_gpus / sizeof mig_gpus[0],
               "one GPU name per profile table");
_Static_assert(MIG_ROWS <= MIG_MAX_PROFILES, "MIG_MAX_PROFILES bounds every table");

const struct mig_profile *mig_profiles(const struct gpu_spec *gpu, size_t *n)
{
    if (n)
        *n = 0;
    if (!gpu || !gpu->mig_capable)
        return NULL;
    for (size_t i = 0; i < sizeof mig_gpus / sizeof mig_gpus[0]; i++) {
        if (strcasecmp(mig_gpus[i], gpu->name) == 0) {
            if (n)
                *n = MIG_ROWS;
            return mig_rows[i];
        }
    }
    return NULL;
}

/* Profile whose name is exactly the len bytes at name (case-insensitive). */
static const struct mig_profile *find_n(const struct mig_profile *tab, size_t ntab,
                                        const char *name, size_t len)
{
    for (size_t i = 0; i < ntab; i++)
        if (strlen(tab[i].name) == len && strncasecmp(tab[i].name, name, len) == 0)
            return &tab[i];
    return NULL;
}

const struct mig_profile *mig_profile_find(const struct gpu_spec *gpu, const char *name)
{
    size_t ntab;
    const struct mig_profile *tab = mig_profiles(gpu, &ntab);
    if (!tab || !name)
        return NULL;
    return find_n(tab, ntab, name, strlen(name));
}

int mig_profile_index(const struct gpu_spec *gpu, const struct mig_profile *p)
{
    size_t ntab;
    const struct mig_profile *tab = mig_profiles(gpu, &ntab);
    for (size_t i = 0; tab && p && i < ntab; i++)
        if (&tab[i] == p)
            return (int)i;
    return -1;
}

double mig_speed_default(const struct gpu_spec *gpu, const struct mig_profile *p, double efficiency)
{
    if (!gpu || !p || gpu->sms <= 0)
        return 0.0;
    double s = efficiency * (double)p->sms / (double)gpu->sms;
    return s > 1.0 ? 1.0 : s;
}

int mig_knobs_init(struct mig_knobs *k, const struct gpu_spec *gpu)
{
    memset(k, 0, sizeof *k);
    size_t ntab;
    if (!mig_profiles(gpu, &ntab))
        return -ENOTSUP;
    k->gpu = gpu;
    k->reconfig_s = MIG_RECONFIG_S_DEFAULT;
    k->drain_grace_s = MIG_DRAIN_GRACE_S_DEFAULT;
    return mig_knobs_set_efficiency(k, MIG_EFFICIENCY_DEFAULT);
}

int mig_knobs_set_efficiency(struct mig_knobs *k, double efficiency)
{
    size_t ntab;
    const struct mig_profile *tab = mig_profiles(k->gpu, &ntab);
    if (!tab)
        return -ENOTSUP;
    if (!(efficiency > 0.0))
        return -EINVAL;
    k->efficiency = efficiency;
    for (size_t i = 0; i < ntab && i < MIG_MAX_PROFILES; i++)
        k->speed[i] = mig_speed_default(k->gpu, &tab[i], efficiency);
    return 0;
}

int mig_knobs_set_speed(struct mig_knobs *k, const char *profile, double speed)
{
    int i = mig_profile_index(k->gpu, mig_profile_find(k->gpu, profile));
    if (i < 0)
        return -ENOENT;
    if (!(speed > 0.0 && speed <= 1.0))
        return -EINVAL;
    k->speed[i] = speed;
    return 0;
}

double mig_knobs_speed(const struct mig_knobs *k, const struct mig_profile *p)
{
    int i = mig_profile_index(k->gpu, p);
    return i < 0 ? 0.0 : k->speed[i];
}

double mig_reconfig_seconds(const struct mig_knobs *k)
{
    return k->drain_grace_s + k->reconfig_s;
}

bool mig_fits_memory(const struct mig_profile *p, double mem_gib)
{
    return p && mem_gib * 1024.0 <= (double)p->memory_mib;
}

/* Append formatted text at *pos; keeps counting past len (snprintf convention). */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t len, size_t *pos,
                                                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = *pos < len ? buf + *pos : NULL;
    size_t room = *pos < len ? len - *pos : 0;
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n;
}

size_t mig_mask_text(unsigned mask, char *buf, size_t len)
{
    size_t pos = 0;
    if (len > 0)
        buf[0] = '\0';
    int s = 0;
    while (s < MIG_MEM_SLOTS) {
        if (!(mask & (1u << s))) {
            s++;
            continue;
        }
        int e = s;
        while (e + 1 < MIG_MEM_SLOTS && (mask & (1u << (e + 1))))
            e++;
        if (e == s)
            append(buf, len, &pos, "%s%d", pos ? "," : "", s);
        else
            append(buf, len, &pos, "%s%d-%d", pos ? "," : "", s, e);
        s = e + 1;
    }
    if (pos == 0)
        append(buf, len, &pos, "none");
    return pos;
}

size_t mig_starts_text(const struct mig_profile *p, char *buf, size_t len)
{
    size_t pos = 0;
    if (len > 0)
        buf[0] = '\0';
    for (int s = 0; p && s < MIG_MEM_SLOTS; s++)
        if (p->starts & (1u << s))
            append(buf, len, &pos, "%s%d", pos ? "," : "", s);
    return pos;
}

size_t mig_layout_format(const struct mig_layout *l, char *buf, size_t len)
{
    size_t pos = 0;
    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        append(buf, len, &pos, "%s%s", i ? "+" : "", l->inst[i].profile->name);
        if (l->inst[i].start >= 0)
            append(buf, len, &pos, "@%d", l->inst[i].start);
    }
    return pos;
}

int mig_layout_compute_slices(const struct mig_layout *l)
{
    int c = 0;
    for (size_t i = 0; i < l->n; i++)
        c += l->inst[i].profile->compute_slices;
    return c;
}

/* Write "subject: reason" into err and return code. */
__attribute__((format(printf, 5, 6))) static int fail(char *err, size_t errlen, int code,
                                                      const char *subject, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return code;
    size_t pos = 0;
    err[0] = '\0';
    append(err, errlen, &pos, "%s: ", subject);
    if (pos < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + pos, errlen - pos, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Length of a UTF-8 '×' or '*' at p, else 0. */
static size_t times_len(const char *p)
{
    if (*p == '*')
        return 1;
    if ((unsigned char)p[0] == 0xc3 && (unsigned char)p[1] == 0x97)
        return 2;
    return 0;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* A repetition count: 1..99. Returns the end pointer, or NULL when not a valid count. */
static const char *parse_count(const char *p, long *out)
{
    if (!isdigit((unsigned char)*p))
        return NULL;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || v < 1 || v > 99)
        return NULL;
    *out = v;
    return end;
}

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '.';
}

int mig_layout_parse(const struct gpu_spec *gpu, const char *text, struct mig_layout *l, char *err,
                     size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->gpu = gpu;
    if (err && errlen)
        err[0] = '\0';
    const char *subject = text ? text : "";
    size_t ntab;
    const struct mig_profile *tab = mig_profiles(gpu, &ntab);
    if (!tab)
        return fail(err, errlen, -ENOTSUP, subject, "%s has no MIG", gpu ? gpu->name : "GPU");
    const char *p = skip_space(subject);
    if (*p == '\0')
        return 0;

    long total = 0;
    for (;;) {
        p = skip_space(p);
        long count = 1;
        bool prefix = false;
        const char *q = parse_count(p, &count);
        if (q) {
            q = skip_space(q);
            size_t t = times_len(q);
            if (t) {
                p = skip_space(q + t);
                prefix = true;
            } else {
                count = 1;
            }
        }
        const char *name = p;
        while (name_char(*p))
            p++;
        if (p[0] == '+' && strncasecmp(p + 1, "me", 2) == 0 && !name_char(p[3]))
            p += 3;
        size_t nlen = (size_t)(p - name);
        if (nlen == 0)
            return fail(err, errlen, -EINVAL, subject, "expected a profile name at '%s'", name);
        const struct mig_profile *prof = find_n(tab, ntab, name, nlen);
        if (!prof) {
            char names[256];
            size_t pos = 0;
            names[0] = '\0';
            for (size_t i = 0; i < ntab; i++)
                append(names, sizeof names, &pos, "%s%s", i ? ", " : "", tab[i].name);
            return fail(err, errlen, -EINVAL, subject,
                        "unknown profile '%.*s' for %s (expected one of: %s)", (int)nlen, name,
                        gpu->name, names);
        }
        int start = -1;
        p = skip_space(p);
        if (*p == '@') {
            p = skip_space(p + 1);
            if (*p < '0' || *p >= '0' + MIG_MEM_SLOTS || isdigit((unsigned char)p[1]))
                return fail(err, errlen, -EINVAL, subject,
                            "expected a memory slice 0-%d after '@' at '%s'", MIG_MEM_SLOTS - 1, p);
            start = *p - '0';
            p = skip_space(p + 1);
        }
        size_t t = times_len(p);
        if (t) {
            q = parse_count(skip_space(p + t), &count);
            if (prefix || !q)
                return fail(err, errlen, -EINVAL, subject,
                            "expected a repetition count 1-99 at '%s'", p);
            p = q;
        }
        for (long i = 0; i < count; i++, total++) {
            if (total < MIG_MAX_INSTANCES) {
                l->inst[total].profile = prof;
                l->inst[total].start = start;
            }
        }
        p = skip_space(p);
        if (*p == '\0')
            break;
        if (*p != '+')
            return fail(err, errlen, -EINVAL, subject, "expected '+' at '%s'", p);
        p++;
    }
    if (total > MIG_MAX_INSTANCES) {
        l->n = 0;
        return fail(err, errlen, -ENOSPC, subject, "more than %d instances", MIG_MAX_INSTANCES);
    }
    l->n = (size_t)total;
    return 0;
}

/* Lowest allowed start of p that is free in mask, or -1. */
static int lowest_free(const struct mig_profile *p, unsigned mask)
{
    for (int s = 0; s + p->size <= MIG_MEM_SLOTS; s++) {
        unsigned bits = ((1u << p->size) - 1u) << s;
        if ((p->starts & (1u << s)) && !(mask & bits))
            return s;
    }
    return -1;
}

static unsigned slot_bits(const struct mig_profile *p, int start)
{
    return ((1u << p->size) - 1u) << start;
}

/* Exhaustive placement search over the instances in order[k..n). */
struct search {
    const struct mig_layout *l;
    size_t order[MIG_MAX_INSTANCES];
    int start[MIG_MAX_INSTANCES]; /* by instance index */
};

static bool search_from(struct search *s, size_t k, unsigned mask)
{
    if (k == s->l->n)
        return true;
    size_t i = s->order[k];
    const struct mig_instance *in = &s->l->inst[i];
    if (in->start >= 0) {
        unsigned bits = slot_bits(in->profile, in->start);
        if (mask & bits)
            return false;
        s->start[i] = in->start;
        return search_from(s, k + 1, mask | bits);
    }
    /* Identical unpinned instances are interchangeable: only try increasing starts. */
    int lo = 0;
    if (k > 0) {
        size_t prev = s->order[k - 1];
        if (s->l->inst[prev].profile == in->profile && s->l->inst[prev].start < 0)
            lo = s->start[prev] + 1;
    }
    for (int st = lo; st + in->profile->size <= MIG_MEM_SLOTS; st++) {
        unsigned bits = slot_bits(in->profile, st);
        if (!(in->profile->starts & (1u << st)) || (mask & bits))
            continue;
        s->start[i] = st;
        if (search_from(s, k + 1, mask | bits))
            return true;
    }
    return false;
}

/* Pinned first, then unpinned by placement size (largest first), stable. */
static void search_order(struct search *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->l->n; i++)
        if (s->l->inst[i].start >= 0)
            s->order[k++] = i;
    for (int size = MIG_MEM_SLOTS; size >= 1; size--)
        for (size_t i = 0; i < s->l->n; i++)
            if (s->l->inst[i].start < 0 && s->l->inst[i].profile->size == size)
                s->order[k++] = i;
}

/* The count checks that need no placement. Returns 0 or the failure code. */
static int check_counts(const struct mig_layout *l, const char *subject, char *err, size_t errlen)
{
    if (l->n > MIG_MAX_INSTANCES)
        return fail(err, errlen, -ENOSPC, subject, "more than %d instances", MIG_MAX_INSTANCES);
    int count[MIG_MAX_PROFILES] = {0};
    int compute = 0, memory = 0;
    for (size_t i = 0; i < l->n; i++) {
        int idx = mig_profile_index(l->gpu, l->inst[i].profile);
        if (idx < 0 || idx >= MIG_MAX_PROFILES)
            return fail(err, errlen, -EINVAL, subject, "instance %zu is not a %s profile", i,
                        l->gpu->name);
        count[idx]++;
        compute += l->inst[i].profile->compute_slices;
        memory += l->inst[i].profile->memory_slices;
    }
    /* Report the first profile, in layout order, that exceeds its maximum. */
    for (size_t i = 0; i < l->n; i++) {
        const struct mig_profile *p = l->inst[i].profile;
        int idx = mig_profile_index(l->gpu, p);
        if (count[idx] > p->max_instances)
            return fail(err, errlen, -ENOSPC, subject, "only %d instance%s of %s fit%s",
                        p->max_instances, p->max_instances == 1 ? "" : "s", p->name,
                        p->max_instances == 1 ? "s" : "");
    }
    if (compute > MIG_COMPUTE_SLICES)
        return fail(err, errlen, -ENOSPC, subject, "needs %d compute slices (at most %d)", compute,
                    MIG_COMPUTE_SLICES);
    if (memory > MIG_MEM_SLOTS)
        return fail(err, errlen, -ENOSPC, subject, "needs %d memory slices (at most %d)", memory,
                    MIG_MEM_SLOTS);
    for (size_t i = 0; i < l->n; i++) {
        const struct mig_instance *in = &l->inst[i];
        if (in->start < 0)
            continue;
        if (in->start >= MIG_MEM_SLOTS || !(in->profile->starts & (1u << in->start))) {
            char starts[32];
            mig_starts_text(in->profile, starts, sizeof starts);
            return fail(err, errlen, -EINVAL, subject,
                        "%s cannot start at memory slice %d (allowed: %s)", in->profile->name,
                        in->start, starts);
        }
    }
    return 0;
}

int mig_layout_place(struct mig_layout *l, const char *subject, char *err, size_t errlen)
{
    char own[256];
    if (err && errlen)
        err[0] = '\0';
    if (!subject) {
        mig_layout_format(l, own, sizeof own);
        subject = own;
    }
    if (!mig_profiles(l->gpu, NULL))
        return fail(err, errlen, -ENOTSUP, subject, "%s has no MIG", l->gpu ? l->gpu->name : "GPU");
    int rc = check_counts(l, subject, err, errlen);
    if (rc)
        return rc;

    /* The driver's way: in the order given, each at its lowest free allowed start. */
    int greedy[MIG_MAX_INSTANCES];
    unsigned mask = 0;
    size_t failed = l->n;
    for (size_t i = 0; i < l->n; i++) {
        const struct mig_instance *in = &l->inst[i];
        int st = in->start;
        if (st >= 0 && (mask & slot_bits(in->profile, st)))
            st = -1;
        else if (st < 0)
            st = lowest_free(in->profile, mask);
        if (st < 0) {
            failed = i;
            break;
        }
        greedy[i] = st;
        mask |= slot_bits(in->profile, st);
    }
    if (failed == l->n) {
        for (size_t i = 0; i < l->n; i++)
            l->inst[i].start = greedy[i];
        l->used = mask;
        return 0;
    }

    /* Any order: exhaustive search (at most 7 instances, symmetric ones pruned). */
    struct search s = {.l = l};
    search_order(&s);
    if (search_from(&s, 0, 0)) {
        unsigned used = 0;
        for (size_t i = 0; i < l->n; i++) {
            l->inst[i].start = s.start[i];
            used |= slot_bits(l->inst[i].profile, s.start[i]);
        }
        l->used = used;
        return 0;
    }

    const struct mig_instance *in = &l->inst[failed];
    char used[32], pin[16] = "";
    mig_mask_text(mask, used, sizeof used);
    if (in->start >= 0)
        snprintf(pin, sizeof pin, "@%d", in->start);
    return fail(err, errlen, -ENOSPC, subject, "no room for %s%s (memory slices %s used)",
                in->profile->name, pin, used);
}

int mig_layout_check(const struct gpu_spec *gpu, const char *text, struct mig_layout *l, char *err,
                     size_t errlen)
{
    int rc = mig_layout_parse(gpu, text, l, err, errlen);
    if (rc)
        return rc;
    return mig_layout_place(l, text, err, errlen);
}
