// expressions: veda's fused element-wise expressions against a hand-fused
// oneTBB loop (the target), a plain loop, Eigen's array expressions (one
// thread) and the same expression one operation at a time (a pass and a
// temporary per operation, as CuPy and NumPy run it; on the GPU where one is
// usable). Ratio = veda / the hand-fused oneTBB loop, measured in rotation
// with the others and ("alone") back to back. The oneTBB loop runs twice in
// each rotation: its second run against its first is the noise floor to
// read the target's ratio against.
// Targets: <= 1.05 from 2^16 elements; one pass over memory where one
// operation at a time takes one per operation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "bench/common/bench.hpp"
#include "bench/expressions/contenders.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;
namespace ex = bench::expressions;

ex::Data make_data(std::size_t n, std::size_t cols) {
  ex::Data d;
  d.cols = cols;
  d.x.resize(n);
  d.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    d.x[i] = static_cast<float>((i * 7919) % 2003) / 1001.0f - 1.0f;
    d.y[i] = static_cast<float>((i * 104729) % 1999) / 999.0f - 0.9f;
  }
  d.mu.resize(cols);
  d.sd.resize(cols);
  for (std::size_t j = 0; j < cols; ++j) {
    d.mu[j] = 0.01f * static_cast<float>(j % 17);
    d.sd[j] = 0.5f + 0.001f * static_cast<float>(j);
  }
  return d;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / std::max(1e-6, std::fabs(double(b[i]))));
  return worst;
}

// Evicts the caches, untimed, before each contender's batch, so that each
// sample starts with its operands in memory: a 128 MiB write for the cores'
// own caches, then the operands' lines flushed from every level, as a
// last-level cache may outlast the write (480 MiB on the Xeon of
// docs/benchmarks.md). With the write alone, whichever contender followed
// one that had read x and y last found them partly cached: the oneTBB loop
// after the plain loop, not veda after its one-op passes over temporaries
// (1.1-2.2x the oneTBB loop at 2^20 on separate copies, up to 1.14x on
// shared ones). The contenders share their memory (ex::Memory) as well.
void flush_lines(const float* p, std::size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  for (std::size_t i = 0; i < n; i += 64 / sizeof(float)) _mm_clflush(p + i);
  _mm_mfence();
#else
  (void)p, (void)n;  // elsewhere the write alone
#endif
}

void scrub_caches(const ex::Memory& m) {
  static std::vector<unsigned char> junk(std::size_t{128} << 20);
  for (std::size_t i = 0; i < junk.size(); i += 64) ++junk[i];
  for (const float* p : {m.x, m.y, static_cast<const float*>(m.out)}) flush_lines(p, m.n);
  flush_lines(m.mu, m.cols);
  flush_lines(m.sd, m.cols);
}

Table run(ex::Case c, const Options& opt, std::vector<double>& ratios, std::vector<double>& aa_ratios, bool& wrong) {
  Table t(std::string(ex::text(c)) + ": median us",
          {"n", "serial", "oneTBB fused", "Eigen", "one op at a time", "veda", "veda tier", "veda alone",
           "passes (veda / one op)", "veda / oneTBB", "alone / oneTBB", "oneTBB again / oneTBB"});
  const std::vector<std::size_t> sizes = opt.quick ? std::vector<std::size_t>{1 << 10, 1 << 16, 1 << 20, 1 << 23}
                                                   : std::vector<std::size_t>{1 << 10, 1 << 14, 1 << 16, 1 << 18,
                                                                              1 << 20, 1 << 22, 1 << 24};
  for (std::size_t n : sizes) {
    const ex::Memory m = ex::veda_setup(make_data(n, std::min<std::size_t>(n, 1024)));
    std::vector<float> expected(n);
    ex::Memory to_expected = m;
    to_expected.out = expected.data();
    ex::serial(c, to_expected);
    const bool eigen = ex::eigen_installed();
    std::vector<std::function<void()>> rs = {[&] { ex::serial(c, m); }, [&] { ex::tbb_loop(c, m); },
                                             [&] { ex::veda_one_op(c); }, [&] { ex::veda_fused(c); }};
    if (eigen) rs.push_back([&] { ex::eigen(c, m); });
    // The noise floor: the oneTBB loop again, as one more contender.
    const std::size_t again = rs.size();
    rs.push_back([&] { ex::tbb_loop(c, m); });
    for (int i = 0; i < 30; ++i) rs[3]();  // veda learns
    rs[2]();
    const double one_op_diff = max_rel_diff(ex::veda_result(), expected);
    rs[3]();
    const double fused_diff = max_rel_diff(ex::veda_result(), expected);
    if (one_op_diff > 1e-5 || fused_diff > 1e-5) {
      std::printf("WRONG: %s at n = %zu: veda differs from the plain loop by %.3g (fused), %.3g (one op)\n",
                  ex::text(c), n, fused_diff, one_op_diff);
      wrong = true;
    }
    // One batch size for all, from the oneTBB loop: each sample starts from
    // cold caches, and a contender given fewer calls per sample (from one
    // slow calibration call) would carry more of that first call's cost.
    // 15 samples even when quick: with 7, the oneTBB loop against itself
    // ranged 0.93-1.39 in one run on a 2-core Zen 4 guest.
    const std::vector<int> batch(rs.size(), calibrate_batch(rs[1], 2e6));
    const auto s = measure_interleaved(rs, 15, batch,
                                          [&m](std::size_t, bool before) { if (before) scrub_caches(m); });
    rs[3]();
    const std::string tier = ex::veda_tier();
    // veda's calls back to back: without the other contenders' oneTBB loops
    // (another arena) between them, whose workers migrate at every switch.
    const Stats alone = measure(rs[3], 15, batch[3]);
    const double ratio = s[3].median / s[1].median, aa = s[again].median / s[1].median;
    if (n >= (1 << 16)) ratios.push_back(ratio), aa_ratios.push_back(aa);
    t.add({std::to_string(n), fmt(s[0].median / 1e3, 1), fmt(s[1].median / 1e3, 1),
           eigen ? fmt(s[4].median / 1e3, 1) : "not installed",
           fmt(s[2].median / 1e3, 1) + " (" + ex::one_op_tier() + ")", fmt(s[3].median / 1e3, 1), tier,
           fmt(alone.median / 1e3, 1), "1 / " + std::to_string(ex::ops(c)), fmt(ratio, 3),
           fmt(alone.median / s[1].median, 3), fmt(aa, 3)});
  }
  t.print();
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# expressions: veda's fused expressions vs a hand-fused oneTBB loop, Eigen and one op at a time\n%s\n",
              machine_line().c_str());
  veda::init();
  std::vector<double> ratios, aa_ratios;
  std::vector<Table> tables;
  bool wrong = false;
  for (ex::Case c : ex::kCases) tables.push_back(run(c, opt, ratios, aa_ratios, wrong));
  // veda's loop on each CPU tier, forced, against the hand-written ones
  // without placement: in rotation (not after a cache eviction), so the
  // machine's drift affects all alike. At 2^16 the call's fixed costs show.
  Table forced("each CPU tier forced, in rotation: median us",
               {"expression", "n", "plain loop", "oneTBB fused", "veda serial", "veda tbb-static", "veda tbb-auto",
                "tbb-auto / oneTBB"});
  for (ex::Case c : ex::kCases)
    for (std::size_t n : {std::size_t{1} << 16, std::size_t{1} << 20}) {
      const ex::Memory m = ex::veda_setup(make_data(n, 1024));
      std::vector<std::function<void()>> rs = {[&] { ex::serial(c, m); }, [&] { ex::tbb_loop(c, m); }};
      for (const char* t : {"serial", "tbb-static", "tbb-auto"}) rs.push_back([&c, t] { ex::veda_fused(c, t); });
      const std::vector<int> batch(rs.size(), calibrate_batch(rs[1], 2e6));
      const auto s = measure_interleaved(rs, opt.quick ? 15 : 31, batch);
      std::vector<std::string> row = {ex::text(c), n == (1 << 16) ? "2^16" : "2^20"};
      for (const Stats& x : s) row.push_back(fmt(x.median / 1e3, 1));
      row.push_back(fmt(s[4].median / s[1].median, 3));
      forced.add(row);
    }
  forced.print();
  tables.push_back(forced);
  const double worst = *std::max_element(ratios.begin(), ratios.end());
  const auto [aa_lo, aa_hi] = std::minmax_element(aa_ratios.begin(), aa_ratios.end());
  write_json(opt.json_path, "expressions", tables, {},
             {{"fused expression vs the hand-fused oneTBB loop from 2^16 (worst; median " + fmt(median_of(ratios), 3) +
                   "; that loop against itself in the same rotation: " + fmt(*aa_lo, 3) + "-" + fmt(*aa_hi, 3) + ")",
               fmt(worst, 3) + "x", "<= 1.05x", worst <= 1.05}});
  veda::shutdown();
  return wrong ? 1 : 0;
}
