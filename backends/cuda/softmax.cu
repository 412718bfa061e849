// softmax's cuda tier. Along the last axis, a slice is a row for
// rows::launch (row_reduce.cuh): three passes over it in strides of its
// threads (the max, the sum of exponentials in double, the result). Along
// another axis, each thread takes a column, so neighbouring threads read
// neighbouring elements.
#include "backends/cuda/softmax.hpp"

#include <cmath>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/row_reduce.cuh"

namespace veda::detail::cuda {
namespace {

template <class T>
struct SoftmaxRow {
  const T* x;
  T* y;
  std::size_t len;
  bool log;

  template <class Reduce>
  __device__ void operator()(std::size_t r, unsigned t, unsigned stride, Reduce reduce) const {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    T m = -INFINITY;
    for (std::size_t i = t; i < len; i += stride) m = rows::Max{}(m, xr[i]);
    m = reduce(m, rows::Max{}, T(-INFINITY));
    double s = 0;
    for (std::size_t i = t; i < len; i += stride) s += rows::exp_of(xr[i] - m);
    s = reduce(s, rows::Sum{}, 0.0);
    if (log) {
      const T ls = static_cast<T>(::log(s));
      for (std::size_t i = t; i < len; i += stride) yr[i] = (xr[i] - m) - ls;
    } else {
      const T inv = static_cast<T>(1 / s);
      for (std::size_t i = t; i < len; i += stride) yr[i] = rows::exp_of(xr[i] - m) * inv;
    }
  }
};

template <class T>
__global__ void columns(const T* x, T* y, std::size_t outer, std::size_t len, std::size_t inner, bool log) {
  const std::size_t total = outer * inner, step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < total; c += step) {
    const std::size_t base = c / inner * len * inner + c % inner;
    const T* xc = x + base;
    T* yc = y + base;
    T m = -INFINITY;
    for (std::size_t j = 0; j < len; ++j) m = rows::Max{}(m, xc[j * inner]);
    double s = 0;
    for (std::size_t j = 0; j < len; ++j) s += rows::exp_of(xc[j * inner] - m);
    const T f = static_cast<T>(log ? ::log(s) : 1 / s);
    for (std::size_t j = 0; j < len; ++j)
      yc[j * inner] = log ? (xc[j * inner] - m) - f : rows::exp_of(xc[j * inner] - m) * f;
  }
}

template <class T>
void run(const T* x, T* y, std::size_t outer, std::size_t len, std::size_t inner, bool log, cudaStream_t s) {
  if (inner == 1) return rows::launch(outer, len, SoftmaxRow<T>{x, y, len, log}, s, "veda::softmax kernel");
  columns<<<rows::grid((outer * inner + rows::kBlock - 1) / rows::kBlock), rows::kBlock, 0, s>>>(x, y, outer, len,
                                                                                                 inner, log);
  launched("veda::softmax kernel (strided axis)");
}

}  // namespace

void softmax_device(ScalarType type, const void* in, void* out, std::size_t outer, std::size_t len,
                    std::size_t inner, bool log, cudaStream_t s) {
  if (outer * len * inner == 0) return;
  if (type == ScalarType::F32)
    run(static_cast<const float*>(in), static_cast<float*>(out), outer, len, inner, log, s);
  else
    run(static_cast<const double*>(in), static_cast<double*>(out), outer, len, inner, log, s);
}

}  // namespace veda::detail::cuda
