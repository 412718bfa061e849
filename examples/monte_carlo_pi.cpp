// monte_carlo_pi: pi from 10^8 random points in the unit square, as a
// par_iter reduction over an index range: point i takes elements 2i and
// 2i + 1 of a veda::random stream (counter-based, so the result does not
// depend on where or in which order the points are evaluated, and the
// points are the same bits on the CPU and the GPU). Small and large runs,
// with decisions.
#include <veda/veda.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>

#include "example_util.hpp"

namespace {
constexpr std::uint64_t kSeed = 2026;

// 1 if point i falls inside the quarter circle.
VEDA_FN inline std::uint64_t inside(std::uint64_t i) {
  const double x = veda::random::uniform_at<double>(kSeed, 2 * i);
  const double y = veda::random::uniform_at<double>(kSeed, 2 * i + 1);
  return x * x + y * y <= 1.0 ? 1 : 0;
}

double estimate(std::uint64_t n) {
  const std::uint64_t hits = veda::par_iter(veda::range<std::uint64_t>(0, n), {.name = "monte_carlo_pi"})
                                 .gpu_map(VEDA_LAMBDA((std::uint64_t i) noexcept, { return inside(i); }))
                                 .sum();
  return 4.0 * static_cast<double>(hits) / static_cast<double>(n);
}
}  // namespace

int main() {
  for (std::uint64_t n : {std::uint64_t{10'000}, std::uint64_t{100'000'000}}) {
    double pi = 0;
    const double us = example::settled_us([&] { pi = estimate(n); }, n > 1'000'000 ? 8 : 20);
    const std::string what = "pi from " + std::to_string(n) + " points";
    example::report(what.c_str(), us);
    std::printf("%-36s = %.6f (error %.2e, %.2f ns per point)\n", "", pi, std::abs(pi - std::numbers::pi), us * 1e3 / n);
  }
  return 0;
}
