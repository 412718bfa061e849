#include "veda/detail/buffer.hpp"

#include <exception>

#include "runtime/device_api.hpp"
#include "runtime/logging.hpp"
#include "veda/error.hpp"

namespace veda::detail {
namespace {
// A copy that faults (veda::DeviceFault) is retried once: transient
// failures pass, and the buffer's state changes only after a copy succeeds.
// A second fault reaches the caller, whose GPU call then runs on the CPU.
template <class Copy>
void retrying(Copy&& copy) {
  try {
    copy();
  } catch (const DeviceFault& e) {
    log().warn("{}; retrying the copy once", e.what());
    copy();
  }
}
}  // namespace

Buffer::Buffer(std::unique_ptr<HostStorage> host) : host_(std::move(host)), bytes_(host_->bytes) {}

Buffer::~Buffer() {
  {
    std::lock_guard lock(mu_);
    if (!tracked_by_ && !dev_) return;  // never on a device, or evicted already
  }
  std::shared_lock life(device_lifetime());  // the device stays until this returns
  DeviceApi* dev = nullptr;
  {
    std::lock_guard lock(mu_);
    dev = tracked_by_;
  }
  // Untrack before locking again: evict_all() holds the tracking lock while it
  // locks buffers, so the order is always tracking lock, then buffer lock.
  if (dev) dev->untrack(this);
  std::lock_guard lock(mu_);
  if (!dev_) return;
  try {
    wait_inflight_locked();
  } catch (const std::exception& e) {  // a broken device: the memory is returned regardless
    log().warn("veda::Array destroyed while its device work failed: {}", e.what());
  }
  free_device_locked();
}

bool Buffer::valid_on_host() const {
  std::lock_guard lock(mu_);
  return host_valid_;
}
bool Buffer::valid_on_device() const {
  std::lock_guard lock(mu_);
  return device_valid_;
}
int Buffer::device() const {
  std::lock_guard lock(mu_);
  return dev_ && device_valid_ ? dev_->index() : -1;
}

void Buffer::wait_inflight_locked() {
  // Every entry is released, also when a wait throws (a broken device).
  auto pending = std::move(inflight_);
  inflight_.clear();
  std::exception_ptr failed;
  for (auto& [s, e] : pending) {
    try {
      if (!failed) dev_->host_wait(e);
    } catch (...) {
      failed = std::current_exception();
    }
    dev_->release(e);
  }
  if (failed) std::rethrow_exception(failed);
}

// Work about to be queued on `s` is ordered after all work other streams
// queued on this buffer (readers included: a writer must not overtake them).
void Buffer::wait_other_streams_locked(DeviceApi& dev, StreamHandle s) {
  for (const auto& [t, e] : inflight_)
    if (t != s) dev.stream_wait(s, e);
}

// Records that work on `s` uses the buffer, replacing s's older entry.
void Buffer::note_work_locked(DeviceApi& dev, StreamHandle s) noexcept {
  last_stream_ = s;
  EventHandle e = nullptr;
  try {
    e = dev.record(s);
  } catch (...) {
    try {
      dev.synchronize(s);  // no event: let the work finish instead
    } catch (...) {        // a broken device: nothing is left to order
    }
  }
  for (auto it = inflight_.begin(); it != inflight_.end(); ++it)
    if (it->first == s) {
      dev.release(it->second);
      inflight_.erase(it);
      break;
    }
  if (e) inflight_.emplace_back(s, e);
}

void Buffer::throw_if_lost_locked() const {
  if (lost_)
    throw DeviceError("veda::Array's data was lost: the device failed before it could be copied back to the host");
}

void Buffer::pull_to_host_locked() {
  if (host_valid_) return;
  throw_if_lost_locked();
  // The copy is queued behind the work that produced the device data.
  wait_other_streams_locked(*dev_, last_stream_);
  retrying([&] { dev_->copy_to_host(host_->data, dptr_, bytes_, last_stream_, host_->pinned); });
  wait_inflight_locked();
  host_valid_ = true;
}

void Buffer::free_device_locked() {
  if (!dptr_) return;
  dev_->pool().deallocate(dptr_, last_stream_);
  dptr_ = nullptr;
  dev_ = nullptr;
  device_valid_ = false;
}

const void* Buffer::host_read() {
  std::lock_guard lock(mu_);
  pull_to_host_locked();
  return host_->data;
}

void* Buffer::host_write() {
  std::lock_guard lock(mu_);
  pull_to_host_locked();
  if (dev_) wait_inflight_locked();  // device work may still read these bytes
  device_valid_ = false;
  return host_->data;
}

void* Buffer::host_overwrite() {
  std::lock_guard lock(mu_);
  throw_if_lost_locked();
  if (dev_) wait_inflight_locked();
  host_valid_ = true;
  device_valid_ = false;
  return host_->data;
}

void Buffer::ensure_device(DeviceApi& dev, StreamHandle s) {
  if (dev_ == &dev) return;
  // One device per runtime, and shutdown evicts every buffer, so a copy on
  // another device cannot exist unless the caller mixed runtimes.
  if (dev_) throw DeviceError("veda::Array is resident on another device");
  dptr_ = dev.pool().allocate(bytes_, s);  // may throw OutOfMemory; nothing changed yet
  dev_ = &dev;
  last_stream_ = s;
  device_valid_ = false;
}

// The device's tracking lock is always taken before a buffer's own (as
// evict_all() does), so a buffer about to be placed is tracked first;
// tracking one that then stays on the host is harmless.
void Buffer::track_before_placing(DeviceApi& dev) {
  {
    std::lock_guard lock(mu_);
    if (tracked_by_ == &dev) return;
  }
  dev.track(this);
  std::lock_guard lock(mu_);
  tracked_by_ = &dev;
}

const void* Buffer::device_read(DeviceApi& dev, StreamHandle s) {
  track_before_placing(dev);
  std::lock_guard lock(mu_);
  throw_if_lost_locked();
  ensure_device(dev, s);
  wait_other_streams_locked(dev, s);
  if (!device_valid_) copy_in_locked(dev, s);
  return dptr_;
}

void* Buffer::device_write(DeviceApi& dev, StreamHandle s, bool keep_contents) {
  track_before_placing(dev);
  std::lock_guard lock(mu_);
  if (keep_contents) throw_if_lost_locked();
  ensure_device(dev, s);
  wait_other_streams_locked(dev, s);
  if (keep_contents && !device_valid_) copy_in_locked(dev, s);
  device_valid_ = true;
  host_valid_ = false;
  lost_ = false;  // the whole contents are being replaced
  return dptr_;
}

// The copy is recorded on `s` at once, not at device_done: a reader on
// another stream must wait for it, and a failed call must not free the
// memory while the copy still writes it.
void Buffer::copy_in_locked(DeviceApi& dev, StreamHandle s) {
  try {
    retrying([&] { dev.copy_to_device(dptr_, host_->data, bytes_, s, host_->pinned); });
  } catch (...) {
    note_work_locked(dev, s);  // chunks already queued may still be landing
    throw;
  }
  note_work_locked(dev, s);
  device_valid_ = true;
}

void Buffer::device_done(StreamHandle s) {
  std::lock_guard lock(mu_);
  if (dev_) note_work_locked(*dev_, s);
}

void Buffer::evict_to_host() {
  DeviceApi* dev = nullptr;
  {
    std::lock_guard lock(mu_);
    dev = tracked_by_;
  }
  if (dev) dev->untrack(this);
  try {
    evict_to_host_untracked();
  } catch (...) {
    // The data is still on the device: it stays known to it, so that
    // shutdown copies it home or marks it lost (not a dangling device).
    if (dev) track_before_placing(*dev);
    throw;
  }
}

void Buffer::evict_to_host_untracked() {
  std::lock_guard lock(mu_);
  tracked_by_ = nullptr;  // the caller has untracked it (or evict_all() drops them all)
  if (!dev_) return;
  pull_to_host_locked();
  wait_inflight_locked();
  free_device_locked();
}

void Buffer::drop_device_untracked() noexcept {
  std::lock_guard lock(mu_);
  tracked_by_ = nullptr;
  if (!dev_) return;
  if (!host_valid_) lost_ = true;
  for (auto& [s, e] : inflight_) dev_->release(e);
  inflight_.clear();
  free_device_locked();  // the pool throws only for a pointer it did not hand out
}

}  // namespace veda::detail
