#!/bin/sh
# Installs the Debian packages tidesim needs, and only those that are missing.
# Called by `make deps` (and so by `make demo` / `make test`).
#   scripts/deps.sh        what building, testing and the demo need
#   scripts/deps.sh fuzz   that, plus clang and its runtimes (libFuzzer, ASan,
#                          UBSan: libclang-rt-14-dev on Debian 12) for `make fuzz`
#   scripts/deps.sh mpi    OpenMPI only (libopenmpi-dev openmpi-bin): `make mpi` builds
#                          tidesim-mpi with it; the plain build and `make test` never need
#                          it (make test runs the MPI test when it is installed; CI installs it)
#   scripts/deps.sh browser  Chromium only: the one test that opens the HTML
#                          report in a headless browser (make test runs this
#                          step and goes on without it if it fails: that test
#                          then says it was skipped)
# `make test SANITIZE=...` needs nothing more: gcc's ASan and UBSan runtimes
# (libasan8, libubsan1) come with build-essential.
set -eu

PKGS="build-essential pkg-config libgsl-dev libhdf5-dev libcsv-dev libyaml-dev libcriterion-dev gnuplot-nox hdf5-tools python3 python3-h5py clang-format"
case "${1:-}" in
"") ;;
fuzz) PKGS="$PKGS clang libclang-rt-14-dev" ;;
browser) PKGS="chromium" ;;
mpi) PKGS="libopenmpi-dev openmpi-bin" ;;
*)
    echo "usage: scripts/deps.sh [fuzz|browser|mpi]" >&2
    exit 2
    ;;
esac

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "tidesim: missing Debian packages:$missing" >&2
    echo "tidesim: run 'make deps' as root, or: sudo apt-get install$missing" >&2
    exit 1
fi

echo "tidesim: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
