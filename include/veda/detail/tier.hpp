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
  // spmv
  GpuCusparse,
  // matmul under Precision::AllowFP16
  GpuCublasBf16,
  // attention (GpuNaive: matmul's too)
  CpuBlocked,
  GpuNaive,
  GpuFlash,
  // the matmul ladder's teaching kernels, and BF16 tensor cores by WMMA
  GpuVectorized,
  GpuWmma,
  Count
};

constexpr int kTierCount = static_cast<int>(Tier::Count);
constexpr std::uint32_t tier_bit(Tier t) { return 1u << static_cast<unsigned>(t); }

// The one table of tier names and devices, in enum order (checked below).
// Names are what GpuOptions::tier and friends accept and what decisions,
// telemetry and recordings print, so each is unique.
struct TierInfo {
  Tier tier;
  const char* name;
  Device device;
};
inline constexpr TierInfo kTierTable[kTierCount] = {
    {Tier::Serial, "serial", Device::Cpu},
    {Tier::TbbStatic, "tbb-static", Device::Cpu},
    {Tier::TbbAuto, "tbb-auto", Device::Cpu},
    {Tier::Cuda, "cuda", Device::Gpu},
    {Tier::CudaStreamed, "cuda-streamed", Device::Gpu},
    {Tier::CoExec, "cpu+gpu", Device::Gpu},
    {Tier::CpuImpl, "cpu", Device::Cpu},
    {Tier::CudaImpl, "cuda-impl", Device::Gpu},
    {Tier::CpuReference, "cpu-reference", Device::Cpu},
    {Tier::CpuBlas, "cpu-blas", Device::Cpu},
    {Tier::CpuTiled, "cpu-tiled", Device::Cpu},
    {Tier::GpuTiled, "gpu-tiled", Device::Gpu},
    {Tier::GpuCublas, "gpu-cublas", Device::Gpu},
    {Tier::GpuCublasTf32, "gpu-cublas-tf32", Device::Gpu},
    {Tier::GpuCublasLtFused, "gpu-cublaslt-fused", Device::Gpu},
    {Tier::GpuUnfused, "gpu-unfused", Device::Gpu},
    {Tier::GpuCusparse, "gpu-cusparse", Device::Gpu},
    {Tier::GpuCublasBf16, "gpu-cublas-bf16", Device::Gpu},
    {Tier::CpuBlocked, "cpu-blocked", Device::Cpu},
    {Tier::GpuNaive, "gpu-naive", Device::Gpu},
    {Tier::GpuFlash, "gpu-flash", Device::Gpu},
    {Tier::GpuVectorized, "gpu-vectorized", Device::Gpu},
    {Tier::GpuWmma, "gpu-wmma", Device::Gpu},
};

constexpr bool tier_table_ok() {
  for (int i = 0; i < kTierCount; ++i) {
    if (static_cast<int>(kTierTable[i].tier) != i) return false;
    for (int j = 0; j < i; ++j) {
      const char *a = kTierTable[i].name, *b = kTierTable[j].name;
      while (*a && *a == *b) ++a, ++b;
      if (*a == *b) return false;  // two tiers share a name
    }
  }
  return true;
}
static_assert(tier_table_ok(), "kTierTable: one row per Tier, in enum order, unique names");

constexpr const char* tier_name(Tier t) noexcept {
  const auto i = static_cast<unsigned>(t);
  return i < unsigned(kTierCount) ? kTierTable[i].name : "?";
}

// The GPU tiers as a bit mask, folded at compile time: every call asks
// tier_device() at least twice, and in a shared library a load from the
// table goes through the GOT first.
constexpr std::uint32_t gpu_tier_bits() {
  std::uint32_t bits = 0;
  for (const TierInfo& row : kTierTable)
    if (row.device == Device::Gpu) bits |= tier_bit(row.tier);
  return bits;
}
constexpr Device tier_device(Tier t) noexcept {
  constexpr std::uint32_t kGpu = gpu_tier_bits();
  const auto i = static_cast<unsigned>(t);
  return i < unsigned(kTierCount) && ((kGpu >> i) & 1u) ? Device::Gpu : Device::Cpu;
}

}  // namespace veda::detail
