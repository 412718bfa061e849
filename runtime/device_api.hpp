// DeviceApi: one GPU as the data layer sees it — a memory pool, the calling
// thread's stream, copies, events and pinned host memory.
//
// CudaDevice (backends/cuda) is the real one. HostDevice (runtime/host_device)
// implements the same contract over host memory so that the residency state
// machine and the fault paths are tested on machines without a GPU; the
// runtime never selects it on its own.
//
// The device also keeps the set of Buffers holding memory from its pool, so
// that shutdown can move their data back to the host before the pool goes.
//
// Thread-safety: every member function may be called concurrently, except
// that evict_all() runs only when no veda call is in flight (at shutdown, or
// when a test replaces the device): Buffer's device-side functions are called
// from inside calls, so they never race with it. Lock order: the tracking lock,
// then a buffer's lock; Buffer's destructor untracks before locking itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>

#include "runtime/memory_pool.hpp"

namespace veda::detail {

class Buffer;
class Telemetry;

// What a trace span shows (runtime/telemetry.hpp).
enum class SpanKind : std::uint8_t { Call, Worker, GpuCall, H2D, D2H, D2D };

struct DeviceMemoryInfo {
  std::size_t free = 0;
  std::size_t total = 0;
};

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;

  virtual int index() const noexcept = 0;
  virtual std::string name() const = 0;
  virtual MemoryPool& pool() noexcept = 0;
  virtual StreamHandle stream() noexcept = 0;  // this thread's stream
  // Makes this device the calling thread's current one (CUDA's
  // cudaSetDevice); a no-op where there is no such notion.
  virtual void make_current() const {}

  // Queue a copy on `s`. A pageable host side goes through pinned staging in
  // chunks; copy_to_device returns once the host source may be modified again,
  // copy_to_host once the host destination holds the data.
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle s,
                              bool host_pinned) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle s,
                            bool host_pinned) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle s) = 0;
  // Copies to another device of the runtime: whether this device can copy
  // into `to`'s memory itself (CUDA: any other CUDA device; directly with
  // peer access, else staged by the driver), and the copy, queued on this
  // device's stream s (the caller orders `to`'s streams after it).
  virtual bool reaches(const DeviceApi& /*to*/) const { return false; }
  virtual void copy_to_peer(void* dst, DeviceApi& to, const void* src, std::size_t bytes, StreamHandle s) = 0;

  virtual EventHandle record(StreamHandle s) = 0;      // nullptr: nothing pending
  virtual void stream_wait(StreamHandle s, EventHandle e) = 0;
  virtual void host_wait(EventHandle e) = 0;
  virtual void release(EventHandle e) noexcept = 0;
  virtual void synchronize(StreamHandle s) = 0;

  virtual DeviceMemoryInfo memory_info() = 0;
  // Pinned staging buffers: bytes in use by transfers now, and in total.
  virtual std::size_t staging_in_use() const noexcept { return 0; }
  virtual std::size_t staging_total() const noexcept { return 0; }

  // Telemetry (set by the runtime when on; null otherwise). The device counts
  // and traces its own copies through CopyTrace. GPU spans: trace_begin marks
  // the start of work queued on s, trace_end its end; they are turned into
  // host-time spans by flush_trace (CudaDevice: CUDA events; HostDevice: its
  // copies are synchronous, so host time is exact).
  Telemetry* telemetry = nullptr;
  virtual std::uint64_t trace_begin(StreamHandle s) = 0;
  virtual void trace_end(std::uint64_t token, StreamHandle s, SpanKind kind, const std::string& label,
                         std::size_t bytes) = 0;
  virtual void flush_trace() {}
  // Profiler ranges (NVTX on CudaDevice) around one call's GPU work.
  virtual std::uint64_t range_start(const char* /*name*/) noexcept { return 0; }
  virtual void range_end(std::uint64_t /*id*/) noexcept {}

  // Buffers holding this device's memory; see evict_all().
  void track(Buffer* b);
  void untrack(Buffer* b);
  // Copies every tracked Buffer's data to the host and frees its memory on
  // this device. Called before the device (and its pool) is destroyed; never
  // throws (a buffer whose copy fails loses its contents; see Buffer).
  void evict_all() noexcept;

  // The work the scheduler has queued here, as it predicted it: with
  // several devices a call goes where it would finish first
  // (placement.hpp), which needs each device's backlog. queue_work adds a
  // call's predicted time after whatever is still queued and returns when
  // that call should be done; the backlog drains with the clock. A call
  // that was synchronised reports when it was to be done (work_done): the
  // work queued after it moves by as much as it finished early or late.
  // Asynchronous work is not followed to its end: its predicted time is
  // what calls of its kind were measured to take.
  double backlog_us(std::int64_t now_ns) const noexcept {
    const std::int64_t until = busy_until_ns_.load(std::memory_order_relaxed);
    return until > now_ns ? static_cast<double>(until - now_ns) / 1e3 : 0.0;
  }
  std::int64_t queue_work(double us, std::int64_t now_ns) noexcept;
  void work_done(std::int64_t was_due_ns, std::int64_t now_ns) noexcept;

 private:
  std::atomic<std::int64_t> busy_until_ns_{0};
  std::mutex tracked_mu_;
  std::unordered_set<Buffer*> tracked_;
};

// Held shared by a Buffer's destructor while it returns device memory (it is
// no veda call, so shutdown() does not wait for it), and exclusively by
// whoever evicts every buffer and destroys a device: a destructor racing
// shutdown() frees its memory before the device goes, or finds it evicted.
std::shared_mutex& device_lifetime() noexcept;

// Counts one copy and traces it when telemetry is on; a no-op otherwise.
class CopyTrace {
 public:
  CopyTrace(DeviceApi& d, StreamHandle s, SpanKind kind, std::size_t bytes);
  ~CopyTrace();
  CopyTrace(const CopyTrace&) = delete;
  CopyTrace& operator=(const CopyTrace&) = delete;

 private:
  DeviceApi* dev_;
  StreamHandle s_;
  SpanKind kind_;
  std::size_t bytes_;
  std::uint64_t token_ = 0;
};

}  // namespace veda::detail
