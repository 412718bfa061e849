// attention: veda::attention against OpenBLAS + oneTBB composed by hand
// (the scores materialised), float, head_dim 64, no mask. Ratio = veda /
// the composition. Target: <= 1.10 where veda runs on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/attention/contenders.hpp"
#include "bench/common/bench.hpp"
#include "veda/decision.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;
namespace at = bench::attention;

std::vector<float> data(std::size_t n, double phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# attention (float, head_dim 64): veda vs OpenBLAS + oneTBB by hand\n%s\n", machine_line().c_str());
  veda::init();
  Table t("softmax(q k^T / 8) v, [1, heads, seq, 64]: median us",
          {"heads x seq", "OpenBLAS+oneTBB", "veda", "veda tier", "veda / composition"});
  struct Case {
    std::size_t heads, seq;
  };
  const std::vector<Case> cases = opt.quick ? std::vector<Case>{{8, 128}, {8, 512}, {4, 2048}}
                                            : std::vector<Case>{{8, 128}, {8, 512}, {4, 2048}, {2, 4096}, {32, 256}};
  std::vector<double> ratios;
  for (const Case& c : cases) {
    const std::size_t n = c.heads * c.seq * 64;
    at::Problem p{c.heads, c.seq, 64, data(n, 0.1), data(n, 0.2), data(n, 0.3), std::vector<float>(n),
                  std::vector<float>(c.seq * c.seq)};
    const veda::Shape s{1, c.heads, c.seq, 64};
    const veda::Array<float> aq(s, std::vector<float>(p.q)), ak(s, std::vector<float>(p.k)),
        av(s, std::vector<float>(p.v));
    float sink = 0;
    std::vector<std::function<void()>> rs = {[&] { at::openblas_tbb(p); },
                                             [&] { sink += at::veda_attention(aq, ak, av); }};
    for (int i = 0; i < 10; ++i) rs.back()();  // veda learns
    std::vector<int> batch;
    for (auto& r : rs) batch.push_back(calibrate_batch(r, 2e6));
    const auto m = measure_interleaved(rs, opt.quick ? 5 : 11, batch);
    rs.back()();
    const std::string tier = veda::last_decision().tier;
    ratios.push_back(m[1].median / m[0].median);
    t.add({std::to_string(c.heads) + " x " + std::to_string(c.seq), fmt(m[0].median / 1e3, 1),
           fmt(m[1].median / 1e3, 1), tier, fmt(ratios.back(), 3)});
    if (std::isnan(sink)) std::printf("nan\n");
  }
  t.print();
  write_json(opt.json_path, "attention", {t}, {},
             {{"veda vs the composition (median over shapes; worst " +
                   fmt(*std::max_element(ratios.begin(), ratios.end()), 3) + ")",
               fmt(median_of(ratios), 3) + "x", "<= 1.10x", median_of(ratios) <= 1.10}});
  veda::shutdown();
  return 0;
}
