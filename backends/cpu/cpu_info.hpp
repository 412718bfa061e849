// CPU identification: brand string, vendor and the SIMD features that matter
// for kernel choice (AVX2/FMA, AVX-512). Read once at runtime start-up.
#pragma once

#include "veda/device.hpp"

namespace veda::detail {

// Fills everything but CpuInfo::threads (the runtime's choice); features
// above VEDA_MAX_CPU_ISA read as absent (cpu_isa.hpp), a bad value of it is
// a ConfigError.
CpuInfo detect_cpu();

}  // namespace veda::detail
