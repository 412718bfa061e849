// The kernel tiers veda chooses among, across all operations. A tier is one
// named, separately testable implementation; each operation offers a subset.
#pragma once

#include <cstdint>

#include "veda/device.hpp"

namespace veda::detail {

enum class Tier : std::uint8_t {
  Serial,        // inline on the calling thread
  TbbStatic,     // oneTBB parallel_for, static partitioner
  TbbAuto,       // oneTBB parallel_for, auto partitioner
  Cuda,          // one CUDA kernel, data copied as needed
  CudaStreamed,  // chunked through pinned staging, copies overlapping compute
  CoExec,        // the index range split between the CPU and the GPU
  CpuImpl,       // gpu_kernel: the user's CPU implementation
  CudaImpl,      // gpu_kernel: the user's CUDA implementation
  // matmul
  CpuReference,
  CpuBlas,
  CpuTiled,
  GpuTiled,
  GpuCublas,
  GpuCublasTf32,
  GpuCublasLtFused,
  GpuUnfused,
  Count
};

constexpr int kTierCount = static_cast<int>(Tier::Count);
constexpr std::uint32_t tier_bit(Tier t) { return 1u << static_cast<unsigned>(t); }

const char* tier_name(Tier t) noexcept;

// Inline: every call asks it, twice.
constexpr Device tier_device(Tier t) noexcept {
  switch (t) {
    case Tier::Cuda:
    case Tier::CudaStreamed:
    case Tier::CoExec:
    case Tier::CudaImpl:
    case Tier::GpuTiled:
    case Tier::GpuCublas:
    case Tier::GpuCublasTf32:
    case Tier::GpuCublasLtFused:
    case Tier::GpuUnfused:
      return Device::Gpu;
    default:
      return Device::Cpu;
  }
}

}  // namespace veda::detail
