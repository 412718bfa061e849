#include "runtime/host_device.hpp"

#include <cstring>

#include "veda/detail/buffer.hpp"

namespace veda::detail {

void DeviceApi::track(Buffer* b) {
  std::lock_guard lock(tracked_mu_);
  tracked_.insert(b);
}

void DeviceApi::untrack(Buffer* b) {
  std::lock_guard lock(tracked_mu_);
  tracked_.erase(b);
}

void DeviceApi::evict_all() {
  std::lock_guard lock(tracked_mu_);
  for (Buffer* b : tracked_) b->evict_to_host_untracked();
  tracked_.clear();
}

HostDevice::HostDevice(PoolOptions options) : pool_(upstream_, options) {}
HostDevice::~HostDevice() { evict_all(); }

StreamHandle HostDevice::stream() noexcept {
  thread_local char id;  // one "stream" per thread, as on the real device
  return &id;
}

void HostDevice::copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle,
                                bool) {
  if (bytes) std::memcpy(dst, src, bytes);
  ++h2d_copies;
}
void HostDevice::copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle, bool) {
  if (bytes) std::memcpy(dst, src, bytes);
  ++d2h_copies;
}
void HostDevice::copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle) {
  if (bytes) std::memcpy(dst, src, bytes);
  ++d2d_copies;
}

DeviceMemoryInfo HostDevice::memory_info() {
  const auto s = pool_.stats();
  const std::size_t total = s.limit == static_cast<std::size_t>(-1) ? s.bytes_reserved : s.limit;
  return {total - s.bytes_in_use, total};
}

}  // namespace veda::detail
