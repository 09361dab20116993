/* test_kueue_manifests.c — Kueue's own YAML objects (sim/policy/kueue_manifest.h) driving
 * the admission model (sim/policy/kueue_admit.h): a two-level cohort traced by hand with
 * Kueue's rules, warnings and errors of malformed manifests, and fair sharing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/policy/kueue_manifest.h"

/* Load one manifest text as "k.yaml"; asserts success. */
static void load(struct kueue_model *m, const char *text)
{
    const char *names[] = {"k.yaml"};
    const char *texts[] = {text};
    struct conf_err err = {{0}};
    int rc = kueue_model_load_strings(m, names, texts, 1, NULL, 4, &err);
    cr_assert_eq(rc, 0, "load: %s", err.msg);
}

/* Load expecting failure; returns the message. */
static const char *load_err(const char *text)
{
    static struct conf_err err;
    struct kueue_model m;
    const char *names[] = {"k.yaml"};
    const char *texts[] = {text};
    memset(&err, 0, sizeof err);
    cr_assert_neq(kueue_model_load_strings(&m, names, texts, 1, NULL, 4, &err), 0,
                  "expected an error");
    return err.msg;
}

/* Build a kueue from the model; the CQ of each name. */
static struct kueue *build(const struct kueue_model *m)
{
    struct kueue *k = kueue_create();
    cr_assert_not_null(k);
    for (uint32_t i = 0; i < m->ncohorts; i++)
        cr_assert_geq(kueue_add_cohort(k, &m->cohorts[i].c), 0);
    for (uint32_t i = 0; i < m->ncqs; i++)
        cr_assert_eq(kueue_add_cq(k, &m->cqs[i].cq), (int)i);
    if (m->fair_sharing)
        kueue_set_fair_sharing(k, m->strategies, m->nstrategies);
    return k;
}

static uint32_t cq(const struct kueue_model *m, const char *name)
{
    int32_t i = kueue_model_cq(m, name);
    cr_assert_geq(i, 0, "no CQ %s", name);
    return (uint32_t)i;
}

/* One kueue_next decision, applied; asserts the workload it admits and its victims. */
static void step(struct kueue *k, uint32_t want, uint32_t nvict, const uint32_t *victims,
                 sim_time now)
{
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 1, "no admission, want %u", want);
    cr_assert_eq(d.id, want, "admits %u, want %u", d.id, want);
    cr_assert_eq(d.n_victims, nvict, "%u victims, want %u", d.n_victims, nvict);
    for (uint32_t i = 0; i < nvict; i++)
        cr_assert_eq(d.victims[i], victims[i]);
    cr_assert_eq(kueue_apply(k, &d, now), 0);
}

static void expect_stat(struct kueue *k, uint32_t q, double usage, double borrowed, double lent)
{
    struct kueue_cq_stat st;
    kueue_cq_stat(k, q, &st);
    cr_assert_float_eq(st.usage, usage, 1e-9, "usage %g want %g", st.usage, usage);
    cr_assert_float_eq(st.borrowed, borrowed, 1e-9, "borrowed %g want %g", st.borrowed, borrowed);
    cr_assert_float_eq(st.lent, lent, 1e-9, "lent %g want %g", st.lent, lent);
}

/*
 * Three ClusterQueues in a two-level cohort tree (Cohorts listed child first, to
 * check the ordering):
 *
 *             org (root, no quota of its own)
 *           /                        \
 *   c1 (lendingLimit 4)              c2
 *    /            \                   |
 *  a: nominal 6,  b: nominal 4       c: nominal 6,
 *     lendingLimit 2,                   borrowingLimit 2
 *     borrowingLimit 4,
 *     reclaimWithinCohort Any
 *
 * Kueue's tree arithmetic (pkg/cache/scheduler/resource_node.go): a node's
 * localQuota = SubtreeQuota − lendingLimit (0 without one); a cohort's
 * SubtreeQuota = own nominal + Σ children (SubtreeQuota − localQuota); its
 * usage = Σ children max(0, usage − localQuota); available(node) =
 * max(0, localQuota − usage) + available(parent), the parent's part capped by
 * SubtreeQuota − localQuota − max(0, usage − localQuota) + borrowingLimit.
 *   a: SQ 6, lq 4.   b: SQ 4, lq 0.   c: SQ 6, lq 0.
 *   c1: SQ 0 + (6 − 4) + (4 − 0) = 6, lq 6 − 4 = 2.   c2: SQ 6, lq 0.
 *   org: SQ (6 − 2) + 6 = 10.
 * "Lent" is tidesim's figure: the tree's borrowed GPUs spread over the idle
 * lendable quota (min(unused nominal, nominal − localQuota)) in proportion.
 *
 * Hand trace:
 *  1. w1 (c, 8 GPUs): available(c) = 0 + min(6 − 0 + 2, available(c2) = 0 + (10 − 0)) = 8
 *     → admitted, borrowing 2. Idle lendable: a 2, b 4 → a lent 2·2/6, b 2·4/6.
 *  2. w2 (b, 4): available(b) = 0 + available(c1) = max(0, 2 − 0) + (10 − 8) = 4 → admitted.
 *     w3 (b, 2) submitted too: c1 usage 4, org usage (4 − 2) + 8 = 10, so
 *     available(b) = max(0, 2 − 4) + (10 − 10) = 0: pending.
 *     Now a = 0, b = 4, c = 8: c borrows 2, the only idle lendable quota is a's 2 → a lent 2.
 *  3. w4 (a, 5): available(a) = max(0, 4 − 0) + min(2 − 0 + 4, available(c1) = 0 + 0) = 4 < 5.
 *     Reclaim: c is borrowing (8 > 6) → w1 is the candidate; without it org usage is 2,
 *     available(c1) = 0 + 8, available(a) = 4 + min(6, 8) = 10, and 5 fits a's nominal
 *     (classic reclaim needs that) → w1 evicted, w4 admitted. a = 5, b = 4, c = 0: nobody
 *     borrows, nobody lends.
 *  4. w1 again: org usage = c1's max(0, (max(0, 5 − 4) + 4) − 2) = 3, available(c) =
 *     0 + min(8, 10 − 3) = 7 < 8: c cannot preempt (reclaim Never) → not admissible.
 *     w3 (b, 2): available(b) = 0 + max(0, 2 − 5) + 7 = 7 → admitted, borrowing 2.
 *     a = 5, b = 6, c = 0. Idle lendable: a min(1, 2) = 1, c min(6, 6) = 6; b borrows 2
 *     → a lent 2·1/7, c lent 2·6/7.
 *  5. Nothing else is admissible.
 */
static const char tree_yaml[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ResourceFlavor\n"
    "metadata: {name: gpu}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: Cohort\n"
    "metadata: {name: c1}\n"
    "spec:\n"
    "  parentName: org\n"
    "  resourceGroups:\n"
    "  - coveredResources: [nvidia.com/gpu]\n"
    "    flavors:\n"
    "    - name: gpu\n"
    "      resources: [{name: nvidia.com/gpu, nominalQuota: 0, lendingLimit: 4}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1alpha1\n"
    "kind: Cohort\n"
    "metadata: {name: c2}\n"
    "spec: {parent: org}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: Cohort\n"
    "metadata: {name: org}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: a}\n"
    "spec:\n"
    "  cohort: c1\n"
    "  preemption: {reclaimWithinCohort: Any}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [nvidia.com/gpu]\n"
    "    flavors:\n"
    "    - name: gpu\n"
    "      resources:\n"
    "      - {name: nvidia.com/gpu, nominalQuota: 6, lendingLimit: 2, borrowingLimit: 4}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata: {name: b}\n"
    "spec:\n"
    "  cohortName: c1\n"
    "  resourceGroups:\n"
    "  - coveredResources: [nvidia.com/gpu]\n"
    "    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: \"4\"}]}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: c}\n"
    "spec:\n"
    "  cohort: c2\n"
    "  resourceGroups:\n"
    "  - coveredResources: [nvidia.com/gpu]\n"
    "    flavors:\n"
    "    - name: gpu\n"
    "      resources: [{name: nvidia.com/gpu, nominalQuota: 6, borrowingLimit: 2}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: LocalQueue\n"
    "metadata: {namespace: team-a, name: jobs}\n"
    "spec: {clusterQueue: a}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: WorkloadPriorityClass\n"
    "metadata: {name: batch}\n"
    "value: 100\n";

Test(kueue_manifests, two_level_cohort_matches_a_hand_trace)
{
    struct kueue_model m;
    load(&m, tree_yaml);
    cr_assert_eq(m.ncqs, 3);
    cr_assert_eq(m.ncohorts, 3);
    cr_assert_str_eq(m.cohorts[0].name, "org", "parents first");
    cr_assert_null(m.warning, "nothing unmodelled: %s", m.warning ? m.warning : "");
    int32_t lq = kueue_model_lq(&m, "team-a/jobs");
    cr_assert_geq(lq, 0);
    cr_assert_eq(m.lqs[lq].cq, cq(&m, "a"));
    cr_assert_eq(m.wpcs[kueue_model_wpc(&m, "batch")].value, 100);
    struct kueue *k = build(&m);
    uint32_t a = cq(&m, "a"), b = cq(&m, "b"), c = cq(&m, "c");

    /* 1 */
    cr_assert_eq(kueue_submit(k, 1, c, 100, 8, 0), 0);
    step(k, 1, 0, NULL, 0);
    expect_stat(k, c, 8, 2, 0);
    expect_stat(k, a, 0, 0, 2.0 * 2 / 6);
    expect_stat(k, b, 0, 0, 2.0 * 4 / 6);
    /* 2 */
    cr_assert_eq(kueue_submit(k, 2, b, 100, 4, 10), 0);
    cr_assert_eq(kueue_submit(k, 3, b, 100, 2, 11), 0);
    step(k, 2, 0, NULL, 10);
    struct kueue_decision d;
    cr_assert_eq(kueue_next(k, &d), 0, "w3 must wait");
    expect_stat(k, a, 0, 0, 2);
    expect_stat(k, b, 4, 0, 0);
    expect_stat(k, c, 8, 2, 0);
    /* 3 */
    cr_assert_eq(kueue_submit(k, 4, a, 100, 5, 20), 0);
    const uint32_t v1[] = {1};
    step(k, 4, 1, v1, 20);
    cr_assert_not(kueue_find(k, 1)->admitted);
    /* 4: w1 (older) cannot come back; w3 borrows. */
    step(k, 3, 0, NULL, 30);
    expect_stat(k, a, 5, 0, 2.0 * 1 / 7);
    expect_stat(k, b, 6, 2, 0);
    expect_stat(k, c, 0, 0, 2.0 * 6 / 7);
    /* 5 */
    cr_assert_eq(kueue_next(k, &d), 0);
    cr_assert_float_eq(kueue_cq_potential(k, c), 8, 1e-9, "c: nominal 6 + borrowingLimit 2");
    kueue_destroy(k);
    kueue_model_release(&m);
}

static const char cq_unmodelled[] = "apiVersion: kueue.x-k8s.io/v1beta1\n"
                                    "kind: ResourceFlavor\n"
                                    "metadata: {name: gpu}\n"
                                    "spec: {nodeTaints: [{key: x, effect: NoSchedule}]}\n"
                                    "---\n"
                                    "apiVersion: kueue.x-k8s.io/v1beta1\n"
                                    "kind: ClusterQueue\n"
                                    "metadata: {name: a}\n"
                                    "spec:\n"
                                    "  stopPolicy: Hold\n"
                                    "  frobnicate: 3\n"
                                    "  resourceGroups:\n"
                                    "  - coveredResources: [cpu, nvidia.com/gpu]\n"
                                    "    flavors:\n"
                                    "    - name: gpu\n"
                                    "      resources:\n"
                                    "      - {name: cpu, nominalQuota: 64}\n"
                                    "      - {name: nvidia.com/gpu, nominalQuota: 8}\n";

Test(kueue_manifests, unmodelled_fields_are_named_in_one_warning)
{
    struct kueue_model m;
    load(&m, cq_unmodelled);
    cr_assert_not_null(m.warning);
    cr_assert_str_eq(m.warning,
                     "Kueue manifests: not modelled, ignored: ResourceFlavor/gpu spec.nodeTaints; "
                     "ClusterQueue/a spec.stopPolicy; ClusterQueue/a spec.frobnicate; "
                     "ClusterQueue/a quota of cpu (flavor gpu)");
    cr_assert_float_eq(m.cqs[0].cq.nominal, 8, 1e-9);
    kueue_model_release(&m);
}

Test(kueue_manifests, malformed_manifests_name_file_line_column)
{
    static const char head[] = "apiVersion: kueue.x-k8s.io/v1beta1\n"
                               "kind: ResourceFlavor\n"
                               "metadata: {name: gpu}\n"
                               "---\n";
    char buf[2048];
    /* A quota that is not a number: at its value (line 12, column 68). */
    snprintf(buf, sizeof buf, "%s%s", head,
             "apiVersion: kueue.x-k8s.io/v1beta1\n"
             "kind: ClusterQueue\n"
             "metadata: {name: a}\n"
             "spec:\n"
             "  resourceGroups:\n"
             "  - coveredResources: [nvidia.com/gpu]\n"
             "    flavors:\n"
             "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: lots}]}\n");
    cr_assert_str_eq(load_err(buf), "k.yaml:12:68: 'nominalQuota': expected a number, got 'lots'");
    /* An unknown kind. */
    cr_assert_str_eq(load_err("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
                              "metadata: {name: w}\n"),
                     "k.yaml:2:7: 'kind': expected one of: ResourceFlavor, ClusterQueue, Cohort, "
                     "LocalQueue, WorkloadPriorityClass, Configuration, got 'Workload'");
    /* A dangling reference: a LocalQueue to a ClusterQueue that is not there. */
    snprintf(buf, sizeof buf, "%s%s", head,
             "apiVersion: kueue.x-k8s.io/v1beta1\n"
             "kind: LocalQueue\n"
             "metadata: {name: q}\n"
             "spec: {clusterQueue: nope}\n");
    cr_assert_str_eq(load_err(buf),
                     "k.yaml:8:22: 'clusterQueue': no ClusterQueue named 'nope' in the manifests");
    /* A wrong type: resourceGroups a mapping. */
    snprintf(buf, sizeof buf, "%s%s", head,
             "apiVersion: kueue.x-k8s.io/v1beta1\n"
             "kind: ClusterQueue\n"
             "metadata: {name: a}\n"
             "spec: {resourceGroups: {flavors: []}}\n");
    cr_assert_str_eq(load_err(buf),
                     "k.yaml:8:24: 'resourceGroups': expected a list, got a mapping");
    /* A flavor no ResourceFlavor defines. */
    snprintf(buf, sizeof buf, "%s%s", head,
             "apiVersion: kueue.x-k8s.io/v1beta1\n"
             "kind: ClusterQueue\n"
             "metadata: {name: a}\n"
             "spec:\n"
             "  resourceGroups:\n"
             "  - coveredResources: [nvidia.com/gpu]\n"
             "    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 1}]}]\n");
    cr_assert_str_eq(load_err(buf),
                     "k.yaml:11:22: 'name': no ResourceFlavor named 'h100' in the manifests");
    /* No GPU quota anywhere: nothing could ever be admitted. */
    snprintf(buf, sizeof buf, "%s%s", head,
             "apiVersion: kueue.x-k8s.io/v1beta1\n"
             "kind: ClusterQueue\n"
             "metadata: {name: a}\n"
             "spec:\n"
             "  resourceGroups:\n"
             "  - coveredResources: [cpu]\n"
             "    flavors: [{name: gpu, resources: [{name: cpu, nominalQuota: 8}]}]\n");
    cr_assert(strstr(load_err(buf), "k.yaml:10:3: 'resourceGroups': no ClusterQueue or Cohort "
                                    "gives nvidia.com/gpu quota"),
              "%s", load_err(buf));
    /* Objects but no ClusterQueue. */
    cr_assert_str_eq(load_err(head), "k.yaml:1:1: no ClusterQueue in the manifests (expected at "
                                     "least one)");
    /* A cycle of cohorts. */
    cr_assert(strstr(load_err("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                              "metadata: {name: x}\nspec: {parentName: y}\n---\n"
                              "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                              "metadata: {name: y}\nspec: {parentName: x}\n"),
                     "is in a cycle of parents"));
}

/*
 * Fair sharing, weights 1 and 3. A lender L (nominal 16, no workloads) and
 * two borrowers A (weight 1) and B (weight 3) with no quota of their own, so
 * everything they hold is borrowed; the lendable capacity of the cohort is
 * 16. Kueue's share (DRS) of a CQ is 1000 · borrowed / 16 / weight.
 *
 * Phase 1, admission: A and B each have 20 one-GPU workloads pending; each
 * cycle Kueue admits the head whose CQ has the lower share with it admitted
 * (ties: the older workload). Shares equalise when a / 1 = b / 3: 16 cards
 * end 4 : 12.
 * Phase 2, preemption: A alone first takes all 16; then B's 12 workloads
 * arrive. B may reclaim (Any) while LessThanOrEqualToFinalShare holds:
 * B's share with one more, (b + 1) / 3, <= A's after losing one, a − 1, with
 * a = 16 − b: b + 1 <= 45 − 3b, i.e. b <= 11, so B's 12th admission is the
 * last (b = 12, a = 4); then (12 + 1) / 3 = 4.33 > 3 fails it and
 * LessThanInitialShare (4.33 < a = 4) fails too. 4 : 12 again.
 * Tolerance: exact here (one-GPU workloads); with gangs of g GPUs the split is
 * met to within g GPUs, as no smaller step exists.
 */
static const char fair_yaml[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ResourceFlavor\n"
    "metadata: {name: gpu}\n"
    "---\n"
    "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
    "kind: Configuration\n"
    "fairSharing: {enable: true}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: L}\n"
    "spec:\n"
    "  cohort: all\n"
    "  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu,\n"
    "    resources: [{name: nvidia.com/gpu, nominalQuota: 16}]}]}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: A}\n"
    "spec:\n"
    "  cohort: all\n"
    "  fairSharing: {weight: 1}\n"
    "  preemption: {reclaimWithinCohort: Any}\n"
    "  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu,\n"
    "    resources: [{name: nvidia.com/gpu, nominalQuota: 0}]}]}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: B}\n"
    "spec:\n"
    "  cohort: all\n"
    "  fairSharing: {weight: 3}\n"
    "  preemption: {reclaimWithinCohort: Any}\n"
    "  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu,\n"
    "    resources: [{name: nvidia.com/gpu, nominalQuota: 0}]}]}]\n";

static void drain(struct kueue *k, sim_time now)
{
    struct kueue_decision d;
    for (int i = 0; i < 200 && kueue_next(k, &d) == 1; i++)
        cr_assert_eq(kueue_apply(k, &d, now), 0);
}

Test(kueue_manifests, fair_sharing_weights_1_and_3_split_borrowed_capacity_1_to_3)
{
    struct kueue_model m;
    load(&m, fair_yaml);
    cr_assert(m.fair_sharing);
    cr_assert_eq(m.nstrategies, 2, "Kueue's default strategies");
    uint32_t A = (uint32_t)kueue_model_cq(&m, "A"), B = (uint32_t)kueue_model_cq(&m, "B");
    cr_assert_float_eq(m.cqs[B].cq.weight, 3, 1e-12);

    /* Phase 1: both saturated from the start. */
    struct kueue *k = build(&m);
    for (uint32_t i = 0; i < 20; i++) {
        cr_assert_eq(kueue_submit(k, 100 + i, A, 0, 1, (sim_time)(2 * i)), 0);
        cr_assert_eq(kueue_submit(k, 200 + i, B, 0, 1, (sim_time)(2 * i + 1)), 0);
    }
    drain(k, 1000);
    cr_assert_float_eq(kueue_usage(k, A), 4, 1e-9, "A holds %g", kueue_usage(k, A));
    cr_assert_float_eq(kueue_usage(k, B), 12, 1e-9, "B holds %g", kueue_usage(k, B));
    kueue_destroy(k);

    /* Phase 2: A first holds everything, B reclaims by fair-sharing preemption. */
    k = build(&m);
    for (uint32_t i = 0; i < 20; i++)
        cr_assert_eq(kueue_submit(k, 100 + i, A, 0, 1, (sim_time)i), 0);
    drain(k, 100);
    cr_assert_float_eq(kueue_usage(k, A), 16, 1e-9);
    for (uint32_t i = 0; i < 20; i++)
        cr_assert_eq(kueue_submit(k, 200 + i, B, 0, 1, (sim_time)(200 + i)), 0);
    drain(k, 300);
    cr_assert_float_eq(kueue_usage(k, A), 4, 1e-9, "A holds %g", kueue_usage(k, A));
    cr_assert_float_eq(kueue_usage(k, B), 12, 1e-9, "B holds %g", kueue_usage(k, B));
    kueue_destroy(k);
    kueue_model_release(&m);
}

/* A ClusterQueue with flavorFungibility FF (one flow-style line, line 9 of the text). */
#define PREF_YAML(FF)                                                                        \
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\n" \
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: a}\n"          \
    "spec:\n  flavorFungibility: " FF "\n"                                                   \
    "  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu,\n"        \
    "    resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]\n"

/*
 * flavorFungibility.preference (Kueue apis/kueue/v1beta2 FlavorFungibility): read, not
 * warned; PreemptionOverBorrowing sets prefer_preemption, BorrowingOverPreemption (the
 * default) does not. Kueue's CRD refuses it unless whenCanBorrow and whenCanPreempt are both
 * TryNextFlavor (whenCanBorrow defaults to MayStopSearch): an error at the preference value
 * (line 9, column 66).
 */
Test(kueue_manifests, flavor_fungibility_preference_is_read_and_validated_as_kueue_does)
{
    struct kueue_model m;
    load(&m, PREF_YAML("{whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, "
                       "preference: PreemptionOverBorrowing}"));
    cr_assert(m.cqs[0].cq.prefer_preemption && m.cqs[0].cq.borrow_try_next);
    cr_assert(!m.warning || !strstr(m.warning, "preference"), "%s", m.warning);
    kueue_model_release(&m);
    load(&m, PREF_YAML("{whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, "
                       "preference: BorrowingOverPreemption}"));
    cr_assert(!m.cqs[0].cq.prefer_preemption);
    kueue_model_release(&m);
    const char *e = load_err(PREF_YAML("{whenCanPreempt: TryNextFlavor, "
                                       "preference: PreemptionOverBorrowing}"));
    cr_assert(strstr(e, "k.yaml:9:66: 'preference': preference can only be set when "
                        "whenCanBorrow and whenCanPreempt are both TryNextFlavor"),
              "%s", e);
    e = load_err(PREF_YAML("{whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, "
                           "preference: Sometimes}"));
    cr_assert(strstr(e, "'preference': expected one of: BorrowingOverPreemption, "
                        "PreemptionOverBorrowing, got 'Sometimes'"),
              "%s", e);
}

/* ---- the policy on the shipped example's manifests ---- */

#include "tests/simtest.h"

static const char run_yaml[] =
    "name: t\nseed: 1\nduration: 1m\nsample_interval: 60s\n"
    "cluster: {gpu: a100-sxm4-80gb, nodes: 4, gpus_per_node: 8, sharing: exclusive}\n"
    "services:\n"
    "  - name: chat\n"
    "    queue: serving/chat\n"
    "    latency: {a_ms: 1.16, b_ms: 0.28}\n"
    "    batching: {max_batch: 16, max_wait: 5ms}\n"
    "    slo: {p99_ms: 100}\n"
    "    replicas: 2\n"
    "    arrivals: {synthetic: {rate_rps: 1000}}\n"
    "training:\n"
    "  backlog: 40\n"
    "  jobs: {synthetic: {per_hour: 4, duration: {lognormal: {median: 2h, sigma: 0.5}},\n"
    "         gpus: {1: 0.5, 2: 0.5}}}\n"
    "policy:\n"
    "  name: kueue\n"
    "  inference_gpus: 12\n"
    "  manifests: [scenarios/kueue-manifests/kueue.yaml]\n"
    "  training_queues: {team-a/jobs: 1, team-b/jobs: 1}\n"
    "  priorities: {inference: serving, training: batch}\n";

/*
 * 40 backlog jobs of 1–2 cards (60 cards asked), split evenly between team-a
 * and team-b (nominal 10 each, borrowingLimit 12, fair-sharing weights 1 and
 * 3), with inference (nominal 12, lendingLimit 8: keeps 4) holding chat's 2
 * replicas. The tree (org ← serving ← inference; org ← research ← teams):
 * org's quota is 8 (what inference lends) + 20 (the teams lend all) = 28, and
 * inference's 2 stay within its kept 4, so after the first minute the teams
 * hold 28 cards: 20 of their own plus the 8 borrowed, all lent by inference.
 * Each team's lendable capacity (Kueue's potentialAvailable) is min(10 + 12,
 * 28) = 22, so equal shares mean borrowed_b = 3 · borrowed_a: 2 and 6 of the
 * 8, met to within one job (2 cards).
 */
Test(kueue_manifests, policy_runs_the_example_manifests_with_per_queue_figures)
{
    struct scenario sc;
    struct sim s;
    simtest_build(&sc, &s, run_yaml, 1);
    cr_assert_not_null(sc.policy.warning);
    cr_assert(strstr(sc.policy.warning, "ClusterQueue/inference spec.namespaceSelector"), "%s",
              sc.policy.warning);
    cr_assert_eq(sim_run(&s, NULL), 0);
    struct pol_queue_stat st[8];
    uint32_t n = s.pol->queues(&s, s.pol_state, st, 8);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(st[0].name, "inference");
    cr_assert_float_eq(st[0].admitted, 2, 1e-9, "chat's 2 replicas");
    double a = st[1].admitted, b = st[2].admitted;
    cr_assert_float_eq(a + b, 28, 1e-9, "a %g b %g", a, b);
    cr_assert_float_eq(st[1].borrowed + st[2].borrowed, 8, 1e-9);
    cr_assert_float_eq(st[0].lent, 8, 1e-9);
    cr_assert_leq(fabs(st[2].borrowed - 6), 2 + 1e-9, "borrowed %g : %g", st[1].borrowed,
                  st[2].borrowed);
    simtest_free(&sc, &s);
}

Test(kueue_manifests, a_service_naming_no_local_queue_is_refused)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", run_yaml);
    char *q = strstr(buf, "serving/chat");
    cr_assert_not_null(q);
    memcpy(q, "serving/chaz", 12);
    simtest_expect_rejected(buf, "bad.yaml:8:12: 'queue': no LocalQueue named 'serving/chaz'", 0);
}

/*
 * A ClusterQueue whose resourceGroups cover no GPU (only cpu here) has no GPU quota, and in
 * Kueue its GPU workloads are inadmissible: nvidia.com/gpu is not a resource it covers, so it
 * cannot borrow GPUs from its cohort either. By hand: "gpu" holds 8 and may lend all of them;
 * what "cpu" could ever hold is 0 GPUs (before, it borrowed up to all 8), "gpu" 8.
 */
Test(kueue_manifests, a_cluster_queue_covering_no_gpu_cannot_borrow_gpus)
{
    struct kueue_model m;
    load(&m, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
             "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: gpu}\n"
             "spec:\n  cohort: all\n  resourceGroups:\n"
             "    - coveredResources: [nvidia.com/gpu]\n      flavors:\n"
             "        - {name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}\n"
             "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cpu}\n"
             "spec:\n  cohort: all\n  resourceGroups:\n"
             "    - coveredResources: [cpu]\n      flavors:\n"
             "        - {name: a100, resources: [{name: cpu, nominalQuota: 64}]}\n");
    struct kueue *k = build(&m);
    cr_expect_float_eq(kueue_cq_potential(k, cq(&m, "gpu")), 8, 1e-9);
    cr_expect_float_eq(kueue_cq_potential(k, cq(&m, "cpu")), 0, 1e-9, "cpu could hold %g GPUs",
                       kueue_cq_potential(k, cq(&m, "cpu")));
    kueue_destroy(k);
    kueue_model_release(&m);
}
