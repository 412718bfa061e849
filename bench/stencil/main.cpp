// stencil: one 5-point Jacobi sweep over an n x n grid of doubles by
// veda::parallel_for (each tier forced, and auto) against a serial loop,
// oneTBB over 2-D blocks and OpenMP over rows, and on a GPU a hand-written
// CUDA kernel on resident data, interleaved in one run. Every contender's
// grid is checked against the serial loop's. Targets: auto <= 1.05x the best
// CPU peer from 2^16 points; on a GPU, veda's cuda tier within 10% of the
// hand-written kernel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/stencil/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;
namespace st = bench::stencil;

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 1e-12 * (1 + std::abs(b[i]))) return false;
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# stencil: veda::parallel_for vs serial, oneTBB, OpenMP (and CUDA) Jacobi sweeps\n%s\n",
              machine_line().c_str());
  veda::init();
  std::vector<std::string> tiers = {"serial", "tbb-static", "tbb-auto"};
  const bool gpu = veda::get_runtime().gpu_usable();
  if (gpu) tiers.push_back("cuda");
  std::vector<std::string> cols = {"n x n", "serial us", "oneTBB us", "OpenMP us"};
  if (gpu) cols.push_back("CUDA kernel us");
  for (const auto& t : tiers) cols.push_back("veda " + t + " us");
  cols.insert(cols.end(), {"veda auto us", "auto tier", "auto / best CPU peer", "regret"});
  Table t("5-point Jacobi sweep, double", cols);
  Series ser("5-point Jacobi sweep, double", "points");
  std::vector<double> ratios, regrets, vs_cuda;
  bool all_same = true;
  const std::vector<std::size_t> sizes = opt.quick ? std::vector<std::size_t>{64, 256, 1024, 4096}
                                                   : std::vector<std::size_t>{64, 128, 256, 512, 1024, 2048, 4096, 8192};
  for (std::size_t n : sizes) {
    std::vector<double> u(n * n), v(n * n, 0.0);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = std::sin(0.001 * static_cast<double>(i));
    st::veda_setup(u, n);
    const bool cuda = gpu && st::cuda_setup(u, n);
    std::vector<std::function<void()>> run = {[&] { st::serial(u.data(), v.data(), n); },
                                              [&] { st::tbb(u.data(), v.data(), n); },
                                              [&] { st::omp(u.data(), v.data(), n); }};
    if (cuda) run.push_back([] { st::cuda_sweep(); });
    const std::size_t first_veda = run.size();
    for (const auto& tier : tiers) run.push_back([tier] { st::veda_sweep(tier); });
    run.push_back([] { st::veda_sweep(""); });
    run[0]();
    const std::vector<double> want = v;
    for (std::size_t c = first_veda; c < run.size(); ++c) {
      run[c]();
      all_same &= same(st::veda_result(), want);
    }
    if (cuda) all_same &= same(st::cuda_result(), want);
    for (int i = 0; i < 30; ++i) run.back()();  // auto learns
    std::vector<int> batch;
    for (auto& r : run) batch.push_back(calibrate_batch(r, 3e6));
    const auto s = measure_interleaved(run, opt.quick ? 7 : 15, batch);
    run.back()();
    const std::string tier = st::veda_tier();
    const double x = static_cast<double>(n * n);
    ser.add(x, "serial loop", Series::Role::Peer, s[0]);
    ser.add(x, "oneTBB blocked_range2d", Series::Role::Peer, s[1]);
    ser.add(x, "OpenMP rows", Series::Role::Peer, s[2]);
    if (cuda) ser.add(x, "CUDA kernel", Series::Role::Peer, s[3]);
    for (std::size_t i = 0; i < tiers.size(); ++i)
      ser.add(x, "veda " + tiers[i], Series::Role::Forced, s[first_veda + i]);
    ser.add(x, "veda auto", Series::Role::Auto, s.back(), tier);
    const double aut = s.back().median, best_cpu = std::min({s[0].median, s[1].median, s[2].median});
    double best_tier = aut;
    for (std::size_t c = first_veda; c + 1 < s.size(); ++c) best_tier = std::min(best_tier, s[c].median);
    if (n * n >= (1u << 16)) ratios.push_back(aut / best_cpu);
    regrets.push_back(aut / best_tier);
    if (cuda) vs_cuda.push_back(s[first_veda + tiers.size() - 1].median / s[3].median);
    std::vector<std::string> row = {std::to_string(n) + " x " + std::to_string(n)};
    for (const auto& m : s) row.push_back(fmt(m.median / 1e3, 1));
    row.insert(row.end(), {tier, fmt(aut / best_cpu, 3), fmt(aut / best_tier, 3)});
    t.add(row);
  }
  t.print();
  std::printf("\nevery contender's grid matches the serial loop's: %s\n", all_same ? "yes" : "NO");
  std::printf("auto / best CPU peer from 2^16 points, median: %.3f (worst %.3f); regret median %.3f\n",
              median_of(ratios), *std::max_element(ratios.begin(), ratios.end()), median_of(regrets));
  std::vector<Target> targets = {{"stencil auto vs the best CPU peer from 2^16 points (median; worst " +
                                      fmt(*std::max_element(ratios.begin(), ratios.end()), 3) + ")",
                                  fmt(median_of(ratios), 3) + "x", "<= 1.05x", median_of(ratios) <= 1.05}};
  if (!vs_cuda.empty()) {
    std::printf("veda cuda tier / hand-written CUDA kernel, median: %.3f\n", median_of(vs_cuda));
    targets.push_back({"stencil veda cuda tier vs a hand-written CUDA kernel, resident data (median)",
                       fmt(median_of(vs_cuda), 3) + "x", "<= 1.10x", median_of(vs_cuda) <= 1.10});
  }
  write_json(opt.json_path, "stencil", {t}, {ser}, targets);
  st::veda_release();
  veda::shutdown();
  return all_same ? 0 : 1;
}
