// StagingPool: page-locked host buffers ("slots") that pageable transfers go
// through in chunks, so the CPU copy of one chunk overlaps the DMA of the
// previous one. Sized from Config::pinned_staging; slots are shared by all
// threads and each carries an event marking when its last DMA finished.
//
// Thread-safety: acquire/release may be called concurrently.
#pragma once

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace veda::detail::cuda {

class StagingPool {
 public:
  struct Slot {
    void* ptr = nullptr;
    cudaEvent_t done = nullptr;  // recorded after the last DMA using ptr
  };

  // total == 0, or a failed cudaHostAlloc, leaves the pool empty (disabled).
  StagingPool(std::size_t total, std::size_t slot_bytes);
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  bool enabled() const noexcept { return !slots_.empty(); }
  std::size_t slot_bytes() const noexcept { return slot_bytes_; }
  std::size_t slot_count() const noexcept { return slots_.size(); }
  std::size_t total() const noexcept { return slot_bytes_ * slots_.size(); }
  std::size_t in_use() const;

  // Waits until `n` slots are free (n is capped at slot_count()). Before
  // writing to a slot's memory, wait for its `done` event.
  std::vector<Slot*> acquire(std::size_t n);
  void release(const std::vector<Slot*>& slots);

 private:
  std::size_t slot_bytes_;
  void* block_ = nullptr;
  std::vector<Slot> slots_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot*> free_;
};

}  // namespace veda::detail::cuda
