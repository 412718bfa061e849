// GPU spans for telemetry: CUDA events with timing recorded around work
// queued on a stream, turned into host-clock spans later (flush), when the
// events have completed. A reference event, recorded and waited for once,
// ties the device clock to the host's.
//
// Thread-safety: begin/end/flush may be called concurrently.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device_api.hpp"

namespace veda::detail {
class Telemetry;
}

namespace veda::detail::cuda {

class GpuTracer {
 public:
  ~GpuTracer();
  std::uint64_t begin(cudaStream_t s);  // 0 when no event could be recorded
  void end(std::uint64_t token, cudaStream_t s, int track, SpanKind kind, const std::string& label,
           std::size_t bytes, Telemetry& sink);
  void flush(Telemetry& sink);  // waits for pending spans' events

 private:
  struct Pending {
    cudaEvent_t begin = nullptr, end = nullptr;
    int track = 0;
    SpanKind kind = SpanKind::GpuCall;
    std::string label;
    std::size_t bytes = 0;
  };
  static constexpr std::size_t kFlushAt = 8192;
  void flush_locked(Telemetry& sink);

  std::mutex mu_;
  cudaEvent_t ref_ = nullptr;
  std::int64_t ref_host_ns_ = 0;
  std::vector<cudaEvent_t> open_;  // begin events by token - 1
  std::vector<Pending> pending_;
};

}  // namespace veda::detail::cuda
