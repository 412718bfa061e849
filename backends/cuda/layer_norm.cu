// layer_norm's cuda tier: each row a row for rows::launch (row_reduce.cuh),
// its mean and its variance summed in double in two passes (no
// cancellation), then the result.
#include "backends/cuda/layer_norm.hpp"

#include "backends/cuda/row_reduce.cuh"

namespace veda::detail::cuda {
namespace {

template <class T>
struct LayerNormRow {
  const T* x;
  const T* gamma;  // null: 1
  const T* beta;   // null: 0
  T* y;
  std::size_t d;
  double eps;

  template <class Reduce>
  __device__ void operator()(std::size_t r, unsigned t, unsigned stride, Reduce reduce) const {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    double s = 0;
    for (std::size_t i = t; i < d; i += stride) s += xr[i];
    const T mean = static_cast<T>(reduce(s, rows::Sum{}, 0.0) / static_cast<double>(d));
    double q = 0;
    for (std::size_t i = t; i < d; i += stride) {
      const T c = xr[i] - mean;
      q += c * c;
    }
    const T rstd = static_cast<T>(1 / ::sqrt(reduce(q, rows::Sum{}, 0.0) / static_cast<double>(d) + eps));
    for (std::size_t i = t; i < d; i += stride) {
      const T v = (xr[i] - mean) * rstd;
      yr[i] = (gamma ? v * gamma[i] : v) + (beta ? beta[i] : T(0));
    }
  }
};

}  // namespace

void layer_norm_device(ScalarType type, const void* x, const void* gamma, const void* beta, void* out,
                       std::size_t n_rows, std::size_t d, double eps, cudaStream_t s) {
  if (n_rows * d == 0) return;
  auto run = [&]<class T>(T) {
    const LayerNormRow<T> row{static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<const T*>(beta),
                              static_cast<T*>(out), d, eps};
    rows::launch(n_rows, d, row, s, "veda::layer_norm kernel");
  };
  if (type == ScalarType::F32) run(float{});
  else run(double{});
}

}  // namespace veda::detail::cuda
