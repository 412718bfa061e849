// Probes the CUDA driver and devices. Never throws; every failure becomes a
// GpuStatus with the exact reason (no driver, driver too old, no device, ...).
#pragma once

#include "veda/device.hpp"

namespace veda::detail::cuda {

// `wanted` is Config::device(); the returned status is usable only if that
// device exists.
GpuStatus probe(int wanted);

// The version gate, before any device call: only a driver of an older major
// version than the runtime is refused. Within a major version CUDA's minor
// version compatibility runs the SASS veda ships (a 12.8 runtime on a 12.4
// driver); whatever the driver still lacks, cudaGetDeviceCount reports as
// cudaErrorInsufficientDriver. Versions as CUDA writes them (12040 = 12.4).
constexpr bool driver_major_too_old(int driver_version, int runtime_version) {
  return driver_version / 1000 < runtime_version / 1000;
}

}  // namespace veda::detail::cuda
