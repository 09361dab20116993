/* simtest.h — helpers shared by the simulation tests: build and run a scenario from text. */
#ifndef TIDESIM_SIMTEST_H
#define TIDESIM_SIMTEST_H

#include <criterion/criterion.h>

#include "sim/scenario.h"
#include "sim/sim.h"

/* Load scenario text (asserting it is valid) and build a sim on it without a results file. */
static inline void simtest_build(struct scenario *sc, struct sim *s, const char *yaml,
                                 uint64_t seed)
{
    struct conf_err err;
    int rc = scenario_load_string(sc, "test.yaml", yaml, &err);
    cr_assert_eq(rc, 0, "scenario rejected: %s", err.msg);
    rc = sim_init(s, sc, seed, NULL);
    cr_assert_eq(rc, 0, "sim_init failed: %s", s->err);
}

static inline void simtest_run(struct scenario *sc, struct sim *s, const char *yaml, uint64_t seed)
{
    simtest_build(sc, s, yaml, seed);
    int rc = sim_run(s, NULL);
    cr_assert_eq(rc, 0, "sim_run failed: %s", s->err);
}

static inline void simtest_free(struct scenario *sc, struct sim *s)
{
    sim_release(s);
    scenario_release(sc);
}

#endif
