#include "backends/cuda/cuda_device.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include <nvtx3/nvToolsExt.h>

#include "backends/cuda/cuda_check.hpp"
#include "runtime/fault_injection.hpp"

namespace veda::detail::cuda {

// ---------------------------------------------------------------- upstream
namespace {
// The pool of one device may be used while another is the thread's current
// one (an Array freeing its copy on another GPU in the middle of a call):
// its device is made current for the CUDA call, and the caller's restored.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) noexcept {
    if (cudaGetDevice(&prev_) != cudaSuccess || prev_ == device) {
      prev_ = -1;
      return;
    }
    cudaSetDevice(device);
  }
  ~DeviceGuard() {
    if (prev_ >= 0) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};
}  // namespace

CudaUpstream::~CudaUpstream() {
  for (cudaEvent_t e : spare_) cudaEventDestroy(e);
}

void* CudaUpstream::allocate(std::size_t bytes) noexcept {
  void* p = nullptr;
  DeviceGuard on(device_);
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it
    return nullptr;
  }
  return p;
}

void CudaUpstream::deallocate(void* p, std::size_t) noexcept {
  DeviceGuard on(device_);
  cudaFree(p);
}

EventHandle CudaUpstream::record(StreamHandle stream) noexcept {
  cudaEvent_t e = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!spare_.empty()) {
      e = spare_.back();
      spare_.pop_back();
    }
  }
  DeviceGuard on(device_);  // events belong to the current device; any thread frees blocks
  if (!e && cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) e = nullptr;
  if (e && cudaEventRecord(e, static_cast<cudaStream_t>(stream)) == cudaSuccess) return e;
  // No event: make the block safe for any stream by waiting now.
  cudaGetLastError();
  if (e) release(e);
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  return nullptr;
}

bool CudaUpstream::ready(EventHandle e) noexcept {
  const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e));
  if (r == cudaErrorNotReady) return false;
  if (r != cudaSuccess) cudaGetLastError();
  return true;
}

void CudaUpstream::release(EventHandle e) noexcept {
  if (!e) return;
  std::lock_guard lock(mu_);
  spare_.push_back(static_cast<cudaEvent_t>(e));
}

void CudaUpstream::synchronize() noexcept {
  DeviceGuard on(device_);
  cudaDeviceSynchronize();
}

// ---------------------------------------------------------------- device
namespace {
PoolOptions pool_options(const Config& c, std::uint64_t total) {
  PoolOptions o;
  o.limit = static_cast<std::size_t>(c.memory_pool_limit().resolve(total));
  return o;
}
}  // namespace

CudaDevice::CudaDevice(const GpuDeviceInfo& info, const Config& config, HostCopy host_copy)
    : info_(info),
      upstream_(info.index),
      pool_(upstream_, pool_options(config, info.memory_total)),
      staging_((make_current(), config.pinned_staging()), kStagingSlot),  // on this device
      host_copy_(std::move(host_copy)) {
  streams_.resize(kStreams);
  pipeline_.resize(kPipelineStreams);
  for (auto* list : {&streams_, &pipeline_})
    for (auto& s : *list) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
}

// Never throws: a destructor that throws ends the process. When the CUDA
// runtime is already unloading (a program that exits without shutdown() and
// outlives veda's atexit handler), the streams and memory die with the
// process, so nothing is released by hand.
CudaDevice::~CudaDevice() {
  evict_all();  // never throws; a buffer that cannot be copied back is reported and dropped
  if (cudaSetDevice(info_.index) != cudaSuccess) return;
  cudaDeviceSynchronize();
  for (auto s : streams_) cudaStreamDestroy(s);
  for (auto s : pipeline_) cudaStreamDestroy(s);
  cudaGetLastError();
}

void CudaDevice::make_current() const { check(cudaSetDevice(info_.index), "cudaSetDevice"); }

StreamHandle CudaDevice::stream() noexcept {
  static std::atomic<unsigned> next{0};
  thread_local unsigned mine = next.fetch_add(1, std::memory_order_relaxed);
  return streams_[mine % streams_.size()];
}

void CudaDevice::copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle sh,
                                bool host_pinned) {
  if (bytes == 0) return;
  fault_point(FaultKind::Copy, "host-to-device copy");
  CopyTrace trace(*this, sh, SpanKind::H2D, bytes);
  make_current();
  auto s = static_cast<cudaStream_t>(sh);
  if (host_pinned || bytes <= kDirectCopyMax || !staging_.enabled()) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync H2D");
    return;
  }
  // Chunks rotate through a few slots: while the DMA of chunk i runs, the CPU
  // copies chunk i+1 into the next slot.
  const std::size_t chunk = staging_.slot_bytes();
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  auto slots = staging_.acquire(std::min<std::size_t>(chunks, 3));
  try {
    for (std::size_t i = 0, off = 0; off < bytes; ++i, off += chunk) {
      auto* slot = slots[i % slots.size()];
      const std::size_t len = std::min(chunk, bytes - off);
      check(cudaEventSynchronize(slot->done), "cudaEventSynchronize");
      host_copy_(slot->ptr, static_cast<const char*>(src) + off, len);
      check(cudaMemcpyAsync(static_cast<char*>(dst) + off, slot->ptr, len, cudaMemcpyHostToDevice, s),
            "cudaMemcpyAsync H2D");
      check(cudaEventRecord(slot->done, s), "cudaEventRecord");
    }
  } catch (...) {
    staging_.release(slots);
    throw;
  }
  staging_.release(slots);  // later users wait for each slot's `done` first
}

void CudaDevice::copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle sh,
                              bool host_pinned) {
  if (bytes == 0) return;
  fault_point(FaultKind::Copy, "device-to-host copy");
  CopyTrace trace(*this, sh, SpanKind::D2H, bytes);
  make_current();
  auto s = static_cast<cudaStream_t>(sh);
  if (host_pinned || bytes <= kDirectCopyMax || !staging_.enabled()) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync D2H");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    return;
  }
  // Keep `depth` chunk DMAs queued ahead of the CPU copy-out.
  const std::size_t chunk = staging_.slot_bytes();
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  auto slots = staging_.acquire(std::min<std::size_t>(chunks, 3));
  const std::size_t depth = slots.size();
  auto issue = [&](std::size_t i) {
    auto* slot = slots[i % depth];
    const std::size_t off = i * chunk, len = std::min(chunk, bytes - off);
    check(cudaEventSynchronize(slot->done), "cudaEventSynchronize");
    check(cudaMemcpyAsync(slot->ptr, static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync D2H");
    check(cudaEventRecord(slot->done, s), "cudaEventRecord");
  };
  try {
    for (std::size_t i = 0; i < std::min(depth, chunks); ++i) issue(i);
    for (std::size_t i = 0; i < chunks; ++i) {
      auto* slot = slots[i % depth];
      const std::size_t off = i * chunk, len = std::min(chunk, bytes - off);
      check(cudaEventSynchronize(slot->done), "cudaEventSynchronize");
      host_copy_(static_cast<char*>(dst) + off, slot->ptr, len);
      if (i + depth < chunks) issue(i + depth);
    }
  } catch (...) {
    staging_.release(slots);
    throw;
  }
  staging_.release(slots);
}

void CudaDevice::copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle s) {
  if (bytes == 0) return;
  fault_point(FaultKind::Copy, "device-to-device copy");
  CopyTrace trace(*this, s, SpanKind::D2D, bytes);
  make_current();
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s)),
        "cudaMemcpyAsync D2D");
}

bool CudaDevice::reaches(const DeviceApi& to) const {
  return &to != this && dynamic_cast<const CudaDevice*>(&to) != nullptr;
}

void CudaDevice::copy_to_peer(void* dst, DeviceApi& to, const void* src, std::size_t bytes, StreamHandle s) {
  if (bytes == 0) return;
  fault_point(FaultKind::Copy, "device-to-device copy");
  make_current();  // s is this device's stream, and the trace's events are this device's
  CopyTrace trace(*this, s, SpanKind::D2D, bytes);
  check(cudaMemcpyPeerAsync(dst, to.index(), src, info_.index, bytes, static_cast<cudaStream_t>(s)),
        "cudaMemcpyPeerAsync");
}

std::vector<std::string> enable_peer_access(const std::vector<CudaDevice*>& devices) {
  std::vector<std::string> lines;
  for (CudaDevice* a : devices)
    for (CudaDevice* b : devices) {
      if (a->index() >= b->index()) continue;
      int ab = 0, ba = 0;
      cudaDeviceCanAccessPeer(&ab, a->index(), b->index());
      cudaDeviceCanAccessPeer(&ba, b->index(), a->index());
      bool on = ab && ba;
      for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
        if (!on) break;
        from->make_current();
        const cudaError_t e = cudaDeviceEnablePeerAccess(to->index(), 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) on = false;
        cudaGetLastError();  // (clears AlreadyEnabled, not sticky)
      }
      lines.push_back("GPU " + std::to_string(a->index()) + " <-> GPU " + std::to_string(b->index()) +
                      (on ? ": peer access (direct copies)" : ": no peer access (copies staged through the host)"));
    }
  return lines;
}

EventHandle CudaDevice::record(StreamHandle s) { return upstream_.record(s); }

// ---------------------------------------------------------------- tracing
std::uint64_t CudaDevice::trace_begin(StreamHandle s) { return tracer_.begin(static_cast<cudaStream_t>(s)); }

void CudaDevice::trace_end(std::uint64_t token, StreamHandle s, SpanKind kind, const std::string& label,
                           std::size_t bytes) {
  if (!telemetry) return;
  int track = 0;  // the stream's index: its track in the trace
  for (std::size_t i = 0; i < streams_.size(); ++i)
    if (streams_[i] == s) track = static_cast<int>(i);
  for (std::size_t i = 0; i < pipeline_.size(); ++i)
    if (pipeline_[i] == s) track = static_cast<int>(streams_.size() + i);
  tracer_.end(token, static_cast<cudaStream_t>(s), track, kind, label, bytes, *telemetry);
}

void CudaDevice::flush_trace() {
  if (telemetry) tracer_.flush(*telemetry);
}

// NVTX ranges: cheap when no profiler is attached (a function-pointer check).
std::uint64_t CudaDevice::range_start(const char* name) noexcept { return nvtxRangeStartA(name); }
void CudaDevice::range_end(std::uint64_t id) noexcept { nvtxRangeEnd(id); }

void CudaDevice::stream_wait(StreamHandle s, EventHandle e) {
  if (e) check(cudaStreamWaitEvent(static_cast<cudaStream_t>(s), static_cast<cudaEvent_t>(e), 0),
               "cudaStreamWaitEvent");
}

void CudaDevice::host_wait(EventHandle e) {
  if (e) check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize");
}

void CudaDevice::release(EventHandle e) noexcept { upstream_.release(e); }

void CudaDevice::synchronize(StreamHandle s) {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize");
}

DeviceMemoryInfo CudaDevice::memory_info() {
  std::size_t free_b = 0, total_b = 0;
  make_current();
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  return {free_b, total_b};
}

}  // namespace veda::detail::cuda
