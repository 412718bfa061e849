// placement: does automatic placement pick the fastest tier? For saxpy, an
// exp/sin map and a float sum at 2^0 ... 2^26 elements, veda auto is timed
// against veda with each tier forced (serial, oneTBB static and auto, CUDA
// when a GPU is usable). regret = auto / best forced, once warmed up; the
// first-call regret times a fresh call site's very first call. Targets:
// median regret <= 1.05 and worst <= 1.25 per workload. Also: the oneTBB
// wake-up after idling, single calls and bursts, with worker pinning off
// and on (the default where veda's threads take every CPU).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "bench/common/bench.hpp"
#include "bench/placement/contenders.hpp"
#include "veda/veda.hpp"

namespace {
using namespace bench;
using placement::Runner;
using placement::Workload;
using Factory = Runner (*)(Workload&, const std::string&, const std::string&);


Stats time_runner(const Runner& r, int samples) {
  return measure(r, samples, calibrate_batch(r, 3e6));
}

// Warm-up: let the site learn (bounded by calls and time).
void warm(const Runner& r) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) {
    r();
    if (i >= 8 && std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(1500)) break;
  }
}

struct Summary {
  std::vector<double> regret, first;
};

void run_case(const char* label, Factory make, const Options& opt, std::vector<Series>& series,
              std::map<std::string, Summary>& sums) {
  const auto tiers = placement::forced_tiers();
  std::vector<std::string> cols{"n", "auto us", "auto tier"};
  for (const auto& t : tiers) cols.push_back(t + " us");
  cols.insert(cols.end(), {"regret", "first-call regret"});
  Table table(std::string(label) + ": veda auto vs forced tiers (median us)", cols);
  Series ser(label, "n");
  const int samples = opt.quick ? 5 : 9;
  for (int lg = 0; lg <= 26; lg += opt.quick ? 4 : 1) {
    if (opt.quick && lg == 24) lg = 26;
    const std::size_t n = std::size_t{1} << lg;
    Workload w(n);
    std::vector<Runner> runners;
    for (const auto& t : tiers) runners.push_back(make(w, t, std::string(label) + "-" + t));
    for (auto& r : runners) r();  // first touch of the data and of each tier
    // First call of a fresh call site at this size.
    Runner fresh = make(w, "", std::string(label) + "-first-" + std::to_string(lg));
    const auto f0 = std::chrono::steady_clock::now();
    fresh();
    const double first = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - f0).count();
    Runner aut = make(w, "", std::string(label) + "-auto");
    warm(aut);
    aut();
    const std::string tier = veda::last_decision().tier;
    runners.push_back(aut);
    std::vector<int> batch;
    for (auto& r : runners) batch.push_back(calibrate_batch(r, 3e6));
    const auto stats = measure_interleaved(runners, samples, batch);
    std::vector<double> forced;
    for (std::size_t i = 0; i + 1 < stats.size(); ++i) {
      forced.push_back(stats[i].median);
      ser.add(static_cast<double>(n), tiers[i], Series::Role::Forced, stats[i]);
    }
    ser.add(static_cast<double>(n), "auto", Series::Role::Auto, stats.back(), tier);
    const double best = *std::min_element(forced.begin(), forced.end());
    const double auto_ns = stats.back().median;
    const double regret = auto_ns / best;
    sums[label].regret.push_back(regret);
    sums[label].first.push_back(first / best);
    std::vector<std::string> row{"2^" + std::to_string(lg), fmt(auto_ns / 1e3, 3), tier};
    for (double f : forced) row.push_back(fmt(f / 1e3, 3));
    row.push_back(fmt(regret, 3));
    row.push_back(fmt(first / best, 2));
    table.add(row);
  }
  table.print();
  series.push_back(ser);
}

void wake_and_pinning(std::vector<Table>& tables) {
  Table t("oneTBB wake-up and worker pinning (saxpy)", {"case", "n", "pin_workers", "median us"});
  for (bool pin : {false, true}) {
    veda::shutdown();
    veda::init(veda::Config::builder().pin_workers(pin).build());
    for (std::size_t n : {std::size_t{1} << 16, std::size_t{1} << 22}) {
      Workload w(n);
      Runner r = placement::saxpy(w, "tbb-static", "pin-probe");
      t.add({"warm, forced tbb-static", std::to_string(n), pin ? "on" : "off", fmt(time_runner(r, 9).median / 1e3, 3)});
      std::vector<double> cold;
      for (int i = 0; i < 7; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        const auto t0 = std::chrono::steady_clock::now();
        r();
        cold.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      t.add({"after 30 ms idle, forced tbb-static", std::to_string(n), pin ? "on" : "off", fmt(median_of(cold), 3)});
    }
    // Bursts of calls after the caller idled a few ms (a frame loop, a
    // simulation step between I/O): unpinned, on the 2-CPU virtual machines
    // of docs/benchmarks.md, the woken worker joined none of the burst's calls.
    const std::size_t n = std::size_t{1} << 18;
    Workload w(n);
    const Runner automatic = placement::saxpy(w, "", "pin-burst");
    const auto burst = [&](const Runner& r) {
      std::vector<double> calls;
      for (int round = 0; round < 40; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        for (int i = 0; i < 30; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          r();
          if (round >= 10) calls.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
      }
      return median_of(calls);
    };
    t.add({"bursts of 30 after 5 ms idle, auto placement", std::to_string(n), pin ? "on" : "off",
           fmt(burst(automatic), 3)});
    t.add({"bursts of 30 after 5 ms idle, forced tbb-auto", std::to_string(n), pin ? "on" : "off",
           fmt(burst(placement::saxpy(w, "tbb-auto", "pin-burst-forced")), 3)});
  }
  t.print();
  tables.push_back(t);
}
}  // namespace

int main(int argc, char** argv) {
  const Options opt = Options::parse(argc, argv);
  std::printf("# placement: automatic placement regret\n%s\n", machine_line().c_str());
  veda::init();
  std::printf("profile: %s\n", veda::get_runtime().describe().c_str());
  std::vector<Table> tables;
  std::vector<Series> series;
  std::map<std::string, Summary> sums;
  run_case("saxpy", placement::saxpy, opt, series, sums);
  run_case("expsin", placement::expsin, opt, series, sums);
  run_case("sum", placement::sum, opt, series, sums);
  Table summary("regret summary (auto / best forced)", {"workload", "median regret", "worst regret", "median first-call regret"});
  for (auto& [name, s] : sums)
    summary.add({name, fmt(median_of(s.regret), 3), fmt(*std::max_element(s.regret.begin(), s.regret.end()), 3),
                 fmt(median_of(s.first), 2)});
  summary.print();
  tables.push_back(summary);  // the first-call regret is only here
  wake_and_pinning(tables);
  write_json(opt.json_path, "placement", tables, series);
  veda::shutdown();
  return 0;
}
