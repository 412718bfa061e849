// gpu_bridge: libveda's CUDA backend as seen from nvcc-compiled call sites.
#include "veda/build_config.hpp"
#if VEDA_HAS_CUDA
#include "veda/detail/gpu_bridge.hpp"

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/reduce_ops.hpp"
#include "backends/cuda/stream_pipeline.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/runtime.hpp"

namespace veda::detail::gpu_bridge {
namespace {
cuda::CudaDevice& dev(Runtime& rt) {
  auto* d = dynamic_cast<cuda::CudaDevice*>(rt.state().device());
  if (!d) throw DeviceFault("veda: no CUDA device in this runtime");  // the call falls back to the CPU
  return *d;
}
}  // namespace

// Every GPU call takes its stream first, on the thread that launches: the
// device is made current there once (a thread starts on device 0, where
// another device's streams and events fail).
void* stream(Runtime& rt) {
  auto& d = dev(rt);
  d.make_current();
  return d.stream();
}
int sm_count(Runtime& rt) { return dev(rt).info().sm_count; }
const void* read(Runtime& rt, Buffer& b, void* s) { return b.device_read(dev(rt), s); }
void* write(Runtime& rt, Buffer& b, void* s, bool keep) { return b.device_write(dev(rt), s, keep); }
void done(Buffer& b, void* s) { b.device_done(s); }

void* allocate(Runtime& rt, std::size_t bytes, void* s) { return dev(rt).pool().allocate(bytes, s); }
void deallocate(Runtime& rt, void* p, void* s) noexcept {
  try {
    dev(rt).pool().deallocate(p, s);
  } catch (...) {  // only a foreign pointer throws; nothing to release then
  }
}
void copy_in(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* s, bool pinned) {
  dev(rt).copy_to_device(dst, src, bytes, s, pinned);
}
void copy_out(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* s, bool pinned) {
  dev(rt).copy_to_host(dst, src, bytes, s, pinned);
}
void copy_device(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* s) {
  dev(rt).copy_on_device(dst, src, bytes, s);
}
void synchronize(Runtime& rt, void* s) { dev(rt).synchronize(s); }
void check_launch(const char* what) { cuda::check(cudaGetLastError(), what); }
void check(int cuda_error, const char* what) { cuda::check(static_cast<cudaError_t>(cuda_error), what); }

void reduce_builtin(Runtime& rt, ReduceKind kind, ScalarType type, const void* in, std::size_t n,
                    void* host_result, void* s) {
  cuda::reduce_builtin(kind, type, in, n, host_result, dev(rt), static_cast<cudaStream_t>(s));
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
  cuda::pipelined_map(dev(rt), in, host_out, out_elem_bytes, n,
                      [](void* c, const void* const* i, void* o, std::size_t count, cudaStream_t s) {
                        auto* ad = static_cast<Adapter*>(c);
                        ad->launch(ad->ctx, i, o, count, s);
                      },
                      &a);
}

}  // namespace veda::detail::gpu_bridge
#endif
