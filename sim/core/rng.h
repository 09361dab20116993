/*
 * rng.h — independent random streams.
 *
 * Every component draws from its own GSL generator, seeded from the run's
 * master seed and a fixed stream id: seed = splitmix64(master ^ splitmix64(id)).
 * Stream ids are derived from stable names (rng_stream_id("service/search/arrivals")),
 * so adding a component never shifts the numbers another component draws.
 * Never the C library rand, never gsl_rng_env_setup: both hide global state.
 *
 * The generator is L'Ecuyer's maximally equidistributed combined Tausworthe
 * generator "taus2" (period 2^88; GSL: "one of the fastest simulation quality
 * generators"): it made whole runs ~10 % faster than mt19937, whose longer
 * period a run drawing ~10^10 numbers per stream does not need. It takes a
 * 32-bit seed: the 64-bit stream seed is folded with rng_seed_fold32().
 *
 * The per-request draws (uniforms, exponentials) are inline: the generator's
 * step lives in this header and works on the state of a GSL generator of our
 * own type (rng_taus2_type), registered with GSL so that every GSL
 * distribution (gamma, Weibull, lognormal) draws from the same stream. The
 * type's output equals GSL's gsl_rng_taus2 number for number (same seeding,
 * same recurrence; tests/core/test_rng.c compares them), so a stream is the
 * sequence GSL's taus2 would give; only the two calls per draw (into libgsl,
 * then through its function pointer) are gone. A struct rng is owned by its
 * component; it holds no global state, so streams and simulations may
 * interleave freely.
 */
#ifndef TIDESIM_CORE_RNG_H
#define TIDESIM_CORE_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

/* taus2 state: three 32-bit Tausworthe components (kept in unsigned long like GSL's). */
struct rng_taus {
    unsigned long s1, s2, s3;
};

struct rng {
    gsl_rng *g;          /* a generator of type rng_taus2_type: for GSL's distributions */
    struct rng_taus *st; /* g->state, for the inline draws */
};

/* The GSL generator type behind every stream (name "tidesim-taus2"). */
extern const gsl_rng_type *const rng_taus2_type;

/* Ziggurat tables for the unit exponential (sim/core/zigtab.c, scripts/gen_zigtab.py). */
#define RNG_ZIG_R 7.69711747013104972
extern const uint32_t rng_zig_k[256];
extern const double rng_zig_w[256];
extern const double rng_zig_f[256];
/* ... and for the standard normal (128 layers over |x|). */
#define RNG_ZIGN_R 3.442619855899
extern const uint32_t rng_zign_k[128];
extern const double rng_zign_w[128];
extern const double rng_zign_f[128];

uint64_t rng_splitmix64(uint64_t x);

/* FNV-1a 64-bit hash of a stream name: a stable stream id. */
uint64_t rng_stream_id(const char *name);

/* Seed used for (master, stream). */
uint64_t rng_stream_seed(uint64_t master_seed, uint64_t stream_id);

/*
 * The 32-bit value given to gsl_rng_set(): (seed ^ (seed >> 32)) & 0xffffffff,
 * or the fixed non-zero constant 0x9e3779b9 when that fold is 0 (GSL would
 * otherwise silently replace 0 by its default seed 4357).
 */
unsigned long rng_seed_fold32(uint64_t seed);

/*
 * Allocate the generator (gsl_rng_taus2) and seed it with
 * rng_seed_fold32(rng_stream_seed(master_seed, stream_id)).
 * Returns 0, or -ENOMEM with r->g == NULL. Release with rng_release().
 */
int rng_init(struct rng *r, uint64_t master_seed, uint64_t stream_id);

/* Free the generator; r->g becomes NULL. Safe on a released or failed rng. */
void rng_release(struct rng *r);

/* One step of taus2 (L'Ecuyer 1996): the next 32-bit output. */
static inline uint32_t rng_u32(struct rng *r)
{
    struct rng_taus *t = r->st;
    const unsigned long m = 0xffffffffUL;
    t->s1 = (((t->s1 & 4294967294UL) << 12) & m) ^ ((((t->s1 << 13) & m) ^ t->s1) >> 19);
    t->s2 = (((t->s2 & 4294967288UL) << 4) & m) ^ ((((t->s2 << 2) & m) ^ t->s2) >> 25);
    t->s3 = (((t->s3 & 4294967280UL) << 17) & m) ^ ((((t->s3 << 3) & m) ^ t->s3) >> 11);
    return (uint32_t)(t->s1 ^ t->s2 ^ t->s3);
}

/* Uniform on [0, 1): the next output / 2^32 (GSL's gsl_rng_uniform). */
static inline double rng_uniform(struct rng *r)
{
    return rng_u32(r) / 4294967296.0;
}

/* Uniform on the open interval (0, 1) (GSL's gsl_rng_uniform_pos: zero is redrawn). */
static inline double rng_uniform_pos(struct rng *r)
{
    for (;;) {
        uint32_t u = rng_u32(r);
        if (u)
            return u / 4294967296.0;
    }
}

/* The ziggurat's rare cases (wedge, tail) for layer i and 24-bit uniform u. */
double rng_exp1_slow(struct rng *r, uint32_t i, uint32_t u);

/*
 * Unit exponential by the ziggurat method (Marsaglia & Tsang 2000), ~4x
 * faster than inversion (-log u), which dominated the per-request cost. One
 * 32-bit draw gives the layer (8 low bits) and a 24-bit uniform (high bits);
 * ~99 % of draws end in the first test.
 */
static inline double rng_exp1(struct rng *r)
{
    uint32_t j = rng_u32(r);
    uint32_t i = j & 255u, u = j >> 8;
    if (__builtin_expect(u < rng_zig_k[i], 1))
        return u * rng_zig_w[i];
    return rng_exp1_slow(r, i, u);
}

/* Exponential with the given mean (> 0). */
static inline double rng_exponential(struct rng *r, double mean)
{
    return mean * rng_exp1(r);
}

/* The normal ziggurat's rare cases (wedge, tail) for layer i, sign bit and 24-bit uniform u. */
double rng_normal1_slow(struct rng *r, uint32_t i, uint32_t sign, uint32_t u);

/*
 * Standard normal by the ziggurat method (Marsaglia & Tsang 2000), inline:
 * one 32-bit draw gives the layer (7 low bits), the sign (bit 7) and a 24-bit
 * uniform (high bits); ~98.8 % of draws end in the first test. Unlike the
 * paper's RNOR, the layer and the uniform use disjoint bits.
 */
static inline double rng_normal1(struct rng *r)
{
    uint32_t j = rng_u32(r);
    uint32_t i = j & 127u, sign = (j >> 7) & 1u, u = j >> 8;
    if (__builtin_expect(u < rng_zign_k[i], 1)) {
        double x = u * rng_zign_w[i];
        return sign ? -x : x;
    }
    return rng_normal1_slow(r, i, sign, u);
}

/*
 * Lognormal with the given mean (> 0) and coefficient of variation (>= 0):
 * sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2 / 2. cv == 0 returns mean
 * exactly and draws nothing (the stream does not advance).
 */
double rng_lognormal_mean_cv(struct rng *r, double mean, double cv);

/* mu and sigma of the normal under a lognormal of this mean (> 0) and CV (>= 0). */
void rng_lognormal_params(double mean, double cv, double *mu, double *sigma);

/* exp(N(mu, sigma^2)), the normal by rng_normal1() (one draw, one exp). */
double rng_lognormal_mu_sigma(struct rng *r, double mu, double sigma);

/* Lognormal from its median (> 0) and sigma (>= 0, of the underlying normal): mu = ln(median). */
double rng_lognormal_median_sigma(struct rng *r, double median, double sigma);

#endif
