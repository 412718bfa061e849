#!/usr/bin/env bash
# The benchmark suite: builds (CUDA backend when nvcc exists), runs every case
# side by side with its peers, and writes the raw JSON, docs/benchmarks.md and
# its plots. Every figure in docs/ comes from a run of this script.
#   scripts/bench.sh               the full suite
#   scripts/bench.sh --quick       fewer sizes and samples: under 5 minutes
#   scripts/bench.sh --only a,b    just these cases (the report then holds only them)
#   scripts/bench.sh --out DIR     write DIR/benchmarks.md, DIR/benchmarks/{raw,plots}/ (default: docs)
# Run it on an otherwise idle machine: the cases time medians, but a compiler
# or another benchmark running beside them shifts every ratio.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
quick=() only="" out="$VEDA_ROOT/docs"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --only) only=$2; shift ;;
    --only=*) only=${1#--only=} ;;
    --out) out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    *) echo "usage: $0 [--quick] [--only case,case] [--out dir]" >&2; exit 2 ;;
  esac
  shift
done
cases=(dispatch small_calls elementwise expressions placement par_iter sort scan matmul transpose row_ops stencil spmv random seeds memory_pool telemetry)
[ -n "$only" ] && IFS=, read -r -a cases <<<"$only"
dir="$VEDA_ROOT/build"
veda_install_deps
veda_configure "$dir" "${VEDA_CUDA:-AUTO}"
veda_build "$dir"
raw="$out/benchmarks/raw" plots="$out/benchmarks/plots"
mkdir -p "$raw" "$plots"
rm -f "$raw"/*.json
start=$(date +%s)
for c in "${cases[@]}"; do
  exe="$dir/bench/bench_$c"
  [ -x "$exe" ] || { echo "bench.sh: no benchmark '$c' ($exe)" >&2; exit 2; }
  echo "== $c"
  t0=$(date +%s)
  "$exe" "${quick[@]}" --json "$raw/$c.json"
  echo "== $c: $(( $(date +%s) - t0 )) s"
done
cmd="scripts/bench.sh${quick:+ --quick}${only:+ --only $only}"
"$dir/bench/bench_report" "$raw" "$out/benchmarks.md" "$plots" "$cmd"
echo "bench.sh: $(( $(date +%s) - start )) s; report in $out/benchmarks.md"
