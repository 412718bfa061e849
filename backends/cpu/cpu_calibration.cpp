#include "backends/cpu/cpu_calibration.hpp"

#include "backends/cpu/gemm.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace veda::detail {
namespace {

template <class F>
double time_us(F&& f) {
  const auto t0 = now_ns();
  f();
  return static_cast<double>(now_ns() - t0) / 1e3;
}

double median(std::vector<double> t) {
  const auto mid = t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2);
  std::nth_element(t.begin(), mid, t.end());
  return *mid;
}

template <class F>
double median_us(F&& f, int reps) {
  std::vector<double> t(static_cast<std::size_t>(reps));
  for (auto& x : t) x = time_us(f);
  return median(std::move(t));
}

// Prevents the optimiser from deleting a loop whose result is unused.
void keep(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

double map_ns_per_elem() {
  constexpr std::size_t n = 4096;  // in L1/L2: the compute side of a map
  std::vector<float> x(n, 1.0f), y(n, 2.0f), out(n);
  auto run = [&] {
    for (std::size_t i = 0; i < n; ++i) out[i] = 2.0f * x[i] + y[i];
    keep(out.data());
  };
  return median_us(run, 201) * 1e3 / n;
}

void bandwidth(CpuExecutor& exec, CpuProfile& cpu) {
  // Triad over three 32 MiB arrays: larger than the last-level cache here.
  constexpr std::size_t n = std::size_t{8} << 20;
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  auto triad = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + 0.5f * c[i];
  };
  exec.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](auto r) {
      for (std::size_t i = r.begin(); i < r.end(); ++i) a[i] = b[i] = c[i] = 1.0f;
    });
  });
  const double bytes = 3.0 * sizeof(float) * n;
  auto one = [&] {
    triad(0, n);
    keep(a.get());
  };
  auto all = [&] {
    exec.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](auto r) { triad(r.begin(), r.end()); },
                        tbb::static_partitioner());
    });
    keep(a.get());
  };
  // In rotation, one thread then all: a virtual machine's memory bandwidth
  // drifts within a second (single pairs 0.9-2.7 all / one on a 2-core Zen 4
  // guest), and five of one then five of the other put that drift into
  // their ratio, which decides whether memory-bound work forks: 1.1-2.3 over
  // eight calibrations there, 1.2-1.7 in rotation (`veda calibrate`).
  constexpr int kReps = 11;
  std::vector<double> t1, ta;
  for (int r = 0; r < kReps; ++r) {
    t1.push_back(time_us(one));
    ta.push_back(time_us(all));
  }
  const double one_us = median(std::move(t1)), all_us = median(std::move(ta));
  cpu.bw_one_gbps = bytes / one_us / 1e3;
  cpu.bw_all_gbps = std::max(bytes / all_us / 1e3, cpu.bw_one_gbps);
}

void fork_join(CpuExecutor& exec, CpuProfile& cpu) {
  const int t = exec.threads();
  auto run_static = [&] {
    exec.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, t, 1), [](auto) {}, tbb::static_partitioner());
    });
  };
  auto run_auto = [&] {
    exec.execute([&] { tbb::parallel_for(tbb::blocked_range<int>(0, 64 * t), [](auto) {}); });
  };
  for (int i = 0; i < 50; ++i) run_static();
  cpu.tbb_static_us = median_us(run_static, 301);
  cpu.tbb_auto_us = std::max(median_us(run_auto, 301), cpu.tbb_static_us);
  // After idling, workers sleep and the next call pays to wake them. The
  // probe is a loop whose tasks each work 10 us (an empty one can finish on
  // the caller before a sleeping worker is up, hiding the wake-up); between
  // loops the caller stays busy, as between calls (serial calls, the
  // program's own work): while it slept instead, the workers went on
  // spinning for 20 ms and more here, against 100-200 us while it computes.
  // Idle times are probed upward; the first whose median run costs half a
  // wake-up more than back to back is the threshold. The wake-up the cost
  // model adds is an empty loop's after a long idle: a call's own share of
  // the work overlaps the rest (2^16 floats here: 14 us more after serial
  // calls, where the 10 us probe shows 24-34).
  auto spin = [](double us) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<long>(us * 1e3));
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  auto run_work = [&] {
    exec.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, t, 1), [&](auto) { spin(10); }, tbb::static_partitioner());
    });
  };
  auto after_idle = [&](auto&& run, double idle_us) {
    std::vector<double> t5;
    for (int r = 0; r < 5; ++r) {
      run();
      spin(idle_us);
      t5.push_back(time_us(run));
    }
    return median(std::move(t5));
  };
  cpu.tbb_wake_us = std::max(after_idle(run_static, 20000) - cpu.tbb_static_us, 0.01);
  const double warm = after_idle(run_work, 0), cold = after_idle(run_work, 20000);
  cpu.tbb_idle_us = 20000;
  for (double idle : {50, 100, 200, 500, 2000, 8000}) {
    if (after_idle(run_work, idle) > warm + 0.5 * (cold - warm)) {
      cpu.tbb_idle_us = idle;
      break;
    }
  }
}

// The fastest OpenBLAS kernel set, then cpu-blas at n = 1024 with every
// thread: the rate the GEMM model scales (about 10 ms of work per call here).
void gemm_rates(const CpuInfo& info, int threads, CpuProfile& cpu) {
  cpu.blas_core = measure_coretype(info, threads, cpu.blas_probe);
  const Blas& b = blas(info, cpu.blas_core);
  if (!b.available) return;
  constexpr std::size_t n = 1024;
  const GemmShape s{n, n, n};
  auto rate = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> a(n * n, T(1)), bm(n * n, T(0.5)), c(n * n);
    auto run = [&] { cpu::gemm_blas(b, threads, s, a.data(), bm.data(), c.data()); };
    // Warm-up: OpenBLAS starts its threads and allocates its buffers, and
    // the oneTBB workers calibrated just before stop spinning.
    // OpenBLAS needs a few calls (~40 ms here) to reach its steady rate.
    for (int i = 0; i < 3; ++i) run();
    return s.flops() / median_us(run, 5) * 1e-3;
  };
  cpu.sgemm_gflops = rate(0.0f);
  cpu.dgemm_gflops = rate(0.0);
}

}  // namespace

Interference calibrate_cpu(CpuExecutor& exec, const CpuInfo& info, CpuProfile& cpu,
                           const std::function<void(const std::string&, double)>& progress) {
  auto step = [&](const char* what, double f) {
    if (progress) progress(what, f);
  };
  const LoadSample start = load_sample();
  step("CPU element throughput", 0.05);
  cpu.map_ns_per_elem = map_ns_per_elem();
  step("CPU FMA peak", 0.1);
  cpu.fma_gflops_per_thread = measure_fma_gflops_per_thread();
  // Up to here only this thread worked: time it spent off the CPU was preemption.
  const Interference single = interference(start, load_sample(), true);
  step("memory bandwidth", 0.2);
  bandwidth(exec, cpu);
  step("oneTBB fork-join and wake-up", 0.35);
  fork_join(exec, cpu);  // with one thread the cost model never offers TBB tiers
  step("CPU GEMM (BLAS)", 0.45);
  gemm_rates(info, exec.threads(), cpu);
  Interference q = interference(start, load_sample(), false);
  q.preempted = single.preempted;
  return q;
}

}  // namespace veda::detail
