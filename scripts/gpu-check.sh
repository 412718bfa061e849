#!/usr/bin/env bash
# One command for a GPU machine: configure for its GPU's architecture, build,
# run the whole test suite with VEDA_REQUIRE_GPU=1 (a GPU test that would skip
# fails instead), run the GPU benchmarks, and write everything to one report.
#   scripts/gpu-check.sh [--quick] [--report FILE]   (default: gpu-check-report.md)
# Then append the report, as it is, to docs/gpu-report.md.
# Needs an NVIDIA driver and nvcc (CUDACXX or /usr/local/cuda/bin/nvcc).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
quick=() report="$VEDA_ROOT/gpu-check-report.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --report) report=$2; shift ;;
    *) echo "usage: $0 [--quick] [--report file]" >&2; exit 2 ;;
  esac
  shift
done
fail=0
section() { printf '\n## %s\n\n```\n' "$1" >>"$report"; }
endsection() { printf '```\n' >>"$report"; }
# run <title> <command...>: output to the terminal and the report.
run() {
  local title=$1
  shift
  section "$title"
  echo "\$ $*" >>"$report"
  local t0=$(date +%s)
  "$@" 2>&1 | tee -a "$report"
  local rc=${PIPESTATUS[0]}
  echo "(exit $rc, $(( $(date +%s) - t0 )) s)" >>"$report"
  endsection
  [ "$rc" -eq 0 ] || fail=1
  return "$rc"
}

veda_find_nvcc
nvcc=${CUDACXX:-$(command -v nvcc || true)}
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
{
  echo "# gpu-check: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'none: nvidia-smi failed')"
  echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) threads"
  echo "- nvcc: $("$nvcc" --version 2>/dev/null | tail -1 || echo 'not found')"
  echo "- commit: $(git -C "$VEDA_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- CUDA architecture: sm_${arch:-unknown}"
} >"$report"
if [ -z "$arch" ] || [ -z "$nvcc" ]; then
  echo "gpu-check: no usable GPU (nvidia-smi) or no nvcc; nothing to check" | tee -a "$report"
  exit 1
fi

dir="$VEDA_ROOT/build-gpu"
veda_install_deps
run "configure" cmake -S "$VEDA_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVEDA_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" || exit 1
run "build" veda_build "$dir" || exit 1
run "veda info" "$dir/bin/veda" info
# The gpu label one test at a time (concurrent processes would calibrate and
# time against each other on one GPU), the rest in parallel; a GPU test that
# would skip fails (VEDA_REQUIRE_GPU=1).
failed=()
ctest_part() {
  local title=$1
  shift
  VEDA_REQUIRE_GPU=1 run "$title" ctest --test-dir "$dir" --output-on-failure "$@"
  local log="$dir/Testing/Temporary/LastTestsFailed.log"
  [ -f "$log" ] && failed+=($(cut -d: -f2 "$log")) && rm -f "$log"
  return 0
}
ctest_part "tests without the gpu label (VEDA_REQUIRE_GPU=1)" -LE gpu --parallel "$(nproc)"
ctest_part "gpu-labelled tests, one at a time (VEDA_REQUIRE_GPU=1)" -L gpu --parallel 1
run "GEMM ladder" "$dir/bin/veda" bench --op ladder --sizes 1024,2048,4096
run "attention: veda beside PyTorch SDPA" python3 "$VEDA_ROOT/scripts/attention_torch.py" "$dir/bin/veda" --seqs 1024,4096
for b in memory_pool transfer matmul placement elementwise expressions sort scan par_iter stencil spmv random seeds; do
  run "bench_$b" "$dir/bench/bench_$b" "${quick[@]}"
done
echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "gpu-check: ${#failed[@]} tests failed: ${failed[*]}; the first one's output again:"
  VEDA_REQUIRE_GPU=1 ctest --test-dir "$dir" --output-on-failure -R "^${failed[0]}\$"
fi
echo "gpu-check: report in $report ($([ $fail -eq 0 ] && echo 'all passed' || echo 'FAILURES: see the report'))"
exit $fail
