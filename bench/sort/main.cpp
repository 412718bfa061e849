// sort: veda::sort against std::sort and tbb::parallel_sort, 10^3 ... 10^8
// keys (float; uint32 keys with uint32 values), each tier forced and auto,
// interleaved in one run, every sample on a permutation of its own: sorting
// one input again and again lets the branch predictor learn it (1000 floats
// sorted 2-5x faster, by how much depends on what ran in between).
// regret = veda auto / best veda tier forced. Targets: auto no slower than
// the faster of std::sort and tbb::parallel_sort by more than 5% from 10^5
// keys; median regret <= 1.05. Then the cpu+gpu sort's merge on its own
// (merge.cpp) against std::merge and the cost model.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/common/fresh.hpp"
#include "bench/sort/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;

std::vector<std::string> veda_tiers() {
  std::vector<std::string> t = {"serial", "tbb-auto"};
  if (veda::get_runtime().gpu_usable()) t.push_back("cuda");
  return t;
}

std::vector<std::string> columns(const char* std_name, const char* tbb_name) {
  std::vector<std::string> c = {"n", std::string(std_name) + " ms", std::string(tbb_name) + " ms"};
  for (const auto& t : veda_tiers()) c.push_back("veda " + t + " ms");
  c.insert(c.end(), {"veda auto ms", "auto tier", "auto / std", "auto / TBB", "regret"});
  return c;
}

// Adds a row (and the series' points) from timings ordered std, TBB, veda
// tiers..., veda auto.
void add_row(Table& t, Series& ser, std::size_t n, const std::vector<Stats>& st, const std::string& tier,
             std::vector<double>& regrets) {
  std::vector<double> m;
  for (const auto& s : st) m.push_back(s.median);
  const auto tiers = veda_tiers();
  const double x = static_cast<double>(n);
  ser.add(x, "std::sort", Series::Role::Peer, st[0]);
  ser.add(x, "tbb::parallel_sort", Series::Role::Peer, st[1]);
  for (std::size_t i = 0; i < tiers.size(); ++i) ser.add(x, "veda " + tiers[i], Series::Role::Forced, st[2 + i]);
  ser.add(x, "veda auto", Series::Role::Auto, st.back(), tier);
  std::vector<std::string> row = {std::to_string(n)};
  for (double x : m) row.push_back(fmt(x / 1e6, 3));
  const double aut = m.back();
  const double best = *std::min_element(m.begin() + 2, m.end() - 1);
  regrets.push_back(aut / best);
  row.push_back(tier);
  row.push_back(fmt(aut / m[0], 3));
  row.push_back(fmt(aut / m[1], 3));
  row.push_back(fmt(aut / best, 3));
  t.add(row);
}

std::size_t max_n(const Options& o) { return o.quick ? 1'000'000 : 100'000'000; }
int samples_for(std::size_t n) { return n >= 10'000'000 ? 3 : n >= 1'000'000 ? 7 : 21; }
int warmups_for(std::size_t n) { return n >= 10'000'000 ? 4 : 24; }

template <class K>
Series keys_table(const Options& opt, std::vector<double>& regrets) {
  const std::string name = std::string("keys: ") + (sizeof(K) == 4 && std::is_floating_point_v<K> ? "float" : "uint32");
  Table t(name, columns("std::sort", "tbb::parallel_sort"));
  Series ser(name, "n");
  std::mt19937_64 rng(42);
  for (std::size_t n = 1000; n <= max_n(opt); n *= 10) {
    std::vector<K> work(n);
    for (auto& k : work) k = static_cast<K>(rng() % 1000000007u) / (std::is_floating_point_v<K> ? K(7) : K(1));
    auto reset = [&] { std::shuffle(work.begin(), work.end(), rng); };
    std::vector<Fresh> cs = {{"std", reset, [&] { sort::std_sort(work); }},
                             {"tbb", reset, [&] { sort::tbb_sort(work); }}};
    for (const auto& tier : veda_tiers()) cs.push_back({tier, reset, [&, tier] { sort::veda_sort(work, tier); }});
    cs.push_back({"auto", reset, [&] { sort::veda_sort(work, ""); }});
    for (int i = 0; i < warmups_for(n); ++i) {
      reset();
      cs.back().run();
    }
    const auto m = time_fresh(cs, samples_for(n));
    reset();
    sort::veda_sort(work, "");
    add_row(t, ser, n, m, veda::last_decision().tier, regrets);
  }
  t.print();
  return ser;
}

Series pairs_table(const Options& opt, std::vector<double>& regrets) {
  Table t("uint32 keys with uint32 values", columns("std::sort pairs", "tbb::parallel_sort pairs"));
  Series ser("uint32 keys with uint32 values", "n");
  std::mt19937_64 rng(7);
  for (std::size_t n = 1000; n <= max_n(opt); n *= 10) {
    std::vector<sort::Pair> input(n);
    for (std::size_t i = 0; i < n; ++i) input[i] = {static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(i)};
    std::vector<sort::Pair> kv = input;
    std::vector<std::uint32_t> k(n), v(n);
    auto reset_pairs = [&] { std::shuffle(kv.begin(), kv.end(), rng); };
    auto reset_split = [&] {
      std::shuffle(input.begin(), input.end(), rng);
      for (std::size_t i = 0; i < n; ++i) {
        k[i] = input[i].first;
        v[i] = input[i].second;
      }
    };
    std::vector<Fresh> cs = {{"std", reset_pairs, [&] { sort::std_sort_pairs(kv); }},
                             {"tbb", reset_pairs, [&] { sort::tbb_sort_pairs(kv); }}};
    for (const auto& tier : veda_tiers())
      cs.push_back({tier, reset_split, [&, tier] { sort::veda_sort_pairs(k, v, tier); }});
    cs.push_back({"auto", reset_split, [&] { sort::veda_sort_pairs(k, v, ""); }});
    for (int i = 0; i < warmups_for(n); ++i) {
      reset_split();
      cs.back().run();
    }
    const auto m = time_fresh(cs, samples_for(n));
    reset_split();
    sort::veda_sort_pairs(k, v, "");
    add_row(t, ser, n, m, veda::last_decision().tier, regrets);
  }
  t.print();
  return ser;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = Options::parse(argc, argv);
  std::printf("# sort: veda::sort vs std::sort and tbb::parallel_sort\n%s\n", machine_line().c_str());
  veda::init();
  std::vector<Series> series;
  std::vector<double> regrets;
  series.push_back(keys_table<float>(opt, regrets));
  series.push_back(keys_table<std::uint32_t>(opt, regrets));
  series.push_back(pairs_table(opt, regrets));
  sort::merge_table(opt);
  std::printf("\nauto regret, median over sizes and cases: %.3f (worst %.3f)\n", median_of(regrets),
              *std::max_element(regrets.begin(), regrets.end()));
  write_json(opt.json_path, "sort", {}, series);
  veda::shutdown();
  return 0;
}
