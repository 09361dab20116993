/*
 * evq.h — the pending-event queue of the engine.
 *
 * An implicit 4-ary min-heap of small records ordered by (time, seq): equal
 * times pop in push order (seq is a per-queue counter). The callback, its
 * context and argument live in a slot table; the heap entry carries the slot
 * index and the slot's generation at push time. Cancellation bumps the slot's
 * generation (lazy deletion): the stale heap entry is skipped when it reaches
 * the top, never searched for. A handle is {slot, gen}; once its event has
 * fired or been cancelled the handle is stale and evq_cancel() on it returns
 * false. The zero handle is never valid.
 *
 * The queue knows nothing of GPUs. It owns its arrays; callers keep their ctx.
 * No global state: any number of queues may live in one process.
 */
#ifndef TIDESIM_EVQ_H
#define TIDESIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/simtime.h"

typedef void (*evq_fn)(void *ctx, uint64_t arg);

struct evq_handle {
    uint32_t slot; /* 1-based; 0 = no event */
    uint32_t gen;
};

struct evq_event {
    sim_time time;
    uint64_t seq;
    evq_fn fn;
    void *ctx;
    uint64_t arg;
};

struct evq_entry { /* heap record: 24 bytes */
    uint64_t tkey; /* the time with its sign bit flipped: orders as an unsigned integer */
    uint64_t seq;
    uint32_t slot;
    uint32_t gen;
};

struct evq_slot {
    evq_fn fn;
    void *ctx;
    uint64_t arg;
    uint32_t gen;       /* bumped when the event fires or is cancelled; 1..UINT32_MAX-1 */
    uint32_t next_free; /* free list link, 1-based; 0 = end */
};

struct evq {
    struct evq_entry *heap;
    size_t n, cap;   /* heap entries, including stale ones */
    bool root_stale; /* heap[0] is the entry of the event popped last (see evq.c) */
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
 * Returns 0, or -ENOMEM with the queue unchanged.
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
