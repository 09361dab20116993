/*
 * llm_cfg.h — the configuration of an LLM service (`kind: llm`), read from
 * its `llm:` block and `slo:` (docs/scenario.md "services[].llm").
 *
 * The knobs mirror vLLM's engine arguments where one exists
 * (gpu_memory_utilization, max_num_seqs, max_num_batched_tokens, block_size,
 * --max-model-len as max_context, --tensor-parallel-size, swap space,
 * preemption mode); the rest are the iteration-time calibration of
 * models/llm.h and the router in front of the replicas.
 */
#ifndef TIDESIM_LLM_CFG_H
#define TIDESIM_LLM_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "models/llm.h"
#include "sim/core/simtime.h"
#include "traces/tokens.h"

struct conf_doc;
struct conf_node;
struct conf_err;
struct scenario;
struct service_cfg;

enum llm_router {
    LLM_ROUTE_LEAST,  /* least outstanding requests (running + queued), ties by index */
    LLM_ROUTE_ROUND,  /* round robin over the replicas serving */
    LLM_ROUTE_RANDOM, /* uniform over the replicas serving (kube-proxy's iptables mode) */
};

enum llm_preempt { LLM_PREEMPT_RECOMPUTE, LLM_PREEMPT_SWAP };

/* What an HPA over an LLM service observes (policy.autoscale). */
enum llm_scale_metric {
    LLM_SCALE_DEFAULT, /* the batch kind's: request rate and busy time */
    LLM_SCALE_TOKENS,  /* generated tokens/s per replica against `scale_target` */
    LLM_SCALE_KV,      /* mean KV-cache occupancy (0..1) against `scale_target` */
};

struct llm_cfg {
    const char *model_name; /* the preset's name, or "custom" */
    struct llm_arch arch;
    enum llm_dtype wdtype, kvdtype;
    struct llm_model model; /* resolved from arch and the dtypes */
    uint32_t max_context;   /* max_model_len: a prompt this long is refused, outputs are cut */
    uint32_t tp;            /* tensor_parallel: cards of one node per replica, 1, 2, 4 or 8 */
    double mem_util;        /* gpu_memory_utilization, (0, 1] */
    double overhead_gib;    /* per card: CUDA context, activation peak, CUDA graphs */
    uint32_t block;         /* KV block size, tokens */
    uint32_t max_num_seqs;
    uint32_t max_batched_tokens; /* token budget of one step */
    bool chunked;                /* chunked prefill (vLLM V1 always) */
    enum llm_preempt preempt;
    double swap_gib;  /* CPU swap space per replica */
    double swap_gbps; /* host-device copy bandwidth for swapping, GB/s */
    enum llm_router router;
    struct tok_dist prompt, output; /* lengths of requests whose source gives none */
    struct llm_knobs knobs;
    bool coef_given;      /* `iteration:` gave the whole-card coefficients */
    struct llm_coef base; /* whole card, TP 1 (derived from the board, or given) */
    sim_time ttft_slo, tpot_slo;
    uint64_t kv_card; /* KV tokens of a replica on whole cards (0 under MIG) */
    bool on_mig;      /* it runs on MIG instances: the cluster's mode, or in a mixed fleet
                         the mode of the pools it requires */
    double cap_rps;   /* requests/s a replica sustains at its TPOT SLO (llm_capacity_rps) */
    enum llm_scale_metric scale_metric;
    double scale_target; /* tokens/s per replica, or KV occupancy 0..1 */
};

/*
 * Read service node `n`'s `llm:` block (and the LLM keys of its `slo:`) into
 * a new llm_cfg hung on c->llm, with the cluster of sc (board, sharing,
 * cards per node, MIG profiles) for the memory checks: a replica that cannot
 * fit where it is asked to run is refused here, with the figures. Returns 0
 * or a negative code with err filled.
 */
int llm_cfg_load(const struct conf_doc *d, const struct conf_node *n, struct service_cfg *c,
                 const struct scenario *sc, struct conf_err *err);

/*
 * The memory plan of a replica of c on a whole card of sc's board
 * (instance == NULL) or on a MIG instance of profile `instance`. 0 when it
 * fits, -ENOSPC otherwise (*out filled either way).
 */
struct mig_profile;
int llm_cfg_memory(const struct llm_cfg *c, const struct scenario *sc,
                   const struct mig_profile *instance, struct llm_mem *out);

/* Memory a replica asks for on each card (its tenant's request), GiB. */
double llm_cfg_request_gib(const struct llm_cfg *c, const struct scenario *sc);

#endif
