// Contract: veda logs through the spdlog logger named "veda" (the program's
// own, if it registered one first); at the default level nothing is printed;
// the no-GPU reason is logged once at info level per runtime start.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "runtime/logging.hpp"
#include "veda/gpu.hpp"
#include "veda/runtime.hpp"

namespace {
std::ostringstream g_out;
std::shared_ptr<spdlog::logger> g_logger = [] {
  auto l = std::make_shared<spdlog::logger>(
      "veda", std::make_shared<spdlog::sinks::ostream_sink_mt>(g_out));
  spdlog::register_logger(l);
  return l;
}();

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("veda uses the program's logger named veda") {
  CHECK(&veda::detail::log() == g_logger.get());
}

TEST_CASE("default level prints nothing at start-up") {
  g_out.str("");
  veda::init(veda::Config::builder().build());
  veda::shutdown();
  CHECK(g_out.str().empty());
}

TEST_CASE("info level logs the GPU status once per start") {
  g_out.str("");
  veda::init(veda::Config::builder().log_level(veda::LogLevel::Info).build());
  const std::string reason = veda::get_runtime().gpu().reason;
  veda::shutdown();
  CHECK(count(g_out.str(), reason) == 1);
}

TEST_CASE("debug level prints one line per decision") {
  veda::init(veda::Config::builder().log_level(veda::LogLevel::Debug).calibration(veda::CalibrationMode::Off).build());
  auto f = veda::gpu([](float x) { return x * 2; }, {.name = "logged-call"});
  g_out.str("");
  for (int i = 0; i < 3; ++i) (void)f(std::vector<float>(8));
  veda::shutdown();
  CHECK(count(g_out.str(), "logged-call n=8 -> cpu/") == 3);  // whichever tier: one line each
}

TEST_CASE("log_once keeps one line per key") {
  veda::detail::configure_logging(veda::LogLevel::Info);
  g_out.str("");
  for (int i = 0; i < 5; ++i) veda::detail::log_once(spdlog::level::info, "k1", "once-only");
  CHECK(count(g_out.str(), "once-only") == 1);
  veda::detail::configure_logging(veda::LogLevel::Warn);
}
