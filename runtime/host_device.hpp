// HostDevice: a DeviceApi whose "device memory" is host memory from a
// MemoryPool over HostUpstream, with memcpy for copies and nothing ever
// pending. Tests install it (RuntimeState::install_device) to drive every
// residency transition and the out-of-memory paths without a GPU.
#pragma once

#include <atomic>

#include "runtime/device_api.hpp"

namespace veda::detail {

class HostDevice final : public DeviceApi {
 public:
  explicit HostDevice(PoolOptions options = {});
  ~HostDevice() override;

  int index() const noexcept override { return 0; }
  std::string name() const override { return "host-emulated device"; }
  MemoryPool& pool() noexcept override { return pool_; }
  StreamHandle stream() noexcept override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle,
                      bool) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle, bool) override;
  void copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle) override;
  EventHandle record(StreamHandle) override { return nullptr; }
  void stream_wait(StreamHandle, EventHandle) override {}
  void host_wait(EventHandle) override {}
  void release(EventHandle) noexcept override {}
  void synchronize(StreamHandle) override {}
  DeviceMemoryInfo memory_info() override;
  std::uint64_t trace_begin(StreamHandle s) override;
  void trace_end(std::uint64_t token, StreamHandle s, SpanKind kind, const std::string& label,
                 std::size_t bytes) override;

  // Counters the tests read to see which transitions copied data.
  std::atomic<std::size_t> h2d_copies{0}, d2h_copies{0}, d2d_copies{0};

 private:
  HostUpstream upstream_;
  MemoryPool pool_;
};

}  // namespace veda::detail
