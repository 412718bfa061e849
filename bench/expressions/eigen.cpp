// Eigen's array expressions: fused by expression templates, one thread.
#include <Eigen/Core>

#include "bench/expressions/contenders.hpp"

namespace bench::expressions {

bool eigen_installed() { return true; }

void eigen(Case c, const Data& d, std::vector<float>& out) {
  const auto n = static_cast<Eigen::Index>(out.size());
  Eigen::Map<const Eigen::ArrayXf> x(d.x.data(), n), y(d.y.data(), n);
  Eigen::Map<Eigen::ArrayXf> o(out.data(), n);
  switch (c) {
    case Case::Axpy: o = 2 * x + y; break;
    case Case::Rational: o = (x - y) * (x + y) / (1 + x * x); break;
    case Case::LeakySqrt: o = (x > 0).select(x, 0.1f * x) + y.abs().sqrt(); break;
    case Case::Normalize: {
      const auto cols = static_cast<Eigen::Index>(d.cols);
      // Column-major: a column per row of X.
      Eigen::Map<const Eigen::ArrayXXf> X(d.x.data(), cols, n / cols);
      Eigen::Map<const Eigen::ArrayXf> mu(d.mu.data(), cols), sd(d.sd.data(), cols);
      Eigen::Map<Eigen::ArrayXXf> O(out.data(), cols, n / cols);
      O = (X.colwise() - mu).colwise() / sd;
      break;
    }
  }
}

}  // namespace bench::expressions
