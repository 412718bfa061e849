#include "bench/transpose/contenders.hpp"
#include "veda/transpose.hpp"

namespace bench::transpose {

void veda_transpose(const std::vector<double>& a, std::vector<double>& b, std::size_t n) {
  veda::transpose(a, b, n, n);
}

void veda_accumulate(const std::vector<double>& a, std::vector<double>& b, std::size_t n) {
  veda::transpose(a, b, n, n, {.beta = 1});
}

}  // namespace bench::transpose
