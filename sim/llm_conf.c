/* llm_conf.c — read and check an LLM service's `llm:` block (sim/llm_cfg.h). */
#include "sim/llm_cfg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/gpu.h"
#include "models/latency.h"
#include "models/mig.h"
#include "sim/conf.h"
#include "sim/scenario.h"

static const char *const router_names[] = {"least_loaded", "round_robin", "random", NULL};
static const char *const preempt_names[] = {"recompute", "swap", NULL};
static const char *const metric_names[] = {"requests", "tokens", "kv", NULL};

static int get_u32(const struct conf_doc *d, const struct conf_node *m, const char *key,
                   int64_t min, int64_t max, uint32_t *out, struct conf_err *err)
{
    int64_t v = *out;
    int rc = conf_int(d, m, key, false, min, max, &v, err);
    if (rc == 0)
        *out = (uint32_t)v;
    return rc;
}

static int get_dtype(const struct conf_doc *d, const struct conf_node *m, const char *key,
                     enum llm_dtype *out, struct conf_err *err)
{
    const char *s = NULL;
    int rc = conf_string(d, m, key, false, &s, err);
    if (rc || !s)
        return rc;
    if (llm_dtype_parse(s, out))
        return conf_errf(err, d, conf_get(m, key), key,
                         "expected fp32, fp16, bf16, fp8, int8 or int4, got '%.40s'", s);
    return 0;
}

/* model: a preset name, or a mapping of the architecture (params_b required). */
static int load_model(const struct conf_doc *d, const struct conf_node *l, struct llm_cfg *c,
                      struct conf_err *err)
{
    static const char *const keys[] = {"params_b", "layers",      "hidden", "heads",
                                       "kv_heads", "head_dim",    "vocab",  "intermediate",
                                       "tied",     "max_context", NULL};
    const struct conf_node *m = conf_get(l, "model");
    int rc;
    if (!m)
        return conf_errf(err, d, l, "model",
                         "missing (a preset such as llama-3.1-8b, or a mapping with params_b, "
                         "layers, kv_heads, head_dim)");
    if (m->kind == CONF_SCALAR) {
        const struct llm_arch *a = llm_arch_find(m->value);
        if (!a) {
            char names[256];
            llm_arch_names(names, sizeof(names));
            return conf_errf(err, d, m, "model", "unknown model '%.40s' (presets: %s)", m->value,
                             names);
        }
        c->arch = *a;
        c->model_name = a->name;
        return 0;
    }
    if ((rc = conf_check_keys(d, m, "model", keys, err)))
        return rc;
    struct llm_arch *a = &c->arch;
    memset(a, 0, sizeof(*a));
    snprintf(a->name, sizeof(a->name), "custom");
    c->model_name = "custom";
    double pb = 0;
    a->max_context = 4096;
    if ((rc = conf_double(d, m, "params_b", true, 0.01, 10000, &pb, err)) ||
        (rc = get_u32(d, m, "layers", 1, 1000, &a->layers, err)) ||
        (rc = get_u32(d, m, "heads", 1, 4096, &a->heads, err)) ||
        (rc = get_u32(d, m, "kv_heads", 1, 4096, &a->kv_heads, err)) ||
        (rc = get_u32(d, m, "head_dim", 1, 4096, &a->head_dim, err)) ||
        (rc = get_u32(d, m, "hidden", 1, 1 << 20, &a->hidden, err)) ||
        (rc = get_u32(d, m, "intermediate", 1, 1 << 22, &a->intermediate, err)) ||
        (rc = get_u32(d, m, "vocab", 1, 1 << 24, &a->vocab, err)) ||
        (rc = conf_bool(d, m, "tied", false, &a->tied, err)) ||
        (rc = get_u32(d, m, "max_context", 16, 1 << 24, &a->max_context, err)))
        return rc;
    static const char *const need[] = {"layers", "kv_heads", "head_dim"};
    for (size_t i = 0; i < 3; i++)
        if (!conf_get(m, need[i]))
            return conf_errf(err, d, m, need[i],
                             "missing (a custom model needs params_b, layers, kv_heads and "
                             "head_dim: they size its KV cache)");
    if (!a->heads)
        a->heads = a->kv_heads;
    if (a->heads % a->kv_heads)
        return conf_errf(err, d, conf_get(m, "heads"), "heads",
                         "expected a multiple of kv_heads (%u)", a->kv_heads);
    if (!a->hidden)
        a->hidden = a->heads * a->head_dim;
    a->params = pb * 1e9;
    return 0;
}

/* One length distribution: {fixed: N} | {lognormal: {median, sigma}} | {named: NAME}, + max. */
static int load_len(const struct conf_doc *d, const struct conf_node *t, const char *key,
                    bool prompt, struct tok_dist *out, struct conf_err *err)
{
    static const char *const keys[] = {"fixed", "lognormal", "named", "max", NULL};
    static const char *const lkeys[] = {"median", "sigma", NULL};
    const struct conf_node *n = conf_get(t, key);
    int rc;
    if (!n)
        return 0; /* keeps the default */
    if ((rc = conf_check_keys(d, n, key, keys, err)))
        return rc;
    int kinds = !!conf_get(n, "fixed") + !!conf_get(n, "lognormal") + !!conf_get(n, "named");
    if (kinds != 1)
        return conf_errf(err, d, n, key, "expected exactly one of 'fixed', 'lognormal', 'named'");
    struct tok_dist dd = {0};
    uint32_t mx = 0, fx = 1;
    if (conf_get(n, "fixed")) {
        if ((rc = get_u32(d, n, "fixed", 1, TRACE_MAX_TOKENS, &fx, err)))
            return rc;
        dd.kind = TOK_FIXED;
        dd.fixed = fx;
    } else if (conf_get(n, "lognormal")) {
        const struct conf_node *ln = conf_get(n, "lognormal");
        double med = 0, sig = 0;
        if ((rc = conf_check_keys(d, ln, "lognormal", lkeys, err)) ||
            (rc = conf_double(d, ln, "median", true, 1, TRACE_MAX_TOKENS, &med, err)) ||
            (rc = conf_double(d, ln, "sigma", true, 0, 5, &sig, err)))
            return rc;
        dd.kind = TOK_LOGNORMAL;
        dd.mu = log(med);
        dd.sigma = sig;
    } else {
        const char *nm = NULL;
        if ((rc = conf_string(d, n, "named", true, &nm, err)))
            return rc;
        const struct tok_named *t2 = tok_named_find(nm);
        if (!t2) {
            char names[128];
            tok_named_list(names, sizeof(names));
            return conf_errf(err, d, conf_get(n, "named"), "named",
                             "unknown token distribution '%.40s' (expected one of: %s)", nm, names);
        }
        dd.kind = TOK_EMPIRICAL;
        dd.q = prompt ? t2->in : t2->out;
    }
    if ((rc = get_u32(d, n, "max", 1, TRACE_MAX_TOKENS, &mx, err)))
        return rc;
    dd.max = conf_get(n, "max") ? mx : 0;
    *out = dd;
    return 0;
}

/* tokens: NAME | {prompt: D, output: D}. Default azure-conv. */
static int load_tokens(const struct conf_doc *d, const struct conf_node *l, struct llm_cfg *c,
                       struct conf_err *err)
{
    static const char *const keys[] = {"prompt", "output", NULL};
    const struct tok_named *def = tok_named_find("azure-conv");
    c->prompt = (struct tok_dist){.kind = TOK_EMPIRICAL, .q = def->in};
    c->output = (struct tok_dist){.kind = TOK_EMPIRICAL, .q = def->out};
    const struct conf_node *t = conf_get(l, "tokens");
    int rc;
    if (!t)
        return 0;
    if (t->kind == CONF_SCALAR) {
        const struct tok_named *nd = tok_named_find(t->value);
        if (!nd) {
            char names[128];
            tok_named_list(names, sizeof(names));
            return conf_errf(err, d, t, "tokens",
                             "unknown token distribution '%.40s' (expected one of: %s, or "
                             "{prompt: ..., output: ...})",
                             t->value, names);
        }
        c->prompt.q = nd->in;
        c->output.q = nd->out;
        return 0;
    }
    if ((rc = conf_check_keys(d, t, "tokens", keys, err)) ||
        (rc = load_len(d, t, "prompt", true, &c->prompt, err)) ||
        (rc = load_len(d, t, "output", false, &c->output, err)))
        return rc;
    return 0;
}

/* calibration: η's, host time and TP efficiencies (models/llm.h). */
static int load_calibration(const struct conf_doc *d, const struct conf_node *l,
                            struct llm_knobs *k, struct conf_err *err)
{
    static const char *const keys[] = {"eta_bw",   "eta_flops",     "eta_attn",
                                       "fixed_ms", "tp_efficiency", NULL};
    const struct conf_node *c = conf_get(l, "calibration");
    int rc;
    if (!c)
        return 0;
    double fixed_ms = k->fixed_us / 1e3;
    if ((rc = conf_check_keys(d, c, "calibration", keys, err)) ||
        (rc = conf_double(d, c, "eta_bw", false, 0.01, 1, &k->eta_bw, err)) ||
        (rc = conf_double(d, c, "eta_flops", false, 0.01, 1, &k->eta_flops, err)) ||
        (rc = conf_double(d, c, "eta_attn", false, 0.01, 1, &k->eta_attn, err)) ||
        (rc = conf_double(d, c, "fixed_ms", false, 0, 1e4, &fixed_ms, err)))
        return rc;
    k->fixed_us = fixed_ms * 1e3;
    const struct conf_node *te = conf_get(c, "tp_efficiency");
    if (te && te->kind != CONF_MAP)
        return conf_errf(err, d, te, "tp_efficiency", "expected a mapping {2: 0.87, 4: 0.71, ...}");
    for (size_t i = 0; te && i < te->n; i++) {
        static const char *const degs[] = {"1", "2", "4", "8"};
        int slot = -1;
        for (int j = 0; j < 4; j++)
            if (!strcmp(te->keys[i], degs[j]))
                slot = j;
        if (slot < 0) {
            struct conf_node at = {.line = te->key_line[i], .col = te->key_col[i]};
            return conf_errf(err, d, &at, "tp_efficiency",
                             "expected a degree 1, 2, 4 or 8, got '%.20s'", te->keys[i]);
        }
        if ((rc = conf_double(d, te, te->keys[i], true, 0.01, 1, &k->tp_eff[slot], err)))
            return rc;
    }
    return 0;
}

/* iteration: whole-card TP-1 coefficients that replace the derived ones. */
static int load_iteration(const struct conf_doc *d, const struct conf_node *l, struct llm_cfg *c,
                          struct conf_err *err)
{
    static const char *const keys[] = {
        "fixed_ms", "weights_ms", "per_token_ms", "per_context_token_us", "per_pair_ns", NULL};
    const struct conf_node *it = conf_get(l, "iteration");
    int rc;
    if (!it)
        return 0;
    struct llm_coef *b = &c->base;
    double f = b->fixed_us / 1e3, w = b->weights_us / 1e3, t = b->token_us / 1e3, x = b->ctx_us,
           p = b->pair_us * 1e3;
    if ((rc = conf_check_keys(d, it, "iteration", keys, err)) ||
        (rc = conf_double(d, it, "fixed_ms", false, 0, 1e5, &f, err)) ||
        (rc = conf_double(d, it, "weights_ms", false, 0, 1e5, &w, err)) ||
        (rc = conf_double(d, it, "per_token_ms", false, 0, 1e5, &t, err)) ||
        (rc = conf_double(d, it, "per_context_token_us", false, 0, 1e5, &x, err)) ||
        (rc = conf_double(d, it, "per_pair_ns", false, 0, 1e8, &p, err)))
        return rc;
    b->fixed_us = f * 1e3;
    b->weights_us = w * 1e3;
    b->token_us = t * 1e3;
    b->ctx_us = x;
    b->pair_us = p / 1e3;
    if (!(b->fixed_us + b->weights_us + b->token_us > 0))
        return conf_errf(err, d, it, "iteration",
                         "expected a step to take time (fixed_ms, weights_ms or per_token_ms > 0)");
    c->coef_given = true;
    return 0;
}

/* slo: ttft_ms / tpot_ms, or mlperf: NAME (models/latency.c), and quantile. */
static int load_slo(const struct conf_doc *d, const struct conf_node *n, struct llm_cfg *c,
                    struct service_cfg *sc, struct conf_err *err)
{
    static const char *const keys[] = {"ttft_ms", "tpot_ms", "mlperf", "quantile", NULL};
    const struct conf_node *s = conf_get(n, "slo");
    int rc;
    /* MLPerf Inference's Llama2-70B server bounds (loadgen mlperf.conf): TTFT 2 s, TPOT 200 ms. */
    double ttft = 2000, tpot = 200;
    sc->slo_quantile = 0.99;
    if (s) {
        if (s->kind == CONF_MAP && (conf_get(s, "p99_ms") || conf_get(s, "target_ms")))
            return conf_errf(err, d, s, "slo",
                             "an llm service's SLO is ttft_ms and tpot_ms (or mlperf: NAME), not "
                             "an end-to-end latency");
        if ((rc = conf_check_keys(d, s, "slo", keys, err)))
            return rc;
        const char *ml = NULL;
        if ((rc = conf_string(d, s, "mlperf", false, &ml, err)))
            return rc;
        if (ml) {
            const struct latency_slo *l = latency_slo_find(ml);
            if (!l || !(l->ttft_s > 0))
                return conf_errf(err, d, conf_get(s, "mlperf"), "mlperf",
                                 "unknown MLPerf LLM benchmark '%.40s' (e.g. llama2-70b, "
                                 "llama2-70b-interactive, llama3.1-8b)",
                                 ml);
            ttft = l->ttft_s * 1e3;
            tpot = l->tpot_s * 1e3;
            if (conf_get(s, "ttft_ms") || conf_get(s, "tpot_ms"))
                return conf_errf(err, d, s, "mlperf",
                                 "give either mlperf or ttft_ms/tpot_ms, not both");
        }
        if ((rc = conf_double(d, s, "ttft_ms", false, 0.001, 1e9, &ttft, err)) ||
            (rc = conf_double(d, s, "tpot_ms", false, 0.001, 1e9, &tpot, err)) ||
            (rc = conf_double(d, s, "quantile", false, 0.5, 0.99999, &sc->slo_quantile, err)))
            return rc;
    }
    c->ttft_slo = sim_time_from_sec(ttft / 1e3);
    c->tpot_slo = sim_time_from_sec(tpot / 1e3);
    sc->slo = c->ttft_slo;
    return 0;
}

static int load_autoscale_metric(const struct conf_doc *d, const struct conf_node *l,
                                 struct llm_cfg *c, struct conf_err *err)
{
    static const char *const keys[] = {"metric", "target", NULL};
    const struct conf_node *a = conf_get(l, "autoscale");
    int rc, metric = 0;
    if (!a)
        return 0;
    if ((rc = conf_check_keys(d, a, "autoscale", keys, err)) ||
        (rc = conf_enum(d, a, "metric", true, metric_names, &metric, err)))
        return rc;
    c->scale_metric = (enum llm_scale_metric)metric;
    if (metric == LLM_SCALE_TOKENS) {
        if ((rc = conf_double(d, a, "target", true, 1, 1e9, &c->scale_target, err)))
            return rc;
    } else if (metric == LLM_SCALE_KV) {
        c->scale_target = 0.8;
        if ((rc = conf_double(d, a, "target", false, 0.01, 1, &c->scale_target, err)))
            return rc;
    } else if (conf_get(a, "target")) {
        return conf_errf(err, d, conf_get(a, "target"), "target",
                         "metric 'requests' scales on the policy's HPA target (policy.autoscale)");
    }
    return 0;
}

double llm_cfg_request_gib(const struct llm_cfg *c, const struct scenario *sc)
{
    double card = sc->spec->memory_mib / 1024.0;
    if (!c->on_mig)
        return c->mem_util * card;
    /* On MIG an instance must hold the replica's minimum: weights, overhead, one context. */
    double need = c->model.weight_bytes / (1024.0 * 1024.0 * 1024.0) + c->overhead_gib +
                  (double)c->max_context * c->model.kv_bytes_per_token / (1024.0 * 1024.0 * 1024.0);
    return need / c->mem_util;
}

int llm_cfg_memory(const struct llm_cfg *c, const struct scenario *sc,
                   const struct mig_profile *instance, struct llm_mem *out)
{
    double dev = instance ? instance->memory_mib / 1024.0 : sc->spec->memory_mib / 1024.0;
    uint32_t cards = instance ? 1 : c->tp;
    return llm_memory_plan(&c->model, dev, cards, c->mem_util, c->overhead_gib, c->block,
                           c->max_context, out);
}

/* The replica must fit where it will run; the message carries the figures. */
static int check_fit(const struct conf_doc *d, const struct conf_node *n, const struct llm_cfg *c,
                     const struct service_cfg *sc, const struct scenario *s, struct conf_err *err)
{
    struct llm_mem f;
    char msg[600], where[96];
    if (c->on_mig) {
        if (sc->mig_profile) {
            const struct mig_profile *p = mig_profile_find(s->spec, sc->mig_profile);
            if (llm_cfg_memory(c, s, p, &f) == 0)
                return 0;
            snprintf(where, sizeof(where), "MIG %s", p->name);
            llm_fit_msg(msg, sizeof(msg), c->model_name, where, &f);
            return conf_errf(err, d, conf_get(n, "mig_profile"), "mig_profile", "%s", msg);
        }
        size_t np = 0;
        const struct mig_profile *pr = mig_profiles(s->spec, &np);
        for (size_t i = 0; i < np; i++)
            if (llm_cfg_memory(c, s, &pr[i], &f) == 0)
                return 0;
        const struct mig_profile *big = np ? &pr[np - 1] : NULL;
        for (size_t i = 0; i < np; i++)
            if (pr[i].memory_mib > big->memory_mib)
                big = &pr[i];
        llm_cfg_memory(c, s, big, &f);
        snprintf(where, sizeof(where), "the largest MIG instance (%s)", big ? big->name : "-");
        llm_fit_msg(msg, sizeof(msg), c->model_name, where, &f);
        return conf_errf(err, d, conf_get(n, "llm"), "llm", "%s", msg);
    }
    if (llm_cfg_memory(c, s, NULL, &f) == 0)
        return 0;
    snprintf(where, sizeof(where), "%u x %s", c->tp, s->spec->name);
    llm_fit_msg(msg, sizeof(msg), c->model_name, where, &f);
    const char *hint = f.weight_bytes + f.overhead_bytes < f.usable_bytes
                           ? "lower max_context or use an FP8 KV cache (kv_dtype: fp8)"
                           : "set tensor_parallel to more cards of a node, or quantise (dtype)";
    return conf_errf(err, d, conf_get(n, "llm"), "llm", "%s; %s", msg, hint);
}

int llm_cfg_load(const struct conf_doc *d, const struct conf_node *n, struct service_cfg *sc,
                 const struct scenario *s, struct conf_err *err)
{
    static const char *const keys[] = {"model",           "dtype",
                                       "kv_dtype",        "max_context",
                                       "tensor_parallel", "gpu_memory_utilization",
                                       "overhead_gb",     "block_size",
                                       "max_num_seqs",    "max_num_batched_tokens",
                                       "chunked_prefill", "preemption",
                                       "swap_space_gb",   "swap_gbps",
                                       "router",          "tokens",
                                       "calibration",     "iteration",
                                       "autoscale",       NULL};
    const struct conf_node *l = conf_get(n, "llm");
    int rc;
    if (!l)
        return conf_errf(err, d, n, "llm", "missing (a kind: llm service needs an llm block)");
    if ((rc = conf_check_keys(d, l, "llm", keys, err)))
        return rc;
    struct llm_cfg *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    sc->llm = c;
    c->on_mig = s->sharing == SHARE_MIG;
    if (s->mixed) {
        /* Sized for one kind of card: the pools it may run on all share by MIG, or none. */
        uint64_t may = pool_match_mask(s->pools, s->npools, &sc->place.require);
        uint32_t mig = 0, other = 0;
        for (uint32_t i = 0; i < s->npools; i++)
            if ((may >> i) & 1u)
                *(scenario_pool_mode(s, i) == SHARE_MIG ? &mig : &other) += 1;
        if (mig && other)
            return conf_errf(err, d, conf_get(n, sc->place.require.given ? "require" : "llm"),
                             sc->place.require.given ? "require" : "llm",
                             "service '%s': an LLM replica is sized either for MIG instances or "
                             "for cards, and the pools it may run on hold both; require pools "
                             "of one kind (require: {gpu: ..., labels: {...}})",
                             sc->name);
        c->on_mig = mig > 0;
    }
    if ((rc = load_model(d, l, c, err)))
        return rc;
    c->wdtype = LLM_DT_BF16;
    c->kvdtype = LLM_DT_BF16;
    c->tp = 1;
    c->mem_util = 0.9;     /* vLLM's gpu_memory_utilization default */
    c->overhead_gib = 1.3; /* vLLM start-up logs: non-torch ~0.1-0.3 + activation peak ~0.9-1.2 */
    c->block = 16;         /* vLLM's default block_size on CUDA */
    /* vLLM V1 on an A100 behind the OpenAI server (EngineArgs.get_batch_defaults): 256 and 2048;
     * chunked prefill is always on in V1. */
    c->max_num_seqs = 256;
    c->max_batched_tokens = 2048;
    c->chunked = true;
    c->preempt = LLM_PREEMPT_RECOMPUTE; /* vLLM's default (V1 has no other) */
    c->swap_gib = 4;                    /* vLLM V0's swap_space default, GiB */
    c->swap_gbps = 25;                  /* PCIe 4.0 x16, ~25 GB/s practical of 32 */
    c->router = LLM_ROUTE_LEAST;
    llm_knobs_default(&c->knobs);
    int pre = 0, route = 0;
    if ((rc = get_dtype(d, l, "dtype", &c->wdtype, err)) ||
        (rc = get_dtype(d, l, "kv_dtype", &c->kvdtype, err)) ||
        (rc = get_u32(d, l, "tensor_parallel", 1, 8, &c->tp, err)) ||
        (rc = conf_double(d, l, "gpu_memory_utilization", false, 0.01, 1, &c->mem_util, err)) ||
        (rc = conf_double(d, l, "overhead_gb", false, 0, 1024, &c->overhead_gib, err)) ||
        (rc = get_u32(d, l, "block_size", 1, 1024, &c->block, err)) ||
        (rc = get_u32(d, l, "max_num_seqs", 1, 65536, &c->max_num_seqs, err)) ||
        (rc = get_u32(d, l, "max_num_batched_tokens", 1, 1 << 24, &c->max_batched_tokens, err)) ||
        (rc = conf_bool(d, l, "chunked_prefill", false, &c->chunked, err)) ||
        (rc = conf_enum(d, l, "preemption", false, preempt_names, &pre, err)) ||
        (rc = conf_double(d, l, "swap_space_gb", false, 0, 1e5, &c->swap_gib, err)) ||
        (rc = conf_double(d, l, "swap_gbps", false, 0.01, 1e4, &c->swap_gbps, err)) ||
        (rc = conf_enum(d, l, "router", false, router_names, &route, err)) ||
        (rc = load_tokens(d, l, c, err)) || (rc = load_calibration(d, l, &c->knobs, err)) ||
        (rc = load_autoscale_metric(d, l, c, err)) || (rc = load_slo(d, n, c, sc, err)))
        return rc;
    c->preempt = (enum llm_preempt)pre;
    c->router = (enum llm_router)route;
    llm_model_from_arch(&c->arch, c->wdtype, c->kvdtype, &c->model);
    c->max_context = c->arch.max_context;
    if ((rc = get_u32(d, l, "max_context", 16, c->arch.max_context, &c->max_context, err)))
        return rc;

    const struct conf_node *tpn = conf_get(l, "tensor_parallel");
    if (!(llm_tp_efficiency(&c->knobs, c->tp) > 0))
        return conf_errf(err, d, tpn, "tensor_parallel", "expected 1, 2, 4 or 8, got %u", c->tp);
    if (c->tp > s->gpus_per_node)
        return conf_errf(err, d, tpn, "tensor_parallel",
                         "a replica's cards are on one node, which has %u", s->gpus_per_node);
    if (c->tp > 1 && c->on_mig)
        return conf_errf(err, d, tpn, "tensor_parallel",
                         "tensor parallelism across MIG instances is not supported (NCCL does "
                         "not run between MIG instances); use tensor_parallel: 1");
    if (c->arch.heads % c->tp || c->arch.kv_heads % c->tp)
        return conf_errf(err, d, tpn, "tensor_parallel",
                         "expected a divisor of the model's heads (%u) and KV heads (%u)",
                         c->arch.heads, c->arch.kv_heads);
    if (c->max_batched_tokens < c->max_num_seqs)
        return conf_errf(err, d, conf_get(l, "max_num_batched_tokens"), "max_num_batched_tokens",
                         "expected at least max_num_seqs (%u), as vLLM requires", c->max_num_seqs);
    if (!c->chunked && c->max_batched_tokens < c->max_context)
        return conf_errf(err, d, conf_get(l, "max_num_batched_tokens"), "max_num_batched_tokens",
                         "without chunked prefill a whole prompt runs in one step: expected at "
                         "least max_context (%u)",
                         c->max_context);

    double tflops = llm_board_tflops(s->spec->name);
    if (tflops > 0 &&
        llm_coef_base(&c->model, &c->knobs, s->spec->mem_bw_gbps, tflops, &c->base) != 0)
        return conf_errf(err, d, l, "calibration", "the iteration time cannot be derived");
    c->base.fixed_us = c->knobs.fixed_us;
    if ((rc = load_iteration(d, l, c, err)))
        return rc;
    if (!(tflops > 0) && !c->coef_given)
        return conf_errf(err, d, l, "iteration",
                         "no FLOP/s figure for %s: give the whole-card coefficients "
                         "(iteration: {fixed_ms, weights_ms, per_token_ms, "
                         "per_context_token_us, per_pair_ns})",
                         s->spec->name);
    if ((rc = check_fit(d, n, c, sc, s, err)))
        return rc;
    sc->max_batch = c->max_num_seqs;
    sc->mem_gib = llm_cfg_request_gib(c, s);
    /* The capacity the policies size with: on whole cards, or on the largest instance that
     * holds it under MIG, at the mean lengths of its token distribution. */
    struct llm_mem f;
    struct llm_coef cc;
    double mem = 1, sm = 1;
    const struct mig_profile *on = NULL;
    if (c->on_mig) {
        on = sc->mig_profile ? mig_profile_find(s->spec, sc->mig_profile) : NULL;
        size_t np = 0;
        const struct mig_profile *pr = mig_profiles(s->spec, &np);
        for (size_t i = 0; !on && i < np; i++)
            if (llm_cfg_memory(c, s, &pr[i], &f) == 0 && (!on || pr[i].memory_mib < on->memory_mib))
                on = &pr[i];
        mem = on ? on->memory_slices / 8.0 : 1;
        sm = on ? mig_knobs_speed(&s->mig, on) : 1;
    }
    llm_cfg_memory(c, s, on, &f);
    c->kv_card = c->on_mig ? 0 : f.kv_tokens;
    if (llm_coef_scale(&c->base, &c->knobs, c->tp, mem, sm, &cc) == 0)
        c->cap_rps =
            llm_capacity_rps(&cc, (double)f.kv_tokens, c->max_num_seqs, tok_mean(&c->prompt),
                             tok_mean(&c->output), (double)c->tpot_slo);
    return 0;
}
