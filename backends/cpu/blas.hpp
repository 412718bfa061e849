// OpenBLAS, loaded at run time with its kernel set chosen first.
//
// OpenBLAS picks its kernels (its "core type") once, when the library is
// loaded, and Debian's build falls back to older kernels on CPUs it does not
// recognise; nor is the newest kernel set always the fastest (on Zen 4,
// which runs AVX-512 as two 256-bit halves, the AVX2 kernels win). So veda
// does not link it. Calibration measures the candidate kernel sets in forked
// children (blas_probe.cpp) and records the fastest in the machine profile;
// on first use veda sets OPENBLAS_CORETYPE to it (or, without a measurement,
// to a choice from the CPU's features) unless the program already set it,
// then dlopen()s the library. If the program itself linked OpenBLAS, the
// library is already loaded and its own choice stands; blas().origin says
// which way the kernels were chosen.
//
// Thread-safety: blas() initialises once; the CBLAS calls are OpenBLAS's.
#pragma once

#include <string>
#include <vector>

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
  // Matrix-vector products: OpenBLAS's gemm packs its operands first, which
  // costs several times the product itself when one side is a vector.
  void (*sgemv)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int) = nullptr;
  void (*dgemv)(int, int, int, int, double, const double*, int, const double*, int, double, double*, int) = nullptr;
  void (*set_threads)(int) = nullptr;
  int (*get_threads)() = nullptr;
};

// Loads OpenBLAS on first call, asking for kernel set `core` (empty: the
// choice from the CPU's features); later calls return the same library.
const Blas& blas(const CpuInfo& cpu, const std::string& core = {});
bool blas_loaded();  // in this process, by veda or by the program

// The kernel set chosen from the CPU's features ("" to leave OpenBLAS's own).
std::string preferred_coretype(const CpuInfo& cpu);
// The kernel sets worth trying on this CPU.
std::vector<std::string> candidate_coretypes(const CpuInfo& cpu);
// Measures the candidates (blas_probe.cpp) and returns the fastest; "" when
// it cannot choose (OPENBLAS_CORETYPE already set, OpenBLAS already loaded,
// no candidate ran). `report` lists what was measured, or why not.
std::string measure_coretype(const CpuInfo& cpu, int threads, std::string& report);

}  // namespace veda::detail
