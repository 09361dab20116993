#!/bin/sh
# Builds the seed corpora of the fuzz targets from files the repository already
# has (nothing is committed here but this script): scenarios/, tests/data/, the
# heads of the sample traces in traces/data/, results files made by a short run,
# and every reproducer under tests/data/fuzz/<target>/.
# Usage: fuzz/seeds.sh BUILD   (BUILD holds the fuzz build's tidesim; seeds go to BUILD/seeds/)
set -eu
b=$1
out=$b/seeds
rm -rf "$out"
mkdir -p "$out"

# Trace targets read their first byte as options (fuzz/targets.c): each file is
# seeded twice, with the defaults (0x00) and with skip_bad (0x01).
trace_seed() { # target file...
    t=$1
    shift
    mkdir -p "$out/$t"
    for f in "$@"; do
        [ -f "$f" ] || continue
        n=$(basename "$f")
        { printf '\000'; cat "$f"; } >"$out/$t/$n.0"
        { printf '\001'; cat "$f"; } >"$out/$t/$n.1"
    done
}
# The first lines of a large sample trace.
head_seed() { # target file lines
    mkdir -p "$out/$1"
    [ -f "$2" ] || return 0
    { printf '\000'; head -n "$3" "$2"; } >"$out/$1/$(basename "$2").head"
}

mkdir -p "$out/scenario"
for f in scenarios/*.yaml scenarios/reference/*.yaml scenarios/reference/*.yaml.in \
    tests/data/scenarios/*.yaml tests/data/conf/*.yaml; do
    [ -f "$f" ] && cp "$f" "$out/scenario/$(echo "$f" | tr / _)"
done

trace_seed arrivals_azure tests/data/azure_*.csv tests/data/empty.csv
head_seed arrivals_azure traces/data/azure-llm-2023/AzureLLMInferenceTrace_code.csv 40
head_seed arrivals_azure traces/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv 40
trace_seed arrivals_servegen tests/data/servegen_*.csv
head_seed arrivals_servegen traces/data/servegen/language_m-small/chunk-0-trace.csv 40
head_seed arrivals_servegen traces/data/servegen/language_m-small/chunk-11-trace.csv 40
printf 'time_s,in_tokens,out_tokens\n0.5,10,20\n1.25,3,4\n1.25,0,0\n7200,1,1\n' >"$b/generic.csv"
trace_seed arrivals_csv "$b/generic.csv" tests/data/generic_quoted.csv tests/data/unterminated.csv
trace_seed arrivals_counts tests/data/counts*.csv
trace_seed jobs_openb tests/data/openb_*.csv
head_seed jobs_openb traces/data/alibaba-gpu-v2023-openb/openb_pod_list_default.csv 40
trace_seed jobs_pai tests/data/pai_*.csv
trace_seed jobs_helios tests/data/helios_*.csv
trace_seed jobs_csv tests/data/jobs_*.csv tests/data/kai_*.csv
mkdir -p "$out/snapshot" # no option byte: the whole input is the file
cp scenarios/warm-start/snapshot.csv "$out/snapshot/warm-start.csv"
printf 'id,queue,priority,gpus,pool,node,started_s,remaining_s,ckpt_age_s\n1,q,2,4,a,1,60,3600,30\n2,,0,2,b,,0,10,\n' \
    >"$out/snapshot/pools.csv"

# Results files: a short single run as written, it and a replicated one with
# contiguous storage (smaller, so mutations land on structure more often), and
# a file with nothing but /meta and /summary. Small on purpose: an input costs
# the fuzzer about the number of objects it holds (each is opened, checked and
# read, several times by report, check and compare), so the run is 10 minutes
# on 2 GPUs without the per-GPU matrices: 77 datasets, 224 KiB as written
# (chunked, deflate), 73 KiB contiguous, 20 KiB summary only.
mkdir -p "$out/results"
cat >"$b/seed-run.yaml" <<'EOF'
name: seed
seed: 1
duration: 10m
sample_interval: 5m
cluster: { nodes: 1, gpus_per_node: 2 }
services:
  - name: chat
    latency: { a_ms: 1.16, b_ms: 0.28 }
    batching: { max_batch: 4, max_wait: 5ms }
    replicas: 1
    arrivals: { synthetic: { peak_rps: 10, trough_ratio: 0.2, peak_hour: 1 } }
training:
  backlog: 1
  jobs:
    synthetic: { per_hour: 6, duration: { lognormal: { median: 2m, sigma: 0.5 } }, gpus: { 1: 1.0 } }
policy: { name: dedicated, inference_gpus: 1 }
output: { per_gpu_timeseries: false }
EOF
# A run that fails is reported, not fatal: the other targets still get fuzzed.
rm -f "$b"/seed-*.h5
for f in single reps; do
    if [ $f = reps ]; then set -- --replications 2; else set --; fi
    if ASAN_OPTIONS=detect_leaks=0 "$b/tidesim" run "$b/seed-run.yaml" -o "$b/seed-$f.h5" \
        --quiet "$@" >"$b/seed-$f.log" 2>&1; then
        h5repack -l CONTI "$b/seed-$f.h5" "$out/results/$f-contiguous.h5"
    else
        echo "fuzz: warning: no $f results seed, the run failed (see $b/seed-$f.log)" >&2
    fi
done
if [ -f "$b/seed-single.h5" ]; then
    cp "$b/seed-single.h5" "$out/results/single.h5"
    # Debian's python3 has h5py (scripts/deps.sh); another python3 first on PATH may not.
    py=/usr/bin/python3
    [ -x $py ] || py=python3
    $py - "$b/seed-single.h5" "$out/results/summary-only.h5" <<'EOF'
import sys
import h5py
with h5py.File(sys.argv[1], "r") as src, h5py.File(sys.argv[2], "w") as dst:
    for g in ("meta", "summary"):
        d = dst.create_group(g)
        for k, v in src[g].attrs.items():
            if k != "scenario":
                d.attrs[k] = v
EOF
fi

# The answers results_open's child sends for those files (what the command's process decodes,
# analysis/results.c): the seeds of results_answer, saved by the results harness as it
# decodes them (each file given alone is read once; a file libhdf5 crashes on has none).
mkdir -p "$out/results_answer"
if [ -x "$b/fuzzers/results" ] && ls "$out"/results/*.h5 >/dev/null 2>&1; then
    TIDESIM_FUZZ_SAVE_ANSWERS=$out/results_answer ASAN_OPTIONS=detect_leaks=0 \
        "$b/fuzzers/results" "$out"/results/*.h5 >"$b/seed-answers.log" 2>&1 ||
        echo "fuzz: warning: the results harness failed saving answers (see $b/seed-answers.log)" >&2
fi

# The answers the child that reads a sweep's or a plan's index sends (analysis/sweepidx.c):
# the seeds of index_answer, which reads each index given alone for its answer and saves it.
# A sweep and a plan of the seed scenario (2 points, 2 probes of 2 seeds; a few seconds).
mkdir -p "$out/index_answer"
if [ -x "$b/fuzzers/index_answer" ]; then
    rm -rf "$b/seed-sweep" "$b/seed-plan"
    printf 'base: seed-run.yaml\nreplications: 2\naxes:\n  cluster.gpus_per_node: [2, 3]\n' \
        >"$b/seed-sweep.yaml"
    printf 'base: seed-run.yaml\nsize: {key: cluster.gpus_per_node, from: 2, to: 3}\n%s\n%s\n' \
        'gates: {min-slo: 50%}' 'replications: 2' >"$b/seed-plan.yaml"
    for k in sweep plan; do
        if ASAN_OPTIONS=detect_leaks=0 "$b/tidesim" $k "$b/seed-$k.yaml" -o "$b/seed-$k" -j 1 \
            >"$b/seed-$k.log" 2>&1 && [ -f "$b/seed-$k/index.h5" ]; then
            TIDESIM_FUZZ_SAVE_ANSWERS=$out/index_answer ASAN_OPTIONS=detect_leaks=0 \
                "$b/fuzzers/index_answer" "$b/seed-$k/index.h5" >>"$b/seed-answers.log" 2>&1 || :
        else
            echo "fuzz: warning: no $k index seed, the $k failed (see $b/seed-$k.log)" >&2
        fi
    done
fi

# Reproducers found so far are seeds too.
for d in tests/data/fuzz/*/; do
    [ -d "$d" ] || continue
    t=$(basename "$d")
    mkdir -p "$out/$t"
    for f in "$d"*; do
        [ -f "$f" ] && cp "$f" "$out/$t/repro-$(basename "$f")"
    done
done

# Dictionaries: scenario keys and CSV column names seen in the seeds, plus YAML syntax.
{
    cat fuzz/yaml.dict
    cat "$out"/scenario/* | grep -o '[A-Za-z_][A-Za-z0-9_]*:' | sort -u | sed 's/.*/"&"/'
} >"$b/scenario.dict"
for t in arrivals_azure arrivals_servegen arrivals_csv arrivals_counts jobs_openb jobs_pai \
    jobs_helios jobs_csv snapshot; do
    cat "$out/$t"/* 2>/dev/null | head -c 200000 | tr ',\r\n' '\n\n\n' | tr -d '"\\\000\001' |
        grep -aE '^[A-Za-z_][A-Za-z0-9_. -]{0,30}$' | sort -u | sed 's/.*/"&"/' >"$b/$t.dict" || :
done
