#include "runtime/host_device.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "runtime/clock.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/telemetry.hpp"

#include "veda/detail/buffer.hpp"
#include "veda/error.hpp"

namespace veda::detail {

HostDevice::HostDevice(PoolOptions options) : HostDevice(options, nullptr) {}

HostDevice::HostDevice(PoolOptions options, std::unique_ptr<EmulatedStreams> streams)
    : streams_(std::move(streams)), upstream_(streams_.get()), pool_(upstream_, options) {}

std::unique_ptr<HostDevice> HostDevice::async(unsigned max_delay_us, std::uint64_t seed, PoolOptions options) {
  return std::unique_ptr<HostDevice>(new HostDevice(options, std::make_unique<EmulatedStreams>(4, max_delay_us, seed)));
}

HostDevice::~HostDevice() {
  evict_all();
  if (streams_) streams_->synchronize_all();  // nothing may still touch the pool's memory
}

StreamHandle HostDevice::stream() noexcept {
  if (streams_) return streams_->stream_for_this_thread();
  thread_local char id;  // one "stream" per thread, as on the real device
  return &id;
}

StreamHandle HostDevice::stream(std::size_t i) noexcept { return streams_ ? streams_->stream(i) : stream(); }

void HostDevice::run_on(StreamHandle s, std::function<void()> work) {
  if (streams_) streams_->enqueue(s, std::move(work));
  else work();
}

void HostDevice::launch(StreamHandle s, std::function<void()> work) { run_on(s, std::move(work)); }

void HostDevice::fail_if_broken(const char* what) const {
  if (broken_.load()) throw DeviceFault(std::string("veda: ") + what + " failed: the device has a sticky error");
}

void HostDevice::copy_to_device(void* dst, const void* src, std::size_t bytes, StreamHandle s, bool host_pinned) {
  fault_point(FaultKind::Copy, "host-to-device copy");
  fail_if_broken("host-to-device copy");
  CopyTrace trace(*this, s, SpanKind::H2D, bytes);
  ++h2d_copies;
  h2d_bytes += bytes;
  if (!bytes) return;
  if (!streams_ || host_pinned) {  // pinned memory is read by the DMA itself, later
    run_on(s, [=] { std::memcpy(dst, src, bytes); });
    return;
  }
  // Pageable: the source may change once this returns, as through staging.
  auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
  run_on(s, [=] { std::memcpy(dst, staged->data(), bytes); });
}

void HostDevice::copy_to_host(void* dst, const void* src, std::size_t bytes, StreamHandle s, bool) {
  fault_point(FaultKind::Copy, "device-to-host copy");
  fail_if_broken("device-to-host copy");
  CopyTrace trace(*this, s, SpanKind::D2H, bytes);
  ++d2h_copies;
  d2h_bytes += bytes;
  if (!bytes) return;
  run_on(s, [=] { std::memcpy(dst, src, bytes); });
  if (streams_) streams_->synchronize(s);  // returns once the host holds the data
}

void HostDevice::copy_on_device(void* dst, const void* src, std::size_t bytes, StreamHandle s) {
  fault_point(FaultKind::Copy, "device-to-device copy");
  fail_if_broken("device-to-device copy");
  CopyTrace trace(*this, s, SpanKind::D2D, bytes);
  ++d2d_copies;
  if (bytes) run_on(s, [=] { std::memmove(dst, src, bytes); });
}

bool HostDevice::reaches(const DeviceApi& to) const {
  return &to != this && peer_access_.load() && dynamic_cast<const HostDevice*>(&to) != nullptr;
}

void HostDevice::copy_to_peer(void* dst, DeviceApi&, const void* src, std::size_t bytes, StreamHandle s) {
  fault_point(FaultKind::Copy, "device-to-device copy");
  fail_if_broken("device-to-device copy");
  CopyTrace trace(*this, s, SpanKind::D2D, bytes);
  ++peer_copies;
  if (bytes) run_on(s, [=] { std::memcpy(dst, src, bytes); });
}

void HostDevice::stream_wait(StreamHandle s, EventHandle e) {
  if (streams_) streams_->wait(s, e);
}
void HostDevice::host_wait(EventHandle e) {
  if (streams_) streams_->host_wait(e);
}
void HostDevice::release(EventHandle e) noexcept {
  if (streams_) streams_->release(e);
}
void HostDevice::synchronize(StreamHandle s) {
  if (streams_) streams_->synchronize(s);
}

DeviceMemoryInfo HostDevice::memory_info() {
  const auto s = pool_.stats();
  const std::size_t total = s.limit == static_cast<std::size_t>(-1) ? s.bytes_reserved : s.limit;
  return {total - s.bytes_in_use, total};
}

// Spans are host time around the call that queued the work: exact in
// synchronous mode, the queuing time in asynchronous mode.
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
