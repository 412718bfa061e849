// apply_environment: the VEDA_* variables, applied on top of a Config.
// Every variable is documented in docs/configuration.md. An empty value counts
// as unset; any other value that does not parse is a ConfigError naming the
// variable, never silently ignored.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "runtime/fault_injection.hpp"
#include "src/config_validate.hpp"
#include "veda/config.hpp"
#include "veda/error.hpp"

namespace veda {
namespace {

std::string normalise(std::string v) {
  auto not_space = [](unsigned char ch) { return !std::isspace(ch); };
  v.erase(v.begin(), std::find_if(v.begin(), v.end(), not_space));
  v.erase(std::find_if(v.rbegin(), v.rend(), not_space).base(), v.end());
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return v;
}

std::optional<bool> bool_value(const std::string& v) {
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return std::nullopt;
}

bool parse_bool(const std::string& name, const std::string& v) {
  if (const auto b = bool_value(v)) return *b;
  throw ConfigError(name, v, "expected 0 or 1 (also true/false, on/off, yes/no)");
}

template <class Int>
bool parse_int(const std::string& v, Int& out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size() && !v.empty();
}

int parse_int_in(const std::string& name, const std::string& v, int lo, int hi) {
  long long x = 0;
  if (!parse_int(v, x) || x < lo || x > hi)
    throw ConfigError(name, v,
                      "expected an integer between " + std::to_string(lo) + " and " + std::to_string(hi));
  return static_cast<int>(x);
}

// "1048576", "64k", "64KiB", "512M", "2GiB" (binary multiples).
std::uint64_t parse_bytes(const std::string& name, const std::string& v) {
  std::size_t digits = 0;
  while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
  std::uint64_t n = 0;
  const std::string num = v.substr(0, digits), unit = v.substr(digits);
  static const std::pair<const char*, int> units[] = {
      {"", 0}, {"b", 0}, {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20}, {"mb", 20},
      {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40}, {"tb", 40}, {"tib", 40}};
  auto u = std::find_if(std::begin(units), std::end(units),
                        [&](const auto& e) { return unit == e.first; });
  if (!parse_int(num, n) || u == std::end(units) || (u->second && n > (~std::uint64_t{0} >> u->second)))
    throw ConfigError(name, v, "expected a byte count such as 1048576, 512MiB or 2GiB");
  return n << u->second;
}

}  // namespace

Config apply_environment(const Config& base,
                         const std::function<std::optional<std::string>(std::string_view)>& getenv) {
  Config c = base;
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto v = getenv(name);
    if (!v) return std::nullopt;
    std::string n = normalise(*v);
    if (n.empty()) return std::nullopt;
    return n;
  };
  if (auto v = get("VEDA_GPU")) {
    c.gpu_ = parse_bool("VEDA_GPU", *v);
    c.gpu_source_ = Source::Environment;
  }
  if (auto v = get("VEDA_THREADS")) c.threads_ = parse_int_in("VEDA_THREADS", *v, 1, 4096);
  if (auto v = get("VEDA_DEVICE")) {
    c.devices_ = {parse_int_in("VEDA_DEVICE", *v, 0, 1023)};
    c.all_devices_ = false;
  }
  if (auto v = get("VEDA_DEVICES")) {  // "0,2" or "all"
    if (*v == "all") {
      c.all_devices_ = true;
    } else {
      c.devices_.clear();
      c.all_devices_ = false;
      for (std::size_t at = 0; at <= v->size();) {
        const std::size_t comma = std::min(v->find(',', at), v->size());
        c.devices_.push_back(parse_int_in("VEDA_DEVICES", v->substr(at, comma - at), 0, 1023));
        at = comma + 1;
      }
      detail::check_devices(c.devices_, "VEDA_DEVICES");
    }
  }
  if (auto v = get("VEDA_LOG_LEVEL")) {
    static const std::pair<const char*, LogLevel> levels[] = {
        {"trace", LogLevel::Trace}, {"debug", LogLevel::Debug}, {"info", LogLevel::Info},
        {"warn", LogLevel::Warn},   {"warning", LogLevel::Warn}, {"error", LogLevel::Error},
        {"off", LogLevel::Off}};
    auto it = std::find_if(std::begin(levels), std::end(levels),
                           [&](const auto& e) { return *v == e.first; });
    if (it == std::end(levels))
      throw ConfigError("VEDA_LOG_LEVEL", *v, "expected trace, debug, info, warn, error or off");
    c.log_level_ = it->second;
  }
  if (auto v = get("VEDA_DETERMINISTIC")) {
    std::uint64_t seed = 0;
    if (*v == "off" || *v == "false" || *v == "no")
      c.seed_.reset();
    else if (*v == "on" || *v == "true" || *v == "yes")
      c.seed_ = 0;
    else if (parse_int(*v, seed))
      c.seed_ = seed;
    else
      throw ConfigError("VEDA_DETERMINISTIC", *v, "expected a seed (unsigned integer), on or off");
  }
  if (auto v = get("VEDA_CALIBRATION")) {
    if (*v == "auto") c.calibration_ = CalibrationMode::Auto;
    else if (*v == "force") c.calibration_ = CalibrationMode::Force;
    else if (*v == "off") c.calibration_ = CalibrationMode::Off;
    else throw ConfigError("VEDA_CALIBRATION", *v, "expected auto, force or off");
  }
  if (auto v = get("VEDA_PRECISION")) {
    if (*v == "strict") c.precision_ = Precision::Strict;
    else if (*v == "tf32") c.precision_ = Precision::AllowTF32;
    else if (*v == "fp16") c.precision_ = Precision::AllowFP16;
    else throw ConfigError("VEDA_PRECISION", *v, "expected strict, tf32 or fp16");
  }
  if (auto v = get("VEDA_TELEMETRY")) c.telemetry_ = parse_bool("VEDA_TELEMETRY", *v);
  if (auto v = get("VEDA_PIN_WORKERS")) {
    const auto b = bool_value(*v);
    if (*v == "auto") c.pin_workers_ = Pinning::Auto;
    else if (b) c.pin_workers_ = *b ? Pinning::On : Pinning::Off;
    else throw ConfigError("VEDA_PIN_WORKERS", *v, "expected auto, 0 or 1 (also true/false, on/off, yes/no)");
  }
  if (auto v = get("VEDA_HISTORY")) c.learned_history_ = parse_bool("VEDA_HISTORY", *v);
  if (auto v = get("VEDA_MEMORY_POOL_LIMIT")) {
    if (v->find('.') != std::string::npos) {
      char* end = nullptr;
      const double f = std::strtod(v->c_str(), &end);
      if (end != v->c_str() + v->size() || !std::isfinite(f) || f <= 0.0 || f > 1.0)
        throw ConfigError("VEDA_MEMORY_POOL_LIMIT", *v,
                          "expected a fraction in (0, 1] such as 0.8, or a byte count");
      c.pool_limit_ = MemoryLimit::fraction(f);
    } else {
      const auto b = parse_bytes("VEDA_MEMORY_POOL_LIMIT", *v);
      if (b == 0) throw ConfigError("VEDA_MEMORY_POOL_LIMIT", *v, "must be a positive byte count");
      c.pool_limit_ = MemoryLimit::bytes(b);
    }
  }
  if (auto v = getenv("VEDA_PROFILE"); v && !v->empty()) c.profile_ = *v;  // a path: not lower-cased
  if (auto v = getenv("VEDA_TRACE"); v && !v->empty()) c.trace_ = *v;
  if (auto v = getenv("VEDA_RECORD"); v && !v->empty()) c.record_ = *v;
  if (auto v = getenv("VEDA_REPLAY"); v && !v->empty()) c.replay_ = *v;
  if (auto v = get("VEDA_FAULT")) {
    detail::parse_fault_plan(*v, "VEDA_FAULT");  // names the variable, not the field
    c.faults_ = *v;
  }
  if (auto v = get("VEDA_PINNED_STAGING")) {
    c.pinned_staging_ = parse_bytes("VEDA_PINNED_STAGING", *v);
    if (c.pinned_staging_ != 0 && c.pinned_staging_ < (std::size_t{64} << 10))
      throw ConfigError("VEDA_PINNED_STAGING", *v, "must be 0 (disabled) or at least 64KiB");
  }
  detail::validate(c);
  return c;
}

Config apply_environment(const Config& base) {
  return apply_environment(base, [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace veda
