#!/usr/bin/env bash
# Runs each fuzz target for a while and says what it found. Called by `make fuzz`.
# Usage: fuzz/run.sh BUILD SECONDS JOBS CRASHES TARGET...
#   BUILD    the fuzz build folder (BUILD/fuzzers/TARGET, BUILD/tidesim)
#   SECONDS  time per target (libFuzzer -max_total_time)
#   JOBS     targets run at the same time
#   CRASHES  where each crash, leak, timeout or out-of-memory input is copied,
#            as CRASHES/TARGET/<kind>-<sha1> (tests/data/fuzz by default: `make test`
#            replays it)
# A timeout (an input slower than 10 s) is reported and kept under BUILD/timeouts/TARGET,
# but fails the run only with FUZZ_STRICT=1: a slow input is a performance finding, and
# whether a 30 s smoke reaches one depends on the machine's speed, which would make CI
# fail on noise. Crashes, leaks and out-of-memory inputs always fail it.
# Extra libFuzzer flags: FUZZ_ARGS. The working corpus BUILD/corpus/TARGET
# grows from run to run (it is never committed); the seeds are rebuilt each run.
# Exit 0 when no target found anything, 1 otherwise.
set -eu
b=$1 secs=$2 jobs=$3 crashes=$4
shift 4
sh fuzz/seeds.sh "$b"

# Longest input per target: the seeds' sizes, rounded up. results: 256 KiB holds the
# largest seed, a results file as tidesim writes it (fuzz/seeds.sh, 224 KiB: chunked
# datasets with their index); a smaller cap would cut it, a larger one only lets
# mutations grow files whose extra bytes are data, which costs time and reaches no
# new structure.
max_len() {
    case $1 in
    scenario) echo 16384 ;;
    results | results_answer) echo 262144 ;;
    index_answer) echo 16384 ;;
    *) echo 8192 ;;
    esac
}

run_one() {
    t=$1
    corpus=$b/corpus/$t art=$b/artifacts/$t log=$b/logs/$t.log
    mkdir -p "$corpus" "$art" "$b/logs"
    dict=$b/$t.dict
    [ -s "$dict" ] || dict=
    # The fuzzer exits non-zero on a finding; the summary below reads the artifacts.
    TMPDIR=${FUZZ_TMP:-/dev/shm} ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
        LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$b/fuzzers/$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -max_len="$(max_len "$t")" -artifact_prefix="$art/" \
        ${dict:+-dict="$dict"} ${FUZZ_ARGS:-} "$corpus" "$b/seeds/$t" >"$log" 2>&1 || :
}

[ -d "${FUZZ_TMP:-/dev/shm}" ] || FUZZ_TMP=/tmp
running=0
for t in "$@"; do
    rm -rf "$b/artifacts/$t"
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || :
        running=$((running - 1))
    fi
done
wait

found=0
printf '%-18s %12s %10s %8s %8s  %s\n' target executions exec/s corpus rss_mb findings
for t in "$@"; do
    log=$b/logs/$t.log
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ -z "$execs" ]; then # -fork=N prints no final stats: its last status line
        execs=$(sed -n 's/^#\([0-9][0-9]*\):.*/\1/p' "$log" | tail -1)
        rate=$(sed -n 's/^#[0-9]*:.* exec\/s \([0-9]*\).*/\1/p' "$log" | tail -1)
    fi
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    units=$(find "$b/corpus/$t" -type f | wc -l)
    n=0 slow=0
    for f in "$b/artifacts/$t"/*; do
        [ -f "$f" ] || continue
        case $(basename "$f") in
        timeout-* | slow-unit-*)
            slow=$((slow + 1))
            mkdir -p "$b/timeouts/$t"
            cp "$f" "$b/timeouts/$t/"
            [ "${FUZZ_STRICT:-0}" = 1 ] && n=$((n + 1))
            ;;
        *)
            n=$((n + 1))
            mkdir -p "$crashes/$t"
            cp "$f" "$crashes/$t/"
            ;;
        esac
    done
    what=none
    [ "$n" -gt 0 ] && what="$n in $crashes/$t (log $log)"
    [ "$slow" -gt 0 ] && what="$what; $slow slow input(s) in $b/timeouts/$t"
    printf '%-18s %12s %10s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$units" "${rss:-?}" \
        "$what"
    if [ "$n" -gt 0 ] || [ -z "$execs" ]; then
        found=1
        [ -z "$execs" ] && echo "fuzz: $t did not finish; see $log" >&2
    fi
done
exit $found
