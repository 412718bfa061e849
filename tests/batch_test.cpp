// Contract: batches of Arrays. par_iter over a std::vector of Arrays runs
// its stages on every element, with veda ops (matmul, expressions,
// reductions) called inside them as nested calls: the results equal a
// plain loop's, in source order, for 0, 1, a prime and more elements than
// threads; nested matmuls never take cpu-blas (OpenBLAS's threads would
// oversubscribe the outer loop) and learn apart from top-level ones; a 3-D
// matmul gives the same products as the loop over the batch.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/veda.hpp"

namespace {

std::vector<veda::Array<float>> matrices(std::size_t count, std::size_t n) {
  std::vector<veda::Array<float>> v;
  for (std::size_t b = 0; b < count; ++b) {
    veda::Array<float> a(n, n);
    auto h = a.host();
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 31 + b * 7) % 17) / 8.0f - 1.0f;
    v.push_back(std::move(a));
  }
  return v;
}

}  // namespace

TEST_CASE("par_iter over Arrays: ops inside a stage give a plain loop's results, in order") {
  veda_test::OpRuntime rt;
  for (std::size_t count : {0u, 1u, 7u, 61u}) {
    CAPTURE(count);
    const auto mats = matrices(count, 24);
    // The plain loop: each product, then its scaled sum, one by one.
    std::vector<float> want;
    for (const auto& m : mats) {
      const auto g = veda::matmul(m, m, {.transpose_b = true, .tier = "cpu-reference"});
      want.push_back(veda::sum(veda::eval(g * 0.5f + 1, {.tier = "serial"}), 0).host()[0]);
    }
    const std::vector<float> got =
        veda::par_iter(mats)
            .map([](const veda::Array<float>& m) {
              const auto g = veda::matmul(m, m, {.transpose_b = true});
              CHECK(veda::last_decision().tier != "cpu-blas");  // nested: never OpenBLAS's threads
              return veda::sum(veda::eval(g * 0.5f + 1), 0).host()[0];
            })
            .collect();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
    const double total = veda::par_iter(mats).map([](const veda::Array<float>& m) { return veda::sum(m); }).sum();
    double plain = 0;
    for (const auto& m : mats) plain += veda::sum(m);
    CHECK(total == doctest::Approx(plain));
  }
}

TEST_CASE("a 3-D matmul gives the products of the loop over the batch") {
  veda_test::OpRuntime rt;
  const std::size_t count = 13, n = 20;
  const auto mats = matrices(count, n);
  veda::Array<float> stack(veda::Shape{count, n, n});
  for (std::size_t b = 0; b < count; ++b)
    std::copy(mats[b].host().begin(), mats[b].host().end(), stack.host().begin() + b * n * n);
  const auto all = veda::matmul(stack, stack);
  for (std::size_t b = 0; b < count; ++b) {
    const auto one = veda::matmul(mats[b], mats[b]);
    for (std::size_t i = 0; i < n * n; ++i)
      CHECK(all.host()[b * n * n + i] == doctest::Approx(one.host()[i]).epsilon(1e-5));
  }
}
