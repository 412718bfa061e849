#!/usr/bin/env bash
# The layering check (CTest `layering`, so scripts/test.sh runs it):
#
#   include/veda  <-  runtime  <-  backends/{cpu,cuda}  <-  src  <-  tools
#   include/veda  <-  mpi   (libveda_mpi: veda::mpi uses the public API only)
#
# Each layer may use the ones to its left, never one to its right, and the
# two backends never see each other. Checked twice:
#   - includes: every `#include "dir/..."` of a layer's sources;
#   - links: every symbol a layer's object files use that another layer's
#     object files define (what an include graph cannot see: a function
#     declared in a public header but defined in src/, for example).
# The public API's own definitions in src/ (config.cpp, device.cpp,
# runtime.cpp: Config, to_string(Device), Runtime's accessors) count as
# include/veda, whose implementation they are.
#
#   scripts/check-layers.sh SOURCE_DIR [OBJECT...]   (objects: the veda library's)
# Exit 0 when clean; otherwise one line per breach naming the file and rule.
set -uo pipefail
export LC_ALL=C
root=${1:?usage: check-layers.sh SOURCE_DIR [OBJECT...]}
shift
fail=0
breach() { echo "layering: $1" >&2; fail=1; }

# What each layer may include, besides its own folder and the standard library.
allowed_includes() {
  case $1 in
    include) echo "veda" ;;
    runtime) echo "veda runtime" ;;
    backends/cpu) echo "veda runtime backends/cpu" ;;
    backends/cuda) echo "veda runtime backends/cuda" ;;
    src) echo "veda runtime backends src" ;;
    mpi) echo "veda mpi" ;;
  esac
}
rule_text() {
  case $1 in
    include) echo "the public API includes only veda/ headers" ;;
    runtime) echo "runtime/ (the decision engine) includes only veda/ and runtime/" ;;
    backends/cpu | backends/cuda) echo "$1 includes veda/, runtime/ and itself; the backends never see each other" ;;
    src) echo "src/ does not include tools/" ;;
    mpi) echo "mpi/ (veda::mpi) includes only veda/ headers: it is built on the public API" ;;
  esac
}

for layer in include runtime backends/cpu backends/cuda src mpi; do  # tools/ may include every layer
  [ -d "$root/$layer" ] || continue
  allow=" $(allowed_includes "$layer") "
  while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    target=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$rest")
    top=${target%%/*}
    case $top in
      veda | runtime | src | tools) dir=$top ;;
      backends) dir=$(cut -d/ -f1-2 <<<"$target") ;;
      *) continue ;;  # a same-folder or third-party header
    esac
    ok=0
    for a in $allow; do
      [ "$dir" = "$a" ] || [ "${dir%%/*}" = "$a" ] && ok=1
    done
    [ $ok = 1 ] || breach "${file#"$root"/} includes \"$target\": $(rule_text "$layer")"
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$root/$layer" \
             --include='*.hpp' --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' |
           sed -E 's/^([^:]+):[0-9]+:/\1:/')
done

# Link level: the layer of an object, from its path (CMake mirrors the tree).
layer_of() {
  case $1 in
    */runtime/*) echo runtime ;;
    */backends/cpu/*) echo backends/cpu ;;
    */backends/cuda/*) echo backends/cuda ;;
    */src/config.cpp.o | */src/device.cpp.o | */src/runtime.cpp.o) echo api ;;
    */src/*) echo src ;;
    *) echo other ;;
  esac
}
# May objects of layer $1 use symbols defined in layer $2?
may_use() {
  case "$1>$2" in
    runtime\>runtime | runtime\>api) return 0 ;;
    runtime\>*) return 1 ;;
    backends/cpu\>backends/cuda | backends/cuda\>backends/cpu) return 1 ;;
    backends/*\>src) return 1 ;;
    *) return 0 ;;
  esac
}
if [ $# -gt 0 ]; then
  command -v nm >/dev/null || { echo "layering: nm not found (binutils)" >&2; exit 1; }
  for o in "$@"; do [ -f "$o" ] || { echo "layering: no object file $o" >&2; exit 1; }; done
  defs=$(mktemp)
  trap 'rm -f "$defs"' EXIT
  for o in "$@"; do
    l=$(layer_of "$o")
    # Strong definitions only: inline functions and templates (weak) belong to no layer.
    nm --defined-only "$o" | awk -v l="$l" -v o="$o" '$2 ~ /^[TDBR]$/ { print $3 "\t" l "\t" o }'
  done | sort -u -k1,1 >"$defs"
  for o in "$@"; do
    from=$(layer_of "$o")
    [ "$from" = other ] && continue
    nm --undefined-only "$o" | awk '{ print $2 }' | sort -u |
      join -t $'\t' - "$defs" |
      while IFS=$'\t' read -r sym to def; do
        may_use "$from" "$to" && continue
        echo "layering: ${o##*/veda.dir/} ($from) uses $(c++filt "$sym"), defined in ${def##*/veda.dir/} ($to)" >&2
        echo x
      done | grep -q x && fail=1
  done
fi
[ $fail = 0 ] && echo "layering: include/veda <- runtime <- backends/{cpu,cuda} <- src <- tools holds ($# object files checked)"
exit $fail
