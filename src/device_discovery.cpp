#include "src/device_discovery.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "veda/build_config.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_discovery.hpp"
#endif

namespace veda::detail {

GpuStatus discover_gpu(const Config& config) {
  GpuStatus s;
#if !VEDA_HAS_CUDA
  s.why = GpuUnavailable::NotBuilt;
  s.reason = "veda was built without its CUDA backend (VEDA_CUDA=OFF or no nvcc)";
  (void)config;
  return s;
#else
  if (!config.gpu()) {
    const bool env = config.gpu_source() == Source::Environment;
    s.why = env ? GpuUnavailable::DisabledByEnvironment : GpuUnavailable::DisabledByConfig;
    s.reason = env ? "disabled by VEDA_GPU=0" : "disabled by config (gpu(false))";
    return s;
  }
  // A broken driver can block inside cudart; the probe runs on its own thread
  // so start-up never hangs. On a time-out the thread is left to finish alone.
  auto promise = std::make_shared<std::promise<GpuStatus>>();
  auto future = promise->get_future();
  std::thread([promise, wanted = config.device()] { promise->set_value(cuda::probe(wanted)); })
      .detach();
  if (future.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    s.why = GpuUnavailable::DiscoveryTimedOut;
    s.reason = "the CUDA driver did not answer within 30 s";
    return s;
  }
  return future.get();
#endif
}

}  // namespace veda::detail
