#!/bin/sh
# make compare: run every reference scenario (scenarios/reference/*.yaml), two
# at a time, and write the policy table to docs/results-reference.md.
# Numbers are whatever the simulator produces; nothing here is tuned.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
mkdir -p results/reference
files=$(ls scenarios/reference/*.yaml)
# Two runs at a time (the machine's cores); each run is one process.
for f in $files; do echo "$f"; done |
    xargs -P 2 -I{} sh -c 'p=$(basename "{}" .yaml); echo "compare: running $p" >&2;
        "$0/tidesim" run "{}" -o "results/reference/$p.h5" --quiet' "$b"

out=docs/results-reference.md
{
    echo "# Reference scenarios: policy comparison"
    echo
    echo "Produced by \`make compare\` ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)):"
    echo "every file in \`scenarios/reference/\` (128 A100-80GB cards, three days, two diurnal"
    echo "services, a standing training backlog; see \`base.yaml.in\`), one run each, seed 1."
    echo "The numbers are whatever the simulator produces; nothing is tuned to a target."
    echo
    echo "| policy | allocated | busy | useful | p99 chat (ms) | p99 search (ms) | within SLO | worst service within SLO | checkpoint overhead | preemptions | training GPU-h | energy (MWh) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for f in $files; do
        p=$(basename "$f" .yaml)
        "$b/tidesim" report "results/reference/$p.h5" --format json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
h = d["headline"]
def v(k):
    x = h.get(k, {}).get("mean")
    return float("nan") if x is None else x
sv = d.get("services", {})
def p99(n):
    x = sv.get(n, {}).get("p99_ms", {}).get("mean")
    return "-" if x is None else "%.0f" % x
print("| %s | %.1f %% | %.1f %% | %.1f %% | %s | %s | %.3f %% | %.3f %% | %.2f %% | %d | %.0f | %.2f |" % (
    d["policy"], 100 * v("util_allocated"), 100 * v("util_busy"), 100 * v("util_useful"),
    p99("chat"), p99("search"), 100 * v("slo_share"), 100 * v("slo_share_worst_service"),
    100 * v("checkpoint_overhead"), v("preemptions"), v("training_gpu_hours"), v("energy_kwh") / 1000))
'
    done
    echo
    echo "Columns: allocated / busy / useful = shares of the GPU-time offered (docs/results.md);"
    echo "within SLO = share of all requests at or under their service's latency target;"
    echo "checkpoint overhead = checkpoint save + restore + recomputed work over busy time."
} >"$out"
echo "compare: wrote $out" >&2
cat "$out"
