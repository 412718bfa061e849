// matmul and linear: validation, one decision, the chosen tier.
#include "veda/matmul.hpp"

#include <limits>
#include <string>
#include <vector>

#include "src/gemm_tiers.hpp"
#include "src/operands.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_check.hpp"
#endif

namespace veda {
namespace {
using detail::dims;
using detail::gemm_cpu;
using detail::gemm_desc;
using detail::GemmShape;
using detail::Tier;
using detail::tier_bit;
#if VEDA_HAS_CUDA
using detail::gpu_tier;
#endif

constexpr std::uint32_t kMatmulTiers = tier_bit(Tier::CpuReference) | tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuTiled) |
                                       tier_bit(Tier::GpuTiled) | tier_bit(Tier::GpuCublas) |
                                       tier_bit(Tier::GpuCublasTf32) | tier_bit(Tier::GpuCublasBf16) |
                                       tier_bit(Tier::GpuNaive) | tier_bit(Tier::GpuVectorized) |
                                       tier_bit(Tier::GpuWmma);
// 16-bit elements: no FP32-input tensor-core tiers (TF32, BF16 rounding).
constexpr std::uint32_t kMatmul16Tiers =
    kMatmulTiers & ~(tier_bit(Tier::GpuCublasTf32) | tier_bit(Tier::GpuCublasBf16));
// float and double: also cpu+gpu, C's rows split between the devices and
// the CPU (host operands only, A not transposed; see gemm_coexec).
template <class T>
constexpr std::uint32_t matmul_tiers =
    detail::is_16bit_float<T> ? kMatmul16Tiers : kMatmulTiers | tier_bit(Tier::CoExec);
constexpr std::uint32_t kLinearTiers = tier_bit(Tier::CpuReference) | tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuTiled) |
                                       tier_bit(Tier::GpuUnfused) | tier_bit(Tier::GpuCublasLtFused);

// An operand as a stack of matrices: a 2-D Array is one, a 3-D Array
// extent(0) of extent(1) x extent(2) (matmul only; linear takes 2-D).
struct Stack {
  std::size_t batch = 1, rows = 0, cols = 0;
  bool three_d = false;
};
template <class T>
Stack stack_of(const Array<T>& a, const char* what, const std::string& op, bool batched) {
  if (a.ndim() == 2) return {1, a.rows(), a.cols(), false};
  if (batched && a.ndim() == 3) return {a.extent(0), a.extent(1), a.extent(2), true};
  throw InvalidArgument(op + ": " + what + " must be a 2-D" + (batched ? " or 3-D" : "") + " Array (it is " +
                        std::to_string(a.ndim()) + "-D, " + dims(a.shape()) + ")");
}

template <class T>
GemmShape shape_of(const Array<T>& a, const Array<T>& b, const MatmulOptions& o, const std::string& op,
                   bool batched = false) {
  const Stack sa = stack_of(a, "A", op, batched), sb = stack_of(b, "B", op, batched);
  GemmShape s;
  s.trans_a = o.transpose_a;
  s.trans_b = o.transpose_b;
  s.m = o.transpose_a ? sa.cols : sa.rows;
  s.k = o.transpose_a ? sa.rows : sa.cols;
  const std::size_t kb = o.transpose_b ? sb.cols : sb.rows;
  s.n = o.transpose_b ? sb.rows : sb.cols;
  if (kb != s.k)
    throw InvalidArgument(op + ": A is " + dims(a.shape()) + (o.transpose_a ? " (transposed)" : "") + " and B is " +
                          dims(b.shape()) + (o.transpose_b ? " (transposed)" : "") + ": inner dimensions " +
                          std::to_string(s.k) + " and " + std::to_string(kb) + " differ");
  if (sa.three_d && sb.three_d && sa.batch != sb.batch)
    throw InvalidArgument(op + ": A is " + dims(a.shape()) + " and B is " + dims(b.shape()) + ": batches of " +
                          std::to_string(sa.batch) + " and " + std::to_string(sb.batch) + " differ");
  // A 2-D operand is shared by every product of the batch.
  s.batch = sa.three_d ? sa.batch : sb.batch;
  s.stride_a = sa.three_d ? sa.rows * sa.cols : 0;
  s.stride_b = sb.three_d ? sb.rows * sb.cols : 0;
  s.stride_c = s.m * s.n;
  return s;
}

// The result's shape: 3-D when either operand is.
template <class T>
Shape result_shape(const GemmShape& s, const Array<T>& a, const Array<T>& b) {
  if (a.ndim() == 3 || b.ndim() == 3) return Shape{s.batch, s.m, s.n};
  return Shape{s.m, s.n};
}

// A stack of A's times one B, A not transposed, is one GEMM of
// (batch * m) x k by k x n: C's stack is that product's rows.
GemmShape folded(GemmShape s) {
  if (s.batch > 1 && s.stride_b == 0 && !s.trans_a && s.stride_a != 0) {
    s.m *= s.batch;
    s.batch = 1;
    s.stride_a = s.stride_c = 0;
  }
  return s;
}

#if VEDA_HAS_CUDA
// One GEMM of host operands on the calling thread's device (synchronous):
// each operand copied in, C copied back.
template <class T>
void gemm_on_device(Runtime& rt, Tier tier, const GemmShape& s, const T* a, const T* b, T* c) {
  auto& dev = detail::cuda_device(rt);
  void* st = dev.stream();
  const std::size_t ab = s.m * s.k * sizeof(T), bb = s.k * s.n * sizeof(T), cb = s.m * s.n * sizeof(T);
  detail::gpu_bridge::DeviceTemp da(rt, ab + 1, st), db(rt, bb + 1, st), dc(rt, cb + 1, st);
  dev.copy_to_device(da.get(), a, ab, st, false);
  dev.copy_to_device(db.get(), b, bb, st, false);
  if (s.beta != 0) dev.copy_to_device(dc.get(), c, cb, st, false);
  detail::cuda::gemm(dev, gpu_tier(tier), s, static_cast<const T*>(da.get()), static_cast<const T*>(db.get()),
                     static_cast<T*>(dc.get()), static_cast<cudaStream_t>(st));
  dev.copy_to_host(c, dc.get(), cb, st, false);
}
#endif

template <class T, class Operands>
struct MatmulTag {};
template <class T>
struct LinearTag {};

// One matmul over Arrays into c (fresh, or the caller's for matmul_into).
template <class T>
void matmul_arrays(const Array<T>& a, const Array<T>& b, Array<T>& c, const GemmShape& batch, const MatmulOptions& o) {
  const GemmShape s = folded(batch);
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::CallDesc d = gemm_desc<T>(s, o);
  if (s.beta != 0) detail::describe_operands(d, a, b, c);  // C is read too
  else detail::describe_operands(d, a, b);
  d.exclude_tiers |= tier_bit(Tier::CoExec);  // Arrays stay whole where they live
  detail::run_op(
      rt, detail::op_site<MatmulTag<T, Array<T>>>(o.name, "matmul", detail::OpClass::Gemm, matmul_tiers<T>), d,
      [&](const detail::Plan& p) {
        T* hc = static_cast<T*>(detail::host_out(c.buffer(), s.beta != 0));
        gemm_cpu(rt, p.tier, s, a.host().data(), b.host().data(), hc);
      },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        const T* da = detail::device_in(dev, a, st);
        const T* db = detail::device_in(dev, b, st);
        T* dc = static_cast<T*>(detail::device_out(dev, c.buffer(), st, s.beta != 0));
        detail::cuda::gemm(dev, gpu_tier(p.tier), s, da, db, dc, static_cast<cudaStream_t>(st));
        detail::device_done({a.buffer(), b.buffer(), c.buffer()}, st);
        return false;
#else
        (void)p;
        return false;
#endif
      });
}

GemmShape scaled(GemmShape s, const MatmulOptions& o) {
  s.alpha = o.alpha;
  s.beta = o.beta;
  return s;
}
}  // namespace

template <class T>
Array<T> matmul(const Array<T>& a, const Array<T>& b, const MatmulOptions& o) {
  if (o.beta != 0)
    throw InvalidArgument("veda::matmul: beta = " + std::to_string(o.beta) +
                          " scales an existing C, which a returning matmul does not have (use matmul_into)");
  const GemmShape s = scaled(shape_of(a, b, o, "veda::matmul", true), o);
  const Shape out = result_shape(s, a, b);
  auto c = detail::host_array<T>(out);
  matmul_arrays(a, b, c, s, o);
  return c;
}

template <class T>
void matmul_into(Array<T>& c, const Array<T>& a, const Array<T>& b, const MatmulOptions& o) {
  const GemmShape s = scaled(shape_of(a, b, o, "veda::matmul_into", true), o);
  if (const Shape want = result_shape(s, a, b); c.shape() != want)
    throw InvalidArgument("veda::matmul_into: C is " + dims(c.shape()) + " but A B is " + dims(want));
  if (c.buffer() && (c.buffer() == a.buffer() || c.buffer() == b.buffer()))
    throw InvalidArgument("veda::matmul_into: C is the same Array as A or B");
  matmul_arrays(a, b, c, s, o);
}

template <class T>
void matmul(std::span<const T> a, std::span<const T> b, std::span<T> c, std::size_t m, std::size_t k, std::size_t n,
            const MatmulOptions& o) {
  auto need = [](std::span<const T> x, std::size_t want, const char* what) {
    if (x.size() != want)
      throw InvalidArgument(std::string("veda::matmul: ") + what + " has " + std::to_string(x.size()) +
                            " elements, the shape needs " + std::to_string(want));
  };
  auto area = [](std::size_t r, std::size_t c, const char* what) {
    if (c != 0 && r > std::numeric_limits<std::size_t>::max() / sizeof(T) / c)
      throw InvalidArgument(std::string("veda::matmul: ") + what + " of " + std::to_string(r) + "x" +
                            std::to_string(c) + " elements overflows a byte count");
  };
  area(m, k, "A");
  area(k, n, "B");
  area(m, n, "C");
  need(a, m * k, "A");
  need(b, k * n, "B");
  need(std::span<const T>(c.data(), c.size()), m * n, "C");
  auto overlaps = [&](std::span<const T> x) {
    return !x.empty() && !c.empty() && x.data() < c.data() + c.size() && c.data() < x.data() + x.size();
  };
  if (overlaps(a) || overlaps(b)) throw InvalidArgument("veda::matmul: C overlaps A or B");
  const GemmShape s = scaled(GemmShape{m, n, k, o.transpose_a, o.transpose_b}, o);
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::CallDesc d = gemm_desc<T>(s, o);
  detail::describe_host_operands(d, (a.size() + b.size() + (s.beta != 0 ? c.size() : 0)) * sizeof(T),
                                 c.size() * sizeof(T));
  if (s.trans_a) d.exclude_tiers |= tier_bit(Tier::CoExec);  // the split takes A's rows as contiguous
  detail::run_op(
      rt, detail::op_site<MatmulTag<T, std::span<T>>>(o.name, "matmul", detail::OpClass::Gemm, matmul_tiers<T>),
      d, [&](const detail::Plan& p) { gemm_cpu(rt, p.tier, s, a.data(), b.data(), c.data()); },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        if constexpr (!detail::is_16bit_float<T>)
          if (p.tier == Tier::CoExec) {
            detail::gemm_coexec(rt, p, s, a.data(), b.data(), c.data(),
                                [&](const GemmShape& part, const T* pa, T* pc) {
                                  gemm_on_device(rt, Tier::GpuCublas, part, pa, b.data(), pc);
                                });
            return true;
          }
        gemm_on_device(rt, p.tier, s, a.data(), b.data(), c.data());
        return true;
#else
        (void)p;
        return false;
#endif
      });
}

// linear's CPU tiers: the product, then bias and activation. 16-bit
// elements: all of it in float on float copies, y rounded once.
template <class T>
void linear_cpu(Runtime& rt, Tier tier, const GemmShape& s, const T* x, const T* w, const T* bias, Activation act,
                T* y) {
  if constexpr (detail::is_16bit_float<T>) {
    const std::vector<float> fx = detail::widened(rt, x, s.m * s.k), fw = detail::widened(rt, w, s.n * s.k),
                             fb = detail::widened(rt, bias, s.n);
    std::vector<float> fy(s.m * s.n);
    linear_cpu<float>(rt, tier, s, fx.data(), fw.data(), bias ? fb.data() : nullptr, act, fy.data());
    detail::convert(rt, fy.data(), y, fy.size());
  } else {
    gemm_cpu(rt, tier, s, x, w, y);
    detail::cpu::bias_activation(*rt.state().cpu_executor, y, s.m, s.n, bias, act);
  }
}

template <class T>
Array<T> linear(const Array<T>& x, const Array<T>& w, const Array<T>& bias, Activation act, const MatmulOptions& o) {
  const std::string op = o.name.empty() ? "veda::linear" : o.name;
  if (o.alpha != 1 || o.beta != 0) throw InvalidArgument(op + ": linear takes no alpha or beta");
  MatmulOptions mo = o;
  mo.transpose_a = false;
  mo.transpose_b = true;  // x w^T
  const GemmShape s = shape_of(x, w, mo, op);
  if (!bias.empty() && bias.size() != s.n)
    throw InvalidArgument(op + ": bias has " + std::to_string(bias.size()) + " elements but w has " +
                          std::to_string(s.n) + " output features (w is " + dims(w.shape()) + ")");
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::CallDesc d = gemm_desc<T>(s, o);
  d.linear = true;
  detail::describe_operands(d, x, w, bias);
  auto y = detail::host_array<T>(Shape{s.m, s.n});
  const T* no_bias = nullptr;
  detail::run_op(
      rt, detail::op_site<LinearTag<T>>(o.name, "linear", detail::OpClass::Gemm, kLinearTiers), d,
      [&](const detail::Plan& p) {
        linear_cpu(rt, p.tier, s, x.host().data(), w.host().data(), bias.empty() ? no_bias : bias.host().data(), act,
                   y.host().data());
      },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        const auto cs = static_cast<cudaStream_t>(st);
        const T* dx = detail::device_in(dev, x, st);
        const T* dw = detail::device_in(dev, w, st);
        const T* db = bias.empty() ? no_bias : detail::device_in(dev, bias, st);
        T* dy = detail::device_out(dev, y, st);
        auto unfused = [&] {
          detail::cuda::gemm(dev, detail::cuda::GemmTier::Cublas, s, dx, dw, dy, cs);
          detail::cuda::bias_activation(dy, s.m, s.n, db, act, cs);
          detail::cuda::launched("bias/activation kernel launch");
        };
        bool fused = false;  // the fused tier is not for double, and cuBLASLt may decline an epilogue
        if constexpr (!std::is_same_v<T, double>)
          fused = p.tier == Tier::GpuCublasLtFused &&
                  detail::cuda::linear_fused(dev, s.m, s.n, s.k, dx, dw, db, dy, act,
                                             rt.config().precision() != Precision::Strict, cs);
        if (!fused) unfused();
        detail::device_done({x.buffer(), w.buffer(), bias.buffer(), y.buffer()}, st);
        return false;
#else
        (void)p;
        return false;
#endif
      });
  return y;
}

template Array<float> matmul<float>(const Array<float>&, const Array<float>&, const MatmulOptions&);
template Array<double> matmul<double>(const Array<double>&, const Array<double>&, const MatmulOptions&);
template void matmul<float>(std::span<const float>, std::span<const float>, std::span<float>, std::size_t, std::size_t,
                            std::size_t, const MatmulOptions&);
template void matmul<double>(std::span<const double>, std::span<const double>, std::span<double>, std::size_t,
                             std::size_t, std::size_t, const MatmulOptions&);
template void matmul_into<float>(Array<float>&, const Array<float>&, const Array<float>&, const MatmulOptions&);
template void matmul_into<double>(Array<double>&, const Array<double>&, const Array<double>&, const MatmulOptions&);
#define VEDA_MATMUL_16(T)                                                                                       \
  template Array<T> matmul<T>(const Array<T>&, const Array<T>&, const MatmulOptions&);                          \
  template void matmul<T>(std::span<const T>, std::span<const T>, std::span<T>, std::size_t, std::size_t,       \
                          std::size_t, const MatmulOptions&);                                                   \
  template void matmul_into<T>(Array<T>&, const Array<T>&, const Array<T>&, const MatmulOptions&);
VEDA_MATMUL_16(half)
VEDA_MATMUL_16(bfloat16)
#undef VEDA_MATMUL_16
template Array<float> linear<float>(const Array<float>&, const Array<float>&, const Array<float>&, Activation,
                                    const MatmulOptions&);
template Array<double> linear<double>(const Array<double>&, const Array<double>&, const Array<double>&, Activation,
                                      const MatmulOptions&);
template Array<half> linear<half>(const Array<half>&, const Array<half>&, const Array<half>&, Activation,
                                  const MatmulOptions&);
template Array<bfloat16> linear<bfloat16>(const Array<bfloat16>&, const Array<bfloat16>&, const Array<bfloat16>&,
                                          Activation, const MatmulOptions&);

}  // namespace veda
