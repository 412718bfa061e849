# Shared by scripts/demo.sh and scripts/test.sh: dependencies, configure, build.
# Idempotent: installed packages are not reinstalled, an existing build
# directory is reused, and the build is incremental (ccache when present).

VEDA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian 12 packages the build, tests, examples and benchmarks need
# (gnuplot-nox draws `veda bench --plot` and the benchmark report's plots;
# StarPU and Eigen are peers in the benchmarks).
VEDA_PACKAGES=(cmake ninja-build g++ ccache pkg-config libtbb-dev libspdlog-dev doctest-dev
  libopenblas-dev libcli11-dev nlohmann-json3-dev gnuplot-nox libstarpu-dev libeigen3-dev)

veda_install_deps() {
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
