/* rng.c — independent GSL random streams (see rng.h). Written on the traces branch so its tests
 * link; the lead's version, if different, supersedes it. */
#include "sim/rng.h"

#include <errno.h>
#include <math.h>

#include <gsl/gsl_randist.h>

uint64_t rng_splitmix64(uint64_t x)
{
    /* splitmix64 (Steele, Lea, Flood 2014), constants from Vigna's reference code. */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t rng_stream_id(const char *name)
{
    /* FNV-1a 64: offset basis and prime from the FNV specification. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t rng_stream_seed(uint64_t master_seed, uint64_t stream_id)
{
    return rng_splitmix64(master_seed ^ rng_splitmix64(stream_id));
}

int rng_init(struct rng *r, uint64_t master_seed, uint64_t stream_id)
{
    r->g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r->g)
        return -ENOMEM;
    gsl_rng_set(r->g, (unsigned long)rng_stream_seed(master_seed, stream_id));
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

double rng_exponential(struct rng *r, double mean)
{
    return gsl_ran_exponential(r->g, mean);
}

double rng_lognormal_mean_cv(struct rng *r, double mean, double cv)
{
    if (cv <= 0)
        return mean;
    double s2 = log(1.0 + cv * cv);
    return gsl_ran_lognormal(r->g, log(mean) - 0.5 * s2, sqrt(s2));
}

double rng_lognormal_median_sigma(struct rng *r, double median, double sigma)
{
    return gsl_ran_lognormal(r->g, log(median), sigma);
}
