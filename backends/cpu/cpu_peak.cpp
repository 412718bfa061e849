// FP32 FMA peak of one core (multiply and add where there is no FMA). Twelve
// independent accumulator chains hide the latency; each ISA variant is
// compiled for its own target so the library needs no -march flag. This
// file is built with -O3 (see CMakeLists.txt).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "backends/cpu/cpu_calibration.hpp"
#include "backends/cpu/cpu_isa.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace veda::detail {
namespace {
using clk = std::chrono::steady_clock;

#if defined(__x86_64__)
// One body per ISA: lambdas would not inherit the target attribute.
#define VEDA_FMA_CHAINS(V, SET1, FMA, LANES)                                                  \
  V a0 = SET1(1.0f), a1 = SET1(1.1f), a2 = SET1(1.2f), a3 = SET1(1.3f), a4 = SET1(1.4f),       \
    a5 = SET1(1.5f), a6 = SET1(1.6f), a7 = SET1(1.7f), a8 = SET1(1.8f), a9 = SET1(1.9f),       \
    a10 = SET1(2.0f), a11 = SET1(2.1f);                                                       \
  const V m = SET1(0.99999994f), c = SET1(1e-7f);                                             \
  const auto t0 = clk::now();                                                                 \
  for (long k = 0; k < iters; ++k) {                                                          \
    a0 = FMA(a0, m, c); a1 = FMA(a1, m, c); a2 = FMA(a2, m, c); a3 = FMA(a3, m, c);           \
    a4 = FMA(a4, m, c); a5 = FMA(a5, m, c); a6 = FMA(a6, m, c); a7 = FMA(a7, m, c);           \
    a8 = FMA(a8, m, c); a9 = FMA(a9, m, c); a10 = FMA(a10, m, c); a11 = FMA(a11, m, c);       \
  }                                                                                           \
  const double s = std::chrono::duration<double>(clk::now() - t0).count();                    \
  const V sum = FMA(a0, a1, FMA(a2, a3, FMA(a4, a5, FMA(a6, a7, FMA(a8, a9, FMA(a10, a11, c)))))); \
  float first = 0;                                                                            \
  std::memcpy(&first, &sum, sizeof first);                                                    \
  volatile float sink = first;                                                                \
  (void)sink;                                                                                 \
  return iters * 12.0 * (LANES) * 2.0 / s / 1e9;

__attribute__((target("avx512f"))) double run_avx512(long iters) {
  VEDA_FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16)
}
__attribute__((target("avx2,fma"))) double run_avx2(long iters) {
  VEDA_FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 8)
}
// Without FMA (before AVX2), a multiply and an add per lane, in AVX's 8
// lanes or the x86-64 baseline's 4 (a scalar loop would understate such a
// CPU 4-8x).
[[gnu::target("avx")]] inline __m256 mul_add(__m256 a, __m256 b, __m256 c) {
  return _mm256_add_ps(_mm256_mul_ps(a, b), c);
}
inline __m128 mul_add(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
[[gnu::target("avx")]] double run_avx(long iters) { VEDA_FMA_CHAINS(__m256, _mm256_set1_ps, mul_add, 8) }
double run_sse(long iters) { VEDA_FMA_CHAINS(__m128, _mm_set1_ps, mul_add, 4) }
#undef VEDA_FMA_CHAINS
#else
double run_scalar(long iters) {
  float a[12];
  for (int i = 0; i < 12; ++i) a[i] = 1.0f + 0.1f * static_cast<float>(i);
  const auto t0 = clk::now();
  for (long k = 0; k < iters; ++k)
    for (float& x : a) x = x * 0.99999994f + 1e-7f;
  const double s = std::chrono::duration<double>(clk::now() - t0).count();
  volatile float sink = a[0] + a[11];
  (void)sink;
  return iters * 12.0 * 2.0 / s / 1e9;
}
#endif

template <class F>
double best_of(F f, long iters) {
  double best = 0;
  for (int r = 0; r < 3; ++r) best = std::max(best, f(iters));
  return best;
}
}  // namespace

double measure_fma_gflops_per_thread() {
#if defined(__x86_64__)
  double best = best_of(run_sse, 2'000'000);
  if (cpu_has(Isa::Avx2)) best = std::max(best, best_of(run_avx2, 2'000'000));
  else if (cpu_has(Isa::Avx)) best = std::max(best, best_of(run_avx, 2'000'000));
  if (cpu_has(Isa::Avx512)) best = std::max(best, best_of(run_avx512, 1'000'000));
#else
  const double best = best_of(run_scalar, 2'000'000);
#endif
  return best;
}

}  // namespace veda::detail
