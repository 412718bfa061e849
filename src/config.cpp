// Config::Builder validation and text forms.
#include "veda/config.hpp"

#include <tbb/info.h>

#include <cmath>
#include <sstream>

#include "runtime/fault_injection.hpp"
#include "src/config_validate.hpp"
#include "veda/error.hpp"

namespace veda {
namespace {
constexpr int kMaxThreads = 4096;
constexpr std::size_t kMinStaging = std::size_t{64} << 10;
}  // namespace

std::string MemoryLimit::to_string() const {
  std::ostringstream os;
  if (is_fraction_)
    os << fraction_ << " of device memory";
  else
    os << bytes_ << " bytes";
  return os.str();
}

Config::Builder Config::builder() { return Builder{}; }
Config::Builder Config::builder(const Config& base) {
  Builder b;
  b.c_ = base;
  b.threads_ = base.threads();
  return b;
}

Config::Builder& Config::Builder::gpu(bool enabled) {
  c_.gpu_ = enabled;
  c_.gpu_source_ = Source::Builder;
  return *this;
}
Config::Builder& Config::Builder::threads(int n) {
  threads_ = n;
  return *this;
}
Config::Builder& Config::Builder::device(int index) {
  c_.devices_ = {index};
  c_.all_devices_ = false;
  return *this;
}
Config::Builder& Config::Builder::devices(std::vector<int> indices) {
  c_.devices_ = std::move(indices);
  c_.all_devices_ = false;
  return *this;
}
Config::Builder& Config::Builder::all_devices() {
  c_.all_devices_ = true;
  return *this;
}
Config::Builder& Config::Builder::memory_pool_limit(MemoryLimit limit) {
  c_.pool_limit_ = limit;
  bad_pool_limit_.reset();
  return *this;
}
Config::Builder& Config::Builder::invalid_pool_limit(std::string text) {
  bad_pool_limit_ = std::move(text);
  return *this;
}
Config::Builder& Config::Builder::pinned_staging(std::size_t bytes) {
  c_.pinned_staging_ = bytes;
  return *this;
}
Config::Builder& Config::Builder::precision(Precision p) {
  c_.precision_ = p;
  return *this;
}
Config::Builder& Config::Builder::calibration(CalibrationMode m) {
  c_.calibration_ = m;
  return *this;
}
Config::Builder& Config::Builder::deterministic(std::uint64_t seed) {
  c_.seed_ = seed;
  return *this;
}
Config::Builder& Config::Builder::telemetry(bool enabled) {
  c_.telemetry_ = enabled;
  return *this;
}
Config::Builder& Config::Builder::trace(std::string path) {
  c_.trace_ = std::move(path);
  return *this;
}
Config::Builder& Config::Builder::log_level(LogLevel level) {
  c_.log_level_ = level;
  return *this;
}
Config::Builder& Config::Builder::pin_workers(bool enabled) { return pin_workers(enabled ? Pinning::On : Pinning::Off); }
Config::Builder& Config::Builder::pin_workers(Pinning p) {
  c_.pin_workers_ = p;
  return *this;
}
Config::Builder& Config::Builder::learned_history(bool enabled) {
  c_.learned_history_ = enabled;
  return *this;
}
Config::Builder& Config::Builder::faults(std::string spec) {
  c_.faults_ = std::move(spec);
  return *this;
}

Config::Builder& Config::Builder::record(std::string path) {
  c_.record_ = std::move(path);
  return *this;
}

Config::Builder& Config::Builder::replay(std::string path) {
  c_.replay_ = std::move(path);
  return *this;
}

Config::Builder& Config::Builder::rank(int r) {
  c_.rank_ = r;
  return *this;
}

Config::Builder& Config::Builder::profile(std::string path) {
  c_.profile_ = std::move(path);
  return *this;
}

namespace detail {
void check_devices(const std::vector<int>& d, const char* option) {
  std::string text;
  for (int i : d) text += (text.empty() ? "" : ",") + std::to_string(i);
  if (d.empty()) throw ConfigError(option, "{}", "names no device (give at least one index)");
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] < 0) throw ConfigError(option, text, "device indices must be >= 0");
    for (std::size_t j = 0; j < i; ++j)
      if (d[i] == d[j]) throw ConfigError(option, text, "names device " + std::to_string(d[i]) + " twice");
  }
}

void validate(const Config& c) {
  if (c.threads() < 1 || c.threads() > kMaxThreads)
    throw ConfigError("threads", std::to_string(c.threads()),
                      "must be between 1 and " + std::to_string(kMaxThreads));
  check_devices(c.devices(), c.devices().size() == 1 ? "device" : "devices");
  if (c.rank() < -1) throw ConfigError("rank", std::to_string(c.rank()), "must be -1 (none) or >= 0");
  const MemoryLimit lim = c.memory_pool_limit();
  if (lim.is_fraction()) {
    const double f = lim.fraction_value();
    if (!std::isfinite(f) || f <= 0.0 || f > 1.0)
      throw ConfigError("memory_pool_limit", lim.to_string(),
                        "a fraction must be in (0, 1]");
    // Below 2^-64 a fraction is less than a byte of any device (totals are
    // below 2^64): the 0-byte limit that a byte count of 0 is refused for.
    if (f < 0x1p-64)
      throw ConfigError("memory_pool_limit", lim.to_string(),
                        "the fraction is so small that it is 0 bytes of any device's memory");
  } else if (lim.bytes_value() == 0) {
    throw ConfigError("memory_pool_limit", "0", "must be a positive byte count");
  }
  if (c.pinned_staging() != 0 && c.pinned_staging() < kMinStaging)
    throw ConfigError("pinned_staging", std::to_string(c.pinned_staging()),
                      "must be 0 (disabled) or at least 65536 bytes");
  auto in_enum = [](auto v, auto lo, auto hi) { return v >= lo && v <= hi; };
  if (!in_enum(c.precision(), Precision::Strict, Precision::AllowFP16))
    throw ConfigError("precision", std::to_string(static_cast<int>(c.precision())), "unknown value");
  if (!in_enum(c.calibration(), CalibrationMode::Auto, CalibrationMode::Off))
    throw ConfigError("calibration", std::to_string(static_cast<int>(c.calibration())),
                      "unknown value");
  if (!in_enum(c.log_level(), LogLevel::Trace, LogLevel::Off))
    throw ConfigError("log_level", std::to_string(static_cast<int>(c.log_level())), "unknown value");
  if (!in_enum(c.pin_workers(), Pinning::Auto, Pinning::Off))
    throw ConfigError("pin_workers", std::to_string(static_cast<int>(c.pin_workers())), "unknown value");
  parse_fault_plan(c.faults(), "faults");
}
}  // namespace detail

Config Config::Builder::build() const {
  if (bad_pool_limit_)
    throw ConfigError("memory_pool_limit", *bad_pool_limit_, "must be a positive byte count");
  Config c = c_;
  c.threads_ = threads_.value_or(tbb::info::default_concurrency());
  detail::validate(c);
  return c;
}

std::string_view to_string(Precision p) noexcept {
  switch (p) {
    case Precision::Strict: return "strict";
    case Precision::AllowTF32: return "tf32";
    case Precision::AllowFP16: return "fp16";
  }
  return "?";
}
std::string_view to_string(Pinning p) noexcept {
  switch (p) {
    case Pinning::Auto: return "auto";
    case Pinning::On: return "on";
    case Pinning::Off: return "off";
  }
  return "?";
}
std::string_view to_string(CalibrationMode m) noexcept {
  switch (m) {
    case CalibrationMode::Auto: return "auto";
    case CalibrationMode::Force: return "force";
    case CalibrationMode::Off: return "off";
  }
  return "?";
}
std::string_view to_string(LogLevel l) noexcept {
  switch (l) {
    case LogLevel::Trace: return "trace";
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
    case LogLevel::Off: return "off";
  }
  return "?";
}

std::string Config::to_string() const {
  std::ostringstream os;
  os << "gpu=" << (gpu_ ? "on" : "off")
     << (gpu_source_ == Source::Environment ? " (VEDA_GPU)"
         : gpu_source_ == Source::Builder   ? " (config)"
                                            : "")
     << " threads=" << threads_ << " device=" << devices_.front() << [&] {
       std::string t;
       for (int i : devices_) t += (t.empty() ? "" : ",") + std::to_string(i);
       return all_devices_ ? std::string(" devices=all") : devices_.size() > 1 ? " devices=" + t : std::string();
     }()
     << " memory_pool_limit=" << pool_limit_.to_string()
     << " pinned_staging=" << pinned_staging_ << " precision=" << veda::to_string(precision_)
     << " calibration=" << veda::to_string(calibration_)
     << " deterministic=" << (seed_ ? "seed " + std::to_string(*seed_) : std::string("off"))
     << " telemetry=" << (telemetry() ? "on" : "off") << (trace_.empty() ? std::string() : " trace=" + trace_) << " log_level=" << veda::to_string(log_level_)
     << " pin_workers=" << veda::to_string(pin_workers_)
     << " learned_history=" << (learned_history_ ? "on" : "off")
     << (profile_.empty() ? std::string() : " profile=" + profile_)
     << (faults_.empty() ? std::string() : " faults=" + faults_)
     << (record_.empty() ? std::string() : " record=" + record_)
     << (replay_.empty() ? std::string() : " replay=" + replay_)
     << (rank_ < 0 ? std::string() : " rank=" + std::to_string(rank_));
  return os.str();
}

namespace detail {
Config with_threads(Config c, int threads) {
  c.threads_ = threads;
  return c;
}
}  // namespace detail

}  // namespace veda
