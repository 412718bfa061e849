#!/usr/bin/env bash
# Quick start, step 2: installs what is missing (as root), builds everything and
# runs the whole test suite.
#   scripts/test.sh              CUDA backend when nvcc exists (build/)
#   scripts/test.sh --cuda=off   CPU-only configuration (build-nocuda/)
# Extra arguments after -- go to ctest, e.g. scripts/test.sh -- -L gpu
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cuda=${VEDA_CUDA:-AUTO}
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda=*) cuda=$(echo "${1#--cuda=}" | tr '[:lower:]' '[:upper:]') ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "usage: $0 [--cuda=auto|on|off] [-- ctest args]" >&2; exit 2 ;;
  esac
  shift
done
dir="$VEDA_ROOT/build"
[ "$cuda" = OFF ] && dir="$VEDA_ROOT/build-nocuda"
veda_install_deps
veda_configure "$dir" "$cuda"
veda_build "$dir"
ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" "${ctest_args[@]}"
