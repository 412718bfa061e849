// Probes the CUDA driver and devices. Never throws; every failure becomes a
// GpuStatus with the exact reason (no driver, driver too old, no device, ...).
#pragma once

#include "veda/device.hpp"

namespace veda::detail::cuda {

// `wanted` is Config::device(); the returned status is usable only if that
// device exists.
GpuStatus probe(int wanted);

}  // namespace veda::detail::cuda
