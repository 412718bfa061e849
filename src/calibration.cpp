#include "src/calibration.hpp"

#include <algorithm>

#include "backends/cpu/cpu_calibration.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "runtime/file_io.hpp"
#include "runtime/logging.hpp"
#include "runtime/machine_load.hpp"
#include "veda/build_config.hpp"
#include "veda/error.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_calibration.hpp"
#include "backends/cuda/cuda_device.hpp"
#endif

namespace veda::detail {
namespace {
bool same_machine(const MachineProfile& a, const MachineProfile& b) {
  return a.host == b.host && a.cpu_model == b.cpu_model && a.cpu_features == b.cpu_features && a.threads == b.threads &&
         a.device_uuids() == b.device_uuids() && a.driver_version == b.driver_version &&
         a.veda_version == b.veda_version && a.gpu.present == b.gpu.present;
}
}  // namespace

MachineProfile identity_profile(const Config& c, const CpuInfo& cpu, const GpuStatus& gpu, bool pinned_workers) {
  std::vector<const GpuDeviceInfo*> devices;
  if (gpu.usable) {
    const std::vector<int> used = gpu.in_use.empty() ? std::vector<int>{gpu.selected} : gpu.in_use;
    for (int index : used) devices.push_back(&gpu.devices[static_cast<std::size_t>(index)]);
  }
  MachineProfile p = default_profile(cpu, c.threads(), devices, gpu.driver_version);
  // CpuInfo cannot tell a cap at avx from one at sse2, whose kernels differ.
  if (const auto cap = isa_cap())
    p.cpu_features += std::string(p.cpu_features.empty() ? "" : " ") + "max_isa=" + to_string(*cap);
  // Pinned workers wake and fork differently (CpuExecutor): a profile of their own.
  if (pinned_workers)
    p.cpu_features += std::string(p.cpu_features.empty() ? "" : " ") + "workers=pinned";
  return p;
}

void calibrate_peers(const std::vector<DeviceApi*>& devices, MachineProfile& p, std::size_t bytes) {
  if (devices.size() < 2) return;
  for (std::size_t to = 0; to < devices.size(); ++to) {
    GpuProfile& g = to == 0 ? p.gpu : p.other_gpus.at(to - 1);
    g.peer_in_gbps.assign(devices.size(), 0.0);
    for (std::size_t from = 0; from < devices.size(); ++from) {
      if (from == to) continue;
      DeviceApi& a = *devices[from];
      DeviceApi& b = *devices[to];
      void* src = nullptr;
      void* dst = nullptr;
      try {
        src = a.pool().allocate(bytes, a.stream());
        dst = b.pool().allocate(bytes, b.stream());
        // A first copy sets up the path (peer mappings, staging); the best
        // of the next three is the link's rate.
        double best_s = 0;
        for (int rep = 0; rep < 4; ++rep) {
          const auto t0 = now_ns();
          a.copy_to_peer(dst, b, src, bytes, a.stream());
          a.synchronize(a.stream());
          const double s = static_cast<double>(now_ns() - t0) / 1e9;
          if (rep > 0 && (best_s == 0 || s < best_s)) best_s = s;
        }
        if (best_s > 0) g.peer_in_gbps[from] = std::clamp(static_cast<double>(bytes) / best_s / 1e9, 1e-3, 1e4);
      } catch (const std::exception& e) {
        log().warn("calibration: device {} -> device {} copy rate not measured: {}", a.index(), b.index(), e.what());
      }
      if (dst) b.pool().deallocate(dst, b.stream());
      if (src) a.pool().deallocate(src, a.stream());
    }
  }
}

std::string cache_path(const MachineProfile& id) {
  const std::string dir = profile_cache_dir();
  return dir.empty() ? dir : dir + "/profile-" + id.key() + ".json";
}

MachineProfile measure_profile(const Config& c, const CpuInfo& cpu, const GpuStatus& gpu,
                               CpuExecutor& exec, const std::vector<DeviceApi*>& devices, const ProgressFn& progress) {
  const auto t0 = now_ns();
  MachineProfile p = identity_profile(c, cpu, gpu, exec.pinned());
  if (progress) progress("CPU", 0.0);
  // Other work only ever slows a measurement down: a disturbed pass is
  // measured again while the budget lasts, and the cleanest pass is kept.
  const CpuProfile defaults = p.cpu;
  Interference kept;
  for (int pass = 0;; ++pass) {
    const auto p0 = now_ns();
    CpuProfile figures = defaults;
    const Interference q = calibrate_cpu(exec, cpu, figures, progress);
    if (pass == 0 || q.score() < kept.score()) {
      p.cpu = figures;
      kept = q;
    }
    const double elapsed_s = static_cast<double>(now_ns() - t0) / 1e9;
    const double pass_s = static_cast<double>(now_ns() - p0) / 1e9;
    if (!kept.disturbed() || pass + 1 >= kCalibrationPasses || elapsed_s + pass_s > kCalibrationBudgetS) break;
    log().info("calibration pass {} disturbed ({}); measuring again", pass + 1, q.describe());
  }
  p.provisional = kept.disturbed();
  p.calibration_note = kept.describe();
  if (p.provisional) log().warn("machine profile is provisional: {}; it is measured again when the machine is quiet",
                                 p.calibration_note);
#if VEDA_HAS_CUDA
  // Each device on its own: a node's GPUs differ in clocks, memory and link.
  std::vector<DeviceApi*> gpus;
  for (DeviceApi* dev : devices)
    if (auto* cd = dynamic_cast<cuda::CudaDevice*>(dev)) {
      if (progress) progress("GPU " + std::to_string(cd->index()), 0.6);
      GpuProfile& g = gpus.empty() ? p.gpu : p.other_gpus.at(gpus.size() - 1);
      cuda::calibrate_gpu(*cd, g);
      gpus.push_back(dev);
    }
  if (gpus.size() > 1) {
    if (progress) progress("device-to-device copies", 0.9);
    calibrate_peers(gpus, p);
    gpus.front()->make_current();
  }
  for (DeviceApi* d : gpus) d->pool().trim();  // the program's pools start empty
#else
  (void)devices;
#endif
  if (progress) progress("done", 1.0);
  p.source = "calibrated";
  p.calibration_seconds = static_cast<double>(now_ns() - t0) / 1e9;
  return p;
}

MachineProfile obtain_profile(const Config& c, const CpuInfo& cpu, const GpuStatus& gpu,
                              CpuExecutor& exec, const std::vector<DeviceApi*>& devices, const ProgressFn& progress) {
  if (!c.profile().empty()) {
    std::string why;
    auto p = load_profile(c.profile(), why);
    if (!p) throw ConfigError("profile", c.profile(), "cannot use this machine profile: " + why);
    p->source = "file";
    return *p;
  }
  const MachineProfile id = identity_profile(c, cpu, gpu, exec.pinned());
  if (c.calibration() == CalibrationMode::Off) return id;
  const std::string path = cache_path(id);
  // Without a private cache directory the profile is measured and not kept:
  // a directory others can write to could serve a planted profile.
  std::string dir_why;
  if (path.empty()) {
    log().info("no profile cache: neither XDG_CACHE_HOME nor HOME is set; "
               "the machine profile is measured and not kept");
    return measure_profile(c, cpu, gpu, exec, devices, progress);
  }
  if (!ensure_private_dir(profile_cache_dir(), dir_why)) {
    log().warn("profile cache {} is not usable ({}); the machine profile is measured and not kept",
               profile_cache_dir(), dir_why);
    return measure_profile(c, cpu, gpu, exec, devices, progress);
  }
  if (c.calibration() == CalibrationMode::Auto) {
    std::string why;
    if (auto p = load_profile(path, why, Owner::Me)) {
      if (same_machine(*p, id)) {
        p->source = "cache";
        return *p;
      }
      why = "it describes another machine";
    }
    if (why != "no file")
      log().warn("machine profile {} is unusable ({}); measuring a new one", path, why);
  }
  MachineProfile p = measure_profile(c, cpu, gpu, exec, devices, progress);
  std::string why;
  if (!save_profile(p, path, &why)) log().warn("could not write the machine profile to {}: {}", path, why);
  return p;
}

}  // namespace veda::detail
