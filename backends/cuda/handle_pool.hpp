// Library handles (cuBLAS, cuBLASLt, cuSPARSE), one per concurrent caller,
// reused. Handles are kept for the life of the process: destroying them
// after the driver has shut down at exit is not safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "veda/error.hpp"

namespace veda::detail::cuda {

template <class H, class Status>
class HandlePool {
 public:
  using Create = Status (*)(H*);
  HandlePool(Create create, const char* library) : create_(create), library_(library) {}
  H acquire() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        H h = free_.back();
        free_.pop_back();
        return h;
      }
    }
    H h{};
    create_(&h);
    if (!h) throw DeviceError(std::string("could not create a ") + library_ + " handle");
    return h;
  }
  void release(H h) {
    std::lock_guard lock(mu_);
    free_.push_back(h);
  }

 private:
  Create create_;
  const char* library_;
  std::mutex mu_;
  std::vector<H> free_;
};

// One handle for the length of a call.
template <class H, class Status>
struct Lease {
  HandlePool<H, Status>& pool;
  H h;
  explicit Lease(HandlePool<H, Status>& p) : pool(p), h(p.acquire()) {}
  ~Lease() { pool.release(h); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
};

}  // namespace veda::detail::cuda
