// Contract: the machine profile — JSON round trip, rejection of corrupt or
// mismatched files with a reason, the calibration modes (Off gives the
// documented defaults, Auto measures once and reloads from the cache, a
// corrupt cache file is replaced by a fresh calibration, Force rewrites),
// and an explicit profile file that is bad is a ConfigError. A busy machine:
// interference is judged from other processes' CPU time, steal and
// preemption; a disturbed calibration is provisional, and a provisional
// cached profile is measured again in the background once the machine is quiet.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executor.hpp"
#include "runtime/machine_load.hpp"
#include "src/calibration.hpp"
#include "src/profile_refresh.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

using namespace veda::detail;
namespace fs = std::filesystem;

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A private cache directory for one test.
struct CacheDir {
  std::string dir;
  std::string old;
  CacheDir() {
    dir = fs::temp_directory_path() / ("veda-profile-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    if (const char* x = std::getenv("XDG_CACHE_HOME")) old = x;
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~CacheDir() {
    if (old.empty()) unsetenv("XDG_CACHE_HOME");
    else setenv("XDG_CACHE_HOME", old.c_str(), 1);
    fs::remove_all(dir);
  }
  std::string path() const {
    const auto& st = veda::get_runtime().state();
    return cache_path(identity_profile(st.config, st.cpu, st.gpu, st.cpu_executor->pinned()));
  }
};
}  // namespace

TEST_CASE("JSON round trip keeps every field") {
  const std::string text = read(std::string(VEDA_TEST_DATA) + "/profile_h100.json");
  const MachineProfile p = MachineProfile::from_json(text);
  const MachineProfile q = MachineProfile::from_json(p.to_json());
  CHECK(q.to_json() == p.to_json());
  CHECK(q.gpu.present);
  CHECK(q.gpu.h2d_pinned_gbps == 50.0);
  CHECK(q.cpu.tbb_static_us == 0.3);
  CHECK(q.threads == 2);
}

TEST_CASE("several GPUs: each device's own figures and peer rates survive the round trip and key the cache") {
  MachineProfile p = MachineProfile::from_json(read(std::string(VEDA_TEST_DATA) + "/profile_h100.json"));
  const std::string one_gpu_key = p.key();
  GpuProfile second = p.gpu;
  second.uuid = "GPU-11111111-1111-1111-1111-111111111111";
  second.h2d_staged_gbps = 5;  // behind a slower link
  second.peer_in_gbps = {40.0, 0.0};
  p.gpu.peer_in_gbps = {0.0, 35.5};
  p.other_gpus.push_back(second);
  const MachineProfile q = MachineProfile::from_json(p.to_json());
  CHECK(q.to_json() == p.to_json());
  REQUIRE(q.other_gpus.size() == 1);
  CHECK(q.gpu_at(1).uuid == second.uuid);
  CHECK(q.gpu_at(1).h2d_staged_gbps == 5);
  CHECK(q.gpu_at(1).peer_in_gbps == std::vector<double>{40.0, 0.0});
  CHECK(q.gpu_at(0).peer_in_gbps == std::vector<double>{0.0, 35.5});
  CHECK(q.gpu_at(2).uuid == q.gpu.uuid);  // a slot it does not describe: the first device's
  // Seen from device 1: its figures in `gpu`, everything else shared.
  const MachineProfile from1 = q.for_device(1);
  CHECK(from1.gpu.h2d_staged_gbps == 5);
  CHECK(from1.cpu.fma_gflops_per_thread == q.cpu.fma_gflops_per_thread);
  CHECK(from1.key() == q.key());
  // Another second GPU is another machine.
  CHECK(q.key() != one_gpu_key);
  MachineProfile swapped = q;
  swapped.other_gpus[0].uuid = "GPU-22222222-2222-2222-2222-222222222222";
  CHECK(swapped.key() != q.key());
  // A peer rate is 0 (not measured) or plausible; the list is bounded.
  std::string text = p.to_json();
  const std::string rate = "40.0";
  REQUIRE(text.find(rate) != std::string::npos);
  std::string bad = text;
  bad.replace(bad.find(rate), rate.size(), "-3");
  CHECK_THROWS_WITH_AS(MachineProfile::from_json(bad), doctest::Contains("other_gpus[0].peer_in_gbps"), std::runtime_error);
  bad = text;
  bad.replace(bad.find("\"other_gpus\": ["), 15, "\"other_gpus\": 7, \"x\": [");
  CHECK_THROWS_WITH_AS(MachineProfile::from_json(bad), doctest::Contains("other_gpus must be a list"), std::runtime_error);
}

TEST_CASE("corrupt profiles are rejected with a reason") {
  const std::string good = read(std::string(VEDA_TEST_DATA) + "/profile_cpu_2core.json");
  auto rejects = [](const std::string& text, const char* why) {
    try {
      MachineProfile::from_json(text);
      FAIL("accepted: " << text.substr(0, 60));
    } catch (const std::runtime_error& e) {
      CHECK_MESSAGE(std::string(e.what()).find(why) != std::string::npos, e.what());
    }
  };
  rejects("", "not valid JSON");
  rejects("{ \"format\": 1, ", "not valid JSON");
  rejects("[1,2,3]", "not a JSON object");
  rejects("{}", "format");
  std::string s = good;
  rejects(s.replace(s.find("\"format\": 1"), 11, "\"format\": 7"), "format");
  s = good;
  rejects(s.replace(s.find("\"bw_one_gbps\": 27.0"), 19, "\"bw_one_gbps\": -1"), "cpu.bw_one_gbps");
  s = good;
  rejects(s.replace(s.find("\"tbb_static_us\": 0.3"), 20, "\"tbb_static_us\": \"x\""), "cpu.tbb_static_us");
  s = good;
  rejects(s.replace(s.find("\"map_ns_per_elem\": 0.3,"), 23, ""), "cpu.map_ns_per_elem is missing");
  s = good;
  rejects(s.replace(s.find("\"threads\": 2"), 12, "\"threads\": 0"), "threads");
  std::string why;
  CHECK_FALSE(load_profile("/nonexistent/veda/profile.json", why));
  CHECK(why == "no file");
}

TEST_CASE("calibration Off: the documented defaults, nothing written") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  const auto& p = veda::get_runtime().state().profile();
  CHECK(p.source == "defaults");
  CHECK(p.cpu.tbb_auto_us == 2.0);
  CHECK_FALSE(fs::exists(cache.path()));
  veda::shutdown();
}

TEST_CASE("calibration Auto: measured once, then reloaded; corrupt caches are replaced") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile().source == "calibrated");
  const std::string path = cache.path();
  CHECK(veda::get_runtime().state().profile().calibration_seconds > 0.0);
  veda::shutdown();
  REQUIRE(fs::exists(path));
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile().source == "cache");
  veda::shutdown();
  std::ofstream(path) << "{ this is not a profile";
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile().source == "calibrated");
  veda::shutdown();
  std::string why;
  CHECK(load_profile(path, why));  // rewritten, valid again
  // A profile of another machine under this machine's name is measured again too.
  MachineProfile other = *load_profile(path, why);
  other.cpu_model = "some other CPU";
  std::ofstream(path) << other.to_json();
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile().source == "calibrated");
  veda::shutdown();
}

TEST_CASE("calibration Force always measures") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Force).build());
  veda::shutdown();
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Force).build());
  CHECK(veda::get_runtime().state().profile().source == "calibrated");
  veda::shutdown();
}

TEST_CASE("an explicit profile file is used as given; a bad one is a ConfigError") {
  veda::init(veda::Config::builder().profile(std::string(VEDA_TEST_DATA) + "/profile_h100.json").build());
  CHECK(veda::get_runtime().state().profile().source == "file");
  CHECK(veda::get_runtime().state().profile().gpu.present);
  veda::shutdown();
  const std::string bad = fs::temp_directory_path() / "veda-bad-profile.json";
  std::ofstream(bad) << "garbage";
  CHECK_THROWS_AS(veda::init(veda::Config::builder().profile(bad).build()), veda::ConfigError);
  CHECK_FALSE(veda::is_running());
  setenv("VEDA_PROFILE", bad.c_str(), 1);
  CHECK_THROWS_WITH_AS(veda::init(), doctest::Contains("profile"), veda::ConfigError);
  unsetenv("VEDA_PROFILE");
}

TEST_CASE("interference: other processes' CPU time, the hypervisor's steal, the thread's preemption") {
  LoadSample a, b;
  a.cpus = b.cpus = 4;
  a.wall_ns = 0;
  b.wall_ns = 1'000'000'000;  // 1 s: 4 CPU-seconds of capacity
  b.self_s = 1.0;             // veda measured on one CPU
  b.busy_s = 1.2;             // and someone else used 0.2 s: 5%, clean
  b.thread_s = 0.95;
  Interference q = interference(a, b, true);
  CHECK(q.others == doctest::Approx(0.05));
  CHECK(q.preempted == doctest::Approx(0.05));
  CHECK_FALSE(q.disturbed());
  CHECK(q.describe() == "clean");
  b.busy_s = 3.0;  // others: 2 CPU-seconds of 4
  b.steal_s = 0.4;
  q = interference(a, b, false);
  CHECK(q.others == doctest::Approx(0.5));
  CHECK(q.steal == doctest::Approx(0.1));
  CHECK(q.preempted == 0.0);  // not judged: the thread was not meant to run throughout
  CHECK(q.disturbed());
  CHECK(q.describe() == "other processes used 50% of the CPUs; the hypervisor took 10% of the CPUs");
  b.busy_s = 1.0;
  b.steal_s = 0;
  b.thread_s = 0.5;
  q = interference(a, b, true);
  CHECK(q.describe() == "the measuring thread was off the CPU 50% of the time");
  CHECK(machine_busy(a, b) == doctest::Approx(0.25));
  b.cpus = 0;  // /proc/stat unreadable: only the thread's own preemption is judged
  CHECK(interference(a, b, true).others == 0.0);
  CHECK(interference(a, b, true).preempted == doctest::Approx(0.5));
}

TEST_CASE("a provisional flag survives the JSON round trip; older files without it are clean") {
  const std::string text = read(std::string(VEDA_TEST_DATA) + "/profile_cpu_2core.json");
  MachineProfile p = MachineProfile::from_json(text);
  CHECK_FALSE(p.provisional);
  p.provisional = true;
  p.calibration_note = "other processes used 50% of the CPUs";
  const MachineProfile q = MachineProfile::from_json(p.to_json());
  CHECK(q.provisional);
  CHECK(q.calibration_note == p.calibration_note);
}

namespace {
// Busy child processes on every CPU: other work the calibration must notice.
struct Burners {
  std::vector<pid_t> pids;
  Burners() {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < cpus; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        volatile unsigned long x = 0;
        for (;;) x = x + 1;
      }
      if (pid > 0) pids.push_back(pid);
    }
  }
  ~Burners() {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
  }
};
}  // namespace

TEST_CASE("a calibration that other processes disturb is kept provisional, saying what disturbed it") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  auto& st = veda::get_runtime().state();
  MachineProfile p;
  {
    Burners busy;
    REQUIRE_FALSE(busy.pids.empty());
    p = measure_profile(st.config, st.cpu, st.gpu, *st.cpu_executor, {});
  }
  CHECK(p.provisional);
  CHECK(p.calibration_note.find("other processes used") != std::string::npos);
  veda::shutdown();
}

TEST_CASE("a provisional cached profile is measured again in the background once the machine is quiet") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  const std::string path = cache.path();
  MachineProfile poisoned = veda::get_runtime().state().profile();
  veda::shutdown();
  poisoned.provisional = true;
  poisoned.calibration_note = "other processes used 60% of the CPUs";
  // Far below any real machine, sanitized and loaded ones included (CI saw 0.32 GB/s under ASan).
  poisoned.cpu.bw_one_gbps = poisoned.cpu.bw_all_gbps = 0.001;
  REQUIRE(save_profile(poisoned, path));
  // "Quiet" at once and retried quickly: the test checks the replacement, not the waiting.
  ProfileRefresh::Policy& policy = ProfileRefresh::policy();
  const ProfileRefresh::Policy saved = policy;
  policy = {0.05, 0.0, 1.0, 20, 0.2};
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  auto& st = veda::get_runtime().state();
  CHECK(st.profile().source == "cache");
  CHECK(st.profile().provisional);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (st.profile().source != "refreshed" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(st.profile().source == "refreshed");
  CHECK_FALSE(st.profile().provisional);
  CHECK(st.profile().cpu.bw_one_gbps > 0.001);
  veda::shutdown();
  policy = saved;
  std::string why;
  const auto cached = load_profile(path, why);
  REQUIRE(cached);
  CHECK_FALSE(cached->provisional);
  CHECK(cached->cpu.bw_all_gbps > 0.001);
}
