/*
 * rng.h — independent random streams.
 *
 * Every component draws from its own GSL generator, seeded from the run's
 * master seed and a fixed stream id: seed = splitmix64(master ^ splitmix64(id)).
 * Stream ids are derived from stable names (rng_stream_id("service/search/arrivals")),
 * so adding a component never shifts the numbers another component draws.
 * Never rand(), never gsl_rng_env_setup().
 */
#ifndef TIDESIM_RNG_H
#define TIDESIM_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

struct rng {
    gsl_rng *g;
};

uint64_t rng_splitmix64(uint64_t x);

/* FNV-1a 64-bit hash of a stream name: a stable stream id. */
uint64_t rng_stream_id(const char *name);

/* Seed used for (master, stream). */
uint64_t rng_stream_seed(uint64_t master_seed, uint64_t stream_id);

/* Allocate the generator (gsl_rng_mt19937) and seed it. Returns 0 or -ENOMEM (r->g == NULL). */
int rng_init(struct rng *r, uint64_t master_seed, uint64_t stream_id);
void rng_release(struct rng *r);

/* Uniform on the open interval (0, 1). */
double rng_uniform_pos(struct rng *r);

/* Exponential with the given mean (> 0). */
double rng_exponential(struct rng *r, double mean);

/* Lognormal with the given mean (> 0) and coefficient of variation (>= 0; 0 ⇒ mean). */
double rng_lognormal_mean_cv(struct rng *r, double mean, double cv);

/* Lognormal from its median and sigma (of the underlying normal). */
double rng_lognormal_median_sigma(struct rng *r, double median, double sigma);

#endif
