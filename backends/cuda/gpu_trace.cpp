#include "backends/cuda/gpu_trace.hpp"

#include "runtime/clock.hpp"
#include "runtime/telemetry.hpp"

namespace veda::detail::cuda {

GpuTracer::~GpuTracer() {
  for (cudaEvent_t e : open_)
    if (e) cudaEventDestroy(e);
  for (auto& p : pending_) {
    cudaEventDestroy(p.begin);
    cudaEventDestroy(p.end);
  }
  if (ref_) cudaEventDestroy(ref_);
}

std::uint64_t GpuTracer::begin(cudaStream_t s) {
  std::lock_guard lock(mu_);
  if (!ref_) {
    // On the traced (non-blocking) stream: the legacy default stream may hold
    // the program's own work, which would shift every span.
    if (cudaEventCreate(&ref_) != cudaSuccess || cudaEventRecord(ref_, s) != cudaSuccess ||
        cudaEventSynchronize(ref_) != cudaSuccess) {
      cudaGetLastError();
      ref_ = nullptr;
      return 0;
    }
    ref_host_ns_ = now_ns();
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess || cudaEventRecord(e, s) != cudaSuccess) {
    cudaGetLastError();
    if (e) cudaEventDestroy(e);
    return 0;
  }
  open_.push_back(e);
  return open_.size();
}

void GpuTracer::end(std::uint64_t token, cudaStream_t s, int track, SpanKind kind, const std::string& label,
                    std::size_t bytes, Telemetry& sink) {
  if (token == 0) return;
  std::lock_guard lock(mu_);
  cudaEvent_t b = open_[token - 1];
  open_[token - 1] = nullptr;
  while (!open_.empty() && !open_.back()) open_.pop_back();
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess || cudaEventRecord(e, s) != cudaSuccess) {
    cudaGetLastError();
    cudaEventDestroy(b);
    if (e) cudaEventDestroy(e);
    return;
  }
  pending_.push_back({b, e, track, kind, label, bytes});
  if (pending_.size() >= kFlushAt) flush_locked(sink);
}

void GpuTracer::flush(Telemetry& sink) {
  std::lock_guard lock(mu_);
  flush_locked(sink);
}

void GpuTracer::flush_locked(Telemetry& sink) {
  auto host_ns = [&](cudaEvent_t x) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, ref_, x) != cudaSuccess) cudaGetLastError();
    return ref_host_ns_ + static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  };
  for (auto& p : pending_) {
    if (cudaEventSynchronize(p.end) == cudaSuccess) {
      Span span;
      span.begin_ns = host_ns(p.begin);
      span.end_ns = host_ns(p.end);
      span.kind = p.kind;
      span.track = p.track;
      span.bytes = p.bytes;
      span.label = std::move(p.label);
      sink.add_span(std::move(span));
    } else {
      cudaGetLastError();
    }
    cudaEventDestroy(p.begin);
    cudaEventDestroy(p.end);
  }
  pending_.clear();
}

}  // namespace veda::detail::cuda
