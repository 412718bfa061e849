// Contract: the machine profile — JSON round trip, rejection of corrupt or
// mismatched files with a reason, the calibration modes (Off gives the
// documented defaults, Auto measures once and reloads from the cache, a
// corrupt cache file is replaced by a fresh calibration, Force rewrites),
// and an explicit profile file that is bad is a ConfigError.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/calibration.hpp"
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
    return cache_path(identity_profile(st.config, st.cpu, st.gpu));
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
  const auto& p = veda::get_runtime().state().profile;
  CHECK(p.source == "defaults");
  CHECK(p.cpu.tbb_auto_us == 2.0);
  CHECK_FALSE(fs::exists(cache.path()));
  veda::shutdown();
}

TEST_CASE("calibration Auto: measured once, then reloaded; corrupt caches are replaced") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile.source == "calibrated");
  const std::string path = cache.path();
  CHECK(veda::get_runtime().state().profile.calibration_seconds > 0.0);
  veda::shutdown();
  REQUIRE(fs::exists(path));
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile.source == "cache");
  veda::shutdown();
  std::ofstream(path) << "{ this is not a profile";
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile.source == "calibrated");
  veda::shutdown();
  std::string why;
  CHECK(load_profile(path, why));  // rewritten, valid again
  // A profile of another machine under this machine's name is measured again too.
  MachineProfile other = *load_profile(path, why);
  other.cpu_model = "some other CPU";
  std::ofstream(path) << other.to_json();
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Auto).build());
  CHECK(veda::get_runtime().state().profile.source == "calibrated");
  veda::shutdown();
}

TEST_CASE("calibration Force always measures") {
  CacheDir cache;
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Force).build());
  veda::shutdown();
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Force).build());
  CHECK(veda::get_runtime().state().profile.source == "calibrated");
  veda::shutdown();
}

TEST_CASE("an explicit profile file is used as given; a bad one is a ConfigError") {
  veda::init(veda::Config::builder().profile(std::string(VEDA_TEST_DATA) + "/profile_h100.json").build());
  CHECK(veda::get_runtime().state().profile.source == "file");
  CHECK(veda::get_runtime().state().profile.gpu.present);
  veda::shutdown();
  const std::string bad = fs::temp_directory_path() / "veda-bad-profile.json";
  std::ofstream(bad) << "garbage";
  CHECK_THROWS_AS(veda::init(veda::Config::builder().profile(bad).build()), veda::ConfigError);
  CHECK_FALSE(veda::is_running());
  setenv("VEDA_PROFILE", bad.c_str(), 1);
  CHECK_THROWS_WITH_AS(veda::init(), doctest::Contains("profile"), veda::ConfigError);
  unsetenv("VEDA_PROFILE");
}
