// sort / sort_by_key: validation, one decision, the chosen tier.
#include "veda/sort.hpp"

#include "backends/cpu/sort.hpp"
#include "runtime/runtime_state.hpp"
#include "src/op_runner.hpp"
#include "src/operands.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/detail/reduce_kind.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/sort.hpp"
#include "src/sort_coexec.hpp"
#endif

namespace veda::detail {
namespace {

template <class K, bool Stable, bool Pairs, class Operands>
struct SortTag {};

// Stable sorts have no tbb-auto tier: tbb::parallel_sort is not stable.
// cpu+gpu splits host ranges only (an Array stays whole where it lives).
template <class K, class Operands>
Site& sort_site(const SortOptions& o, bool pairs) {
  constexpr std::uint32_t stable_tiers = tier_bit(Tier::Serial) | tier_bit(Tier::Cuda) | tier_bit(Tier::CoExec);
  constexpr std::uint32_t all = stable_tiers | tier_bit(Tier::TbbAuto);
  if (o.stable && o.tier == "tbb-auto")
    throw InvalidArgument("veda::sort: tier 'tbb-auto' (tbb::parallel_sort) is not stable; stable sorts run "
                          "'serial', 'cuda' or 'cpu+gpu'");
  if (pairs)
    return o.stable ? op_site<SortTag<K, true, true, Operands>>(o.name, "stable_sort_by_key", OpClass::Sort, stable_tiers)
                    : op_site<SortTag<K, false, true, Operands>>(o.name, "sort_by_key", OpClass::Sort, all);
  return o.stable ? op_site<SortTag<K, true, false, Operands>>(o.name, "stable_sort", OpClass::Sort, stable_tiers)
                  : op_site<SortTag<K, false, false, Operands>>(o.name, "sort", OpClass::Sort, all);
}

template <class K>
CallDesc sort_desc(std::size_t n, std::size_t value_bytes, const SortOptions& o) {
  CallDesc d = op_desc(n, sizeof(K), o);
  d.value_bytes = static_cast<std::uint8_t>(value_bytes);
  return d;
}

template <class K>
void sort_cpu(Runtime& rt, Tier tier, K* keys, void* values, std::size_t value_bytes, std::size_t n,
              const SortOptions& o) {
  cpu::sort_keys(tier == Tier::TbbAuto ? rt.state().cpu_executor.get() : nullptr, keys, values, value_bytes, n,
                 o.stable, o.descending);
}

#if VEDA_HAS_CUDA
// Host keys (and values) sorted on the calling thread's device: copied
// there, sorted, copied back; done when it returns.
template <class K>
void sort_host_on_device(Runtime& rt, K* keys, void* values, std::size_t value_bytes, std::size_t n,
                         bool descending) {
  auto& dev = cuda_device(rt);
  void* s = dev.stream();
  const std::size_t kbytes = n * sizeof(K), vbytes = values ? n * value_bytes : 0;
  gpu_bridge::DeviceTemp dk(rt, kbytes + 1, s), dv(rt, vbytes + 1, s);
  dev.copy_to_device(dk.get(), keys, kbytes, s, false);
  if (values) dev.copy_to_device(dv.get(), values, vbytes, s, false);
  cuda::sort_device(dev, scalar_type_of<K>(), dk.get(), values ? dv.get() : nullptr, value_bytes, n, descending,
                    static_cast<cudaStream_t>(s));
  dev.copy_to_host(keys, dk.get(), kbytes, s, false);
  if (values) dev.copy_to_host(values, dv.get(), vbytes, s, false);
}
#endif

}  // namespace

void throw_sort_lengths(std::size_t keys, std::size_t values) {
  throw InvalidArgument("veda::sort_by_key: " + std::to_string(keys) + " keys but " + std::to_string(values) +
                        " values");
}

template <class K>
void sort_span(std::span<K> keys, void* values, std::size_t value_bytes, const SortOptions& o) {
  const std::size_t n = keys.size();
  const char* op = values ? "veda::sort_by_key" : "veda::sort";
  check_placement(o.placement, op);
  check_byte_count(op, "keys", n, sizeof(K));
  if (values) check_byte_count(op, "values", n, value_bytes);
  const auto* kb = reinterpret_cast<const char*>(keys.data());
  const auto* vb = static_cast<const char*>(values);
  if (values && n && vb < kb + keys.size_bytes() && kb < vb + n * value_bytes)
    throw InvalidArgument("veda::sort_by_key: values overlap keys");
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = sort_desc<K>(n, values ? value_bytes : 0, o);
  describe_host_operands(d, n * (sizeof(K) + d.value_bytes), n * (sizeof(K) + d.value_bytes));
  run_op(
      rt, sort_site<K, std::span<K>>(o, values != nullptr), d,
      [&](const Plan& p) { sort_cpu(rt, p.tier, keys.data(), values, value_bytes, n, o); },
      [&](const Plan& p) {
#if VEDA_HAS_CUDA
        if (p.tier == Tier::CoExec)
          sort_coexec(rt, p, keys.data(), values, value_bytes, n, o.stable, o.descending,
                      [&](K* k, void* v, std::size_t len) {
                        sort_host_on_device(rt, k, v, value_bytes, len, o.descending);
                      });
        else
          sort_host_on_device(rt, keys.data(), values, value_bytes, n, o.descending);
        return true;
#else
        (void)p;
        return false;
#endif
      });
}

template <class K>
void sort_array(Array<K>& keys, Buffer* values, std::size_t value_bytes, const SortOptions& o) {
  const std::size_t n = keys.size();
  check_placement(o.placement, values ? "veda::sort_by_key" : "veda::sort");
  if (values && values == keys.buffer())
    throw InvalidArgument("veda::sort_by_key: keys and values are the same Array");
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = sort_desc<K>(n, values ? value_bytes : 0, o);
  d.exclude_tiers |= tier_bit(Tier::CoExec);  // an Array stays whole where it lives
  describe_buffers(d, {keys.buffer(), values});
  run_op(
      rt, sort_site<K, Array<K>>(o, values != nullptr), d,
      [&](const Plan& p) {
        K* k = keys.host().data();
        void* v = values && n ? values->host_write() : nullptr;
        sort_cpu(rt, p.tier, k, v, value_bytes, n, o);
      },
      [&](const Plan&) {
#if VEDA_HAS_CUDA
        auto& dev = cuda_device(rt);
        void* s = dev.stream();
        void* dk = device_out(dev, keys.buffer(), s, true);
        void* dv = values ? device_out(dev, values, s, true) : nullptr;
        cuda::sort_device(dev, scalar_type_of<K>(), dk, dv, value_bytes, n, o.descending,
                          static_cast<cudaStream_t>(s));
        device_done({keys.buffer(), values}, s);
        return false;
#else
        return false;
#endif
      });
}

#define VEDA_SORT_INSTANTIATE(K)                                                       \
  template void sort_span<K>(std::span<K>, void*, std::size_t, const SortOptions&);    \
  template void sort_array<K>(Array<K>&, Buffer*, std::size_t, const SortOptions&);
VEDA_FOR_EACH_OP_TYPE(VEDA_SORT_INSTANTIATE)
#undef VEDA_SORT_INSTANTIATE

}  // namespace veda::detail
