#include "backends/cuda/cuda_discovery.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace veda::detail::cuda {
namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string uuid_text(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

// The driver library is loaded by cudart itself; looking for it first lets us
// tell "no driver" from "driver too old", which cudart reports with one code.
bool driver_library_present() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!h) return false;
  dlclose(h);
  return true;
}

}  // namespace

GpuStatus probe(int wanted) {
  GpuStatus s;
  cudaRuntimeGetVersion(&s.runtime_version);
  cudaDriverGetVersion(&s.driver_version);
  if (!driver_library_present() || s.driver_version == 0) {
    s.why = GpuUnavailable::NoDriver;
    s.reason = "no NVIDIA driver (libcuda.so.1 not found)";
    return s;
  }
  if (driver_major_too_old(s.driver_version, s.runtime_version)) {
    s.why = GpuUnavailable::DriverTooOld;
    s.reason = "NVIDIA driver supports CUDA " + version_text(s.driver_version) +
               ", older than the CUDA runtime " + version_text(s.runtime_version) +
               " veda was built with";
    return s;
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) {
    s.why = GpuUnavailable::NoDevice;
    s.reason = "no CUDA device found";
    return s;
  }
  if (err == cudaErrorInsufficientDriver) {
    s.why = GpuUnavailable::DriverTooOld;
    s.reason = std::string("NVIDIA driver too old: ") + cudaGetErrorString(err);
    return s;
  }
  if (err != cudaSuccess) {
    s.why = GpuUnavailable::DiscoveryFailed;
    s.reason = std::string("CUDA device discovery failed: ") + cudaGetErrorString(err);
    return s;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    GpuDeviceInfo g;
    g.index = d;
    g.name = p.name;
    g.uuid = uuid_text(p.uuid);
    g.cc_major = p.major;
    g.cc_minor = p.minor;
    g.sm_count = p.multiProcessorCount;
    cudaDeviceGetAttribute(&g.clock_khz, cudaDevAttrClockRate, d);
    cudaDeviceGetAttribute(&g.memory_clock_khz, cudaDevAttrMemoryClockRate, d);
    g.memory_bus_width = p.memoryBusWidth;
    g.memory_total = p.totalGlobalMem;
    s.devices.push_back(g);
  }
  if (wanted >= static_cast<int>(s.devices.size())) {
    s.why = GpuUnavailable::DeviceOutOfRange;
    s.reason = "Config::device() is " + std::to_string(wanted) + " but only " +
               std::to_string(s.devices.size()) + " CUDA device(s) exist";
    return s;
  }
  // Creating the context here (cudaMemGetInfo) moves its cost to start-up.
  std::size_t free_b = 0, total_b = 0;
  if (cudaSetDevice(wanted) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    s.why = GpuUnavailable::DiscoveryFailed;
    s.reason = "could not create a CUDA context on device " + std::to_string(wanted);
    return s;
  }
  s.devices[static_cast<std::size_t>(wanted)].memory_free = free_b;
  s.usable = true;
  s.why = GpuUnavailable::None;
  s.selected = wanted;
  s.reason = "using " + s.devices[static_cast<std::size_t>(wanted)].name;
  return s;
}

}  // namespace veda::detail::cuda
