#include "veda/detail/buffer.hpp"

#include <algorithm>
#include <cstring>
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
  if (!on_device_ever()) return;
  {
    std::lock_guard lock(mu_);
    if (tracked_by_.empty() && copies_.empty()) return;  // never on a device, or evicted already
  }
  std::shared_lock life(device_lifetime());  // the devices stay until this returns
  std::vector<DeviceApi*> tracked;
  {
    std::lock_guard lock(mu_);
    tracked.swap(tracked_by_);
  }
  // Untrack before locking again: evict_all() holds the tracking lock while it
  // locks buffers, so the order is always tracking lock, then buffer lock.
  for (DeviceApi* d : tracked) d->untrack(this);
  std::lock_guard lock(mu_);
  for (DeviceCopy& c : copies_) {
    try {
      wait_inflight(c);
    } catch (const std::exception& e) {  // a broken device: the memory is returned regardless
      log().warn("veda::Array destroyed while its device work failed: {}", e.what());
    }
    release_copy(c);
  }
}

bool Buffer::valid_on_host() const {
  if (!on_device_ever()) return true;
  std::lock_guard lock(mu_);
  return host_valid_;
}
bool Buffer::valid_on_device() const {
  if (!on_device_ever()) return false;
  std::lock_guard lock(mu_);
  return any_device_valid_locked();
}
bool Buffer::valid_on_device(int index) const {
  if (!on_device_ever()) return false;
  std::lock_guard lock(mu_);
  for (const DeviceCopy& c : copies_)
    if (c.valid && c.dev->index() == index) return true;
  return false;
}
int Buffer::device() const {
  if (!on_device_ever()) return -1;
  std::lock_guard lock(mu_);
  for (const DeviceCopy& c : copies_)
    if (c.valid) return c.dev->index();
  return -1;
}

bool Buffer::any_device_valid_locked() const noexcept {
  for (const DeviceCopy& c : copies_)
    if (c.valid) return true;
  return false;
}

Buffer::DeviceCopy* Buffer::copy_on_locked(const DeviceApi& dev) noexcept {
  for (DeviceCopy& c : copies_)
    if (c.dev == &dev) return &c;
  return nullptr;
}

void Buffer::wait_inflight(DeviceCopy& c) {
  // Every entry is released, also when a wait throws (a broken device).
  auto pending = std::move(c.inflight);
  c.inflight.clear();
  std::exception_ptr failed;
  for (auto& [s, e] : pending) {
    try {
      if (!failed) c.dev->host_wait(e);
    } catch (...) {
      failed = std::current_exception();
    }
    c.dev->release(e);
  }
  if (failed) std::rethrow_exception(failed);
}

// Work about to be queued on `s` is ordered after all work other streams
// queued on this copy (readers included: a writer must not overtake them).
void Buffer::wait_other_streams(DeviceCopy& c, StreamHandle s) {
  for (const auto& [t, e] : c.inflight)
    if (t != s) c.dev->stream_wait(s, e);
}

// Records that work on `s` uses the copy, replacing s's older entry.
void Buffer::note_work(DeviceCopy& c, StreamHandle s) noexcept {
  c.last_stream = s;
  EventHandle e = nullptr;
  try {
    e = c.dev->record(s);
  } catch (...) {
    try {
      c.dev->synchronize(s);  // no event: let the work finish instead
    } catch (...) {           // a broken device: nothing is left to order
    }
  }
  for (auto it = c.inflight.begin(); it != c.inflight.end(); ++it)
    if (it->first == s) {
      c.dev->release(it->second);
      c.inflight.erase(it);
      break;
    }
  if (e) c.inflight.emplace_back(s, e);
}

// Returns the copy's memory to its pool, ordered after the work still queued
// on it (without waiting on the host); the caller then erases the entry.
void Buffer::release_copy(DeviceCopy& c) noexcept {
  for (auto& [t, e] : c.inflight) {
    try {
      if (t != c.last_stream) c.dev->stream_wait(c.last_stream, e);
    } catch (...) {  // a broken device: nothing is left to order
    }
    c.dev->release(e);
  }
  c.inflight.clear();
  try {
    c.dev->pool().deallocate(c.ptr, c.last_stream);
  } catch (...) {  // the pool throws only for a pointer it did not hand out
  }
  c.ptr = nullptr;
}

void Buffer::throw_if_lost_locked() const {
  if (lost_)
    throw DeviceError("veda::Array's data was lost: the device failed before it could be copied back to the host");
}

// With the host copy stale: the device copy to copy from (the first placed).
Buffer::DeviceCopy& Buffer::host_source_locked() {
  throw_if_lost_locked();
  for (DeviceCopy& c : copies_)
    if (c.valid) return c;
  throw DeviceError("veda::Array has no valid copy anywhere");  // a bug in veda, never silent
}

void Buffer::pull_to_host_locked() {
  if (host_valid_) return;
  DeviceCopy& src = host_source_locked();
  // The copy is queued behind the work that produced the device data.
  wait_other_streams(src, src.last_stream);
  retrying([&] { src.dev->copy_to_host(host_->data, src.ptr, bytes_, src.last_stream, host_->pinned); });
  wait_inflight(src);
  host_valid_ = true;
}

// dev's copy is stale: the data is on the host, or on another device, whose
// copy back leaves that device current (CUDA): dev's work follows.
void Buffer::pull_from_other_device_locked(const DeviceApi& dev) {
  if (host_valid_) return;
  pull_to_host_locked();
  dev.make_current();
}

// c's device and the host both hold stale data: a device that reaches c's
// copies its valid copy straight over, on its own stream, without a host
// wait; the host stays stale. False when none can (the data then comes
// through the host). With a valid host copy the host path is taken: a
// peer copy without peer access is staged through the host anyway.
bool Buffer::copy_from_peer_locked(DeviceCopy& c, StreamHandle s) {
  if (host_valid_) return false;
  DeviceCopy* src = nullptr;
  for (DeviceCopy& o : copies_)
    if (o.valid && &o != &c && o.dev->reaches(*c.dev)) {
      src = &o;
      break;
    }
  if (!src) return false;
  const StreamHandle from = src->last_stream;
  wait_other_streams(*src, from);  // after every use of the source
  // c's memory was handed out for work on s: the copy on `from` follows it.
  EventHandle ready = c.dev->record(s);
  try {
    src->dev->stream_wait(from, ready);
  } catch (...) {
    c.dev->release(ready);
    throw;
  }
  c.dev->release(ready);
  try {
    retrying([&] { src->dev->copy_to_peer(c.ptr, *c.dev, src->ptr, bytes_, from); });
  } catch (...) {
    note_work(*src, from);  // a part may still be in flight
    c.dev->make_current();
    throw;
  }
  note_work(*src, from);  // the source is read until here
  c.dev->make_current();  // the copy made the source device current (CUDA)
  try {
    for (const auto& [t, e] : src->inflight)
      if (t == from) c.dev->stream_wait(s, e);  // c's work follows the copy
  } catch (...) {
    try {
      src->dev->synchronize(from);  // c stays stale: its memory may be freed only once the copy is done
    } catch (...) {               // a broken device: nothing is left to order
    }
    throw;
  }
  note_work(c, s);
  c.valid = true;
  return true;
}

// Other devices' copies were made stale by a write on `keep`: their memory
// is of no use until the data is rewritten there.
void Buffer::drop_other_copies_locked(const DeviceApi& keep) noexcept {
  for (DeviceCopy& c : copies_)
    if (c.dev != &keep) release_copy(c);
  std::erase_if(copies_, [&](const DeviceCopy& c) { return c.dev != &keep; });
}

const void* Buffer::host_read() {
  if (!on_device_ever()) return host_->data;
  std::lock_guard lock(mu_);
  pull_to_host_locked();
  return host_->data;
}

void* Buffer::host_write() {
  if (!on_device_ever()) return host_->data;
  std::lock_guard lock(mu_);
  pull_to_host_locked();
  for (DeviceCopy& c : copies_) {
    wait_inflight(c);  // device work may still read these bytes
    c.valid = false;
  }
  return host_->data;
}

void* Buffer::host_overwrite() {
  if (!on_device_ever()) return host_->data;
  std::lock_guard lock(mu_);
  throw_if_lost_locked();
  for (DeviceCopy& c : copies_) {
    wait_inflight(c);
    c.valid = false;
  }
  host_valid_ = true;
  return host_->data;
}

void Buffer::read_range(std::size_t offset, void* dst, std::size_t n) {
  if (!n) return;
  const auto* host = static_cast<const char*>(host_->data) + offset;
  if (!on_device_ever()) {
    std::memmove(dst, host, n);  // dst may be this buffer's own bytes
    return;
  }
  std::lock_guard lock(mu_);
  if (host_valid_) {
    std::memmove(dst, host, n);
    return;
  }
  DeviceCopy& src = host_source_locked();
  wait_other_streams(src, src.last_stream);  // after every writer
  retrying([&] { src.dev->copy_to_host(dst, static_cast<const char*>(src.ptr) + offset, n, src.last_stream, false); });
}

void Buffer::write_range(std::size_t offset, const void* src, std::size_t n) {
  if (!n) return;
  auto* host = static_cast<char*>(host_->data) + offset;
  if (!on_device_ever()) {
    std::memmove(host, src, n);
    return;
  }
  std::lock_guard lock(mu_);
  throw_if_lost_locked();
  if (host_valid_) std::memmove(host, src, n);
  // Each device copy's write follows every use of it, on any stream. One
  // that fails (after a retry) may hold part of the range: it becomes
  // stale, unless no other copy holds the data (then the range holds
  // unspecified bytes there, and the call throws).
  std::exception_ptr failed;
  DeviceCopy* first_failed = nullptr;
  for (DeviceCopy& c : copies_) {
    if (!c.valid) continue;
    try {
      wait_other_streams(c, c.last_stream);
      retrying([&] { c.dev->copy_to_device(static_cast<char*>(c.ptr) + offset, src, n, c.last_stream, false); });
    } catch (...) {
      if (!failed) {
        failed = std::current_exception();
        first_failed = &c;
      }
      c.valid = false;
    }
    note_work(c, c.last_stream);  // chunks queued before a failure may still land
  }
  if (!failed) return;
  if (!host_valid_ && !any_device_valid_locked()) first_failed->valid = true;
  std::rethrow_exception(failed);
}

Buffer::DeviceCopy& Buffer::ensure_copy_locked(DeviceApi& dev, StreamHandle s) {
  DeviceCopy* c = copy_on_locked(dev);
  if (!c) {
    copies_.reserve(copies_.size() + 1);   // nothing below throws once memory is held
    void* p = dev.pool().allocate(bytes_, s);  // may throw OutOfMemory; nothing changed yet
    c = &copies_.emplace_back();
    c->dev = &dev;
    c->ptr = p;
    c->last_stream = s;
  }
  if (std::find(c->streams.begin(), c->streams.end(), s) == c->streams.end()) c->streams.push_back(s);
  return *c;
}

// The device's tracking lock is always taken before a buffer's own (as
// evict_all() does), so a buffer about to be placed is tracked first;
// tracking one that then stays on the host is harmless.
void Buffer::track_before_placing(DeviceApi& dev) {
  {
    std::lock_guard lock(mu_);
    placed_.store(true, std::memory_order_release);
    if (std::find(tracked_by_.begin(), tracked_by_.end(), &dev) != tracked_by_.end()) return;
  }
  dev.track(this);
  std::lock_guard lock(mu_);
  if (std::find(tracked_by_.begin(), tracked_by_.end(), &dev) == tracked_by_.end()) tracked_by_.push_back(&dev);
}

const void* Buffer::device_read(DeviceApi& dev, StreamHandle s) {
  track_before_placing(dev);
  std::lock_guard lock(mu_);
  throw_if_lost_locked();
  DeviceCopy& c = ensure_copy_locked(dev, s);
  if (!c.valid && !copy_from_peer_locked(c, s)) pull_from_other_device_locked(dev);
  wait_other_streams(c, s);
  if (!c.valid) copy_in_locked(c, s);
  return c.ptr;
}

void* Buffer::device_write(DeviceApi& dev, StreamHandle s, bool keep_contents) {
  track_before_placing(dev);
  std::lock_guard lock(mu_);
  if (keep_contents) throw_if_lost_locked();
  {
    DeviceCopy& c = ensure_copy_locked(dev, s);
    if (keep_contents && !c.valid && !copy_from_peer_locked(c, s)) pull_from_other_device_locked(dev);
    wait_other_streams(c, s);
    if (keep_contents && !c.valid) copy_in_locked(c, s);
  }
  drop_other_copies_locked(dev);
  DeviceCopy& c = copies_.front();  // the only one left
  c.valid = true;
  host_valid_ = false;
  lost_ = false;  // the whole contents are being replaced
  return c.ptr;
}

// The copy is recorded on `s` at once, not at device_done: a reader on
// another stream must wait for it, and a failed call must not free the
// memory while the copy still writes it.
void Buffer::copy_in_locked(DeviceCopy& c, StreamHandle s) {
  try {
    retrying([&] { c.dev->copy_to_device(c.ptr, host_->data, bytes_, s, host_->pinned); });
  } catch (...) {
    note_work(c, s);  // chunks already queued may still be landing
    throw;
  }
  note_work(c, s);
  c.valid = true;
}

void Buffer::device_done(StreamHandle s) {
  if (!on_device_ever()) return;
  std::lock_guard lock(mu_);
  // A stream belongs to one device; an emulated synchronous device may hand
  // the same handle out on several, and noting work there is harmless.
  for (DeviceCopy& c : copies_)
    if (std::find(c.streams.begin(), c.streams.end(), s) != c.streams.end()) note_work(c, s);
}

void Buffer::evict_to_host() {
  if (!on_device_ever()) return;
  std::vector<DeviceApi*> tracked;
  {
    std::lock_guard lock(mu_);
    tracked.swap(tracked_by_);
  }
  for (DeviceApi* d : tracked) d->untrack(this);
  try {
    std::lock_guard lock(mu_);
    if (copies_.empty()) return;  // nothing on a device (or lost: later reads say so)
    pull_to_host_locked();
    for (DeviceCopy& c : copies_) wait_inflight(c);
    for (DeviceCopy& c : copies_) release_copy(c);
    copies_.clear();
  } catch (...) {
    // The data is still on the devices: it stays known to them, so that
    // shutdown copies it home or marks it lost (not a dangling device).
    std::vector<DeviceApi*> holding;
    {
      std::lock_guard lock(mu_);
      for (const DeviceCopy& c : copies_) holding.push_back(c.dev);
    }
    for (DeviceApi* d : holding) track_before_placing(*d);
    throw;
  }
}

void Buffer::evict_from_untracked(DeviceApi& dev) {
  std::lock_guard lock(mu_);
  std::erase(tracked_by_, &dev);  // the caller has untracked it (evict_all() drops them all)
  DeviceCopy* c = copy_on_locked(dev);
  if (!c) return;
  pull_to_host_locked();
  wait_inflight(*c);
  release_copy(*c);
  copies_.erase(copies_.begin() + (c - copies_.data()));
}

void Buffer::drop_device_untracked(DeviceApi& dev) noexcept {
  std::lock_guard lock(mu_);
  std::erase(tracked_by_, &dev);
  DeviceCopy* c = copy_on_locked(dev);
  if (!c) return;
  c->valid = false;
  if (!host_valid_ && !any_device_valid_locked()) lost_ = true;
  for (auto& [s, e] : c->inflight) dev.release(e);
  c->inflight.clear();
  release_copy(*c);
  copies_.erase(copies_.begin() + (c - copies_.data()));
}

}  // namespace veda::detail
