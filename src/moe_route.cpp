// moe_route: validation, one decision, the chosen tier.
#include "veda/moe_route.hpp"

#include <string>

#include "backends/cpu/moe_route.hpp"
#include "runtime/runtime_state.hpp"
#include "src/gemm_tiers.hpp"  // dims
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/moe_route.hpp"
#endif

namespace veda {
namespace {
using detail::Tier;
using detail::tier_bit;

template <class T>
struct MoeRouteTag {};
template <class T, bool Combine>
struct MoeMoveTag {};

constexpr std::uint32_t kTiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);

// The rows of an Array whose last axis is its features.
std::size_t leading(const Shape& s) {
  std::size_t n = 1;
  for (int a = 0; a + 1 < s.ndim(); ++a) n *= s[a];
  return n;
}

// moe_dispatch and moe_combine: `in` has `rows_in` rows (a token or an
// assignment each) of the routing; the result, rows_out rows of in's
// features, is gathered on the chosen tier.
template <class T, bool Combine, class Cpu, class Gpu>
Array<T> move_rows(const char* op, const Array<T>& in, const MoeRouting<T>& r, const MoeRouteOptions& o, Cpu&& cpu,
                   Gpu&& gpu) {
  const std::size_t n = r.tokens * r.top_k;
  if (r.order.size() != n || r.gates.size() != n || r.counts.size() != r.experts)
    throw InvalidArgument(std::string("veda::") + op + ": the routing is not one moe_route made (" +
                          std::to_string(r.tokens) + " tokens x top_k " + std::to_string(r.top_k) + ", but order has " +
                          std::to_string(r.order.size()) + " entries and gates " + std::to_string(r.gates.size()) + ")");
  const std::size_t rows_in = Combine ? n : r.tokens, rows_out = Combine ? r.tokens : n;
  if (leading(in.shape()) != rows_in)
    throw InvalidArgument(std::string("veda::") + op + ": " + (Combine ? "y" : "x") + " (" + detail::dims(in.shape()) +
                          ") must have " + std::to_string(rows_in) + (Combine ? " rows, one per assignment" : " tokens") +
                          " before its feature axis");
  const std::size_t f = in.extent(in.ndim() - 1);
  detail::CallDesc d = detail::op_desc(rows_out * f, sizeof(T), o);  // checks placement and tier
  auto out = detail::host_array<T>(Shape{rows_out, f});
  if (out.empty()) return out;
  if (Combine) detail::describe_operands(d, in, r.order, r.gates);
  else detail::describe_operands(d, in, r.order);
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::run_op(
      rt, detail::op_site<MoeMoveTag<T, Combine>>(o.name, op, detail::OpClass::Transpose, kTiers), d,
      [&](const detail::Plan& p) { cpu(p.tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr, f, out); },
      [&](const detail::Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        gpu(dev, st, f, out);
        detail::device_done({in.buffer(), r.order.buffer(), r.gates.buffer(), out.buffer()}, st);
#else
        (void)gpu;
#endif
        return false;
      });
  return out;
}

// A step of a partial sort, an exponential and a division a logit: about
// 40 flops' time (bench_moe: ~100 ns a token of 8 experts on an EPYC core;
// history corrects it on each machine).
constexpr CostHint kHint{40, 0};
}  // namespace

template <detail::RowElem T>
MoeRouting<T> moe_route(const Array<T>& logits, std::size_t top_k, const MoeRouteOptions& o) {
  const int nd = logits.ndim();
  detail::MoeShape s;
  s.experts = logits.extent(nd - 1);
  s.tokens = s.experts ? logits.size() / s.experts : 0;
  s.top_k = top_k;
  if (top_k < 1 || top_k > s.experts)
    throw InvalidArgument("veda::moe_route: top_k must be in 1.." + std::to_string(s.experts) + " (the experts of " +
                          detail::dims(logits.shape()) + " logits); it is " + std::to_string(top_k));
  detail::CallDesc d = detail::op_desc(logits.size(), sizeof(T), o);  // checks placement and tier
  std::size_t ext[Shape::kMaxDims];
  for (int a = 0; a < nd; ++a) ext[a] = logits.extent(a);
  ext[nd - 1] = top_k;
  const Shape picked = detail::make_shape(ext, nd);
  MoeRouting<T> r;
  r.tokens = s.tokens;
  r.experts = s.experts;
  r.top_k = top_k;
  r.ids = detail::host_array<std::int64_t>(picked);
  r.gates = detail::host_array<T>(picked);
  r.counts = detail::host_array<std::int64_t>(Shape{s.experts});
  r.offsets = detail::host_array<std::int64_t>(Shape{s.experts + 1});
  r.order = detail::host_array<std::int64_t>(Shape{s.tokens * top_k});
  r.importance = detail::host_array<T>(Shape{s.experts});
  d.dims[0] = s.tokens;
  d.dims[1] = s.experts;
  d.dims[2] = 1;
  d.ndims = 3;
  detail::describe_operands(d, logits);
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::run_op(
      rt,
      detail::op_site<MoeRouteTag<T>>(o.name, "moe_route", detail::OpClass::Reduce, kTiers, kHint),
      d,
      [&](const detail::Plan& p) {
        detail::cpu::moe_route(p.tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr, s,
                               logits.host().data(), r.ids.host().data(), r.gates.host().data(),
                               r.counts.host().data(), r.offsets.host().data(), r.order.host().data(),
                               r.importance.host().data());
      },
      [&](const detail::Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        detail::cuda::moe_route(dev, s, detail::device_in(dev, logits, st), detail::device_out(dev, r.ids, st),
                                detail::device_out(dev, r.gates, st), detail::device_out(dev, r.counts, st),
                                detail::device_out(dev, r.offsets, st), detail::device_out(dev, r.order, st),
                                detail::device_out(dev, r.importance, st), static_cast<cudaStream_t>(st));
        detail::device_done({logits.buffer(), r.ids.buffer(), r.gates.buffer(), r.counts.buffer(),
                             r.offsets.buffer(), r.order.buffer(), r.importance.buffer()},
                            st);
#endif
        return false;
      });
  return r;
}

template <detail::RowElem T>
Array<T> moe_dispatch(const Array<T>& x, const MoeRouting<T>& r, const MoeRouteOptions& o) {
  const detail::MoeShape s{r.tokens, r.experts, r.top_k};
  return move_rows<T, false>(
      "moe_dispatch", x, r, o,
      [&](detail::CpuExecutor* par, std::size_t f, Array<T>& out) {
        detail::cpu::moe_dispatch(par, s, f, r.order.host().data(), x.host().data(), out.host().data());
      },
      [&](auto& dev, void* st, std::size_t f, Array<T>& out) {
#if VEDA_HAS_CUDA
        detail::cuda::moe_dispatch(s, f, detail::device_in(dev, r.order, st), detail::device_in(dev, x, st),
                                   detail::device_out(dev, out, st), static_cast<cudaStream_t>(st));
#endif
      });
}

template <detail::RowElem T>
Array<T> moe_combine(const Array<T>& y, const MoeRouting<T>& r, const MoeRouteOptions& o) {
  const detail::MoeShape s{r.tokens, r.experts, r.top_k};
  return move_rows<T, true>(
      "moe_combine", y, r, o,
      [&](detail::CpuExecutor* par, std::size_t f, Array<T>& out) {
        detail::cpu::moe_combine(par, s, f, r.order.host().data(), r.gates.host().data(), y.host().data(),
                                 out.host().data());
      },
      [&](auto& dev, void* st, std::size_t f, Array<T>& out) {
#if VEDA_HAS_CUDA
        detail::cuda::moe_combine(dev, s, f, detail::device_in(dev, r.order, st), detail::device_in(dev, r.gates, st),
                                  detail::device_in(dev, y, st), detail::device_out(dev, out, st),
                                  static_cast<cudaStream_t>(st));
#endif
      });
}

#define VEDA_MOE_INSTANTIATE(T)                                                                          \
  template MoeRouting<T> moe_route<T>(const Array<T>&, std::size_t, const MoeRouteOptions&);           \
  template Array<T> moe_dispatch<T>(const Array<T>&, const MoeRouting<T>&, const MoeRouteOptions&); \
  template Array<T> moe_combine<T>(const Array<T>&, const MoeRouting<T>&, const MoeRouteOptions&);
VEDA_MOE_INSTANTIATE(float)
VEDA_MOE_INSTANTIATE(double)
#undef VEDA_MOE_INSTANTIATE

}  // namespace veda
