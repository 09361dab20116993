/*
 * rng.c — per-component GSL streams seeded from (master seed, stream id).
 *
 * Seeding: GSL's taus2 takes a 32-bit seed (gsl_rng_set keeps the low 32
 * bits and maps 0 to its own default). The 64-bit stream seed s is folded
 * to 32 bits as (s ^ (s >> 32)) & 0xffffffff so both halves count; a fold of 0
 * is replaced by RNG_SEED_ZERO_FOLD (an arbitrary odd constant) so that seed 0
 * never silently aliases GSL's default seed. Consequence: at most 2^32
 * distinct streams, and two (master, id) pairs collide with probability about
 * 2^-32 — far below anything a run with a few hundred streams can notice.
 */
#include "sim/rng.h"

#include <errno.h>
#include <math.h>

#include <gsl/gsl_randist.h>

#include "sim/zigtab.h"

#define RNG_SEED_ZERO_FOLD 0x9e3779b9UL

/* FNV-1a 64 parameters (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/). */
#define FNV64_OFFSET 0xcbf29ce484222325ULL
#define FNV64_PRIME  0x100000001b3ULL

/* splitmix64 finaliser (Steele, Lea, Flood, "Fast splittable PRNGs", OOPSLA 2014). */
uint64_t rng_splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t rng_stream_id(const char *name)
{
    uint64_t h = FNV64_OFFSET;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= FNV64_PRIME;
    }
    return h;
}

uint64_t rng_stream_seed(uint64_t master_seed, uint64_t stream_id)
{
    return rng_splitmix64(master_seed ^ rng_splitmix64(stream_id));
}

unsigned long rng_seed_fold32(uint64_t seed)
{
    unsigned long s = (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffULL);
    return s ? s : RNG_SEED_ZERO_FOLD;
}

int rng_init(struct rng *r, uint64_t master_seed, uint64_t stream_id)
{
    r->g = gsl_rng_alloc(gsl_rng_taus2);
    if (!r->g)
        return -ENOMEM;
    gsl_rng_set(r->g, rng_seed_fold32(rng_stream_seed(master_seed, stream_id)));
    return 0;
}

void rng_release(struct rng *r)
{
    if (r->g)
        gsl_rng_free(r->g);
    r->g = NULL;
}

double rng_uniform_pos(struct rng *r)
{
    return gsl_rng_uniform_pos(r->g);
}

/*
 * Unit exponential by the ziggurat method (Marsaglia & Tsang 2000), ~4x
 * faster than inversion (-log u), which dominated the per-request cost. One
 * 32-bit draw gives the layer (8 low bits) and a 24-bit uniform (high bits);
 * the rare wedge and tail cases fall back to exp/log. Tables: sim/zigtab.h.
 */
static double exp1_zig(struct rng *r)
{
    for (;;) {
        uint32_t j = (uint32_t)(gsl_rng_get(r->g) & 0xffffffffUL);
        uint32_t i = j & 255u, u = j >> 8;
        if (u < zig_exp_k[i])
            return u * zig_exp_w[i];
        if (i == 0)
            return ZIG_EXP_R - log(gsl_rng_uniform_pos(r->g));
        double x = u * zig_exp_w[i];
        if (zig_exp_f[i] + gsl_rng_uniform(r->g) * (zig_exp_f[i - 1] - zig_exp_f[i]) < exp(-x))
            return x;
    }
}

double rng_exponential(struct rng *r, double mean)
{
    return mean * exp1_zig(r);
}

double rng_lognormal_mean_cv(struct rng *r, double mean, double cv)
{
    if (cv == 0.0)
        return mean;
    /* If X = exp(N(mu, s^2)): E X = exp(mu + s^2/2), CV^2 = exp(s^2) - 1. */
    double s2 = log1p(cv * cv);
    return gsl_ran_lognormal(r->g, log(mean) - 0.5 * s2, sqrt(s2));
}

double rng_lognormal_median_sigma(struct rng *r, double median, double sigma)
{
    return gsl_ran_lognormal(r->g, log(median), sigma);
}
