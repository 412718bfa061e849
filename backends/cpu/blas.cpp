#include "backends/cpu/blas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace veda::detail {

std::string preferred_coretype(const CpuInfo& cpu) {
  if (cpu.avx512) return cpu.avx512_bf16 ? "Cooperlake" : "SkylakeX";
  if (cpu.avx2 && cpu.fma) return cpu.vendor == "AuthenticAMD" ? "Zen" : "Haswell";
  return {};
}

namespace {
void* loaded_handle() {
  void* h = dlopen(VEDA_OPENBLAS_PATH, RTLD_NOW | RTLD_NOLOAD);
  return h ? h : dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
}

Blas load(const CpuInfo& cpu, const std::string& measured) {
  Blas b;
  b.library = VEDA_OPENBLAS_PATH;
  // Already in the process (linked by the program)? Then its kernels are chosen.
  void* h = loaded_handle();
  if (h) {
    b.origin = "chosen by OpenBLAS when the program loaded it";
  } else {
    const std::string guess = preferred_coretype(cpu);
    if (const char* env = std::getenv("OPENBLAS_CORETYPE"); env && *env) {
      b.origin = std::string("OPENBLAS_CORETYPE=") + env + " from the environment";
    } else if (const std::string core = measured.empty() ? guess : measured; !core.empty()) {
      setenv("OPENBLAS_CORETYPE", core.c_str(), 0);
      b.origin = "OPENBLAS_CORETYPE=" + core + " set by veda (" +
                 (measured.empty() ? "from the CPU's features" : "fastest when calibrating") + ")";
    } else {
      b.origin = "chosen by OpenBLAS";
    }
    h = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      b.library = "libopenblas.so.0";
      h = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!h) {
    b.why_not = std::string("OpenBLAS not found: ") + dlerror();
    return b;
  }
  b.sgemm = reinterpret_cast<decltype(b.sgemm)>(dlsym(h, "cblas_sgemm"));
  b.dgemm = reinterpret_cast<decltype(b.dgemm)>(dlsym(h, "cblas_dgemm"));
  b.sgemv = reinterpret_cast<decltype(b.sgemv)>(dlsym(h, "cblas_sgemv"));  // optional: gemm serves without
  b.dgemv = reinterpret_cast<decltype(b.dgemv)>(dlsym(h, "cblas_dgemv"));
  b.set_threads = reinterpret_cast<decltype(b.set_threads)>(dlsym(h, "openblas_set_num_threads"));
  b.get_threads = reinterpret_cast<decltype(b.get_threads)>(dlsym(h, "openblas_get_num_threads"));
  auto corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
  auto config = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_config"));
  if (!b.sgemm || !b.dgemm) {
    b.why_not = "the BLAS library has no cblas_sgemm/cblas_dgemm";
    return b;
  }
  if (corename) b.core = corename();
  if (config) b.config = config();
  b.available = true;
  return b;
}
}  // namespace

const Blas& blas(const CpuInfo& cpu, const std::string& core) {
  static const Blas b = load(cpu, core);
  return b;
}

bool blas_loaded() {
  void* h = loaded_handle();
  if (h) dlclose(h);  // RTLD_NOLOAD took a reference
  return h != nullptr;
}

}  // namespace veda::detail
