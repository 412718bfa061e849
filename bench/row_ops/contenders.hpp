// Contenders of the row-ops case, on row-major rows x cols floats: softmax
// along each row and layer_norm of each row (gamma and beta), as their users
// write them: three passes per softmax row, two sums and a pass per
// layer_norm row, sums in bench/common/lanes.hpp's lanes (as veda's); the
// oneTBB peer gives rows to workers. veda's calls take Arrays made once (as
// a program holding its tensors in veda::Arrays would) and write into an
// output Array made once (the _into forms); the loops read and write the
// same memory (main.cpp says why). veda's calls choose their tier and leave
// the result where it was computed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "bench/common/lanes.hpp"
#include "veda/array.hpp"

namespace bench::row_ops {

void serial_softmax(const float* x, float* y, std::size_t rows, std::size_t cols);
void tbb_softmax(const float* x, float* y, std::size_t rows, std::size_t cols);
void veda_softmax(const veda::Array<float>& x, veda::Array<float>& y);

void serial_layer_norm(const float* x, const float* g, const float* b, float* y, std::size_t rows, std::size_t cols);
void tbb_layer_norm(const float* x, const float* g, const float* b, float* y, std::size_t rows, std::size_t cols);
void veda_layer_norm(const veda::Array<float>& x, const veda::Array<float>& g, const veda::Array<float>& b,
                     veda::Array<float>& y);

inline void softmax_row(const float* x, float* y, std::size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m);
  const float r = 1.0f / sum_lanes<float>(0, n, [y](std::size_t i) { return y[i]; });
  for (std::size_t i = 0; i < n; ++i) y[i] *= r;
}

inline void layer_norm_row(const float* x, const float* g, const float* b, float* y, std::size_t n) {
  const float mean = sum_lanes<float>(0, n, [x](std::size_t i) { return x[i]; }) / static_cast<float>(n);
  const float var = sum_lanes<float>(0, n, [x, mean](std::size_t i) { return (x[i] - mean) * (x[i] - mean); }) /
                    static_cast<float>(n);
  const float rstd = 1.0f / std::sqrt(var + 1e-5f);
  for (std::size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * g[i] + b[i];
}

}  // namespace bench::row_ops
