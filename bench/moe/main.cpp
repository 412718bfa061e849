// moe: veda::moe_route and veda::grouped_matmul against oneTBB + OpenBLAS
// composed by hand, float. Ratio = veda / the composition. Target: <= 1.10
// where veda runs on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/moe/contenders.hpp"
#include "veda/decision.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;
namespace mo = bench::moe;

std::vector<float> data(std::size_t n, double phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}

// Two contenders, interleaved; veda's runs first a few times to learn.
std::vector<Stats> race(const Options& opt, std::function<void()> by_hand, std::function<void()> veda) {
  std::vector<std::function<void()>> rs = {std::move(by_hand), std::move(veda)};
  for (int i = 0; i < 10; ++i) rs.back()();
  std::vector<int> batch;
  for (auto& r : rs) batch.push_back(calibrate_batch(r, 2e6));
  auto m = measure_interleaved(rs, opt.quick ? 5 : 11, batch);
  rs.back()();
  return m;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# moe (float): veda vs oneTBB + OpenBLAS by hand\n%s\n", machine_line().c_str());
  veda::init();
  std::vector<double> ratios;
  long long sink = 0;

  Table route("moe_route (ids, gates, counts, offsets, order, importance): median us",
              {"tokens x experts, k", "oneTBB", "veda", "veda tier", "veda / by hand"});
  struct RouteCase {
    std::size_t tokens, experts, k;
  };
  const std::vector<RouteCase> rc = opt.quick
                                        ? std::vector<RouteCase>{{4096, 8, 2}, {16384, 64, 2}, {32768, 128, 8}}
                                        : std::vector<RouteCase>{{4096, 8, 2}, {16384, 64, 2}, {32768, 128, 8},
                                                                 {262144, 64, 2}, {1024, 256, 1}};
  for (const RouteCase& c : rc) {
    const std::size_t n = c.tokens * c.k;
    mo::Routing r{c.tokens, c.experts, c.k, data(c.tokens * c.experts, 0.1), std::vector<float>(n),
                  std::vector<float>(c.experts), std::vector<std::int64_t>(n), {}, std::vector<std::int64_t>(c.experts + 1),
                  std::vector<std::int64_t>(n)};
    const veda::Array<float> logits(veda::Shape{c.tokens, c.experts}, std::vector<float>(r.logits));
    const auto m = race(opt, [&] { mo::tbb_route(r); }, [&] { sink += mo::veda_route(logits, c.k); });
    ratios.push_back(m[1].median / m[0].median);
    route.add({std::to_string(c.tokens) + " x " + std::to_string(c.experts) + ", " + std::to_string(c.k),
               fmt(m[0].median / 1e3, 1), fmt(m[1].median / 1e3, 1), veda::last_decision().tier,
               fmt(ratios.back(), 3)});
  }

  Table experts("grouped_matmul (expert e's rows x W_e; experts sized 1:2:3:4 in turn): median us",
                {"rows, d_in x d_out, experts", "OpenBLAS", "veda", "veda tier", "veda / by hand"});
  struct ExpertCase {
    std::size_t rows, d_in, d_out, experts;
  };
  const std::vector<ExpertCase> ec =
      opt.quick ? std::vector<ExpertCase>{{1024, 256, 256, 8}, {4096, 256, 512, 16}, {8192, 512, 256, 64}}
                : std::vector<ExpertCase>{{1024, 256, 256, 8}, {4096, 256, 512, 16}, {8192, 512, 256, 64},
                                          {16384, 1024, 1024, 8}, {512, 2048, 512, 64}};
  for (const ExpertCase& c : ec) {
    std::vector<std::int64_t> counts(c.experts);
    std::size_t left = c.rows, weight = 0;
    for (std::size_t g = 0; g < c.experts; ++g) weight += g % 4 + 1;
    for (std::size_t g = 0; g + 1 < c.experts; ++g) {
      counts[g] = static_cast<std::int64_t>(c.rows * (g % 4 + 1) / weight);
      left -= static_cast<std::size_t>(counts[g]);
    }
    counts.back() = static_cast<std::int64_t>(left);
    mo::Experts e{c.d_in, c.d_out, data(c.rows * c.d_in, 0.2), data(c.experts * c.d_in * c.d_out, 0.3),
                  std::vector<float>(c.rows * c.d_out), counts};
    const veda::Array<float> x(veda::Shape{c.rows, c.d_in}, std::vector<float>(e.x)),
        w(veda::Shape{c.experts, c.d_in, c.d_out}, std::vector<float>(e.w));
    const veda::Array<std::int64_t> vc(counts);
    float fs = 0;
    const auto m = race(opt, [&] { mo::openblas_experts(e); }, [&] { fs += mo::veda_experts(x, w, vc); });
    sink += std::isnan(fs);
    ratios.push_back(m[1].median / m[0].median);
    experts.add({std::to_string(c.rows) + ", " + std::to_string(c.d_in) + " x " + std::to_string(c.d_out) + ", " +
                     std::to_string(c.experts),
                 fmt(m[0].median / 1e3, 1), fmt(m[1].median / 1e3, 1), veda::last_decision().tier,
                 fmt(ratios.back(), 3)});
  }
  route.print();
  experts.print();
  if (sink == -1) std::printf("sink\n");
  write_json(opt.json_path, "moe", {route, experts}, {},
             {{"veda vs the composition (median over shapes; worst " +
                   fmt(*std::max_element(ratios.begin(), ratios.end()), 3) + ")",
               fmt(median_of(ratios), 3) + "x", "<= 1.10x", median_of(ratios) <= 1.10}});
  veda::shutdown();
  return 0;
}
