// Buffer: type-erased bytes with tracked residency, behind veda::Array.
//
// A Buffer has a host copy and at most one device copy, each valid or stale
// (MSI style): reading one side copies in only if that side is stale; writing
// one side makes the other stale. Device work queued on a buffer is recorded
// as one event per stream that used it (concurrent readers on two streams
// leave two), and the copy-in that makes the device copy valid is recorded
// too: work on another stream, a host write, a copy back and freeing the
// device memory wait for all of them. Zero-length buffers never touch a device.
//
// Thread-safety: member functions lock the buffer; the pointers they return
// follow the usual rules (no concurrent writes to the same bytes).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace veda::detail {

class DeviceApi;
using StreamHandle = void*;
using EventHandle = void*;

// Host memory a Buffer owns: a std::vector adopted without a copy, or pinned
// memory. Derived types free it in their destructor.
class HostStorage {
 public:
  virtual ~HostStorage() = default;
  void* data = nullptr;
  std::size_t bytes = 0;
  bool pinned = false;
};

// Page-locked host memory when a GPU is usable, ordinary memory otherwise.
std::unique_ptr<HostStorage> make_pinned_storage(std::size_t bytes);
// Ordinary host memory, uninitialised (for results computed elsewhere).
std::unique_ptr<HostStorage> make_host_storage(std::size_t bytes);

class Buffer {
 public:
  explicit Buffer(std::unique_ptr<HostStorage> host);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::size_t bytes() const noexcept { return bytes_; }
  bool host_pinned() const noexcept { return host_->pinned; }
  // Where the host copy lives (fixed for the buffer's life), for overlap
  // checks only: reading or writing it goes through host_read()/host_write().
  const void* host_address() const noexcept { return host_->data; }
  bool valid_on_host() const;
  bool valid_on_device() const;
  int device() const;  // index of the device holding a copy, -1 if none

  // Host side. host_read() copies back if the host copy is stale; host_write()
  // also waits for device work in flight and marks the device copy stale.
  const void* host_read();
  void* host_write();
  // For an output about to be overwritten whole: like host_write() without
  // bringing the host copy up to date first.
  void* host_overwrite();

  // Device side, on stream `s` of `dev`. device_read() copies in if the device
  // copy is stale. device_write() makes the host copy stale; with
  // keep_contents it first brings the device copy up to date (a
  // read-modify-write), without it the old contents may be discarded.
  // Both throw veda::OutOfMemory when the device pool cannot provide memory,
  // leaving the buffer as it was.
  const void* device_read(DeviceApi& dev, StreamHandle s);
  void* device_write(DeviceApi& dev, StreamHandle s, bool keep_contents);
  // Call after queuing work that uses the device copy on `s`.
  void device_done(StreamHandle s);

  // Makes the host copy valid and frees the device copy.
  void evict_to_host();
  // Same, for DeviceApi::evict_all, which holds its tracking lock.
  void evict_to_host_untracked();
  // For evict_all when the copy back failed (a broken device): forgets the
  // device copy. If it held the only valid data, the buffer is lost: every
  // later access throws veda::DeviceError instead of returning stale bytes.
  void drop_device_untracked() noexcept;

 private:
  void ensure_device(DeviceApi& dev, StreamHandle s);
  void track_before_placing(DeviceApi& dev);
  void pull_to_host_locked();
  void wait_inflight_locked();
  void free_device_locked();
  void throw_if_lost_locked() const;
  void wait_other_streams_locked(DeviceApi& dev, StreamHandle s);
  void copy_in_locked(DeviceApi& dev, StreamHandle s);
  void note_work_locked(DeviceApi& dev, StreamHandle s) noexcept;

  mutable std::mutex mu_;
  std::unique_ptr<HostStorage> host_;
  std::size_t bytes_;
  bool host_valid_ = true;
  bool device_valid_ = false;
  bool lost_ = false;
  DeviceApi* dev_ = nullptr;
  DeviceApi* tracked_by_ = nullptr;  // the device whose evict_all() knows this buffer
  void* dptr_ = nullptr;
  StreamHandle last_stream_ = nullptr;                      // the stream that used it last
  std::vector<std::pair<StreamHandle, EventHandle>> inflight_;  // per stream: its last use
};

}  // namespace veda::detail
