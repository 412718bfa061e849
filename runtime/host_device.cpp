#include "runtime/host_device.hpp"

#include <cstring>

#include "backends/cpu/cpu_executor.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/telemetry.hpp"

#include "veda/detail/buffer.hpp"

namespace veda::detail {

HostDevice::HostDevice(PoolOptions options) : pool_(upstream_, options) {}
HostDevice::~HostDevice() { evict_all(); }

StreamHandle HostDevice::stream() noexcept {
  thread_local char id;  // one "stream" per thread, as on the real device
  return &id;
}

void HostDevice::copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle s, bool) {
  fault_point(FaultKind::Copy, "host-to-device copy");
  CopyTrace trace(*this, s, SpanKind::H2D, bytes);
  if (bytes) std::memcpy(dst, src, bytes);
  ++h2d_copies;
}
void HostDevice::copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle s, bool) {
  fault_point(FaultKind::Copy, "device-to-host copy");
  CopyTrace trace(*this, s, SpanKind::D2H, bytes);
  if (bytes) std::memcpy(dst, src, bytes);
  ++d2h_copies;
}
void HostDevice::copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle s) {
  fault_point(FaultKind::Copy, "device-to-device copy");
  CopyTrace trace(*this, s, SpanKind::D2D, bytes);
  if (bytes) std::memcpy(dst, src, bytes);
  ++d2d_copies;
}

DeviceMemoryInfo HostDevice::memory_info() {
  const auto s = pool_.stats();
  const std::size_t total = s.limit == static_cast<std::size_t>(-1) ? s.bytes_reserved : s.limit;
  return {total - s.bytes_in_use, total};
}

// Work on the emulated device is synchronous: host time is the span.
std::uint64_t HostDevice::trace_begin(StreamHandle) { return static_cast<std::uint64_t>(now_ns()); }

void HostDevice::trace_end(std::uint64_t token, StreamHandle, SpanKind kind, const std::string& label,
                           std::size_t bytes) {
  if (!telemetry) return;
  Span span;
  span.begin_ns = static_cast<std::int64_t>(token);
  span.end_ns = now_ns();
  span.kind = kind;
  span.track = trace_thread_id();  // one stream per thread here
  span.bytes = bytes;
  span.label = label;
  telemetry->add_span(std::move(span));
}

}  // namespace veda::detail
