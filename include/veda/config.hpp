// veda/config.hpp — runtime configuration.
//
// A Config is an immutable value built with Config::builder():
//
//   auto cfg = veda::Config::builder().gpu(false).threads(4).build();
//   veda::init(cfg);
//
// build() validates every field and throws veda::ConfigError naming the field
// and the bad value. When the runtime starts, environment variables are applied
// on top of the Config it was given (see apply_environment and
// docs/configuration.md); a bad environment value is a ConfigError too.
//
// Thread-safety: Config and Builder are values; share them freely once built.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace veda {
class Config;
namespace detail {
// The runtime's copy of a Config with another thread count (src/runtime.cpp
// caps it at the hardware threads).
Config with_threads(Config c, int threads);
}  // namespace detail

// Which floating-point shortcuts kernel tiers may take.
enum class Precision {
  Strict,     // FP32 math only (default)
  AllowTF32,  // tensor-core TF32 for FP32 GEMM (10-bit mantissa inputs)
  AllowFP16,  // TF32, and FP32 GEMM on BF16 tensor cores (8-bit mantissa inputs, FP32 sums:
              // matmul's gpu-cublas-bf16 tier, sm_80+)
};

// How the machine profile is obtained at start-up.
enum class CalibrationMode {
  Auto,   // load the cached profile, measure if there is none (default)
  Force,  // always measure and rewrite the cache
  Off,    // documented analytic defaults, nothing measured or written
};

enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };

// Whether oneTBB's workers are pinned, one CPU each (docs/configuration.md).
enum class Pinning {
  Auto,  // pinned when veda's threads are as many as the process's CPUs (default)
  On,    // pinned whatever the thread count
  Off,   // left to the OS scheduler
};

// Where a Config value came from; used to explain decisions ("forced by config").
enum class Source { Default, Builder, Environment };

// A device-memory limit: absolute bytes or a fraction of the device's memory.
class MemoryLimit {
 public:
  static MemoryLimit bytes(std::uint64_t b) { return MemoryLimit(false, 0.0, b); }
  static MemoryLimit fraction(double f) { return MemoryLimit(true, f, 0); }
  bool is_fraction() const noexcept { return is_fraction_; }
  double fraction_value() const noexcept { return fraction_; }
  std::uint64_t bytes_value() const noexcept { return bytes_; }
  // The limit in bytes for a device with `total` bytes. A fraction is at
  // least 1 byte: a 0-byte limit is refused as a byte count, so a tiny
  // fraction must not produce one either.
  std::uint64_t resolve(std::uint64_t total) const noexcept {
    if (!is_fraction_) return bytes_;
    const auto b = static_cast<std::uint64_t>(fraction_ * static_cast<double>(total));
    return b == 0 && fraction_ > 0 && total > 0 ? 1 : b;
  }
  std::string to_string() const;
  friend bool operator==(const MemoryLimit&, const MemoryLimit&) = default;

 private:
  MemoryLimit(bool f, double fr, std::uint64_t b) : is_fraction_(f), fraction_(fr), bytes_(b) {}
  bool is_fraction_;
  double fraction_;
  std::uint64_t bytes_;
};

class Config {
 public:
  class Builder;
  static Builder builder();
  // A builder starting from `base`'s fields.
  static Builder builder(const Config& base);

  bool gpu() const noexcept { return gpu_; }
  Source gpu_source() const noexcept { return gpu_source_; }
  int threads() const noexcept { return threads_; }
  // The GPU veda uses first (its profile is the one calibrated).
  int device() const noexcept { return devices_.front(); }
  // Every GPU veda uses, device() first; with all_devices(), every GPU found.
  const std::vector<int>& devices() const noexcept { return devices_; }
  bool all_devices() const noexcept { return all_devices_; }
  MemoryLimit memory_pool_limit() const noexcept { return pool_limit_; }
  std::size_t pinned_staging() const noexcept { return pinned_staging_; }
  Precision precision() const noexcept { return precision_; }
  CalibrationMode calibration() const noexcept { return calibration_; }
  bool deterministic() const noexcept { return seed_.has_value(); }
  std::uint64_t seed() const noexcept { return seed_.value_or(0); }
  // Telemetry is on when asked for, or when a trace is to be written.
  bool telemetry() const noexcept { return telemetry_ || !trace_.empty(); }
  // Where the Chrome trace is written at shutdown ("" for nowhere).
  const std::string& trace() const noexcept { return trace_; }
  LogLevel log_level() const noexcept { return log_level_; }
  Pinning pin_workers() const noexcept { return pin_workers_; }
  // Whether what the scheduler measured is kept across processes (next to
  // the cached machine profile; only for this machine's own profile).
  bool learned_history() const noexcept { return learned_history_; }
  // A machine-profile file to use instead of the cache or calibration.
  const std::string& profile() const noexcept { return profile_; }
  // Fault injection for tests ("alloc:N,launch:M,copy:K"; "" for none).
  const std::string& faults() const noexcept { return faults_; }
  // Where each placement decision is written ("" for nowhere), and the file
  // of a recorded run whose decisions this run repeats ("" for none).
  const std::string& record() const noexcept { return record_; }
  const std::string& replay() const noexcept { return replay_; }
  // This process's rank in a multi-process job (veda::mpi::Environment sets
  // it), -1 for none: telemetry snapshots, records and traces carry it.
  int rank() const noexcept { return rank_; }

  // One line per field, for `veda info` and logs.
  std::string to_string() const;

 private:
  friend class Builder;
  friend Config detail::with_threads(Config, int);
  friend Config apply_environment(const Config&,
                                  const std::function<std::optional<std::string>(std::string_view)>&);
  Config() = default;

  bool gpu_ = true;
  Source gpu_source_ = Source::Default;
  int threads_ = 1;
  std::vector<int> devices_{0};
  bool all_devices_ = false;
  MemoryLimit pool_limit_ = MemoryLimit::fraction(0.9);
  std::size_t pinned_staging_ = std::size_t{64} << 20;
  Precision precision_ = Precision::Strict;
  CalibrationMode calibration_ = CalibrationMode::Auto;
  std::optional<std::uint64_t> seed_;
  bool telemetry_ = false;
  std::string trace_;
  LogLevel log_level_ = LogLevel::Warn;
  Pinning pin_workers_ = Pinning::Auto;
  bool learned_history_ = true;
  std::string profile_;
  std::string faults_, record_, replay_;
  int rank_ = -1;
};

class Config::Builder {
 public:
  Builder& gpu(bool enabled);
  // 1 to 4096; the runtime caps it at the hardware threads available (with a
  // warning) unless profile() models another machine.
  Builder& threads(int n);
  Builder& device(int index);  // one GPU: devices({index})
  // Several GPUs of this node, the first used first (calibrated; calls
  // placed on no particular one start there). Each gets its own memory
  // pool, streams and staging; Arrays move between them as calls need.
  Builder& devices(std::vector<int> indices);
  Builder& all_devices();  // every GPU found, device() first
  // A bool is neither a byte count nor a fraction (true would be 1 byte).
  Builder& memory_pool_limit(bool) = delete;
  template <std::integral I>
  Builder& memory_pool_limit(I bytes) {
    if (bytes < 0) return invalid_pool_limit(std::to_string(bytes));
    return memory_pool_limit(MemoryLimit::bytes(static_cast<std::uint64_t>(bytes)));
  }
  template <std::floating_point F>
  Builder& memory_pool_limit(F fraction) {
    return memory_pool_limit(MemoryLimit::fraction(static_cast<double>(fraction)));
  }
  Builder& memory_pool_limit(MemoryLimit limit);
  Builder& pinned_staging(std::size_t bytes);
  Builder& precision(Precision p);
  Builder& calibration(CalibrationMode m);
  Builder& deterministic(std::uint64_t seed);
  Builder& telemetry(bool enabled);
  // Write a Chrome trace-event JSON of the run to `path` at shutdown
  // (turns telemetry on).
  Builder& trace(std::string path);
  Builder& log_level(LogLevel level);
  // Pin oneTBB workers to CPUs, round-robin over the process's affinity
  // mask (a task_scheduler_observer; the calling threads stay free). By
  // default (Pinning::Auto) when veda's threads take every CPU of the mask:
  // then each worker has a CPU of its own. true: Pinning::On; false: Off.
  Builder& pin_workers(bool enabled);
  Builder& pin_workers(Pinning p);
  // Keep what the scheduler measured across processes (on by default): a
  // program's first calls are then placed from earlier runs' measurements.
  Builder& learned_history(bool enabled);
  // Use this machine-profile JSON (as written by `veda calibrate`) instead of
  // the cached or measured one, also from another machine (tests use
  // synthetic profiles this way). It must be a regular file of at most 4 MiB
  // whose figures lie within physical bounds (docs/configuration.md), else
  // init() throws ConfigError; an OpenBLAS kernel set this CPU cannot run is
  // replaced by one it can.
  Builder& profile(std::string path);
  // Test hook: make the Nth device allocation, GPU launch or device copy
  // fail ("alloc:N,launch:M,copy:K", any subset), to exercise the recovery
  // paths (runtime/fault_injection.hpp). build() rejects a malformed spec.
  Builder& faults(std::string spec);
  // Write every placement decision to `path` (site, size, tier), and make
  // them again from such a file: each call takes the tier recorded for the
  // same call of the same site; a call the file does not have throws
  // veda::ReplayMismatch. See docs/reliability.md.
  Builder& record(std::string path);
  Builder& replay(std::string path);
  // -1 (none) or a rank >= 0.
  Builder& rank(int r);

  // Validates every field; throws veda::ConfigError on the first bad one.
  Config build() const;

 private:
  friend class Config;  // builder(base)
  Builder& invalid_pool_limit(std::string text);
  Config c_;
  std::optional<int> threads_;                 // unset: hardware concurrency
  std::optional<std::string> bad_pool_limit_;  // a negative byte count, reported by build()
};

// Applies the VEDA_* environment variables on top of `base` and validates the
// result. `getenv` maps a variable name to its value (nullopt when unset); the
// default reads the process environment. Throws ConfigError naming the
// variable for a value it cannot parse.
Config apply_environment(const Config& base,
                         const std::function<std::optional<std::string>(std::string_view)>& getenv);
Config apply_environment(const Config& base);

std::string_view to_string(Precision p) noexcept;
std::string_view to_string(CalibrationMode m) noexcept;
std::string_view to_string(LogLevel l) noexcept;
std::string_view to_string(Pinning p) noexcept;

}  // namespace veda
