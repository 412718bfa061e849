// Contract: veda::moe_route picks each token's top_k experts (larger logit
// first, ties to the lower index, NaN above every number), gates them with
// a softmax over the chosen logits, counts the assignments per expert,
// gives their offsets and the stable order grouped by expert, and the
// router's mean probability per expert with the Switch load-balancing
// loss; the same on every tier this build and machine can run, for both
// element types: one token, one expert, top_k = experts, primes, tokens
// fewer than the threads, experts receiving no tokens, 10^7 logits (the
// CPU tiers bitwise equal); moe_dispatch and moe_combine gather the rows
// order names and add them gated; bad top_k, tier, placement and rows that
// do not match the routing throw InvalidArgument before any work.
// Built twice in the CUDA configuration: moe_route_test and
// gpu_moe_route_test (labelled gpu: the cuda tier forced too).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/moe_route.hpp"

namespace {
using Runtime = veda_test::OpRuntime;

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

// Logits in steps of 1/8 over a few units: ties are common.
template <class T>
veda::Array<T> logits(veda::Shape s, unsigned seed) {
  veda::Array<T> a(s);
  std::uint32_t x = seed * 2654435761u + 7;
  for (auto& v : a.host()) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<T>(static_cast<int>(x >> 26) - 32) / T(8);
  }
  return a;
}

struct Want {
  std::vector<std::int64_t> ids, counts, offsets, order;
  std::vector<double> gates, importance;
};

// The definition in double, by a full sort of each token's experts.
template <class T>
Want oracle(const veda::Array<T>& l, std::size_t k) {
  const std::size_t E = l.extent(l.ndim() - 1), N = l.size() / E;
  Want w;
  w.counts.assign(E, 0);
  w.importance.assign(E, 0.0);
  std::vector<std::vector<std::int64_t>> by_expert(E);
  for (std::size_t t = 0; t < N; ++t) {
    const T* row = l.host().data() + t * E;
    std::vector<std::size_t> r(E);
    std::iota(r.begin(), r.end(), 0);
    std::stable_sort(r.begin(), r.end(), [&](std::size_t a, std::size_t b) {
      const bool na = std::isnan(row[a]), nb = std::isnan(row[b]);
      return na != nb ? na : !na && row[a] > row[b];
    });
    double z = 0, all = 0;
    const double top = row[r[0]];
    for (std::size_t s = 0; s < k; ++s) z += std::exp(row[r[s]] - top);
    for (std::size_t s = 0; s < k; ++s) {
      w.ids.push_back(static_cast<std::int64_t>(r[s]));
      w.gates.push_back(std::exp(row[r[s]] - top) / z);
      ++w.counts[r[s]];
      by_expert[r[s]].push_back(static_cast<std::int64_t>(t * k + s));
    }
    for (std::size_t e = 0; e < E; ++e) all += std::exp(row[e] - top);
    for (std::size_t e = 0; e < E; ++e) w.importance[e] += std::exp(row[e] - top) / all / static_cast<double>(N);
  }
  w.offsets.assign(1, 0);
  for (std::size_t e = 0; e < E; ++e) {
    w.offsets.push_back(w.offsets.back() + w.counts[e]);
    w.order.insert(w.order.end(), by_expert[e].begin(), by_expert[e].end());
  }
  return w;
}

template <class A>
std::vector<typename A::value_type> values(const A& a) {
  return {a.host().begin(), a.host().end()};
}

template <class T>
void check_route(const veda::MoeRouting<T>& r, const Want& w, double tol) {
  CHECK(values(r.ids) == w.ids);
  CHECK(values(r.counts) == w.counts);
  CHECK(values(r.offsets) == w.offsets);
  CHECK(values(r.order) == w.order);
  REQUIRE(r.gates.size() == w.gates.size());
  double worst = 0;
  for (std::size_t i = 0; i < w.gates.size(); ++i) worst = std::max(worst, std::abs(r.gates.host()[i] - w.gates[i]));
  for (std::size_t e = 0; e < w.importance.size(); ++e)
    worst = std::max(worst, std::abs(r.importance.host()[e] - w.importance[e]));
  CHECK(worst <= tol);
}

template <class T>
double tolerance() {
  return sizeof(T) == 4 ? 2e-6 : 1e-13;
}

struct Case {
  veda::Shape shape;
  std::size_t k;
};
const Case kCases[] = {
    {veda::Shape{1, 1}, 1},        // one token, one expert
    {veda::Shape{8}, 2},           // 1-D: one token
    {veda::Shape{7, 4}, 4},        // top_k = experts; fewer tokens than threads
    {veda::Shape{97, 16}, 2},      // a prime number of tokens
    {veda::Shape{3001, 7}, 3},     // a prime number of experts
    {veda::Shape{4099, 64}, 2},    // past a warp of experts, several blocks of tokens
    {veda::Shape{2, 5, 33}, 1},    // [batch, seq, experts]
    {veda::Shape{300, 257}, 8},    // more experts than a warp's lanes hold at once
};
}  // namespace

TEST_CASE_TEMPLATE("moe_route agrees with the definition for every shape, top_k and tier", T, float, double) {
  Runtime rt;
  unsigned seed = 1;
  for (const Case& c : kCases) {
    CAPTURE(c.shape.str());
    CAPTURE(c.k);
    const auto l = logits<T>(c.shape, seed++);
    const Want want = oracle(l, c.k);
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      const veda_test::DeviceWork w;
      const auto r = veda::moe_route(l, c.k, {.tier = tier});
      veda_test::check_ran(tier, w);
      CHECK(veda::last_decision().name == "moe_route");
      CHECK(r.ids.shape().size() == l.size() / l.extent(l.ndim() - 1) * c.k);
      CHECK(r.ids.shape()[c.shape.ndim() - 1] == c.k);
      CHECK(r.gates.shape() == r.ids.shape());
      CHECK(r.offsets.size() == r.experts + 1);
      check_route(r, want, tolerance<T>());
    }
  }
}

TEST_CASE("experts that receive no tokens, the load-balance figures, NaN") {
  Runtime rt;
  const std::size_t E = 6, N = 60;
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    // Token t prefers expert 1 + t % 3 by far: experts 0, 4 and 5 get nothing.
    veda::Array<float> skew(veda::Shape{N, E});
    for (std::size_t t = 0; t < N; ++t) skew.at(t, 1 + t % 3) = 20.0f;
    const auto r = veda::moe_route(skew, 1, {.tier = tier});
    CHECK(values(r.counts) == std::vector<std::int64_t>{0, 20, 20, 20, 0, 0});
    CHECK(values(r.offsets) == std::vector<std::int64_t>{0, 0, 20, 40, 60, 60, 60});
    const auto u = r.utilisation();
    CHECK(u[0] == 0.0);
    CHECK(u[1] == doctest::Approx(1.0 / 3));
    // Nearly all the mass on the three chosen: aux_loss ~ 6 * 3 * (1/3)^2 = 2.
    CHECK(r.aux_loss() == doctest::Approx(2.0).epsilon(1e-6));
    // Balanced: token t prefers expert t % E; every figure uniform, aux_loss 1.
    veda::Array<double> even(veda::Shape{N, E});
    for (std::size_t t = 0; t < N; ++t) even.at(t, t % E) = 3.0;
    const auto b = veda::moe_route(even, 1, {.tier = tier});
    for (auto c : b.counts.host()) CHECK(c == 10);
    CHECK(b.aux_loss() == doctest::Approx(1.0).epsilon(1e-12));
    // A NaN logit ranks first and makes its token's gates NaN; others are unaffected.
    veda::Array<float> l = logits<float>(veda::Shape{5, E}, 3);
    l.at(2, 4) = std::numeric_limits<float>::quiet_NaN();
    const auto n = veda::moe_route(l, 2, {.tier = tier});
    CHECK(n.ids.at(2, 0) == 4);
    CHECK(std::isnan(n.gates.at(2, 0)));
    CHECK(n.gates.at(1, 0) + n.gates.at(1, 1) == doctest::Approx(1.0f));
    // No tokens: zero counts and importance, empty order.
    const auto none = veda::moe_route(veda::Array<float>(veda::Shape{0, E}), 2, {.tier = tier});
    CHECK(none.ids.shape() == veda::Shape{0, 2});
    CHECK(none.order.size() == 0);
    CHECK(values(none.offsets) == std::vector<std::int64_t>(E + 1, 0));
    CHECK(none.aux_loss() == 0.0);
  }
}

TEST_CASE("10^7 logits: the CPU tiers give the same bits, and agree with the definition") {
  Runtime rt;
  const auto l = logits<float>(veda::Shape{156251, 64}, 9);  // 10^7 + 64 logits
  const auto a = veda::moe_route(l, 2, {.tier = "serial"});
  const auto b = veda::moe_route(l, 2, {.tier = "tbb-auto"});
  CHECK(values(a.ids) == values(b.ids));
  CHECK(values(a.gates) == values(b.gates));
  CHECK(values(a.order) == values(b.order));
  CHECK(values(a.importance) == values(b.importance));
  check_route(a, oracle(l, 2), 1e-5);
  if (veda::get_runtime().gpu_usable()) {
    const auto g = veda::moe_route(l, 2, {.tier = "cuda"});
    CHECK(values(g.ids) == values(a.ids));
    CHECK(values(g.order) == values(a.order));
    CHECK(values(g.counts) == values(a.counts));
  }
}

TEST_CASE_TEMPLATE("moe_dispatch and moe_combine move rows as order says, on every tier", T, float, double) {
  Runtime rt;
  struct Move {
    veda::Shape logits;
    std::size_t k, d;
  };
  for (const Move& m : {Move{veda::Shape{1, 1}, 1, 1}, Move{veda::Shape{97, 16}, 2, 33}, Move{veda::Shape{2, 5, 8}, 3, 4},
                        Move{veda::Shape{4099, 64}, 2, 40}, Move{veda::Shape{0, 4}, 2, 8}, Move{veda::Shape{9, 4}, 2, 0}}) {
    CAPTURE(m.logits.str());
    const auto r = veda::moe_route(logits<T>(m.logits, 5), m.k);
    const std::size_t N = r.tokens, K = m.k, n = N * K;
    const auto x = logits<T>(veda::Shape{N, m.d}, 6), y = logits<T>(veda::Shape{n, m.d}, 7);
    std::vector<T> gathered(n * m.d), combined(N * m.d, T(0));
    std::vector<std::size_t> row(n);
    for (std::size_t i = 0; i < n; ++i) row[static_cast<std::size_t>(r.order.host()[i])] = i;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < m.d; ++c)
        gathered[i * m.d + c] = x.host()[static_cast<std::size_t>(r.order.host()[i]) / K * m.d + c];
    for (std::size_t t = 0; t < N; ++t)
      for (std::size_t c = 0; c < m.d; ++c)
        for (std::size_t s = 0; s < K; ++s)
          combined[t * m.d + c] += r.gates.host()[t * K + s] * y.host()[row[t * K + s] * m.d + c];
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      veda_test::DeviceWork w;
      const auto g = veda::moe_dispatch(x, r, {.tier = tier});
      if (g.size()) veda_test::check_ran(tier, w);
      CHECK(g.shape() == veda::Shape{n, m.d});
      CHECK(values(g) == gathered);  // copies: exact
      w = veda_test::DeviceWork();
      const auto c = veda::moe_combine(y, r, {.tier = tier});
      if (c.size()) veda_test::check_ran(tier, w);
      CHECK(c.shape() == veda::Shape{N, m.d});
      double worst = 0;
      for (std::size_t i = 0; i < combined.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(c.host()[i] - combined[i])));
      CHECK(worst <= 4 * tolerance<T>());
    }
  }
}

TEST_CASE("moe_dispatch and moe_combine: rows that do not match the routing name it, before any work") {
  Runtime rt;
  using doctest::Contains;
  using veda::InvalidArgument;
  const auto r = veda::moe_route(logits<float>(veda::Shape{10, 4}, 2), 2);
  CHECK_THROWS_WITH_AS(veda::moe_dispatch(logits<float>(veda::Shape{9, 3}, 1), r),
                       Contains("moe_dispatch: x (9x3) must have 10 tokens before its feature axis"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::moe_combine(logits<float>(veda::Shape{10, 3}, 1), r),
                       Contains("moe_combine: y (10x3) must have 20 rows, one per assignment"), InvalidArgument);
  veda::MoeRouting<float> broken;  // not from moe_route
  broken.tokens = 10;
  broken.experts = 4;
  broken.top_k = 3;
  CHECK_THROWS_WITH_AS(veda::moe_dispatch(logits<float>(veda::Shape{10, 3}, 1), broken),
                       Contains("the routing is not one moe_route made (10 tokens x top_k 3, but order has 0 entries"),
                       InvalidArgument);
  CHECK(veda::moe_dispatch(logits<float>(veda::Shape{10, 3}, 1), r).shape() == veda::Shape{20, 3});
}

TEST_CASE("bad top_k, tier and placement name what is wrong, before any work") {
  Runtime rt;
  using doctest::Contains;
  using veda::InvalidArgument;
  const auto l = logits<float>(veda::Shape{10, 4}, 2);
  CHECK_THROWS_WITH_AS(veda::moe_route(l, 0), Contains("top_k must be in 1..4 (the experts of 10x4 logits); it is 0"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::moe_route(l, 5), Contains("it is 5"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::moe_route(veda::Array<float>(veda::Shape{3, 0}), 1), Contains("top_k must be in 1..0"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::moe_route(l, 1, {.tier = "cpu-blas"}), Contains("'moe_route' has no tier 'cpu-blas'"),
                       InvalidArgument);
  CHECK_THROWS_AS(veda::moe_route(l, 1, {.placement = veda::Placement(42)}), InvalidArgument);
  CHECK(veda::moe_route(l, 2).counts.size() == 4);  // still usable
}
