/*
 * evq.c — implicit 4-ary min-heap of (time, seq) keys with a slot table and
 * lazy cancellation.
 *
 * Invariants (checked by the tests, not at run time):
 *   - heap[0..n) satisfies the heap property on (time, seq); seq is unique per
 *     queue, so the order is total and equal times pop in push order.
 *   - A heap entry is live iff its slot's seq equals the entry's seq (both
 *     packed as described in evq.h); exactly `live` entries are live, the
 *     other n - live are stale (cancelled, or the popped root).
 *   - A slot is in use (its event pending) iff its seq field holds a seq; a
 *     free slot holds EVQ_SLOT_FREE | next, and free slots form a LIFO list
 *     from free_head (push and pop O(1)), so the slot freed by a pop is reused
 *     by the next push and is still in cache.
 *   - seqs are issued once per queue (0, 1, 2, ...), so a handle or heap entry
 *     of a fired or cancelled event can never match a later event of the
 *     same slot. (This replaces per-slot generation counters, which needed
 *     slot retirement at wrap and 8 more bytes per heap entry.)
 *
 * Compaction: when stale entries outnumber live ones and n > EVQ_COMPACT_MIN,
 * the heap is rebuilt from its live entries (O(n) Floyd heapify). A
 * compaction needs more than `live` cancellations since the previous one, so
 * it costs O(1) amortized per cancel. Right after any cancel,
 * n <= max(2·live, EVQ_COMPACT_MIN); pops never grow n, so cancellations
 * cannot bloat the heap beyond that.
 *
 * Speed (bench/bench_evq.c, hold model; see the commit log for figures):
 *   - The key (time, seq) is compared as one unsigned 128-bit integer (time
 *     with its sign bit flipped in the high word, stored so at push; the low
 *     word is seq << 24 | slot, whose order is seq's): this compiles to
 *     cmp/sbb and lets the 4-way child selection run without branches. Two
 *     separate 64-bit compares measured 20-35% slower branch-free and up to
 *     70% slower with branches.
 *   - Records are 16 bytes and the heap is offset so that every family of
 *     four children (heap[4i+1..4i+4]) fills exactly one 64-byte cache line:
 *     one line per level on the way down (24-byte records took two).
 *   - Pop moves the hole from the root down to a leaf along the smallest
 *     children (no compare against the moving entry), then sifts the last
 *     entry up from there (Floyd's bottom-up deletion); moves are hole-based,
 *     never swaps.
 *   - Below the cached top of the heap, each level prefetches the 16
 *     grandchildren (four lines) so the next level's load overlaps this one;
 *     deep in a big heap also the 64 great-grandchildren, two levels ahead.
 *   - For big queues, pop prefetches the slot of the root's smallest child
 *     (the next event to pop) before descending, hiding the one random access
 *     into the slot table that every pop needs.
 *   - Pop leaves the popped entry at the root, stale (root_stale), and the
 *     next push takes its place (hole to a leaf, then the new entry sifts
 *     up, as in a pop): a handler that schedules an
 *     event (a batch completion scheduling the next batch, the hold model)
 *     costs one sift instead of a removal plus a sift-up. If the next
 *     operation is a pop instead, the stale root goes as any stale entry does.
 *     Invariant: root_stale implies n > 0 and heap[0] stale.
 */
#include "sim/core/evq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EVQ_ARITY       4
#define EVQ_MIN_CAP     16
#define EVQ_COMPACT_MIN 1024
#define EVQ_SLOT_FREE   (UINT64_C(1) << 63) /* marks a free slot's seq field; seqs stay below */
#define EVQ_SLOT_MASK   ((UINT64_C(1) << EVQ_SLOT_BITS) - 1)
#define EVQ_HEAP_SKEW   3 /* entries before heap[0] in its block: heap[1] is line-aligned */
#define EVQ_LINE_BYTES  ((size_t)64)
#define EVQ_HUGE_BYTES  ((size_t)2 << 20)
/* Prefetch grandchildren only once the children start at this index: the
 * heap's first few hundred entries (a few KiB) stay in L1 during a run. */
#define EVQ_PREFETCH_FROM 256
/* Families from this index on (level 5 and below, beyond the 16 KiB of heap
 * above them) also prefetch two levels ahead: 10^6 hold ~280 -> ~216 ns median
 * of six interleaved runs (4096: ~231, 2048: ~221); no change at 10^5 and below. */
#define EVQ_DEEP_PREFETCH_FROM 1024
/* Queue size from which the next slot is prefetched (slot table > 512 KiB). */
#define EVQ_SLOT_PREFETCH_FROM 16384

/* Times are stored with the sign bit flipped, so that unsigned order is time order. */
static inline uint64_t time_key(sim_time t)
{
    return (uint64_t)t ^ (UINT64_C(1) << 63);
}

static inline sim_time key_time(uint64_t k)
{
    return (sim_time)(k ^ (UINT64_C(1) << 63));
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 evq_key;

static inline evq_key entry_key(const struct evq_entry *e)
{
    return ((evq_key)e->tkey << 64) | e->id;
}

static inline bool entry_before(const struct evq_entry *a, const struct evq_entry *b)
{
    return entry_key(a) < entry_key(b);
}
#else
static inline bool entry_before(const struct evq_entry *a, const struct evq_entry *b)
{
    return a->tkey < b->tkey || (a->tkey == b->tkey && a->id < b->id);
}
#endif

static inline uint32_t entry_slot(const struct evq_entry *e) /* 0-based */
{
    return (uint32_t)(e->id & EVQ_SLOT_MASK);
}

static inline bool entry_is_live(const struct evq *q, const struct evq_entry *e)
{
    return q->slots[entry_slot(e)].seq == e->id >> EVQ_SLOT_BITS;
}

/* Move the hole at i up until x fits, then store x there. */
static inline void sift_up(struct evq_entry *heap, size_t i, struct evq_entry x)
{
    while (i > 0) {
        size_t parent = (i - 1) / EVQ_ARITY;
        if (!entry_before(&x, &heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = x;
}

/* Index of the smallest child among heap[first..min(first+4, n)); requires first < n. */
static inline size_t min_child(const struct evq_entry *heap, size_t first, size_t n)
{
    if (first + EVQ_ARITY <= n) {
        /* Full family: a branch-free tournament of two pairs (the winner is
         * unpredictable, so a branch here mispredicts half the time). */
        const struct evq_entry *c = &heap[first];
#ifdef __SIZEOF_INT128__
        evq_key k0 = entry_key(&c[0]), k1 = entry_key(&c[1]);
        evq_key k2 = entry_key(&c[2]), k3 = entry_key(&c[3]);
        bool l01 = k1 < k0, l23 = k3 < k2;
        evq_key ka = l01 ? k1 : k0, kb = l23 ? k3 : k2;
        bool lab = kb < ka;
#else
        bool l01 = entry_before(&c[1], &c[0]), l23 = entry_before(&c[3], &c[2]);
        bool lab = entry_before(&c[2 + l23], &c[l01]);
#endif
        size_t a = first + l01, b = first + 2 + l23;
        size_t mask = (size_t)0 - (size_t)lab;
        return a ^ ((a ^ b) & mask);
    }
    size_t best = first;
    for (size_t c = first + 1; c < n; c++)
        if (entry_before(&heap[c], &heap[best]))
            best = c;
    return best;
}

/* Move the hole at i down until x fits among heap[0..n), then store x there. */
static void sift_down(struct evq_entry *heap, size_t i, size_t n, struct evq_entry x)
{
    for (;;) {
        size_t first = EVQ_ARITY * i + 1;
        if (first >= n)
            break;
        size_t c = min_child(heap, first, n);
        if (!entry_before(&heap[c], &x))
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = x;
}

/* Move the hole at the root down to a leaf along the smallest children; returns the leaf. */
static inline size_t hole_to_leaf(struct evq_entry *heap, size_t n)
{
    size_t i = 0;
    for (;;) {
        size_t first = EVQ_ARITY * i + 1;
        if (first >= n)
            break;
        size_t g = EVQ_ARITY * first + 1;
        if (first >= EVQ_PREFETCH_FROM && g < n) {
            /* The 16 grandchildren: 256 bytes, four whole lines. Kept inline:
             * gcc 12 takes a helper holding only prefetches for a const
             * function and deletes its calls. */
            const char *p = (const char *)&heap[g];
            for (size_t off = 0; off < 4 * EVQ_LINE_BYTES; off += EVQ_LINE_BYTES)
                __builtin_prefetch(p + off);
            /* Deep in a big heap (beyond L2) one level of lookahead leaves a
             * miss per level exposed: also fetch the 64 great-grandchildren
             * (16 lines), two levels ahead. */
            size_t gg = EVQ_ARITY * g + 1;
            if (first >= EVQ_DEEP_PREFETCH_FROM && gg + 64 <= n) {
                const char *pp = (const char *)&heap[gg];
                for (size_t off = 0; off < 16 * EVQ_LINE_BYTES; off += EVQ_LINE_BYTES)
                    __builtin_prefetch(pp + off);
            }
        }
        size_t c = min_child(heap, first, n);
        heap[i] = heap[c];
        i = c;
    }
    return i;
}

/* Remove heap[0] (bottom-up: hole to a leaf, then the last entry sifts up). */
static inline void heap_remove_top(struct evq *q)
{
    size_t n = --q->n;
    if (n == 0)
        return;
    size_t i = hole_to_leaf(q->heap, n);
    sift_up(q->heap, i, q->heap[n]);
}

/* Replace heap[0] by x (bottom-up too: a new event usually belongs near the leaves). */
static inline void heap_replace_top(struct evq *q, struct evq_entry x)
{
    size_t i = hole_to_leaf(q->heap, q->n);
    sift_up(q->heap, i, x);
}

static void heapify(struct evq_entry *heap, size_t n)
{
    if (n < 2)
        return;
    for (size_t i = (n - 2) / EVQ_ARITY + 1; i-- > 0;)
        sift_down(heap, i, n, heap[i]);
}

/* Drop every stale entry and rebuild the heap in O(n). */
static void compact(struct evq *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->n; i++)
        if (entry_is_live(q, &q->heap[i]))
            q->heap[k++] = q->heap[i];
    q->n = k;
    q->root_stale = false;
    heapify(q->heap, k);
}

/*
 * A block of at least `bytes`, cache-line aligned; blocks of 2 MiB or more are
 * 2 MiB aligned and advised as transparent huge pages, which cut the hold
 * time at 10^6 events by about 10% (fewer TLB misses). NULL when out of memory.
 */
static void *block_alloc(size_t bytes)
{
    size_t align = bytes >= EVQ_HUGE_BYTES ? EVQ_HUGE_BYTES : EVQ_LINE_BYTES;
    if (bytes > SIZE_MAX - align)
        return NULL;
    bytes = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, bytes);
#ifdef MADV_HUGEPAGE
    if (p && align == EVQ_HUGE_BYTES)
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

/* Give the heap room for cap entries (keeping its n entries). 0 or -ENOMEM. */
static int heap_resize(struct evq *q, size_t cap)
{
    if (cap > SIZE_MAX / sizeof *q->heap - EVQ_HEAP_SKEW)
        return -ENOMEM;
    void *mem = block_alloc((cap + EVQ_HEAP_SKEW) * sizeof *q->heap);
    if (!mem)
        return -ENOMEM;
    struct evq_entry *h = (struct evq_entry *)mem + EVQ_HEAP_SKEW;
    if (q->n)
        memcpy(h, q->heap, q->n * sizeof *h);
    free(q->heap_mem);
    q->heap_mem = mem;
    q->heap = h;
    q->cap = cap;
    return 0;
}

static int grow_slots(struct evq *q)
{
    if (q->slot_cap >= EVQ_MAX_SLOTS)
        return -EOVERFLOW;
    uint32_t cap = q->slot_cap > EVQ_MAX_SLOTS / 2 ? EVQ_MAX_SLOTS : 2 * q->slot_cap;
    struct evq_slot *s = block_alloc((size_t)cap * sizeof *s);
    if (!s)
        return -ENOMEM;
    if (q->nslots)
        memcpy(s, q->slots, (size_t)q->nslots * sizeof *s);
    free(q->slots);
    q->slots = s;
    q->slot_cap = cap;
    return 0;
}

int evq_init(struct evq *q, size_t capacity_hint)
{
    memset(q, 0, sizeof *q);
    size_t cap = capacity_hint > EVQ_MIN_CAP ? capacity_hint : EVQ_MIN_CAP;
    if (cap > EVQ_MAX_SLOTS)
        cap = EVQ_MAX_SLOTS;
    q->slots = block_alloc(cap * sizeof *q->slots);
    if (!q->slots || heap_resize(q, cap) < 0) {
        evq_release(q);
        return -ENOMEM;
    }
    q->slot_cap = (uint32_t)cap;
    return 0;
}

void evq_release(struct evq *q)
{
    free(q->heap_mem);
    free(q->slots);
    memset(q, 0, sizeof *q);
}

int evq_push(struct evq *q, sim_time t, evq_fn fn, void *ctx, uint64_t arg, struct evq_handle *out)
{
    /* Secure all memory first so that a failure leaves the queue unchanged. */
    if (q->next_seq >= EVQ_MAX_SEQ)
        return -EOVERFLOW;
    if (q->n == q->cap && !q->root_stale) {
        if (q->cap > SIZE_MAX / 4 / sizeof *q->heap || heap_resize(q, 2 * q->cap) < 0)
            return -ENOMEM;
    }
    if (q->free_head == 0 && q->nslots == q->slot_cap) {
        int rc = grow_slots(q);
        if (rc < 0)
            return rc;
    }

    uint32_t slot; /* 1-based */
    if (q->free_head != 0) {
        slot = q->free_head;
        q->free_head = (uint32_t)(q->slots[slot - 1].seq & EVQ_SLOT_MASK);
    } else {
        slot = ++q->nslots;
    }
    struct evq_slot *s = &q->slots[slot - 1];
    uint64_t seq = q->next_seq++;
    s->fn = fn;
    s->ctx = ctx;
    s->arg = arg;
    s->seq = seq;

    struct evq_entry e = {.tkey = time_key(t), .id = seq << EVQ_SLOT_BITS | (slot - 1)};
    if (q->root_stale) {
        q->root_stale = false;
        heap_replace_top(q, e);
    } else {
        sift_up(q->heap, q->n++, e);
    }
    q->live++;
    if (out) {
        out->slot = slot;
        out->seq = seq;
    }
    return 0;
}

/* The slot of a pending event's handle, or NULL if the handle is stale or zero. */
static inline struct evq_slot *handle_slot(const struct evq *q, struct evq_handle h)
{
    if (h.slot - 1u >= q->nslots) /* slot 0 wraps to UINT32_MAX and fails too */
        return NULL;
    struct evq_slot *s = &q->slots[h.slot - 1];
    return s->seq == h.seq ? s : NULL; /* a free slot's seq field never equals a seq */
}

static inline void slot_free(struct evq *q, struct evq_slot *s, uint32_t slot)
{
    s->seq = EVQ_SLOT_FREE | q->free_head;
    q->free_head = slot;
}

bool evq_cancel(struct evq *q, struct evq_handle h)
{
    struct evq_slot *s = handle_slot(q, h);
    if (!s)
        return false;
    slot_free(q, s, h.slot);
    q->live--;
    if (q->n > EVQ_COMPACT_MIN && q->n - q->live > q->live)
        compact(q);
    return true;
}

bool evq_is_pending(const struct evq *q, struct evq_handle h)
{
    return handle_slot(q, h) != NULL;
}

/* Pop stale entries off the top; returns false when the heap is empty. */
static inline bool drop_stale_top(struct evq *q)
{
    q->root_stale = false;
    while (q->n > 0) {
        if (entry_is_live(q, &q->heap[0]))
            return true;
        heap_remove_top(q);
    }
    return false;
}

bool evq_pop_until(struct evq *q, sim_time until, struct evq_event *out)
{
    if (!drop_stale_top(q) || q->heap[0].tkey > time_key(until))
        return false;
    if (q->n >= EVQ_SLOT_PREFETCH_FROM)
        __builtin_prefetch(&q->slots[entry_slot(&q->heap[min_child(q->heap, 1, q->n)])]);
    const struct evq_entry *top = &q->heap[0];
    uint32_t slot = entry_slot(top) + 1;
    struct evq_slot *s = &q->slots[slot - 1];
    out->time = key_time(top->tkey);
    out->seq = top->id >> EVQ_SLOT_BITS;
    out->fn = s->fn;
    out->ctx = s->ctx;
    out->arg = s->arg;
    slot_free(q, s, slot);
    q->live--;
    q->root_stale = true; /* removed by the next push or pop */
    return true;
}

bool evq_pop(struct evq *q, struct evq_event *out)
{
    return evq_pop_until(q, SIM_TIME_MAX, out);
}

sim_time evq_peek_time(struct evq *q)
{
    return drop_stale_top(q) ? key_time(q->heap[0].tkey) : SIM_TIME_MAX;
}
