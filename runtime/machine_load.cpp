#include "runtime/machine_load.hpp"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "runtime/clock.hpp"

namespace veda::detail {
namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

double rusage_s(int who) {
  rusage u{};
  if (getrusage(who, &u) != 0) return 0;
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// The aggregate "cpu" line: user nice system idle iowait irq softirq steal.
void read_proc_stat(LoadSample& s) {
  std::ifstream in("/proc/stat");
  std::string line;
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0) break;
    if (line.size() > 3 && line[3] != ' ') {  // cpuN: one more CPU
      ++s.cpus;
      continue;
    }
    std::istringstream f(line.substr(3));
    unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    f >> user >> nice >> sys >> idle >> iowait >> irq >> softirq >> steal;
    if (!f && !f.eof()) return;
    s.busy_s = static_cast<double>(user + nice + sys + irq + softirq) / tick;
    s.steal_s = static_cast<double>(steal) / tick;
  }
}

}  // namespace

LoadSample load_sample() {
  LoadSample s;
  read_proc_stat(s);
  s.self_s = rusage_s(RUSAGE_SELF) + rusage_s(RUSAGE_CHILDREN);
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  s.thread_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  s.wall_ns = now_ns();
  return s;
}

Interference interference(const LoadSample& a, const LoadSample& b, bool thread_busy) {
  Interference r;
  const double wall = static_cast<double>(b.wall_ns - a.wall_ns) / 1e9;
  if (wall <= 0) return r;
  if (a.cpus > 0 && b.cpus == a.cpus) {
    const double capacity = wall * a.cpus;
    r.others = std::clamp((b.busy_s - a.busy_s - (b.self_s - a.self_s)) / capacity, 0.0, 1.0);
    r.steal = std::clamp((b.steal_s - a.steal_s) / capacity, 0.0, 1.0);
  }
  if (thread_busy) r.preempted = std::clamp(1.0 - (b.thread_s - a.thread_s) / wall, 0.0, 1.0);
  return r;
}

double machine_busy(const LoadSample& a, const LoadSample& b) {
  const double wall = static_cast<double>(b.wall_ns - a.wall_ns) / 1e9;
  if (wall <= 0 || a.cpus == 0 || b.cpus != a.cpus) return 0;
  return std::clamp((b.busy_s - a.busy_s + b.steal_s - a.steal_s) / (wall * a.cpus), 0.0, 1.0);
}

std::string Interference::describe() const {
  if (!disturbed()) return "clean";
  std::string s;
  char buf[96];
  auto add = [&](const char* fmt, double v) {
    std::snprintf(buf, sizeof buf, fmt, 100 * v);
    s += (s.empty() ? "" : "; ") + std::string(buf);
  };
  if (others > kOthers) add("other processes used %.0f%% of the CPUs", others);
  if (steal > kSteal) add("the hypervisor took %.0f%% of the CPUs", steal);
  if (preempted > kPreempted) add("the measuring thread was off the CPU %.0f%% of the time", preempted);
  return s;
}

}  // namespace veda::detail
