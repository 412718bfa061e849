// veda/device.hpp — what the runtime found: CPU and CUDA devices.
//
// Plain value types filled in once at runtime start-up (veda::init or the
// first veda::get_runtime()). When no GPU is usable, GpuStatus says exactly
// why, so programs and `veda info` can report it.
//
// Thread-safety: values; read them from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace veda {

// Where a piece of work ran.
enum class Device { Cpu, Gpu };

struct CpuInfo {
  std::string model;          // brand string, e.g. "AMD EPYC 9B14"
  std::string vendor;         // "AuthenticAMD", "GenuineIntel", ...
  int hardware_threads = 1;   // what oneTBB may use in this process (affinity-aware)
  int threads = 1;            // what veda uses (Config::threads)
  bool avx2 = false;
  bool fma = false;
  bool avx512 = false;        // F + BW + DQ + VL
  bool avx512_bf16 = false;
};

struct GpuDeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;           // "GPU-xxxxxxxx-..." as nvidia-smi prints it
  int cc_major = 0;           // compute capability
  int cc_minor = 0;
  int sm_count = 0;
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width = 0;   // bits
  std::uint64_t memory_total = 0;
  std::uint64_t memory_free = 0;  // at discovery time
};

// Why no GPU is usable; None when one is.
enum class GpuUnavailable {
  None,
  NotBuilt,               // libveda was built without its CUDA backend
  DisabledByConfig,       // Config::builder().gpu(false)
  DisabledByEnvironment,  // VEDA_GPU=0
  NoDriver,               // no NVIDIA driver (libcuda.so.1) on this machine
  DriverTooOld,           // driver older than the CUDA runtime veda was built with
  NoDevice,               // driver present, no CUDA device
  DeviceOutOfRange,       // Config::device() names a device that does not exist
  DiscoveryFailed,        // the CUDA runtime returned another error
  DiscoveryTimedOut,      // the driver did not answer in time
  Emulated,               // a test replaced the GPU with the host-emulated device
};

struct GpuStatus {
  bool usable = false;
  GpuUnavailable why = GpuUnavailable::NotBuilt;
  std::string reason;          // human-readable, e.g. "no NVIDIA driver (libcuda.so.1 not found)"
  int runtime_version = 0;     // CUDA runtime, 1000*major + 10*minor; 0 without the backend
  int driver_version = 0;      // 0 when there is no driver
  int selected = -1;           // device index veda uses first (Config::device()), -1 when none
  std::vector<int> in_use;     // every device veda uses (Config::devices()), `selected` first
  std::vector<GpuDeviceInfo> devices;  // every device found, usable or not
};

// A GPU's live state as NVML reports it (Runtime::gpu_monitor()).
struct GpuMonitor {
  int index = -1;                 // CUDA device index (matched by UUID), -1 if CUDA does not see it
  std::string name;
  std::string uuid;
  std::uint64_t memory_used = 0;  // bytes, whole device (every process)
  std::uint64_t memory_free = 0;
  std::uint64_t memory_total = 0;
  int utilization_pct = -1;       // GPU busy share over NVML's last sample period; -1 unknown
  int memory_utilization_pct = -1;
  int temperature_c = -1;
};
struct GpuMonitorReport {
  bool available = false;         // NVML loaded and initialised
  std::string why_not;            // e.g. "NVML not found (libnvidia-ml.so.1)"
  std::vector<GpuMonitor> devices;
};

std::string to_string(Device d);
std::string to_string(GpuUnavailable why);

}  // namespace veda
