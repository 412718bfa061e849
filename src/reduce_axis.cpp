// Reductions along an axis: validation, one decision, the chosen tier.
#include "veda/reduce_axis.hpp"

#include "backends/cpu/reduce_axis.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/reduce_axis.hpp"
#endif

namespace veda::detail {
namespace {

constexpr const char* kNames[] = {"sum", "mean", "var", "stddev", "min", "max", "argmin", "argmax"};
const char* name(AxisOp op) { return kNames[static_cast<int>(op)]; }

template <AxisOp Op>
struct AxisTag {};

// A site per op; element types and whether the axis is contiguous are the
// site's type slots (each learns its own times).
Site& axis_site(AxisOp op, const AxisOptions& o) {
  constexpr std::uint32_t tiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);
  auto site = [&]<AxisOp Op>(const char* default_name) -> Site& {
    return op_site<AxisTag<Op>>(o.name, default_name, OpClass::Reduce, tiers);
  };
  switch (op) {
    case AxisOp::Sum: return site.template operator()<AxisOp::Sum>("sum(axis)");
    case AxisOp::Mean: return site.template operator()<AxisOp::Mean>("mean(axis)");
    case AxisOp::Var: return site.template operator()<AxisOp::Var>("var(axis)");
    case AxisOp::Stddev: return site.template operator()<AxisOp::Stddev>("stddev(axis)");
    case AxisOp::Min: return site.template operator()<AxisOp::Min>("min(axis)");
    case AxisOp::Max: return site.template operator()<AxisOp::Max>("max(axis)");
    case AxisOp::ArgMin: return site.template operator()<AxisOp::ArgMin>("argmin(axis)");
    default: return site.template operator()<AxisOp::ArgMax>("argmax(axis)");
  }
}

int checked_axis(AxisOp op, const Shape& in, int axis) {
  return detail::checked_axis(std::string("veda::") + name(op), in, axis);
}

}  // namespace

Shape axis_result_shape(AxisOp op, const Shape& in, int axis, const AxisOptions& o) {
  const int a = checked_axis(op, in, axis);
  if (o.ddof < 0)
    throw InvalidArgument(std::string("veda::") + name(op) + ": ddof must not be negative (got " +
                          std::to_string(o.ddof) + ")");
  std::size_t e[Shape::kMaxDims];
  int nd = 0;
  for (int d = 0; d < in.ndim(); ++d)
    if (d != a) e[nd++] = in[d];
    else if (o.keepdims) e[nd++] = 1;
  if (nd == 0) e[nd++] = 1;  // a 1-D input: one element
  const Shape out = make_shape(e, nd);
  const bool needs_one = op == AxisOp::Min || op == AxisOp::Max || op == AxisOp::ArgMin || op == AxisOp::ArgMax;
  if (needs_one && in[a] == 0 && out.size() > 0)
    throw InvalidArgument(std::string("veda::") + name(op) + " along axis " + std::to_string(axis) + " of shape " +
                          in.str() + ": the axis is empty, and an empty " + name(op) + " has no value");
  return out;
}

void reduce_axis_buffers(AxisOp op, ScalarType type, Buffer* in, Buffer* out, const Shape& shape, int axis,
                         const AxisOptions& o) {
  const AxisSplit sp = split_at(shape, checked_axis(op, shape, axis));
  const std::size_t outer = sp.outer, len = sp.len, inner = sp.inner;  // clang 14 lambdas cannot capture bindings
  if (outer * inner == 0) return;  // no results to compute
  const std::size_t elem = elem_bytes(type);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = op_desc(outer * len * inner, elem, o);
  describe_axis(d, type, sp);
  const bool two_passes = op == AxisOp::Var || op == AxisOp::Stddev;
  d.bytes_per_elem = bytes16(two_passes ? 2 * elem : elem);
  describe_buffers(d, {in});
  run_op(
      rt, axis_site(op, o), d,
      [&](const Plan& p) {
        CpuExecutor* par = p.tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr;
        const void* x = in && len ? in->host_read() : nullptr;
        cpu::reduce_axis(par, op, type, x, host_out(out, false), outer, len, inner, o.ddof);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        gpu_bridge::DeviceTemp temp(rt, cuda::reduce_axis_temp_bytes(outer, len, inner), s);
        cuda::reduce_axis_device(op, type, device_in(dev, in, s), device_out(dev, out, s), temp.get(), outer, len,
                                 inner, o.ddof, static_cast<cudaStream_t>(s));
        device_done({in, out}, s);
        return false;
#else
        return false;
#endif
      });
}

}  // namespace veda::detail
