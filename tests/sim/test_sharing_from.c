/*
 * test_sharing_from.c — cluster.sharing_from: the sharing mode, replicas and MIG
 * layout read from a device-plugin or mig-parted config (tests/data/sharing/), each
 * checked against what the file says, and a run from a mig-parted file against the
 * same run with the layout written by hand.
 */
#include <stdio.h>
#include <string.h>

#include "tests/simtest.h"

/* A one-node scenario of `gpu` whose cluster has `extra` (sharing keys). */
static const char *scen(const char *gpu, const char *extra)
{
    static char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "name: sf\nduration: 2h\n"
             "cluster:\n  gpu: %s\n  nodes: 1\n  gpus_per_node: 2\n%s"
             "services:\n  - name: q\n    latency: { a_ms: 5, b_ms: 1 }\n"
             "    slo: { p99_ms: 100 }\n    replicas: 2\n"
             "    arrivals: { synthetic: { shape: constant, rate_rps: 50 } }\n"
             "policy: { name: dedicated }\n",
             gpu, extra);
    return yaml;
}

static int load(struct scenario *sc, const char *yaml, struct conf_err *err)
{
    /* named in tests/data/: sharing_from paths resolve against that folder */
    return scenario_load_string(sc, "tests/data/sf.yaml", yaml, err);
}

Test(sharing_from, device_plugin_time_slicing_and_mps)
{
    struct scenario sc;
    struct conf_err err;
    cr_assert_eq(
        load(&sc,
             scen("a100-sxm4-80gb", "  sharing_from: sharing/device-plugin-timeslicing.yaml\n"),
             &err),
        0, "%s", err.msg);
    cr_expect_eq(sc.sharing, SHARE_TIMESLICE);
    cr_expect_eq(sc.slots, 4u, "replicas: 4 in the file");
    /* flags and the two rename/fail switches are read, not modelled: one notice names them */
    cr_expect(strstr(sc.warning, "flags") && strstr(sc.warning, "renameByDefault") &&
                  strstr(sc.warning, "failRequestsGreaterThanOne"),
              "%s", sc.warning);
    scenario_release(&sc);
    cr_assert_eq(load(&sc,
                      scen("a100-sxm4-80gb", "  sharing_from: sharing/device-plugin-mps.yaml\n"
                                             "  mps: { interference: 0.2 }\n"),
                      &err),
                 0, "%s", err.msg);
    cr_expect_eq(sc.sharing, SHARE_MPS);
    cr_expect_eq(sc.slots, 8u);
    cr_expect_float_eq(sc.knobs.mps_interference, 0.2, 1e-12, "knobs still from the scenario");
    cr_expect_eq(sc.warning[0], '\0', "%s", sc.warning);
    scenario_release(&sc);
}

Test(sharing_from, mig_parted_picks_the_entry_of_the_board)
{
    struct scenario sc;
    struct conf_err err;
    static const struct {
        const char *gpu, *layout;
    } cases[] = {
        /* all-balanced: the 80 GB entry (device-filter 0x20B210DE) and the 40 GB one */
        {"a100-sxm4-80gb", "3g.40gb+2g.20gb+1g.10gb+1g.10gb"},
        {"a100-sxm4-40gb", "3g.20gb+2g.10gb+1g.5gb+1g.5gb"},
        {"h100-sxm5-80gb", "3g.40gb+2g.20gb+1g.10gb+1g.10gb"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(load(&sc,
                          scen(cases[i].gpu, "  sharing_from: { file: sharing/mig-parted.yaml, "
                                             "config: all-balanced }\n"),
                          &err),
                     0, "%s: %s", cases[i].gpu, err.msg);
        cr_expect_eq(sc.sharing, SHARE_MIG);
        cr_expect_str_eq(sc.mig_layout, cases[i].layout);
        scenario_release(&sc);
    }
    cr_assert_eq(load(&sc,
                      scen("a100-sxm4-80gb", "  sharing_from: { file: sharing/mig-parted.yaml, "
                                             "config: all-disabled }\n"),
                      &err),
                 0, "%s", err.msg);
    cr_expect_eq(sc.sharing, SHARE_EXCLUSIVE);
    scenario_release(&sc);
}

Test(sharing_from, a_run_from_mig_parted_equals_the_layout_by_hand)
{
    struct scenario a, b;
    struct sim sa, sb;
    simtest_run(&a, &sa,
                scen("a100-sxm4-80gb",
                     "  sharing_from: { file: tests/data/sharing/mig-parted.yaml, "
                     "config: all-balanced }\n"),
                7);
    simtest_run(&b, &sb,
                scen("a100-sxm4-80gb",
                     "  sharing: mig\n  mig: { layout: 3g.40gb+2g.20gb+1g.10gb+1g.10gb }\n"),
                7);
    cr_assert_eq(sa.cl.ngpus, sb.cl.ngpus);
    for (uint32_t g = 0; g < sa.cl.ngpus; g++)
        for (int k = 0; k < USE_NSTATES; k++)
            cr_expect_eq(sa.cl.cards[g].acc[k], sb.cl.cards[g].acc[k], "card %u state %d", g, k);
    cr_expect_eq(sa.svcs[0].tot.served, sb.svcs[0].tot.served);
    cr_expect_gt(sa.svcs[0].tot.served, 0u);
    simtest_free(&a, &sa);
    simtest_free(&b, &sb);
}

Test(sharing_from, bad_files_name_their_place)
{
    static const struct {
        const char *extra, *want;
    } cases[] = {
        {"  sharing_from: sharing/device-plugin-bad.yaml\n",
         "device-plugin-bad.yaml:5:15: 'name': expected nvidia.com/gpu"},
        {"  sharing_from: sharing/mig-parted.yaml\n",
         "mig-parted.yaml:5:3: 'mig-configs': 4 configurations: name one"},
        {"  sharing_from: { file: sharing/mig-parted.yaml, config: bad-profile }\n",
         "mig-parted.yaml:27:9: '5g.50gb': unknown MIG profile for a100-sxm4-80gb"},
        {"  sharing_from: { file: sharing/mig-parted.yaml, config: per-card }\n",
         "'devices': expected 'all'"},
        {"  sharing_from: { file: sharing/mig-parted.yaml, config: nope }\n",
         "'nope': no such configuration"},
        {"  sharing: mps\n  sharing_from: sharing/device-plugin-mps.yaml\n",
         "'sharing': the sharing mode comes from sharing_from"},
        {"  sharing_from: sharing/device-plugin-timeslicing.yaml\n  timeSlicing: { replicas: 2 "
         "}\n",
         "'replicas': the replicas come from sharing_from"},
        {"  sharing_from: sharing/none.yaml\n", "cannot read"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct scenario sc;
        struct conf_err err;
        int rc = load(&sc, scen("a100-sxm4-80gb", cases[i].extra), &err);
        cr_expect_lt(rc, 0, "case %zu accepted", i);
        if (rc < 0)
            cr_expect(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
        else
            scenario_release(&sc);
    }
}
