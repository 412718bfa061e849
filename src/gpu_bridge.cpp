// gpu_bridge: libveda's CUDA backend as seen from nvcc-compiled call sites.
#include "veda/build_config.hpp"
#if VEDA_HAS_CUDA
#include "veda/detail/gpu_bridge.hpp"

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/reduce_ops.hpp"
#include "backends/cuda/stream_pipeline.hpp"
#include "runtime/placement.hpp"
#include "runtime/runtime_state.hpp"
#include "src/operands.hpp"
#include "veda/runtime.hpp"

namespace veda::detail::gpu_bridge {
// Every GPU call takes its stream first, which makes the device current on
// the launching thread; the calls after it need only the device.
void* stream(Runtime& rt) { return cuda_device(rt).stream(); }
std::size_t thread_device() noexcept { return RuntimeState::thread_device(); }
void set_thread_device(std::size_t slot) noexcept { RuntimeState::set_thread_device(slot); }
std::vector<DeviceShare> share_devices(Runtime& rt, const Plan& p) {
  const double us = p.bucket ? p.bucket->gpu_us.load(std::memory_order_relaxed) : 0;
  return take_shares(rt.state(), RuntimeState::thread_device(), p.gpu_devices, us);
}
void shares_done(Runtime& rt, const std::vector<DeviceShare>& shares) noexcept { release_shares(rt.state(), shares); }
int sm_count(Runtime& rt) { return runtime_cuda_device(rt).info().sm_count; }
const void* read(Runtime& rt, Buffer& b, void* s) { return b.device_read(runtime_cuda_device(rt), s); }
void* write(Runtime& rt, Buffer& b, void* s, bool keep) { return b.device_write(runtime_cuda_device(rt), s, keep); }
void done(Buffer& b, void* s) { b.device_done(s); }

void* allocate(Runtime& rt, std::size_t bytes, void* s) { return runtime_cuda_device(rt).pool().allocate(bytes, s); }
void deallocate(Runtime& rt, void* p, void* s) noexcept {
  try {
    runtime_cuda_device(rt).pool().deallocate(p, s);
  } catch (...) {  // only a foreign pointer throws; nothing to release then
  }
}
void copy_in(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* s, bool pinned) {
  runtime_cuda_device(rt).copy_to_device(dst, src, bytes, s, pinned);
}
void copy_out(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* s, bool pinned) {
  runtime_cuda_device(rt).copy_to_host(dst, src, bytes, s, pinned);
}
void copy_device(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* s) {
  runtime_cuda_device(rt).copy_on_device(dst, src, bytes, s);
}
void synchronize(Runtime& rt, void* s) { runtime_cuda_device(rt).synchronize(s); }
void check_launch(const char* what) { cuda::launched(what); }
void check(int cuda_error, const char* what) { cuda::check(static_cast<cudaError_t>(cuda_error), what); }

void reduce_builtin(Runtime& rt, ReduceKind kind, ScalarType type, const void* in, std::size_t n,
                    void* host_result, void* s) {
  cuda::reduce_builtin(kind, type, in, n, host_result, runtime_cuda_device(rt), static_cast<cudaStream_t>(s));
}

void pipelined_map(Runtime& rt, const StreamInput* inputs, std::size_t n_inputs, void* host_out,
                   std::size_t out_elem_bytes, std::size_t n, ChunkLaunch launch, void* ctx) {
  std::vector<cuda::PipelineInput> in(n_inputs);
  for (std::size_t i = 0; i < n_inputs; ++i) in[i] = {inputs[i].host, inputs[i].elem_bytes};
  // ChunkLaunch takes the stream as void*; the pipeline passes cudaStream_t.
  struct Adapter {
    ChunkLaunch launch;
    void* ctx;
  } a{launch, ctx};
  cuda::pipelined_map(runtime_cuda_device(rt), in, host_out, out_elem_bytes, n,
                      [](void* c, const void* const* i, void* o, std::size_t count, cudaStream_t s) {
                        auto* ad = static_cast<Adapter*>(c);
                        ad->launch(ad->ctx, i, o, count, s);
                      },
                      &a);
}

}  // namespace veda::detail::gpu_bridge
#endif
