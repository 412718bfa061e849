// The cpu+gpu sort's last pass on its own: merging sorted parts (the
// devices' shares and the CPU's part) of float keys with uint32 values.
// std::merge of key-value pairs, a round of pairwise merges at a time on
// one thread (into a buffer, as its users would), against veda's merge
// (cpu::merge_runs: in place, on one thread and on the workers), beside what
// the cost model predicts for it (the split sort's Estimate::join_us).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/merge_runs.hpp"
#include "bench/common/fresh.hpp"
#include "bench/sort/contenders.hpp"
#include "runtime/cost_model.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/veda.hpp"

namespace bench::sort {
namespace {

using Kv = std::pair<float, std::uint32_t>;

// Pairwise rounds of std::merge (stable, by key) until one run is left.
void std_merge_rounds(std::vector<Kv>& a, std::vector<Kv>& buf, std::vector<std::size_t> bounds) {
  auto by_key = [](const Kv& x, const Kv& y) { return x.first < y.first; };
  while (bounds.size() > 2) {
    std::vector<std::size_t> next{0};
    for (std::size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const std::size_t a0 = bounds[r], a1 = bounds[r + 1], b1 = r + 2 < bounds.size() ? bounds[r + 2] : a1;
      std::merge(a.begin() + static_cast<std::ptrdiff_t>(a0), a.begin() + static_cast<std::ptrdiff_t>(a1),
                 a.begin() + static_cast<std::ptrdiff_t>(a1), a.begin() + static_cast<std::ptrdiff_t>(b1),
                 buf.begin() + static_cast<std::ptrdiff_t>(a0), by_key);
      next.push_back(b1);
    }
    a.swap(buf);
    bounds = std::move(next);
  }
}

// The model's merge time for n keys with 4-byte values in `parts` parts.
double model_ms(std::size_t n, int parts) {
  auto& st = veda::get_runtime().state();
  veda::detail::CostRequest r;
  r.op = veda::detail::OpClass::Sort;
  r.tiers = veda::detail::tier_bit(veda::detail::Tier::CoExec);
  r.n = n;
  r.elem_bytes = 4;
  r.value_bytes = 4;
  r.threads = st.config.threads();
  r.gpu_devices = parts - 1;
  for (const auto& e : veda::detail::estimate(st.profile(), r))
    if (e.tier == veda::detail::Tier::CoExec) return e.join_us / 1e3;
  return 0;
}

}  // namespace

void merge_table(const Options& opt) {
  Table t("merging sorted parts (the cpu+gpu sort's last pass): float keys with uint32 values",
          {"n", "parts", "std::merge rounds ms", "veda 1 thread ms", "veda workers ms", "model ms",
           "veda workers / std::merge", "model / veda workers"});
  auto* workers = veda::get_runtime().state().cpu_executor.get();
  std::mt19937 rng(11);
  for (std::size_t n : {std::size_t{100'000}, std::size_t{1'000'000}, std::size_t{10'000'000}}) {
    if (opt.quick && n > 1'000'000) break;
    for (int parts : {2, 4}) {
      std::vector<std::size_t> bounds{0};
      for (int p = 1; p <= parts; ++p) bounds.push_back(n * static_cast<std::size_t>(p) / static_cast<std::size_t>(parts));
      std::vector<Kv> input(n);
      for (std::size_t i = 0; i < n; ++i) input[i] = {static_cast<float>(rng() % 1000003), static_cast<std::uint32_t>(i)};
      for (int p = 0; p < parts; ++p)
        std::stable_sort(input.begin() + static_cast<std::ptrdiff_t>(bounds[p]),
                         input.begin() + static_cast<std::ptrdiff_t>(bounds[p + 1]),
                         [](const Kv& x, const Kv& y) { return x.first < y.first; });
      std::vector<Kv> kv(n), buf(n);
      std::vector<float> keys(n);
      std::vector<std::uint32_t> values(n);
      auto reset_pairs = [&] { std::copy(input.begin(), input.end(), kv.begin()); };
      auto reset_split = [&] {
        for (std::size_t i = 0; i < n; ++i) keys[i] = input[i].first, values[i] = input[i].second;
      };
      auto veda_merge = [&](veda::detail::CpuExecutor* on) {
        veda::detail::cpu::merge_runs<float>(on, keys.data(), values.data(), sizeof(std::uint32_t), bounds, false);
      };
      const std::vector<Fresh> cs = {{"std", reset_pairs, [&] { std_merge_rounds(kv, buf, bounds); }},
                                     {"one", reset_split, [&] { veda_merge(nullptr); }},
                                     {"workers", reset_split, [&] { veda_merge(workers); }}};
      const auto m = time_fresh(cs, n >= 10'000'000 ? 5 : 11);
      const double model = model_ms(n, parts);
      t.add({std::to_string(n), std::to_string(parts), fmt(m[0].median / 1e6, 3), fmt(m[1].median / 1e6, 3),
             fmt(m[2].median / 1e6, 3), fmt(model, 3), fmt(m[2].median / m[0].median, 3),
             fmt(model / (m[2].median / 1e6), 3)});
    }
  }
  t.print();
}

}  // namespace bench::sort
