// Contract: cpu::merge_runs (backends/cpu/merge_runs.hpp), the last pass of
// a sort split into parts. Stably sorted runs merged stably give exactly
// std::stable_sort of the whole (bit for bit: -0.0 and +0.0, and NaN
// payloads, keep their order), values moving with their keys; NaN keys
// last in either direction; empty runs, one run, an odd number of runs
// (a round copies the last through), and sizes that cut merges into many
// pieces, on one thread and on the workers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backends/cpu/merge_runs.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/runtime.hpp"

using veda::detail::CpuExecutor;
using veda::detail::cpu::merge_runs;

namespace {

template <class K>
bool before(const K& a, const K& b, bool descending) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return descending ? b < a : a < b;
}

// Keys with many ties; floats also -0.0, +0.0 and NaNs of two payloads.
template <class K>
std::vector<K> keys_for(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<K> k(n);
  for (auto& x : k) {
    const auto r = rng() % 64;
    if constexpr (std::is_floating_point_v<K>) {
      if (r == 0) x = std::numeric_limits<K>::quiet_NaN();
      else if (r == 1) x = -std::numeric_limits<K>::quiet_NaN();
      else if (r == 2) x = K(-0.0);
      else if (r == 3) x = K(0.0);
      else x = static_cast<K>(static_cast<int>(r) - 32) / 4;
    } else {
      x = static_cast<K>(r) - 20;
    }
  }
  return k;
}

// Runs of these lengths, each stably sorted, merged; compared with one
// stable sort of the whole. Values: each key's original position.
template <class K, class V>
void check(CpuExecutor* workers, const std::vector<std::size_t>& lengths, bool descending, bool with_values) {
  const std::size_t n = std::accumulate(lengths.begin(), lengths.end(), std::size_t{0});
  const std::vector<K> original = keys_for<K>(n, static_cast<std::uint32_t>(n + lengths.size()));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto by_key = [&](std::size_t a, std::size_t b) { return before(original[a], original[b], descending); };
  std::vector<std::size_t> bounds{0};
  for (std::size_t len : lengths) {
    std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(bounds.back()),
                     order.begin() + static_cast<std::ptrdiff_t>(bounds.back() + len), by_key);
    bounds.push_back(bounds.back() + len);
  }
  std::vector<K> keys(n);
  std::vector<V> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = original[order[i]];
    values[i] = static_cast<V>(order[i]);
  }
  merge_runs<K>(workers, keys.data(), with_values ? values.data() : nullptr, sizeof(V), bounds, descending);
  std::vector<std::size_t> want(n);
  std::iota(want.begin(), want.end(), std::size_t{0});
  std::stable_sort(want.begin(), want.end(), by_key);
  std::size_t key_mismatch = 0, value_mismatch = 0;
  for (std::size_t i = 0; i < n; ++i) {
    key_mismatch += std::memcmp(&keys[i], &original[want[i]], sizeof(K)) != 0;
    value_mismatch += with_values && values[i] != static_cast<V>(want[i]);
  }
  CHECK(key_mismatch == 0);
  CHECK(value_mismatch == 0);
}

const std::vector<std::vector<std::size_t>> kRunLengths = {
    {}, {0}, {1}, {0, 0}, {5}, {0, 7}, {7, 0}, {1, 1}, {3, 0, 4}, {2, 3, 5, 7, 11}, {1009, 13, 0, 997, 1}};

}  // namespace

TEST_CASE("merging stably sorted runs gives the stable sort of the whole, values with their keys") {
  for (const auto& lengths : kRunLengths)
    for (bool descending : {false, true})
      for (bool with_values : {false, true}) {
        CAPTURE(lengths.size());
        CAPTURE(descending);
        CAPTURE(with_values);
        check<float, std::uint32_t>(nullptr, lengths, descending, with_values);
        check<double, std::uint64_t>(nullptr, lengths, descending, with_values);
        check<std::int32_t, std::uint64_t>(nullptr, lengths, descending, with_values);
        check<std::uint64_t, std::uint32_t>(nullptr, lengths, descending, with_values);
      }
}

TEST_CASE("large merges are cut into pieces and run on the workers, with the same result") {
  veda::init(veda::Config::builder().threads(2).build());
  CpuExecutor* workers = veda::get_runtime().state().cpu_executor.get();
  // 5 runs: three rounds, the result copied back from the scratch; 9 runs: four rounds.
  for (const std::vector<std::size_t>& lengths :
       {std::vector<std::size_t>{300007, 1, 250000, 0, 450001}, std::vector<std::size_t>(9, 111113)})
    for (bool descending : {false, true}) {
      CAPTURE(lengths.size());
      CAPTURE(descending);
      check<float, std::uint32_t>(workers, lengths, descending, true);
      check<std::int64_t, std::uint64_t>(nullptr, lengths, descending, false);
    }
  veda::shutdown();
}
