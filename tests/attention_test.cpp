// Contract: veda::attention = softmax(scale q k^T) v per (batch, head),
// grouped-query and multi-query when k and v have fewer heads, causal with
// PyTorch's top-left alignment, on every tier this build and machine can
// run, for float, double, half and bfloat16 (tolerances per type below;
// on an sm_80+ GPU the 16-bit gpu-flash runs on tensor cores wherever
// head_dim and dv are multiples of 16): one row or key, sequences not a multiple of
// the blocks, head_dim 64 and 128, q_len != kv_len, no keys, an empty
// batch; scores of 1e4 do not overflow; bad shapes and scales throw
// InvalidArgument naming them before any work.
// Built twice in the CUDA configuration: attention_test and
// gpu_attention_test (labelled gpu: the GPU tiers forced too).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/attention.hpp"

namespace {
using Runtime = veda_test::OpRuntime;

std::vector<std::string> tiers() {
  return veda_test::op_tiers({"cpu-reference", "cpu-blas", "cpu-blocked"}, {"gpu-naive", "gpu-flash"});
}

// gpu-flash's documented limits (veda/attention.hpp): dv <= 128, and a
// 32-key tile of k (padded) and v with 16 query rows within 48 KiB, held in
// FP32 for the 16-bit types (or their tensor-core kernel: within these too).
bool flash_takes(std::size_t d, std::size_t dv, std::size_t elem) {
  const std::size_t held = elem == 2 ? 4 : elem;
  return dv <= 128 && (32 * (d + 1) + 32 * dv + 16 * d) * held <= 48 * 1024;
}

template <class T>
veda::Array<T> tensor(std::size_t b, std::size_t h, std::size_t s, std::size_t d, unsigned seed, double scale = 1) {
  veda::Array<T> a(veda::Shape{b, h, s, d});
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& v : a.host()) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<T>(scale * (static_cast<int>(x >> 22) - 512) / 256.0);  // in [-2, 2) * scale
  }
  return a;
}

// The definition, in double, with a two-pass softmax.
template <class T>
std::vector<double> oracle(const veda::Array<T>& q, const veda::Array<T>& k, const veda::Array<T>& v, bool causal,
                           double scale) {
  const std::size_t B = q.extent(0), H = q.extent(1), Sq = q.extent(2), D = q.extent(3);
  const std::size_t Hk = k.extent(1), Sk = k.extent(2), Dv = v.extent(3);
  std::vector<double> out(B * H * Sq * Dv, 0.0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = h / (H / Hk);
      for (std::size_t i = 0; i < Sq; ++i) {
        const std::size_t keys = causal ? std::min(i + 1, Sk) : Sk;
        std::vector<double> s(keys);
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::size_t j = 0; j < keys; ++j) {
          for (std::size_t c = 0; c < D; ++c)
            s[j] += static_cast<double>(q.at(b, h, i, c)) * static_cast<double>(k.at(b, g, j, c));
          s[j] *= scale;
          mx = std::max(mx, s[j]);
        }
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (std::size_t j = 0; j < keys; ++j)
          for (std::size_t c = 0; c < Dv; ++c)
            out[((b * H + h) * Sq + i) * Dv + c] += s[j] / sum * static_cast<double>(v.at(b, g, j, c));
      }
    }
  return out;
}

// Outputs are convex combinations of values below 2: an absolute bound.
template <class T>
void check_close(const veda::Array<T>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(static_cast<double>(got.host()[i]) - want[i]);
    worst = std::max(worst, e);
    bad += !(e <= tol);
  }
  CAPTURE(worst);
  CHECK(bad == 0);
}

// Outputs lie in (-2, 2). float and double: their sums' rounding. 16-bit:
// the result rounded once (half an ulp at 2: 2^-10 for half, 2^-7 for
// bfloat16) plus, on the tensor-core flash kernel, the weights rounded to
// the type before they multiply v (up to an ulp at 2 more); FP32 sums.
template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, veda::half>) return 3.0 * 0x1p-10;
  else if constexpr (std::is_same_v<T, veda::bfloat16>) return 3.0 * 0x1p-7;
  else return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

struct Case {
  std::size_t b, h, hk, sq, sk, d, dv;
};
const Case kCases[] = {
    {1, 1, 1, 1, 1, 1, 1},    {2, 3, 3, 17, 13, 8, 8},  {1, 2, 2, 130, 67, 64, 64}, {1, 1, 1, 64, 64, 128, 128},
    {2, 8, 2, 33, 40, 16, 16},  // grouped-query: four heads share a kv head
    {1, 4, 1, 29, 97, 24, 8},   // multi-query, dv != d
    {1, 2, 2, 70, 20, 8, 8},    // more queries than keys
    {1, 1, 1, 1, 200, 32, 32},  // one query row (decoding)
    {1, 2, 2, 5, 0, 16, 16},    // no keys: zeros (on the tensor-core shapes too)
};
}  // namespace

TEST_CASE_TEMPLATE("attention agrees with the definition for every shape, head grouping, mask and tier", T, float,
                   double, veda::half, veda::bfloat16) {
  Runtime rt;
  for (const Case& c : kCases)
    for (bool causal : {false, true}) {
      CAPTURE(c.h);
      CAPTURE(c.hk);
      CAPTURE(c.sq);
      CAPTURE(c.sk);
      CAPTURE(c.d);
      CAPTURE(causal);
      const auto q = tensor<T>(c.b, c.h, c.sq, c.d, 1), k = tensor<T>(c.b, c.hk, c.sk, c.d, 2),
                 v = tensor<T>(c.b, c.hk, c.sk, c.dv, 3);
      const auto want = oracle(q, k, v, causal, 1 / std::sqrt(static_cast<double>(c.d)));
      for (const auto& tier : tiers()) {
        CAPTURE(tier);
        if (tier == "gpu-flash" && !flash_takes(c.d, c.dv, sizeof(T))) continue;
        const veda_test::DeviceWork w;
        const auto o = veda::attention(q, k, v, {.causal = causal, .tier = tier});
        CHECK(o.shape() == veda::Shape{c.b, c.h, c.sq, c.dv});
        CHECK(veda::last_decision().name == "attention");
        veda_test::check_ran(tier, w);
        check_close(o, want, tolerance<T>());
      }
    }
}

TEST_CASE("scale, large scores, no keys and empty inputs") {
  Runtime rt;
  const auto q = tensor<float>(1, 2, 45, 16, 4, 50.0), k = tensor<float>(1, 2, 77, 16, 5, 50.0),
             v = tensor<float>(1, 2, 77, 16, 6);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    // Scores up to ~1e4 / 4: the max subtracted first keeps every exp finite.
    check_close(veda::attention(q, k, v, {.tier = tier}), oracle(q, k, v, false, 0.25), 1e-4);
    check_close(veda::attention(q, k, v, {.scale = 1e-3, .tier = tier}), oracle(q, k, v, false, 1e-3), 2e-5);
    // No keys: an empty weighted sum.
    const auto none = veda::attention(q, tensor<float>(1, 2, 0, 16, 7), tensor<float>(1, 2, 0, 3, 8), {.tier = tier});
    CHECK(none.shape() == veda::Shape{1, 2, 45, 3});
    for (float x : none.host()) CHECK(x == 0.0f);
    CHECK(veda::attention(tensor<float>(0, 2, 5, 16, 9), tensor<float>(0, 2, 7, 16, 9), tensor<float>(0, 2, 7, 16, 9),
                          {.tier = tier})
              .shape() == veda::Shape{0, 2, 5, 16});
  }
}

TEST_CASE("cpu-blas and cpu-blocked at 4 heads x 1024 x 1024 x 64, causal, match the reference") {
  Runtime rt;
  const auto q = tensor<float>(1, 4, 1024, 64, 11), k = tensor<float>(1, 4, 1024, 64, 12),
             v = tensor<float>(1, 4, 1024, 64, 13);
  const auto want = veda::attention(q, k, v, {.causal = true, .tier = "cpu-reference"});
  std::vector<double> w(want.host().begin(), want.host().end());
  for (const char* tier : {"cpu-blas", "cpu-blocked"}) {
    CAPTURE(tier);
    check_close(veda::attention(q, k, v, {.causal = true, .tier = tier}), w, 2e-5);
  }
  // The reference is the oracle only: never the model's choice.
  veda::attention(q, k, v);
  CHECK(veda::last_decision().tier != "cpu-reference");
}

TEST_CASE("bad shapes and scales name what is wrong, before any work") {
  Runtime rt;
  using doctest::Contains;
  using veda::InvalidArgument;
  const auto q = tensor<float>(2, 4, 8, 16, 1), k = tensor<float>(2, 2, 9, 16, 2), v = tensor<float>(2, 2, 9, 8, 3);
  CHECK_THROWS_WITH_AS(veda::attention(veda::Array<float>(veda::Shape{4, 8, 16}), k, v),
                       Contains("q must be 4-D [batch, heads, seq, head_dim] (it is 4x8x16)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::attention(q, tensor<float>(1, 2, 9, 16, 4), v), Contains("the same batch"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::attention(q, k, tensor<float>(2, 2, 10, 8, 5)),
                       Contains("k and v must have the same heads and sequence length"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::attention(q, tensor<float>(2, 2, 9, 15, 6), v), Contains("the same head_dim"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::attention(q, tensor<float>(2, 3, 9, 16, 7), tensor<float>(2, 3, 9, 8, 8)),
                       Contains("q's 4 heads must be a multiple of k's and v's 3"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::attention(q, k, v, {.scale = std::numeric_limits<double>::infinity()}),
                       Contains("scale must be finite"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::attention(q, k, v, {.tier = "gpu-tiled"}), Contains("'attention' has no tier 'gpu-tiled'"),
                       InvalidArgument);
  CHECK(veda::attention(q, k, v).shape() == veda::Shape{2, 4, 8, 8});  // still usable
}
