// RuntimeState: everything one running runtime owns. Created by veda::init
// (or the first get_runtime()), destroyed by veda::shutdown() once no call is
// in flight. Each layer adds its resource here: the CPU executor, the GPU
// status, and (in later layers) the profile, cost model, pools, telemetry.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/cpu/cpu_executor.hpp"
#include "veda/config.hpp"
#include "veda/device.hpp"

namespace veda::detail {

class RuntimeState {
 public:
  explicit RuntimeState(const Config& config);
  ~RuntimeState();

  const Config config;
  CpuInfo cpu;
  GpuStatus gpu;
  std::unique_ptr<CpuExecutor> cpu_executor;
  // Distinguishes runtimes across init/shutdown cycles (caches key on it).
  const std::uint64_t generation;
};

}  // namespace veda::detail
