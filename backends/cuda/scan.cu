#include "backends/cuda/scan.hpp"

#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"

namespace veda::detail::cuda {
namespace {

struct Plus {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

template <class T>
void run(CudaDevice& dev, const T* in, T* out, std::size_t n, bool inclusive, T init, cudaStream_t s) {
  const auto count = static_cast<std::int64_t>(n);
  std::size_t bytes = 0;
  auto call = [&](void* temp) {
    return inclusive ? cub::DeviceScan::InclusiveSum(temp, bytes, in, out, count, s)
                     : cub::DeviceScan::ExclusiveScan(temp, bytes, in, out, Plus{}, init, count, s);
  };
  check(call(nullptr), "cub::DeviceScan (sizing)");
  void* temp = dev.pool().allocate(bytes, s);
  try {
    launched(call(temp), "cub::DeviceScan");
  } catch (...) {
    dev.pool().deallocate(temp, s);
    throw;
  }
  dev.pool().deallocate(temp, s);  // stream-ordered: reused only after the scan
}

}  // namespace

void scan_device(CudaDevice& dev, ScalarType type, const void* in, void* out, std::size_t n, bool inclusive,
                 const void* init, cudaStream_t s) {
  if (n == 0) return;
  dev.make_current();
  auto go = [&](auto tag) {
    using T = decltype(tag);
    run<T>(dev, static_cast<const T*>(in), static_cast<T*>(out), n, inclusive,
           init ? *static_cast<const T*>(init) : T(0), s);
  };
  switch (type) {
    case ScalarType::F32: return go(float{});
    case ScalarType::F64: return go(double{});
    case ScalarType::I32: return go(std::int32_t{});
    case ScalarType::I64: return go(std::int64_t{});
    case ScalarType::U32: return go(std::uint32_t{});
    case ScalarType::U64: return go(std::uint64_t{});
    default: throw InvalidArgument("veda: no GPU scan for this element type");
  }
}

}  // namespace veda::detail::cuda
