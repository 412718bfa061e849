// Buffer: type-erased bytes with tracked residency, behind veda::Array.
//
// A Buffer has a host copy and at most one copy per device, each valid or
// stale (MSI style): reading one side copies in only if that side is stale;
// writing one side makes every other copy stale. A device copy that another
// device made stale is freed at once (its memory is of no use until the data
// is rewritten there). Data another device holds is copied straight over
// when that device reaches this one (DeviceApi::reaches: CUDA peer copies),
// else through the host; a valid host copy is always the source. Device
// work queued on a copy is recorded as one event per stream that used it
// (concurrent readers on two streams leave two), and the copy-in that makes
// the copy valid is recorded too: work on another stream of that device, a
// host write, a copy back and freeing the memory wait for all of them.
// Zero-length buffers never touch a device.
//
// Thread-safety: member functions lock the buffer, except on one that no
// device has held yet (the host copy the only one, always valid: most
// buffers in a program without a GPU), which they read without a lock; the
// pointers they return follow the usual rules (no concurrent writes to the
// same bytes). Readers on two devices at once each get their own copy.
#pragma once

#include <atomic>
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
  bool valid_on_device() const;             // on any device
  bool valid_on_device(int index) const;    // on the device with this index
  int device() const;  // index of a device holding a valid copy (the first placed), -1 if none

  // Host side. host_read() copies back if the host copy is stale; host_write()
  // also waits for device work in flight and marks the device copy stale.
  const void* host_read();
  void* host_write();
  // For an output about to be overwritten whole: like host_write() without
  // bringing the host copy up to date first.
  void* host_overwrite();

  // Part of the bytes, [offset, offset + n), for Array::read/write; the
  // caller checks the range. read_range copies them from the host copy when
  // it is valid, else from a valid device copy (only those bytes cross,
  // after the work queued on it); write_range writes them into every valid
  // copy, host and devices. Neither changes which copies are valid.
  void read_range(std::size_t offset, void* dst, std::size_t n);
  void write_range(std::size_t offset, const void* src, std::size_t n);

  // Device side, on stream `s` of `dev`. device_read() copies in if dev's
  // copy is stale (from another device that holds the data, see above).
  // device_write() makes the host copy and other devices' copies stale; with
  // keep_contents it first brings dev's copy up to date (a
  // read-modify-write), without it the old contents may be discarded.
  // Both throw veda::OutOfMemory when the device pool cannot provide memory,
  // leaving the buffer's contents as they were.
  const void* device_read(DeviceApi& dev, StreamHandle s);
  void* device_write(DeviceApi& dev, StreamHandle s, bool keep_contents);
  // Call after queuing work that uses a device copy on `s` (a stream of the
  // device whose copy device_read/device_write returned).
  void device_done(StreamHandle s);

  // Makes the host copy valid and frees every device copy.
  void evict_to_host();
  // For DeviceApi::evict_all, which holds dev's tracking lock: makes the host
  // copy valid and frees dev's copy.
  void evict_from_untracked(DeviceApi& dev);
  // For evict_all when the copy back failed (a broken device): forgets dev's
  // copy. If it held the only valid data, the buffer is lost: every later
  // access throws veda::DeviceError instead of returning stale bytes.
  void drop_device_untracked(DeviceApi& dev) noexcept;

 private:
  bool on_device_ever() const noexcept { return placed_.load(std::memory_order_acquire); }
  struct DeviceCopy {
    DeviceApi* dev = nullptr;
    void* ptr = nullptr;
    bool valid = false;
    StreamHandle last_stream = nullptr;                          // the stream that used it last
    std::vector<StreamHandle> streams;                           // every stream it was handed to
    std::vector<std::pair<StreamHandle, EventHandle>> inflight;  // per stream: its last use
  };

  DeviceCopy* copy_on_locked(const DeviceApi& dev) noexcept;
  DeviceCopy& ensure_copy_locked(DeviceApi& dev, StreamHandle s);
  void track_before_placing(DeviceApi& dev);
  DeviceCopy& host_source_locked();
  void pull_to_host_locked();
  void pull_from_other_device_locked(const DeviceApi& dev);
  bool copy_from_peer_locked(DeviceCopy& c, StreamHandle s);
  void drop_other_copies_locked(const DeviceApi& keep) noexcept;
  static void release_copy(DeviceCopy& c) noexcept;
  void throw_if_lost_locked() const;
  bool any_device_valid_locked() const noexcept;
  void copy_in_locked(DeviceCopy& c, StreamHandle s);
  static void wait_inflight(DeviceCopy& c);
  static void wait_other_streams(DeviceCopy& c, StreamHandle s);
  static void note_work(DeviceCopy& c, StreamHandle s) noexcept;

  mutable std::mutex mu_;
  // Set (for good) before a device first gets a copy; until then nothing
  // below changes, and the accessors answer without taking mu_ (a lock
  // pair per accessor was most of a small expression's fixed cost).
  std::atomic<bool> placed_{false};
  std::unique_ptr<HostStorage> host_;
  std::size_t bytes_;
  bool host_valid_ = true;
  bool lost_ = false;
  std::vector<DeviceCopy> copies_;      // at most one per device, in the order placed
  std::vector<DeviceApi*> tracked_by_;  // the devices whose evict_all() knows this buffer
};

}  // namespace veda::detail
