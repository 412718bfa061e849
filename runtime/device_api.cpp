#include "runtime/device_api.hpp"

#include "runtime/logging.hpp"
#include "runtime/profile.hpp"
#include "runtime/telemetry.hpp"
#include "veda/detail/buffer.hpp"

namespace veda::detail {

std::shared_mutex& device_lifetime() noexcept {
  static std::shared_mutex m;
  return m;
}

void DeviceApi::track(Buffer* b) {
  std::lock_guard lock(tracked_mu_);
  tracked_.insert(b);
}

void DeviceApi::untrack(Buffer* b) {
  std::lock_guard lock(tracked_mu_);
  tracked_.erase(b);
}

void DeviceApi::evict_all() noexcept {
  std::lock_guard lock(tracked_mu_);
  for (Buffer* b : tracked_) {
    try {
      b->evict_from_untracked(*this);
    } catch (const std::exception& e) {
      // A broken device (a sticky fault in a user kernel) cannot give the data
      // back: the Array keeps its last host copy, marked stale, and reads of it
      // throw instead of returning wrong values.
      log().error("could not move an Array's data back from the device: {}; its contents are lost", e.what());
      b->drop_device_untracked(*this);
    }
  }
  tracked_.clear();
}

CopyTrace::CopyTrace(DeviceApi& d, StreamHandle s, SpanKind kind, std::size_t bytes)
    : dev_(d.telemetry && bytes ? &d : nullptr), s_(s), kind_(kind), bytes_(bytes) {
  if (!dev_) return;
  dev_->telemetry->on_transfer(kind, bytes);
  token_ = dev_->trace_begin(s);
}

CopyTrace::~CopyTrace() {
  if (dev_) dev_->trace_end(token_, s_, kind_, {}, bytes_);
}

}  // namespace veda::detail
