// Built in place of eigen.cpp where Eigen's headers are missing: the
// expressions benchmark then says Eigen is not installed.
#include "bench/expressions/contenders.hpp"

namespace bench::expressions {

bool eigen_installed() { return false; }
void eigen(Case, const Memory&) {}

}  // namespace bench::expressions
