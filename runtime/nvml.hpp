// NVML, loaded at run time (libnvidia-ml.so.1 comes with the driver, so a
// machine without one just reports that NVML is unavailable). Only the few
// calls veda needs are declared here, with NVML's stable C ABI.
//
// Thread-safety: read_nvml() may be called from any thread; NVML is
// initialised once and left initialised for the life of the process.
#pragma once

#include "veda/device.hpp"

namespace veda::detail {

// `cuda` (the CUDA devices veda found) maps NVML devices to CUDA indices by UUID.
GpuMonitorReport read_nvml(const std::vector<GpuDeviceInfo>& cuda);

}  // namespace veda::detail
