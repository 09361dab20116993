/*
 * evq.h — the pending-event queue of the engine.
 *
 * An implicit 4-ary min-heap of 16-byte records ordered by (time, seq):
 * equal times pop in push order (seq is a per-queue counter). The callback,
 * its context and argument live in a slot table; the heap record carries the
 * event's seq and slot index packed in one word (seq in the high 40 bits), and
 * the slot remembers the seq of the event it holds. Cancellation frees the
 * slot (lazy deletion): the heap record no longer matches its slot and is
 * skipped when it reaches the top, never searched for. A handle is {slot,
 * seq}; seqs are never reused, so once its event has fired or been cancelled
 * the handle is stale for good and evq_cancel() on it returns false. The zero
 * handle is never valid.
 *
 * Limits: at most EVQ_MAX_SLOTS (2^24 - 1) events pending at once and
 * EVQ_MAX_SEQ (2^40) pushes over a queue's life (30 hours of wall time at
 * 10^7 pushes per second); beyond them evq_push() returns -EOVERFLOW.
 *
 * The queue knows nothing of GPUs. It owns its arrays; callers keep their ctx.
 * No global state: any number of queues may live in one process.
 */
#ifndef TIDESIM_CORE_EVQ_H
#define TIDESIM_CORE_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/simtime.h"

typedef void (*evq_fn)(void *ctx, uint64_t arg);

#define EVQ_SLOT_BITS 24
#define EVQ_MAX_SLOTS ((UINT32_C(1) << EVQ_SLOT_BITS) - 1u) /* slot numbers 1..this */
#define EVQ_MAX_SEQ   (UINT64_C(1) << (64 - EVQ_SLOT_BITS))

struct evq_handle {
    uint32_t slot; /* 1-based; 0 = no event */
    uint64_t seq;
};

struct evq_event {
    sim_time time;
    uint64_t seq;
    evq_fn fn;
    void *ctx;
    uint64_t arg;
};

struct evq_entry { /* heap record: 16 bytes, four to a cache line */
    uint64_t tkey; /* the time with its sign bit flipped: orders as an unsigned integer */
    uint64_t id;   /* seq << EVQ_SLOT_BITS | (slot - 1) */
};

struct evq_slot {
    evq_fn fn;
    void *ctx;
    uint64_t arg;
    uint64_t seq; /* seq of the pending event; free: EVQ_SLOT_FREE | next free slot (1-based) */
};

struct evq {
    struct evq_entry *heap; /* heap[1] starts a cache line, as every family of four does */
    void *heap_mem;         /* the allocation heap points into */
    size_t n, cap;          /* heap entries, including stale ones */
    bool root_stale;        /* heap[0] is the entry of the event popped last (see evq.c) */
    struct evq_slot *slots;
    uint32_t nslots, slot_cap, free_head;
    size_t live; /* pending, not cancelled */
    uint64_t next_seq;
};

/* Initialise an empty queue. Returns 0, or -ENOMEM (q left empty, safe to release). */
int evq_init(struct evq *q, size_t capacity_hint);
void evq_release(struct evq *q);

/*
 * Schedule fn(ctx, arg) at time t. If out is not NULL it receives the handle.
 * Returns 0, or -ENOMEM / -EOVERFLOW (limits above) with the queue unchanged.
 */
int evq_push(struct evq *q, sim_time t, evq_fn fn, void *ctx, uint64_t arg, struct evq_handle *out);

/* Cancel a pending event. Returns true if it was pending, false for a stale or zero handle. */
bool evq_cancel(struct evq *q, struct evq_handle h);

/* True if the handle's event is still pending. */
bool evq_is_pending(const struct evq *q, struct evq_handle h);

/*
 * Remove the earliest live event into *out. Returns false when no live event
 * is left. The event's handle becomes stale.
 */
bool evq_pop(struct evq *q, struct evq_event *out);

/* Like evq_pop(), but only an event with time <= until (one pass over the top of the heap). */
bool evq_pop_until(struct evq *q, sim_time until, struct evq_event *out);

/* Time of the earliest live event, or SIM_TIME_MAX if none. May drop stale entries. */
sim_time evq_peek_time(struct evq *q);

/* Number of live (pending, not cancelled) events. */
static inline size_t evq_size(const struct evq *q)
{
    return q->live;
}

#endif
