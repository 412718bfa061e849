#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "bench/row_ops/contenders.hpp"

namespace bench::row_ops {

void tbb_softmax(const float* x, float* y, std::size_t rows, std::size_t cols) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) softmax_row(x + i * cols, y + i * cols, cols);
  });
}

void tbb_layer_norm(const float* x, const float* g, const float* b, float* y, std::size_t rows, std::size_t cols) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) layer_norm_row(x + i * cols, g, b, y + i * cols, cols);
  });
}

}  // namespace bench::row_ops
