// Benchmark support shared by every case in bench/: timing as medians of
// repeated batches, a results table printed as Markdown (and optionally
// written as JSON), and a line naming the machine and the date.
//
// Each case lives in bench/<case>/ with one file per contender (veda.cpp,
// tbb.cpp, omp.cpp, serial.cpp, ...) and a main.cpp that runs them side by
// side in one process, so ratios are measured under the same conditions.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

struct Stats {
  double median = 0, min = 0, max = 0;  // nanoseconds per call
};

// Runs `batch` calls of f per sample, `samples` samples after `warmup`
// samples; returns per-call figures.
template <class F>
Stats measure(F&& f, int samples = 15, int batch = 1, int warmup = 2) {
  std::vector<double> t;
  for (int s = 0; s < samples + warmup; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int b = 0; b < batch; ++b) f();
    const auto t1 = std::chrono::steady_clock::now();
    if (s >= warmup) t.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

// Times several contenders in rotation (sample k of each before sample k+1
// of any), so drift in the machine's speed affects them all alike. Each
// sample's order is shuffled (the same shuffles in every run), so that what
// a contender leaves behind (oneTBB's workers asleep after a serial loop,
// awake after a parallel one; the caches) weighs on all alike, not always
// on the same next one: on a 2-core Zen 4 guest, veda's forced tbb-auto
// saxpy on 2^22 floats took 1.07-1.09x oneTBB's own loop right after the
// serial loop, 0.99-1.03x right after the tbb-static one.
// `around`, when given, runs untimed as around(c, true) before contender c's
// batch and around(c, false) after it (to start every contender from the same
// cache state, or to wake a runtime's workers only for its own batch).
template <class F>
std::vector<Stats> measure_interleaved(const std::vector<F>& fs, int samples, const std::vector<int>& batch,
                                       const std::function<void(std::size_t, bool)>& around = {}) {
  std::vector<std::vector<double>> t(fs.size());
  std::vector<std::size_t> order(fs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffle_with(1);
  for (int s = 0; s < samples + 1; ++s) {
    std::shuffle(order.begin(), order.end(), shuffle_with);
    for (const std::size_t c : order) {
      if (around) around(c, true);
      const auto t0 = std::chrono::steady_clock::now();
      for (int b = 0; b < batch[c]; ++b) fs[c]();
      const auto t1 = std::chrono::steady_clock::now();
      if (around) around(c, false);
      if (s > 0) t[c].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch[c]);
    }
  }
  std::vector<Stats> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back({v[v.size() / 2], v.front(), v.back()});
  }
  return out;
}

// Picks a batch size so one sample takes about `target_ns`, from a batch
// grown until it takes a tenth of that. Not from single calls: theirs is
// mostly the clock's and a first call's time (a veda sum's first call after
// oneTBB's workers left, which re-checks their sleep, made batches of 256
// floats last 20 us instead of 2 ms, so that one call weighed on each: 17-40
// ns a call for a 13 ns call). That batch is timed twice and the faster
// time counts: one stall of the machine during it had made a 2^14-element
// expsin's batches 7 calls instead of 55.
template <class F>
int calibrate_batch(F&& f, double target_ns = 2e6) {
  const auto time = [&](long n) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) f();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  };
  for (long n = 1;; n *= 2) {
    double ns = time(n);
    if (ns >= target_ns / 10 || n >= (1L << 28)) {
      ns = std::min(ns, time(n));
      return static_cast<int>(std::clamp(static_cast<double>(n) * target_ns / std::max(ns, 1.0), 1.0, 1e9));
    }
  }
}

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string machine_line();  // CPU model (family, model, AVX level), threads, GPU or why none, date

// Contenders run in rotation, so a runtime whose idle threads keep spinning
// (libgomp's default, OpenBLAS's after each call) takes the cores from the
// next contender and skews every ratio. Call first in main: sets
// OMP_WAIT_POLICY=passive and OPENBLAS_THREAD_TIMEOUT=16 unless the user set
// them, and restarts the program once, because both libraries read them when
// they load. OpenBLAS's worker then spins 2^16 TSC cycles (about 25 us)
// after a call before it sleeps: long enough that back-to-back calls find it
// awake, as with its default (2^28), short enough to leave the next
// contender the cores. With the shortest spin (4), whether it slept before
// the next call was a race whose futex wake-up cost 10-20% of a 256^2 sgemm.
void quiet_idle_threads(char** argv);

struct Options {
  bool quick = false;
  std::string json_path;
  static Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--quick") o.quick = true;
      else if (a == "--json" && i + 1 < argc) o.json_path = argv[++i];
      else {
        std::fprintf(stderr, "usage: %s [--quick] [--json file]\n", argv[0]);
        std::exit(2);
      }
    }
    return o;
  }
};

// Rows of named columns; printed as a Markdown table, saved as JSON.
class Table {
 public:
  Table(std::string title, std::vector<std::string> columns)
      : title_(std::move(title)), cols_(std::move(columns)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const;
  void append_json(std::ostringstream& os) const;
  const std::string& title() const { return title_; }

 private:
  std::string title_;
  std::vector<std::string> cols_;
  std::vector<std::vector<std::string>> rows_;
};

// The raw timings of one case for scripts/bench.sh's report: per size x,
// each contender's Stats, and what the contender is. The report derives
// ratios to the best peer (Auto / fastest Peer) and regret (Auto / fastest
// Forced veda tier) from these, and plots time against x.
class Series {
 public:
  enum class Role { Peer, Forced, Auto };
  Series(std::string name, std::string x_label) : name_(std::move(name)), x_(std::move(x_label)) {}
  // `note`: what to show next to the figure (veda's chosen tier, say).
  void add(double x, const std::string& contender, Role role, const Stats& s, const std::string& note = "") {
    points_.push_back({x, contender, role, s, note});
  }
  void append_json(std::ostringstream& os) const;

 private:
  struct Point {
    double x;
    std::string contender;
    Role role;
    Stats s;
    std::string note;
  };
  std::string name_, x_;
  std::vector<Point> points_;
};

// A figure checked against one of the project's performance targets; the
// report lists them all. `met` is judged by the bench that measured it.
struct Target {
  std::string what, measured, target;
  bool met;
};

// Writes a run (machine line, tables, series, targets) to `path` as JSON.
void write_json(const std::string& path, const std::string& bench_name, const std::vector<Table>& tables,
                const std::vector<Series>& series = {}, const std::vector<Target>& targets = {});

std::string fmt(double v, int precision = 2);
std::string fmt_bytes(std::size_t b);

}  // namespace bench
