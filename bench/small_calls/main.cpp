// small_calls: 10^5 calls in a row on 10^2, 10^3 and 10^4 floats (saxpy),
// the pattern of a simulation's inner loop. Per-call time of a serial loop,
// raw oneTBB (static and auto partitioner), StarPU (one task per call, the
// cheapest way to submit small work) and veda (auto); overhead = a
// contender's per-call time minus the serial loop's. Target: veda's overhead
// at least 5x lower than StarPU's. The contenders are the elementwise case's.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/elementwise/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;
using namespace bench::elementwise;

constexpr double kResolution = 5;  // ns: below this an overhead is noise
}  // namespace

int main(int argc, char** argv) {
  const Options opt = Options::parse(argc, argv);
  const int calls = opt.quick ? 10'000 : 100'000, samples = opt.quick ? 3 : 5;
  std::printf("# small_calls: %d calls in a row, per-call time and overhead over a serial loop\n%s\n", calls,
              machine_line().c_str());
  veda::init();
  std::string why;
  const bool with_starpu = starpu::start(why);  // its workers paused but while it runs (contenders.hpp)
  const std::vector<std::size_t> sizes = {100, 1000, 10000};
  struct Row {
    std::vector<Stats> s;  // serial, tbb-static, tbb-auto, veda[, StarPU]
    std::string tier;
  };
  std::vector<Row> rows;
  for (std::size_t n : sizes) {
    Workload d(n);
    const std::vector<Runner> rs = {serial(Work::Saxpy, d), tbb_static(Work::Saxpy, d), tbb_auto(Work::Saxpy, d),
                                    placement::saxpy(d, "", "small-" + std::to_string(n))};
    for (int i = 0; i < 2000; ++i) rs.back()();  // veda settles
    Row row;
    for (const auto& r : rs) row.s.push_back(measure(r, samples, calls, 1));  // a sample: `calls` calls in a row
    row.tier = veda::last_decision().tier;
    if (with_starpu) {
      const starpu::Awake awake;
      const Runner r = starpu::make(Work::Saxpy, d, 1);
      for (int k = 0; k < 100; ++k) r();
      row.s.push_back(measure(r, samples, calls, 1));
    }
    rows.push_back(row);
  }
  if (with_starpu) starpu::stop();
  std::vector<std::string> names = {"serial", "tbb-static", "tbb-auto", "veda"};
  if (with_starpu) names.push_back("StarPU task");
  std::vector<std::string> cols = {"n"};
  for (const auto& nm : names) cols.push_back(nm + " ns/call");
  cols.insert(cols.end(), {"veda tier", "veda overhead ns", "oneTBB static overhead ns", "StarPU overhead ns",
                           "StarPU / veda overhead"});
  Table t("per-call time, median of " + std::to_string(samples) + " runs of " + std::to_string(calls) + " calls", cols);
  Series ser("saxpy, " + std::to_string(calls) + " calls in a row", "n");
  std::vector<double> ratios;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto& s = rows[i].s;
    std::vector<std::string> r = {std::to_string(sizes[i])};
    for (std::size_t c = 0; c < s.size(); ++c) {
      r.push_back(fmt(s[c].median, 1));
      ser.add(static_cast<double>(sizes[i]), names[c], c == 3 ? Series::Role::Auto : Series::Role::Peer, s[c],
              c == 3 ? rows[i].tier : "");
    }
    const double veda_over = s[3].median - s[0].median, tbb_over = s[1].median - s[0].median;
    r.insert(r.end(), {rows[i].tier, fmt(veda_over, 1), fmt(tbb_over, 1)});
    if (with_starpu) {
      const double sp_over = s[4].median - s[0].median;
      ratios.push_back(sp_over / std::max(veda_over, kResolution));
      r.insert(r.end(), {fmt(sp_over, 1), (veda_over < kResolution ? ">= " : "") + fmt(ratios.back(), 0) + "x"});
    } else {
      r.insert(r.end(), {"-", "-"});
    }
    t.add(r);
  }
  t.print();
  std::vector<Target> targets;
  if (!ratios.empty()) {
    const double worst = *std::min_element(ratios.begin(), ratios.end());
    targets.push_back({"per-call overhead, StarPU task / veda (worst of 10^2, 10^3, 10^4 floats)",
                       fmt(worst, 0) + "x", ">= 5x", worst >= 5});
  } else {
    std::printf("StarPU unavailable: %s\n", why.c_str());
  }
  write_json(opt.json_path, "small_calls", {t}, {ser}, targets);
  veda::shutdown();
  return 0;
}
