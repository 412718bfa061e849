// check(): turns a failed CUDA runtime call into veda::DeviceError naming
// the call and the error, after clearing CUDA's sticky last-error state.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "veda/error.hpp"

namespace veda::detail::cuda {

inline void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw DeviceError(std::string(what) + " failed: " + cudaGetErrorString(err));
}

}  // namespace veda::detail::cuda
