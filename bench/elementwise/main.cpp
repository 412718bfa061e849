// elementwise: saxpy, an exp/sin map and a float sum over 2^0 ... 2^26
// elements: veda (automatic placement) against a serial loop, raw oneTBB
// (static and auto partitioner), OpenMP, std::execution::par_unseq and
// StarPU, interleaved in one run. Ratio = veda / the fastest peer.
// Targets: median ratio <= 1.05 per workload; veda never the slowest.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/elementwise/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;
using namespace bench::elementwise;

const char* name_of(Work w) { return w == Work::Saxpy ? "saxpy" : w == Work::ExpSin ? "expsin" : "sum"; }

Runner veda_runner(Work w, Workload& d) {
  switch (w) {
    case Work::Saxpy: return placement::saxpy(d, "", "saxpy");
    case Work::ExpSin: return placement::expsin(d, "", "expsin");
    case Work::Sum: return placement::sum(d, "", "");  // veda::sum(x): its own site, named "sum"
  }
  return {};
}

struct Size {
  int e;
  std::vector<Stats> peers;  // serial, tbb-static, tbb-auto, OpenMP, std::par[, StarPU]
  Stats veda;
  std::string tier;
};

// StarPU's CPU workers poll for tasks while idle, which halves the speed of
// anything else running (measured: a serial loop ran 2x slower while StarPU
// was up). So StarPU is measured in its own phase, started only for it; the
// other contenders are interleaved with each other.
void measure_starpu(Work w, const Options& opt, std::vector<Size>& sizes) {
  std::string why;
  if (!starpu::start(why)) return;
  for (auto& sz : sizes) {
    Workload d(std::size_t{1} << sz.e);
    Runner r = starpu::make(w, d);
    sz.peers.push_back(measure(r, opt.quick ? 7 : 15, calibrate_batch(r, 2e6)));
  }
  starpu::stop();
}

void run(Work w, const Options& opt, bool with_starpu, Table& summary, std::vector<Series>& series) {
  std::vector<std::string> peers = {"serial", "tbb-static", "tbb-auto", "OpenMP", "std::par"};
  std::vector<Size> sizes;
  for (int e = 0; e <= (opt.quick ? 22 : 26); e += 2) {
    Workload d(std::size_t{1} << e);
    std::vector<Runner> rs = {serial(w, d), tbb_static(w, d), tbb_auto(w, d), omp(w, d), stdpar(w, d),
                              veda_runner(w, d)};
    for (int i = 0; i < 30; ++i) rs.back()();  // veda learns
    std::vector<int> batch;
    for (auto& r : rs) batch.push_back(calibrate_batch(r, 2e6));
    auto s = measure_interleaved(rs, opt.quick ? 7 : 15, batch);
    rs.back()();
    const Stats v = s.back();
    s.pop_back();
    sizes.push_back({e, s, v, veda::last_decision().tier});
  }
  if (with_starpu) {
    measure_starpu(w, opt, sizes);
    peers.push_back("StarPU");
  }
  std::vector<std::string> cols = {"n"};
  for (const auto& p : peers) cols.push_back(p + " us");
  cols.insert(cols.end(), {"veda us (min-max)", "veda tier", "best peer", "veda / best peer"});
  Table t(std::string(name_of(w)) + ": median us per call", cols);
  Series ser(name_of(w), "n");
  std::vector<double> ratios;
  for (const auto& sz : sizes) {
    const double n = std::ldexp(1.0, sz.e);
    for (std::size_t i = 0; i < sz.peers.size(); ++i) ser.add(n, peers[i], Series::Role::Peer, sz.peers[i]);
    ser.add(n, "veda", Series::Role::Auto, sz.veda, sz.tier);
    std::size_t best = 0;
    for (std::size_t i = 1; i < sz.peers.size(); ++i)
      if (sz.peers[i].median < sz.peers[best].median) best = i;
    const double ratio = sz.veda.median / sz.peers[best].median;
    ratios.push_back(ratio);
    std::vector<std::string> row = {"2^" + std::to_string(sz.e)};
    for (const auto& p : sz.peers) row.push_back(fmt(p.median / 1e3, 3));
    row.insert(row.end(), {fmt(sz.veda.median / 1e3, 3) + " (" + fmt(sz.veda.min / 1e3, 3) + "-" +
                               fmt(sz.veda.max / 1e3, 3) + ")",
                           sz.tier, peers[best], fmt(ratio, 3)});
    t.add(row);
  }
  t.print();
  summary.add({name_of(w), fmt(median_of(ratios), 3), fmt(*std::max_element(ratios.begin(), ratios.end()), 3)});
  series.push_back(ser);
}
}  // namespace

int main(int argc, char** argv) {
  quiet_idle_threads(argv);
  const Options opt = Options::parse(argc, argv);
  std::printf("# elementwise: veda vs serial, oneTBB, OpenMP, std::execution, StarPU\n%s\n", machine_line().c_str());
  veda::init();
  std::string why;
  const bool with_starpu = starpu::start(why);  // a trial start: is StarPU usable here?
  if (with_starpu) starpu::stop();
  std::printf("OpenMP threads %d (OMP_WAIT_POLICY=%s); StarPU %s\n", omp_get_max_threads(),
              std::getenv("OMP_WAIT_POLICY"),
              with_starpu ? "CPU workers, measured in a phase of its own" : ("unavailable: " + why).c_str());
  Table summary("veda / best peer, over sizes", {"workload", "median", "worst"});
  std::vector<Series> series;
  for (Work w : {Work::Saxpy, Work::ExpSin, Work::Sum}) run(w, opt, with_starpu, summary, series);
  summary.print();
  write_json(opt.json_path, "elementwise", {}, series);
  veda::shutdown();
  return 0;
}
