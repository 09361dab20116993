/* simtest.h — helpers shared by the simulation tests: build and run a scenario from text. */
#ifndef TIDESIM_SIMTEST_H
#define TIDESIM_SIMTEST_H

#include <criterion/criterion.h>
#include <string.h>

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

/* Scenario text that must be refused with a message containing `want` (case: for the report). */
static inline void simtest_expect_rejected(const char *yaml, const char *want, size_t which)
{
    struct scenario sc;
    struct conf_err err;
    int rc = scenario_load_string(&sc, "bad.yaml", yaml, &err);
    cr_expect_lt(rc, 0, "case %zu accepted", which);
    if (rc < 0)
        cr_expect(strstr(err.msg, want), "case %zu: %s", which, err.msg);
    else
        scenario_release(&sc);
}

static inline void simtest_free(struct scenario *sc, struct sim *s)
{
    sim_release(s);
    scenario_release(sc);
}

/*
 * Conservation after a run: for every service, arrived = served + dropped +
 * failed + in service + waiting, with something arrived and every served
 * request in the latency histogram; every card's use states are non-negative
 * and fit the elapsed time, as does its allocated time; every job is in
 * exactly one state.
 */
static inline void simtest_expect_conserved(const struct sim *s)
{
    for (uint32_t i = 0; i < s->nsvcs; i++) {
        const struct service *sv = &s->svcs[i];
        cr_expect_gt(sv->tot.arrived, 0, "service %s: nothing arrived", sv->cfg->name);
        cr_expect_eq(sv->tot.arrived,
                     sv->tot.served + sv->tot.dropped + sv->tot.failed + sv->in_service +
                         service_waiting(sv),
                     "service %s: requests not conserved", sv->cfg->name);
        cr_expect_eq(sv->h_total->total, sv->tot.served);
    }
    double elapsed = (double)s->end;
    for (uint32_t g = 0; g < s->cl.ngpus; g++) {
        const struct card *c = &s->cl.cards[g];
        double sum = 0;
        for (int k = 0; k < USE_NSTATES; k++) {
            cr_expect_geq(c->acc[k], -1e-6);
            sum += c->acc[k];
        }
        cr_expect_leq(sum, elapsed * (1 + 1e-12) + 1e-3, "card %u: %f us of states in %f us", g,
                      sum, elapsed); /* rates summed in floating point over many spans */
        cr_expect_leq(c->alloc_us, elapsed + 1e-3);
    }
    cr_expect_eq(s->tr.njobs,
                 s->tr.queued + s->tr.running + s->tr.done + s->tr.rejected + s->tr.failed);
}

#endif
