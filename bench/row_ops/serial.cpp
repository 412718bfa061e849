#include "bench/row_ops/contenders.hpp"

namespace bench::row_ops {

void serial_softmax(const float* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) softmax_row(x + r * cols, y + r * cols, cols);
}

void serial_layer_norm(const float* x, const float* g, const float* b, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) layer_norm_row(x + r * cols, g, b, y + r * cols, cols);
}

}  // namespace bench::row_ops
