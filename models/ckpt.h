/*
 * ckpt.h — checkpoint interval, size, save/restore cost and preemption loss.
 *
 * Everything in seconds and bytes (double). The simulator decides when to
 * checkpoint and when to preempt; these functions price it:
 *
 *   interval   Young:  T = sqrt(2·C·M)                      (CACM 1974)
 *              Daly:   T = sqrt(2CM)·[1 + ⅓·sqrt(C/2M) + (C/2M)/9] − C  for C < 2M,
 *                      T = M otherwise                       (FGCS 2006)
 *              C = checkpoint cost (s), M = mean time between failures or
 *              preemptions (s). Sources: Young, CACM 17(9) 1974, doi:10.1145/361147.361115;
 *              Daly, FGCS 22(3) 2006, doi:10.1016/j.future.2004.11.016.
 *   state      params × bytes_per_param (default 14 B: bf16 weights + fp32 master
 *              + two fp32 Adam moments; 16 B with the bf16 gradients too —
 *              ZeRO's (2+2+12)Ψ, Rajbhandari et al., arXiv 1910.02054)
 *   save       state / write_bw + save_fixed
 *   restore    state / read_bw + warmup
 *   preemption graceful: SIGTERM, then SIGKILL after the grace period (default
 *              30 s, Kubernetes terminationGracePeriodSeconds, kubernetes.io). If
 *              the save fits the grace period nothing is lost; otherwise the job
 *              is killed mid-save and the work since its last checkpoint is lost.
 *              hard: the work since the last checkpoint is lost at once.
 */
#ifndef TIDESIM_MODELS_CKPT_H
#define TIDESIM_MODELS_CKPT_H

#include <stdbool.h>

/* Restartable state per parameter, bytes (derived from ZeRO, arXiv 1910.02054). */
#define CKPT_BYTES_PER_PARAM_DEFAULT 14.0
#define CKPT_BYTES_PER_PARAM_FULL    16.0

/*
 * Storage bandwidth, GB/s (10^9 B/s). NOT FOUND for a specific A100 cluster
 * (research notes §5, §9.3): calibration knobs. Defaults 2 / 4 GB/s, conservative
 * guesses; both are far below the 32 GB/s PCIe Gen4 D2H link (Glenn K.
 * Lockwood's A100 page [weak]), so storage is the bottleneck.
 */
#define CKPT_WRITE_GBPS_DEFAULT 2.0
#define CKPT_READ_GBPS_DEFAULT  4.0

/*
 * Fixed costs, NOT FOUND (calibration knobs, conservative):
 *   save_fixed  5 s: quiesce the step, open/fsync/rename the checkpoint files.
 *   warmup     60 s: process start, CUDA/NCCL init, data-loader refill before the
 *              first useful step (Dynamo reports "several minutes" cold starts
 *              for inference workers, NVIDIA's Dynamo Snapshot blog; training restarts
 *              are lighter).
 */
#define CKPT_SAVE_FIXED_S_DEFAULT 5.0
#define CKPT_WARMUP_S_DEFAULT     60.0

/* Kubernetes terminationGracePeriodSeconds default (kubernetes.io, Pod termination). */
#define CKPT_GRACE_S_DEFAULT 30.0

struct ckpt_knobs {
    double bytes_per_param; /* B */
    double write_gbps;      /* GB/s */
    double read_gbps;       /* GB/s */
    double save_fixed_s;    /* s */
    double warmup_s;        /* s */
    double grace_s;         /* s */
};

/* Fill k with the defaults above. */
void ckpt_knobs_init(struct ckpt_knobs *k);

/* Ranges: bandwidths > 0, the rest >= 0. Returns 0 or -EINVAL. */
int ckpt_knobs_check(const struct ckpt_knobs *k);

/* Young's interval sqrt(2·cost·mtbf), s. 0 when either argument is <= 0. */
double ckpt_young_interval(double cost_s, double mtbf_s);

/* Daly's higher-order interval (see above), s. 0 when either argument is <= 0. */
double ckpt_daly_interval(double cost_s, double mtbf_s);

/* How a job's checkpoint interval is chosen (scenario training.checkpoint.interval). */
enum ckpt_rule {
    CKPT_RULE_EVERY, /* a fixed interval (0 = no periodic checkpoints) */
    CKPT_RULE_YOUNG, /* ckpt_young_interval(cost, mtbf) */
    CKPT_RULE_DALY,  /* ckpt_daly_interval(cost, mtbf) */
};

/*
 * The interval `rule` gives, s: every_s for CKPT_RULE_EVERY, else the formula
 * at cost_s and mtbf_s (0, i.e. none, when either is <= 0). Cannot fail.
 */
double ckpt_interval(enum ckpt_rule rule, double every_s, double cost_s, double mtbf_s);

/* State size of a model with `params` parameters, bytes. */
double ckpt_state_bytes(const struct ckpt_knobs *k, double params);

/* Seconds to save / restore `bytes` of state (restore includes the warm-up). */
double ckpt_save_s(const struct ckpt_knobs *k, double bytes);
double ckpt_restore_s(const struct ckpt_knobs *k, double bytes);

/*
 * Sharded checkpoints: `ranks` writers (readers) each move bytes / ranks in
 * parallel, each at the full write_gbps (read_gbps), as when every rank of a
 * sharded job saves its own shard (PyTorch Distributed Checkpoint, DeepSpeed
 * ZeRO): (bytes / ranks) / bw + fixed cost. The bandwidths are then per GPU,
 * so the storage is assumed to scale with the writers. ranks <= 1 is
 * ckpt_save_s / ckpt_restore_s (one writer for the whole state).
 */
double ckpt_save_sharded_s(const struct ckpt_knobs *k, double bytes, unsigned ranks);
double ckpt_restore_sharded_s(const struct ckpt_knobs *k, double bytes, unsigned ranks);

/* Expected work lost per failure at interval T with restart cost R: T/2 + R (first order). */
double ckpt_expected_loss_s(double interval_s, double restart_s);

struct ckpt_preempt {
    bool saved;     /* a checkpoint completed before the kill */
    double lost_s;  /* work to recompute after restart, s */
    double spent_s; /* time from the preemption notice until the card is free, s */
};

/*
 * Graceful preemption since_last_s seconds after the last checkpoint, with a
 * save taking save_s and a grace period grace_s: save_s <= grace_s => saved,
 * lost 0, spent save_s; otherwise killed at the end of the grace period: lost
 * since_last_s, spent grace_s. Negative inputs are treated as 0.
 */
struct ckpt_preempt ckpt_preempt_graceful(double since_last_s, double save_s, double grace_s);

/* Hard preemption: lost since_last_s, spent 0. */
struct ckpt_preempt ckpt_preempt_hard(double since_last_s);

#endif
