#include "backends/cuda/stream_pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"

namespace veda::detail::cuda {
namespace {

// Device buffers of one pipeline stage, returned to the pool on every path.
struct StageBuffers {
  MemoryPool& pool;
  cudaStream_t stream;
  std::vector<void*> in;
  void* out = nullptr;
  StageBuffers(MemoryPool& p, cudaStream_t s) : pool(p), stream(s) {}
  ~StageBuffers() {
    for (void* b : in) pool.deallocate(b, stream);
    if (out) pool.deallocate(out, stream);
  }
};

}  // namespace

void serial_map(CudaDevice& dev, std::span<const PipelineInput> inputs, void* host_out,
                std::size_t out_elem_bytes, std::size_t n, ChunkLaunch launch, void* ctx) {
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(dev.stream());
  StageBuffers buf(dev.pool(), s);
  for (const auto& in : inputs) buf.in.push_back(dev.pool().allocate(n * in.elem_bytes, s));
  buf.out = dev.pool().allocate(n * out_elem_bytes, s);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    dev.copy_to_device(buf.in[i], inputs[i].host, n * inputs[i].elem_bytes, s, false);
  launch(ctx, buf.in.data(), buf.out, n, s);
  launched("kernel launch");
  dev.copy_to_host(host_out, buf.out, n * out_elem_bytes, s, false);
}

void pipelined_map(CudaDevice& dev, std::span<const PipelineInput> inputs, void* host_out,
                   std::size_t out_elem_bytes, std::size_t n, ChunkLaunch launch, void* ctx) {
  if (n == 0) return;
  StagingPool& staging = dev.staging();
  const std::size_t per_stage = inputs.size() + 1;
  const std::size_t stages = std::min<std::size_t>(3, staging.slot_count() / per_stage);
  std::size_t widest = out_elem_bytes;
  for (const auto& in : inputs) widest = std::max(widest, in.elem_bytes);
  const std::size_t chunk = stages ? staging.slot_bytes() / widest : 0;
  if (stages == 0 || chunk == 0 || n <= chunk) {
    serial_map(dev, inputs, host_out, out_elem_bytes, n, launch, ctx);
    return;
  }
  dev.make_current();
  auto slots = staging.acquire(stages * per_stage);
  struct Stage {
    std::vector<StagingPool::Slot*> in;
    StagingPool::Slot* out;
    std::unique_ptr<StageBuffers> dev;
    std::size_t pending_first = 0, pending_count = 0;  // chunk awaiting copy-out
  };
  std::vector<Stage> st(stages);
  try {
    for (std::size_t d = 0; d < stages; ++d) {
      auto s = static_cast<cudaStream_t>(dev.pipeline_stream(d));
      st[d].in.assign(slots.begin() + static_cast<long>(d * per_stage),
                      slots.begin() + static_cast<long>(d * per_stage + inputs.size()));
      st[d].out = slots[d * per_stage + inputs.size()];
      st[d].dev = std::make_unique<StageBuffers>(dev.pool(), s);
      for (const auto& in : inputs) st[d].dev->in.push_back(dev.pool().allocate(chunk * in.elem_bytes, s));
      st[d].dev->out = dev.pool().allocate(chunk * out_elem_bytes, s);
    }
    auto drain = [&](Stage& stage) {
      if (!stage.pending_count) return;
      check(cudaEventSynchronize(stage.out->done), "cudaEventSynchronize");
      dev.host_copy(static_cast<char*>(host_out) + stage.pending_first * out_elem_bytes,
                    stage.out->ptr, stage.pending_count * out_elem_bytes);
      stage.pending_count = 0;
    };
    for (std::size_t first = 0, i = 0; first < n; first += chunk, ++i) {
      Stage& stage = st[i % stages];
      const std::size_t count = std::min(chunk, n - first);
      auto s = stage.dev->stream;
      drain(stage);  // this stage's previous chunk must leave its slots first
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        const std::size_t bytes = count * inputs[k].elem_bytes;
        check(cudaEventSynchronize(stage.in[k]->done), "cudaEventSynchronize");
        dev.host_copy(stage.in[k]->ptr,
                      static_cast<const char*>(inputs[k].host) + first * inputs[k].elem_bytes, bytes);
        check(cudaMemcpyAsync(stage.dev->in[k], stage.in[k]->ptr, bytes, cudaMemcpyHostToDevice, s),
              "cudaMemcpyAsync H2D");
        check(cudaEventRecord(stage.in[k]->done, s), "cudaEventRecord");
      }
      const std::uint64_t span = dev.telemetry ? dev.trace_begin(s) : 0;  // the chunk's kernel, on its stream
      launch(ctx, stage.dev->in.data(), stage.dev->out, count, s);
      launched("kernel launch");
      if (span) dev.trace_end(span, s, SpanKind::GpuCall, "streamed chunk", 0);
      check(cudaMemcpyAsync(stage.out->ptr, stage.dev->out, count * out_elem_bytes,
                            cudaMemcpyDeviceToHost, s),
            "cudaMemcpyAsync D2H");
      check(cudaEventRecord(stage.out->done, s), "cudaEventRecord");
      stage.pending_first = first;
      stage.pending_count = count;
    }
    for (auto& stage : st) drain(stage);
  } catch (...) {
    for (std::size_t d = 0; d < stages; ++d) cudaStreamSynchronize(static_cast<cudaStream_t>(dev.pipeline_stream(d)));
    st.clear();
    staging.release(slots);
    throw;
  }
  st.clear();
  staging.release(slots);
}

}  // namespace veda::detail::cuda
