// transpose: veda::transpose against a 32 x 32 tiled loop, serial and
// oneTBB, on n x n doubles (odd, power-of-two and round orders), for B = A^T
// and for B += A^T. Ratio = veda / the fastest peer. Target: <= 1.05 at
// every size, both forms.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/transpose/contenders.hpp"
#include "veda/decision.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;
namespace tr = bench::transpose;

Table run(bool accumulate, const Options& opt, std::vector<double>& ratios) {
  Table t(accumulate ? "B += A^T, double: median us" : "B = A^T, double: median us",
          {"n", "serial tiled", "oneTBB tiled", "veda", "veda tier", "veda / best peer"});
  const std::vector<std::size_t> sizes =
      opt.quick ? std::vector<std::size_t>{250, 256, 1000, 1024, 4096}
                : std::vector<std::size_t>{250, 256, 1000, 1024, 2048, 4000, 4096};
  for (std::size_t n : sizes) {
    std::vector<double> a(n * n), b(n * n, 0.0);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 1013);
    std::vector<std::function<void()>> rs = {
        [&] { tr::serial_tiled(a.data(), b.data(), n, accumulate); },
        [&] { tr::tbb_tiled(a.data(), b.data(), n, accumulate); },
        accumulate ? std::function<void()>([&] { tr::veda_accumulate(a, b, n); })
                   : std::function<void()>([&] { tr::veda_transpose(a, b, n); })};
    for (int i = 0; i < 20; ++i) rs.back()();  // veda learns
    std::vector<int> batch;
    for (auto& r : rs) batch.push_back(calibrate_batch(r, 2e6));
    const auto s = measure_interleaved(rs, opt.quick ? 7 : 15, batch);
    rs.back()();
    const std::string tier = veda::last_decision().tier;
    const double best = std::min(s[0].median, s[1].median);
    ratios.push_back(s[2].median / best);
    t.add({std::to_string(n), fmt(s[0].median / 1e3, 1), fmt(s[1].median / 1e3, 1), fmt(s[2].median / 1e3, 1), tier,
           fmt(s[2].median / best, 3)});
  }
  t.print();
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# transpose: veda vs tiled loops (serial, oneTBB)\n%s\n", machine_line().c_str());
  veda::init();
  std::vector<double> plain, acc;
  std::vector<Table> tables = {run(false, opt, plain), run(true, opt, acc)};
  std::vector<double> all = plain;
  all.insert(all.end(), acc.begin(), acc.end());
  const double worst = *std::max_element(all.begin(), all.end());
  write_json(opt.json_path, "transpose", tables, {},
             {{"transpose, B = A^T and B += A^T, vs the best tiled loop (worst over sizes; median " +
                   fmt(median_of(all), 3) + ")",
               fmt(worst, 3) + "x", "<= 1.05x", worst <= 1.05}});
  veda::shutdown();
  return 0;
}
