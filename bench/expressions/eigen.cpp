// Eigen's array expressions: fused by expression templates, one thread.
#include <Eigen/Core>

#include "bench/expressions/contenders.hpp"

namespace bench::expressions {

bool eigen_installed() { return true; }

void eigen(Case c, const Memory& m) {
  const auto n = static_cast<Eigen::Index>(m.n);
  Eigen::Map<const Eigen::ArrayXf> x(m.x, n), y(m.y, n);
  Eigen::Map<Eigen::ArrayXf> o(m.out, n);
  switch (c) {
    case Case::Axpy: o = 2 * x + y; break;
    case Case::Rational: o = (x - y) * (x + y) / (1 + x * x); break;
    case Case::LeakySqrt: o = (x > 0).select(x, 0.1f * x) + y.abs().sqrt(); break;
    case Case::Normalize: {
      const auto cols = static_cast<Eigen::Index>(m.cols);
      // Column-major: a column per row of X.
      Eigen::Map<const Eigen::ArrayXXf> X(m.x, cols, n / cols);
      Eigen::Map<const Eigen::ArrayXf> mu(m.mu, cols), sd(m.sd, cols);
      Eigen::Map<Eigen::ArrayXXf> O(m.out, cols, n / cols);
      O = (X.colwise() - mu).colwise() / sd;
      break;
    }
  }
}

}  // namespace bench::expressions
