// MachineLoad: how much CPU time went to work other than veda's while it
// measured something. Calibration uses it to tell clean figures from ones
// taken while other processes (or the hypervisor) held the CPUs, and the
// background refresh of a provisional profile to wait for a quiet machine.
//
// Sources (Linux): /proc/stat (every CPU's busy and steal time, all
// processes), getrusage (this process and its waited-for children) and the
// calling thread's CPU clock. Where /proc/stat is unreadable only the
// thread's own preemption is judged.
//
// Thread-safety: free functions; reentrant.
#pragma once

#include <cstdint>
#include <string>

namespace veda::detail {

struct LoadSample {
  std::int64_t wall_ns = 0;
  double busy_s = 0;   // every CPU, every process (steal excluded)
  double steal_s = 0;  // taken by the hypervisor
  double self_s = 0;   // this process and its waited-for children
  double thread_s = 0; // the calling thread
  int cpus = 0;        // CPUs /proc/stat counts (0: unreadable)
};
LoadSample load_sample();

// What disturbed a measurement between two samples, as shares of the time.
struct Interference {
  double others = 0;     // of every CPU's capacity: other processes
  double steal = 0;      // of every CPU's capacity: the hypervisor
  double preempted = 0;  // of the wall time: the calling thread did not run
  // Above these, figures are off by more than calibration's own noise.
  static constexpr double kOthers = 0.10, kSteal = 0.05, kPreempted = 0.10;
  bool disturbed() const noexcept { return others > kOthers || steal > kSteal || preempted > kPreempted; }
  double score() const noexcept { return others + steal + preempted; }  // lower: cleaner
  // "other processes used 47% of the CPUs; ..." ("clean" when undisturbed).
  std::string describe() const;
};

// `thread_busy`: the calling thread ran the whole time (a single-threaded
// measurement), so any wall time it spent off the CPU was preemption.
Interference interference(const LoadSample& a, const LoadSample& b, bool thread_busy);

// Share of every CPU's capacity that any process (veda's included) used
// between two samples: the background refresh measures only below a bound.
double machine_busy(const LoadSample& a, const LoadSample& b);

}  // namespace veda::detail
