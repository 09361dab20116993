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
#include "sim/core/rng.h"

#include <errno.h>
#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>

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

/*
 * taus2 seeding as GSL does it (rng/taus.c): three linear congruential steps
 * x -> 69069·x mod 2^32 from the seed give s1, s2, s3, each raised past the
 * bits its component ignores (s1 >= 2, s2 >= 8, s3 >= 16), then six outputs
 * are discarded. Seed 0 becomes 1, as in GSL.
 */
static void taus2_set(void *state, unsigned long seed)
{
    struct rng_taus *t = state;
    struct rng r = {.g = NULL, .st = t};
    const unsigned long m = 0xffffffffUL;
    if (seed == 0)
        seed = 1;
    t->s1 = (69069UL * seed) & m;
    if (t->s1 < 2)
        t->s1 += 2;
    t->s2 = (69069UL * t->s1) & m;
    if (t->s2 < 8)
        t->s2 += 8;
    t->s3 = (69069UL * t->s2) & m;
    if (t->s3 < 16)
        t->s3 += 16;
    for (int i = 0; i < 6; i++)
        (void)rng_u32(&r);
}

static unsigned long taus2_get(void *state)
{
    struct rng r = {.g = NULL, .st = state};
    return rng_u32(&r);
}

static double taus2_get_double(void *state)
{
    struct rng r = {.g = NULL, .st = state};
    return rng_uniform(&r);
}

static const gsl_rng_type taus2_type = {"tidesim-taus2",         0xffffffffUL, 0,
                                        sizeof(struct rng_taus), taus2_set,    taus2_get,
                                        taus2_get_double};

const gsl_rng_type *const rng_taus2_type = &taus2_type;

int rng_init(struct rng *r, uint64_t master_seed, uint64_t stream_id)
{
    /* GSL's default error handler aborts the process (gsl_rng_alloc out of memory: "gsl:
     * rng.c: ERROR: failed to allocate space for rng struct", then SIGABRT, leaving the run's
     * temporary file). Its errors are return values here, and each is checked. */
    gsl_set_error_handler_off();
    r->g = gsl_rng_alloc(rng_taus2_type);
    r->st = NULL;
    if (!r->g)
        return -ENOMEM;
    r->st = r->g->state;
    gsl_rng_set(r->g, rng_seed_fold32(rng_stream_seed(master_seed, stream_id)));
    return 0;
}

void rng_release(struct rng *r)
{
    if (r->g)
        gsl_rng_free(r->g);
    r->g = NULL;
    r->st = NULL;
}

double rng_exp1_slow(struct rng *r, uint32_t i, uint32_t u)
{
    for (;;) {
        if (i == 0)
            return RNG_ZIG_R - log(rng_uniform_pos(r));
        double x = u * rng_zig_w[i];
        if (rng_zig_f[i] + rng_uniform(r) * (rng_zig_f[i - 1] - rng_zig_f[i]) < exp(-x))
            return x;
        uint32_t j = rng_u32(r);
        i = j & 255u;
        u = j >> 8;
        if (u < rng_zig_k[i])
            return u * rng_zig_w[i];
    }
}

double rng_normal1_slow(struct rng *r, uint32_t i, uint32_t sign, uint32_t u)
{
    for (;;) {
        double x;
        if (i == 0) {
            /* Tail beyond r (Marsaglia 1964): x = -ln(u1)/r, accepted when -2 ln(u2) > x^2. */
            double y;
            do {
                x = -log(rng_uniform_pos(r)) / RNG_ZIGN_R;
                y = -log(rng_uniform_pos(r));
            } while (y + y < x * x);
            x += RNG_ZIGN_R;
            return sign ? -x : x;
        }
        x = u * rng_zign_w[i];
        if (rng_zign_f[i] + rng_uniform(r) * (rng_zign_f[i - 1] - rng_zign_f[i]) <
            exp(-0.5 * x * x))
            return sign ? -x : x;
        uint32_t j = rng_u32(r);
        i = j & 127u;
        sign = (j >> 7) & 1u;
        u = j >> 8;
        if (u < rng_zign_k[i]) {
            x = u * rng_zign_w[i];
            return sign ? -x : x;
        }
    }
}

double rng_lognormal_mean_cv(struct rng *r, double mean, double cv)
{
    if (cv == 0.0)
        return mean;
    double mu, sigma;
    rng_lognormal_params(mean, cv, &mu, &sigma);
    return rng_lognormal_mu_sigma(r, mu, sigma);
}

void rng_lognormal_params(double mean, double cv, double *mu, double *sigma)
{
    /* If X = exp(N(mu, s^2)): E X = exp(mu + s^2/2), CV^2 = exp(s^2) - 1. */
    double s2 = log1p(cv * cv);
    *mu = log(mean) - 0.5 * s2;
    *sigma = sqrt(s2);
}

double rng_lognormal_mu_sigma(struct rng *r, double mu, double sigma)
{
    /* The ziggurat normal: no log or sqrt per draw, unlike the polar method
     * inside gsl_ran_lognormal, and no call into GSL. */
    return exp(mu + sigma * rng_normal1(r));
}

double rng_lognormal_median_sigma(struct rng *r, double median, double sigma)
{
    return gsl_ran_lognormal(r->g, log(median), sigma);
}
