// Contract (veda/half.hpp): veda::half and veda::bfloat16 are two bytes,
// trivially copyable; from float they round to nearest, ties to even (every
// midpoint between neighbours, overflow to infinity, the subnormal range,
// signed zeros, NaN kept NaN); to float they are exact; numeric_limits gives
// IEEE's values; Arrays hold them. Built by nvcc in the CUDA configuration,
// where the conversions run on the device too and must agree bit for bit.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "veda/array.hpp"
#include "veda/half.hpp"
#include "veda/runtime.hpp"

namespace {

// A 16-bit value's exact value, computed independently of veda (in double).
double half_value(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
double bfloat16_value(std::uint16_t b) {
  const int e = (b >> 7) & 0xff, m = b & 0x7f;
  const double v = e == 0 ? std::ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : std::ldexp(128 + m, e - 134);
  return (b & 0x8000) ? -v : v;
}

template <class H>
std::uint16_t bits_of(float f) {
  return H(f).bits();
}

// Every pair of neighbouring non-negative finite values (and the largest
// finite one with infinity): the midpoint goes to the even one, a float ulp
// either side to the nearer one. The midpoints are exact in float.
template <class H>
void rounds_to_nearest_even(double (*value)(std::uint16_t), std::uint16_t inf_bits) {
  std::size_t checked = 0;
  for (std::uint16_t lo = 0; lo < inf_bits; ++lo) {
    const auto hi = static_cast<std::uint16_t>(lo + 1);
    // Above the largest finite value the next one is where 2 max would be.
    const double vhi = hi == inf_bits ? 2 * value(lo) - value(static_cast<std::uint16_t>(lo - 1)) : value(hi);
    const auto mid = static_cast<float>((value(lo) + vhi) / 2);
    REQUIRE(static_cast<double>(mid) == (value(lo) + vhi) / 2);
    const std::uint16_t even = (lo & 1) ? hi : lo;
    CAPTURE(lo);
    CHECK(bits_of<H>(mid) == even);
    CHECK(bits_of<H>(std::nextafter(mid, 0.0f)) == lo);
    CHECK(bits_of<H>(std::nextafter(mid, INFINITY)) == hi);
    CHECK(bits_of<H>(-mid) == (even | 0x8000));
    CHECK(bits_of<H>(static_cast<float>(value(lo))) == lo);  // exact values stay
    ++checked;
  }
  CHECK(checked == inf_bits);
}

}  // namespace

TEST_CASE("the types are two trivially copyable bytes, usable in constant expressions") {
  static_assert(sizeof(veda::half) == 2 && alignof(veda::half) == 2);
  static_assert(sizeof(veda::bfloat16) == 2 && alignof(veda::bfloat16) == 2);
  static_assert(std::is_trivially_copyable_v<veda::half> && std::is_standard_layout_v<veda::half>);
  static_assert(std::is_trivially_copyable_v<veda::bfloat16> && std::is_standard_layout_v<veda::bfloat16>);
  static_assert(veda::half(1.5f).bits() == 0x3e00);
  static_assert(float(veda::half::from_bits(0x3c01)) == 1.0f + 0x1p-10f);
  static_assert(veda::bfloat16(1.5f).bits() == 0x3fc0);
  static_assert(float(veda::bfloat16::from_bits(0x3f81)) == 1.0f + 0x1p-7f);
}

TEST_CASE("to float: every one of the 65536 patterns is exact, and converts back to itself") {
  for (std::uint32_t u = 0; u < 0x10000; ++u) {
    const auto h = static_cast<std::uint16_t>(u);
    CAPTURE(u);
    const float fh = veda::half::from_bits(h), fb = veda::bfloat16::from_bits(h);
    const double vh = half_value(h), vb = bfloat16_value(h);
    if (std::isnan(vh)) {
      CHECK(std::isnan(fh));
      CHECK(std::isnan(float(veda::half(fh))));  // NaN stays NaN (made quiet)
      CHECK((veda::half(fh).bits() & 0x0200) != 0);
    } else {
      CHECK(static_cast<double>(fh) == vh);
      CHECK(std::signbit(fh) == ((h & 0x8000) != 0));
      CHECK(veda::half(fh).bits() == h);
    }
    if (std::isnan(vb)) {
      CHECK(std::isnan(fb));
      CHECK((veda::bfloat16(fb).bits() & 0x7fc0) == 0x7fc0);
    } else {
      CHECK(static_cast<double>(fb) == vb);
      CHECK(veda::bfloat16(fb).bits() == h);
    }
  }
}

TEST_CASE("from float: round to nearest, ties to even, at every pair of neighbours") {
  rounds_to_nearest_even<veda::half>(half_value, 0x7c00);
  rounds_to_nearest_even<veda::bfloat16>(bfloat16_value, 0x7f80);
}

TEST_CASE("from float: overflow, underflow, signed zeros, infinities and NaN") {
  CHECK(bits_of<veda::half>(65504.0f) == 0x7bff);
  CHECK(bits_of<veda::half>(65519.99f) == 0x7bff);
  CHECK(bits_of<veda::half>(65520.0f) == 0x7c00);  // the tie with 2^16 goes to even: infinity
  CHECK(bits_of<veda::half>(1e10f) == 0x7c00);
  CHECK(bits_of<veda::half>(-1e10f) == 0xfc00);
  CHECK(bits_of<veda::half>(std::numeric_limits<float>::max()) == 0x7c00);
  CHECK(bits_of<veda::half>(INFINITY) == 0x7c00);
  CHECK(bits_of<veda::half>(0x1p-25f) == 0x0000);  // the tie with the smallest subnormal: even 0
  CHECK(bits_of<veda::half>(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  CHECK(bits_of<veda::half>(-0x1p-30f) == 0x8000);  // signed zero
  CHECK(bits_of<veda::half>(-0.0f) == 0x8000);
  CHECK(bits_of<veda::half>(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(bits_of<veda::half>(0x1p-14f - 0x1p-25f) == 0x0400);  // ties up into the smallest normal
  CHECK(std::isnan(float(veda::half(NAN))));
  CHECK(std::signbit(float(veda::half(-NAN))));

  CHECK(bits_of<veda::bfloat16>(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up past bf16's max
  CHECK(bits_of<veda::bfloat16>(0x1.fep127f) == 0x7f7f);
  CHECK(bits_of<veda::bfloat16>(-0.0f) == 0x8000);
  CHECK(bits_of<veda::bfloat16>(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(bits_of<veda::bfloat16>(INFINITY) == 0x7f80);
  CHECK(std::isnan(float(veda::bfloat16(std::bit_cast<float>(0x7f800001u)))));  // rounding never makes NaN inf
  CHECK(std::isnan(float(veda::bfloat16(std::bit_cast<float>(0x7fffffffu)))));
}

#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
TEST_CASE("from float: agrees with the compiler's _Float16 on sampled floats") {
  std::size_t differ = 0;
  for (std::uint64_t u = 0; u <= 0xffffffffu; u += 65521) {  // a prime stride over every bit pattern
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) continue;
    differ += std::bit_cast<std::uint16_t>(static_cast<_Float16>(f)) != veda::half(f).bits();
  }
  CHECK(differ == 0);
}
#endif

TEST_CASE("numeric_limits: IEEE binary16's and bfloat16's values") {
  using LH = std::numeric_limits<veda::half>;
  using LB = std::numeric_limits<veda::bfloat16>;
  static_assert(LH::is_specialized && LB::is_specialized && LH::digits == 11 && LB::digits == 8);
  CHECK(float(LH::max()) == 65504.0f);
  CHECK(float(LH::lowest()) == -65504.0f);
  CHECK(float(LH::min()) == 0x1p-14f);
  CHECK(float(LH::denorm_min()) == 0x1p-24f);
  CHECK(float(LH::epsilon()) == 0x1p-10f);
  CHECK(float(veda::half(1.0f + float(LH::epsilon()))) != 1.0f);
  CHECK(float(veda::half(1.0f + float(LH::epsilon()) / 2)) == 1.0f);  // the tie goes to even 1
  CHECK(std::isinf(float(LH::infinity())));
  CHECK(std::isnan(float(LH::quiet_NaN())));
  CHECK(std::isnan(float(LH::signaling_NaN())));
  CHECK(float(LB::max()) == 0x1.fep127f);
  CHECK(float(LB::min()) == 0x1p-126f);
  CHECK(float(LB::denorm_min()) == 0x1p-133f);
  CHECK(float(LB::epsilon()) == 0x1p-7f);
  CHECK(float(LB::lowest()) == -0x1.fep127f);
  CHECK(std::isinf(float(LB::infinity())));
  CHECK(std::isnan(float(LB::quiet_NaN())));
  CHECK(std::isnan(float(LB::signaling_NaN())));
}

TEST_CASE("arithmetic goes through float; comparisons are float's") {
  const veda::half a = 1.5f, b = 0.25f;
  const float sum = a + b;  // float + float
  CHECK(sum == 1.75f);
  veda::half c = a * b + 1;  // rounded once on assignment
  CHECK(float(c) == 1.375f);
  CHECK(veda::half(0.0f) == veda::half(-0.0f));
  CHECK_FALSE(veda::half(NAN) == veda::half(NAN));
  const veda::bfloat16 x = 3.0f;
  CHECK(x * 2 == 6.0f);
}

TEST_CASE("Arrays hold them: zero-filled, two bytes an element") {
  veda::Array<veda::half> a(3, 5);
  CHECK(a.size() == 15);
  for (const auto v : a.host()) CHECK(v.bits() == 0);
  a.host()[7] = 2.5f;
  CHECK(float(a.host()[7]) == 2.5f);
  veda::Array<veda::bfloat16> b(std::vector<veda::bfloat16>{1.0f, -2.0f, 0.5f});
  CHECK(b.to_vector()[1] == -2.0f);
}

#if defined(__CUDACC__)
namespace {
__global__ void convert_on_device(const float* in, std::uint16_t* h, std::uint16_t* b, float* back, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  h[i] = veda::half(in[i]).bits();
  b[i] = veda::bfloat16(in[i]).bits();
  back[i] = veda::half::from_bits(static_cast<std::uint16_t>(i));
}
}  // namespace

TEST_CASE("on the device: the same bits as on the host") {
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  const bool gpu = veda::get_runtime().gpu_usable();
  veda::shutdown();
  if (!gpu) return;  // no device: the host cases above are the test
  constexpr std::size_t n = 1 << 16;
  std::vector<float> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(i * 65537u + 12345u));
  float *din = nullptr, *dback = nullptr;
  std::uint16_t *dh = nullptr, *db = nullptr;
  REQUIRE(cudaMalloc(&din, n * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMalloc(&dback, n * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMalloc(&dh, n * 2) == cudaSuccess);
  REQUIRE(cudaMalloc(&db, n * 2) == cudaSuccess);
  REQUIRE(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  convert_on_device<<<n / 256, 256>>>(din, dh, db, dback, n);
  std::vector<std::uint16_t> h(n), b(n);
  std::vector<float> back(n);
  REQUIRE(cudaMemcpy(h.data(), dh, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(b.data(), db, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(back.data(), dback, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    differ += h[i] != veda::half(in[i]).bits() || b[i] != veda::bfloat16(in[i]).bits();
    const float want = veda::half::from_bits(static_cast<std::uint16_t>(i));
    differ += std::bit_cast<std::uint32_t>(back[i]) != std::bit_cast<std::uint32_t>(want);
  }
  CHECK(differ == 0);
  cudaFree(din);
  cudaFree(dback);
  cudaFree(dh);
  cudaFree(db);
}
#endif
