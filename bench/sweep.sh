#!/bin/sh
# Sweep and plan benchmarks (issue 15). Usage: bench/sweep.sh BUILD_DIR
#   - a 16-point sweep of the default scenario (bench/sweep16.yaml): wall and CPU time
#     with -j 1 and -j 2, and under mpirun (-n 2: one worker; -n 3 --oversubscribe: two
#     workers, rank 0 sleeps while it waits) when build/tidesim-mpi exists (make mpi);
#   - with BENCH_PLAN=1, tidesim plan on the reference scenario's shape for kueue
#     (bench/plan-ref-kueue.yaml: 128 cards, 3 days): runs and wall time to an answer
#     (tens of CPU-minutes; not run by default).
# Wall times on a shared machine are noisy: the CPU time beside them is steadier, and the
# load average is printed before each figure.
set -eu
b=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/tidesim-bench-sweep-XXXXXX)
trap 'rm -rf "$work"' EXIT
bin=$(cd "$b" && pwd)/tidesim
mpi=$(cd "$b" && pwd)/tidesim-mpi
cp "$here/sweep16.yaml" "$here/plan-ref-kueue.yaml" "$work/"
mkdir -p "$work/scenarios" "$work/traces"
cp "$here/../scenarios/default.yaml" "$work/scenarios/"
cp -r "$here/../scenarios/reference" "$work/scenarios/"
ln -s "$(cd "$here/../traces/data" && pwd)" "$work/traces/data"
sed -i 's|\.\./scenarios/|scenarios/|' "$work/sweep16.yaml" "$work/plan-ref-kueue.yaml"
cd "$work"
timed() { # label command...
    label=$1
    shift
    echo "   load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "$label: %e s wall, %U s user + %S s system CPU" "$@" >/dev/null 2>time.err ||
        { cat time.err >&2; return 1; }
    tail -1 time.err
}
echo "== 16-point sweep of the default scenario (bench/sweep16.yaml)"
timed "sweep -j 1" "$bin" sweep sweep16.yaml -o j1 -j 1 -q
timed "sweep -j 2" "$bin" sweep sweep16.yaml -o j2 -j 2 -q
if [ -x "$mpi" ] && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    timed "mpirun -n 2 (1 worker)" mpirun -n 2 --oversubscribe "$mpi" sweep sweep16.yaml -o m2 -q
    timed "mpirun -n 3 --oversubscribe (2 workers)" mpirun -n 3 --oversubscribe "$mpi" sweep \
        sweep16.yaml -o m3 -q
    for d in j2 m2 m3; do
        for p in j1/point-*.h5; do
            h5diff -q --exclude-path /meta "$p" "$d/${p#j1/}" >/dev/null ||
                echo "   $d/${p#j1/} differs from $p"
        done
    done
    echo "   datasets of -j 2 and both mpirun runs compared with -j 1 (h5diff): differences above, if any"
else
    echo "   (tidesim-mpi not built or mpirun missing: make mpi)"
fi
if [ "${BENCH_PLAN:-0}" = 1 ]; then
    echo "== tidesim plan, reference shape, kueue (bench/plan-ref-kueue.yaml)"
    timed "plan -j 2" "$bin" plan plan-ref-kueue.yaml -o plan -j 2 -q
    "$bin" plan --report plan
fi
