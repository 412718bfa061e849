// ProfileRefresh: measures a provisional machine profile (one whose every
// calibration pass other work disturbed) again in the background, once the
// machine is quiet: veda's workers idle for Policy::idle_s and every CPU,
// this process's included, busy under Policy::max_busy for a whole window.
// A clean pass replaces the runtime's profile (source "refreshed") and the
// cached file; a disturbed one is dropped and tried again later. Only the
// CPU figures are measured again; the GPU's stay as calibrated.
//
// Limitation: a call the program makes while the refresh measures (about a
// second) competes with it; the pass then reads as disturbed only when that
// call was serial on a busy machine (the quiet check before it makes this
// rare).
//
// Thread-safety: owned by RuntimeState, which destroys it first: the
// destructor stops the thread and waits for a pass in progress.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace veda::detail {

class RuntimeState;

class ProfileRefresh {
 public:
  struct Policy {
    double window_s = 1.0;   // the quiet check's window
    double idle_s = 2.0;     // veda's workers idle at least this long
    double max_busy = 0.10;  // share of every CPU's capacity, all processes
    int attempts = 5;        // disturbed passes before giving up
    double retry_s = 30;     // after a disturbed pass
  };
  // The policy new runtimes use (tests shorten it before init).
  static Policy& policy();

  ProfileRefresh(RuntimeState& st, Policy policy);
  ~ProfileRefresh();
  ProfileRefresh(const ProfileRefresh&) = delete;
  ProfileRefresh& operator=(const ProfileRefresh&) = delete;

 private:
  void run();
  bool wait(double seconds);  // false once stopping
  RuntimeState& st_;
  const Policy policy_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace veda::detail
