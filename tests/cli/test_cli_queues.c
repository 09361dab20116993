/*
 * test_cli_queues.c — per-queue results end to end: a kueue run on the shipped
 * manifests warns about what it does not model, writes /queues, and `report`,
 * `compare` and `check --queue` read it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/proctest.h"

/* Run cmd; its stdout and stderr (together) into out. Returns the exit status. */
static int capture(const char *cmd, char *out, size_t n)
{
    char full[2048];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    cr_assert_not_null(p);
    size_t got = fread(out, 1, n - 1, p);
    out[got] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli_queues, kueue_manifests_run_report_and_check_a_queue)
{
    char dir[128], cmd[1024], out[16384];
    ptest_tmpdir(dir, sizeof dir, "queues");
    snprintf(cmd, sizeof cmd,
             "%s run scenarios/kueue-manifests/scenario.yaml --set duration=30m -o %s/q.h5",
             ptest_bin(), dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "scenarios/kueue-manifests/scenario.yaml: warning: Kueue manifests: "
                          "not modelled, ignored: ClusterQueue/inference spec.namespaceSelector"),
              "%s", out);
    snprintf(cmd, sizeof cmd, "%s report %s/q.h5", ptest_bin(), dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "queues (GPUs of quota"), "%s", out);
    const char *row = strstr(out, "  team-b ");
    cr_assert_not_null(row, "%s", out);
    cr_assert(strncmp(row, "  team-b        10.0", 20) == 0, "team-b's nominal quota: %.60s", row);
    snprintf(cmd, sizeof cmd, "%s compare %s/q.h5 %s/q.h5", ptest_bin(), dir, dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "queue team-a: queueing delay mean"), "%s", out);
    /* A gate that holds (chat is never evicted in 30 min), one that fails (team-a admits jobs). */
    snprintf(cmd, sizeof cmd, "%s check %s/q.h5 --queue inference --max evictions=0", ptest_bin(),
             dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s check %s/q.h5 --queue team-a --max admissions=0", ptest_bin(),
             dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "FAIL max admissions"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s check %s/q.h5 --queue nope --max-queue-delay 1h", ptest_bin(),
             dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "no queue 'nope' in /queues; it holds: inference team-a team-b"), "%s",
              out);
    ptest_rmdir(dir);
}

/*
 * Several GPU flavors (scenarios/mixed-fleet-kueue): `report` gives a row per queue and
 * flavor ("team-a/h100"), and `check --queue` gates one. By hand from its kueue.yaml: team-a's
 * nominal quota is 12 H100 and 16 A100, 28 in all.
 */
Test(cli_queues, report_and_check_read_a_queues_flavors)
{
    char dir[128], cmd[1024], out[16384];
    ptest_tmpdir(dir, sizeof dir, "queues-flavors");
    snprintf(cmd, sizeof cmd,
             "%s run scenarios/mixed-fleet-kueue/scenario.yaml --set duration=20m -o %s/f.h5",
             ptest_bin(), dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s report %s/f.h5", ptest_bin(), dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    const char *row = strstr(out, "  team-a ");
    cr_assert_not_null(row, "%s", out);
    cr_assert(strncmp(row, "  team-a             28.0", 25) == 0, "team-a: %.60s", row);
    row = strstr(out, "  team-a/h100 ");
    cr_assert_not_null(row, "no flavor row: %s", out);
    cr_assert(strncmp(row, "  team-a/h100        12.0", 25) == 0, "team-a/h100: %.60s", row);
    row = strstr(out, "  team-a/a100 ");
    cr_assert_not_null(row, "%s", out);
    cr_assert(strncmp(row, "  team-a/a100        16.0", 25) == 0, "team-a/a100: %.60s", row);
    snprintf(cmd, sizeof cmd, "%s check %s/f.h5 --queue team-a/h100 --max nominal_gpus=12",
             ptest_bin(), dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s check %s/f.h5 --queue team-a/h100 --max nominal_gpus=11",
             ptest_bin(), dir);
    cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
    ptest_rmdir(dir);
}
