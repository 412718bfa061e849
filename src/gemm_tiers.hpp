// What matmul, linear and linear_backward share: the GEMM's call
// description, its CPU tiers on host pointers, the GPU GEMM tier a decision
// names, and shapes as messages write them.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executor.hpp"
#include "backends/cpu/gemm.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/gemm_shape.hpp"
#include "veda/half.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/gemm.hpp"
#include "veda/detail/coexec.hpp"
#endif

namespace veda::detail {

// "3x4", "2x3x4": matrices and stacks of them, as messages name them.
inline std::string dims(const Shape& s) {
  std::string t = std::to_string(s[0]);
  for (int d = 1; d < s.ndim(); ++d) t += "x" + std::to_string(s[d]);
  return t;
}

// A nested call (made inside another veda call, such as a par_iter stage
// or a parallel_for body, on a oneTBB worker or on the caller's thread)
// leaves cpu-blas out: OpenBLAS would start its threads beside the outer
// loop's, while oneTBB nests cpu-tiled's tiles in it. Such calls learn in a
// type slot of their own. Called with the call's own scope open (depth 1).
struct NestedGemm {};
template <class Options>
void leave_blas_out_when_nested(CallDesc& d) {
  if (t_call_depth > 1 || on_cpu_worker()) {
    d.exclude_tiers |= tier_bit(Tier::CpuBlas);
    d.type_key = &type_tag<Options, NestedGemm>;
  }
}
template <class T, class Options>
CallDesc gemm_desc(const GemmShape& s, const Options& o) {
  CallDesc d = op_desc(s.batch * s.m * s.n * std::max<std::size_t>(s.k, 1), sizeof(T), o);
  leave_blas_out_when_nested<Options>(d);
  d.dims[0] = s.batch * s.m;  // the cost model sees a batch as its rows stacked
  d.dims[1] = s.k;
  d.dims[2] = s.n;
  d.ndims = 3;
  return d;
}

// The CPU tiers on host pointers. A batch runs its products one after
// another, each using every worker (BLAS threads, or cpu-tiled's tiles),
// except that cpu-tiled spreads small products over the workers as well
// (oneTBB nests the tiles inside).
template <class T>
  requires(!is_16bit_float<T>)
void gemm_cpu(Runtime& rt, Tier tier, const GemmShape& s, const T* a, const T* b, T* c) {
  auto& st = rt.state();
  const GemmShape one = s.one();
  auto product = [&](std::size_t i) {
    const T *ai = a + i * s.stride_a, *bi = b + i * s.stride_b;
    T* ci = c + i * s.stride_c;
    if (tier == Tier::CpuReference) return cpu::gemm_reference(one, ai, bi, ci);
    const auto& lib = blas(st.cpu, st.profile().cpu.blas_core);
    if (tier == Tier::CpuBlas && cpu::gemm_blas(lib, st.config.threads(), one, ai, bi, ci)) return;
    cpu::gemm_tiled(*st.cpu_executor, one, ai, bi, ci);  // cpu-tiled, or cpu-blas without a BLAS
  };
  if (tier == Tier::CpuTiled && s.batch > 1) {
    in_cpu_arena(rt, [&] { tbb::parallel_for(std::size_t{0}, s.batch, product); });
    return;
  }
  for (std::size_t i = 0; i < s.batch; ++i) product(i);
}

// Copies n elements converting each, over the workers when n is large
// (a 16-bit GEMM's operands on their way to and from its float tiers).
template <class From, class To>
void convert(Runtime& rt, const From* in, To* out, std::size_t n) {
  constexpr std::size_t kGrain = std::size_t{1} << 16;
  auto run = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) out[i] = static_cast<To>(static_cast<float>(in[i]));
  };
  if (n <= kGrain) return run(0, n);
  in_cpu_arena(rt, [&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kGrain), [&](const auto& r) { run(r.begin(), r.end()); });
  });
}

// A float copy of n elements (none for a null p), converted as above.
template <class T>
std::vector<float> widened(Runtime& rt, const T* p, std::size_t n) {
  std::vector<float> f(p ? n : 0);
  if (p) convert(rt, p, f.data(), n);
  return f;
}

// 16-bit elements on the CPU: the float tiers over float copies of the
// operands (each converted once) and of C (read only when beta != 0),
// rounded back once at the end, so the sums are FP32 (cpu-reference's
// double) as on the GPU's tensor-core tiers.
template <class T>
  requires is_16bit_float<T>
void gemm_cpu(Runtime& rt, Tier tier, const GemmShape& s, const T* a, const T* b, T* c) {
  if (s.batch == 0) return;
  auto span_of = [&](std::size_t stride, std::size_t one) { return (s.batch - 1) * stride + one; };
  const std::size_t na = span_of(s.stride_a, s.m * s.k), nb = span_of(s.stride_b, s.k * s.n),
                    nc = span_of(s.stride_c, s.m * s.n);
  const std::vector<float> fa = widened(rt, a, na), fb = widened(rt, b, nb);
  std::vector<float> fc = s.beta != 0 ? widened(rt, c, nc) : std::vector<float>(nc);
  gemm_cpu<float>(rt, tier, s, fa.data(), fb.data(), fc.data());
  convert(rt, fc.data(), c, nc);
}

#if VEDA_HAS_CUDA
inline cuda::GemmTier gpu_tier(Tier t) {
  return t == Tier::GpuTiled        ? cuda::GemmTier::Tiled
         : t == Tier::GpuCublasTf32 ? cuda::GemmTier::CublasTf32
         : t == Tier::GpuCublasBf16 ? cuda::GemmTier::CublasBf16
         : t == Tier::GpuNaive      ? cuda::GemmTier::Naive
         : t == Tier::GpuVectorized ? cuda::GemmTier::Vectorized
         : t == Tier::GpuWmma       ? cuda::GemmTier::Wmma
                                    : cuda::GemmTier::Cublas;
}

// cpu+gpu for one GEMM of host operands (no batch, A not transposed): C's
// first rows, by the plan's share, in equal shares on the devices, each by
// on_device(part, its rows of A, its rows of C) with all of B; the rest by
// the CPU's BLAS (coexec_parts: a device share that fails recoverably is
// redone on the CPU).
template <class T, class OnDevice>
void gemm_coexec(Runtime& rt, const Plan& p, const GemmShape& s, const T* a, const T* b, T* c,
                 const OnDevice& on_device) {
  auto rows = [&](std::size_t lo, std::size_t hi) {
    GemmShape part = s.one();
    part.m = hi - lo;
    return part;
  };
  (void)coexec_parts<bool>(
      rt, p, coexec_gpu_count(p, s.m), s.m,
      [&](std::size_t lo, std::size_t hi) {
        on_device(rows(lo, hi), a + lo * s.k, c + lo * s.n);
        return true;
      },
      [&](std::size_t lo, std::size_t hi) {
        gemm_cpu(rt, Tier::CpuBlas, rows(lo, hi), a + lo * s.k, b, c + lo * s.n);
        return true;
      });
}
#endif

}  // namespace veda::detail
