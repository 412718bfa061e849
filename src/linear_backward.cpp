// linear_backward: validation, one decision, the chosen tier.
#include "veda/linear_backward.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/linear_backward.hpp"
#include "src/gemm_tiers.hpp"
#include "src/operands.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/linear_backward.hpp"
#include "runtime/memory_pool.hpp"
#endif

namespace veda {
namespace {
using detail::GemmShape;
using detail::Tier;
using detail::tier_bit;

constexpr std::uint32_t kTiers = tier_bit(Tier::CpuReference) | tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuTiled) |
                                 tier_bit(Tier::GpuUnfused) | tier_bit(Tier::GpuCublasLtFused);
// 16-bit elements: no cuBLASLt epilogue tier (its 16-bit gradient epilogues are not wired up).
template <class T>
constexpr std::uint32_t tiers_of = detail::is_16bit_float<T> ? kTiers & ~tier_bit(Tier::GpuCublasLtFused) : kTiers;

template <class T>
struct LinearBackwardTag {};

// One call's operands; the chained form adds the input's activation.
template <class T>
struct Operands {
  const Array<T>& x;
  const Array<T>& w;
  const Array<T>& grad_out;
  Activation act;
  const Array<T>& pre_act;
  bool chained;
  Activation input_act;
  const Array<T>& input_pre_act;
};

template <class T>
void check_matrix(const std::string& op, const char* what, const Array<T>& a, std::size_t rows, std::size_t cols,
                  const char* why) {
  if (a.ndim() == 2 && a.rows() == rows && a.cols() == cols) return;
  throw InvalidArgument(op + ": " + what + " is " + (a.empty() && a.ndim() < 2 ? "empty" : detail::dims(a.shape())) +
                        "; it must be " + std::to_string(rows) + "x" + std::to_string(cols) + " (" + why + ")");
}

// The two products: grad_x = dz w, grad_w = dz^T x (dz stored m x n).
struct Products {
  GemmShape x, w;
};
Products products(std::size_t m, std::size_t k, std::size_t n) {
  Products p;
  p.x.m = m, p.x.n = k, p.x.k = n;
  p.w.m = n, p.w.n = k, p.w.k = m, p.w.trans_a = true;
  return p;
}

// The gradients' host memory (null: not asked for).
template <class T>
struct Grads {
  T *x, *w, *bias, *input_bias;
};

// The CPU tiers on host pointers: the GEMMs as matmul's tiers, the
// activation gradients and column sums over oneTBB (serially for
// cpu-reference).
template <class T>
  requires(!detail::is_16bit_float<T>)
void backward_cpu(Runtime& rt, Tier tier, const T* x, const T* w, const T* grad_out, Activation act, const T* z,
                  Activation input_act, const T* zin, std::size_t m, std::size_t k, std::size_t n, Grads<T> out) {
  detail::CpuExecutor* par = tier == Tier::CpuReference ? nullptr : rt.state().cpu_executor.get();
  const Products prod = products(m, k, n);
  const GemmShape &sx = prod.x, &sw = prod.w;
  const T* dz = grad_out;
  std::unique_ptr<T[]> dz_store;
  if (z) {
    dz_store.reset(new T[m * n]);
    detail::cpu::activation_grad(par, dz_store.get(), dz, z, m * n, act);
    dz = dz_store.get();
  }
  detail::gemm_cpu(rt, tier, sx, dz, w, out.x);
  if (zin) detail::cpu::activation_grad(par, out.x, out.x, zin, m * k, input_act);
  if (out.input_bias) detail::cpu::column_sums(par, out.x, m, k, out.input_bias);
  detail::gemm_cpu(rt, tier, sw, dz, x, out.w);
  if (out.bias) detail::cpu::column_sums(par, dz, m, n, out.bias);
}

// 16-bit elements: the float path on float copies, each gradient rounded once.
template <class T>
  requires detail::is_16bit_float<T>
void backward_cpu(Runtime& rt, Tier tier, const T* x, const T* w, const T* grad_out, Activation act, const T* z,
                  Activation input_act, const T* zin, std::size_t m, std::size_t k, std::size_t n, Grads<T> out) {
  using detail::widened;
  const auto fx = widened(rt, x, m * k), fw = widened(rt, w, n * k), fg = widened(rt, grad_out, m * n),
             fz = widened(rt, z, m * n), fzin = widened(rt, zin, m * k);
  std::vector<float> gx(m * k), gw(n * k), gb(out.bias ? n : 0), gib(out.input_bias ? k : 0);
  backward_cpu<float>(rt, tier, fx.data(), fw.data(), fg.data(), act, z ? fz.data() : nullptr, input_act,
                      zin ? fzin.data() : nullptr, m, k, n,
                      {gx.data(), gw.data(), out.bias ? gb.data() : nullptr, out.input_bias ? gib.data() : nullptr});
  detail::convert(rt, gx.data(), out.x, gx.size());
  detail::convert(rt, gw.data(), out.w, gw.size());
  if (out.bias) detail::convert(rt, gb.data(), out.bias, gb.size());
  if (out.input_bias) detail::convert(rt, gib.data(), out.input_bias, gib.size());
}

template <class T>
LinearGrads<T> backward(const Operands<T>& in, const LinearBackwardOptions& o) {
  const std::string op = o.name.empty() ? "veda::linear_backward" : o.name;
  const Array<T>& x = in.x;
  const Array<T>& w = in.w;
  if (x.ndim() != 2 || w.ndim() != 2)
    throw InvalidArgument(op + ": x and w must be 2-D (x is " + detail::dims(x.shape()) + ", w is " +
                          detail::dims(w.shape()) + ")");
  const std::size_t m = x.rows(), k = x.cols(), n = w.rows();
  if (w.cols() != k)
    throw InvalidArgument(op + ": x is " + detail::dims(x.shape()) + " and w is " + detail::dims(w.shape()) +
                          ": their input features (" + std::to_string(k) + " and " + std::to_string(w.cols()) +
                          ") differ");
  const bool act_in = in.act != Activation::None;                        // dz = grad_out * act'(pre_act)
  const bool input_grad = in.chained && in.input_act != Activation::None;  // grad_x *= input_act'(input_pre_act)
  check_matrix(op, "grad_out", in.grad_out, m, n, "x's rows by w's rows");
  if (act_in) check_matrix(op, "pre_act", in.pre_act, m, n, "the activation's input, as grad_out");
  if (input_grad) check_matrix(op, "input_pre_act", in.input_pre_act, m, k, "the input activation's input, as x");

  const Products prod = products(m, k, n);
  const GemmShape &sx = prod.x, &sw = prod.w;
  GemmShape both = sx;  // the cost model sees the two GEMMs as one of twice the rows
  both.m = 2 * m;
  detail::CallDesc d = detail::gemm_desc<T>(both, o);
  d.linear = true;  // and the element passes (activation gradient, column sums) as an epilogue
  detail::describe_buffers(d, {x.buffer(), w.buffer(), in.grad_out.buffer(), act_in ? in.pre_act.buffer() : nullptr,
                              input_grad ? in.input_pre_act.buffer() : nullptr});  // what the call reads

  LinearGrads<T> g;
  g.grad_x = detail::host_array<T>(Shape{m, k});
  g.grad_w = detail::host_array<T>(Shape{n, k});
  if (o.bias) g.grad_bias = detail::host_array<T>(Shape{n});
  if (in.chained) g.grad_input_bias = detail::host_array<T>(Shape{k});
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::run_op(
      rt, detail::op_site<LinearBackwardTag<T>>(o.name, "linear_backward", detail::OpClass::Gemm, tiers_of<T>), d,
      [&](const detail::Plan& p) {
        backward_cpu<T>(rt, p.tier, x.host().data(), w.host().data(), in.grad_out.host().data(), in.act,
                        act_in ? in.pre_act.host().data() : nullptr, in.input_act,
                        input_grad ? in.input_pre_act.host().data() : nullptr, m, k, n,
                        {g.grad_x.host().data(), g.grad_w.host().data(), o.bias ? g.grad_bias.host().data() : nullptr,
                         in.chained ? g.grad_input_bias.host().data() : nullptr});
      },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        namespace cu = detail::cuda;
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        const auto cs = static_cast<cudaStream_t>(st);
        const T* dx = detail::device_in(dev, x, st);
        const T* dw = detail::device_in(dev, w, st);
        const T* dz = detail::device_in(dev, in.grad_out, st);
        const T* z = act_in ? detail::device_in(dev, in.pre_act, st) : nullptr;
        const T* zin = input_grad ? detail::device_in(dev, in.input_pre_act, st) : nullptr;
        T* gx = detail::device_out(dev, g.grad_x, st);
        T* gw = detail::device_out(dev, g.grad_w, st);
        T* gb = o.bias ? detail::device_out(dev, g.grad_bias, st) : nullptr;
        T* gib = in.chained ? detail::device_out(dev, g.grad_input_bias, st) : nullptr;
        const detail::PoolBlock scratch(
            dev.pool(), std::max(cu::column_sums_scratch(m, n), cu::column_sums_scratch(m, k)) + 1, st);
        std::optional<detail::PoolBlock> dz_store;
        if (act_in) {
          dz_store.emplace(dev.pool(), m * n * sizeof(T), st);
          cu::activation_grad(dz_store->as<T>(), dz, z, m * n, in.act, cs);
          dz = dz_store->as<T>();
        }
        // gpu-cublaslt-fused (FP32): each product with its epilogue in one
        // cuBLASLt call, or, where cuBLASLt declines (an empty dimension
        // too: the sums must still be written as zeros), cuBLAS and kernels.
        const bool lt = std::is_same_v<T, float> && p.tier == Tier::GpuCublasLtFused;
        const bool tf32 = rt.config().precision() != Precision::Strict;
        auto fused_input = [&]() -> bool {
          if constexpr (std::is_same_v<T, float>) {
            if (!lt || !input_grad || (in.input_act == Activation::Gelu && k % 8 != 0)) return false;
            std::optional<detail::PoolBlock> mask;
            const void* aux = zin;
            std::size_t aux_ld = k;
            if (in.input_act == Activation::Relu) {
              aux_ld = cu::relu_mask_ld(k);
              mask.emplace(dev.pool(), m * aux_ld / 8 + 1, st);
              cu::relu_mask(zin, m, k, mask->as<std::uint32_t>(), cs);
              aux = mask->get();
            }
            return cu::input_grad_fused(dev, m, n, k, dz, dw, in.input_act, aux, aux_ld, gx, gib, tf32, cs);
          }
          return false;
        };
        if (!fused_input()) {
          cu::gemm(dev, cu::GemmTier::Cublas, sx, dz, dw, gx, cs);
          if (input_grad) cu::activation_grad(gx, gx, zin, m * k, in.input_act, cs);
          if (in.chained) cu::column_sums(gx, m, k, gib, scratch.get(), cs);
        }
        auto fused_weight = [&]() -> bool {
          if constexpr (std::is_same_v<T, float>) return lt && cu::weight_grad_fused(dev, m, n, k, dx, dz, gw, gb, tf32, cs);
          return false;
        };
        if (!fused_weight()) {
          cu::gemm(dev, cu::GemmTier::Cublas, sw, dz, dx, gw, cs);
          if (o.bias) cu::column_sums(dz, m, n, gb, scratch.get(), cs);
        }
        detail::device_done({x.buffer(), w.buffer(), in.grad_out.buffer(), act_in ? in.pre_act.buffer() : nullptr,
                             input_grad ? in.input_pre_act.buffer() : nullptr, g.grad_x.buffer(), g.grad_w.buffer(),
                             g.grad_bias.buffer(), g.grad_input_bias.buffer()},
                            st);
        return false;
#else
        (void)p;
        return false;
#endif
      });
  return g;
}
}  // namespace

template <class T>
LinearGrads<T> linear_backward(const Array<T>& x, const Array<T>& w, const Array<T>& grad_out, Activation act,
                               const Array<T>& pre_act, const LinearBackwardOptions& o) {
  return backward<T>({x, w, grad_out, act, pre_act, false, Activation::None, pre_act}, o);
}

template <class T>
LinearGrads<T> linear_backward(const Array<T>& x, const Array<T>& w, const Array<T>& grad_out, Activation act,
                               const Array<T>& pre_act, Activation input_act, const Array<T>& input_pre_act,
                               const LinearBackwardOptions& o) {
  return backward<T>({x, w, grad_out, act, pre_act, true, input_act, input_pre_act}, o);
}

#define VEDA_LINEAR_BACKWARD_INSTANTIATE(T)                                                                         \
  template LinearGrads<T> linear_backward<T>(const Array<T>&, const Array<T>&, const Array<T>&, Activation,        \
                                             const Array<T>&, const LinearBackwardOptions&);                       \
  template LinearGrads<T> linear_backward<T>(const Array<T>&, const Array<T>&, const Array<T>&, Activation,        \
                                             const Array<T>&, Activation, const Array<T>&, const LinearBackwardOptions&);
VEDA_LINEAR_BACKWARD_INSTANTIATE(float)
VEDA_LINEAR_BACKWARD_INSTANTIATE(double)
VEDA_LINEAR_BACKWARD_INSTANTIATE(half)
VEDA_LINEAR_BACKWARD_INSTANTIATE(bfloat16)
#undef VEDA_LINEAR_BACKWARD_INSTANTIATE

}  // namespace veda
