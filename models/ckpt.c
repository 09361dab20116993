/* ckpt.c — checkpoint cost model (see ckpt.h). */
#include "models/ckpt.h"

#include <errno.h>
#include <math.h>

void ckpt_knobs_init(struct ckpt_knobs *k)
{
    k->bytes_per_param = CKPT_BYTES_PER_PARAM_DEFAULT;
    k->write_gbps = CKPT_WRITE_GBPS_DEFAULT;
    k->read_gbps = CKPT_READ_GBPS_DEFAULT;
    k->save_fixed_s = CKPT_SAVE_FIXED_S_DEFAULT;
    k->warmup_s = CKPT_WARMUP_S_DEFAULT;
    k->grace_s = CKPT_GRACE_S_DEFAULT;
}

int ckpt_knobs_check(const struct ckpt_knobs *k)
{
    if (!(k->bytes_per_param >= 0.0) || !(k->write_gbps > 0.0) || !(k->read_gbps > 0.0) ||
        !(k->save_fixed_s >= 0.0) || !(k->warmup_s >= 0.0) || !(k->grace_s >= 0.0))
        return -EINVAL;
    return 0;
}

double ckpt_young_interval(double cost_s, double mtbf_s)
{
    if (!(cost_s > 0.0) || !(mtbf_s > 0.0))
        return 0.0;
    return sqrt(2.0 * cost_s * mtbf_s);
}

double ckpt_daly_interval(double cost_s, double mtbf_s)
{
    if (!(cost_s > 0.0) || !(mtbf_s > 0.0))
        return 0.0;
    if (cost_s >= 2.0 * mtbf_s)
        return mtbf_s;
    double r = cost_s / (2.0 * mtbf_s);
    return sqrt(2.0 * cost_s * mtbf_s) * (1.0 + sqrt(r) / 3.0 + r / 9.0) - cost_s;
}

double ckpt_interval(enum ckpt_rule rule, double every_s, double cost_s, double mtbf_s)
{
    switch (rule) {
    case CKPT_RULE_YOUNG:
        return ckpt_young_interval(cost_s, mtbf_s);
    case CKPT_RULE_DALY:
        return ckpt_daly_interval(cost_s, mtbf_s);
    case CKPT_RULE_EVERY:
    default:
        return every_s > 0.0 ? every_s : 0.0;
    }
}

double ckpt_state_bytes(const struct ckpt_knobs *k, double params)
{
    return params > 0.0 ? params * k->bytes_per_param : 0.0;
}

double ckpt_save_s(const struct ckpt_knobs *k, double bytes)
{
    return (bytes > 0.0 ? bytes / (k->write_gbps * 1e9) : 0.0) + k->save_fixed_s;
}

double ckpt_restore_s(const struct ckpt_knobs *k, double bytes)
{
    return (bytes > 0.0 ? bytes / (k->read_gbps * 1e9) : 0.0) + k->warmup_s;
}

double ckpt_save_sharded_s(const struct ckpt_knobs *k, double bytes, unsigned ranks)
{
    return ckpt_save_s(k, ranks > 1 ? bytes / (double)ranks : bytes);
}

double ckpt_restore_sharded_s(const struct ckpt_knobs *k, double bytes, unsigned ranks)
{
    return ckpt_restore_s(k, ranks > 1 ? bytes / (double)ranks : bytes);
}

double ckpt_expected_loss_s(double interval_s, double restart_s)
{
    return interval_s / 2.0 + restart_s;
}

static double nonneg(double x)
{
    return x > 0.0 ? x : 0.0;
}

struct ckpt_preempt ckpt_preempt_graceful(double since_last_s, double save_s, double grace_s)
{
    since_last_s = nonneg(since_last_s);
    save_s = nonneg(save_s);
    grace_s = nonneg(grace_s);
    if (save_s <= grace_s)
        return (struct ckpt_preempt){.saved = true, .lost_s = 0.0, .spent_s = save_s};
    return (struct ckpt_preempt){.saved = false, .lost_s = since_last_s, .spent_s = grace_s};
}

struct ckpt_preempt ckpt_preempt_hard(double since_last_s)
{
    return (struct ckpt_preempt){.saved = false, .lost_s = nonneg(since_last_s), .spent_s = 0.0};
}
