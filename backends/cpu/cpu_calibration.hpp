// Micro-benchmarks behind the CPU half of the machine profile. Each returns a
// median of repeated runs; together they take well under a second.
// calibrate_cpu also says how much other work disturbed them
// (runtime/machine_load.hpp): the caller decides whether to measure again.
#pragma once

#include <functional>
#include <string>

#include "backends/cpu/cpu_executor.hpp"
#include "runtime/machine_load.hpp"
#include "runtime/profile.hpp"

namespace veda::detail {

// Fills `cpu` from measurements on this machine with `exec`'s workers
// (GEMM rates through the BLAS veda loads for `info`); returns what else
// ran meanwhile (preemption: of the single-threaded measurements).
Interference calibrate_cpu(CpuExecutor& exec, const CpuInfo& info, CpuProfile& cpu,
                   const std::function<void(const std::string&, double)>& progress = {});

// FP32 FMA throughput of one core in GFLOP/s (AVX-512, AVX2 or SSE kernel,
// whichever the CPU runs fastest). Defined in cpu_peak.cpp.
double measure_fma_gflops_per_thread();

}  // namespace veda::detail
