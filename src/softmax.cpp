// softmax and log_softmax: validation, one decision, the chosen tier.
#include "veda/softmax.hpp"

#include "backends/cpu/softmax.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/softmax.hpp"
#endif

namespace veda::detail {
namespace {

template <bool Log>
struct SoftmaxTag {};

// Three passes over each slice, the exponential computed once or twice: about
// two dozen flops an element (history corrects it on each machine).
constexpr CostHint kHint{24, 0};

Site& softmax_site(bool log, const SoftmaxOptions& o) {
  constexpr std::uint32_t tiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);
  return log ? op_site<SoftmaxTag<true>>(o.name, "log_softmax", OpClass::Reduce, tiers, kHint)
             : op_site<SoftmaxTag<false>>(o.name, "softmax", OpClass::Reduce, tiers, kHint);
}

}  // namespace

void softmax_buffers(ScalarType type, Buffer* in, Buffer* out, const Shape& shape, const Shape& out_shape, int axis,
                     bool log, const SoftmaxOptions& o) {
  check_out(log ? "veda::log_softmax_into" : "veda::softmax_into", out_shape, shape, out, in);
  const int a = checked_axis(log ? "veda::log_softmax" : "veda::softmax", shape, axis);
  const std::size_t elem = elem_bytes(type);
  CallDesc d = op_desc(shape.size(), elem, o);  // checks placement and tier
  if (shape.size() == 0) return;
  const AxisSplit sp = split_at(shape, a);
  const std::size_t outer = sp.outer, len = sp.len, inner = sp.inner;  // clang 14 lambdas cannot capture bindings
  CallScope scope;
  Runtime& rt = scope.runtime();
  describe_axis(d, type, sp);
  d.bytes_per_elem = bytes16(2 * elem);
  describe_buffers(d, {in});
  run_op(
      rt, softmax_site(log, o), d,
      [&](const Plan& p) {
        CpuExecutor* par = p.tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr;
        cpu::softmax(par, type, in->host_read(), host_out(out, false), outer, len, inner, log);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        cuda::softmax_device(type, device_in(dev, in, s), device_out(dev, out, s), outer, len, inner, log,
                             static_cast<cudaStream_t>(s));
        device_done({in, out}, s);
#endif
        return false;
      });
}

}  // namespace veda::detail
