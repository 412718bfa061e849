// monte_carlo_pi: pi from 10^8 random points in the unit square, as a
// par_iter reduction over an index range: each index hashes to its own
// point (counter-based, so the result does not depend on where or in which
// order the points are evaluated). Small and large runs, with decisions.
#include <veda/veda.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>

#include "example_util.hpp"

namespace {
// 1 if point i falls inside the quarter circle. SplitMix64 gives two
// independent 32-bit coordinates per index.
VEDA_FN inline std::uint64_t inside(std::uint64_t i) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E5ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double x = static_cast<double>(z >> 32) * (1.0 / 4294967296.0);
  const double y = static_cast<double>(z & 0xffffffffull) * (1.0 / 4294967296.0);
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
