// Decides whether a GPU is usable for this runtime and why not: the build,
// the Config/environment, then the CUDA probe (bounded in time, never throws).
#pragma once

#include "veda/config.hpp"
#include "veda/device.hpp"

namespace veda::detail {

GpuStatus discover_gpu(const Config& config);

}  // namespace veda::detail
