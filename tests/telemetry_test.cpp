// Contract: telemetry records nothing when off; when on, it counts every call
// by device and tier and per op (with latency percentiles and prediction
// error), copies and bytes, fallbacks by reason and explorations; keeps the
// newest 4096 decisions with their reasons; exports JSON, Prometheus text and
// a Chrome trace (one track per calling thread, spans with the decision in
// their arguments, transfers as spans); VEDA_TRACE / Config::trace writes
// the trace at shutdown; reset() starts over.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/veda.hpp"

namespace {
using json = nlohmann::json;

veda::Config config(bool telemetry) {
  return veda::Config::builder().calibration(veda::CalibrationMode::Off).telemetry(telemetry).build();
}

std::uint64_t total_calls(const veda::telemetry::Snapshot& s) {
  std::uint64_t n = 0;
  for (const auto& [k, v] : s.calls) n += v;
  return n;
}

const veda::telemetry::OpStats* op(const veda::telemetry::Snapshot& s, const std::string& name) {
  for (const auto& o : s.ops)
    if (o.name == name) return &o;
  return nullptr;
}
}  // namespace

TEST_CASE("off: nothing is recorded") {
  veda::init(config(false));
  std::vector<float> x(1000, 1.0f);
  (void)veda::sum(x);
  const auto s = veda::telemetry::snapshot();
  CHECK_FALSE(s.enabled);
  CHECK(s.calls.empty());
  CHECK(s.recent.empty());
  const json trace = json::parse(veda::telemetry::chrome_trace());
  CHECK(trace["traceEvents"].empty());
  veda::shutdown();
  CHECK_FALSE(veda::telemetry::snapshot().enabled);  // no runtime: a default snapshot
}

TEST_CASE("on: calls per tier and per op, latency, predictions, decisions") {
  // CPU tiers only: every call is then timed, and each tier key reads cpu/...
  // (on a GPU machine the 2 M-float sums would otherwise go to the device).
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).telemetry(true).gpu(false).build());
  std::vector<float> small(100, 1.0f), big(2'000'003, 0.5f);
  for (int i = 0; i < 50; ++i) (void)veda::sum(small);
  for (int i = 0; i < 5; ++i) (void)veda::sum(big);
  std::vector<std::int32_t> keys(100000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int32_t>((i * 7919) % 1000);
  veda::sort(keys);
  const auto s = veda::telemetry::snapshot();
  CHECK(s.enabled);
  CHECK(total_calls(s) == 56);
  const auto* sum = op(s, "sum");
  REQUIRE(sum != nullptr);
  CHECK(sum->calls == 55);
  CHECK(sum->timed == 55);  // CPU calls are all timed when telemetry is on
  CHECK(sum->p50_us > 0);
  CHECK(sum->p50_us <= sum->p95_us);
  CHECK(sum->p95_us <= sum->p99_us);
  CHECK(sum->predicted > 0);
  CHECK(sum->median_measured_over_predicted > 0);
  std::uint64_t by_tier = 0;
  for (const auto& [k, v] : sum->by_tier) {
    CHECK(k.rfind("cpu/", 0) == 0);
    by_tier += v;
  }
  CHECK(by_tier == 55);
  REQUIRE(op(s, "sort") != nullptr);
  REQUIRE(s.recent.size() == 56);
  CHECK(s.recent.back().name == "sort");
  CHECK_FALSE(s.recent.back().reason.empty());
  CHECK(s.recent.front().t_us <= s.recent.back().t_us);
  std::uint64_t explored = 0;
  for (const auto& r : s.recent) explored += r.explored;
  CHECK(s.explorations == explored);

  veda::telemetry::reset();
  const auto z = veda::telemetry::snapshot();
  CHECK(z.calls.empty());
  CHECK(z.recent.empty());
  CHECK(z.ops.empty());
  veda::shutdown();
}

TEST_CASE("the decision ring keeps the newest 4096") {
  veda::init(config(true));
  std::vector<double> x(10, 1.0);
  for (int i = 0; i < 5000; ++i) (void)veda::sum(x);
  const auto s = veda::telemetry::snapshot();
  CHECK(s.recent.size() == 4096);
  CHECK(op(s, "sum")->calls == 5000);
  veda::shutdown();
}

TEST_CASE("fallbacks are counted by reason") {
  veda::init(config(true));
  std::vector<float> x(1000, 1.0f);
  veda::ReduceOptions o;
  o.placement = veda::Placement::Gpu;  // not strict: falls back without a GPU
  (void)veda::sum(x, o);
  veda::ReduceOptions f;
  f.tier = "cuda";
  (void)veda::sum(x, f);
  const auto s = veda::telemetry::snapshot();
  if (!veda::get_runtime().gpu_usable()) {
    CHECK(s.fallbacks.at("placement Gpu without a usable GPU") == 1);
    CHECK(s.fallbacks.at("GPU tier forced without a usable GPU") == 1);
    CHECK(s.recent.back().fallback);
    CHECK(s.recent.back().reason.find("GPU tier forced") != std::string::npos);
  }
  veda::shutdown();
}

TEST_CASE("transfers are counted and traced (emulated device)") {
  veda::init(config(true));
  auto& st = veda::get_runtime().state();
  st.install_device(std::make_unique<veda::detail::HostDevice>());
  veda::Array<float> a(std::vector<float>(1 << 16, 2.0f));
  a.to_device();
  a.to_host();  // the device copy is current and the host's too: nothing to copy back
  a.host()[0] = 3.0f;
  a.to_device();  // host wrote: copy again
  const auto s = veda::telemetry::snapshot();
  CHECK(s.transfers_h2d == 2);
  CHECK(s.bytes_h2d == 2 * (std::size_t{1} << 16) * sizeof(float));
  const json trace = json::parse(veda::telemetry::chrome_trace());
  int h2d = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "h2d") {
      ++h2d;
      CHECK(e["args"]["bytes"] == (std::size_t{1} << 16) * sizeof(float));
    }
  CHECK(h2d == 2);
  veda::shutdown();
}

TEST_CASE("exports: JSON, Prometheus text, Chrome trace") {
  veda::init(config(true));
  std::vector<float> x(4096, 1.0f);
  for (int i = 0; i < 10; ++i) (void)veda::sum(x);
  const auto s = veda::telemetry::snapshot();
  const json j = json::parse(s.to_json());
  CHECK(j["enabled"] == true);
  CHECK(j["ops"][0]["name"] == "sum");
  CHECK(j["ops"][0]["calls"] == 10);
  const std::string prom = s.to_prometheus();
  CHECK(prom.find("# TYPE veda_calls_total counter") != std::string::npos);
  CHECK(prom.find("veda_op_calls_total{op=\"sum\",device=\"cpu\"") != std::string::npos);
  CHECK(prom.find("veda_op_latency_microseconds{op=\"sum\",quantile=\"0.99\"}") != std::string::npos);

  const json trace = json::parse(veda::telemetry::chrome_trace());
  int calls = 0;
  bool thread_named = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1) thread_named = true;
    if (e["ph"] != "X" || e["cat"] != "call") continue;
    ++calls;
    CHECK(e["name"] == "sum");
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(e["args"]["tier"].is_string());
    CHECK_FALSE(e["args"]["reason"].get<std::string>().empty());
    CHECK(e["args"]["n"] == "4096");
  }
  CHECK(calls == 10);
  CHECK(thread_named);
  CHECK(trace["otherData"]["dropped_spans"] == 0);
  veda::shutdown();
}

TEST_CASE("Config::trace writes the trace at shutdown") {
  const auto path = std::filesystem::temp_directory_path() / ("veda-trace-" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).trace(path.string()).build());
  CHECK(veda::get_runtime().config().telemetry());
  std::vector<double> x(100, 1.0);
  (void)veda::max(x);
  veda::shutdown();
  REQUIRE(std::filesystem::exists(path));
  std::ifstream in(path);
  const json trace = json::parse(in);
  bool found = false;
  for (const auto& e : trace["traceEvents"]) found |= e.value("name", "") == "max";
  CHECK(found);
  std::filesystem::remove(path);
}

// Issue 20, F17: snapshot(), reset() and chrome_trace() racing shutdown()
// return the documented defaults instead of throwing.
TEST_CASE("telemetry reads racing shutdown never throw") {
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, threw{0};
  std::thread reader([&] {
    while (!stop.load()) {
      try {
        (void)veda::telemetry::snapshot();
        veda::telemetry::reset();
        (void)veda::telemetry::chrome_trace();
        ++reads;
      } catch (...) {
        ++threw;
      }
    }
  });
  for (int cycle = 0; cycle < 100; ++cycle) {
    veda::shutdown();
    veda::init(veda::Config::builder().telemetry(true).calibration(veda::CalibrationMode::Off).build());
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  reader.join();
  CHECK(threw.load() == 0);
  CHECK(reads.load() > 0);
}
