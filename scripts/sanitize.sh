#!/usr/bin/env bash
# The whole test suite under sanitizers, CPU configuration (VEDA_CUDA=OFF):
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/sanitize.sh tsan   ThreadSanitizer (build-tsan/)
# Extra arguments after -- go to ctest. CI runs both (.ci/run). The package
# test (an installed veda consumed by an unsanitized project) is left out:
# it checks packaging, which the plain configurations already cover. So is
# veda::mpi (VEDA_MPI=OFF): Open MPI's own allocations and threads would need
# broad suppressions; its tests run in both plain configurations.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kind=${1:-}
shift || true
[ "${1:-}" = "--" ] && shift
case "$kind" in
  asan) sanitize="address;undefined" ;;
  tsan) sanitize="thread" ;;
  *) echo "usage: $0 asan|tsan [-- ctest args]" >&2; exit 2 ;;
esac
dir="$VEDA_ROOT/build-$kind"
veda_install_deps
veda_configure "$dir" OFF -DVEDA_SANITIZE="$sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVEDA_BUILD_BENCH=OFF -DVEDA_BUILD_EXAMPLES=OFF -DVEDA_BUILD_TOOLS=OFF -DVEDA_MPI=OFF
veda_build "$dir"
supp="$VEDA_ROOT/scripts/sanitizers"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
if [ "$kind" = tsan ]; then
  # libtbb's own memory through malloc/free, where TSan sees it recycled
  # between threads (scripts/sanitizers/tbbmalloc_shim.c).
  mkdir -p "$dir/tbbmalloc-shim"
  cc -shared -fPIC -O1 -Wl,-soname,libtbbmalloc.so.2 -o "$dir/tbbmalloc-shim/libtbbmalloc.so.2" \
    "$supp/tbbmalloc_shim.c"
  export LD_PRELOAD="$dir/tbbmalloc-shim/libtbbmalloc.so.2"
fi
ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" -E '^package_' --timeout 1800 "$@"
