// veda/half.hpp — 16-bit floating-point element types: veda::half (IEEE
// binary16: 5-bit exponent, 11-bit significand) and veda::bfloat16 (float's
// 8-bit exponent, 8-bit significand).
//
//   veda::Array<veda::half> a(m, k), b(k, n);   // 2 bytes an element
//   a.host()[0] = 1.5f;                          // float -> half, rounded to nearest even
//   float x = a.host()[0];                       // half -> float, exact
//   auto c = veda::matmul(a, b);                 // FP32 sums, C rounded once to half
//
// Contract:
// - Storage: two bytes, the IEEE / bfloat16 bit patterns; trivially
//   copyable, standard layout, layout-compatible with CUDA's __half and
//   __nv_bfloat16 (veda's kernels reinterpret one as the other).
// - From float: round to nearest, ties to even; values beyond the largest
//   finite one round to infinity (as IEEE says: half's largest is 65504, and
//   65520 and above become inf); at or below 2^-25 (half the smallest
//   subnormal) they round to a signed zero; NaN stays NaN (made quiet, its
//   sign kept).
//   bfloat16 keeps float's range, so only values at float's own top round to
//   infinity; float's subnormals round to its 7 fraction bits like any
//   other value.
// - To float: exact (every 16-bit value is a float).
// - Arithmetic and comparison go through float (the implicit conversion):
//   `a * b + c` is a float; assigning it back rounds once. -0 == +0 and NaN
//   compares unequal to everything, as for float.
// - std::numeric_limits is specialised for both.
// - All of it is constexpr, and usable in device code under nvcc.
//
// Thread-safety: values; no shared state.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "veda/detail/host_device.hpp"

namespace veda {
namespace detail {

// The builtin behind std::bit_cast: also a constant expression in nvcc's
// device pass, where std::bit_cast is a host function.
VEDA_HD constexpr std::uint32_t float_bits(float f) { return __builtin_bit_cast(std::uint32_t, f); }
VEDA_HD constexpr float bits_float(std::uint32_t u) { return __builtin_bit_cast(float, u); }

VEDA_HD constexpr std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t x = float_bits(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)  // NaN: quiet, with the payload's top bits
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520 (and inf): inf
  if (ax >= 0x38800000u) {  // normal: rebias the exponent (127 -> 15), round 23 fraction bits to 10
    const std::uint32_t m = ax - 0x38000000u;
    return static_cast<std::uint16_t>(sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13));
  }
  if (ax <= 0x33000000u) return sign;  // <= 2^-25: rounds to zero (2^-25 itself: the tie goes to even 0)
  // Subnormal: the significand (implicit bit included) in units of 2^-24.
  const std::uint32_t shift = 126u - (ax >> 23);  // 14 .. 24
  const std::uint32_t sig = (ax & 0x7fffffu) | 0x800000u;
  const std::uint32_t q = sig >> shift, rem = sig & ((1u << shift) - 1u), tie = 1u << (shift - 1u);
  return static_cast<std::uint16_t>(sign | (q + (rem > tie || (rem == tie && (q & 1u)))));
}

VEDA_HD constexpr float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));  // inf, NaN
  if (e != 0) return bits_float(sign | ((e + 112u) << 23) | (m << 13));
  const float v = static_cast<float>(m) * 0x1p-24f;  // zero or subnormal, exact
  return sign ? -v : v;
}

VEDA_HD constexpr std::uint16_t float_to_bfloat16_bits(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN: quiet
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

VEDA_HD constexpr float bfloat16_bits_to_float(std::uint16_t b) { return bits_float(std::uint32_t{b} << 16); }

struct FromBits {};

}  // namespace detail

class half {
 public:
  half() = default;  // uninitialised, as a float is
  VEDA_HD constexpr half(float f) : bits_(detail::float_to_half_bits(f)) {}
  VEDA_HD constexpr operator float() const { return detail::half_bits_to_float(bits_); }
  VEDA_HD static constexpr half from_bits(std::uint16_t b) { return half(detail::FromBits{}, b); }
  VEDA_HD constexpr std::uint16_t bits() const { return bits_; }

 private:
  VEDA_HD constexpr half(detail::FromBits, std::uint16_t b) : bits_(b) {}
  std::uint16_t bits_;
};

class bfloat16 {
 public:
  bfloat16() = default;
  VEDA_HD constexpr bfloat16(float f) : bits_(detail::float_to_bfloat16_bits(f)) {}
  VEDA_HD constexpr operator float() const { return detail::bfloat16_bits_to_float(bits_); }
  VEDA_HD static constexpr bfloat16 from_bits(std::uint16_t b) { return bfloat16(detail::FromBits{}, b); }
  VEDA_HD constexpr std::uint16_t bits() const { return bits_; }

 private:
  VEDA_HD constexpr bfloat16(detail::FromBits, std::uint16_t b) : bits_(b) {}
  std::uint16_t bits_;
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);

namespace detail {
// The 16-bit floating-point element types (ops that compute them in FP32).
template <class T>
inline constexpr bool is_16bit_float = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
}  // namespace detail

}  // namespace veda

// Values as IEEE binary16 and bfloat16 define them.
template <>
struct std::numeric_limits<veda::half> {
  using H = veda::half;
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
  static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false, is_iec559 = true, is_bounded = true, is_modulo = false;
  static constexpr bool traps = false, tinyness_before = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr int digits = 11, digits10 = 3, max_digits10 = 5, radix = 2;
  static constexpr int min_exponent = -13, min_exponent10 = -4, max_exponent = 16, max_exponent10 = 4;
  static constexpr H min() noexcept { return H::from_bits(0x0400); }  // 2^-14
  static constexpr H lowest() noexcept { return H::from_bits(0xfbff); }
  static constexpr H max() noexcept { return H::from_bits(0x7bff); }  // 65504
  static constexpr H epsilon() noexcept { return H::from_bits(0x1400); }  // 2^-10
  static constexpr H round_error() noexcept { return H::from_bits(0x3800); }  // 0.5
  static constexpr H infinity() noexcept { return H::from_bits(0x7c00); }
  static constexpr H quiet_NaN() noexcept { return H::from_bits(0x7e00); }
  static constexpr H signaling_NaN() noexcept { return H::from_bits(0x7d00); }
  static constexpr H denorm_min() noexcept { return H::from_bits(0x0001); }  // 2^-24
};

template <>
struct std::numeric_limits<veda::bfloat16> {
  using B = veda::bfloat16;
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
  static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false, is_iec559 = false, is_bounded = true, is_modulo = false;
  static constexpr bool traps = false, tinyness_before = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr int digits = 8, digits10 = 2, max_digits10 = 4, radix = 2;
  static constexpr int min_exponent = -125, min_exponent10 = -37, max_exponent = 128, max_exponent10 = 38;
  static constexpr B min() noexcept { return B::from_bits(0x0080); }  // 2^-126
  static constexpr B lowest() noexcept { return B::from_bits(0xff7f); }
  static constexpr B max() noexcept { return B::from_bits(0x7f7f); }  // (2 - 2^-7) 2^127
  static constexpr B epsilon() noexcept { return B::from_bits(0x3c00); }  // 2^-7
  static constexpr B round_error() noexcept { return B::from_bits(0x3f00); }  // 0.5
  static constexpr B infinity() noexcept { return B::from_bits(0x7f80); }
  static constexpr B quiet_NaN() noexcept { return B::from_bits(0x7fc0); }
  static constexpr B signaling_NaN() noexcept { return B::from_bits(0x7fa0); }
  static constexpr B denorm_min() noexcept { return B::from_bits(0x0001); }  // 2^-133
};
