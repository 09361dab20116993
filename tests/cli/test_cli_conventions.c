/*
 * test_cli_conventions.c — the command line as the README's "Command line"
 * section describes it: --opt=value, --help on every command, validate on
 * several files, --format json that parses (checked against the text and
 * report outputs), -o - refused or stdout, no output over an input, keys
 * foreign to a shape or format, and the traces commands' safe writes.
 */
#include "tests/cli/clitest.h"

static const char tiny[] = "tests/data/scenarios/tiny.yaml";

Test(cli_conventions, every_command_answers_help_on_stdout)
{
    static const char *const cmds[] = {"run",  "validate", "report", "compare", "check",
                                       "plot", "mig",      "traces", "sweep",   "plan"};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        struct clirun r, h;
        cr_expect_eq(clitest_tidesim(&r, "%s --help", cmds[i]), 0, "%s --help", cmds[i]);
        char want[64];
        snprintf(want, sizeof(want), "usage: tidesim %s", cmds[i]);
        cr_expect(!strncmp(r.out, want, strlen(want)), "%s --help: %.80s", cmds[i], r.out);
        cr_expect_str_eq(r.err, "", "%s --help wrote to stderr", cmds[i]);
        cr_expect_eq(clitest_tidesim(&h, "help %s", cmds[i]), 0);
        cr_expect_str_eq(h.out, r.out, "help %s differs from %s --help", cmds[i], cmds[i]);
    }
    struct clirun r;
    cr_expect_eq(clitest_tidesim(&r, "traces inspect --help"), 0);
    cr_expect(!strncmp(r.out, "usage: tidesim traces", 21));
    cr_expect_eq(clitest_tidesim(&r, "--help"), 0);
    cr_expect_eq(clitest_tidesim(&r, "run --bogus"), 2);
    cr_expect_str_eq(r.err, "tidesim run: unknown option '--bogus' (see tidesim run --help)");
}

Test(cli_conventions, opt_equals_value_is_opt_space_value)
{
    char dir[128];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "optval");
    cr_assert_eq(clitest_tidesim(&r, "run %s --seed=9 --output=%s/a.h5 --quiet", tiny, dir), 0,
                 "%s", r.err);
    cr_assert_eq(clitest_tidesim(&r, "run --quiet %s -o %s/b.h5 --seed 9", tiny, dir), 0, "%s",
                 r.err);
    cr_assert_eq(clitest_tidesim(&r, "run %s -o %s/c.h5 -q", tiny, dir), 0, "%s", r.err);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "h5diff --exclude-path /meta %s/a.h5 %s/b.h5", dir, dir);
    cr_expect_eq(clitest_sh(&r, cmd), 0, "--seed=9 and --seed 9 differ");
    snprintf(cmd, sizeof(cmd), "h5diff -q --exclude-path /meta %s/a.h5 %s/c.h5", dir, dir);
    cr_expect_eq(clitest_sh(&r, cmd), 1, "--seed=9 was ignored (same as the file's seed 3)");
    /* check: the same gate either way, the same verdict and text. */
    struct clirun x, y;
    clitest_tidesim(&x, "check %s/a.h5 --min-util=0.99 --max-p99-ms=1000", dir);
    clitest_tidesim(&y, "check --min-util 0.99 --max-p99-ms 1000 %s/a.h5", dir);
    cr_expect_eq(x.rc, 1);
    cr_expect_eq(y.rc, 1);
    cr_expect_str_eq(x.out, y.out);
    clitest_rmdir(dir);
}

Test(cli_conventions, validate_several_files_text_and_json)
{
    char dir[128], bad[256];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "valid");
    snprintf(bad, sizeof(bad), "%s/bad.yaml", dir);
    clitest_write(bad, "name: bad\nduration: 1h\ncluster: { nodes: eight }\n");
    cr_expect_eq(clitest_tidesim(&r, "validate %s %s %s", tiny, bad, tiny), 1);
    /* Both good files reported, the bad one's message on stderr: every file is checked. */
    char want[512];
    snprintf(want, sizeof(want),
             "%s: ok (8 GPUs, 1 services, policy dedicated, 2.0 h)\n"
             "%s: ok (8 GPUs, 1 services, policy dedicated, 2.0 h)\n",
             tiny, tiny);
    cr_expect_str_eq(r.out, want);
    snprintf(want, sizeof(want), "%s:3:19: 'nodes': expected a positive integer, got 'eight'", bad);
    cr_expect_str_eq(r.err, want);
    cr_expect_eq(clitest_tidesim(&r, "validate %s", tiny), 0);

    char cmd[1024];
    snprintf(
        cmd, sizeof(cmd),
        "%s validate %s %s --format json | /usr/bin/python3 -c 'import json,sys; "
        "d=json.load(sys.stdin); "
        "assert [x[\"valid\"] for x in d] == [True, False], d; "
        "assert d[0][\"gpus\"] == 8 and d[0][\"duration_s\"] == 7200, d; "
        "assert d[1][\"error\"].endswith(\"expected a positive integer, got \\x27eight\\x27\"), d'",
        clitest_bin(), tiny, bad);
    cr_expect_eq(clitest_sh(&r, cmd), 0, "%s", r.err);
    clitest_rmdir(dir);
}

Test(cli_conventions, json_of_compare_and_check_agrees_with_report)
{
    char dir[128];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "json");
    cr_assert_eq(clitest_tidesim(&r, "run %s -o %s/a.h5 -q", tiny, dir), 0, "%s", r.err);
    cr_assert_eq(clitest_tidesim(&r, "run %s -o %s/b.h5 -q --set cluster.nodes=2", tiny, dir), 0,
                 "%s", r.err);
    char cmd[2048];
    /* compare's values are report's stored means; its diff is B - A of them. */
    snprintf(cmd, sizeof(cmd),
             "B=%s; $B report %s/a.h5 --format json > %s/ra.json && "
             "$B report %s/b.h5 --format json > %s/rb.json && "
             "$B compare %s/a.h5 %s/b.h5 --format json > %s/c.json && "
             "/usr/bin/python3 -c 'import json; d=\"%s\"; "
             "ra=json.load(open(d+\"/ra.json\")); rb=json.load(open(d+\"/rb.json\")); "
             "c=json.load(open(d+\"/c.json\")); "
             "assert [f[\"path\"] for f in c[\"files\"]] == [d+\"/a.h5\", d+\"/b.h5\"]; "
             "m={x[\"key\"]: x for x in c[\"metrics\"] if x[\"service\"] is None}; "
             "u=m[\"util_allocated\"]; a=ra[\"headline\"][\"util_allocated\"][\"mean\"]; "
             "b=rb[\"headline\"][\"util_allocated\"][\"mean\"]; "
             "assert u[\"values\"][0][\"mean\"] == a and u[\"values\"][1][\"mean\"] == b, u; "
             "assert abs(u[\"diffs\"][0][\"diff\"] - (b - a)) < 1e-12, u; "
             "assert u[\"diffs\"][0][\"verdict\"] == \"no-ci\"; "
             "assert any(x[\"service\"] == \"chat\" and x[\"key\"] == \"p99_ms\" "
             "for x in c[\"metrics\"])'",
             clitest_bin(), dir, dir, dir, dir, dir, dir, dir, dir);
    cr_expect_eq(clitest_sh(&r, cmd), 0, "%s", r.err);

    /* check: the JSON's status and exit are the process's, its finding the text's line. */
    struct clirun t;
    clitest_tidesim(&t, "check %s/a.h5 --min-util 0.99 --min-slo 0.5", dir);
    cr_expect_eq(t.rc, 1);
    snprintf(
        cmd, sizeof(cmd),
        "%s check %s/a.h5 --min-util=0.99 --min-slo=0.5 --format=json > %s/k.json; "
        "rc=$?; /usr/bin/python3 -c 'import json,sys; k=json.load(open(\"%s/k.json\")); "
        "assert k[\"exit\"] == int(sys.argv[1]) == 1, k; "
        "assert k[\"status\"] == \"fail\" and k[\"evaluated\"] == 2 and k[\"failed\"] == 1, k; "
        "f=k[\"findings\"]; assert len(f) == 1 and f[0][\"gate\"] == \"min-util\", f; "
        "print(\"FAIL min-util: \" + f[0][\"message\"])' $rc",
        clitest_bin(), dir, dir, dir);
    cr_expect_eq(clitest_sh(&r, cmd), 0, "%s", r.err);
    char first[512];
    snprintf(first, sizeof(first), "%.*s", (int)strcspn(t.out, "\n") + 1, t.out);
    cr_expect_str_eq(r.out, first);
    clitest_rmdir(dir);
}

Test(cli_conventions, dash_output_refused_or_stdout)
{
    char dir[128];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "dash");
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "cd %s && %s/%s run %s/%s -o -", dir, getenv("PWD"), clitest_bin(),
             getenv("PWD"), tiny);
    if (clitest_bin()[0] == '/')
        snprintf(cmd, sizeof(cmd), "cd %s && %s run %s/%s -o -", dir, clitest_bin(), getenv("PWD"),
                 tiny);
    cr_expect_eq(clitest_sh(&r, cmd), 2, "%s", r.err);
    cr_expect_str_eq(r.err, "tidesim run: -o -: results are an HDF5 file and cannot go to "
                            "standard output; name a file");
    char dash[256];
    snprintf(dash, sizeof(dash), "%s/-", dir);
    cr_expect(!clitest_exists(dash), "run -o - created a file named '-'");
    cr_expect_eq(clitest_tidesim(&r, "plot x.h5 -o -"), 2);
    /* traces convert -o - is standard output: the generic CSV's header and every record. */
    cr_expect_eq(clitest_tidesim(&r, "traces convert tests/data/counts.csv --format counts "
                                     "--end 1000 -o -"),
                 0, "%s", r.err);
    cr_expect(!strncmp(r.out, "time_s,in_tokens,out_tokens\n", 28), "%.60s", r.out);
    size_t lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 1 + 120 + 0 + 30, "rows: %zu", lines); /* the counts of the file */
    clitest_rmdir(dir);
}

Test(cli_conventions, output_never_replaces_an_input)
{
    char dir[128], x[256], hard[256], sym[256], keep[256];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "noover");
    snprintf(x, sizeof(x), "%s/x.yaml", dir);
    snprintf(hard, sizeof(hard), "%s/hard.yaml", dir);
    snprintf(sym, sizeof(sym), "%s/sym.yaml", dir);
    FILE *f = fopen(tiny, "r");
    cr_assert_not_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = 0;
    fclose(f);
    clitest_write(x, text);
    cr_assert_eq(link(x, hard), 0);
    cr_assert_eq(symlink("x.yaml", sym), 0);
    const char *outs[] = {x, hard, sym};
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(clitest_tidesim(&r, "run %s -o %s -q", x, outs[i]), 1, "-o %s", outs[i]);
        char want[600];
        snprintf(want, sizeof(want),
                 "tidesim run: output %s is the input %s; name another file with -o", outs[i], x);
        cr_expect_str_eq(r.err, want);
    }
    cr_expect_eq(clitest_tidesim(&r, "run %s -o %s -q", sym, x), 1); /* the input via a link */
    f = fopen(x, "r");
    cr_assert_not_null(f);
    char now[4096];
    size_t m = fread(now, 1, sizeof(now) - 1, f);
    now[m] = 0;
    fclose(f);
    cr_expect_str_eq(now, text, "the scenario was overwritten");

    /* traces convert: the same through a symlink; the input is left as it was. */
    snprintf(keep, sizeof(keep), "%s/in.csv", dir);
    clitest_write(keep, "time_s,in_tokens,out_tokens\n1.0,10,20\n2.0,11,21\n");
    char link2[256];
    snprintf(link2, sizeof(link2), "%s/out.csv", dir);
    cr_assert_eq(symlink("in.csv", link2), 0);
    cr_expect_eq(clitest_tidesim(&r, "traces convert %s --format csv -o %s", keep, link2), 2);
    clitest_slurp(keep, now, sizeof(now)); /* (removes it) */
    cr_expect_str_eq(now, "time_s,in_tokens,out_tokens\n1.0,10,20\n2.0,11,21\n");
    clitest_rmdir(dir);
}

Test(cli_conventions, keys_foreign_to_the_shape_or_format_are_named)
{
    char dir[128], y[256], want[512];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "foreign");
    snprintf(y, sizeof(y), "%s/s.yaml", dir);
    static const char head[] = "name: s\nduration: 1h\ncluster: { nodes: 1, gpus_per_node: 8 }\n"
                               "services:\n  - name: chat\n    replicas: 1\n    arrivals:\n";
    char text[1024];
    snprintf(text, sizeof(text),
             "%s      synthetic:\n        shape: cosine\n"
             "        peak_rps: 100\n        mean_rps: 50\n",
             head);
    clitest_write(y, text);
    cr_expect_eq(clitest_tidesim(&r, "validate %s", y), 1);
    snprintf(want, sizeof(want),
             "%s:11:9: 'mean_rps': not a key of shape cosine (it belongs to shape servegen; "
             "cosine takes peak_rps, trough_ratio, peak_hour)",
             y);
    cr_expect_str_eq(r.err, want);
    /* Without `shape`, hourly lists make the shape hourly: peak_hour is cosine's. */
    snprintf(text, sizeof(text),
             "%s      synthetic: { hourly: [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1], "
             "peak_hour: 3 }\n",
             head);
    clitest_write(y, text);
    cr_expect_eq(clitest_tidesim(&r, "validate %s", y), 1);
    cr_expect_not_null(strstr(r.err, "'peak_hour': not a key of shape hourly (it belongs to "
                                     "shape cosine; hourly takes hourly, hourly_kind)"),
                       "%s", r.err);
    /* A trace: count_column is the counts format's, not azure's. */
    snprintf(text, sizeof(text),
             "%s      trace: { path: %s/tests/data/counts.csv, format: azure, count_column: n }\n",
             head, getenv("PWD"));
    clitest_write(y, text);
    cr_expect_eq(clitest_tidesim(&r, "validate %s", y), 1);
    cr_expect_not_null(strstr(r.err, "'count_column': not a key of format azure (it belongs to "
                                     "format counts; azure takes none of its own)"),
                       "%s", r.err);
    cr_expect(!strncmp(r.err, y, strlen(y)) && !strncmp(r.err + strlen(y), ":8:", 3), "%s", r.err);
    clitest_rmdir(dir);
}

Test(cli_conventions, convert_writes_all_or_nothing)
{
    char dir[128], out[256];
    struct clirun r;
    clitest_tmpdir(dir, sizeof(dir), "conv");
    snprintf(out, sizeof(out), "%s/out.csv", dir);
    /* A bad row: exit 1, the existing OUT untouched, no temporary left. */
    clitest_write(out, "keep\n");
    cr_expect_eq(clitest_tidesim(&r,
                                 "traces convert tests/data/azure_backwards.csv --format "
                                 "azure -o %s",
                                 out),
                 1);
    char buf[64];
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_expect_str_eq(buf, "keep\n");
    unlink(out);
    cr_expect_eq(clitest_tidesim(&r,
                                 "traces convert tests/data/counts_bad.csv --format counts "
                                 "--end 1000 -o %s",
                                 out),
                 1);
    cr_expect(!clitest_exists(out), "a bad row left %s", out);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
    clitest_sh(&r, cmd);
    cr_expect_str_eq(r.out, "", "left behind: %s", r.out);

    /* Generated input without an end: refused unless told the size; the size is enforced. */
    cr_expect_eq(
        clitest_tidesim(&r, "traces convert tests/data/counts.csv --format counts -o %s", out), 2);
    cr_expect_not_null(strstr(r.err, "give --end SECONDS, or --max-records N"), "%s", r.err);
    cr_expect(!clitest_exists(out));
    cr_expect_eq(clitest_tidesim(&r,
                                 "traces convert tests/data/counts.csv --format counts "
                                 "--max-records 149 -o %s",
                                 out),
                 1);
    cr_expect(!clitest_exists(out), "--max-records exceeded but %s written", out);
    cr_expect_eq(clitest_tidesim(&r,
                                 "traces convert tests/data/counts.csv --format counts "
                                 "--max-records=150 -o %s",
                                 out),
                 0, "%s", r.err);
    char wrote[400];
    snprintf(wrote, sizeof(wrote),
             "tidesim traces: wrote 150 records to %s (0 malformed rows "
             "skipped)",
             out);
    cr_expect_str_eq(r.err, wrote);
    cr_expect_eq(clitest_tidesim(&r,
                                 "traces convert tests/data/counts.csv --format counts "
                                 "--loop -o %s",
                                 out),
                 2);
    clitest_rmdir(dir);
}

Test(cli_conventions, inspect_reads_counts_and_scenario_format_names)
{
    struct clirun r;
    char cmd[1024];
    /* counts: 120 + 0 + 30 requests, the sum of the file's count column. */
    snprintf(cmd, sizeof(cmd),
             "%s traces inspect tests/data/counts.csv --format counts --format json | "
             "/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); "
             "assert d[\"format\"] == \"counts\" and d[\"requests\"] == 150, d; "
             "assert sum(d[\"per_hour_of_day\"]) == 150; assert d[\"error\"] is None'",
             clitest_bin());
    cr_expect_eq(clitest_sh(&r, cmd), 0, "%s", r.err);
    /* The scenario names (pai, helios, csv for jobs) and the older spellings. */
    cr_expect_eq(clitest_tidesim(&r, "traces inspect tests/data/pai_task_table.csv --format pai"),
                 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "format: pai\n"));
    struct clirun old;
    cr_expect_eq(clitest_tidesim(&old, "traces inspect tests/data/pai_task_table.csv --format "
                                       "pai-task"),
                 0);
    cr_expect_str_eq(old.out, r.out);
    cr_expect_eq(clitest_tidesim(&r, "traces inspect tests/data/jobs_generic.csv --format csv"), 0,
                 "%s", r.err);
    cr_expect_not_null(strstr(r.out, "jobs: "), "csv with the job header is read as jobs: %s",
                       r.out);
    cr_expect_eq(clitest_tidesim(&r, "traces inspect tests/data/counts.csv --format bogus"), 2);
    cr_expect_eq(clitest_tidesim(&r, "traces convert tests/data/counts.csv --format json -o x"), 2);
}

Test(cli_conventions, completion_offers_the_options_of_each_help)
{
    struct clirun r;
    char cmd[2048];
    /* Every long option a command's --help lists (lines "  -x, --opt" or "      --opt") is in
     * the completion's list for that command, and the completion offers nothing else. */
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 - %s <<'EOF'\n"
             "import re, subprocess, sys\n"
             "comp = open('completion/tidesim.bash').read()\n"
             "bad = []\n"
             "for cmd in ['run', 'validate', 'report', 'compare', 'check', 'plot', 'traces',\n"
             "            'sweep', 'plan']:\n"
             "    h = subprocess.run([sys.argv[1], cmd, '--help'], capture_output=True, "
             "text=True).stdout\n"
             "    listed = set(re.findall(r'^\\s+(?:-\\w, )?(--[a-z][a-z-]*)', h, re.M))\n"
             "    listed |= set(re.findall(r'\\[(--[a-z][a-z-]*)', h))\n"
             "    block = re.search(r'\\n    ' + cmd + r'\\)\\n(.*?);;', comp, re.S).group(1)\n"
             "    offered = set(re.findall(r'--[a-z][a-z-]*', re.search(r'opts=\"([^\"]*)\"', "
             "block, re.S).group(1)))\n"
             "    if listed - offered or offered - listed - {'--help'}:\n"
             "        bad.append((cmd, sorted(listed - offered), sorted(offered - listed)))\n"
             "assert not bad, bad\n"
             "EOF",
             clitest_bin());
    cr_expect_eq(clitest_sh(&r, cmd), 0, "%s", r.err);
    /* And bash loads it and completes a command name. */
    cr_expect_eq(clitest_sh(&r, "bash -c 'source completion/tidesim.bash; COMP_WORDS=(tidesim "
                                "ch); COMP_CWORD=1; _tidesim; echo ${COMPREPLY[*]}'"),
                 0, "%s", r.err);
    cr_expect_str_eq(r.out, "check\n");
}

Test(cli_conventions, every_short_option_a_help_lists_is_accepted)
{
    /* Each "  -x, --long" of a command's --help: `tidesim CMD -x` must not be refused as an
     * unknown option (report listed -f but refused it: "unknown option '-f'"). The option is
     * given with a value where the long one takes one; the command may then fail for other
     * reasons (no file), which is fine: only the option's refusal is looked for. */
    struct clirun r;
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 - %s <<'EOF'\n"
             "import re, subprocess, sys\n"
             "bad = []\n"
             "for cmd in ['run', 'validate', 'report', 'compare', 'check', 'plot', 'traces',\n"
             "            'sweep', 'plan', 'mig']:\n"
             "    h = subprocess.run([sys.argv[1], cmd, '--help'], capture_output=True, "
             "text=True).stdout\n"
             "    for short, long_, arg in re.findall(r'^\\s+-(\\w), --([a-z-]+)( [A-Z]\\w*)?', h, "
             "re.M):\n"
             "        if short == 'h':\n"
             "            continue\n"
             "        argv = [sys.argv[1], cmd, '-' + short] + (['x'] if arg else [])\n"
             "        e = subprocess.run(argv, capture_output=True, text=True, "
             "stdin=subprocess.DEVNULL).stderr\n"
             "        if \"unknown option '-\" + short in e or 'invalid option' in e:\n"
             "            bad.append((cmd, short, long_, e.strip()[:80]))\n"
             "assert not bad, bad\n"
             "EOF",
             clitest_bin());
    cr_expect_eq(clitest_sh(&r, cmd), 0, "%s", r.err);
}
