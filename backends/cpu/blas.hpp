// OpenBLAS, loaded at run time with its kernel set chosen first.
//
// OpenBLAS picks its kernels (its "core type") once, when the library is
// loaded, and Debian's build falls back to AVX2 kernels on AVX-512 CPUs it
// does not recognise. So veda does not link it: on first use it sets
// OPENBLAS_CORETYPE from the CPU's features (SkylakeX or Cooperlake with
// AVX-512, Haswell or Zen with AVX2) unless the program already set it, then
// dlopen()s the library. If the program itself linked OpenBLAS, the library
// is already loaded and its own choice stands; blas().origin says which.
//
// Thread-safety: blas() initialises once; the CBLAS calls are OpenBLAS's.
#pragma once

#include <string>

#include "veda/device.hpp"

namespace veda::detail {

struct Blas {
  bool available = false;
  std::string why_not;     // when unavailable
  std::string library;     // path loaded
  std::string core;        // openblas_get_corename(), e.g. "SkylakeX"
  std::string config;      // openblas_get_config()
  std::string origin;      // how the kernel set was chosen
  // CBLAS, row-major entry points (CblasRowMajor = 101, NoTrans = 111, Trans = 112).
  void (*sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int) = nullptr;
  void (*dgemm)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                int) = nullptr;
  void (*set_threads)(int) = nullptr;
  int (*get_threads)() = nullptr;
};

// Loads OpenBLAS on first call (choosing its kernels for `cpu`).
const Blas& blas(const CpuInfo& cpu);

// The kernel set veda would choose for this CPU ("" to leave OpenBLAS's own).
std::string preferred_coretype(const CpuInfo& cpu);

}  // namespace veda::detail
