// Contract: veda::sort / sort_by_key order keys as std::stable_sort does
// after moving NaNs to the back (so -0.0 == +0.0, NaN last in either
// direction), for every length, key type, value size and tier. Stable sorts
// match that oracle bit for bit (keys and values) on every tier; unstable
// ones match it up to the order of equal keys. Bad input throws before any
// work; a stable sort never offers tbb-auto.
// Built twice in the CUDA configuration: sort_test and gpu_sort_test (gpu).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/sort.hpp"

namespace {
const std::size_t kLengths[] = {0, 1, 2, 3, 13, 4093, 65537, 1000003};

std::vector<std::string> tiers(bool stable) {
  return stable ? veda_test::op_tiers({"serial"}, {"cuda"}) : veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"});
}

// Keys with many duplicates (so stability is visible); floats add ±0, ±inf
// and NaNs of both signs and two payloads.
template <class K>
std::vector<K> keys(std::size_t n, unsigned seed) {
  std::vector<K> v(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto r = static_cast<std::int64_t>(x % 2001) - 1000;
    if constexpr (std::is_floating_point_v<K>) {
      switch (x % 97) {
        case 0: v[i] = std::numeric_limits<K>::quiet_NaN(); break;
        case 1: v[i] = -std::numeric_limits<K>::quiet_NaN(); break;
        case 2: v[i] = std::nan("7"); break;
        case 3: v[i] = K(-0.0); break;
        case 4: v[i] = K(0.0); break;
        case 5: v[i] = std::numeric_limits<K>::infinity(); break;
        case 6: v[i] = -std::numeric_limits<K>::infinity(); break;
        default: v[i] = static_cast<K>(r) / K(8);
      }
    } else if constexpr (std::is_signed_v<K>) {
      v[i] = static_cast<K>(r) * (i % 5 == 0 ? std::numeric_limits<K>::max() / 1000 : 1);
    } else {
      v[i] = static_cast<K>(x % 2001) * (i % 5 == 0 ? std::numeric_limits<K>::max() / 2000 : 1);
    }
  }
  return v;
}

template <class K>
bool is_nan(K k) {
  if constexpr (std::is_floating_point_v<K>) return std::isnan(k);
  else return false;
}

// The documented order, by the slowest obvious route.
template <class K, class V>
void oracle(std::vector<K>& k, std::vector<V>& v, bool descending) {
  std::vector<std::size_t> idx(k.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto mid = std::stable_partition(idx.begin(), idx.end(), [&](std::size_t i) { return !is_nan(k[i]); });
  std::stable_sort(idx.begin(), mid, [&](std::size_t a, std::size_t b) { return descending ? k[a] > k[b] : k[a] < k[b]; });
  std::vector<K> k2(k.size());
  std::vector<V> v2(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) {
    k2[i] = k[idx[i]];
    if (!v.empty()) v2[i] = v[idx[i]];
  }
  k.swap(k2);
  v.swap(v2);
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class K>
bool equivalent(K a, K b) {
  return (is_nan(a) && is_nan(b)) || a == b;
}

template <class K, class V>
void sort_matches_oracle() {
  for (std::size_t n : kLengths)
    for (bool stable : {true, false})
      for (bool descending : {false, true})
        for (bool with_values : {false, true}) {
          CAPTURE(n);
          CAPTURE(stable);
          CAPTURE(descending);
          CAPTURE(with_values);
          const auto k0 = keys<K>(n, 1);
          std::vector<V> v0;
          if (with_values)
            for (std::size_t i = 0; i < n; ++i) v0.push_back(static_cast<V>(i));
          auto wk = k0;
          auto wv = v0;
          oracle(wk, wv, descending);
          for (const auto& tier : tiers(stable)) {
            CAPTURE(tier);
            veda::SortOptions o;
            o.stable = stable;
            o.descending = descending;
            o.tier = tier;
            auto k = k0;
            auto v = v0;
            const veda_test::DeviceWork w;
            if (with_values) veda::sort_by_key(k, v, o);
            else veda::sort(k, o);
            veda_test::check_ran(tier, w, n > 1);
            if (stable) {
              CHECK(same_bits(k, wk));
              CHECK(same_bits(v, wv));
              continue;
            }
            bool ordered = true;
            for (std::size_t i = 0; i < n; ++i) ordered &= equivalent(k[i], wk[i]);
            CHECK(ordered);
            if (with_values) {  // the same (key, value) pairs
              std::vector<std::pair<V, bool>> seen(n);
              bool pairs = true;
              for (std::size_t i = 0; i < n; ++i) {
                const auto src = static_cast<std::size_t>(v[i]);
                pairs &= src < n && !seen[src].second && equivalent(k0[src], k[i]);
                if (src < n) seen[src].second = true;
              }
              CHECK(pairs);
            }
          }
        }
}
}  // namespace

TEST_CASE_TEMPLATE("sorts match the documented order for every key type, length and tier", K, float, double,
                   std::int32_t, std::int64_t, std::uint32_t, std::uint64_t) {
  veda_test::OpRuntime rt;
  sort_matches_oracle<K, std::uint32_t>();
}

TEST_CASE("8-byte values and trivially copyable structs travel with their keys") {
  veda_test::OpRuntime rt;
  struct Item {
    float weight;
    std::int32_t id;
  };
  const std::size_t n = 65537;
  const auto k0 = keys<float>(n, 3);
  std::vector<double> d0(n);
  std::vector<Item> s0(n);
  for (std::size_t i = 0; i < n; ++i) {
    d0[i] = static_cast<double>(i) + 0.25;
    s0[i] = {static_cast<float>(i), static_cast<std::int32_t>(i)};
  }
  auto wk = k0;
  auto wd = d0;
  oracle(wk, wd, false);
  for (const auto& tier : tiers(true)) {
    CAPTURE(tier);
    veda::SortOptions o;
    o.stable = true;
    o.tier = tier;
    auto k = k0;
    auto d = d0;
    veda::sort_by_key(k, d, o);
    CHECK(same_bits(k, wk));
    CHECK(same_bits(d, wd));
    k = k0;
    auto s = s0;
    veda::sort_by_key(k, s, o);
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) ok &= s[i].id == static_cast<std::int32_t>(wd[i]) && s[i].weight == float(s[i].id);
    CHECK(ok);
  }
}

TEST_CASE("NaN keys go last in either direction, zeros compare equal") {
  veda_test::OpRuntime rt;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& tier : tiers(true)) {
    CAPTURE(tier);
    veda::SortOptions o;
    o.stable = true;
    o.tier = tier;
    std::vector<float> k = {nan, 2.0f, -nan, -0.0f, 1.0f, 0.0f, -1.0f};
    std::vector<std::int32_t> v = {0, 1, 2, 3, 4, 5, 6};
    veda::sort_by_key(k, v, o);
    CHECK(v == std::vector<std::int32_t>{6, 3, 5, 4, 1, 0, 2});  // -0 before +0: original order
    CHECK(std::signbit(k[1]));
    CHECK(std::isnan(k[5]));
    CHECK(std::isnan(k[6]));
    o.descending = true;
    k = {nan, 2.0f, -nan, -0.0f, 1.0f, 0.0f, -1.0f};
    v = {0, 1, 2, 3, 4, 5, 6};
    veda::sort_by_key(k, v, o);
    CHECK(v == std::vector<std::int32_t>{1, 4, 3, 5, 6, 0, 2});
  }
}

TEST_CASE("10^7 keys, and Arrays sorted in place") {
  veda_test::OpRuntime rt;
  auto big = keys<std::int32_t>(10000019, 5);
  auto want = big;
  std::sort(want.begin(), want.end());
  veda::sort(big);
  CHECK(big == want);

  veda::Array<double> k(keys<double>(4093, 6));
  veda::Array<std::int64_t> v(std::vector<std::int64_t>(4093));
  for (std::size_t i = 0; i < 4093; ++i) v.host()[i] = static_cast<std::int64_t>(i);
  auto wk = k.to_vector();
  auto wv = v.to_vector();
  oracle(wk, wv, false);
  for (const auto& tier : tiers(true)) {
    CAPTURE(tier);
    auto kk = k.clone();
    auto vv = v.clone();
    veda::SortOptions o;
    o.stable = true;
    o.tier = tier;
    veda::sort_by_key(kk, vv, o);
    CHECK(same_bits(kk.to_vector(), wk));
    CHECK(vv.to_vector() == wv);
    CHECK(veda::last_decision().name == "stable_sort_by_key");
  }
}

TEST_CASE("forced cpu+gpu: host ranges are split, sorted in parts and merged to the same order; Arrays run whole") {
  // Without a usable GPU the forced tier falls back to the CPU; the values are checked the same way.
  veda_test::OpRuntime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  for (std::size_t n : kLengths)
    for (bool stable : {true, false})
      for (bool descending : {false, true}) {
        CAPTURE(n);
        CAPTURE(stable);
        CAPTURE(descending);
        const auto k0 = keys<float>(n, 8);
        std::vector<std::uint32_t> v0(n);
        for (std::size_t i = 0; i < n; ++i) v0[i] = static_cast<std::uint32_t>(i);
        auto wk = k0;
        auto wv = v0;
        oracle(wk, wv, descending);
        auto k = k0;
        auto v = v0;
        veda::sort_by_key(k, v, {.stable = stable, .descending = descending, .tier = "cpu+gpu"});
        if (gpu) CHECK(veda::last_decision().tier == "cpu+gpu");
        else CHECK(veda::last_decision().device == veda::Device::Cpu);
        if (stable) {
          CHECK(same_bits(k, wk));
          CHECK(same_bits(v, wv));
          continue;
        }
        bool ordered = true, pairs = true;
        for (std::size_t i = 0; i < n; ++i) {
          ordered &= equivalent(k[i], wk[i]);
          pairs &= v[i] < n && std::memcmp(&k[i], &k0[v[i]], sizeof(float)) == 0;
        }
        CHECK(ordered);
        CHECK(pairs);
      }
  // An Array is not split: the devices' tier sorts it whole.
  veda::Array<double> a(keys<double>(4093, 9));
  auto want = a.to_vector();
  std::vector<std::uint8_t> none;
  oracle(want, none, false);
  veda::sort(a, {.stable = true, .tier = "cpu+gpu"});
  CHECK(same_bits(a.to_vector(), want));
  if (gpu) CHECK(veda::last_decision().tier == "cuda");
  else CHECK(veda::last_decision().device == veda::Device::Cpu);
}

TEST_CASE("bad input throws before any work; stable sorts never offer tbb-auto") {
  veda_test::OpRuntime rt;
  std::vector<float> k = {3, 1, 2};
  std::vector<std::int32_t> v = {0, 1};
  CHECK_THROWS_WITH_AS(veda::sort_by_key(k, v), doctest::Contains("3 keys but 2 values"), veda::InvalidArgument);
  CHECK(k == std::vector<float>{3, 1, 2});

  std::vector<std::uint32_t> buf = {5, 4, 3, 2, 1, 0};
  std::span<std::uint32_t> a(buf.data(), 4), b(buf.data() + 2, 4);
  CHECK_THROWS_WITH_AS(veda::sort_by_key(a, b), doctest::Contains("overlap"), veda::InvalidArgument);
  veda::Array<std::int32_t> same = {3, 2, 1};
  CHECK_THROWS_WITH_AS(veda::sort_by_key(same, same), doctest::Contains("same Array"), veda::InvalidArgument);

  veda::SortOptions o;
  o.stable = true;
  o.tier = "tbb-auto";
  CHECK_THROWS_WITH_AS(veda::sort(k, o), doctest::Contains("not stable"), veda::InvalidArgument);
  o.tier = "";
  std::vector<float> many(100000, 1.0f);
  veda::sort(many, o);
  const auto d = veda::last_decision();
  CHECK(d.name == "stable_sort");
  for (const auto& c : d.candidates) CHECK(c.tier != "tbb-auto");

  veda::sort(k);  // still usable
  CHECK(k == std::vector<float>{1, 2, 3});
}
