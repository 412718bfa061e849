#include "src/profile_refresh.hpp"

#include <chrono>

#include "backends/cpu/cpu_executor.hpp"
#include "runtime/clock.hpp"
#include "runtime/file_io.hpp"
#include "runtime/logging.hpp"
#include "runtime/machine_load.hpp"
#include "runtime/runtime_state.hpp"
#include "src/calibration.hpp"

namespace veda::detail {

ProfileRefresh::Policy& ProfileRefresh::policy() {
  static Policy p;
  return p;
}

ProfileRefresh::ProfileRefresh(RuntimeState& st, Policy policy)
    : st_(st), policy_(policy), thread_([this] { run(); }) {}

ProfileRefresh::~ProfileRefresh() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool ProfileRefresh::wait(double seconds) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stop_; });
}

void ProfileRefresh::run() {
  int attempts = 0;
  LoadSample before = load_sample();
  while (wait(policy_.window_s)) {
    const LoadSample now = load_sample();
    const bool quiet = machine_busy(before, now) <= policy_.max_busy &&
                       static_cast<double>(st_.workers.idle_ns(now.wall_ns)) >= policy_.idle_s * 1e9;
    before = now;
    if (!quiet) continue;
    MachineProfile p = measure_profile(st_.config, st_.cpu, st_.gpu, *st_.cpu_executor, {});
    if (p.provisional) {
      log().info("profile refresh disturbed ({}); trying again later", p.calibration_note);
      if (++attempts >= policy_.attempts || !wait(policy_.retry_s)) return;
      before = load_sample();
      continue;
    }
    const MachineProfile& old = st_.profile();
    p.gpu = old.gpu;  // not measured again: see the header
    p.other_gpus = old.other_gpus;
    p.source = "refreshed";
    // Kept only where start-up would read it: a private cache directory.
    std::string why;
    if (const std::string path = cache_path(p);
        !path.empty() && ensure_private_dir(profile_cache_dir(), why) && !save_profile(p, path, &why))
      log().warn("could not write the machine profile to {}: {}", path, why);
    log().info("machine profile measured again on a quiet machine in {:.2f} s", p.calibration_seconds);
    st_.set_profile(std::move(p));
    return;
  }
}

}  // namespace veda::detail
