// veda::telemetry: snapshots and exports of the running runtime's Telemetry.
#include "veda/telemetry.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "runtime/fault_injection.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/telemetry.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

namespace veda::telemetry {
namespace {
using json = nlohmann::json;

// Runs f(state) inside a call scope if a runtime is running.
template <class F>
void with_state(F&& f) {
  if (!is_running()) return;
  detail::CallScope scope;
  f(scope.runtime().state());
}

std::string prom_label(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

// "cpu/tbb-static" -> device="cpu",tier="tbb-static"
std::string device_tier_labels(const std::string& key) {
  const auto slash = key.find('/');
  return "device=\"" + prom_label(key.substr(0, slash)) + "\",tier=\"" + prom_label(key.substr(slash + 1)) + "\"";
}
}  // namespace

Snapshot snapshot() {
  Snapshot s;
  with_state([&](detail::RuntimeState& st) {
    if (!st.telemetry) return;
    std::uint64_t hits = 0, misses = 0;
    if (detail::DeviceApi* dev = st.device()) {
      const auto p = dev->pool().stats();
      misses = p.upstream_allocations;
      hits = p.allocations > misses ? p.allocations - misses : 0;
    }
    s = st.telemetry->snapshot(hits, misses);
    if (st.faults)
      for (std::size_t k = 0; k < detail::kFaultKinds; ++k)
        if (auto n = st.faults->injected(static_cast<detail::FaultKind>(k)))
          s.faults[detail::fault_name(static_cast<detail::FaultKind>(k))] = n;
  });
  return s;
}

void reset() {
  with_state([](detail::RuntimeState& st) {
    if (st.telemetry) st.telemetry->reset();
  });
}

std::string chrome_trace() {
  std::string out = R"({"traceEvents":[],"displayTimeUnit":"ms"})";
  with_state([&](detail::RuntimeState& st) {
    if (!st.telemetry) return;
    detail::DeviceApi* dev = st.device();
    if (dev) dev->flush_trace();
    out = detail::trace_json(*st.telemetry, dev ? dev->name() : std::string());
  });
  return out;
}

void write_chrome_trace(const std::string& path) {
  const std::string text = chrome_trace();
  std::ofstream f(path);
  f << text;
  if (!f) throw Error("veda::telemetry::write_chrome_trace: cannot write " + path);
}

std::string Snapshot::to_json() const {
  json j;
  j["enabled"] = enabled;
  j["uptime_s"] = uptime_s;
  j["calls"] = calls;
  j["bytes"] = {{"h2d", bytes_h2d}, {"d2h", bytes_d2h}};
  j["transfers"] = {{"h2d", transfers_h2d}, {"d2h", transfers_d2h}};
  j["fallbacks"] = fallbacks;
  j["faults"] = faults;
  j["pool"] = {{"hits", pool_hits}, {"misses", pool_misses}};
  j["explorations"] = explorations;
  j["ops"] = json::array();
  for (const auto& o : ops)
    j["ops"].push_back({{"name", o.name},
                        {"calls", o.calls},
                        {"by_tier", o.by_tier},
                        {"timed", o.timed},
                        {"latency_us", {{"p50", o.p50_us}, {"p95", o.p95_us}, {"p99", o.p99_us}, {"mean", o.mean_us}}},
                        {"prediction",
                         {{"calls", o.predicted},
                          {"median_measured_over_predicted", o.median_measured_over_predicted},
                          {"mean_abs_error", o.mean_abs_error}}}});
  j["recent"] = json::array();
  for (const auto& r : recent)
    j["recent"].push_back({{"t_us", r.t_us},
                           {"name", r.name},
                           {"sizes", r.sizes},
                           {"device", to_string(r.device)},
                           {"tier", r.tier},
                           {"reason", r.reason},
                           {"predicted_us", r.predicted_us},
                           {"measured_us", r.measured_us},
                           {"explored", r.explored},
                           {"fallback", r.fallback}});
  return j.dump(2);
}

std::string Snapshot::to_prometheus() const {
  std::ostringstream os;
  auto header = [&](const char* name, const char* type, const char* help) {
    os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  header("veda_telemetry_enabled", "gauge", "1 when telemetry is recording");
  os << "veda_telemetry_enabled " << (enabled ? 1 : 0) << '\n';
  header("veda_calls_total", "counter", "calls by device and tier");
  for (const auto& [k, n] : calls) os << "veda_calls_total{" << device_tier_labels(k) << "} " << n << '\n';
  header("veda_transfer_bytes_total", "counter", "bytes copied between host and device");
  os << "veda_transfer_bytes_total{direction=\"h2d\"} " << bytes_h2d << '\n'
     << "veda_transfer_bytes_total{direction=\"d2h\"} " << bytes_d2h << '\n';
  header("veda_transfers_total", "counter", "host-device copies");
  os << "veda_transfers_total{direction=\"h2d\"} " << transfers_h2d << '\n'
     << "veda_transfers_total{direction=\"d2h\"} " << transfers_d2h << '\n';
  header("veda_fallbacks_total", "counter", "calls that ran on the CPU although the GPU was wanted, by reason");
  for (const auto& [k, n] : fallbacks) os << "veda_fallbacks_total{reason=\"" << prom_label(k) << "\"} " << n << '\n';
  header("veda_faults_injected_total", "counter", "faults injected by Config::faults / VEDA_FAULT, by kind");
  for (const auto& [k, n] : faults) os << "veda_faults_injected_total{kind=\"" << k << "\"} " << n << '\n';
  header("veda_pool_allocations_total", "counter", "device pool allocations served from its cache (hit) or the device (miss)");
  os << "veda_pool_allocations_total{result=\"hit\"} " << pool_hits << '\n'
     << "veda_pool_allocations_total{result=\"miss\"} " << pool_misses << '\n';
  header("veda_explorations_total", "counter", "runs of a tier to learn its time");
  os << "veda_explorations_total " << explorations << '\n';
  header("veda_op_calls_total", "counter", "calls per op, device and tier");
  for (const auto& o : ops)
    for (const auto& [k, n] : o.by_tier)
      os << "veda_op_calls_total{op=\"" << prom_label(o.name) << "\"," << device_tier_labels(k) << "} " << n << '\n';
  header("veda_op_latency_microseconds", "summary", "latency of timed calls per op");
  for (const auto& o : ops) {
    if (!o.timed) continue;
    const std::string op = "op=\"" + prom_label(o.name) + "\"";
    os << "veda_op_latency_microseconds{" << op << ",quantile=\"0.5\"} " << o.p50_us << '\n'
       << "veda_op_latency_microseconds{" << op << ",quantile=\"0.95\"} " << o.p95_us << '\n'
       << "veda_op_latency_microseconds{" << op << ",quantile=\"0.99\"} " << o.p99_us << '\n'
       << "veda_op_latency_microseconds_sum{" << op << "} " << o.mean_us * static_cast<double>(o.timed) << '\n'
       << "veda_op_latency_microseconds_count{" << op << "} " << o.timed << '\n';
  }
  header("veda_op_prediction_ratio", "gauge", "median measured / predicted time per op (1 = the cost model was right)");
  for (const auto& o : ops)
    if (o.predicted)
      os << "veda_op_prediction_ratio{op=\"" << prom_label(o.name) << "\"} " << o.median_measured_over_predicted << '\n';
  return os.str();
}

}  // namespace veda::telemetry
