#include "runtime/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>
#include <unordered_set>

#include "veda/detail/settled_plans.hpp"

namespace veda::detail {
namespace {
std::mutex g_once_mutex;
std::unordered_set<std::string> g_once;

spdlog::level::level_enum to_spd(LogLevel l) {
  switch (l) {
    case LogLevel::Trace: return spdlog::level::trace;
    case LogLevel::Debug: return spdlog::level::debug;
    case LogLevel::Info: return spdlog::level::info;
    case LogLevel::Warn: return spdlog::level::warn;
    case LogLevel::Error: return spdlog::level::err;
    case LogLevel::Off: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> make_logger() {
  if (auto existing = spdlog::get("veda")) return existing;
  try {
    auto l = spdlog::stderr_color_mt("veda");
    l->set_pattern("[veda %^%l%$] %v");
    l->set_level(spdlog::level::warn);
    return l;
  } catch (const spdlog::spdlog_ex&) {  // registered concurrently by the program
    return spdlog::get("veda");
  }
}
}  // namespace

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = make_logger();
  return *logger;
}

void configure_logging(LogLevel level) {
  log().set_level(to_spd(level));
  invalidate_settled_plans();  // settled calls skip the debug log
}

void log_once(spdlog::level::level_enum level, const std::string& key, const std::string& msg) {
  if (!log().should_log(level)) return;
  {
    std::lock_guard lock(g_once_mutex);
    if (!g_once.insert(key).second) return;
  }
  log().log(level, msg);
}

void reset_log_once() {
  std::lock_guard lock(g_once_mutex);
  g_once.clear();
}

}  // namespace veda::detail
