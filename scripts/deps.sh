#!/bin/sh
# Installs the Debian packages tidesim needs, and only those that are missing.
# Called by `make deps` (and so by `make demo` / `make test`).
set -eu

PKGS="build-essential pkg-config libgsl-dev libhdf5-dev libcsv-dev libyaml-dev libcriterion-dev gnuplot-nox hdf5-tools python3 python3-h5py clang-format"

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
