// RuntimeState: everything one running runtime owns. Created by veda::init
// (or the first get_runtime()), destroyed by veda::shutdown() once no call is
// in flight. Each layer adds its resource here: the CPU executor, the GPU
// status, and (in later layers) the profile, cost model, pools, telemetry.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "runtime/device_api.hpp"
#include "runtime/profile.hpp"
#include "runtime/worker_activity.hpp"
#include "veda/config.hpp"
#include "veda/device.hpp"

namespace veda::detail {

class CpuExecutor;  // backends/cpu: the engine only holds it
class Telemetry;
class FaultInjector;
class DecisionRecorder;
class DecisionReplay;

class RuntimeState {
 public:
  explicit RuntimeState(const Config& config);
  ~RuntimeState();

  // The GPU veda uses, or null when none is usable.
  DeviceApi* device() noexcept { return device_.get(); }
  // Replaces the device (tests use a HostDevice to drive the data layer on
  // machines without a GPU). Arrays on the old device move to the host first.
  void install_device(std::unique_ptr<DeviceApi> d);
  // The trace (Config::trace) is written here, before the device goes.
  void write_trace_if_asked() noexcept;

  const Config config;
  CpuInfo cpu;
  GpuStatus gpu;
  WorkerActivity workers;  // what cpu_executor reports, the scheduler reads
  std::unique_ptr<CpuExecutor> cpu_executor;
  MachineProfile profile;  // what the cost model predicts with
  std::unique_ptr<Telemetry> telemetry;  // null unless Config::telemetry (or a trace) is on
  // Distinguishes runtimes across init/shutdown cycles (caches key on it).
  const std::uint64_t generation;
  // GPU calls that ran on the CPU instead: device memory ran out, or a
  // launch or copy failed (veda::DeviceFault).
  std::atomic<std::uint64_t> cpu_fallbacks{0};
  // Config::faults, Config::record, Config::replay (null when not asked for).
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<DecisionRecorder> recorder;
  std::unique_ptr<DecisionReplay> replay;

 private:
  std::unique_ptr<DeviceApi> device_;
};

}  // namespace veda::detail
