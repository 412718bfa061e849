// spmv: y = A x by veda::spmv_into (each tier forced, and auto) against a
// serial CSR row loop, oneTBB and OpenMP over rows, interleaved in one run,
// on two kinds of matrix: the 5-point Laplacian of a k x k grid (5
// non-zeros a row, banded) and a random matrix with 1-31 non-zeros a row
// and one row in 1000 a hundred times longer (gathers that miss the cache,
// uneven rows). Every result is checked against the serial loop's.
// Target: auto <= 1.05x the best CPU peer from 2^16 rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/spmv/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;
namespace sp = bench::spmv;

sp::Csr laplacian(std::size_t k) {
  sp::Csr a;
  a.rows = a.cols = k * k;
  a.off.push_back(0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      auto put = [&](std::size_t c, double v) {
        a.idx.push_back(static_cast<std::int32_t>(c));
        a.val.push_back(v);
      };
      const std::size_t r = i * k + j;
      if (i > 0) put(r - k, -1);
      if (j > 0) put(r - 1, -1);
      put(r, 4);
      if (j + 1 < k) put(r + 1, -1);
      if (i + 1 < k) put(r + k, -1);
      a.off.push_back(static_cast<std::int32_t>(a.idx.size()));
    }
  return a;
}

sp::Csr random_rows(std::size_t n) {
  std::mt19937 g(42);
  sp::Csr a;
  a.rows = a.cols = n;
  a.off.push_back(0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t len = (r % 1000 == 999) ? std::min<std::size_t>(n, 1600) : 1 + g() % 31;
    for (std::size_t k = 0; k < len; ++k) {
      a.idx.push_back(static_cast<std::int32_t>(g() % n));
      a.val.push_back(static_cast<double>(g() % 1000) / 500.0 - 1.0);
    }
    a.off.push_back(static_cast<std::int32_t>(a.idx.size()));
  }
  return a;
}

bool close(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 1e-9 * (1 + std::abs(b[i]))) return false;
  return true;
}

struct Result {
  std::vector<double> ratios, regrets;
  bool all_close = true;
};

void run_kind(const char* kind, const std::vector<std::size_t>& sizes, sp::Csr (*make)(std::size_t),
              const std::vector<std::string>& tiers, const Options& opt, std::vector<Table>& tables,
              std::vector<Series>& series, Result& res) {
  std::vector<std::string> cols = {"rows", "non-zeros", "serial us", "oneTBB us", "OpenMP us"};
  for (const auto& t : tiers) cols.push_back("veda " + t + " us");
  cols.insert(cols.end(), {"veda auto us", "auto tier", "auto GB/s", "auto / best CPU peer", "regret"});
  Table t(std::string("spmv, double, ") + kind, cols);
  Series ser(std::string("spmv, double, ") + kind, "non-zeros");
  for (std::size_t size : sizes) {
    const sp::Csr a = make(size);
    std::vector<double> x(a.cols), y(a.rows);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.01 * static_cast<double>(i));
    sp::veda_setup(a, x);
    std::vector<std::function<void()>> run = {[&] { sp::serial(a, x.data(), y.data()); },
                                              [&] { sp::tbb(a, x.data(), y.data()); },
                                              [&] { sp::omp(a, x.data(), y.data()); }};
    for (const auto& tier : tiers) run.push_back([tier] { sp::veda_spmv(tier); });
    run.push_back([] { sp::veda_spmv(""); });
    run[0]();
    const std::vector<double> want = y;
    for (std::size_t c = 3; c < run.size(); ++c) {
      run[c]();
      res.all_close &= close(sp::veda_result(), want);
    }
    for (int i = 0; i < 30; ++i) run.back()();  // auto learns
    std::vector<int> batch;
    for (auto& r : run) batch.push_back(calibrate_batch(r, 3e6));
    const auto s = measure_interleaved(run, opt.quick ? 7 : 15, batch);
    run.back()();
    const std::string tier = sp::veda_tier();
    const double nnz = static_cast<double>(a.val.size());
    ser.add(nnz, "serial loop", Series::Role::Peer, s[0]);
    ser.add(nnz, "oneTBB rows", Series::Role::Peer, s[1]);
    ser.add(nnz, "OpenMP rows", Series::Role::Peer, s[2]);
    for (std::size_t i = 0; i < tiers.size(); ++i) ser.add(nnz, "veda " + tiers[i], Series::Role::Forced, s[3 + i]);
    ser.add(nnz, "veda auto", Series::Role::Auto, s.back(), tier);
    const double aut = s.back().median, best_cpu = std::min({s[0].median, s[1].median, s[2].median});
    double best_tier = aut;
    for (std::size_t c = 3; c + 1 < s.size(); ++c) best_tier = std::min(best_tier, s[c].median);
    if (a.rows >= (1u << 16)) res.ratios.push_back(aut / best_cpu);
    res.regrets.push_back(aut / best_tier);
    const double bytes = nnz * 12 + static_cast<double>(a.rows) * 12 + static_cast<double>(a.cols) * 8;
    std::vector<std::string> row = {std::to_string(a.rows), std::to_string(a.val.size())};
    for (const auto& m : s) row.push_back(fmt(m.median / 1e3, 1));
    row.insert(row.end(), {tier, fmt(bytes / aut, 1), fmt(aut / best_cpu, 3), fmt(aut / best_tier, 3)});
    t.add(row);
  }
  t.print();
  tables.push_back(t);
  series.push_back(ser);
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# spmv: veda::spmv_into vs serial, oneTBB and OpenMP CSR row loops\n%s\n", machine_line().c_str());
  veda::init();
  std::vector<std::string> tiers = {"serial", "tbb-auto"};
  if (veda::get_runtime().gpu_usable()) tiers.insert(tiers.end(), {"cuda", "gpu-cusparse"});
  std::vector<Table> tables;
  std::vector<Series> series;
  Result res;
  const std::vector<std::size_t> grids = opt.quick ? std::vector<std::size_t>{64, 256, 1024}
                                                   : std::vector<std::size_t>{64, 128, 256, 512, 1024, 2048};
  const std::vector<std::size_t> randoms = opt.quick ? std::vector<std::size_t>{4096, 65536, 1 << 20}
                                                     : std::vector<std::size_t>{4096, 16384, 65536, 262144, 1 << 20,
                                                                                1 << 22};
  run_kind("5-point Laplacian", grids, laplacian, tiers, opt, tables, series, res);
  run_kind("random rows", randoms, random_rows, tiers, opt, tables, series, res);
  std::printf("\nevery result matches the serial loop's: %s\n", res.all_close ? "yes" : "NO");
  const double worst = *std::max_element(res.ratios.begin(), res.ratios.end());
  std::printf("auto / best CPU peer from 2^16 rows, median: %.3f (worst %.3f); regret median %.3f\n",
              median_of(res.ratios), worst, median_of(res.regrets));
  write_json(opt.json_path, "spmv", tables, series,
             {{"spmv auto vs the best CPU peer from 2^16 rows (median; worst " + fmt(worst, 3) + ")",
               fmt(median_of(res.ratios), 3) + "x", "<= 1.05x", median_of(res.ratios) <= 1.05}});
  sp::veda_release();
  veda::shutdown();
  return res.all_close ? 0 : 1;
}
