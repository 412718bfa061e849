#include "backends/cpu/sort.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>

#include "veda/detail/op_types.hpp"

namespace veda::detail::cpu {
namespace {

template <class K>
bool is_nan(const K& k) {
  if constexpr (std::is_floating_point_v<K>) return std::isnan(k);
  else return false;
}

// Sorts [first, last) by `key_of` with the chosen algorithm and direction.
template <class It, class KeyOf>
void sort_range(CpuExecutor* parallel, It first, It last, bool stable, bool descending, KeyOf key_of) {
  auto run = [&](auto cmp) {
    auto by_key = [&](const auto& a, const auto& b) { return cmp(key_of(a), key_of(b)); };
    if (stable) std::stable_sort(first, last, by_key);
    else if (parallel) parallel->execute([&] { tbb::parallel_sort(first, last, by_key); });
    else std::sort(first, last, by_key);
  };
  if (descending) run(std::greater<>());
  else run(std::less<>());
}

// NaN keys to the back, keeping order (stable) so that equal-key order and
// NaN order survive; returns the end of the non-NaN part.
template <class It, class KeyOf>
It nan_last(It first, It last, KeyOf key_of) {
  using K = std::remove_cvref_t<decltype(key_of(*first))>;
  if constexpr (!std::is_floating_point_v<K>) {
    return last;
  } else {
    if (std::none_of(first, last, [&](const auto& x) { return is_nan(key_of(x)); })) return last;
    return std::stable_partition(first, last, [&](const auto& x) { return !is_nan(key_of(x)); });
  }
}

template <class K, class P>
struct KeyValue {
  K key;
  P value;  // the value's bytes
};

// Calls f(lo, hi) over [0, n), on the workers when there are any.
template <class F>
void for_blocks(CpuExecutor* parallel, std::size_t n, F&& f) {
  if (!parallel) return f(std::size_t{0}, n);
  parallel->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14),
                      [&](const tbb::blocked_range<std::size_t>& r) { f(r.begin(), r.end()); });
  });
}

template <class K, class P>
void sort_pairs(CpuExecutor* parallel, K* keys, void* values, std::size_t n, bool stable, bool descending) {
  // Keys and values travel together as pairs: one sort, local memory access.
  // The pairs are not initialised: packing writes every one.
  auto kv = std::make_unique_for_overwrite<KeyValue<K, P>[]>(n);
  auto* v = static_cast<unsigned char*>(values);
  for_blocks(parallel, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      kv[i].key = keys[i];
      std::memcpy(&kv[i].value, v + i * sizeof(P), sizeof(P));
    }
  });
  auto key_of = [](const KeyValue<K, P>& x) -> const K& { return x.key; };
  KeyValue<K, P>* first = kv.get();
  KeyValue<K, P>* end = nan_last(first, first + n, key_of);
  sort_range(parallel, first, end, stable, descending, key_of);
  for_blocks(parallel, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      keys[i] = kv[i].key;
      std::memcpy(v + i * sizeof(P), &kv[i].value, sizeof(P));
    }
  });
}

}  // namespace

template <class K>
void sort_keys(CpuExecutor* parallel, K* keys, void* values, std::size_t value_bytes, std::size_t n, bool stable,
               bool descending) {
  if (n < 2) return;
  if (values) {
    if (value_bytes == 4) sort_pairs<K, std::uint32_t>(parallel, keys, values, n, stable, descending);
    else sort_pairs<K, std::uint64_t>(parallel, keys, values, n, stable, descending);
    return;
  }
  auto key_of = [](const K& k) -> const K& { return k; };
  K* end = nan_last(keys, keys + n, key_of);
  sort_range(parallel, keys, end, stable, descending, key_of);
}

#define VEDA_SORT_INSTANTIATE(K) \
  template void sort_keys<K>(CpuExecutor*, K*, void*, std::size_t, std::size_t, bool, bool);
VEDA_FOR_EACH_OP_TYPE(VEDA_SORT_INSTANTIATE)
#undef VEDA_SORT_INSTANTIATE

}  // namespace veda::detail::cpu
