// What nvcc-compiled call sites (veda::gpu, gpu_kernel, par_iter GPU
// segments) need from libveda's CUDA backend: the device's stream and pool,
// operand residency, copies, and the chunked overlapped map. Declared always,
// defined only when libveda has its CUDA backend (VEDA_HAS_CUDA); callers
// reach them only from code compiled by nvcc against such a libveda.
//
// Every function throws veda::OutOfMemory when device memory runs out (the
// caller then falls back to the CPU) and veda::DeviceError on CUDA failures.
#pragma once

#include <cstddef>
#include <vector>

#include "veda/detail/buffer.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/reduce_kind.hpp"

namespace veda {
class Runtime;
namespace detail::gpu_bridge {

void* stream(Runtime& rt);                     // the calling thread's cudaStream_t
// The calling thread's device (a slot of the runtime's devices), and giving
// it to another thread: a helper running a call's GPU share uses the
// device the call was placed on.
std::size_t thread_device() noexcept;
void set_thread_device(std::size_t slot) noexcept;
// The devices a co-executed call's GPU part is split among: the calling
// thread's and up to p.gpu_devices - 1 more of its kind, the least busy
// first, each holding the call's predicted time in its backlog until
// shares_done.
std::vector<DeviceShare> share_devices(Runtime& rt, const Plan& p);
void shares_done(Runtime& rt, const std::vector<DeviceShare>& shares) noexcept;
int sm_count(Runtime& rt);
const void* read(Runtime& rt, Buffer& b, void* stream);               // device copy, up to date
void* write(Runtime& rt, Buffer& b, void* stream, bool keep_contents);  // host copy becomes stale
void done(Buffer& b, void* stream);                                  // after queuing work on b

void* allocate(Runtime& rt, std::size_t bytes, void* stream);
void deallocate(Runtime& rt, void* p, void* stream) noexcept;
void copy_in(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* stream, bool pinned);
void copy_out(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* stream, bool pinned);
void copy_device(Runtime& rt, void* dst, const void* src, std::size_t bytes, void* stream);
void synchronize(Runtime& rt, void* stream);
void check_launch(const char* what);           // throws DeviceError on a launch failure, else counts it
void check(int cuda_error, const char* what);  // a cudaError_t (e.g. CUB's); throws DeviceError unless 0

// Device scratch memory returned to the pool on scope exit (stream ordered).
class DeviceTemp {
 public:
  DeviceTemp(Runtime& rt, std::size_t bytes, void* stream)
      : rt_(&rt), s_(stream), p_(allocate(rt, bytes, stream)) {}
  ~DeviceTemp() {
    if (p_) deallocate(*rt_, p_, s_);
  }
  DeviceTemp(DeviceTemp&& o) noexcept : rt_(o.rt_), s_(o.s_), p_(o.p_) { o.p_ = nullptr; }
  DeviceTemp(const DeviceTemp&) = delete;
  DeviceTemp& operator=(const DeviceTemp&) = delete;
  DeviceTemp& operator=(DeviceTemp&&) = delete;
  void* get() const noexcept { return p_; }

 private:
  Runtime* rt_;
  void* s_;
  void* p_;
};

// Built-in sum/min/max over n device elements into *host_result (synchronous).
void reduce_builtin(Runtime& rt, ReduceKind kind, ScalarType type, const void* in, std::size_t n,
                    void* host_result, void* stream);

struct StreamInput {
  const void* host;
  std::size_t elem_bytes;
};
using ChunkLaunch = void (*)(void* ctx, const void* const* in, void* out, std::size_t count, void* stream);
void pipelined_map(Runtime& rt, const StreamInput* inputs, std::size_t n_inputs, void* host_out,
                   std::size_t out_elem_bytes, std::size_t n, ChunkLaunch launch, void* ctx);

}  // namespace detail::gpu_bridge
}  // namespace veda
