// scan: veda::inclusive_scan against std::inclusive_scan and a hand-written
// tbb::parallel_scan, 10^3 ... 10^8 floats, each veda tier forced and auto,
// interleaved in one run. GB/s counts the bytes read and written once.
// regret = veda auto / best veda tier forced. Targets: auto within 5% of
// the faster peer from 10^5 elements; median regret <= 1.05.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/scan/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;

}  // namespace

int main(int argc, char** argv) {
  const Options opt = Options::parse(argc, argv);
  std::printf("# scan: veda::inclusive_scan vs std::inclusive_scan and tbb::parallel_scan\n%s\n",
              machine_line().c_str());
  veda::init();
  std::vector<std::string> tiers = {"serial", "tbb-auto"};
  if (veda::get_runtime().gpu_usable()) tiers.push_back("cuda");
  std::vector<std::string> cols = {"n", "std us", "oneTBB us"};
  for (const auto& t : tiers) cols.push_back("veda " + t + " us");
  cols.insert(cols.end(), {"veda auto us", "auto tier", "auto GB/s", "auto / std", "auto / oneTBB", "regret"});
  Table t("inclusive scan, float", cols);
  Series ser("inclusive scan, float", "n");
  std::vector<double> regrets;
  for (std::size_t n = 1000; n <= (opt.quick ? 1'000'000u : 100'000'000u); n *= 10) {
    std::vector<float> in(n), out(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 7) * 0.25f;
    std::vector<std::function<void()>> run = {[&] { scan::std_scan(in.data(), out.data(), n); },
                                              [&] { scan::tbb_scan(in.data(), out.data(), n); }};
    for (const auto& tier : tiers) run.push_back([&, tier] { scan::veda_scan(in.data(), out.data(), n, tier); });
    run.push_back([&] { scan::veda_scan(in.data(), out.data(), n, ""); });
    for (int i = 0; i < 30; ++i) run.back()();  // auto learns
    std::vector<int> batch;
    for (auto& r : run) batch.push_back(calibrate_batch(r, 3e6));
    const auto s = measure_interleaved(run, opt.quick ? 7 : 15, batch);
    run.back()();
    const double x = static_cast<double>(n);
    ser.add(x, "std::inclusive_scan", Series::Role::Peer, s[0]);
    ser.add(x, "tbb::parallel_scan", Series::Role::Peer, s[1]);
    for (std::size_t i = 0; i < tiers.size(); ++i) ser.add(x, "veda " + tiers[i], Series::Role::Forced, s[2 + i]);
    ser.add(x, "veda auto", Series::Role::Auto, s.back(), veda::last_decision().tier);
    std::vector<std::string> row = {std::to_string(n)};
    for (const auto& x : s) row.push_back(fmt(x.median / 1e3, 3));
    const double aut = s.back().median;
    double best = aut;
    for (std::size_t i = 2; i + 1 < s.size(); ++i) best = std::min(best, s[i].median);
    regrets.push_back(aut / best);
    row.insert(row.end(), {veda::last_decision().tier, fmt(2.0 * n * sizeof(float) / aut, 1),
                           fmt(aut / s[0].median, 3), fmt(aut / s[1].median, 3), fmt(aut / best, 3)});
    t.add(row);
  }
  t.print();
  std::printf("\nauto regret, median over sizes: %.3f (worst %.3f)\n", median_of(regrets),
              *std::max_element(regrets.begin(), regrets.end()));
  write_json(opt.json_path, "scan", {}, {ser});
  veda::shutdown();
  return 0;
}
