#!/usr/bin/env bash
# Carry veda's dependencies to a host without a package registry (a GPU host).
#   scripts/bundle-deps.sh [DIR]     here, where Debian's archive is reachable (default .deps, about 15 MiB)
#   VEDA_DEPS=DIR scripts/gpu-check.sh   there: lib.sh unpacks DIR into a private prefix
# Only the build's libraries travel: compilers, CMake and ninja are the host's
# own; StarPU and gnuplot are left out (the benchmarks build without them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=${1:-$VEDA_ROOT/.deps}
mkdir -p "$dir"
cd "$dir"
rm -f ./*.deb
apt-get download "${VEDA_BUNDLE_PACKAGES[@]}" 2>&1 | grep -v 'Download is performed unsandboxed' || true
for f in ./*.deb; do dpkg-deb -f "$f" Package Version | sed 's/^[A-Za-z]*: //' | paste -sd' '; done >MANIFEST
du -sh . | sed "s|\$| in $dir ($(ls ./*.deb | wc -l) packages); .gitignore keeps /.deps/ out of git|"
