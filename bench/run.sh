#!/bin/sh
# Runs every benchmark and prints one line per figure. Usage: bench/run.sh BUILD_DIR
# Benchmarks are never part of `make test`: numbers here are reported, not asserted.
set -eu
b=${1:-build}
echo "== event queue (hold model)"
"$b/bench/bench_evq"
echo "== M/M/8 through the whole simulator"
"$b/bench/bench_sim" mm8 1e7 | grep RSS
"$b/bench/bench_sim" mm8 1e8
echo "== LLM serving (64 A100s, Llama-3.1-8B, Azure-conv lengths, one day near saturation)"
"$b/bench/bench_sim" llm 1 460
echo "== large scenario (64 nodes x 8 GPUs, one week)"
"$b/bench/bench_sim" large 7
if [ -x "$b/bench/bench_reader" ]; then
    echo "== trace reader"
    "$b/bench/bench_reader"
fi
echo "== sweeps and plans (bench/sweep.sh; BENCH_PLAN=1 adds the reference plan)"
sh "$(dirname "$0")/sweep.sh" "$b"
