// Philox 4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
// easy as 1, 2, 3", SC'11) and the maps from its words to uniform and normal
// floats, written so that every compiler and device computes the same bits:
// integer hashing, then only operations IEEE 754 rounds exactly (+ - * /,
// sqrt and explicit fma). No library log/sin/cos: their last bits differ
// between glibc and CUDA. Every multiply-add is an explicit fma, and every
// other product is exact or feeds only a multiplication, so FMA contraction
// (nvcc's default, GCC's with -mfma) cannot change a result; on the device
// the _rn intrinsics keep IEEE rounding under --use_fast_math too. Not
// covered: host code built with -ffast-math (it may reassociate), and device
// code flushing subnormals (-ftz, implied by --use_fast_math) when the
// parameters themselves are subnormal.
//
// Layout: element i of a float stream comes from block i / 4 (one word each;
// normals in Box-Muller pairs of words), of a double stream from block i / 2
// (two words each). The key is the 64-bit seed; the counter is the block index.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define VEDA_RNG_FN __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define VEDA_RNG_FN [[gnu::always_inline]] inline
#else
#define VEDA_RNG_FN inline
#endif

namespace veda::detail::rng {

struct Block {
  std::uint32_t w[4];
};

// The raw generator: 10 rounds over counter c with key (k0, k1).
VEDA_RNG_FN Block philox4x32_10(Block c, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round) {
      k0 += 0x9E3779B9u;  // Weyl sequence: golden ratio, sqrt(3) - 1
      k1 += 0xBB67AE85u;
    }
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c.w[0];
    const std::uint64_t p1 = std::uint64_t{0xCD9E8D57u} * c.w[2];
    c = {{static_cast<std::uint32_t>(p1 >> 32) ^ c.w[1] ^ k0, static_cast<std::uint32_t>(p1),
          static_cast<std::uint32_t>(p0 >> 32) ^ c.w[3] ^ k1, static_cast<std::uint32_t>(p0)}};
  }
  return c;
}

// Block b of the stream keyed by seed.
VEDA_RNG_FN Block block(std::uint64_t seed, std::uint64_t b) {
  return philox4x32_10({{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), 0, 0}},
                       static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Correctly rounded arithmetic that no compiler flag changes on the device.
template <class T>
VEDA_RNG_FN T fma_rn(T a, T b, T c) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) return __fmaf_rn(a, b, c);
  else return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
template <class T>
VEDA_RNG_FN T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <class T>
VEDA_RNG_FN T div_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) return __fdiv_rn(a, b);
  else return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
template <class T>
VEDA_RNG_FN T sqrt_rn(T a) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) return __fsqrt_rn(a);
  else return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// Horner's rule in explicit fmas: c[0] + c[1] x + ...
template <class T, int N>
VEDA_RNG_FN T horner(const T (&c)[N], T x) {
  T p = c[N - 1];
  for (int i = N - 2; i >= 0; --i) p = fma_rn(p, x, c[i]);
  return p;
}

// Per-type widths, constants and series (Taylor, truncated where the next
// term is below half an ulp on the reduced range). The coefficients are
// local arrays: device code may not read a host array.
template <class T>
struct Traits;
template <>
struct Traits<float> {
  using Bits = std::uint32_t;
  static constexpr int kPerBlock = 4;
  static constexpr int kMantissa = 23, kBias = 127, kUniformBits = 24;
  static constexpr float kUnit = 0x1p-24f;  // 2^-kUniformBits
  static constexpr float kLn2Hi = 6.9313812256e-01f, kLn2Lo = 9.0580006145e-06f;  // fdlibm's split
  static constexpr float kSqrt2 = 1.4142135e+00f, kPio2 = 1.5707964e+00f;
  // (2 atanh(s) - 2 s) / s^3 in x = s^2: the coefficients 2 / (2k + 1)
  VEDA_RNG_FN static float log_series(float x) {
    const float c[] = {6.666667e-01f, 4.e-01f, 2.857143e-01f, 2.2222222e-01f};
    return horner(c, x);
  }
  // (sin(a) - a) / a^3 and (cos(a) - 1) / a^2 in x = a^2
  VEDA_RNG_FN static float sin_series(float x) {
    const float c[] = {-1.6666667e-01f, 8.333334e-03f, -1.984127e-04f, 2.7557319e-06f};
    return horner(c, x);
  }
  VEDA_RNG_FN static float cos_series(float x) {
    const float c[] = {-5.e-01f, 4.1666668e-02f, -1.3888889e-03f, 2.4801588e-05f, -2.755732e-07f};
    return horner(c, x);
  }
};
template <>
struct Traits<double> {
  using Bits = std::uint64_t;
  static constexpr int kPerBlock = 2;
  static constexpr int kMantissa = 52, kBias = 1023, kUniformBits = 53;
  static constexpr double kUnit = 0x1p-53;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  static constexpr double kSqrt2 = 1.4142135623730951, kPio2 = 1.5707963267948966;
  VEDA_RNG_FN static double log_series(double x) {
    const double c[] = {0.6666666666666666,  0.4,                 0.2857142857142857,  0.2222222222222222,
                        0.18181818181818182, 0.15384615384615385, 0.13333333333333333, 0.11764705882352941,
                        0.10526315789473684, 0.09523809523809523};
    return horner(c, x);
  }
  VEDA_RNG_FN static double sin_series(double x) {
    const double c[] = {-0.16666666666666666,   0.008333333333333333,   -0.0001984126984126984,
                        2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10,
                        -7.647163731819816e-13, 2.8114572543455206e-15};
    return horner(c, x);
  }
  VEDA_RNG_FN static double cos_series(double x) {
    const double c[] = {-0.5,                   0.041666666666666664,   -0.001388888888888889,
                        2.48015873015873e-05,   -2.755731922398589e-07, 2.08767569878681e-09,
                        -1.1470745597729725e-11, 4.779477332387385e-14, -1.5619206968586225e-16};
    return horner(c, x);
  }
};

// The uniform integer of kUniformBits bits that element j of a block uses.
template <class T>
VEDA_RNG_FN typename Traits<T>::Bits bits_of(const Block& b, int j) {
  if constexpr (sizeof(T) == 4) return b.w[j] >> 8;
  else return ((std::uint64_t{b.w[2 * j]} << 32) | b.w[2 * j + 1]) >> 11;
}

// ln x for x in (0, 1] (a normal number): x = m 2^e with m in [sqrt(1/2),
// sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1).
template <class T>
VEDA_RNG_FN T log_unit(T x) {
  using Tr = Traits<T>;
  typename Tr::Bits bits;
  std::memcpy(&bits, &x, sizeof x);
  int e = static_cast<int>(bits >> Tr::kMantissa) - Tr::kBias;
  const typename Tr::Bits one = static_cast<typename Tr::Bits>(Tr::kBias) << Tr::kMantissa;
  bits = (bits & ((typename Tr::Bits{1} << Tr::kMantissa) - 1)) | one;
  T m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > Tr::kSqrt2) {
    m = mul_rn(m, T(0.5));  // exact
    ++e;
  }
  const T s = div_rn(m - T(1), m + T(1));  // m - 1 is exact (Sterbenz)
  const T s2 = mul_rn(s, s);
  const T lm = fma_rn(mul_rn(s, s2), Tr::log_series(s2), mul_rn(T(2), s));
  const T te = static_cast<T>(e);
  return fma_rn(te, Tr::kLn2Hi, fma_rn(te, Tr::kLn2Lo, lm));
}

// cos and sin of 2 pi v 2^-kUniformBits: the nearest quarter turn is taken
// off in integers (exactly), leaving |angle| <= pi / 4 for the series.
template <class T>
VEDA_RNG_FN void cos_sin_turn(typename Traits<T>::Bits v, T& c, T& s) {
  using Tr = Traits<T>;
  using Bits = typename Tr::Bits;
  constexpr int shift = Tr::kUniformBits - 2;  // one quarter turn
  const Bits q = (v + (Bits{1} << (shift - 1))) >> shift;
  const auto rem = static_cast<std::make_signed_t<Bits>>(v - (q << shift));  // [-2^(shift-1), 2^(shift-1))
  const T a = mul_rn(mul_rn(static_cast<T>(rem), Tr::kUnit * T(4)), Tr::kPio2);  // rem 2^-shift is exact
  const T a2 = mul_rn(a, a);
  const T sa = fma_rn(mul_rn(a, a2), Tr::sin_series(a2), a);
  const T ca = fma_rn(a2, Tr::cos_series(a2), T(1));
  switch (q & 3) {
    case 0: c = ca, s = sa; break;
    case 1: c = -sa, s = ca; break;
    case 2: c = -ca, s = -sa; break;
    default: c = sa, s = -ca; break;
  }
}

// Element j of block b, uniform in [low, high) (rounding may give high
// when high - low is not a power of two times the unit).
template <class T>
VEDA_RNG_FN T uniform_of(const Block& b, int j, T low, T high) {
  const T u = mul_rn(static_cast<T>(bits_of<T>(b, j)), Traits<T>::kUnit);  // exact
  return fma_rn(u, high - low, low);
}

// Elements 2p and 2p + 1 of block b, standard normal (Box-Muller on the pair
// p's uniforms: u1 in (0, 1], u2 in [0, 1)).
template <class T>
VEDA_RNG_FN void normal_pair(const Block& b, int p, T& z0, T& z1) {
  using Tr = Traits<T>;
  const T u1 = mul_rn(static_cast<T>(bits_of<T>(b, 2 * p) + 1), Tr::kUnit);  // exact
  const T r = sqrt_rn(mul_rn(T(-2), log_unit(u1)));
  T c, s;
  cos_sin_turn<T>(bits_of<T>(b, 2 * p + 1), c, s);
  z0 = mul_rn(r, c);
  z1 = mul_rn(r, s);
}

// All kPerBlock elements of block index bi, each mapped by Dist.
template <class T, bool Normal>
VEDA_RNG_FN void block_values(std::uint64_t seed, std::uint64_t bi, T p0, T p1, T (&out)[Traits<T>::kPerBlock]) {
  const Block b = block(seed, bi);
  if constexpr (Normal) {
    for (int p = 0; p < Traits<T>::kPerBlock / 2; ++p) {
      T z0, z1;
      normal_pair(b, p, z0, z1);
      out[2 * p] = fma_rn(z0, p1, p0);  // mean + stddev z
      out[2 * p + 1] = fma_rn(z1, p1, p0);
    }
  } else {
    for (int j = 0; j < Traits<T>::kPerBlock; ++j) out[j] = uniform_of(b, j, p0, p1);
  }
}

}  // namespace veda::detail::rng
