/*
 * share.h — what one card gives each of its tenants under a sharing mode.
 *
 * SimGrid-style resource model for ONE card: given the tenants currently on it
 * and the mode, share_speeds() answers "how fast does each tenant progress
 * right now?". The caller (the simulator) re-asks whenever the set of active
 * tenants changes and re-plans completion events; nothing here keeps state.
 *
 * speed = progress rate as a fraction of running alone on a full, unshared
 * GPU (1 = no slowdown; a training step that takes 1 s alone takes 1/speed s).
 *
 *   exclusive  one tenant; speed 1 (nvidia.com/gpu: 1).
 *   timeslice  device-plugin replicas: the n active tenants take turns in
 *              slices (ts_slice_s, or the tenant's own ts_slice_s) with a switch
 *              s between them; tenant i gets T_i / Σ(T_j + s), i.e. (1 - o)/n
 *              with equal slices, or 1 when alone ("CUDA will simply give an
 *              equal share of time to all of the GPU processes": NVIDIA,
 *              "Improving GPU Utilization in Kubernetes"). A batch of an
 *              inference tenant is priced by share_ts_batch() below.
 *   mps        concurrent kernels: each client wants u = min(demand, sm_cap) of
 *              the SMs; if the u's exceed the card they are max-min shared
 *              (water-filling). Then an interference slowdown
 *                  speed = (sms_granted / demand) / (1 + k · Σ_{others} u_j)
 *              with k = mps_interference. At most 48 clients (NVIDIA MPS
 *              documentation).
 *   mig        each tenant runs on its own instance at the instance's speed
 *              factor (mig.h); tenants of one instance (group) time-slice it.
 *
 * Memory (share_oom) and fault blast radius (share_fault_victims) follow the
 * isolation NVIDIA documents: time-slicing has none (an overflowing allocation
 * OOM-kills its tenant, an over-user's excess its card-mates; a fatal fault
 * ends every tenant on the card) unless HAMi-style quotas are enforced (a
 * tenant over its limit fails alone); MPS has a
 * per-client pinned memory limit (over it => that client's OOM only) but
 * reports a fatal fault to every client on the GPU, which then exit; MIG
 * isolates memory (oversized jobs are refused at placement, mig_fits_memory)
 * and faults (only the instance's tenants die).
 *
 * Units: seconds, fractions in [0, 1], memory in GiB. Pure functions; arrays
 * are caller-owned and never kept.
 */
#ifndef TIDESIM_MODELS_SHARE_H
#define TIDESIM_MODELS_SHARE_H

#include <stdbool.h>
#include <stddef.h>

enum share_mode { SHARE_EXCLUSIVE, SHARE_TIMESLICE, SHARE_MPS, SHARE_MIG };

/*
 * Time-slice length: SHORT ≈ 2 ms. UNOFFICIAL: only the enum
 * DEFAULT/SHORT/MEDIUM/LONG is documented (nvidia-smi compute-policy,
 * developer.nvidia.com "Improving GPU Utilization in Kubernetes"); 2/10/30 ms
 * come from a Red Hat workshop [weak] (research notes §2, §9.5).
 */
#define SHARE_TS_SLICE_S_DEFAULT 0.002

/*
 * Context-switch overhead under time-slicing, fraction of card time lost when
 * >= 2 tenants are active. NOT FOUND (calibration knob). Derivation of the
 * default 0.05: time-sliced contexts stay resident, so a switch costs far less
 * than PipeSwitch's 3.6-6.6 ms task switch, which includes moving the model
 * (PipeSwitch, OSDI 2020), and more than REEF's µs-scale preemption; 0.05 equals a
 * ~105 µs switch per 2 ms slice (switch = o/(1-o) · slice), a deliberately
 * pessimistic figure for a resident-context switch.
 */
#define SHARE_TS_OVERHEAD_DEFAULT 0.05

/* MPS client limit, Volta and later: 48 per device (NVIDIA MPS documentation). */
#define SHARE_MPS_MAX_CLIENTS 48

/*
 * MPS interference coefficient k: slowdown = 1 + k · (co-runners' SM demand).
 * NOT FOUND for MPS on A100 (research notes §3: "exact baseline inflation ... NOT FOUND",
 * 9.2): calibration knob. Default 0.2 ≈ Gandiva's 19% per-job slowdown of two
 * co-located jobs (Gandiva, OSDI 2018), taking the co-runner's demand as a full card.
 */
#define SHARE_MPS_INTERFERENCE_DEFAULT 0.2

/* Fatal-fault rate per tenant, per hour of running. Default 0 (a knob for blast-radius studies). */
#define SHARE_FAULT_RATE_DEFAULT 0.0

struct share_knobs {
    double ts_slice_s;       /* time-slice length, s */
    double ts_overhead;      /* fraction of card time lost to switching, [0, 1) */
    double mps_interference; /* k >= 0 */
    int mps_max_clients;     /* 1..48 */
    double fault_rate_per_h; /* fatal faults per tenant-hour, >= 0 */
};

/* Fill k with the defaults above. */
void share_knobs_init(struct share_knobs *k);

/* Check ranges. Returns 0 or -EINVAL. */
int share_knobs_check(const struct share_knobs *k);

struct share_tenant {
    bool active;          /* has GPU work now (a training step, an inference batch) */
    double demand;        /* fraction of the card's SMs its kernels fill alone, (0, 1] */
    double sm_cap;        /* MPS active thread percentage / 100, (0, 1]; 1 = uncapped */
    double slice_speed;   /* MIG: its instance's speed factor, (0, 1] */
    int group;            /* MIG: instance id on the card (fault domain); unused otherwise */
    double mem_gib;       /* memory it allocates, GiB */
    double mem_limit_gib; /* enforced limit (MPS pinned, time-slicing quota), GiB; 0 = none */
    double mem_quota_gib; /* memory it asked the scheduler for, GiB; 0 = mem_gib */
    double ts_slice_s;    /* time-slicing: its own slice length, s; 0 = the card's (knobs) */
};

/* A tenant with the neutral defaults: active, demand 1, cap 1, slice_speed 1, group 0, no memory.
 */
void share_tenant_init(struct share_tenant *t);

/* "exclusive", "timeslice", "mps", "mig". */
const char *share_mode_name(enum share_mode mode);

/* Parse a mode name (case-insensitive). Returns 0 or -EINVAL (out unchanged). */
int share_mode_parse(const char *s, enum share_mode *out);

/*
 * Effective speed of every tenant (fraction of a full GPU, see above) into
 * speed[0..n). Inactive tenants get 0. Returns 0; -E2BIG when the mode does not
 * admit n tenants (exclusive: > 1, mps: > k->mps_max_clients); -EINVAL for an
 * out-of-range field (demand, sm_cap, slice_speed not in (0, 1]) or knob. On
 * failure speed is left unspecified.
 */
int share_speeds(enum share_mode mode, const struct share_knobs *k, const struct share_tenant *t,
                 size_t n, double *speed);

/* Time-slicing: seconds lost per context switch, o/(1-o) · slice (≈105 µs at the defaults). */
double share_ts_switch_s(const struct share_knobs *k);

/*
 * Time-slicing as the driver schedules it (docs/models.md "Time-slicing"):
 * the card's runnable contexts take turns in a fixed round-robin order (the
 * runlist), each for up to its time slice; a context with no work is skipped
 * (work-conserving), one that runs out of work mid-slice yields at once; every
 * hand-over between two different contexts costs one switch s; a context alone
 * on the card runs on (its slice timer re-arms, no switch).
 *
 * One batch of `work_s` seconds (at full-card speed) of a tenant whose slice
 * is own_slice_s, on a card where `others` other contexts are continuously
 * runnable with slices of others_slice_s each:
 *   gap_s > 0   the tenant's context went idle gap_s ago (it yielded): the
 *               others have run on in their fixed order since; it waits until
 *               the last of them (in ring order) ends a slice, then one switch:
 *               wait = next end of that slice - gap + s, the ends falling at
 *               e1 + m·P (m >= 0), e1 = k·(T_o + s), P = k·(T_o + s) for
 *               k >= 2, T_o for k = 1 (a lone other re-arms its slice);
 *   gap_s < 0   phase unknown: the mean of the above over a uniform phase,
 *               P/2 + s;
 *   gap_s == 0  it never left the card (the previous batch ended just now with
 *               this one queued): no wait, it continues its slice at offset_s.
 * Then it runs; each time its slice ends with work left the others take one
 * turn each, D = k·T_o + (k+1)·s, so with u the offset into its first slice
 *   interruptions n = ceil((u + work)/T_own) - 1,
 *   latency = wait + work + n·D.
 * debt_s is the time the batch takes from the others' work over the long run:
 * with k = 1, work + 2s per visit (switch in, switch out); with k >= 2, each
 * visit adds one switch to the ring and the others lose T_o/(T_o+s) of the
 * card time it takes: T_o/(T_o + s) · (work + s · visits); visits = n + 1 for
 * a fresh start, n when continuing. others == 0: latency = work, no debt.
 */
struct share_ts_batch {
    double wait_s;       /* ready -> its first slice begins */
    double latency_s;    /* ready -> done */
    double debt_s;       /* work the other tenants lose to it */
    double end_offset_s; /* time used in its last slice when it ends */
    unsigned visits;     /* times it (re)takes the card */
};

/* Returns 0, or -EINVAL (work < 0, a slice <= 0, offset outside [0, own slice]). */
int share_ts_batch(const struct share_knobs *k, double work_s, double own_slice_s, unsigned others,
                   double others_slice_s, double gap_s, double offset_s,
                   struct share_ts_batch *out);

/*
 * Mean extra wait of a batch that becomes ready at a random phase while
 * `others` other tenants (default slices) hold the card: P/2 + s as above;
 * 0 alone.
 */
double share_ts_expected_wait_s(const struct share_knobs *k, size_t others_active);

/* Worst case of the same: P + s (0 when alone). */
double share_ts_max_wait_s(const struct share_knobs *k, size_t others_active);

/*
 * Memory admission on one card (for MIG: on one instance, cap_gib = its memory;
 * placement normally refuses first). Tenants are given in allocation order;
 * killed[i] is set when tenant i is OOM-killed:
 *   any mode, a tenant with an enforced limit (mem_limit_gib > 0: MPS pinned
 *       limit, time-slicing memory quota) that allocates more than it: only
 *       that tenant (HAMi-style quota or MPS pinning: the allocation over the
 *       limit fails in its own process);
 *   timeslice, exclusive: the allocation that overflows cap_gib (no isolation:
 *       whoever allocates last loses; earlier tenants keep running), except:
 *   timeslice, a tenant over its own request (mem_gib > mem_quota_gib > 0, no
 *       limit in force) whose request fits but whose excess overflows the card:
 *       its excess is taken while it runs, from the pool its card-mates
 *       allocate from, so every earlier live tenant on the card dies (their
 *       next allocation fails) and it keeps running if it now fits alone;
 *   mps: first its own pinned limit, then the card;
 *   mig: the allocation that overflows its instance.
 * A killed tenant's memory is not counted for later ones. Returns the number
 * killed. killed must hold n entries.
 */
size_t share_oom(enum share_mode mode, const struct share_tenant *t, size_t n, double cap_gib,
                 bool *killed);

/*
 * Blast radius of a fatal fault in tenant `faulting` (< n): dies[i] is set for
 * every tenant that ends. exclusive: itself; timeslice and mps: every tenant on
 * the card (MPS: "reported to all the clients ... it is the responsibility of
 * the affected clients to exit"; clients on other GPUs are untouched, so call
 * this per card); mig: the tenants of the faulting tenant's instance (group).
 * Returns the number of tenants that die (0 if faulting >= n).
 */
size_t share_fault_victims(enum share_mode mode, const struct share_tenant *t, size_t n,
                           size_t faulting, bool *dies);

#endif
