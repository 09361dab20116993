/* test_tidal_window.c — day/night windows, edges, time zones and graceful lead, by hand. */
#include <criterion/criterion.h>
#include <errno.h>

#include "sim/policy/tidal_window.h"

#define HM(h, m) ((sim_time)(h)*SIM_HOUR + (sim_time)(m)*SIM_MIN)

Test(tidal, default_window_is_9_to_22)
{
    struct tidal_cfg c;
    tidal_cfg_default(&c);
    cr_assert_eq(tidal_check(&c), 0);
    cr_assert_not(tidal_is_day(&c, 0));
    cr_assert_not(tidal_is_day(&c, HM(8, 59)));
    cr_assert(tidal_is_day(&c, HM(9, 0)));
    cr_assert(tidal_is_day(&c, HM(21, 59)));
    cr_assert(tidal_is_day(&c, HM(22, 0) - 1));
    cr_assert_not(tidal_is_day(&c, HM(22, 0)));
    cr_assert(tidal_is_day(&c, SIM_DAY * 3 + HM(12, 0)));
    cr_assert_eq(tidal_next_edge(&c, 0), HM(9, 0));
    cr_assert_eq(tidal_next_edge(&c, HM(9, 0)), HM(22, 0)); /* strictly after t */
    cr_assert_eq(tidal_next_edge(&c, HM(22, 0)), SIM_DAY + HM(9, 0));
    cr_assert_eq(tidal_next_day_end(&c, HM(23, 0)), SIM_DAY + HM(22, 0));
    cr_assert_eq(tidal_next_day_start(&c, HM(12, 0)), SIM_DAY + HM(9, 0));
}

Test(tidal, window_crossing_midnight)
{
    struct tidal_cfg c;
    tidal_cfg_default(&c);
    c.day_start_min = 22 * 60; /* 22:00–06:00 */
    c.day_end_min = 6 * 60;
    cr_assert(tidal_is_day(&c, 0));
    cr_assert(tidal_is_day(&c, HM(5, 59)));
    cr_assert_not(tidal_is_day(&c, HM(6, 0)));
    cr_assert_not(tidal_is_day(&c, HM(21, 59)));
    cr_assert(tidal_is_day(&c, HM(22, 0)));
    cr_assert(tidal_is_day(&c, HM(23, 30)));
    cr_assert_eq(tidal_next_edge(&c, HM(23, 0)), SIM_DAY + HM(6, 0));
    cr_assert_eq(tidal_next_edge(&c, HM(1, 0)), HM(6, 0));
    cr_assert_eq(tidal_next_day_start(&c, HM(1, 0)), HM(22, 0));
}

Test(tidal, window_zone_differs_from_scenario_zone)
{
    /* Scenario clock in UTC, window 09:00–22:00 in UTC+08:00: day is 01:00–14:00 UTC. */
    struct tidal_cfg c;
    tidal_cfg_default(&c);
    c.window_tz_min = 8 * 60;
    cr_assert_not(tidal_is_day(&c, HM(0, 59)));
    cr_assert(tidal_is_day(&c, HM(1, 0)));
    cr_assert(tidal_is_day(&c, HM(13, 59)));
    cr_assert_not(tidal_is_day(&c, HM(14, 0)));
    cr_assert_eq(tidal_next_edge(&c, 0), HM(1, 0));
    /* Scenario in UTC+02:00, window in UTC−05:00: shift −7 h, day is 16:00–05:00 next day. */
    c.window_tz_min = -5 * 60;
    c.sim_tz_min = 2 * 60;
    cr_assert(tidal_is_day(&c, HM(16, 0)));
    cr_assert(tidal_is_day(&c, HM(4, 59)));
    cr_assert_not(tidal_is_day(&c, HM(5, 0)));
    cr_assert_not(tidal_is_day(&c, HM(15, 59)));
    cr_assert_eq(tidal_next_day_end(&c, HM(16, 0)), SIM_DAY + HM(5, 0));
}

Test(tidal, graceful_lead)
{
    struct tidal_cfg c;
    tidal_cfg_default(&c);
    /* 8 GPUs × 80 GB state written at 2 GB/s per GPU ≈ 5 min, re-layout 2 min, warm-up 3 min. */
    sim_time lead = tidal_lead_time(5 * SIM_MIN, 2 * SIM_MIN, 3 * SIM_MIN);
    cr_assert_eq(lead, 10 * SIM_MIN);
    cr_assert_eq(tidal_handover_start(&c, HM(23, 0), lead), SIM_DAY + HM(8, 50));
    cr_assert_eq(tidal_handover_start(&c, HM(8, 55), lead), HM(8, 55)); /* already late */
    cr_assert(tidal_training_allowed(&c, HM(8, 49), lead));
    cr_assert_not(tidal_training_allowed(&c, HM(8, 50), lead));
    cr_assert_not(tidal_training_allowed(&c, HM(12, 0), lead));
    cr_assert(tidal_training_allowed(&c, HM(22, 0), lead));
}

Test(tidal, empty_window_and_validation)
{
    struct tidal_cfg c;
    tidal_cfg_default(&c);
    c.day_end_min = c.day_start_min;
    cr_assert_not(tidal_is_day(&c, HM(12, 0)));
    cr_assert_eq(tidal_next_edge(&c, 0), SIM_TIME_MAX);
    cr_assert_eq(tidal_handover_start(&c, 0, SIM_MIN), SIM_TIME_MAX);
    cr_assert(tidal_training_allowed(&c, HM(12, 0), SIM_HOUR));
    c.day_end_min = 1440;
    cr_assert_eq(tidal_check(&c), -EINVAL);
}

/* tidal_pick_victims on candidates whose choice is known by hand. */
static int64_t pick(const struct tidal_victim *v, size_t n, uint32_t need, bool *take)
{
    for (size_t i = 0; i < n; i++)
        take[i] = !need; /* garbage the function must overwrite */
    return tidal_pick_victims(v, n, need, take);
}

Test(tidal, victims_single_cards_least_work_since_checkpoint_first)
{
    const struct tidal_victim v[] = {{1, 5}, {1, 1}, {1, 4}, {1, 2}, {1, 3}};
    bool take[5];
    cr_assert_eq(pick(v, 5, 3, take), 3);
    const bool want[5] = {false, true, false, true, true}; /* works 1, 2, 3 */
    for (int i = 0; i < 5; i++)
        cr_expect_eq(take[i], want[i], "job %d", i);
    /* Equal work: the earlier job. */
    const struct tidal_victim tie[] = {{1, 2}, {1, 2}};
    cr_assert_eq(pick(tie, 2, 1, take), 1);
    cr_expect(take[0] && !take[1]);
}

Test(tidal, victims_never_more_cards_than_a_gang_forces)
{
    bool take[4];
    /*
     * Need 4. Least work first would take the 1-GPU job (work 1), then the
     * 2-GPU job of work 2 (3 cards), then one more: 5 or more cards. The sets
     * of exactly 4 cards: {4-GPU}: 10 × 4 = 40 GPU-µs lost; {2, 2}: 2 × 2 +
     * 3 × 2 = 10. So the two 2-GPU jobs.
     */
    const struct tidal_victim v[] = {{1, 1}, {4, 10}, {2, 2}, {2, 3}};
    cr_assert_eq(pick(v, 4, 4, take), 4);
    cr_expect(!take[0] && !take[1] && take[2] && take[3]);
    /*
     * Need 3 from gangs of 2, 2 and 4 cards: no set holds exactly 3; the
     * fewest above is 4, by {2, 2} (1 × 2 = 2 lost) or {4} (0 lost): the 4.
     */
    const struct tidal_victim w[] = {{2, 0}, {2, 1}, {4, 0}};
    cr_assert_eq(pick(w, 3, 3, take), 4);
    cr_expect(!take[0] && !take[1] && take[2]);
}

Test(tidal, victims_none_needed_or_not_enough)
{
    const struct tidal_victim v[] = {{1, 1}, {2, 1}};
    bool take[2];
    cr_assert_eq(pick(v, 2, 0, take), 0);
    cr_expect(!take[0] && !take[1]);
    cr_assert_eq(pick(v, 2, 5, take), 3); /* all of them, 3 cards < 5 */
    cr_expect(take[0] && take[1]);
    cr_assert_eq(pick(v, 0, 2, take), 0);
}
