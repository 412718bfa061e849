// MachineProfile: the measured (or analytic default) speeds the cost model
// predicts with. Calibration fills it; it is cached as JSON under
// $XDG_CACHE_HOME/veda (else ~/.cache/veda; with neither variable set there
// is no cache), keyed by host name, CPU model and features, thread count,
// every GPU's UUID, driver and veda version, and reloaded next time.
//
// A loaded profile is checked: every figure must be a physically plausible
// rate (the bounds are one table in profile.cpp and docs/configuration.md),
// so a corrupt or hand-made file cannot drive absurd decisions.
//
// Thread-safety: a value; the runtime holds an immutable copy.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runtime/file_io.hpp"
#include "veda/device.hpp"

namespace veda::detail {

struct CpuProfile {
  double map_ns_per_elem = 0.35;    // simple float map (12 B/elem), in cache, one thread
  double fma_gflops_per_thread = 30;  // measured FP32 FMA peak of one core
  double bw_one_gbps = 12;          // streaming triad, one thread
  double bw_all_gbps = 20;          // streaming triad, every thread
  double tbb_static_us = 0.4;       // warm fork-join, static partitioner
  double tbb_auto_us = 2.0;         // warm fork-join, auto partitioner
  double tbb_wake_us = 25;          // extra cost when the workers have gone to sleep
  double tbb_idle_us = 1000;        // idle time after which they have
  double sgemm_gflops = 0;          // cpu-blas at n = 1024 (0: not measured)
  double dgemm_gflops = 0;
  std::string blas_core;            // OpenBLAS kernel set measured fastest ("": not measured)
  std::string blas_probe;           // what that measurement saw, or why there was none
};

struct GpuProfile {
  bool present = false;
  std::string name;
  std::string uuid;
  double launch_us = 6;             // empty kernel launch + synchronize
  double h2d_pageable_gbps = 10;
  double h2d_pinned_gbps = 25;
  double d2h_pageable_gbps = 10;
  double d2h_pinned_gbps = 25;
  double h2d_staged_gbps = 20;      // pageable through veda's pinned staging
  double d2h_staged_gbps = 20;
  double device_bw_gbps = 1500;
  double fp32_gflops = 30000;       // element-wise FMA kernel
  double sgemm_gflops = 25000;      // cuBLAS
  double sgemm_tf32_gflops = 150000;
  double hgemm_gflops = 300000;
  double dgemm_gflops = 25000;
  // Copies into this device from the device in each slot, GB/s (several
  // GPUs; 0: not measured, as for its own slot). Unmeasured pairs are
  // estimated as a copy staged through pinned host memory (peer_time_us).
  std::vector<double> peer_in_gbps;
};

struct MachineProfile {
  static constexpr int kFormat = 1;
  // What the profile was measured on; a mismatch means "measure again".
  std::string host;
  std::string cpu_model;
  // The SIMD features kernels are chosen by ("avx2 fma avx512 ..."): a VM
  // moved to a host with fewer keeps its CPU model string but not these.
  std::string cpu_features;
  int threads = 1;
  std::string gpu_uuid;       // the first device's; empty without a GPU
  int driver_version = 0;
  std::string veda_version;
  std::string source = "defaults";  // "defaults", "calibrated", "cache", "file", "refreshed"
  double calibration_seconds = 0;
  // Other work disturbed every measurement pass: the figures are probably
  // too slow. Used meanwhile, and measured again once the machine is quiet.
  bool provisional = false;
  std::string calibration_note;  // "clean", or what disturbed it

  CpuProfile cpu;
  GpuProfile gpu;                      // the first device veda uses (slot 0)
  std::vector<GpuProfile> other_gpus;  // the second and later (slots 1, 2, ...)

  // The figures of the device in `slot`; the first device's for a slot the
  // profile does not describe (host-emulated devices in tests).
  const GpuProfile& gpu_at(std::size_t slot) const noexcept {
    return slot == 0 || slot > other_gpus.size() ? gpu : other_gpus[slot - 1];
  }
  // This profile as seen from the device in `slot`: its figures in `gpu`,
  // so the cost model predicts a call on that device with them.
  MachineProfile for_device(std::size_t slot) const;
  // Every device's UUID, slot order, '|' between: part of the identity.
  std::string device_uuids() const;

  std::string key() const;  // file-name-safe digest of the identifying fields
  std::string to_json() const;
  // Throws std::runtime_error naming what is wrong (syntax, missing field,
  // a speed that is not a number within its physical bounds, a wrong format
  // version).
  static MachineProfile from_json(const std::string& text);
};

// The documented analytic defaults (Config calibration Off), with GPU
// figures derived from each device's datasheet properties: `gpus` are the
// devices veda uses, slot order (empty without a usable GPU).
MachineProfile default_profile(const CpuInfo& cpu, int threads, const std::vector<const GpuDeviceInfo*>& gpus,
                               int driver_version);
// CpuInfo's features as MachineProfile::cpu_features spells them.
std::string cpu_feature_text(const CpuInfo& cpu);

// $XDG_CACHE_HOME/veda, else $HOME/.cache/veda; "" when neither is set: then
// there is no disk cache (no shared fallback such as /tmp, where another user
// could plant files). Callers check the directory with ensure_private_dir().
std::string profile_cache_dir();
std::string host_name();

// Reads a profile file (runtime/file_io.hpp's rules, at most kProfileMaxBytes);
// nullopt and `why` if it is missing ("no file"), not a regular file, too
// large, someone else's (with Owner::Me), corrupt or implausible.
std::optional<MachineProfile> load_profile(const std::string& path, std::string& why, Owner owner = Owner::Anyone);
// Writes `p` over `path` through a temporary (runtime/file_io.hpp:
// replace_file), creating missing directories (0700). A symbolic link,
// device node, FIFO, directory or another user's file at `path` is not
// replaced. False, and `why` if given, on any failure.
bool save_profile(const MachineProfile& p, const std::string& path, std::string* why = nullptr,
                  unsigned mode = 0600);

}  // namespace veda::detail
