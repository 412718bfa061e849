// HostDevice: a DeviceApi whose "device memory" is host memory from a
// MemoryPool, so tests drive every residency transition and the
// out-of-memory and fault paths without a GPU.
//
// Two modes. Synchronous (the default): copies are memcpy and nothing is ever
// pending. Asynchronous (HostDevice::async()): streams are EmulatedStreams,
// threads that run their work in order after random delays, with real events
// and stream-ordered pool reuse, so a missing wait or event gives wrong data,
// as it would on a GPU. Tests queue "kernels" with launch().
//
// Thread-safety: every member function may be called concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "runtime/device_api.hpp"
#include "runtime/emulated_streams.hpp"

namespace veda::detail {

// The pool's upstream: host memory, with events on the emulated streams when
// there are any (a block freed on one stream is reused by another only once
// the work queued before the free has run).
class EmulatedUpstream final : public HostUpstream {
 public:
  explicit EmulatedUpstream(EmulatedStreams* streams) : streams_(streams) {}
  EventHandle record(StreamHandle s) noexcept override { return streams_ ? streams_->record(s) : nullptr; }
  bool ready(EventHandle e) noexcept override { return !streams_ || streams_->ready(e); }
  void release(EventHandle e) noexcept override {
    if (streams_) streams_->release(e);
  }
  void synchronize() noexcept override {
    if (streams_) streams_->synchronize_all();
  }

 private:
  EmulatedStreams* streams_;
};

class HostDevice final : public DeviceApi {
 public:
  explicit HostDevice(PoolOptions options = {});
  // Asynchronous streams (4, like CudaDevice) with delays up to max_delay_us.
  static std::unique_ptr<HostDevice> async(unsigned max_delay_us = 200, std::uint64_t seed = 1,
                                           PoolOptions options = {});
  ~HostDevice() override;

  int index() const noexcept override { return index_; }
  void set_index(int i) noexcept { index_ = i; }  // before first use: N emulated devices
  std::string name() const override { return "host-emulated device"; }
  MemoryPool& pool() noexcept override { return pool_; }
  StreamHandle stream() noexcept override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle s, bool host_pinned) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle s, bool host_pinned) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle s) override;
  // Peer copies between HostDevices, once switched on (a GPU pair with
  // peer access); off, data moves between devices through the host.
  bool reaches(const DeviceApi& to) const override;
  void set_peer_access(bool on) noexcept { peer_access_.store(on); }
  void copy_to_peer(void* dst, DeviceApi& to, const void* src, std::size_t bytes, StreamHandle s) override;
  EventHandle record(StreamHandle s) override { return streams_ ? streams_->record(s) : nullptr; }
  void stream_wait(StreamHandle s, EventHandle e) override;
  void host_wait(EventHandle e) override;
  void release(EventHandle e) noexcept override;
  void synchronize(StreamHandle s) override;
  DeviceMemoryInfo memory_info() override;
  std::uint64_t trace_begin(StreamHandle s) override;
  void trace_end(std::uint64_t token, StreamHandle s, SpanKind kind, const std::string& label,
                 std::size_t bytes) override;

  // Asynchronous mode: stream i (tests pick distinct ones), and a "kernel"
  // queued on s; in synchronous mode every index is the thread's stream and
  // launch runs the work at once.
  StreamHandle stream(std::size_t i) noexcept;
  void launch(StreamHandle s, std::function<void()> work);

  // What a sticky error (an illegal address in a kernel) does to a CUDA
  // context: from now on every copy fails with DeviceFault.
  void break_for_good() noexcept { broken_.store(true); }

  // Counters the tests read to see which transitions copied data.
  std::atomic<std::size_t> h2d_copies{0}, d2h_copies{0}, d2d_copies{0}, peer_copies{0};  // peer: out of this one
  std::atomic<std::size_t> h2d_bytes{0}, d2h_bytes{0};

 private:
  HostDevice(PoolOptions options, std::unique_ptr<EmulatedStreams> streams);
  void run_on(StreamHandle s, std::function<void()> work);

  void fail_if_broken(const char* what) const;

  int index_ = 0;
  std::atomic<bool> broken_{false};
  std::atomic<bool> peer_access_{false};
  std::unique_ptr<EmulatedStreams> streams_;  // null: synchronous
  EmulatedUpstream upstream_;
  MemoryPool pool_;
};

}  // namespace veda::detail
