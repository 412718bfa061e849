#include "backends/cuda/reduce_ops.hpp"

#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <limits>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"

namespace veda::detail::cuda {
namespace {

// Accumulates narrower inputs into the wider sum type (int32 into int64).
struct Plus {
  template <class A, class B>
  __host__ __device__ auto operator()(const A& a, const B& b) const {
    return a + b;
  }
};

template <class In, class Out, class Op>
void run(const In* in, std::size_t n, Out init, Op op, void* host_result, CudaDevice& dev, cudaStream_t s) {
  Out* d_out = static_cast<Out*>(dev.pool().allocate(sizeof(Out), s));
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  try {
    check(cub::DeviceReduce::Reduce(nullptr, temp_bytes, in, d_out, n, op, init, s), "cub::DeviceReduce");
    temp = dev.pool().allocate(temp_bytes, s);
    launched(cub::DeviceReduce::Reduce(temp, temp_bytes, in, d_out, n, op, init, s), "cub::DeviceReduce");
    check(cudaMemcpyAsync(host_result, d_out, sizeof(Out), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  } catch (...) {
    if (temp) dev.pool().deallocate(temp, s);
    dev.pool().deallocate(d_out, s);
    throw;
  }
  dev.pool().deallocate(temp, s);
  dev.pool().deallocate(d_out, s);
}

template <class T>
void dispatch(ReduceKind kind, const void* in, std::size_t n, void* out, CudaDevice& dev, cudaStream_t s) {
  const T* p = static_cast<const T*>(in);
  switch (kind) {
    case ReduceKind::Sum: run<T, sum_t<T>>(p, n, sum_t<T>{0}, Plus{}, out, dev, s); break;
    case ReduceKind::Min: run<T, T>(p, n, std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                              : std::numeric_limits<T>::max(),
                                    NanMin{}, out, dev, s);
      break;
    case ReduceKind::Max: run<T, T>(p, n, std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                              : std::numeric_limits<T>::lowest(),
                                    NanMax{}, out, dev, s);
      break;
  }
}

}  // namespace

void reduce_builtin(ReduceKind kind, ScalarType type, const void* in, std::size_t n, void* out, CudaDevice& dev,
                    cudaStream_t s) {
  dev.make_current();
  switch (type) {
    case ScalarType::F32: dispatch<float>(kind, in, n, out, dev, s); break;
    case ScalarType::F64: dispatch<double>(kind, in, n, out, dev, s); break;
    case ScalarType::I32: dispatch<std::int32_t>(kind, in, n, out, dev, s); break;
    case ScalarType::I64: dispatch<std::int64_t>(kind, in, n, out, dev, s); break;
    case ScalarType::U32: dispatch<std::uint32_t>(kind, in, n, out, dev, s); break;
    case ScalarType::U64: dispatch<std::uint64_t>(kind, in, n, out, dev, s); break;
    case ScalarType::U8: dispatch<std::uint8_t>(kind, in, n, out, dev, s); break;
    case ScalarType::Unsupported: throw InvalidArgument("veda: no GPU reduction for this element type");
  }
}

}  // namespace veda::detail::cuda
