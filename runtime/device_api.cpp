#include "runtime/device_api.hpp"

#include <algorithm>

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

std::int64_t DeviceApi::queue_work(double us, std::int64_t now_ns) noexcept {
  const auto add = us > 0 ? static_cast<std::int64_t>(std::min(us, 1e9) * 1e3) : 0;  // (NaN: 0)
  std::int64_t until = busy_until_ns_.load(std::memory_order_relaxed);
  std::int64_t due = 0;
  do {
    due = std::max(until, now_ns) + add;
  } while (!busy_until_ns_.compare_exchange_weak(until, due, std::memory_order_relaxed));
  return due;
}

void DeviceApi::work_done(std::int64_t was_due_ns, std::int64_t now_ns) noexcept {
  if (was_due_ns <= 0) return;
  const std::int64_t shift = was_due_ns - now_ns;  // > 0: it finished early
  std::int64_t until = busy_until_ns_.load(std::memory_order_relaxed);
  while (!busy_until_ns_.compare_exchange_weak(until, std::max(until - shift, now_ns), std::memory_order_relaxed)) {
  }
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
