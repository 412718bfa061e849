// Contract: every file veda reads or writes follows runtime/file_io.hpp's
// rules (issue 20; red-team findings F5, F6, F8, F11, F14, F15, F17):
//   - a FIFO, device, directory or over-large file as VEDA_PROFILE,
//     VEDA_REPLAY, VEDA_RECORD, VEDA_TRACE or the cached profile is an error
//     at once (ConfigError, or a logged warning/error), never a hang or an
//     endless read;
//   - a symbolic link, device node, FIFO, directory or another user's file
//     where a profile is saved (the cache, `veda calibrate -o`) is not
//     replaced, and the failed save is reported with its reason;
//   - the temporary of a save cannot be planted (no predictable name, never
//     followed through a symbolic link);
//   - the cache directory must be private, and without XDG_CACHE_HOME and
//     HOME there is no disk cache (no /tmp/veda-cache);
//   - failed record and trace writes (a full disk) are logged;
//   - a replay size that overflows is a ConfigError naming the line, a
//     recorded tier the site does not offer a ReplayMismatch;
//   - a profile with physically implausible rates is rejected, and the cache
//     key tells CPUs with different SIMD features apart.
// Everything special is created privately in a fresh temporary directory;
// checks of another owner need root (chown to nobody) and are skipped
// otherwise. Anything that used to block is bounded: an Unblocker opens the
// FIFO's other end after 10 s, and the test requires far less.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/file_io.hpp"
#include "runtime/history_store.hpp"
#include "runtime/profile.hpp"
#include "runtime/runtime_state.hpp"
#include "src/calibration.hpp"
#include "veda/veda.hpp"

using namespace veda::detail;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
// veda logs through the logger named "veda" registered first: this one.
std::ostringstream g_log;
std::shared_ptr<spdlog::logger> g_logger = [] {
  auto l = std::make_shared<spdlog::logger>("veda", std::make_shared<spdlog::sinks::ostream_sink_mt>(g_log));
  spdlog::register_logger(l);
  ::signal(SIGPIPE, SIG_IGN);  // an unblocked writer of a FIFO must not die of it
  return l;
}();

bool logged(const std::string& what) { return g_log.str().find(what) != std::string::npos; }

// An init without calibration takes well under a second (a few under
// ThreadSanitizer); a blocked one is released only after kUnblockAfter.
constexpr auto kUnblockAfter = std::chrono::seconds(10);
constexpr auto kPromptly = std::chrono::seconds(8);

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/veda-file-safety-XXXXXX";
    REQUIRE(::mkdtemp(t) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);  // does not follow the links it removes
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, std::optional<std::string> value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value)
      ::setenv(name.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string good_profile() { return slurp(std::string(VEDA_TEST_DATA) + "/profile_cpu_2core.json"); }

veda::Config::Builder off() {
  veda::Config::Builder b = veda::Config::builder();
  b.calibration(veda::CalibrationMode::Off);
  return b;
}

// Opens `fifo` from the other side after kUnblockAfter and keeps doing so,
// so code stuck in open() or read() on it (the behaviour before the fix)
// returns and the test fails its time check instead of hanging the suite.
class Unblocker {
 public:
  explicit Unblocker(std::string fifo, std::chrono::seconds after = kUnblockAfter)
      : fifo_(std::move(fifo)), after_(after), thread_([this] { run(); }) {}
  ~Unblocker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, after_, [&] { return stop_; })) return;
    while (!stop_) {
      const int fd = ::open(fifo_.c_str(), O_RDWR | O_NONBLOCK);
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return stop_; });
      if (fd >= 0) {
        char buf[4096];
        while (::read(fd, buf, sizeof buf) > 0) {
        }
        ::close(fd);
      }
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return stop_; });
    }
  }
  std::string fifo_;
  std::chrono::seconds after_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

std::string make_fifo(const TempDir& d, const std::string& name) {
  const std::string p = d / name;
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  return p;
}

bool is_fifo(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// Runs f, returns how long it took.
template <class F>
Clock::duration timed(F&& f) {
  const auto t0 = Clock::now();
  f();
  return Clock::now() - t0;
}

// init(c) must fail with a ConfigError whose text has `what`, promptly.
void init_fails(const veda::Config& c, const std::string& what) {
  const auto took = timed([&] {
    try {
      veda::init(c);
      veda::shutdown();
      FAIL("init accepted it");
    } catch (const veda::ConfigError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, e.what());
    }
  });
  CHECK(took < kPromptly);
  CHECK_FALSE(veda::is_running());
}

// A private profile cache under `dir` for one test case, and the path of
// this machine's cache file in it.
struct Cache {
  ScopedEnv xdg;
  std::string dir;  // $XDG_CACHE_HOME/veda
  std::string path;
  explicit Cache(const TempDir& d) : xdg("XDG_CACHE_HOME", d / "xdg"), dir(d / "xdg/veda") {
    veda::init(off().build());
    const auto& st = veda::get_runtime().state();
    path = cache_path(identity_profile(st.config, st.cpu, st.gpu, st.cpu_executor->pinned()));
    veda::shutdown();
    std::string why;
    REQUIRE(ensure_private_dir(dir, why));
  }
};

veda::Config auto_calibration() {
  return veda::Config::builder().calibration(veda::CalibrationMode::Auto).log_level(veda::LogLevel::Info).build();
}

// File-size limit for the current process (a "full disk" for regular files),
// with SIGXFSZ ignored so a write past it fails with EFBIG instead of killing us.
struct FullDisk {
  rlimit old{};
  void (*old_handler)(int);
  explicit FullDisk(rlim_t bytes) : old_handler(::signal(SIGXFSZ, SIG_IGN)) {
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit lim = old;
    lim.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  }
  ~FullDisk() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
  }
};
}  // namespace

// ---- F8: special and huge files are refused at once ------------------------

TEST_CASE("F8: a FIFO as VEDA_PROFILE, VEDA_REPLAY or VEDA_RECORD is a ConfigError, without blocking") {
  TempDir d;
  const std::string fifo = make_fifo(d, "fifo");
  Unblocker unblock(fifo);
  init_fails(off().profile(fifo).build(), "FIFO");
  init_fails(off().replay(fifo).build(), "FIFO");
  init_fails(off().record(fifo).build(), "FIFO");
  {
    ScopedEnv env("VEDA_PROFILE", fifo);
    const auto took = timed([] { CHECK_THROWS_WITH_AS(veda::init(), doctest::Contains("FIFO"), veda::ConfigError); });
    CHECK(took < kPromptly);
  }
  CHECK(is_fifo(fifo));
}

TEST_CASE("F8: a FIFO as VEDA_TRACE is a logged error at shutdown, without blocking") {
  TempDir d;
  const std::string fifo = make_fifo(d, "trace-fifo");
  Unblocker unblock(fifo);
  g_log.str("");
  veda::init(off().trace(fifo).build());
  const auto took = timed([] { veda::shutdown(); });
  CHECK(took < kPromptly);
  CHECK(logged("could not write the trace"));
  CHECK(logged("FIFO"));
  CHECK(is_fifo(fifo));
}

TEST_CASE("F8: /dev/zero as the profile or the replay is refused at once, not read") {
  TempDir d;
  const std::string link = d / "zero-link";
  REQUIRE(::symlink("/dev/zero", link.c_str()) == 0);
  init_fails(off().profile("/dev/zero").build(), "character device");
  init_fails(off().profile(link).build(), "character device");
  init_fails(off().replay(link).build(), "character device");
}

TEST_CASE("F8: a directory as the profile is refused with what it is") {
  TempDir d;
  init_fails(off().profile(d.path).build(), "directory");
}

TEST_CASE("F8: files above the size cap are refused, even if valid") {
  TempDir d;
  // Valid JSON followed by 5 MiB of blanks: a profile is read up to 4 MiB only.
  const std::string big = d / "big-profile.json";
  write(big, good_profile() + std::string(std::size_t{5} << 20, ' '));
  init_fails(off().profile(big).build(), "larger than");
  // A sparse 300 MiB "record": refused by its size, not read into memory.
  const std::string rec = d / "huge.rec";
  {
    const int fd = ::open(rec.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t{300} << 20) == 0);
    ::close(fd);
  }
  init_fails(off().replay(rec).build(), "larger than");
}

TEST_CASE("F8: read_file keeps to regular files and its cap") {
  TempDir d;
  write(d / "small", "0123456789");
  FileText f = read_file(d / "small", 10);
  CHECK(f.ok);
  CHECK(f.text == "0123456789");
  f = read_file(d / "small", 9);
  CHECK_FALSE(f.ok);
  CHECK(f.error.find("larger than") != std::string::npos);
  f = read_file(d / "missing", 10);
  CHECK_FALSE(f.ok);
  CHECK(f.missing);
  f = read_file(d.path, 10);
  CHECK_FALSE(f.ok);
  CHECK(f.error.find("directory") != std::string::npos);
}

TEST_CASE("F8: a FIFO as the cached profile is measured around, and not replaced") {
  TempDir d;
  Cache cache(d);
  REQUIRE(::mkfifo(cache.path.c_str(), 0600) == 0);
  // This start calibrates (seconds, more under sanitizers): a longer bound.
  Unblocker unblock(cache.path, std::chrono::seconds(60));
  g_log.str("");
  const auto took = timed([] {
    veda::init(auto_calibration());
    CHECK(veda::get_runtime().state().profile().source == "calibrated");
    veda::shutdown();
  });
  CHECK(took < std::chrono::seconds(50));
  CHECK(logged("FIFO"));
  CHECK(logged("could not write the machine profile"));
  CHECK(is_fifo(cache.path));
}

// ---- F14: a failed cache save is reported -----------------------------------

TEST_CASE("F14: a directory at the cache file's path: the failed save is reported with its reason") {
  TempDir d;
  Cache cache(d);
  REQUIRE(fs::create_directory(cache.path));
  g_log.str("");
  veda::init(auto_calibration());
  veda::shutdown();
  CHECK(logged("could not write the machine profile to " + cache.path));
  CHECK(logged("directory"));
  CHECK(fs::is_directory(cache.path));
  std::string why;
  CHECK_FALSE(save_profile(MachineProfile::from_json(good_profile()), cache.path, &why));
  CHECK(why.find("directory") != std::string::npos);
}

// ---- F6: links and special files are never replaced --------------------------

TEST_CASE("F6: a symbolic link at the cache file's path is not replaced, nor its target written") {
  TempDir d;
  Cache cache(d);
  const std::string victim = d / "victim.txt";
  write(victim, "precious");
  REQUIRE(::symlink(victim.c_str(), cache.path.c_str()) == 0);
  g_log.str("");
  veda::init(auto_calibration());
  veda::shutdown();
  CHECK(fs::is_symlink(cache.path));
  CHECK(slurp(victim) == "precious");
  CHECK(logged("symbolic link"));
}

TEST_CASE("F6: save_profile (the writer of veda calibrate -o) refuses links, FIFOs, devices, directories") {
  TempDir d;
  const MachineProfile p = MachineProfile::from_json(good_profile());
  const std::string victim = d / "victim.txt";
  write(victim, "precious");
  const std::string link = d / "link.json";
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  std::string why;
  CHECK_FALSE(save_profile(p, link, &why));
  CHECK(why.find("symbolic link") != std::string::npos);
  CHECK(fs::is_symlink(link));
  CHECK(slurp(victim) == "precious");

  const std::string dangling = d / "dangling.json";
  REQUIRE(::symlink((d / "nowhere").c_str(), dangling.c_str()) == 0);
  CHECK_FALSE(save_profile(p, dangling, &why));
  CHECK_FALSE(fs::exists(d / "nowhere"));

  const std::string fifo = make_fifo(d, "out-fifo");
  CHECK_FALSE(save_profile(p, fifo, &why));
  CHECK(why.find("FIFO") != std::string::npos);
  CHECK(is_fifo(fifo));

  if (::geteuid() == 0) {  // a private copy of /dev/full: only root may make one
    const std::string dev = d / "full";
    REQUIRE(::mknod(dev.c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0);
    CHECK_FALSE(save_profile(p, dev, &why));
    CHECK(why.find("character device") != std::string::npos);
    struct stat st {};
    REQUIRE(::lstat(dev.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  } else {
    MESSAGE("not root: the device-node case is skipped");
  }

  // A regular file of ours is replaced, and nothing is left beside it.
  const std::string plain = d / "plain.json";
  write(plain, "old");
  CHECK(save_profile(p, plain, &why));
  CHECK(load_profile(plain, why));
  for (const auto& e : fs::directory_iterator(d.path))  // every refusal removed its temporary
    CHECK_MESSAGE(e.path().filename().string().find(".tmp") == std::string::npos, e.path());
}

TEST_CASE("F6: veda calibrate -o refuses a symbolic link (exit status, link and target unchanged)") {
  const char* cli = std::getenv("VEDA_CLI");
  if (!cli || !*cli) {
    MESSAGE("VEDA_CLI (the path of the veda tool) is not set: skipped");
    return;
  }
  TempDir d;
  const std::string victim = d / "target.json", link = d / "link.json";
  write(victim, "original target");
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  const std::string cmd = "XDG_CACHE_HOME='" + (d / "xdg") + "' '" + cli + "' calibrate -o '" + link +
                          "' > '" + (d / "out.txt") + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) != 0);
  CHECK(fs::is_symlink(link));
  CHECK(slurp(victim) == "original target");
  CHECK_MESSAGE(slurp(d / "out.txt").find("symbolic link") != std::string::npos, slurp(d / "out.txt"));
}

// ---- F5: planted temporaries, shared caches, no HOME --------------------------

TEST_CASE("F5: a symbolic link planted at the old temporary's name is not followed") {
  TempDir d;
  const std::string victim = d / "victim.txt";
  write(victim, "root-only data");
  ::chmod(victim.c_str(), 0600);
  const std::string path = d / "profile.json";
  const std::string planted = path + ".tmp." + std::to_string(::getpid());  // the old, predictable name
  REQUIRE(::symlink(victim.c_str(), planted.c_str()) == 0);
  std::string why;
  CHECK(save_profile(MachineProfile::from_json(good_profile()), path, &why));
  CHECK(slurp(victim) == "root-only data");
  CHECK(fs::is_symlink(planted));
  CHECK(load_profile(path, why));
}

TEST_CASE("F5: without XDG_CACHE_HOME and HOME there is no disk cache, and no /tmp/veda-cache") {
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt), home("HOME", std::nullopt);
  CHECK(profile_cache_dir().empty());
  g_log.str("");
  veda::init(auto_calibration());
  const auto& st = veda::get_runtime().state();
  const MachineProfile id = identity_profile(st.config, st.cpu, st.gpu, st.cpu_executor->pinned());
  CHECK(st.profile().source == "calibrated");
  CHECK(cache_path(id).empty());
  veda::shutdown();
  CHECK(logged("no profile cache"));
  CHECK_FALSE(fs::exists("/tmp/veda-cache/profile-" + id.key() + ".json"));
  // The learned history has no home either: nothing is written anywhere.
  const std::string name = "history-file-safety-" + std::to_string(::getpid()) + ".json";
  HistoryStore history(profile_cache_dir() + "/" + name, {});
  CHECK_FALSE(history.enabled());
  CHECK(history.save(1));
  CHECK_FALSE(fs::exists("/" + name));
  CHECK_FALSE(fs::exists("/tmp/veda-cache/" + name));
  std::error_code ec;
  fs::remove("/" + name, ec);
  fs::remove("/tmp/veda-cache/" + name, ec);
}

TEST_CASE("F5: a cache directory others can write to is not used, nor a profile planted in it") {
  TempDir d;
  Cache cache(d);
  MachineProfile planted = MachineProfile::from_json(good_profile());
  {
    veda::init(off().build());
    planted = veda::get_runtime().state().profile();  // this machine's identity: it would load
    veda::shutdown();
  }
  planted.cpu.fma_gflops_per_thread = 12345;  // the marker
  write(cache.path, planted.to_json());
  std::string why;
  REQUIRE(load_profile(cache.path, why));  // a valid cache file ...

  SUBCASE("writable by group and others") {
    REQUIRE(::chmod(cache.dir.c_str(), 0777) == 0);
    CHECK_FALSE(ensure_private_dir(cache.dir, why));
    CHECK(why.find("writable by group or others") != std::string::npos);
  }
  SUBCASE("owned by another user (root only: chown to nobody)") {
    if (::geteuid() != 0) {
      MESSAGE("not root: the other-owner case is skipped");
      return;
    }
    REQUIRE(::chown(cache.dir.c_str(), 65534, 65534) == 0);
    CHECK_FALSE(ensure_private_dir(cache.dir, why));
    CHECK(why.find("owned by uid 65534") != std::string::npos);
  }
  SUBCASE("a symbolic link") {
    const std::string real = d / "elsewhere";
    fs::rename(cache.dir, real);
    REQUIRE(::symlink(real.c_str(), cache.dir.c_str()) == 0);
    CHECK_FALSE(ensure_private_dir(cache.dir, why));
    CHECK(why.find("symbolic link") != std::string::npos);
  }
  g_log.str("");
  veda::init(auto_calibration());  // ... that is not loaded from there
  CHECK(veda::get_runtime().state().profile().source == "calibrated");
  CHECK(veda::get_runtime().state().profile().cpu.fma_gflops_per_thread != 12345);
  veda::shutdown();
  CHECK(logged("is not usable"));
}

TEST_CASE("F5: cache files of another user are neither loaded nor replaced (root only)") {
  if (::geteuid() != 0) {
    MESSAGE("not root: skipped");
    return;
  }
  TempDir d;
  const std::string path = d / "profile.json";
  write(path, good_profile());
  REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
  std::string why;
  CHECK_FALSE(load_profile(path, why, Owner::Me));
  CHECK(why.find("owned by uid 65534") != std::string::npos);
  CHECK(load_profile(path, why, Owner::Anyone));  // VEDA_PROFILE: anyone's file, as given
  CHECK_FALSE(save_profile(MachineProfile::from_json(good_profile()), path, &why));
  CHECK(why.find("owned by uid 65534") != std::string::npos);
  CHECK(slurp(path) == good_profile());
}

TEST_CASE("F5: a new cache directory is created private") {
  TempDir d;
  std::string why;
  REQUIRE(ensure_private_dir(d / "a/b/veda", why));
  struct stat st {};
  REQUIRE(::lstat((d / "a/b/veda").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}

// ---- F11: failed record and trace writes are logged --------------------------

TEST_CASE("F11: a decision record that cannot be written (a full disk) is logged as an error") {
  TempDir d;
  const std::string rec = d / "run.rec";
  g_log.str("");
  veda::init(off().record(rec).build());
  {
    FullDisk full(16);  // the header is already longer
    auto f = veda::gpu([](float x) { return 2 * x; }, {.name = "full-disk"});
    for (int i = 0; i < 10; ++i) (void)f(std::vector<float>(100));
    veda::shutdown();
  }
  CHECK(logged("could not write the decision record to " + rec));
}

TEST_CASE("F11: a trace that cannot be written (a full disk) is logged as an error, not as written") {
  TempDir d;
  const std::string trace = d / "trace.json";
  g_log.str("");
  veda::init(off().trace(trace).log_level(veda::LogLevel::Info).build());
  {
    FullDisk full(16);  // a small trace: it used to sit in a stream buffer, unchecked
    veda::shutdown();
  }
  CHECK(logged("could not write the trace to " + trace));
  CHECK_FALSE(logged("trace written"));
}

TEST_CASE("F8/F11: a symbolic link as VEDA_RECORD or VEDA_TRACE is refused, its target untouched") {
  TempDir d;
  const std::string victim = d / "victim.txt", link = d / "link";
  write(victim, "precious");
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  init_fails(off().record(link).build(), "symbolic link");
  g_log.str("");
  veda::init(off().trace(link).build());
  veda::shutdown();
  CHECK(logged("could not write the trace"));
  CHECK(slurp(victim) == "precious");
  CHECK_THROWS_AS(veda::telemetry::write_chrome_trace(link), veda::Error);
  CHECK(slurp(victim) == "precious");
}

// ---- F15: replay parsing ------------------------------------------------------

TEST_CASE("F15: a replayed size that overflows is a ConfigError naming the line") {
  TempDir d;
  const std::string rec = d / "overflow.rec";
  write(rec, "# veda decision record v1: op-class<TAB>n<TAB>tier<TAB>site\n"
             "0\t99999999999999999999999\tserial\tdouble-it\n");
  init_fails(off().replay(rec).build(), "line 2");
  init_fails(off().replay(rec).build(), "size out of range");
}

TEST_CASE("F15: a recorded tier the site does not offer is a ReplayMismatch naming the site and the tier") {
  TempDir d;
  const std::string rec = d / "wrong-tier.rec";
  write(rec, "# veda decision record v1: op-class<TAB>n<TAB>tier<TAB>site\n"
             "0\t1000\tcpu-blas\tdouble-it\n");
  veda::init(off().replay(rec).build());
  auto f = veda::gpu([](float x) { return 2 * x; }, {.name = "double-it"});
  try {
    (void)f(std::vector<float>(1000));
    FAIL("accepted");
  } catch (const veda::ReplayMismatch& e) {
    CHECK(std::string(e.what()).find("double-it") != std::string::npos);
    CHECK(std::string(e.what()).find("cpu-blas") != std::string::npos);
  } catch (const std::exception& e) {
    FAIL("wrong exception: " << e.what());
  }
  veda::shutdown();
}

// ---- F17 / F3: plausible profiles, a key that knows the CPU's features ----------

TEST_CASE("F17: a profile with physically implausible rates is a ConfigError naming the figure") {
  TempDir d;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good_profile();
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    const std::string path = d / "absurd.json";
    write(path, s);
    return path;
  };
  init_fails(off().profile(with("\"map_ns_per_elem\": 0.3", "\"map_ns_per_elem\": 1e-300")).build(), "map_ns_per_elem");
  init_fails(off().profile(with("\"bw_all_gbps\": 34.0", "\"bw_all_gbps\": 1e300")).build(), "bw_all_gbps");
  init_fails(off().profile(with("\"fma_gflops_per_thread\": 115.0", "\"fma_gflops_per_thread\": 1e9")).build(),
             "fma_gflops_per_thread");
  init_fails(off().profile(with("\"threads\": 2", "\"threads\": 1000000")).build(), "threads");
  init_fails(off().profile(with("\"sgemm_gflops\": 200.0", "\"sgemm_gflops\": 1e-300")).build(), "sgemm_gflops");
  // The documented defaults and the test profiles are inside the bounds.
  CHECK_NOTHROW(MachineProfile::from_json(good_profile()));
  CHECK_NOTHROW(MachineProfile::from_json(slurp(std::string(VEDA_TEST_DATA) + "/profile_h100.json")));
  CHECK_NOTHROW(MachineProfile::from_json(default_profile(veda::CpuInfo{}, 1, {}, 0).to_json()));
}

TEST_CASE("F17: an implausible cached profile is measured again, not used") {
  TempDir d;
  Cache cache(d);
  veda::init(off().build());
  MachineProfile p = veda::get_runtime().state().profile();
  veda::shutdown();
  p.cpu.map_ns_per_elem = 1e-300;
  write(cache.path, p.to_json());
  g_log.str("");
  veda::init(auto_calibration());
  CHECK(veda::get_runtime().state().profile().source == "calibrated");
  CHECK(veda::get_runtime().state().profile().cpu.map_ns_per_elem > 1e-4);
  veda::shutdown();
  CHECK(logged("map_ns_per_elem"));
}

TEST_CASE("F3: the cache key includes the CPU's SIMD features") {
  veda::CpuInfo big;
  big.model = "Same Model String";
  big.avx2 = big.fma = big.avx512 = true;
  veda::CpuInfo small = big;
  small.avx512 = false;
  const MachineProfile a = default_profile(big, 2, {}, 0), b = default_profile(small, 2, {}, 0);
  CHECK(a.cpu_features != b.cpu_features);
  CHECK(a.key() != b.key());
  CHECK(MachineProfile::from_json(a.to_json()).key() == a.key());  // a reloaded profile keeps its key
}
