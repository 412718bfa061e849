// pipelined_map: runs an element-wise kernel over host arrays in chunks, so
// that for successive chunks the CPU copy into pinned staging, the H2D DMA,
// the kernel and the D2H DMA overlap (on up to three streams, one per chunk
// in flight). Used for large GPU maps over pageable host data; the output
// lands in host memory, in order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

namespace veda::detail::cuda {

class CudaDevice;

struct PipelineInput {
  const void* host;        // n elements of elem_bytes each
  std::size_t elem_bytes;
};

// Launches the kernel for one chunk: in[i] and out are device pointers to
// `count` elements; the work must be queued on `s`.
using ChunkLaunch = void (*)(void* ctx, const void* const* in, void* out, std::size_t count,
                             cudaStream_t s);

// Throws veda::OutOfMemory when the device buffers cannot be allocated
// (nothing has been written to host_out then) and veda::DeviceError on a
// CUDA failure.
void pipelined_map(CudaDevice& dev, std::span<const PipelineInput> inputs, void* host_out,
                   std::size_t out_elem_bytes, std::size_t n, ChunkLaunch launch, void* ctx);

// The same work done the simple way (copy everything in, one kernel, copy
// everything out), for comparison in benchmarks and as the fallback when
// staging is disabled.
void serial_map(CudaDevice& dev, std::span<const PipelineInput> inputs, void* host_out,
                std::size_t out_elem_bytes, std::size_t n, ChunkLaunch launch, void* ctx);

}  // namespace veda::detail::cuda
