#include <span>

#include "bench/par_iter/contenders.hpp"
#include "veda/par_iter.hpp"

namespace bench::par_iter {

float veda_pipeline(const float* x, std::size_t n) {
  return veda::par_iter(std::span<const float>(x, n), {.name = "bench-compute"})
      .map([](float v) { return stage1(v); })
      .filter([](float v) { return keep(v); })
      .map([](float v) { return stage2(v); })
      .sum();
}

double veda_stream(const double* x, std::size_t n) {
  return veda::par_iter(std::span<const double>(x, n), {.name = "bench-stream"})
      .map([](double v) { return scale(v); })
      .sum();
}

}  // namespace bench::par_iter
