// par_iter: veda pipelines against a hand-fused oneTBB loop, an OpenMP loop
// and a serial loop, interleaved in one run, over 10^3 ... 10^8 elements.
//   compute: map -> filter -> map -> sum over floats
//   stream:  map -> sum over doubles, memory-bound; GB/s next to STREAM triad
// Targets: within 5% of hand-fused oneTBB from 10^6 elements; never slower
// than 1.1x the serial loop at small sizes; memory-bound pipelines at >= 85%
// of the STREAM triad bandwidth measured here. The oneTBB loop runs twice in
// each rotation: its second run against its first is the noise floor to read
// the target's ratio against.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/par_iter/contenders.hpp"
#include "veda/decision.hpp"
#include "veda/runtime.hpp"

namespace {
using namespace bench;

template <class T>
Table run_case(const char* name, const char* title, std::vector<T (*)(const T*, std::size_t)> fns, bool stream,
               double triad, const Options& opt, std::vector<Series>& series, std::vector<double>& vs_tbb,
               std::vector<double>& aa) {
  Series ser(name, "n");
  Table t(title, {"n", "serial us", "oneTBB fused us", "OpenMP us", "veda us", "veda / oneTBB", "veda / serial",
                  "veda GB/s", stream ? "% of triad" : "veda tier", stream ? "veda tier" : "-",
                  "oneTBB again / oneTBB"});
  for (std::size_t n = 1000; n <= 100'000'000; n *= 10) {
    if (opt.quick && n == 100'000'000) break;
    std::vector<T> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<T>(i % 1000) * static_cast<T>(0.002);
    volatile T sink = 0;
    std::vector<std::function<void()>> runners;
    std::vector<int> batch;
    for (auto f : fns) runners.push_back([f, &x, &sink] { sink = f(x.data(), x.size()); });
    runners.push_back(runners[1]);  // the noise floor: the oneTBB loop again
    for (int i = 0; i < 30; ++i) runners[3]();  // veda learns
    for (auto& r : runners) batch.push_back(calibrate_batch(r, 3e6));
    const auto s = measure_interleaved(runners, opt.quick ? 7 : 15, batch);
    runners[3]();
    const std::string tier = veda::last_decision().tier;
    const char* names[] = {"serial", "oneTBB fused", "OpenMP"};
    for (int i = 0; i < 3; ++i) ser.add(static_cast<double>(n), names[i], Series::Role::Peer, s[i]);
    ser.add(static_cast<double>(n), "veda", Series::Role::Auto, s[3], tier);
    const double again = s[4].median / s[1].median;
    if (n >= 1'000'000) vs_tbb.push_back(s[3].median / s[1].median), aa.push_back(again);
    const double gbps = static_cast<double>(n) * sizeof(T) / s[3].median;
    t.add({std::to_string(n), fmt(s[0].median / 1e3, 3), fmt(s[1].median / 1e3, 3), fmt(s[2].median / 1e3, 3),
           fmt(s[3].median / 1e3, 3), fmt(s[3].median / s[1].median, 3), fmt(s[3].median / s[0].median, 3),
           fmt(gbps, 1), stream ? fmt(100.0 * gbps / triad, 0) + "%" : tier, stream ? tier : "-", fmt(again, 3)});
  }
  t.print();
  series.push_back(ser);
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# par_iter: pipelines vs hand-written loops\n%s\n", machine_line().c_str());
  veda::init();
  const double triad = par_iter::triad_gbps(std::size_t{1} << 25);
  std::printf("STREAM triad (oneTBB, 3 x 128 MiB): %.1f GB/s; OpenMP threads %d (OMP_WAIT_POLICY=%s)\n", triad,
              omp_get_max_threads(), std::getenv("OMP_WAIT_POLICY"));
  std::vector<Table> tables;
  std::vector<Series> series;
  std::vector<double> vs_tbb, aa;
  tables.push_back(run_case<float>("compute", "compute: map -> filter -> map -> sum (float)",
                                   {par_iter::serial, par_iter::tbb_fused, par_iter::omp_fused, par_iter::veda_pipeline},
                                   false, triad, opt, series, vs_tbb, aa));
  tables.push_back(run_case<double>("stream", "stream: map -> sum (double, memory-bound)",
                                    {par_iter::serial_stream, par_iter::tbb_stream, par_iter::omp_stream,
                                     par_iter::veda_stream},
                                    true, triad, opt, series, vs_tbb, aa));
  const double worst = *std::max_element(vs_tbb.begin(), vs_tbb.end());
  write_json(opt.json_path, "par_iter", tables, series,
             {{"pipelines vs hand-fused oneTBB, from 10^6 elements (median; worst " + fmt(worst, 3) +
                   "; that loop against itself in the same rotation: median " + fmt(median_of(aa), 3) + ", " +
                   fmt(*std::min_element(aa.begin(), aa.end()), 3) + "-" +
                   fmt(*std::max_element(aa.begin(), aa.end()), 3) + ")",
               fmt(median_of(vs_tbb), 3) + "x", "<= 1.05x", median_of(vs_tbb) <= 1.05}});
  veda::shutdown();
  return 0;
}
