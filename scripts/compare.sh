#!/bin/sh
# make compare: run every reference scenario of both brackets
# (scenarios/reference/*.yaml, the ServeGen-depth bracket, and
# scenarios/reference/deep/*.yaml, the deep-trough bracket), with
# COMPARE_REPS replications each (seeds 1..R; default 2), two processes at a
# time, and write docs/results-reference.md: per bracket a policy table of
# warm-up-excluded means with 95 % intervals, a headroom column, and per-day
# trends. Numbers are whatever the simulator produces; nothing here is tuned.
# COMPARE_TABLE_ONLY=1 rewrites the tables from existing results.
set -eu
b=${1:-build}
reps=${COMPARE_REPS:-2}
cd "$(dirname "$0")/.."
mkdir -p results/reference/deep
start=$(date +%s)
list() { ls scenarios/reference/*.yaml scenarios/reference/deep/*.yaml; }
if [ -z "${COMPARE_TABLE_ONLY:-}" ]; then
    # One process per scenario and replication set: two at a time (the machine's cores);
    # with reps > 1 each run forks its replications itself, so run one file at a time.
    par=2
    [ "$reps" -gt 1 ] && par=1
    list | xargs -P "$par" -I{} sh -c '
        f="{}"; p=$(basename "$f" .yaml); d=$(dirname "$f" | sed "s|scenarios/reference||")
        echo "compare: running ${d#/}${d:+/}$p" >&2
        if [ "$1" -gt 1 ]; then r="--replications $1"; else r=""; fi
        "$0/tidesim" run "$f" -o "results/reference$d/$p.h5" --quiet $r' "$b" "$reps"
fi
took=$(( $(date +%s) - start ))
# COMPARE_TABLE_ONLY=1 times nothing: COMPARE_TOOK carries the runs' wall time, if known.
took=${COMPARE_TOOK:-$took}

table() { # folder-of-results bracket-title
    dir=$1
    echo "| policy | allocated | busy | useful | within SLO | worst service within SLO | p99 worst (ms) | headroom | checkpoint overhead | preemptions | training GPU-h | share fragmented | energy (MWh) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for h in "$dir"/*.h5; do
        "$b/tidesim" report "$h" --format json | /usr/bin/python3 -c '
import json, math, sys
d = json.load(sys.stdin)
h = d["headline"]
def cell(k, scale=1.0, fmt="%.1f", unit=""):
    m = h.get(k)
    if not m or m.get("mean") is None or (isinstance(m["mean"], float) and math.isnan(m["mean"])):
        return "-"
    s = fmt % (m["mean"] * scale)
    ci = m.get("ci95")
    if m.get("n", 1) >= 2 and ci is not None and not math.isnan(ci):
        s += " ± " + fmt % (ci * scale)
    return s + unit
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
    d["policy"], cell("util_allocated", 100, unit=" %"), cell("util_busy", 100, unit=" %"),
    cell("util_useful", 100, unit=" %"), cell("slo_share", 100, "%.3f", " %"),
    cell("slo_share_worst_service", 100, "%.3f", " %"), cell("p99_ms_worst_service", 1, "%.0f"),
    cell("headroom_min_worst_service", 1, "%.2f"), cell("checkpoint_overhead", 100, "%.2f", " %"),
    cell("preemptions", 1, "%.0f"), cell("training_gpu_hours", 1, "%.0f"),
    cell("share_fragmented", 100, "%.1f", " %"), cell("energy_kwh", 0.001, "%.2f")))
'
    done
    echo
    echo "Per simulated day (day 0 is the warm-up the headline leaves out): busy utilization and"
    echo "arrivals within SLO, means over the replications (\`tidesim report\` prints them with"
    echo "intervals)."
    echo
    /usr/bin/python3 - "$dir"/*.h5 <<'PY'
import sys
import h5py
import numpy as np
rows = []
days = 0
for path in sys.argv[1:]:
    f = h5py.File(path, "r")
    roots = [f[k] for k in sorted(f.keys()) if k.startswith("rep")] or [f]
    pol = f["/meta"].attrs.get("policy", b"?")
    pol = pol.decode() if isinstance(pol, bytes) else str(pol)
    busy, slo = [], []
    for r in roots:
        t = r["timeseries/time_s"][:]
        d = np.ceil(t / 86400 - 1e-9).astype(int) - 1
        d[d < 0] = 0
        n = d.max() + 1
        u = r["timeseries/util_busy"][:]
        busy.append([u[d == k].mean() for k in range(n)])
        w = np.zeros(n); dec = np.zeros(n)
        for name in r["services"]:
            s = r["services/%s/timeseries" % name]
            dd = np.ceil(s["time_s"][:] / 86400 - 1e-9).astype(int) - 1
            dd[dd < 0] = 0
            for k in range(n):
                m = dd == k
                w[k] += s["within_slo"][m].sum()
                dec[k] += s["served"][m].sum() + s["dropped"][m].sum() + s["failed"][m].sum()
        slo.append([w[k] / dec[k] if dec[k] else float("nan") for k in range(n)])
    days = max(days, len(busy[0]))
    rows.append((pol, np.nanmean(np.array(busy), axis=0), np.nanmean(np.array(slo), axis=0)))
hdr = ["policy"] + ["busy d%d" % k for k in range(days)] + ["SLO d%d" % k for k in range(days)]
print("| " + " | ".join(hdr) + " |")
print("| --- " + "| ---: " * (2 * days) + "|")
for pol, b, s in rows:
    cells = ["%.1f %%" % (100 * x) for x in b] + ["%.2f %%" % (100 * x) for x in s]
    print("| %s | %s |" % (pol, " | ".join(cells)))
PY
}

paired() { # folder-of-results: paired differences to kueue (common random numbers)
    dir=$1
    [ -f "$dir/kueue.h5" ] || return 0
    set -- "$dir/kueue.h5"
    for h in "$dir"/*.h5; do [ "$h" = "$dir/kueue.h5" ] || set -- "$@" "$h"; done
    echo "Paired differences to \`kueue\` (\`tidesim compare\`: every policy runs the same seeds, so"
    echo "the same arrivals and job stream; X - kueue, 95 % interval of the paired difference, and"
    echo "whether it is significant). With two replications the absolute intervals above are wide"
    echo "(Student-t with one degree of freedom); these are the figures to decide on."
    echo
    "$b/tidesim" compare "$@" --format json | /usr/bin/python3 -c '
import json, math, sys
d = json.load(sys.stdin)
want = [("util_busy", "busy", 100, "%+.1f", " pp"), ("slo_share", "within SLO", 100, "%+.3f", " pp"),
        ("slo_share_worst_service", "worst service within SLO", 100, "%+.3f", " pp"),
        ("p99_ms_worst_service", "p99 worst", 1, "%+.0f", " ms"),
        ("training_gpu_hours", "training GPU-h", 1, "%+.0f", ""),
        ("checkpoint_overhead", "checkpoint overhead", 100, "%+.2f", " pp"),
        ("share_fragmented", "share fragmented", 100, "%+.1f", " pp")]
mets = {m["key"]: m for m in d["metrics"] if m["service"] is None}
print("| policy | " + " | ".join(w[1] for w in want) + " |")
print("| --- " + "| ---: " * len(want) + "|")
for i, f in enumerate(d["files"][1:]):
    cells = []
    for key, _, scale, fmt, unit in want:
        m = mets.get(key)
        if not m:
            cells.append("-")
            continue
        x = m["diffs"][i]
        if x.get("diff") is None or (isinstance(x["diff"], float) and math.isnan(x["diff"])):
            cells.append("-")
            continue
        c = fmt % (x["diff"] * scale)
        if x.get("ci95") is not None and not math.isnan(x["ci95"]):
            c += " ± " + (fmt.replace("+", "") % (x["ci95"] * scale))
        c += unit
        if x.get("significant"):
            c = "**" + c + "** (" + x["verdict"] + ")"
        cells.append(c)
    print("| %s | %s |" % (f["policy"], " | ".join(cells)))
'
    echo
    echo "In bold: the interval excludes 0 (better or worse by the metric's direction)."
}

out=docs/results-reference.md
{
    echo "# Reference scenarios: policy comparison"
    echo
    echo "Produced by \`make compare\` ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)) in"
    echo "$took s on this machine: every file of \`scenarios/reference/\` (two brackets, below), $reps"
    echo "replication(s) each (seeds 1..$reps; with 2 or more, figures are means ± the half-width of"
    echo "their 95 % Student-t interval). Each run is 7 simulated days on 128 A100-80GB cards (16"
    echo "nodes x 8), the first day a warm-up the headline figures leave out (\`output.warmup: 1d\`:"
    echo "\`adaptive\` forecasts from a day of history; every policy is judged on the same six days)."
    echo "The numbers are whatever the simulator produces; nothing is tuned to a target."
    echo "\`docs/results-reading.md\` reads them hour by hour (written by hand for the run it names)."
    echo
    echo "Columns: allocated / busy / useful = shares of the GPU-time offered (docs/results.md);"
    echo "within SLO = share of all arrivals served within their service's latency target (drops and"
    echo "requests still waiting at the end count as misses); headroom = the tightest interval's"
    echo "serving capacity at the SLO over its load, worst service (below 1: the replicas could not"
    echo "keep up; 1-1.2: a knife edge); checkpoint overhead = checkpoint save + restore +"
    echo "recomputed work over busy time; share fragmented = free GPU-time no queued gang could use."
    echo
    echo "## ServeGen-depth bracket (\`scenarios/reference/*.yaml\`, from \`base.yaml.in\`)"
    echo
    echo "\`chat\` replays the ServeGen m-small sample (its clients' windows, bursty as recorded; night"
    echo "at ~45 % of the day), \`search\` is a cosine with a 15 % night; LLM-class batches (40 ms +"
    echo "10 ms a request), p99 SLO 500 ms; a standing training backlog."
    echo
    table results/reference
    echo
    paired results/reference
    echo
    echo "## Deep-trough bracket (\`scenarios/reference/deep/*.yaml\`, from \`deep.yaml.in\`)"
    echo
    echo "Night at 10-20 % of the day, p99 SLO 100 ms (60 ms full batches), ServeGen's median"
    echo "window burstiness (CV 1.21), a 70 % weekend, training calibrated on Helios (minute-scale"
    echo "median, heavy tail) with 16- and 32-GPU gangs."
    echo
    table results/reference/deep
    echo
    paired results/reference/deep
    echo
    echo "Read the rows with the configuration each file comments: \`kai\` in the ServeGen bracket"
    echo "runs half-card replicas on time-sliced cards (whole cards in the deep bracket, whose"
    echo "100 ms SLO a shared card's slices cannot meet); \`timeslice\` and \`mps\` use inference"
    echo "priority (a what-if for timeslice: no stock Kubernetes tool sets per-pod slices, see"
    echo "docs/policies.md); \`dedicated\` queues BestEffortFIFO."
} >"$out"
echo "compare: wrote $out in $took s" >&2
cat "$out"
