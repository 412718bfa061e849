// check(): turns a failed CUDA runtime call into veda::DeviceError naming
// the call and the error, after clearing CUDA's sticky last-error state.
// launched(): the same for the launch of a call's device work, which it then
// counts (Runtime::device_launches).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "runtime/launch_count.hpp"
#include "veda/error.hpp"

namespace veda::detail::cuda {

inline void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw DeviceError(std::string(what) + " failed: " + cudaGetErrorString(err));
}

inline void launched(cudaError_t err, const char* what) {
  check(err, what);
  count_launch();
}
inline void launched(const char* what) { launched(cudaGetLastError(), what); }

}  // namespace veda::detail::cuda
