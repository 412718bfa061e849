// Contenders of the seeds case: the workloads of examples/ (after the seed
// documents), each as veda code (veda.cpp, compiled by nvcc with the CUDA
// backend) and as the hand-written peers a user would otherwise write:
// serial loops (serial.cpp), oneTBB (tbb.cpp), OpenBLAS (openblas.cpp).
// Every contender returns a checksum of its result, so main can check that
// they all computed the same thing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "veda/detail/site_mode.hpp"

namespace bench::seeds {

// matmul: C = A B, n x n floats.
struct Matmul {
  std::size_t n;
  std::vector<float> a, b, c;
  explicit Matmul(std::size_t n);
};
double matmul_veda(Matmul& w);
double matmul_openblas(Matmul& w);

// Monte-Carlo pi over points 0..n-1; point i is a hash of i, so the count
// does not depend on the order of evaluation.
VEDA_FN inline std::uint64_t inside(std::uint64_t i) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E5ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double x = static_cast<double>(z >> 32) * (1.0 / 4294967296.0);
  const double y = static_cast<double>(z & 0xffffffffull) * (1.0 / 4294967296.0);
  return x * x + y * y <= 1.0 ? 1 : 0;
}
double pi_veda(std::uint64_t n);
double pi_tbb(std::uint64_t n);
double pi_serial(std::uint64_t n);

// Image filter: a 5 x 5 Gaussian blur of `count` 256 x 256 images; the
// checksum is the sum of every image's mean brightness.
struct Images {
  static constexpr int kH = 256, kW = 256, kR = 2;
  int count;
  float w[2 * kR + 1][2 * kR + 1];
  std::vector<float> in, out;
  explicit Images(int count);
  void blur(int image);  // one image, serially
  double mean(int image) const;
};
double blur_veda(Images& w);
double blur_tbb(Images& w);
double blur_serial(Images& w);

// Linear regression: `steps` gradient-descent steps of least squares over
// m samples of k features (row-major X); the checksum is the weights' sum.
struct Regression {
  std::size_t m, k, steps;
  float lr = 0.1f;
  std::vector<float> x, y;
  Regression(std::size_t m, std::size_t k, std::size_t steps);
};
// veda's contender keeps X and y as veda::Arrays made once (on a GPU they
// stay resident between calls, as they would in a user's training loop).
std::function<double()> regression_veda(const Regression& w);
double regression_tbb(const Regression& w);
double regression_serial(const Regression& w);
double regression_openblas(const Regression& w);

// Normalisation: z-score every column of an n x d matrix, then the Gram
// matrix Z Z^T; the checksum is the Gram matrix's trace.
struct Normalize {
  std::size_t n, d;
  std::vector<float> x, z, g;
  Normalize(std::size_t n, std::size_t d);
};
std::function<double()> normalize_veda(Normalize& w);  // X, ones as Arrays made once
double normalize_tbb(Normalize& w);     // statistics with oneTBB, Gram by OpenBLAS
double normalize_serial(Normalize& w);  // statistics in loops, Gram by OpenBLAS
void gram_openblas(const float* z, std::size_t n, std::size_t d, float* g);
double trace(const std::vector<float>& g, std::size_t n);

}  // namespace bench::seeds
