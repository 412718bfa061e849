// The device work veda's calls have queued: kernels, CUB algorithms, cuBLAS
// and cuSPARSE calls, generated expression kernels and user CUDA
// implementations, each counted once its launch succeeded (calibration's own
// kernels are not). Runtime::device_launches() reads it, so a GPU test can
// prove that a call's work ran on the device and not on a CPU fallback.
//
// Thread-safety: both functions may be called from any thread at once.
#pragma once

#include <cstdint>

namespace veda::detail {

void count_launch() noexcept;
std::uint64_t launch_count() noexcept;  // since the process started

}  // namespace veda::detail
