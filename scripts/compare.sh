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
# COMPARE_TABLE_ONLY=1 rewrites the table from existing results.
[ -n "${COMPARE_TABLE_ONLY:-}" ] || for f in $files; do echo "$f"; done |
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
    echo "Per simulated day: share of requests over their SLO (both services) and busy utilization."
    echo "Day 0 is the first day, before \`adaptive\` has any history to forecast from."
    echo
    echo "| policy | over SLO day 0 | day 1 | day 2 | busy day 0 | day 1 | day 2 |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    for f in $files; do
        p=$(basename "$f" .yaml)
        /usr/bin/python3 - "results/reference/$p.h5" "$p" <<'PY'
import sys
import h5py
import numpy as np
f = h5py.File(sys.argv[1], "r")
step = int(round(86400 / float(f["/meta"].attrs["sample_interval_s"])))
miss = [0.0, 0.0, 0.0]
served = [0.0, 0.0, 0.0]
for name in f["/services"]:
    t = f["/services/%s/timeseries" % name]
    n = t["served"][:]
    share = np.nan_to_num(t["slo_share"][:], nan=1.0)
    for d in range(3):
        sl = slice(d * step, (d + 1) * step)
        miss[d] += float((n[sl] * (1 - share[sl])).sum())
        served[d] += float(n[sl].sum())
busy = f["/timeseries/util_busy"][:]
cells = ["%.4f %%" % (100 * miss[d] / served[d]) if served[d] else "-" for d in range(3)]
cells += ["%.1f %%" % (100 * busy[d * step:(d + 1) * step].mean()) for d in range(3)]
print("| %s | %s |" % (sys.argv[2], " | ".join(cells)))
PY
    done
    echo
    echo "Columns: allocated / busy / useful = shares of the GPU-time offered (docs/results.md);"
    echo "within SLO = share of all requests at or under their service's latency target;"
    echo "checkpoint overhead = checkpoint save + restore + recomputed work over busy time."
    echo
    echo "Read these rows with care before acting on them:"
    echo
    echo "- \`kai\` and \`mps\` collapse because of their reference configuration, not because of"
    echo "  the policies: kai's inference queue has a quota (48) below its peak, and KAI keeps"
    echo "  non-preemptible inference within quota; the mps reference gives training 100 % of"
    echo "  SMs and inference 50 %, the reverse of a production set-up, and nothing evicts"
    echo "  training when the autoscaler cannot place a replica. Fixing both is open work."
    echo "- \`dedicated\` queues strictly FIFO (a blocked head job leaves cards idle), and no"
    echo "  policy compacts inference onto whole nodes, so multi-node gangs fragment over time."
    echo "- One run each, no warm-up excluded (\`output.warmup\` exists; the elastic policies'"
    echo "  day-0 misses are their cold start). Compare policies with replications and"
    echo "  \`tidesim compare\`, which pairs runs by seed."
    echo "- \`tidal\`'s day window ends at 23:00: the ServeGen hour 22:00-23:00 still averages"
    echo "  87 % of the peak, more than its night pool serves."
} >"$out"
echo "compare: wrote $out" >&2
cat "$out"
