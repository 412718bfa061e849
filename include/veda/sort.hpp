// veda/sort.hpp — sorting that chooses its device and tier per call.
//
//   veda::sort(keys);                         // ascending, in place
//   veda::sort_by_key(keys, values);          // values follow their keys
//   veda::sort(keys, {.stable = true, .descending = true});
//
// Contract:
// - Keys: float, double, (u)int32, (u)int64. Values: any trivially copyable
//   type of 4 or 8 bytes. Keys and values are contiguous ranges (std::vector,
//   std::span, ...) or veda::Arrays, sorted in place; values must have the
//   keys' length (veda::InvalidArgument, before any work).
// - Order: by value, ascending unless descending; -0.0 and +0.0 are equal;
//   NaN keys go last in either direction (whatever their sign bit).
// - stable = true keeps equal keys (and all NaN keys) in their original
//   order, which makes every tier's output identical. Unstable sorts may
//   permute equal keys (only their values, or NaN payloads, can tell).
// - Tiers: serial (std::sort, or std::stable_sort), tbb-auto
//   (tbb::parallel_sort; not stable, so not offered for stable sorts), cuda
//   (cub::DeviceRadixSort, stable), and for host ranges cpu+gpu (the first
//   keys in equal shares on the idle devices, the rest on the CPU, each part
//   sorted where it ran, then merged on the host; stable when the sort is).
//   On the GPU, float keys are sorted as order-preserving integer images
//   with their positions, then gathered, so NaNs and zeros follow the rule
//   above.
// - Arrays stay where the sort ran (on the GPU, the device copy is current).
//
// Thread-safety: any number of threads may sort different data at once.
#pragma once

#include <ranges>
#include <span>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/op_types.hpp"

namespace veda {

struct SortOptions {
  bool stable = false;
  bool descending = false;
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "sort", "stable_sort", "sort_by_key" or "stable_sort_by_key"
  std::string tier;  // force "serial", "tbb-auto", "cuda" or "cpu+gpu": tests, benchmarks, debugging
};

namespace detail {
template <class V>
concept SortValue = std::is_trivially_copyable_v<V> && (sizeof(V) == 4 || sizeof(V) == 8);

// values: null for a keys-only sort; value_bytes: 4 or 8.
template <class K>
void sort_span(std::span<K> keys, void* values, std::size_t value_bytes, const SortOptions& o);
template <class K>
void sort_array(Array<K>& keys, Buffer* values, std::size_t value_bytes, const SortOptions& o);

#define VEDA_SORT_EXTERN(K)                                                                 \
  extern template void sort_span<K>(std::span<K>, void*, std::size_t, const SortOptions&); \
  extern template void sort_array<K>(Array<K>&, Buffer*, std::size_t, const SortOptions&);
VEDA_FOR_EACH_OP_TYPE(VEDA_SORT_EXTERN)
#undef VEDA_SORT_EXTERN
[[noreturn]] void throw_sort_lengths(std::size_t keys, std::size_t values);
}  // namespace detail

template <std::ranges::contiguous_range R>
  requires detail::OpScalar<std::ranges::range_value_t<R>>
void sort(R&& keys, const SortOptions& options = {}) {
  using K = std::ranges::range_value_t<R>;
  detail::sort_span<K>(std::span<K>(std::ranges::data(keys), std::ranges::size(keys)), nullptr, 0, options);
}

template <std::ranges::contiguous_range RK, std::ranges::contiguous_range RV>
  requires detail::OpScalar<std::ranges::range_value_t<RK>> && detail::SortValue<std::ranges::range_value_t<RV>>
void sort_by_key(RK&& keys, RV&& values, const SortOptions& options = {}) {
  using K = std::ranges::range_value_t<RK>;
  using V = std::ranges::range_value_t<RV>;
  if (std::ranges::size(values) != std::ranges::size(keys))
    detail::throw_sort_lengths(std::ranges::size(keys), std::ranges::size(values));
  detail::sort_span<K>(std::span<K>(std::ranges::data(keys), std::ranges::size(keys)),
                       static_cast<void*>(std::ranges::data(values)), sizeof(V), options);
}

template <detail::OpScalar K>
void sort(Array<K>& keys, const SortOptions& options = {}) {
  detail::sort_array<K>(keys, nullptr, 0, options);
}

template <detail::OpScalar K, detail::SortValue V>
void sort_by_key(Array<K>& keys, Array<V>& values, const SortOptions& options = {}) {
  if (values.size() != keys.size()) detail::throw_sort_lengths(keys.size(), values.size());
  detail::sort_array<K>(keys, values.buffer(), sizeof(V), options);
}

}  // namespace veda
