// cpu-tiled: veda's own GEMM, for machines without a BLAS and as the
// cost model's second CPU tier. The classic blocked structure: B is packed
// in KC x NR slivers, each task packs its MC x KC block of A in MR-row
// slivers, and a register-blocked MR x NR micro-kernel runs over both, so
// the inner loop is broadcast-FMA on data already in L1. Transposed
// operands are handled by the packing, never copied whole.
//
// The micro-kernel is written once with GCC vector extensions and compiled
// per ISA (AVX-512, AVX2+FMA, baseline SSE2) via target attributes; the
// variant is chosen at run time, so the library needs no -march flag. This
// file is built with -O3 and FMA contraction (see CMakeLists.txt).
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_isa.hpp"
#include "backends/cpu/gemm.hpp"

namespace veda::detail::cpu {
namespace {

constexpr std::size_t kMR = 6;    // rows of C per micro-kernel
constexpr std::size_t kKC = 256;  // depth of a packed sliver
constexpr std::size_t kMC = 96;   // rows of A packed per task (a multiple of kMR)
constexpr std::size_t kNC = 512;  // columns of C per task

// Rows [i0, i0 + mc) x depth [p0, p0 + kc) of op(A), as MR-row slivers
// (p-major within a sliver), zero-padded to a multiple of MR.
template <class T>
void pack_a(const GemmShape& s, const T* a, std::size_t i0, std::size_t mc, std::size_t p0, std::size_t kc, T* out) {
  for (std::size_t ir = 0; ir < mc; ir += kMR)
    for (std::size_t p = 0; p < kc; ++p)
      for (std::size_t r = 0; r < kMR; ++r)
        *out++ = ir + r < mc ? op_a(s, a, i0 + ir + r, p0 + p) : T(0);
}

// Depth [p0, p0 + kc) x columns [j0, j0 + nc) of op(B), as NR-column slivers.
template <class T>
void pack_b(const GemmShape& s, const T* b, std::size_t p0, std::size_t kc, std::size_t j0, std::size_t nc,
            std::size_t nr, T* out) {
  for (std::size_t jr = 0; jr < nc; jr += nr)
    for (std::size_t p = 0; p < kc; ++p)
      for (std::size_t c = 0; c < nr; ++c) *out++ = jr + c < nc ? op_b(s, b, p0 + p, j0 + jr + c) : T(0);
}

// C[0..mr) x [0..nr) = alpha Ap * Bp + beta C over kc for the first depth
// block, += alpha Ap * Bp for the others. VB: vector bytes of the ISA.
template <class T, int VB>
[[gnu::always_inline]] inline void micro(std::size_t kc, const T* ap, const T* bp, T* c, std::size_t ldc,
                                         std::size_t mr, std::size_t nr, bool first, T alpha, T beta) {
  typedef T V __attribute__((vector_size(VB)));
  typedef T VU __attribute__((vector_size(VB), aligned(sizeof(T)), may_alias));  // unaligned view
  constexpr std::size_t L = VB / sizeof(T), NV = 2, NR = NV * L;
  // Accumulators stay in registers: their address is never taken.
  V acc[kMR][NV] = {};
  for (std::size_t p = 0; p < kc; ++p) {
    V b[NV];
    for (std::size_t v = 0; v < NV; ++v) b[v] = *reinterpret_cast<const VU*>(bp + p * NR + v * L);
    for (std::size_t r = 0; r < kMR; ++r) {
      const T av = ap[p * kMR + r];
      for (std::size_t v = 0; v < NV; ++v) acc[r][v] += av * b[v];
    }
  }
  // beta == 0: the old C is not used (it may hold NaN).
  if (mr == kMR && nr == NR) {
    for (std::size_t r = 0; r < kMR; ++r)
      for (std::size_t v = 0; v < NV; ++v) {
        auto* q = reinterpret_cast<VU*>(c + r * ldc + v * L);
        const V x = alpha * acc[r][v];
        *q = !first ? *q + x : beta == T(0) ? x : x + beta * *q;
      }
    return;
  }
  for (std::size_t r = 0; r < mr; ++r)
    for (std::size_t j = 0; j < nr; ++j) {
      T& q = c[r * ldc + j];
      const T x = alpha * acc[r][j / L][j % L];
      q = !first ? q + x : beta == T(0) ? x : x + beta * q;
    }
}

// One task: rows [i0, i1) x columns [j0, j1) of C for depth block p0 (B
// already packed for those columns, starting at column jb).
template <class T, int VB>
[[gnu::always_inline]] inline void block(const GemmShape& s, const T* a, const T* bpack, std::size_t jb, std::size_t p0,
                                         std::size_t kc, std::size_t i0, std::size_t i1, std::size_t j0,
                                         std::size_t j1, T* c) {
  constexpr std::size_t NR = 2 * VB / sizeof(T);
  thread_local std::vector<T> apack;
  for (std::size_t ic = i0; ic < i1; ic += kMC) {
    const std::size_t mc = std::min(kMC, i1 - ic);
    apack.resize(((mc + kMR - 1) / kMR) * kMR * kc);
    pack_a(s, a, ic, mc, p0, kc, apack.data());
    for (std::size_t jr = j0; jr < j1; jr += NR) {
      const T* bp = bpack + ((jr - jb) / NR) * NR * kc;
      for (std::size_t ir = 0; ir < mc; ir += kMR)
        micro<T, VB>(kc, apack.data() + ir * kc, bp, c + (ic + ir) * s.n + jr, s.n, std::min(kMR, mc - ir),
                     std::min(NR, j1 - jr), p0 == 0, static_cast<T>(s.alpha), static_cast<T>(s.beta));
    }
  }
}

template <class T>
using BlockFn = void (*)(const GemmShape&, const T*, const T*, std::size_t, std::size_t, std::size_t, std::size_t,
                         std::size_t, std::size_t, std::size_t, T*);

#define VEDA_GEMM_VARIANT(NAME, TARGET, VB)                                                                 \
  template <class T>                                                                                        \
  TARGET void NAME(const GemmShape& s, const T* a, const T* bp, std::size_t jb, std::size_t p0, std::size_t kc, \
                   std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1, T* c) {                  \
    block<T, VB>(s, a, bp, jb, p0, kc, i0, i1, j0, j1, c);                                                  \
  }
#if defined(__x86_64__)
VEDA_GEMM_VARIANT(block_avx512, __attribute__((target("avx512f,fma"))), 64)
VEDA_GEMM_VARIANT(block_avx2, __attribute__((target("avx2,fma"))), 32)
#endif
VEDA_GEMM_VARIANT(block_base, , 16)
#undef VEDA_GEMM_VARIANT

// The widest variant this CPU runs, with its vector width.
template <class T>
std::pair<BlockFn<T>, std::size_t> pick() {
#if defined(__x86_64__)
  if (cpu_has(Isa::Avx512)) return {&block_avx512<T>, 64};
  if (cpu_has(Isa::Avx2)) return {&block_avx2<T>, 32};
#endif
  return {&block_base<T>, 16};
}

}  // namespace

template <class T>
void gemm_tiled(CpuExecutor& ex, const GemmShape& s, const T* a, const T* b, T* c) {
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {  // C = beta C
    for (std::size_t i = 0; i < s.m * s.n; ++i) c[i] = s.beta == 0 ? T(0) : static_cast<T>(s.beta) * c[i];
    return;
  }
  static const auto variant = pick<T>();
  const BlockFn<T> fn = variant.first;  // named, not bound: lambdas capture it (clang 14)
  const std::size_t vb = variant.second;
  const std::size_t nr = 2 * vb / sizeof(T);
  const std::size_t n_pad = (s.n + nr - 1) / nr * nr;
  std::vector<T> bpack(n_pad * std::min(kKC, s.k));
  ex.execute([&] {
    for (std::size_t p0 = 0; p0 < s.k; p0 += kKC) {
      const std::size_t kc = std::min(kKC, s.k - p0);
      // Pack this depth block of B, sliver by sliver, in parallel.
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n_pad / nr), [&](const auto& r) {
        for (std::size_t q = r.begin(); q < r.end(); ++q) {
          const std::size_t j0 = q * nr;
          pack_b(s, b, p0, kc, j0, std::min(nr, s.n - j0), nr, bpack.data() + q * nr * kc);
        }
      });
      // Column blocks are whole slivers, so a task starts on a sliver edge.
      const std::size_t nc = std::max(nr, kNC / nr * nr);
      tbb::parallel_for(tbb::blocked_range2d<std::size_t>(0, s.m, kMC, 0, (s.n + nc - 1) / nc, 1),
                        [&](const tbb::blocked_range2d<std::size_t>& r) {
                          const std::size_t j0 = r.cols().begin() * nc, j1 = std::min(s.n, r.cols().end() * nc);
                          fn(s, a, bpack.data() + j0 * kc, j0, p0, kc, r.rows().begin(), r.rows().end(), j0, j1,
                             c);
                        });
    }
  });
}

template void gemm_tiled<float>(CpuExecutor&, const GemmShape&, const float*, const float*, float*);
template void gemm_tiled<double>(CpuExecutor&, const GemmShape&, const double*, const double*, double*);

}  // namespace veda::detail::cpu
