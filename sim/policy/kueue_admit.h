/*
 * kueue_admit.h — Kueue admission and classic preemption, as pure bookkeeping.
 *
 * Reproduces the decisions of kubernetes-sigs/kueue (site/content/en/docs/
 * concepts: cluster_queue.md, preemption.md, workload_priority_class.md; research
 * notes §7.1) for one resource (GPUs), on one flavor or several (below):
 *
 * - ClusterQueue (CQ): nominalQuota, optional cohort, borrowingLimit (how far
 *   above nominal the CQ may go by borrowing; unlimited if < 0) and
 *   lendingLimit (how much of its nominal quota the cohort may use; unlimited
 *   if < 0). With lendingLimit L the CQ keeps nominal − L to itself.
 * - Fit: a workload of g GPUs fits its CQ c with usage u if u + g <= nominal
 *   ("fits in nominal") or, with a cohort, u + g <= nominal + borrowingLimit
 *   ("fits by borrowing"); in both cases the cohort must have room: the
 *   cohort's lendable pool Σ min(nominal, lendingLimit) must cover every CQ's
 *   use above its kept part. A CQ is "borrowing" while its usage > nominal.
 * - Queue order per CQ: priority (WorkloadPriorityClass value) descending,
 *   then creation time ascending, then id. StrictFIFO: only the head is tried
 *   and it blocks the CQ; BestEffortFIFO (default): an inadmissible workload
 *   is skipped and the next one tried. Preempted workloads keep their
 *   creation time (requeued in their original place).
 * - Across CQs, one decision at a time: candidates that need no borrowing
 *   first, then higher priority, then older (Kueue's scheduling-cycle order).
 * - Classic preemption: candidates are admitted workloads of the same CQ
 *   allowed by withinClusterQueue (LowerPriority: priority < preemptor's;
 *   LowerOrNewerEqualPriority: also equal priority and newer), plus, if
 *   reclaimWithinCohort != Never, workloads of other CQs of the cohort that
 *   are borrowing (LowerPriority: lower priority only; Any: all). Ordered:
 *   workloads of other (borrowing) CQs first, then lowest priority, then most
 *   recently admitted (then larger id). Targets are added greedily until the
 *   preemptor fits — skipping a candidate whose CQ stopped borrowing — then
 *   unneeded targets are removed in reverse order (all but the last added).
 *   If candidates come from other CQs, a first pass requires the preemptor to
 *   fit in its nominal quota (no borrowing while reclaiming); if it fails, a
 *   second pass uses only same-CQ candidates and allows borrowing.
 * - borrowWithinCohort (policy LowerPriority, optional maxPriorityThreshold):
 *   before the passes above, one pass that lets the preemptor borrow while it
 *   preempts, over the same-CQ candidates and the other CQs' candidates of
 *   lower priority (and at most the threshold, when set).
 * - Requeue with backoff (waitForPodsReady, kueue_requeue): an evicted workload
 *   is inadmissible until its requeueAt (it does not block a StrictFIFO
 *   queue), and with the Eviction timestamp it queues by its eviction time.
 * - A placement filter (kueue_set_filter, for topology-aware admission): a
 *   workload that fits the quota without preemption but that the filter
 *   refuses is treated as not fitting (skipped, or blocking a StrictFIFO CQ).
 * - Cohort trees (kueue_add_cohort): a cohort has its own quota, a parent,
 *   and borrowing/lending limits towards it; fit is Kueue's available() over
 *   the tree (pkg/cache/scheduler/resource_node.go): localQuota = subtree
 *   quota − lendingLimit, a cohort's subtree quota = own nominal + what its
 *   children lend, its usage = what they use beyond their localQuota. A CQ
 *   with a cohort index never added gets an implicit root cohort (no quota),
 *   which is the flat cohort above. Reclaim candidates come from any CQ of
 *   the same root cohort.
 * - Fair sharing (kueue_set_fair_sharing; Kueue Configuration fairSharing):
 *   a CQ's share is 1000 · borrowed / lendable / weight (Kueue's DRS,
 *   pkg/cache/scheduler/fair_sharing.go, for the one resource nvidia.com/gpu):
 *   borrowed is its usage above nominal summed over the flavors, lendable its
 *   cohort's potentialAvailable summed over the flavors; across CQs,
 *   candidates that need no borrowing (on the flavor assigned) first, then the
 *   lower share with the workload admitted, then priority and age; preemption
 *   by the strategies LessThanOrEqualToFinalShare then LessThanInitialShare
 *   (see fair_victims in kueue_admit.c), every share over all flavors.
 * - GPU flavors (kueue_set_flavors; Kueue pkg/scheduler/flavorassigner/
 *   flavorassigner.go, kubernetes-sigs/kueue at ff69552e, Aug 2026): each
 *   CQ and Cohort has nominal / borrowing / lending quota per flavor and
 *   every rule above (fit, cohort tree, borrowing, preemption, shares) holds
 *   per flavor (shares excepted, above): an admitted workload uses quota of its
 *   one assigned flavor and only workloads admitted on that flavor are
 *   preemption candidates. A CQ lists its flavors in order (kueue_cq.flavors);
 *   a pending workload tries them in that order, skipping flavors its mask
 *   refuses (kueue_set_wl_flavors) and, for each, finds Kueue's granular mode:
 *   fit, reclaim (victims found on that flavor, all in other CQs), preempt
 *   (some victim in its own CQ) or no fit, and a borrowing level (0 within
 *   its nominal quota, else the height of the lowest cohort subtree with room,
 *   after the victims are gone). flavorFungibility stops the search at a
 *   mode unless it must preempt or reclaim and whenCanPreempt is
 *   TryNextFlavor (Kueue's default) or it must borrow and whenCanBorrow is
 *   TryNextFlavor (default MayStopSearch, old name Borrow); when no flavor
 *   stops it, the best mode seen wins by Kueue's isPreferred under
 *   flavorFungibility.preference: BorrowingOverPreemption (default) the
 *   better mode (fit > reclaim > preempt), then the lower level;
 *   PreemptionOverBorrowing the lower level, then the better mode; the first
 *   listed flavor on ties.
 * Not modelled: admission checks beyond quota, Kueue's tournament between
 * cohorts (shares are compared CQ to CQ) and Kueue's resume from the last
 * tried flavor (LastAssignment).
 *
 * Units: GPUs as double (whole numbers in Kueue; doubles keep the arithmetic
 * shared with kai), times in µs. Comparisons allow 1e-9 GPU of rounding.
 *
 * Ownership: struct kueue is heap-allocated (kueue_create/kueue_destroy) and
 * owns copies of its CQs and workloads. A decision's victim list points into
 * the kueue and is valid until the next call that changes it. No I/O, no
 * globals. Invariant (checked by kueue_apply/kueue_admit): no CQ's usage
 * exceeds nominal + borrowingLimit and no cohort's use exceeds its pool.
 */
#ifndef TIDESIM_POLICY_KUEUE_ADMIT_H
#define TIDESIM_POLICY_KUEUE_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/simtime.h"

/* Project defaults for WorkloadPriorityClass values (issue 5); Kueue itself has none. */
#define KUEUE_PRIORITY_INFERENCE 1000
#define KUEUE_PRIORITY_TRAINING  100
#define KUEUE_NO_COHORT          (-1)
#define KUEUE_UNLIMITED          (-1.0)

enum kueue_strategy { KUEUE_BEST_EFFORT_FIFO, KUEUE_STRICT_FIFO };
enum kueue_within {
    KUEUE_WITHIN_NEVER,
    KUEUE_WITHIN_LOWER_PRIORITY,
    KUEUE_WITHIN_LOWER_OR_NEWER_EQUAL
};
enum kueue_reclaim { KUEUE_RECLAIM_NEVER, KUEUE_RECLAIM_LOWER_PRIORITY, KUEUE_RECLAIM_ANY };
enum kueue_borrow { KUEUE_BORROW_NEVER, KUEUE_BORROW_LOWER_PRIORITY };
/* Most GPU flavors a kueue holds (flavor masks are 64-bit). */
#define KUEUE_MAX_FLAVORS 16u
/* Kueue Configuration fairSharing.preemptionStrategies. */
enum kueue_fs_strategy { KUEUE_FS_LESS_OR_EQUAL_FINAL, KUEUE_FS_LESS_THAN_INITIAL };

/* A Cohort: its own quota (resourceGroups) and limits towards its parent. */
struct kueue_cohort {
    int32_t parent;         /* cohort index (< own index), or KUEUE_NO_COHORT for a root */
    double nominal;         /* GPUs the Cohort object itself provides, >= 0 */
    double borrowing_limit; /* GPUs it may take from its parent beyond its subtree, or unlimited */
    double lending_limit;   /* GPUs of its subtree lendable to its parent, or unlimited */
    double weight;          /* fairSharing.weight (1 by default) */
};

struct kueue_cq {
    int32_t cohort;         /* cohort number, or KUEUE_NO_COHORT */
    double nominal;         /* nominalQuota, GPUs, >= 0 */
    double borrowing_limit; /* GPUs above nominal, or KUEUE_UNLIMITED */
    double lending_limit;   /* GPUs of nominal lendable, or KUEUE_UNLIMITED */
    enum kueue_strategy strategy;
    enum kueue_within within;
    enum kueue_reclaim reclaim;
    enum kueue_borrow borrow; /* borrowWithinCohort.policy */
    bool borrow_threshold;    /* borrowWithinCohort.maxPriorityThreshold is set */
    int32_t borrow_max_priority;
    double weight; /* fairSharing.weight, >= 0 (1 by default) */
    /* Its GPU flavors in resourceGroups order (indices given to kueue_set_flavors);
     * nflavors 0 means flavor 0 alone (one flavor, the default). */
    uint8_t nflavors;
    uint8_t flavors[KUEUE_MAX_FLAVORS];
    bool borrow_try_next;  /* flavorFungibility.whenCanBorrow: TryNextFlavor (default MayStopSearch)
                            */
    bool preempt_may_stop; /* flavorFungibility.whenCanPreempt: MayStopSearch (default
                              TryNextFlavor) */
    bool prefer_preemption; /* flavorFungibility.preference: PreemptionOverBorrowing (default
                               BorrowingOverPreemption) */
};

struct kueue_wl {
    uint32_t id;          /* caller's id, unique */
    uint32_t cq;          /* index returned by kueue_add_cq */
    int32_t priority;     /* WorkloadPriorityClass value */
    double gpus;          /* quota reserved when admitted, > 0 */
    sim_time created;     /* creationTimestamp, queue order */
    sim_time admitted_at; /* valid while admitted */
    sim_time queued;      /* queue-order timestamp: created, or the last PodsReady eviction */
    sim_time requeue_at;  /* inadmissible before this (backoff); 0 = none */
    uint32_t requeues;    /* requeueState.count */
    bool admitted;
    uint32_t flavor;     /* the flavor its quota is on, valid while admitted */
    uint64_t flavors_ok; /* bit f: it may use flavor f (kueue_set_wl_flavors; all by default) */
};

enum kueue_mode {
    KUEUE_FITS_NOMINAL, /* fits without borrowing */
    KUEUE_FITS_BORROW,  /* fits by borrowing from the cohort */
    KUEUE_PREEMPT       /* fits once the victims are evicted */
};

struct kueue_decision {
    uint32_t id; /* workload to admit */
    enum kueue_mode mode;
    bool borrows;            /* admitted usage of its CQ exceeds nominal (on that flavor) */
    uint32_t flavor;         /* the flavor assigned (0 with one flavor) */
    uint32_t n_victims;      /* 0 unless mode == KUEUE_PREEMPT */
    const uint32_t *victims; /* workload ids, in the order they were chosen */
};

struct kueue;

/* New empty kueue, or NULL on allocation failure. */
struct kueue *kueue_create(void);
void kueue_destroy(struct kueue *k); /* NULL is a no-op */

/* Fill cq with Kueue's defaults: no cohort, nominal 0, unlimited limits,
 * BestEffortFIFO, withinClusterQueue Never, reclaimWithinCohort Never,
 * borrowWithinCohort Never. */
void kueue_cq_default(struct kueue_cq *cq);

/* Fill c with Kueue's defaults: a root with no quota, unlimited limits, weight 1. */
void kueue_cohort_default(struct kueue_cohort *c);

/*
 * Add a cohort (copied). Its parent must have been added before it. Returns
 * its index (>= 0), -EINVAL (negative quota or weight, a limit below 0 other
 * than KUEUE_UNLIMITED, an unknown parent) or -ENOMEM.
 */
int kueue_add_cohort(struct kueue *k, const struct kueue_cohort *c);

/* Add a CQ (copied). Returns its index (>= 0), -EINVAL for negative nominal
 * or weight or a limit below 0 other than KUEUE_UNLIMITED, -ENOMEM. A cohort
 * index not added yet creates the cohorts up to it with kueue_cohort_default
 * (Kueue's implicit cohort: no Cohort object, a root with no quota of its own). */
int kueue_add_cq(struct kueue *k, const struct kueue_cq *cq);

/*
 * Fair sharing (Kueue Configuration `fairSharing`): with n > 0 strategies
 * (the first two are used), admission across CQs prefers the lowest dominant
 * resource share and preemption in a cohort follows the strategies (see the
 * comment at the top); n == 0 turns it off (classic, the default).
 */
void kueue_set_fair_sharing(struct kueue *k, const enum kueue_fs_strategy *strategies, uint32_t n);

/* Cohort tree figures for CQ cq as the quota stands: what it lends to its cohort (its nominal
 * minus its own usage, capped by lendingLimit, counting only quota others use), what it
 * borrows (usage above nominal) and its share (Kueue's DRS over all flavors, 0 when not
 * borrowing). */
struct kueue_cq_stat {
    double usage, borrowed, lent, share;
};
void kueue_cq_stat(struct kueue *k, uint32_t cq, struct kueue_cq_stat *out);
/* (With flavors: usage, borrowed and lent summed over the flavors; the share is the CQ's.) */

/* The most CQ cq could ever hold (Kueue's potentialAvailable: its nominal plus what its
 * cohort tree could lend it within the borrowing limits; with flavors, the largest over the
 * flavors it lists, as a workload takes one flavor); 0 for a bad index. */
double kueue_cq_potential(struct kueue *k, uint32_t cq);
/* The same over the flavors of cq in mask (bit f = flavor f); 0 when none. */
double kueue_cq_potential_mask(struct kueue *k, uint32_t cq, uint64_t mask);

/*
 * Declare n GPU flavors (1 <= n <= KUEUE_MAX_FLAVORS), after every CQ and
 * cohort is added (none may be added after). Each flavor starts with the
 * quota the CQs and cohorts were added with; set each with the two calls
 * below. Returns 0, -EINVAL (bad n, called twice) or -ENOMEM (unchanged).
 * Without this call there is one flavor, 0.
 */
int kueue_set_flavors(struct kueue *k, uint32_t n);
/* The resource name flavor f's quota is of, as a small number (0 by default: every flavor
 * nvidia.com/gpu; a quota cell of nvidia.com/mig-<profile> gets one number per profile).
 * Fair sharing weighs what a CQ borrows per resource (Kueue's dominant resource share).
 * Returns 0 or -EINVAL (f not declared, res >= KUEUE_MAX_FLAVORS). */
int kueue_set_flavor_resource(struct kueue *k, uint32_t f, uint32_t res);
/* Quota of CQ cq / cohort c on flavor f (limits as in struct kueue_cq). Returns 0 or -EINVAL
 * (bad index, negative quota, a limit below 0 other than KUEUE_UNLIMITED). */
int kueue_set_cq_quota(struct kueue *k, uint32_t cq, uint32_t f, double nominal, double bl,
                       double ll);
int kueue_set_cohort_quota(struct kueue *k, uint32_t c, uint32_t f, double nominal, double bl,
                           double ll);
/* The flavor being tried while a kueue_filter_fn runs (0 with one flavor). */
uint32_t kueue_eval_flavor(const struct kueue *k);
/* The flavors workload id may use (bit f = flavor f; a placement constraint). Returns 0 or
 * -ENOENT. */
int kueue_set_wl_flavors(struct kueue *k, uint32_t id, uint64_t mask);
/* Cohort figures of CQ cq on flavor f alone (kueue_cq_stat sums the flavors); share is the
 * CQ's over all flavors, as Kueue's DRS has no per-flavor share. */
void kueue_cq_stat_flavor(struct kueue *k, uint32_t cq, uint32_t f, struct kueue_cq_stat *out);
/* GPUs reserved by admitted workloads of cq on flavor f. */
double kueue_usage_flavor(const struct kueue *k, uint32_t cq, uint32_t f);

/* Queue a pending workload (copied; admitted fields ignored). Returns 0,
 * -EEXIST (id taken), -EINVAL (bad cq or gpus <= 0), -ENOMEM; unchanged on error. */
int kueue_submit(struct kueue *k, uint32_t id, uint32_t cq, int32_t priority, double gpus,
                 sim_time created);

/* Forget a workload (finished or deleted), releasing its quota if admitted.
 * Returns 0 or -ENOENT. */
int kueue_remove(struct kueue *k, uint32_t id);

/* Evict an admitted workload (preempted): it becomes pending again with its
 * creation time. Returns 0, -ENOENT, or -EINVAL if not admitted. */
int kueue_evict(struct kueue *k, uint32_t id);

/* Admit a pending workload at `now` if it fits as the quota stands (on the first of its
 * CQ's flavors, in order, where it fits with borrowing allowed). Returns
 * 0, -ENOENT, -EALREADY (admitted), -ENOSPC (does not fit); unchanged on error. */
int kueue_admit(struct kueue *k, uint32_t id, sim_time now);

/* The next admission decision, without changing the queues. Returns 1 and
 * fills *d, 0 if no pending workload is admissible (even with preemption), or
 * -ENOMEM. d->victims is valid until the next kueue call that changes state. */
int kueue_next(struct kueue *k, struct kueue_decision *d);

/* Evict d's victims then admit d's workload at now. Returns 0 or the error
 * of kueue_admit (victims already evicted in that case; should not happen
 * for a decision just returned by kueue_next). */
int kueue_apply(struct kueue *k, const struct kueue_decision *d, sim_time now);

/* The clock the backoff is read against (kueue_next skips workloads whose
 * requeue_at is later). Call before kueue_next. */
void kueue_set_clock(struct kueue *k, sim_time now);

/* A placement filter: may workload id of gpus GPUs run now? (NULL: always). */
typedef bool (*kueue_filter_fn)(void *ctx, uint32_t id, double gpus);
void kueue_set_filter(struct kueue *k, kueue_filter_fn fn, void *ctx);

/*
 * Evict admitted workload id for a PodsReady timeout at now: its quota is
 * released, requeues is incremented, it is inadmissible until requeue_at, and
 * with reorder (timestamp Eviction) it queues by now instead of its creation.
 * Returns 0, -ENOENT, or -EINVAL if not admitted.
 */
int kueue_requeue(struct kueue *k, uint32_t id, sim_time now, sim_time requeue_at, bool reorder);

/* The earliest requeue_at after now over pending workloads, or SIM_TIME_MAX. */
sim_time kueue_next_requeue(const struct kueue *k, sim_time now);

/* GPUs reserved by admitted workloads of cq (0 for a bad index). */
double kueue_usage(const struct kueue *k, uint32_t cq);

/* Whether cq's usage exceeds its nominal quota (on some flavor). */
bool kueue_borrowing(const struct kueue *k, uint32_t cq);

/* The workload with this id, or NULL. Pointer valid until the next change. */
const struct kueue_wl *kueue_find(const struct kueue *k, uint32_t id);

struct sim;
/*
 * The `kueue` policy (sim/policy/kueue.c) of run s: GPUs reserved by the
 * admitted workloads of its inference (true) or training ClusterQueue; -1
 * when s does not run that policy. For tests and reports.
 */
double kueue_policy_usage(const struct sim *s, bool inference);

/* The admission model of run s's `kueue` policy (NULL when s runs another policy); valid until
 * the run is released. For tests: which flavor each workload is admitted on. */
const struct kueue *kueue_policy_kueue(const struct sim *s);

#endif
