// CudaDevice: the DeviceApi of one CUDA device.
//
// Memory comes from a MemoryPool over CudaUpstream (cudaMalloc/cudaFree, with
// pooled events for stream ordering), limited by Config::memory_pool_limit.
// Each calling thread is given one of a few non-blocking streams, round
// robin, so threads do not serialise on one queue. Pageable host data moves in
// chunks through the StagingPool; pinned host data moves directly.
//
// Thread-safety: every member function may be called concurrently.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/gpu_trace.hpp"
#include "backends/cuda/staging.hpp"
#include "runtime/device_api.hpp"
#include "veda/config.hpp"
#include "veda/device.hpp"

namespace veda::detail::cuda {

class CudaUpstream final : public Upstream {
 public:
  explicit CudaUpstream(int device) : device_(device) {}
  ~CudaUpstream() override;
  void* allocate(std::size_t bytes) noexcept override;
  void deallocate(void* p, std::size_t bytes) noexcept override;
  EventHandle record(StreamHandle stream) noexcept override;
  bool ready(EventHandle e) noexcept override;
  void release(EventHandle e) noexcept override;
  void synchronize() noexcept override;

 private:
  int device_;
  std::mutex mu_;
  std::vector<cudaEvent_t> spare_;
};

// Turns on peer access between every pair of `devices` that supports it
// (cudaDeviceEnablePeerAccess, both directions), so that copies between
// them go over NVLink or PCIe directly; returns one line per pair saying
// which way their copies go.
class CudaDevice;
std::vector<std::string> enable_peer_access(const std::vector<CudaDevice*>& devices);

class CudaDevice final : public DeviceApi {
 public:
  static constexpr int kStreams = 4;
  static constexpr int kPipelineStreams = 3;
  static constexpr std::size_t kStagingSlot = std::size_t{4} << 20;
  // Copies below this size skip staging: one pageable cudaMemcpy is cheaper.
  static constexpr std::size_t kDirectCopyMax = std::size_t{256} << 10;

  // host_copy does the CPU side of staged transfers (veda passes a copy that
  // runs on its oneTBB workers: one thread cannot keep up with a Gen5 link).
  using HostCopy = std::function<void(void* dst, const void* src, std::size_t bytes)>;
  CudaDevice(const GpuDeviceInfo& info, const Config& config, HostCopy host_copy);
  ~CudaDevice() override;

  int index() const noexcept override { return info_.index; }
  std::string name() const override { return info_.name; }
  MemoryPool& pool() noexcept override { return pool_; }
  StreamHandle stream() noexcept override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle s,
                      bool host_pinned) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle s,
                    bool host_pinned) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle s) override;
  // Any other CUDA device: cudaMemcpyPeerAsync goes over the link with peer
  // access (enable_peer_access), else the driver stages it through the host.
  bool reaches(const DeviceApi& to) const override;
  void copy_to_peer(void* dst, DeviceApi& to, const void* src, std::size_t bytes, StreamHandle s) override;
  EventHandle record(StreamHandle s) override;
  void stream_wait(StreamHandle s, EventHandle e) override;
  void host_wait(EventHandle e) override;
  void release(EventHandle e) noexcept override;
  void synchronize(StreamHandle s) override;
  DeviceMemoryInfo memory_info() override;
  std::size_t staging_in_use() const noexcept override { return staging_.in_use(); }
  std::size_t staging_total() const noexcept override { return staging_.total(); }
  std::uint64_t trace_begin(StreamHandle s) override;
  void trace_end(std::uint64_t token, StreamHandle s, SpanKind kind, const std::string& label,
                 std::size_t bytes) override;
  void flush_trace() override;
  std::uint64_t range_start(const char* name) noexcept override;
  void range_end(std::uint64_t id) noexcept override;

  StagingPool& staging() noexcept { return staging_; }
  StreamHandle pipeline_stream(std::size_t i) const noexcept { return pipeline_[i % pipeline_.size()]; }
  void host_copy(void* dst, const void* src, std::size_t bytes) const { host_copy_(dst, src, bytes); }
  const GpuDeviceInfo& info() const noexcept { return info_; }
  void make_current() const override;

 private:
  GpuDeviceInfo info_;
  CudaUpstream upstream_;
  MemoryPool pool_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaStream_t> pipeline_;
  StagingPool staging_;
  HostCopy host_copy_;
  GpuTracer tracer_;
};

}  // namespace veda::detail::cuda
