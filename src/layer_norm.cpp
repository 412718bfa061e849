// layer_norm: validation, one decision, the chosen tier.
#include "veda/layer_norm.hpp"

#include <cmath>
#include <string>

#include "backends/cpu/layer_norm.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/layer_norm.hpp"
#endif

namespace veda::detail {
namespace {

struct LayerNormTag {};

// Two reductions and a pass per row, all vectorised: a few flops an element.
constexpr CostHint kHint{6, 0};

// gamma or beta: empty, or of shape [d].
void check_affine(const char* what, const Shape& s, const Shape& x) {
  if (s.size() == 0 || (s.ndim() == 1 && s[0] == x[x.ndim() - 1])) return;
  throw InvalidArgument(std::string("veda::layer_norm: ") + what + " has shape " + s.str() + "; it must be [" +
                        std::to_string(x[x.ndim() - 1]) + "] (the last axis of x's shape " + x.str() +
                        ") or empty (no " + (what[0] == 'g' ? "scale" : "shift") + ")");
}

}  // namespace

void layer_norm_buffers(ScalarType type, Buffer* x, Buffer* gamma, Buffer* beta, Buffer* out, const Shape& shape,
                        const Shape& gamma_shape, const Shape& beta_shape, const Shape& out_shape, double eps,
                        const LayerNormOptions& o) {
  check_out("veda::layer_norm_into", out_shape, shape, out, x);
  if (!std::isfinite(eps) || eps < 0)
    throw InvalidArgument("veda::layer_norm: eps must be finite and >= 0 (got " + std::to_string(eps) + ")");
  check_affine("gamma", gamma_shape, shape);
  check_affine("beta", beta_shape, shape);
  const std::size_t elem = elem_bytes(type);
  CallDesc d = op_desc(shape.size(), elem, o);  // checks placement and tier
  if (shape.size() == 0) return;
  const std::size_t cols = shape[shape.ndim() - 1], rows = shape.size() / cols;
  CallScope scope;
  Runtime& rt = scope.runtime();
  describe_axis(d, type, {rows, cols, 1});
  d.bytes_per_elem = bytes16(2 * elem);
  describe_buffers(d, {x, gamma, beta});
  run_op(
      rt, op_site<LayerNormTag>(o.name, "layer_norm", OpClass::Reduce,
                                tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda), kHint),
      d,
      [&](const Plan& p) {
        CpuExecutor* par = p.tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr;
        cpu::layer_norm(par, type, x->host_read(), gamma ? gamma->host_read() : nullptr,
                        beta ? beta->host_read() : nullptr, host_out(out, false), rows, cols, eps);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        cuda::layer_norm_device(type, device_in(dev, x, s), device_in(dev, gamma, s), device_in(dev, beta, s),
                                device_out(dev, out, s), rows, cols, eps, static_cast<cudaStream_t>(s));
        device_done({x, gamma, beta, out}, s);
#endif
        return false;
      });
}

}  // namespace veda::detail
