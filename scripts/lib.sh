# Shared by scripts/demo.sh and scripts/test.sh: dependencies, configure, build.
# Idempotent: installed packages are not reinstalled, an existing build
# directory is reused, and the build is incremental (ccache when present).

VEDA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian 12 packages the build, tests, examples and benchmarks need
# (gnuplot-nox draws `veda bench --plot` and the benchmark report's plots;
# StarPU and Eigen are peers in the benchmarks; Open MPI builds and tests
# veda::mpi).
VEDA_PACKAGES=(cmake ninja-build g++ ccache pkg-config libtbb-dev libspdlog-dev doctest-dev
  libopenblas-dev libcli11-dev nlohmann-json3-dev gnuplot-nox libstarpu-dev libeigen3-dev
  libopenmpi-dev openmpi-bin)

# The runtime libraries and headers a host needs when it has no registry:
# scripts/bundle-deps.sh downloads them, VEDA_DEPS=<bundle> unpacks them.
VEDA_BUNDLE_PACKAGES=(libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libhwloc15
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 doctest-dev
  libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev libgfortran5
  libcli11-dev nlohmann-json3-dev libeigen3-dev)

# Unpacks the bundle $VEDA_DEPS into a private prefix (never into /: the
# host's own libraries stay untouched) and points CMake, the compiler and the
# loader at it. No LIBRARY_PATH: the compiler would report its directories as
# implicit, and CMake would leave them out of installed programs' run paths.
veda_use_bundle() {
  local prefix=${VEDA_DEPS_PREFIX:-/tmp/veda-deps}
  if [ ! -f "$prefix/.unpacked" ]; then
    mkdir -p "$prefix"
    for f in "$VEDA_DEPS"/*.deb; do dpkg-deb -x "$f" "$prefix"; done
    touch "$prefix/.unpacked"
  fi
  local lib=$prefix/usr/lib/x86_64-linux-gnu
  export CMAKE_PREFIX_PATH=$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CPATH=$prefix/usr/include${CPATH:+:$CPATH}
}

veda_install_deps() {
  if [ -n "${VEDA_DEPS:-}" ]; then
    veda_use_bundle
    return 0
  fi
  local missing=()
  for p in "${VEDA_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "veda: missing Debian packages: ${missing[*]}" >&2
    echo "veda: run this script as root, or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "veda: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# nvcc from NVIDIA's toolkit lives outside PATH on a stock install.
veda_find_nvcc() {
  if ! command -v nvcc >/dev/null 2>&1 && [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
  fi
}

# veda_configure <build-dir> <VEDA_CUDA value> [extra cmake args...]
veda_configure() {
  local dir=$1 cuda=$2
  shift 2
  veda_find_nvcc
  if [ ! -f "$dir/build.ninja" ] || [ "$(grep -s '^VEDA_CUDA:' "$dir/CMakeCache.txt" | cut -d= -f2)" != "$cuda" ]; then
    cmake -S "$VEDA_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVEDA_CUDA="$cuda" "$@"
  fi
}

veda_build() {
  local dir=$1
  shift
  cmake --build "$dir" --parallel "$(nproc)" "$@"
}
