#include "backends/cpu/random.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "backends/cpu/cpu_executor.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "veda/detail/philox.hpp"

namespace veda::detail::cpu {
namespace {

template <class T, bool Normal>
[[gnu::always_inline]] inline void blocks(T* out, std::size_t n, std::uint64_t seed, std::size_t b0, std::size_t b1,
                                          T p0, T p1) {
  constexpr std::size_t per = rng::Traits<T>::kPerBlock;
  for (std::size_t b = b0; b < b1; ++b) {
    T v[per];
    rng::block_values<T, Normal>(seed, b, p0, p1, v);
    const std::size_t i0 = b * per, m = std::min(per, n - i0);
    for (std::size_t j = 0; j < m; ++j) out[i0 + j] = v[j];
  }
}

template <class T, bool Normal>
void blocks_default(T* out, std::size_t n, std::uint64_t seed, std::size_t b0, std::size_t b1, T p0, T p1) {
  blocks<T, Normal>(out, n, seed, b0, b1, p0, p1);
}

// Where the CPU has FMA, std::fma becomes one instruction instead of a call
// into libm; both round exactly, so the bits are the same.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <class T, bool Normal>
__attribute__((target("avx2,fma"))) void blocks_fma(T* out, std::size_t n, std::uint64_t seed, std::size_t b0,
                                                    std::size_t b1, T p0, T p1) {
  blocks<T, Normal>(out, n, seed, b0, b1, p0, p1);
}
#endif

template <class T, bool Normal>
auto pick() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (cpu_has(Isa::Avx2)) return &blocks_fma<T, Normal>;
#endif
  return &blocks_default<T, Normal>;
}

// ~20-60 us of work per task (1-15 ns per block): little fork-join overhead.
constexpr std::size_t kBlocksPerTask = 4096;

}  // namespace

template <class T>
void random_fill(CpuExecutor* parallel, T* out, std::size_t n, bool normal, std::uint64_t seed, T p0, T p1) {
  static const auto uniform_fn = pick<T, false>();
  static const auto normal_fn = pick<T, true>();
  const auto fn = normal ? normal_fn : uniform_fn;
  constexpr std::size_t per = rng::Traits<T>::kPerBlock;
  const std::size_t nblocks = n / per + (n % per != 0);
  if (!parallel || nblocks < 2 * kBlocksPerTask) return fn(out, n, seed, 0, nblocks, p0, p1);
  parallel->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nblocks, kBlocksPerTask),
                      [&](const tbb::blocked_range<std::size_t>& r) { fn(out, n, seed, r.begin(), r.end(), p0, p1); });
  });
}

template void random_fill<float>(CpuExecutor*, float*, std::size_t, bool, std::uint64_t, float, float);
template void random_fill<double>(CpuExecutor*, double*, std::size_t, bool, std::uint64_t, double, double);

}  // namespace veda::detail::cpu
