// RuntimeState: everything one running runtime owns. Created by veda::init
// (or the first get_runtime()), destroyed by veda::shutdown() once no call is
// in flight. Each layer adds its resource here: the CPU executor, the GPU
// status, and (in later layers) the profile, cost model, pools, telemetry.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/device_api.hpp"
#include "runtime/launch_count.hpp"
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
class ProfileRefresh;  // src: measures a provisional profile again
class HistoryStore;

class RuntimeState {
 public:
  explicit RuntimeState(const Config& config);
  ~RuntimeState();

  // The GPUs veda uses (Config::devices), the first Config::device(); none
  // when no GPU is usable. A "slot" is a position in this list.
  std::size_t device_count() const noexcept { return devices_.size(); }
  DeviceApi* device_at(std::size_t slot) noexcept { return slot < devices_.size() ? devices_[slot].get() : nullptr; }
  std::vector<DeviceApi*> all_devices() const;  // slot order
  // The slot of the device with this index, or -1 when veda does not use it.
  int slot_of(int index) const noexcept;
  // The calling thread's device: the one the scheduler last placed a GPU
  // call of this thread on (set_thread_device), the first one otherwise;
  // null when none is usable.
  DeviceApi* device() noexcept {
    if (devices_.empty()) return nullptr;
    return devices_[t_device_slot < devices_.size() ? t_device_slot : 0].get();
  }
  static void set_thread_device(std::size_t slot) noexcept { t_device_slot = slot; }
  static std::size_t thread_device() noexcept { return t_device_slot; }
  // Replaces the devices (tests use HostDevices to drive the data layer on
  // machines without a GPU; VEDA_EMULATE_DEVICES=N does it at start-up).
  // Arrays on the old devices move to the host first.
  void install_devices(std::vector<std::unique_ptr<DeviceApi>> d);
  void install_device(std::unique_ptr<DeviceApi> d);
  // The trace (Config::trace) is written here, before the device goes.
  void write_trace_if_asked() noexcept;

  const Config config;
  CpuInfo cpu;
  GpuStatus gpu;
  WorkerActivity workers;  // what cpu_executor reports, the scheduler reads
  std::unique_ptr<CpuExecutor> cpu_executor;
  // What the cost model predicts with. A background refresh may replace it
  // (set_profile); earlier versions stay valid until the runtime goes, so a
  // reference read before a replacement never dangles.
  const MachineProfile& profile() const noexcept { return profile_.load(std::memory_order_acquire)->whole; }
  // The same version as the device in `slot` sees it (its own GPU figures in
  // `gpu`: MachineProfile::for_device); what a call placed there is
  // predicted with.
  const MachineProfile& profile_for(std::size_t slot) const noexcept {
    const ProfileVersion& v = *profile_.load(std::memory_order_acquire);
    return slot == 0 || slot > v.by_slot.size() ? v.whole : v.by_slot[slot - 1];
  }
  void set_profile(MachineProfile p);
  std::unique_ptr<Telemetry> telemetry;  // null unless Config::telemetry (or a trace) is on
  // Distinguishes runtimes across init/shutdown cycles (caches key on it).
  const std::uint64_t generation;
  // GPU calls that ran on the CPU instead: device memory ran out, or a
  // launch or copy failed (veda::DeviceFault).
  std::atomic<std::uint64_t> cpu_fallbacks{0};
  // launch_count() when this runtime started (Runtime::device_launches).
  const std::uint64_t launches_at_start = launch_count();
  // Config::faults, Config::record, Config::replay (null when not asked for).
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<DecisionRecorder> recorder;
  std::unique_ptr<DecisionReplay> replay;
  std::unique_ptr<ProfileRefresh> refresh;  // while the profile is provisional
  std::unique_ptr<HistoryStore> history;    // Config::learned_history, for this machine's own profile

 private:
  struct ProfileVersion {
    MachineProfile whole;
    std::vector<MachineProfile> by_slot;  // slots 1, 2, ...: whole.for_device(slot)
  };
  std::mutex profiles_mu_;
  std::deque<ProfileVersion> profiles_;  // every version set, newest last
  std::atomic<const ProfileVersion*> profile_{nullptr};
  std::vector<std::unique_ptr<DeviceApi>> devices_;
  static inline thread_local std::size_t t_device_slot = 0;
  void evict_devices_locked() noexcept;  // under device_lifetime(), exclusively
  void add_cuda_devices();                // the CUDA backend only
  static int emulated_device_count();  // VEDA_EMULATE_DEVICES, 0 when unset
  static std::vector<std::unique_ptr<DeviceApi>> emulated_devices(int count);
};

}  // namespace veda::detail
