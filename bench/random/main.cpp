// random: veda::random into a host vector of floats against std::mt19937
// (serial, the standard distributions), a oneTBB loop over the same Philox
// blocks (veda's generator by hand) and, with a GPU, cuRAND's Philox into
// device memory and back. Ratio = veda / the fastest CPU peer.
// Target: <= 1.10 from 2^16 elements.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/random/contenders.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;
namespace rnd = bench::random;

Table run(bool normal, const Options& opt, std::vector<double>& ratios) {
  Table t(normal ? "normal floats into a vector: median us" : "uniform floats into a vector: median us",
          {"n", "std::mt19937", "oneTBB Philox", "cuRAND + copy", "veda", "veda tier", "veda / best CPU peer"});
  const std::vector<std::size_t> sizes = opt.quick ? std::vector<std::size_t>{1 << 10, 1 << 16, 1 << 20, 1 << 23}
                                                   : std::vector<std::size_t>{1 << 10, 1 << 14, 1 << 16, 1 << 18,
                                                                              1 << 20, 1 << 22, 1 << 24};
  for (std::size_t n : sizes) {
    std::vector<float> out(n);
    const bool curand = rnd::curand_setup(n);
    std::vector<std::function<void()>> rs = {[&] { rnd::std_mt19937(out, normal, 7); },
                                             [&] { rnd::tbb_philox(out, normal, 7); },
                                             [&] { rnd::veda_fill(out, normal, 7); }};
    if (curand) rs.push_back([&] { rnd::curand_fill(out, normal, 7); });
    for (int i = 0; i < 20; ++i) rs[2]();  // veda learns
    std::vector<int> batch;
    for (auto& r : rs) batch.push_back(calibrate_batch(r, 2e6));
    const auto s = measure_interleaved(rs, opt.quick ? 7 : 15, batch);
    rs[2]();
    const std::string tier = rnd::veda_tier();
    rnd::curand_release();
    const double best = std::min(s[0].median, s[1].median);
    ratios.push_back(n >= (1 << 16) ? s[2].median / best : 0);
    t.add({std::to_string(n), fmt(s[0].median / 1e3, 1), fmt(s[1].median / 1e3, 1),
           curand ? fmt(s[3].median / 1e3, 1) : "no GPU", fmt(s[2].median / 1e3, 1), tier, fmt(s[2].median / best, 3)});
  }
  t.print();
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# random: veda::random vs std::mt19937, a oneTBB Philox loop and cuRAND\n%s\n",
              machine_line().c_str());
  veda::init();
  std::vector<double> ratios;
  std::vector<Table> tables = {run(false, opt, ratios), run(true, opt, ratios)};
  ratios.erase(std::remove(ratios.begin(), ratios.end(), 0.0), ratios.end());
  const double worst = *std::max_element(ratios.begin(), ratios.end());
  write_json(opt.json_path, "random", tables, {},
             {{"random vs the best CPU peer from 2^16 (worst; median " + fmt(median_of(ratios), 3) + ")",
               fmt(worst, 3) + "x", "<= 1.10x", worst <= 1.10}});
  veda::shutdown();
  return 0;
}
