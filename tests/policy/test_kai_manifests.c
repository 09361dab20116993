/* test_kai_manifests.c — KAI Scheduler Queue objects (sim/policy/kai_manifest.h): a
 * two-level hierarchy's quota and over-quota split by hand, warnings and errors. */
#include <criterion/criterion.h>
#include <string.h>

#include "sim/policy/kai_manifest.h"
#include "sim/policy/kai_sched.h"

static const char *err_of(const char *text)
{
    static struct conf_err err;
    struct kai_manifest m;
    const char *names[] = {"q.yaml"}, *texts[] = {text};
    memset(&err, 0, sizeof err);
    cr_assert_neq(kai_manifest_load_strings(&m, names, texts, 1, &err), 0);
    return err.msg;
}

/* Children listed before their parents (the loader orders them). */
static const char tree[] = "apiVersion: scheduling.run.ai/v2\n"
                           "kind: Queue\n"
                           "metadata: {name: a-train}\n"
                           "spec:\n"
                           "  parentQueue: dept-a\n"
                           "  resources: {gpu: {quota: 8, overQuotaWeight: 1, limit: -1}}\n"
                           "---\n"
                           "apiVersion: scheduling.run.ai/v2\n"
                           "kind: Queue\n"
                           "metadata: {name: a-dev}\n"
                           "spec:\n"
                           "  parentQueue: dept-a\n"
                           "  resources: {gpu: {quota: 4, overQuotaWeight: 2, limit: 10}}\n"
                           "---\n"
                           "apiVersion: scheduling.run.ai/v2\n"
                           "kind: Queue\n"
                           "metadata: {name: dept-a}\n"
                           "spec:\n"
                           "  displayName: Department A\n"
                           "  resources:\n"
                           "    gpu: {quota: 20, overQuotaWeight: 1, limit: -1}\n"
                           "    cpu: {quota: 1000, overQuotaWeight: 1, limit: -1}\n"
                           "---\n"
                           "apiVersion: scheduling.run.ai/v2\n"
                           "kind: Queue\n"
                           "metadata: {name: dept-b}\n"
                           "spec:\n"
                           "  priority: 100\n"
                           "  preemptMinRuntime: 10m\n"
                           "  resources: {gpu: {quota: 12, overQuotaWeight: 3, limit: -1}}\n"
                           "---\n"
                           "apiVersion: scheduling.run.ai/v2\n"
                           "kind: Queue\n"
                           "metadata: {name: b-team}\n"
                           "spec:\n"
                           "  parentQueue: dept-b\n"
                           "  reclaimMinRuntime: 5m\n"
                           "  resources: {gpu: {quota: 12, overQuotaWeight: 1, limit: -1}}\n";

static int32_t idx(const struct kai_manifest *m, const char *name)
{
    for (uint32_t i = 0; i < m->nq; i++)
        if (!strcmp(m->q[i].name, name))
            return (int32_t)i;
    cr_assert_fail("no queue %s", name);
    return -1;
}

/*
 * 48 GPUs; every leaf asks for 30. By hand, KAI's top-down split
 * (docs/fairness: deserved quota first, then the rest by overQuotaWeight
 * within a priority, capped by limit and demand):
 *   top level (48): in quota dept-a 20, dept-b 12; the 16 left go 1 : 3 →
 *     dept-a 20 + 4 = 24, dept-b 12 + 12 = 24.
 *   dept-a (24): in quota a-train 8, a-dev 4; the 12 left go 1 : 2 → 4 and 8,
 *     but a-dev's limit is 10 (4 + 6), so the 2 it cannot take go to a-train:
 *     a-train 8 + 4 + 2 = 14, a-dev 10.
 *   dept-b (24): b-team 24.
 */
Test(kai_manifests, two_level_quota_and_over_quota_split_by_hand)
{
    struct kai_manifest m;
    struct conf_err err = {{0}};
    const char *names[] = {"q.yaml"}, *texts[] = {tree};
    cr_assert_eq(kai_manifest_load_strings(&m, names, texts, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(m.nq, 5);
    for (uint32_t i = 0; i < m.nq; i++)
        cr_assert_lt(m.q[i].parent, (int32_t)i, "parents first");
    cr_assert_eq(m.q[idx(&m, "b-team")].parent, idx(&m, "dept-b"));
    cr_assert_eq(m.q[idx(&m, "dept-a")].priority, 100, "KAI's default priority");
    cr_assert_eq(m.q[idx(&m, "b-team")].reclaim_min_runtime, 5 * 60 * SIM_SEC);
    cr_assert_str_eq(m.warning, "KAI manifests: not modelled, ignored: Queue/dept-a "
                                "spec.resources.cpu; Queue/dept-b spec.preemptMinRuntime");
    struct kai_queue q[5];
    for (uint32_t i = 0; i < m.nq; i++) {
        q[i] = (struct kai_queue){.parent = m.q[i].parent,
                                  .quota = m.q[i].quota,
                                  .weight = m.q[i].weight,
                                  .limit = m.q[i].limit,
                                  .priority = m.q[i].priority};
    }
    q[idx(&m, "a-train")].request = 30;
    q[idx(&m, "a-dev")].request = 30;
    q[idx(&m, "b-team")].request = 30;
    cr_assert_eq(kai_fair_share(q, m.nq, 48, 0), 0);
    cr_assert_float_eq(q[idx(&m, "dept-a")].fair_share, 24, 1e-9);
    cr_assert_float_eq(q[idx(&m, "dept-b")].fair_share, 24, 1e-9);
    cr_assert_float_eq(q[idx(&m, "a-train")].fair_share, 14, 1e-9);
    cr_assert_float_eq(q[idx(&m, "a-dev")].fair_share, 10, 1e-9);
    cr_assert_float_eq(q[idx(&m, "b-team")].fair_share, 24, 1e-9);
    kai_manifest_release(&m);
}

Test(kai_manifests, malformed_queues_name_file_line_column)
{
    cr_assert_str_eq(err_of("apiVersion: scheduling.run.ai/v2\nkind: Queue\n"
                            "metadata: {name: a}\nspec: {parentQueue: nope}\n"),
                     "q.yaml:4:21: 'parentQueue': no Queue named 'nope' in the manifests");
    cr_assert_str_eq(err_of("apiVersion: scheduling.run.ai/v2\nkind: Queue\n"
                            "metadata: {name: a}\nspec: {resources: {gpu: {quota: many}}}\n"),
                     "q.yaml:4:33: 'quota': expected a number, got 'many'");
    cr_assert_str_eq(err_of("apiVersion: scheduling.run.ai/v2\nkind: Department\n"
                            "metadata: {name: a}\n"),
                     "q.yaml:2:7: 'kind': expected one of: Queue, got 'Department'");
}
