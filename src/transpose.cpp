// transpose: validation, one decision, the chosen tier.
#include "veda/transpose.hpp"

#include "backends/cpu/transpose.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/map_args.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/transpose.hpp"
#endif

namespace veda::detail {
namespace {

struct HostRanges {};
struct Arrays {};
template <class Operands, std::size_t Elem>
struct TransposeTag {};

// A site per (operand kind, element size): each learns its own times.
template <class Operands>
Site& transpose_site(const TransposeOptions& o, std::size_t elem) {
  constexpr std::uint32_t tiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);
  auto site = [&]<std::size_t E>() -> Site& {
    return op_site<TransposeTag<Operands, E>>(o.name, "transpose", OpClass::Transpose, tiers);
  };
  switch (elem) {
    case 1: return site.template operator()<1>();
    case 2: return site.template operator()<2>();
    case 4: return site.template operator()<4>();
    default: return site.template operator()<8>();
  }
}

CallDesc transpose_desc(std::size_t rows, std::size_t cols, std::size_t elem, const TransposeOptions& o) {
  CallDesc d = op_desc(rows * cols, elem, o);
  d.dims[0] = rows;
  d.dims[1] = cols;
  d.ndims = 2;
  return d;
}

void transpose_cpu(Runtime& rt, Tier tier, const void* in, void* out, std::size_t rows, std::size_t cols,
                   std::size_t elem, const TransposeOptions& o) {
  cpu::transpose(tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr, in, out, rows, cols, elem, o.alpha,
                 o.beta);
}

void check_scaling(bool floating, const TransposeOptions& o) {
  if ((o.alpha != 1 || o.beta != 0) && !floating)
    throw InvalidArgument("veda::transpose: alpha and beta need float or double elements");
}

}  // namespace

void transpose_bytes(const void* in, void* out, std::size_t in_elems, std::size_t out_elems, std::size_t rows,
                     std::size_t cols, std::size_t elem, bool floating, const TransposeOptions& o) {
  check_placement(o.placement, "veda::transpose");
  check_byte_count("veda::transpose", "in", in_elems, elem);
  check_byte_count("veda::transpose", "out", out_elems, elem);
  check_scaling(floating, o);
  const std::size_t n = rows * cols;
  if ((cols != 0 && n / cols != rows) || in_elems != n || out_elems != n)
    throw InvalidArgument("veda::transpose: a " + std::to_string(rows) + "x" + std::to_string(cols) +
                          " matrix needs in and out of " + std::to_string(n) + " elements (in has " +
                          std::to_string(in_elems) + ", out " + std::to_string(out_elems) + ")");
  const std::size_t bytes = n * elem;
  const auto* ib = static_cast<const char*>(in);
  const auto* ob = static_cast<const char*>(out);
  if (bytes && ib < ob + bytes && ob < ib + bytes)
    throw InvalidArgument("veda::transpose: out overlaps in (a transpose cannot run in place)");
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = transpose_desc(rows, cols, elem, o);
  describe_host_operands(d, o.beta != 0 ? 2 * bytes : bytes, bytes);  // beta: out is read too
  run_op(
      rt, transpose_site<HostRanges>(o, elem), d,
      [&](const Plan& p) { transpose_cpu(rt, p.tier, in, out, rows, cols, elem, o); },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        gpu_bridge::DeviceTemp din(rt, bytes + 1, s), dout(rt, bytes + 1, s);
        dev.copy_to_device(din.get(), in, bytes, s, false);
        if (o.beta != 0) dev.copy_to_device(dout.get(), out, bytes, s, false);
        cuda::transpose_device(din.get(), dout.get(), rows, cols, elem, static_cast<cudaStream_t>(s), o.alpha, o.beta);
        dev.copy_to_host(out, dout.get(), bytes, s, false);
        return true;
#else
        return false;
#endif
      });
}

void transpose_buffers(Buffer* in, Buffer* out, std::size_t rows, std::size_t cols, std::size_t elem, bool floating,
                       const TransposeOptions& o) {
  check_placement(o.placement, "veda::transpose");
  check_scaling(floating, o);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = transpose_desc(rows, cols, elem, o);
  if (o.beta != 0) describe_buffers(d, {in, out});  // out is read too
  else describe_buffers(d, {in});
  run_op(
      rt, transpose_site<Arrays>(o, elem), d,
      [&](const Plan& p) {
        if (rows * cols)
          transpose_cpu(rt, p.tier, in->host_read(), host_out(out, o.beta != 0), rows, cols, elem, o);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        cuda::transpose_device(device_in(dev, in, s), device_out(dev, out, s, o.beta != 0), rows, cols, elem,
                               static_cast<cudaStream_t>(s), o.alpha, o.beta);
        device_done({in, out}, s);
        return false;
#else
        return false;
#endif
      });
}

}  // namespace veda::detail
