#include "backends/cpu/linear_backward.hpp"

#include <algorithm>
#include <vector>

#include "backends/cpu/tasks.hpp"

namespace veda::detail::cpu {
namespace {
constexpr std::size_t kChunk = 16384;  // elements a task of activation_grad
constexpr std::size_t kRowBlock = 512;  // rows a column_sums block
constexpr std::size_t kColBlock = 1024;  // columns a column_sums task
}  // namespace

template <class T>
void activation_grad(CpuExecutor* parallel, T* out, const T* g, const T* z, std::size_t count, Activation act) {
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  for_each_task(parallel, chunks, 1, [&](std::size_t c) {
    const std::size_t i1 = std::min(count, (c + 1) * kChunk);
    switch (act) {  // one loop per activation, so each vectorises
      case Activation::None:
        for (std::size_t i = c * kChunk; i < i1; ++i) out[i] = g[i];
        break;
      case Activation::Relu:
        for (std::size_t i = c * kChunk; i < i1; ++i) out[i] = z[i] > T(0) ? g[i] : T(0);
        break;
      case Activation::Gelu:
        for (std::size_t i = c * kChunk; i < i1; ++i) out[i] = g[i] * activation_derivative(z[i], Activation::Gelu);
        break;
    }
  });
}

template <class T>
void column_sums(CpuExecutor* parallel, const T* a, std::size_t rows, std::size_t cols, T* sums) {
  if (cols == 0) return;
  const std::size_t row_blocks = std::max<std::size_t>(1, (rows + kRowBlock - 1) / kRowBlock);
  const std::size_t col_blocks = (cols + kColBlock - 1) / kColBlock;
  std::vector<double> partial(row_blocks * cols);
  for_each_task(parallel, row_blocks * col_blocks, 1, [&](std::size_t t) {
    const std::size_t rb = t / col_blocks, c0 = (t % col_blocks) * kColBlock, c1 = std::min(cols, c0 + kColBlock);
    double* p = partial.data() + rb * cols;
    for (std::size_t r = rb * kRowBlock; r < std::min(rows, (rb + 1) * kRowBlock); ++r)
      for (std::size_t c = c0; c < c1; ++c) p[c] += static_cast<double>(a[r * cols + c]);
  });
  for_each_task(parallel, col_blocks, 1, [&](std::size_t cb) {
    for (std::size_t c = cb * kColBlock; c < std::min(cols, (cb + 1) * kColBlock); ++c) {
      double s = 0;
      for (std::size_t rb = 0; rb < row_blocks; ++rb) s += partial[rb * cols + c];
      sums[c] = static_cast<T>(s);
    }
  });
}

template void activation_grad<float>(CpuExecutor*, float*, const float*, const float*, std::size_t, Activation);
template void activation_grad<double>(CpuExecutor*, double*, const double*, const double*, std::size_t, Activation);
template void column_sums<float>(CpuExecutor*, const float*, std::size_t, std::size_t, float*);
template void column_sums<double>(CpuExecutor*, const double*, std::size_t, std::size_t, double*);

}  // namespace veda::detail::cpu
