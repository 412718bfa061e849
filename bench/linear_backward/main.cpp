// linear_backward: veda::linear_backward against OpenBLAS + oneTBB composed
// by hand, for GELU layers of the shapes MLPs use, float. Ratio = veda /
// the composition. Target: <= 1.10 where veda runs on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/linear_backward/contenders.hpp"
#include "veda/decision.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;
namespace lb = bench::linear_backward;

std::vector<float> data(std::size_t n, double scale, double phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# linear_backward (GELU, float): veda vs OpenBLAS + oneTBB by hand\n%s\n", machine_line().c_str());
  veda::init();
  Table t("linear layer gradients (grad_x, grad_w, grad_bias): median us",
          {"m x k -> n", "OpenBLAS+oneTBB", "veda", "veda tier", "veda / composition"});
  struct Case {
    std::size_t m, k, n;
  };
  const std::vector<Case> cases = opt.quick ? std::vector<Case>{{64, 512, 512}, {512, 768, 3072}, {4096, 256, 256}}
                                            : std::vector<Case>{{64, 512, 512},
                                                                {512, 768, 3072},
                                                                {4096, 256, 256},
                                                                {2048, 1024, 1024},
                                                                {16384, 64, 64}};
  std::vector<double> ratios;
  for (const Case& c : cases) {
    lb::Layer l{c.m, c.k, c.n, data(c.m * c.k, 1.0, 0.1), data(c.n * c.k, 0.05, 0.2), data(c.m * c.n, 0.01, 0.3),
                data(c.m * c.n, 2.0, 0.4), std::vector<float>(c.m * c.n), std::vector<float>(c.m * c.k),
                std::vector<float>(c.n * c.k), std::vector<float>(c.n)};
    const veda::Array<float> ax(veda::Shape{c.m, c.k}, std::vector<float>(l.x)),
        aw(veda::Shape{c.n, c.k}, std::vector<float>(l.w)), ag(veda::Shape{c.m, c.n}, std::vector<float>(l.grad_out)),
        az(veda::Shape{c.m, c.n}, std::vector<float>(l.pre_act));
    float sink = 0;
    std::vector<std::function<void()>> rs = {[&] { lb::openblas_tbb(l); },
                                             [&] { sink += lb::veda_backward(ax, aw, ag, az); }};
    for (int i = 0; i < 20; ++i) rs.back()();  // veda learns
    std::vector<int> batch;
    for (auto& r : rs) batch.push_back(calibrate_batch(r, 2e6));
    const auto s = measure_interleaved(rs, opt.quick ? 7 : 15, batch);
    rs.back()();
    const std::string tier = veda::last_decision().tier;
    ratios.push_back(s[1].median / s[0].median);
    t.add({std::to_string(c.m) + " x " + std::to_string(c.k) + " -> " + std::to_string(c.n),
           fmt(s[0].median / 1e3, 1), fmt(s[1].median / 1e3, 1), tier, fmt(ratios.back(), 3)});
    if (std::isnan(sink)) std::printf("nan\n");
  }
  t.print();
  write_json(opt.json_path, "linear_backward", {t}, {},
             {{"veda vs the composition (median over shapes; worst " +
                   fmt(*std::max_element(ratios.begin(), ratios.end()), 3) + ")",
               fmt(median_of(ratios), 3) + "x", "<= 1.10x", median_of(ratios) <= 1.10}});
  veda::shutdown();
  return 0;
}
