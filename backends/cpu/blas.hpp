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
// then dlopen()s the library. A measured set this CPU cannot run (a profile
// from another machine: SkylakeX kernels on a CPU without AVX-512 die with
// SIGILL) is replaced by the choice from the CPU's features, with a
// warning. If the program itself linked OpenBLAS, the library is already
// loaded and its own choice stands; blas().origin says which way the
// kernels were chosen.
//
// Thread-safety: blas() initialises once; the CBLAS calls are OpenBLAS's.
#pragma once

#include <string>
#include <string_view>
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

// Loads OpenBLAS on first call, asking for kernel set `core` (empty, or one
// this CPU cannot run: the choice from the CPU's features; see
// choose_coretype); later calls return the same library.
const Blas& blas(const CpuInfo& cpu, const std::string& core = {});
bool blas_loaded();  // in this process, by veda or by the program

// The kernel set chosen from the CPU's features ("" to leave OpenBLAS's own).
std::string preferred_coretype(const CpuInfo& cpu);
// What the x86 kernel set `core` (as OPENBLAS_CORETYPE names it, any case)
// needs that this CPU lacks, e.g. "AVX-512"; "" when the CPU can run it. A
// set veda does not know is never trusted (its needs are unknown).
std::string coretype_missing(const CpuInfo& cpu, std::string_view core);

// The kernel set to ask OpenBLAS for. OPENBLAS_CORETYPE from the environment
// is not consulted here: load() keeps it as the user's explicit choice.
struct CoreChoice {
  std::string core;       // canonical spelling; "" leaves the choice to OpenBLAS
  std::string origin;     // for Blas::origin
  bool rejected = false;  // `wanted` cannot run on this CPU and was replaced
};
// `wanted` (measured, or a machine profile's, possibly from another machine)
// when this CPU can run it, else preferred_coretype(cpu).
CoreChoice choose_coretype(const CpuInfo& cpu, const std::string& wanted);
// The kernel sets worth trying on this CPU.
std::vector<std::string> candidate_coretypes(const CpuInfo& cpu);
// Measures the candidates (blas_probe.cpp) and returns the fastest; "" when
// it cannot choose (OPENBLAS_CORETYPE already set, OpenBLAS already loaded,
// no candidate ran). `report` lists what was measured, or why not.
std::string measure_coretype(const CpuInfo& cpu, int threads, std::string& report);

}  // namespace veda::detail
