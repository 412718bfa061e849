// Element-wise expressions on the GPU: a kernel generated from the planned
// expression (veda/detail/expr_nodes.hpp: ExprCall), compiled at run time by
// NVRTC, and cached three ways: loaded kernels in memory for the process,
// compiled images on disk (<profile cache dir>/kernels, private, checked
// against their source on load), and NVRTC itself only on a miss.
//
// The kernel takes one parameter block (every field 8 bytes: the output,
// each leaf's pointer and strides, the extents, the element count, the
// scalars), so values never change the source: one compile serves every
// call of an expression structure with the same element types, planned
// dimension count and GPU architecture.
//
// Thread-safety: all functions may be called concurrently; compiles are
// serialised.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "backends/cuda/cuda_device.hpp"
#include "veda/detail/expr_nodes.hpp"

namespace veda::detail::cuda {

// The kernel's CUDA source for a planned call.
std::string expr_kernel_source(const ExprCall& c);

// NVRTC's output for `source` on compute capability `arch` (e.g. 90): a
// CUBIN for an architecture NVRTC knows, otherwise PTX for the newest one
// it does (the driver finishes it). DeviceFault with NVRTC's log on failure.
struct ExprImage {
  std::string bytes;
  bool ptx = false;
};
ExprImage compile_expr(const std::string& source, int arch);

// Whether the call's kernel fits the parameter block the driver accepts.
bool expr_fits_kernel(const ExprCall& c);

// The expected one-off cost, in microseconds, of getting the call's kernel on
// `dev`, spread over the calls this kernel's key has seen (each query
// counts one): 0 once loaded; a disk load or a compile (the latest measured
// ones, or 2 ms and 200 ms before any) otherwise.
double expr_setup_us(const CudaDevice& dev, const ExprCall& c);

// Runs the call on `s`: in[k] is leaf k's device pointer. Compiles or loads
// the kernel first if this process has not yet (timed; logged at info).
void launch_expr(const CudaDevice& dev, const ExprCall& c, const void* const* in, void* out, cudaStream_t s);

}  // namespace veda::detail::cuda
