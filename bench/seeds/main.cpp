// seeds: the workloads of examples/ (after the seed documents) -- small and
// large matmul, Monte-Carlo pi, an image filter, linear-regression
// training, normalisation -- veda against hand-written serial, oneTBB and
// OpenBLAS code, interleaved in one run. Every contender's checksum must
// agree (else the run fails). Ratio = veda / the fastest peer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/seeds/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;
using namespace bench::seeds;

struct Contender {
  std::string name;
  std::function<double()> run;  // returns the checksum
};

const std::vector<std::string> kPeers = {"serial", "oneTBB", "OpenBLAS"};

// Times veda (first) against its peers; adds a table row and a series.
bool run_case(const std::string& name, double size, std::vector<Contender> cs, const Options& opt, Table& t,
              std::vector<Series>& series, std::vector<double>& ratios) {
  std::vector<double> sums;
  for (auto& c : cs) sums.push_back(c.run());
  for (std::size_t i = 1; i < cs.size(); ++i)
    if (std::abs(sums[i] - sums[0]) > 1e-3 * std::max(1.0, std::abs(sums[0]))) {
      std::fprintf(stderr, "%s: %s computed %.9g, veda %.9g\n", name.c_str(), cs[i].name.c_str(), sums[i], sums[0]);
      return false;
    }
  for (int i = 0; i < 10; ++i) cs[0].run();  // veda learns
  std::vector<std::function<void()>> runners;
  std::vector<int> batch;
  for (auto& c : cs) {
    runners.push_back([&c] { volatile double s = c.run(); (void)s; });
    batch.push_back(calibrate_batch(runners.back(), 2e7));
  }
  const auto s = measure_interleaved(runners, opt.quick ? 5 : 9, batch);
  cs[0].run();
  const std::string tier = veda::last_decision().tier;
  Series ser(name, "size");
  ser.add(size, "veda", Series::Role::Auto, s[0], tier);
  std::vector<std::string> row = {name, fmt(s[0].median / 1e6, 3) + " (" + fmt(s[0].min / 1e6, 3) + "-" +
                                            fmt(s[0].max / 1e6, 3) + ")", tier};
  std::size_t best = 1;
  for (const auto& peer : kPeers) {
    std::string cell = "-";
    for (std::size_t i = 1; i < cs.size(); ++i)
      if (cs[i].name == peer) {
        cell = fmt(s[i].median / 1e6, 3);
        ser.add(size, peer, Series::Role::Peer, s[i]);
        if (s[i].median < s[best].median) best = i;
      }
    row.push_back(cell);
  }
  ratios.push_back(s[0].median / s[best].median);
  row.insert(row.end(), {cs[best].name, fmt(ratios.back(), 3)});
  t.add(row);
  series.push_back(ser);
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# seeds: the example workloads, veda vs hand-written serial, oneTBB and OpenBLAS code\n%s\n",
              machine_line().c_str());
  veda::init();
  Table t("median ms per run (veda min-max)", {"workload", "veda ms", "veda tier (last call)", "serial ms",
                                               "oneTBB ms", "OpenBLAS ms", "best peer", "veda / best peer"});
  std::vector<Series> series;
  std::vector<double> ratios;
  bool ok = true;
  for (std::size_t n : {std::size_t{64}, std::size_t{2000}}) {
    Matmul m(n);
    ok &= run_case("matmul " + std::to_string(n) + "^2", double(n),
                   {{"veda", [&] { return matmul_veda(m); }}, {"OpenBLAS", [&] { return matmul_openblas(m); }}}, opt, t,
                   series, ratios);
  }
  const std::uint64_t points = 10'000'000;
  ok &= run_case("monte-carlo pi, 10^7 points", double(points),
                 {{"veda", [&] { return pi_veda(points); }},
                  {"serial", [&] { return pi_serial(points); }},
                  {"oneTBB", [&] { return pi_tbb(points); }}},
                 opt, t, series, ratios);
  Images img(opt.quick ? 25 : 100);
  ok &= run_case("5x5 blur, " + std::to_string(img.count) + " images 256^2", double(img.count),
                 {{"veda", [&] { return blur_veda(img); }},
                  {"serial", [&] { return blur_serial(img); }},
                  {"oneTBB", [&] { return blur_tbb(img); }}},
                 opt, t, series, ratios);
  const Regression reg(100'000, 16, opt.quick ? 10 : 20);
  ok &= run_case("linear regression, " + std::to_string(reg.steps) + " steps of 10^5 x 16", double(reg.m),
                 {{"veda", regression_veda(reg)},
                  {"serial", [&] { return regression_serial(reg); }},
                  {"oneTBB", [&] { return regression_tbb(reg); }},
                  {"OpenBLAS", [&] { return regression_openblas(reg); }}},
                 opt, t, series, ratios);
  Normalize nz(2000, 256);
  ok &= run_case("normalise 2000 x 256 + Gram", double(nz.n),
                 {{"veda", normalize_veda(nz)},
                  {"serial", [&] { return normalize_serial(nz); }},
                  {"oneTBB", [&] { return normalize_tbb(nz); }}},
                 opt, t, series, ratios);
  t.print();
  std::printf("\nveda / best peer: median %.3f, worst %.3f\n", median_of(ratios),
              *std::max_element(ratios.begin(), ratios.end()));
  write_json(opt.json_path, "seeds", {t}, series);
  veda::shutdown();
  return ok ? 0 : 1;
}
