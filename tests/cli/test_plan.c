/*
 * test_plan.c — `tidesim plan` (sim/driver/plan.h, docs/plan.md) against
 * independent references:
 *
 *   - an exhaustive scan: `tidesim sweep` over every size of the range with the
 *     same seeds, each point judged by `tidesim check --confident` (the gate
 *     command a user runs); the plan's answer must be the smallest size whose
 *     point passes, for two policies;
 *   - a schedule by hand: 16 one-hour training jobs (lognormal, sigma 0.2) queued
 *     at t = 0 on nodes of 2 cards, one card serving: 2n - 1 training cards drain
 *     the backlog in ceil(16 / (2n - 1)) waves of ~1 h: n = 3 takes ~4 h (the
 *     deadline of 4 h sits inside its interval: unclear), n = 4 ~3 h: the answer
 *     for the 4 h gate is 4 nodes;
 *   - Young's checkpoint interval (Young 1974): with save time C = 20 GB / 2 GB/s
 *     + 5 s = 15 s and one fault per job-hour (M = 3,600 s), the overhead
 *     C/τ + τ/(2M) (+ restores) is least near τ* = √(2CM) ≈ 5.5 min and grows on
 *     both sides: a 15 % overhead gate fails at 1 min and at 2 h but holds at
 *     4 min, a gate that is not monotone in τ. The plan must say so and scan.
 *
 * Runs are short (8 h and 12 h of a 2..16-card cluster, ~0.2-0.5 s each).
 */
#include <hdf5.h>
#include <stdint.h>

#include "sim/driver/plan.h"
#include "tests/h5test.h"
#include "tests/proctest.h"

static const char backlog_yaml[] =
    "name: backlog\n"
    "seed: 3\n"
    "duration: 8h\n"
    "sample_interval: 5m\n"
    "cluster: { nodes: 1, gpus_per_node: 2 }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.1 }\n"
    "    batching: { max_batch: 16, max_wait: 5ms }\n"
    "    replicas: 1\n"
    "    arrivals: { synthetic: { peak_rps: 100, trough_ratio: 0.5, peak_hour: 0 } }\n"
    "training:\n"
    "  backlog: 16\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 0, duration: { lognormal: { median: 1h, sigma: 0.2 } },\n"
    "                 gpus: { 1: 1 } }\n"
    "policy: { name: dedicated, inference_gpus: 1 }\n";

static const char yd_yaml[] =
    "name: young-daly\n"
    "seed: 5\n"
    "duration: 12h\n"
    "sample_interval: 5m\n"
    "cluster: { nodes: 1, gpus_per_node: 5, faults: { per_tenant_per_hour: 1, restart: 1m } }\n"
    "services:\n"
    "  - name: chat\n"
    "    latency: { a_ms: 1.16, b_ms: 0.28, dist: lognormal, cv: 0.1 }\n"
    "    batching: { max_batch: 16, max_wait: 5ms }\n"
    "    replicas: 1\n"
    "    arrivals: { synthetic: { peak_rps: 50, trough_ratio: 0.5, peak_hour: 0 } }\n"
    "training:\n"
    "  backlog: 4\n"
    "  checkpoint: { interval: 30m, state_gb_per_gpu: 20, write_gbps: 2, read_gbps: 4 }\n"
    "  jobs:\n"
    "    synthetic: { per_hour: 0, duration: { lognormal: { median: 20h, sigma: 0.1 } },\n"
    "                 gpus: { 1: 1 } }\n"
    "policy: { name: dedicated, inference_gpus: 1 }\n";

static void put(const char *dir, const char *name, const char *text)
{
    char p[1200];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    ptest_write(p, text);
}

/* Run tidesim in dir with stdout to out.txt and stderr to err.txt; returns the exit status. */
static int run(const char *dir, const char *const args[], char *out, size_t outlen)
{
    char ef[1200], of[1200], bin[2048];
    snprintf(ef, sizeof(ef), "%s/err.txt", dir);
    snprintf(of, sizeof(of), "%s/out.txt", dir);
    const char *argv[32];
    ptest_argv(argv, bin, sizeof(bin), args);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || chdir(dir))
            _exit(126);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int rc = ptest_wait(p, 300);
    if (out) {
        FILE *f = fopen(of, "r");
        size_t k = f ? fread(out, 1, outlen - 1, f) : 0;
        out[k] = 0;
        if (f)
            fclose(f);
    }
    return rc;
}

/*
 * The reference: sweep the choice over every size (same seeds), then the index of the first
 * point that `tidesim check --confident` passes (SIZE_MAX when none does).
 */
static size_t scan_reference(const char *dir, const char *base, const char *choice_axes,
                             const char *size_key, const char *sizes, size_t nsizes,
                             const char *const gate[], const char *tag)
{
    char sw[2048], name[64], outdir[64];
    snprintf(sw, sizeof(sw), "base: %s\nreplications: 3\naxes:\n%s  %s: %s\n", base, choice_axes,
             size_key, sizes);
    snprintf(name, sizeof(name), "%s.yaml", tag);
    snprintf(outdir, sizeof(outdir), "%s.sweep", tag);
    put(dir, name, sw);
    const char *sargs[] = {"sweep", name, "-o", outdir, "-j", "2", "-q", NULL};
    char out[4096];
    cr_assert_eq(run(dir, sargs, out, sizeof(out)), 0, "sweep %s failed", tag);
    char index[128];
    snprintf(index, sizeof(index), "%s/index.h5", outdir);
    for (size_t i = 0; i < nsizes; i++) {
        char pt[16];
        snprintf(pt, sizeof(pt), "%zu", i);
        const char *cargs[12] = {"check", index, "--confident", "--point", pt};
        size_t k = 5;
        for (size_t g = 0; gate[g]; g++)
            cargs[k++] = gate[g];
        cargs[k] = NULL;
        int rc = run(dir, cargs, out, sizeof(out));
        cr_assert(rc == 0 || rc == 1 || rc == 3, "check exit %d: %s", rc, out);
        if (rc == 0)
            return i;
    }
    return SIZE_MAX;
}

static double plan_answer(const char *dir, const char *plandir, size_t choice)
{
    char p[1200], g[64];
    snprintf(p, sizeof(p), "%s/%s/index.h5", dir, plandir);
    snprintf(g, sizeof(g), "/plan/choice-%04zu", choice);
    return h5test_file_f64(p, g, "size_value");
}

static double plan_attr(const char *dir, const char *plandir, size_t choice, const char *name)
{
    char p[1200], g[64];
    snprintf(p, sizeof(p), "%s/%s/index.h5", dir, plandir);
    snprintf(g, sizeof(g), "/plan/choice-%04zu", choice);
    return h5test_file_f64(p, g, name);
}

Test(plan, finds_the_size_of_an_exhaustive_scan_for_two_policies)
{
    char dir[128], out[16384];
    ptest_tmpdir(dir, sizeof(dir), "plan");
    put(dir, "b.yaml", backlog_yaml);
    put(dir, "p.yaml",
        "base: b.yaml\n"
        "size: {key: cluster.nodes, from: 1, to: 8}\n"
        "mode: zip\n"
        "choices:\n"
        "  policy.name: [dedicated, timeslice]\n"
        "  cluster.sharing: [exclusive, timeslice]\n"
        "gates:\n"
        "  backlog-drained-by: 4h\n"
        "  min-slo: 99%\n"
        "replications: 3\n");
    const char *args[] = {"plan", "p.yaml", "-o", "p.plan", "-j", "2", NULL};
    cr_assert_eq(run(dir, args, out, sizeof(out)), 0, "%s", out);
    const char *gates[] = {"--backlog-drained-by", "4h", "--min-slo", "99%", NULL};
    static const char *const axes[] = {"  policy.name: dedicated\n  cluster.sharing: exclusive\n",
                                       "  policy.name: timeslice\n  cluster.sharing: timeslice\n"};
    for (size_t c = 0; c < 2; c++) {
        char tag[16];
        snprintf(tag, sizeof(tag), "scan%zu", c);
        size_t ref = scan_reference(dir, "b.yaml", axes[c], "cluster.nodes",
                                    "{from: 1, to: 8, step: 1}", 8, gates, tag);
        cr_assert_neq(ref, SIZE_MAX, "choice %zu: no size passes in the scan", c);
        double got = plan_answer(dir, "p.plan", c);
        cr_expect_eq(got, (double)(ref + 1), "choice %zu: plan %g, scan %zu nodes", c, got,
                     ref + 1);
        /* bisection probes fewer sizes than the scan's 8 */
        cr_expect_lt(plan_attr(dir, "p.plan", c, "probes"), 8);
        cr_expect_eq(plan_attr(dir, "p.plan", c, "monotone"), 1);
    }
    /* by hand: 16 one-hour jobs on 2n - 1 cards by 4 h: n = 4 (n = 3 straddles 4 h) */
    cr_expect_eq(plan_answer(dir, "p.plan", 0), 4, "%s", out);
    cr_expect(strstr(out, "backlog-drained-by") != NULL, "the binding gate is named: %s", out);
    cr_expect(strstr(out, "answer (objective cost): ") != NULL, "%s", out);
    ptest_rmdir(dir);
}

Test(plan, a_gate_not_monotone_in_the_size_is_detected_and_scanned)
{
    char dir[128], out[16384];
    ptest_tmpdir(dir, sizeof(dir), "plan");
    put(dir, "yd.yaml", yd_yaml);
    put(dir, "p.yaml",
        "base: yd.yaml\n"
        "size: {key: training.checkpoint.interval, values: [1m, 2m, 4m, 30m, 60m, 120m]}\n"
        "gates:\n"
        "  max-ckpt-overhead: 15%\n"
        "replications: 3\n");
    const char *args[] = {"plan", "p.yaml", "-o", "p.plan", "-j", "2", NULL};
    cr_assert_eq(run(dir, args, out, sizeof(out)), 0, "%s", out);
    cr_expect(strstr(out, "NOT MONOTONE") != NULL, "%s", out);
    cr_expect(strstr(out, "scan (not monotone)") != NULL, "%s", out);
    cr_expect_eq(plan_attr(dir, "p.plan", 0, "monotone"), 0);
    const char *gates[] = {"--max-ckpt-overhead", "15%", NULL};
    size_t ref = scan_reference(dir, "yd.yaml", "", "training.checkpoint.interval",
                                "[1m, 2m, 4m, 30m, 60m, 120m]", 6, gates, "scan");
    static const double secs[] = {60, 120, 240, 1800, 3600, 7200};
    cr_assert_neq(ref, SIZE_MAX);
    cr_expect_eq(plan_answer(dir, "p.plan", 0), secs[ref], "plan %g s, scan %g s",
                 plan_answer(dir, "p.plan", 0), secs[ref]);
    /* Young: the optimum √(2 · 15 s · 3600 s) ≈ 329 s lies between 2 and 30 minutes */
    cr_expect(secs[ref] > 120 && secs[ref] < 1800, "answer %g s", secs[ref]);
    ptest_rmdir(dir);
}

/* Every seed file of the plan's probes and its modification time. */
static size_t seed_files(const char *dir, char names[][256], struct timespec *mt, size_t max)
{
    char pd[1200];
    snprintf(pd, sizeof(pd), "%s/p.plan/probes", dir);
    char *v[256];
    size_t n = ptest_list(pd, "", v, 256), k = 0;
    for (size_t i = 0; i < n && i < 256; i++) {
        if (strstr(v[i], ".rep") && k < max) {
            char p[1600];
            struct stat st;
            snprintf(p, sizeof(p), "%s/%s", pd, v[i]);
            cr_assert_eq(stat(p, &st), 0);
            snprintf(names[k], 256, "%s", v[i]);
            mt[k++] = st.st_mtim;
        }
    }
    ptest_free_list(v, n < 256 ? n : 256);
    return k;
}

Test(plan, a_rerun_reuses_every_run_and_another_gate_runs_only_new_probes)
{
    char dir[128], out[16384];
    ptest_tmpdir(dir, sizeof(dir), "plan");
    put(dir, "b.yaml", backlog_yaml);
    static const char plan4[] = "base: b.yaml\n"
                                "size: {key: cluster.nodes, from: 1, to: 8}\n"
                                "gates: {backlog-drained-by: 4h}\n"
                                "replications: 3\n";
    put(dir, "p.yaml", plan4);
    const char *args[] = {"plan", "p.yaml", "-o", "p.plan", "-j", "2", NULL};
    cr_assert_eq(run(dir, args, out, sizeof(out)), 0, "%s", out);
    static char names[64][256], again[64][256];
    struct timespec t1[64], t2[64];
    size_t n1 = seed_files(dir, names, t1, 64);
    cr_assert_gt(n1, 0);
    double runs = plan_attr(dir, "p.plan", 0, "runs");
    cr_expect_eq(plan_attr(dir, "p.plan", 0, "runs_now"), runs);
    /* the same plan again: nothing runs, the same answer */
    cr_assert_eq(run(dir, args, out, sizeof(out)), 0, "%s", out);
    cr_expect_eq(plan_attr(dir, "p.plan", 0, "runs_now"), 0, "%s", out);
    cr_expect_eq(plan_attr(dir, "p.plan", 0, "runs"), runs);
    cr_expect(strstr(out, "(0 new)") != NULL, "%s", out);
    size_t n2 = seed_files(dir, again, t2, 64);
    cr_expect_eq(n2, n1);
    for (size_t i = 0; i < n1 && i < n2; i++)
        cr_expect(!strcmp(names[i], again[i]) && t1[i].tv_sec == t2[i].tv_sec &&
                      t1[i].tv_nsec == t2[i].tv_nsec,
                  "%s was written again", names[i]);
    /* a looser deadline: the probes already made are reused (6 h: 3 nodes, ~4 h, passes) */
    put(dir, "p.yaml",
        "base: b.yaml\n"
        "size: {key: cluster.nodes, from: 1, to: 8}\n"
        "gates: {backlog-drained-by: 6h}\n"
        "replications: 3\n");
    cr_assert_eq(run(dir, args, out, sizeof(out)), 0, "%s", out);
    double now = plan_attr(dir, "p.plan", 0, "runs_now"), all = plan_attr(dir, "p.plan", 0, "runs");
    cr_expect_lt(now, all, "some probes are reused (%g new of %g)", now, all);
    cr_expect_lt(plan_answer(dir, "p.plan", 0), 4);
    ptest_rmdir(dir);
}

Test(plan, a_bad_plan_is_refused_at_its_position_before_anything_runs)
{
    char dir[128], out[4096], err[4096];
    ptest_tmpdir(dir, sizeof(dir), "plan");
    put(dir, "b.yaml", backlog_yaml);
    /* line 3, column 18: 'sometimes' */
    put(dir, "p.yaml",
        "base: b.yaml\n"
        "size: {key: cluster.nodes, from: 1, to: 4}\n"
        "gates: {min-slo: sometimes}\n");
    const char *args[] = {"plan", "p.yaml", "-o", "p.plan", NULL};
    cr_expect_eq(run(dir, args, out, sizeof(out)), 1);
    char ef[1200];
    snprintf(ef, sizeof(ef), "%s/err.txt", dir);
    FILE *f = fopen(ef, "r");
    cr_assert_not_null(f);
    size_t k = fread(err, 1, sizeof(err) - 1, f);
    err[k] = 0;
    fclose(f);
    cr_expect(!strncmp(err, "p.yaml:3:18: 'min-slo': expected a fraction", 43), "%s", err);
    /* a size the scenario refuses: at its value's position (line 2, column 45) */
    put(dir, "p.yaml",
        "base: b.yaml\n"
        "size: {key: cluster.gpus_per_node, values: [0, 2]}\n"
        "gates: {min-slo: 99%}\n");
    cr_expect_eq(run(dir, args, out, sizeof(out)), 1);
    f = fopen(ef, "r");
    k = fread(err, 1, sizeof(err) - 1, f);
    err[k] = 0;
    fclose(f);
    cr_expect(strstr(err, "p.yaml:2:45: axis cluster.gpus_per_node value '0'") != NULL, "%s", err);
    struct stat st;
    char pd[1200];
    snprintf(pd, sizeof(pd), "%s/p.plan", dir);
    cr_expect_neq(stat(pd, &st), 0, "nothing may be written");
    ptest_rmdir(dir);
}

/* LLM gates (issue 16 part 9): a plan's max-ttft-p99 / max-tpot-p99 are check's gates. */
Test(plan, llm_latency_gates_are_read_into_the_check_gates)
{
    char dir[128], path[1200];
    ptest_tmpdir(dir, sizeof(dir), "plan");
    put(dir, "b.yaml", backlog_yaml);
    put(dir, "p.yaml",
        "base: b.yaml\n"
        "size: {key: cluster.nodes, from: 1, to: 4}\n"
        "gates: {max-ttft-p99: 2000, max-tpot-p99: 200}\n");
    snprintf(path, sizeof(path), "%s/p.yaml", dir);
    struct plan pl;
    struct conf_err err = {0};
    cr_assert_eq(plan_load(&pl, path, &err), 0, "%s", err.msg);
    cr_expect_eq(pl.gates.max_ttft_p99_ms, 2000.0);
    cr_expect_eq(pl.gates.max_tpot_p99_ms, 200.0);
    cr_expect(isnan(pl.gates.max_p99_ms));
    cr_expect(strstr(pl.gates_text, "max-ttft-p99 2000") != NULL, "%s", pl.gates_text);
    plan_release(&pl);
    ptest_rmdir(dir);
}

Test(plan, an_interrupt_keeps_the_runs_made_and_a_rerun_goes_on)
{
    char dir[128], out[16384], ef[1200], pd[1200];
    ptest_tmpdir(dir, sizeof(dir), "plan");
    put(dir, "b.yaml", backlog_yaml);
    put(dir, "p.yaml",
        "base: b.yaml\n"
        "size: {key: cluster.nodes, from: 1, to: 8}\n"
        "choices: {policy.name: [dedicated, kueue]}\n"
        "gates: {backlog-drained-by: 4h}\n"
        "replications: 3\n");
    const char *args[] = {"plan", "p.yaml", "-o", "p.plan", "-j", "1", NULL};
    snprintf(ef, sizeof(ef), "%s/stderr.txt", dir);
    pid_t pid = ptest_spawn(dir, ef, args);
    snprintf(pd, sizeof(pd), "%s/p.plan", dir);
    bool started = false;
    for (int i = 0; i < 3000 && !started; i++) {
        struct stat st;
        char probes[1300];
        snprintf(probes, sizeof(probes), "%s/probes", pd);
        started = stat(probes, &st) == 0;
        if (!started)
            ptest_nap();
    }
    cr_assert(started);
    snprintf(pd, sizeof(pd), "%s/p.plan/probes", dir);
    cr_assert(ptest_await_files(pd, "name-dedicated_nodes-8", 3, 120));
    kill(-pid, SIGINT);
    int rc = ptest_wait(pid, 60);
    cr_assert(rc == 130 || rc == 0, "exit %d", rc);
    if (rc == 130) {
        /* every file left is complete; the index (if any probe settled) says incomplete */
        char *names[64];
        size_t n = ptest_list(pd, "", names, 64);
        for (size_t i = 0; i < n && i < 64; i++)
            cr_expect(!strstr(names[i], ".tmp.") && !strstr(names[i], ".partial"), "left: %s",
                      names[i]);
        ptest_free_list(names, n < 64 ? n : 64);
        char ix[1300];
        struct stat st;
        snprintf(ix, sizeof(ix), "%s/p.plan/index.h5", dir);
        if (stat(ix, &st) == 0)
            cr_expect_eq(h5test_file_f64(ix, "/meta", "complete"), 0);
    }
    /* again: it goes on to the answer, reusing the runs made */
    const char *again[] = {"plan", "p.yaml", "-o", "p.plan", "-j", "2", NULL};
    cr_assert_eq(run(dir, again, out, sizeof(out)), 0, "%s", out);
    cr_expect_eq(plan_answer(dir, "p.plan", 0), 4, "%s", out);
    cr_expect_lt(plan_attr(dir, "p.plan", 0, "runs_now") + plan_attr(dir, "p.plan", 1, "runs_now"),
                 plan_attr(dir, "p.plan", 0, "runs") + plan_attr(dir, "p.plan", 1, "runs"));
    char ix[1300];
    snprintf(ix, sizeof(ix), "%s/p.plan/index.h5", dir);
    cr_expect_eq(h5test_file_f64(ix, "/meta", "complete"), 1);
    ptest_rmdir(dir);
}
