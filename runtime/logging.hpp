// veda's logger: spdlog logger "veda" on stderr.
//
// If the program registered its own logger named "veda" with spdlog before
// the runtime starts, veda uses it. The level comes from Config::log_level
// (VEDA_LOG_LEVEL); the default, warn, prints nothing on normal calls.
// log_once() keeps a message per key to one line per runtime (e.g. a
// fallback at one call site).
//
// Thread-safety: spdlog loggers are thread-safe; log_once is too.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

#include "veda/config.hpp"

namespace veda::detail {

spdlog::logger& log();
void configure_logging(LogLevel level);
// Logs `msg` at `level` the first time `key` is seen since the last reset.
void log_once(spdlog::level::level_enum level, const std::string& key, const std::string& msg);
void reset_log_once();

}  // namespace veda::detail
