// grouped_matmul: validation, one decision, the chosen tier.
#include "veda/grouped_matmul.hpp"

#include <tbb/parallel_for.h>

#include <string>
#include <vector>

#include "runtime/runtime_state.hpp"
#include "src/gemm_tiers.hpp"
#include "src/operands.hpp"

namespace veda {
namespace {
using detail::GemmShape;
using detail::Tier;
using detail::tier_bit;

template <class T>
struct GroupedMatmulTag {};

constexpr std::uint32_t kTiers = tier_bit(Tier::CpuReference) | tier_bit(Tier::CpuBlas) | tier_bit(Tier::CpuTiled) |
                                 tier_bit(Tier::GpuTiled) | tier_bit(Tier::GpuCublas);

// Each group's rows, from counts: each >= 0, summing to `rows`.
std::vector<std::size_t> group_rows(const Array<std::int64_t>& counts, std::size_t rows) {
  const auto c = counts.host();
  std::vector<std::size_t> out(c.size());
  std::size_t sum = 0;
  for (std::size_t g = 0; g < c.size(); ++g) {
    if (c[g] < 0)
      throw InvalidArgument("veda::grouped_matmul: counts[" + std::to_string(g) + "] is negative (" +
                            std::to_string(c[g]) + ")");
    out[g] = static_cast<std::size_t>(c[g]);
    if (out[g] > rows - sum)
      throw InvalidArgument("veda::grouped_matmul: counts sum past the inputs' " + std::to_string(rows) +
                            " rows (at group " + std::to_string(g) + ")");
    sum += out[g];
  }
  if (sum != rows)
    throw InvalidArgument("veda::grouped_matmul: counts sum to " + std::to_string(sum) + ", the inputs have " +
                          std::to_string(rows) + " rows");
  return out;
}

// The CPU tiers: cpu-tiled spreads the groups over oneTBB (each product's
// tiles nested inside); the others take the groups in turn.
template <class T>
void grouped_cpu(Runtime& rt, Tier tier, const std::vector<std::size_t>& rows, std::size_t k, std::size_t n,
                 const T* a, const T* w, T* c) {
  std::vector<std::size_t> start(rows.size() + 1, 0);
  for (std::size_t g = 0; g < rows.size(); ++g) start[g + 1] = start[g] + rows[g];
  auto group = [&](std::size_t g) {
    if (rows[g] == 0) return;
    GemmShape s;
    s.m = rows[g];
    s.k = k;
    s.n = n;
    detail::gemm_cpu(rt, tier, s, a + start[g] * k, w + g * k * n, c + start[g] * n);
  };
  if (tier == Tier::CpuTiled && rows.size() > 1) {
    detail::in_cpu_arena(rt, [&] { tbb::parallel_for(std::size_t{0}, rows.size(), group); });
    return;
  }
  for (std::size_t g = 0; g < rows.size(); ++g) group(g);
}
}  // namespace

template <detail::GroupedElem T>
Array<T> grouped_matmul(const Array<T>& x, const Array<T>& w, const Array<std::int64_t>& counts,
                        const GroupedMatmulOptions& o) {
  auto shapes = [&] {
    return " (inputs " + detail::dims(x.shape()) + ", weights " + detail::dims(w.shape()) + ", counts " +
           detail::dims(counts.shape()) + ")";
  };
  if (x.ndim() != 2 || w.ndim() != 3 || counts.ndim() != 1)
    throw InvalidArgument("veda::grouped_matmul: inputs must be 2-D [rows, d_in], weights 3-D [groups, d_in, d_out] "
                          "and counts 1-D [groups]" + shapes());
  if (w.extent(0) != counts.size() || w.extent(1) != x.extent(1))
    throw InvalidArgument("veda::grouped_matmul: weights must have one d_in x d_out matrix per count, d_in the "
                          "inputs' columns" + shapes());
  GemmShape s;
  s.m = x.extent(0);
  s.k = x.extent(1);
  s.n = w.extent(2);
  const std::vector<std::size_t> rows = group_rows(counts, s.m);
  detail::CallScope scope;
  Runtime& rt = scope.runtime();
  detail::CallDesc d = detail::gemm_desc<T, GroupedMatmulOptions>(s, o);  // checks placement and tier
  auto out = detail::host_array<T>(Shape{s.m, s.n});
  if (out.empty()) return out;
  detail::describe_operands(d, x, w);
  detail::run_op(
      rt, detail::op_site<GroupedMatmulTag<T>>(o.name, "grouped_matmul", detail::OpClass::Gemm, kTiers), d,
      [&](const detail::Plan& p) {
        grouped_cpu(rt, p.tier, rows, s.k, s.n, x.host().data(), w.host().data(), out.host().data());
      },
      [&](const detail::Plan& p) {
#if VEDA_HAS_CUDA
        auto& dev = detail::cuda_device(rt);
        void* st = dev.stream();
        detail::cuda::grouped_gemm(dev, detail::gpu_tier(p.tier), rows, s.k, s.n, detail::device_in(dev, x, st),
                                   detail::device_in(dev, w, st), detail::device_out(dev, out, st),
                                   static_cast<cudaStream_t>(st));
        detail::device_done({x.buffer(), w.buffer(), out.buffer()}, st);
#else
        (void)p;
#endif
        return false;
      });
  return out;
}

template Array<float> grouped_matmul<float>(const Array<float>&, const Array<float>&, const Array<std::int64_t>&,
                                            const GroupedMatmulOptions&);
template Array<double> grouped_matmul<double>(const Array<double>&, const Array<double>&, const Array<std::int64_t>&,
                                              const GroupedMatmulOptions&);
template Array<half> grouped_matmul<half>(const Array<half>&, const Array<half>&, const Array<std::int64_t>&,
                                          const GroupedMatmulOptions&);
template Array<bfloat16> grouped_matmul<bfloat16>(const Array<bfloat16>&, const Array<bfloat16>&,
                                                  const Array<std::int64_t>&, const GroupedMatmulOptions&);

}  // namespace veda
