// Obtaining the machine profile at start-up, by Config::calibration():
//   Auto  - the cached profile for this machine, measured (and cached) if
//           there is none; a corrupt or mismatched cache file is replaced by a
//           fresh calibration with a warning, never a crash;
//   Force - measure and rewrite the cache;
//   Off   - the documented analytic defaults, nothing measured or written.
// Config::profile() (VEDA_PROFILE) names a file to use instead; a bad one is
// a ConfigError. Measuring takes under 2 s on the CPU (5 s with a GPU).
//
// The cache (profile_cache_dir()) is used only if it is private
// (ensure_private_dir: ours, 0700-like, not a symbolic link) and its files
// only if they are regular files of ours; with no cache directory (neither
// XDG_CACHE_HOME nor HOME set) or an unusable one, Auto and Force measure
// and keep nothing, with an info (no directory) or warning (unusable) line.
//
// A busy machine: a measurement pass that other processes or the hypervisor
// disturbed (runtime/machine_load.hpp) is repeated while kCalibrationBudgetS
// lasts; if no pass was clean, the cleanest is kept and marked provisional,
// and the runtime measures again in the background once the machine is
// quiet (src/profile_refresh.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executor.hpp"
#include "runtime/device_api.hpp"
#include "runtime/profile.hpp"
#include "veda/config.hpp"
#include "veda/device.hpp"

namespace veda::detail {

inline constexpr double kCalibrationBudgetS = 2.0;  // no new pass starts past it
inline constexpr int kCalibrationPasses = 3;

using ProgressFn = std::function<void(const std::string& step, double fraction)>;

// `devices` are the runtime's, slot order: each GPU among them is measured
// on its own (the profile's gpu, then other_gpus), and with several, the
// copy rate between every ordered pair (calibrate_peers).
MachineProfile obtain_profile(const Config& c, const CpuInfo& cpu, const GpuStatus& gpu, CpuExecutor& exec,
                              const std::vector<DeviceApi*>& devices, const ProgressFn& progress = {});

// Always measures. Device memory used for it is returned (pools trimmed).
MachineProfile measure_profile(const Config& c, const CpuInfo& cpu, const GpuStatus& gpu, CpuExecutor& exec,
                               const std::vector<DeviceApi*>& devices, const ProgressFn& progress = {});

// The rate of a `bytes` copy from each device to each other one (peer
// access, or staged by the driver without it), best of three after a first
// copy, into each device's GpuProfile::peer_in_gbps. `p` describes the
// devices in slot order (gpu, other_gpus). A pair whose copy fails keeps 0,
// with a warning. Works with any DeviceApi (tests measure HostDevices).
void calibrate_peers(const std::vector<DeviceApi*>& devices, MachineProfile& p, std::size_t bytes = 32u << 20);

// The identity fields of this machine with analytic-default speeds;
// `pinned_workers`: CpuExecutor::pinned() (pinned workers wake and fork
// differently, so they get a profile of their own).
MachineProfile identity_profile(const Config& c, const CpuInfo& cpu, const GpuStatus& gpu, bool pinned_workers);
// The cache file of this identity; "" when there is no cache directory.
std::string cache_path(const MachineProfile& identity);

}  // namespace veda::detail
