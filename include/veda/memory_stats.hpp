// veda/memory_stats.hpp — what veda's memory pools hold, from
// veda::get_runtime().memory_stats(). Cheap enough to call in a loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace veda {

struct DeviceMemoryStats {
  int device = 0;
  std::size_t used = 0;         // bytes in live veda allocations
  std::size_t cached = 0;       // held by the pool for reuse
  std::size_t free = 0;         // free on the device (driver's view)
  std::size_t total = 0;        // device memory
  std::size_t peak = 0;         // highest `used` so far
  std::size_t limit = 0;        // Config::memory_pool_limit, resolved
  std::size_t largest_free_block = 0;
  std::uint64_t allocations = 0;
  std::uint64_t cache_hits = 0;
  double hit_rate = 0.0;
  std::uint64_t oom_retries = 0;   // cache released and allocation retried
  std::uint64_t oom_failures = 0;  // pool could not serve a request
};

struct MemoryStats {
  std::vector<DeviceMemoryStats> devices;  // empty without a usable GPU
  std::size_t pinned_staging_in_use = 0;
  std::size_t pinned_staging_total = 0;
  std::uint64_t cpu_fallbacks = 0;    // GPU calls run on the CPU instead (device OOM or fault)
  std::uint64_t faults_injected = 0;  // by Config::faults / VEDA_FAULT, every kind
};

}  // namespace veda
