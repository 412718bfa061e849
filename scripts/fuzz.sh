#!/usr/bin/env bash
# Fuzzes veda's parsers with libFuzzer (clang from Debian): the environment
# and Config parsing, the machine-profile JSON loader and its plausibility
# bounds, and the VEDA_REPLAY decision-record parser (tests/fuzz/). Every
# target is one tests/fuzz/<target>.cpp with a tests/fuzz/corpus/<target>/.
#   scripts/fuzz.sh [seconds per target, default 60]
# Builds build-fuzz/ with clang, ASan and UBSan, then runs each target from
# its saved inputs (tests/fuzz/corpus/<target>/) for the given time. A crash
# stops the run with the input saved as build-fuzz/crash-*: fix the bug, then
# add that file to tests/fuzz/corpus/<target>/, where every build's
# fuzz_regress_<target> test runs it from then on.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
seconds=${1:-60}
VEDA_PACKAGES+=(clang libclang-rt-14-dev)
veda_install_deps
dir="$VEDA_ROOT/build-fuzz"
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$VEDA_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVEDA_CUDA=OFF \
    -DVEDA_FUZZ=ON -DVEDA_MPI=OFF -DVEDA_SANITIZE="address;undefined" -DVEDA_BUILD_BENCH=OFF -DVEDA_BUILD_EXAMPLES=OFF \
    -DVEDA_BUILD_TOOLS=OFF
fi
# The targets are the corpus folders, so a new target is picked up here as
# soon as it has one (tests/fuzz/CMakeLists.txt lists the same names).
targets=()
for d in "$VEDA_ROOT"/tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
veda_build "$dir" --target "${targets[@]/#/fuzz_}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for target in "${targets[@]}"; do
  work="$dir/corpus-$target"
  mkdir -p "$work"
  echo "== fuzz_$target for ${seconds}s"
  "$dir/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$dir/crash-$target-" -print_final_stats=1 "$work" "$VEDA_ROOT/tests/fuzz/corpus/$target"
done
