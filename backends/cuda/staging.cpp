#include "backends/cuda/staging.hpp"

#include "backends/cuda/pinned_memory.hpp"

namespace veda::detail::cuda {

StagingPool::StagingPool(std::size_t total, std::size_t slot_bytes) : slot_bytes_(slot_bytes) {
  const std::size_t n = slot_bytes ? total / slot_bytes : 0;
  if (n == 0) return;
  block_ = allocate_pinned(n * slot_bytes);
  if (!block_) return;
  slots_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    slots_[i].ptr = static_cast<char*>(block_) + i * slot_bytes;
    cudaEventCreateWithFlags(&slots_[i].done, cudaEventDisableTiming);
    free_.push_back(&slots_[i]);
  }
}

StagingPool::~StagingPool() {
  for (auto& s : slots_) {
    cudaEventSynchronize(s.done);
    cudaEventDestroy(s.done);
  }
  free_pinned(block_);
}

std::size_t StagingPool::in_use() const {
  std::lock_guard lock(mu_);
  return (slots_.size() - free_.size()) * slot_bytes_;
}

std::vector<StagingPool::Slot*> StagingPool::acquire(std::size_t n) {
  n = std::min(n, slots_.size());
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return free_.size() >= n; });
  std::vector<Slot*> out(free_.end() - static_cast<std::ptrdiff_t>(n), free_.end());
  free_.resize(free_.size() - n);
  return out;
}

void StagingPool::release(const std::vector<Slot*>& slots) {
  {
    std::lock_guard lock(mu_);
    free_.insert(free_.end(), slots.begin(), slots.end());
  }
  cv_.notify_all();
}

}  // namespace veda::detail::cuda
