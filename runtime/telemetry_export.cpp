// veda's telemetry exports: Snapshot as JSON and Prometheus text, and the
// Chrome trace-event JSON of a Telemetry (chrome://tracing, Perfetto):
// process 1 holds one track per calling thread, process 2 one per oneTBB
// worker slot, process 3 one per CUDA stream. Times are microseconds since
// the runtime started.
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "veda/telemetry.hpp"

#include "runtime/telemetry.hpp"

namespace veda::detail {
namespace {
using json = nlohmann::json;

const char* kind_name(SpanKind k) {
  switch (k) {
    case SpanKind::Call: return "call";
    case SpanKind::Worker: return "worker";
    case SpanKind::GpuCall: return "gpu";
    case SpanKind::H2D: return "h2d";
    case SpanKind::D2H: return "d2h";
    case SpanKind::D2D: return "d2d";
  }
  return "other";
}

int pid_of(SpanKind k) { return k == SpanKind::Call ? 1 : k == SpanKind::Worker ? 2 : 3; }

std::string bytes_text(std::size_t b) {
  char buf[32];
  if (b >= (std::size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  return buf;
}
}  // namespace

std::string trace_json(const Telemetry& t, const std::string& gpu_name, int rank) {
  json events = json::array();
  const std::string who = rank >= 0 ? "rank " + std::to_string(rank) + ": " : "";
  auto meta = [&](const char* what, int pid, int tid, const std::string& name) {
    json m = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", tid < 0 ? who + name : name}}}};
    if (tid >= 0) m["tid"] = tid;
    events.push_back(std::move(m));
  };
  meta("process_name", 1, -1, "veda calls (host threads)");
  meta("process_name", 2, -1, "oneTBB workers");
  if (!gpu_name.empty()) meta("process_name", 3, -1, "GPU: " + gpu_name);
  std::lock_guard lock(t.mu_);
  std::map<std::pair<int, int>, bool> named;
  for (const Span& s : t.spans_) {
    const int pid = pid_of(s.kind);
    if (!named[{pid, s.track}]) {
      named[{pid, s.track}] = true;
      meta("thread_name", pid, s.track,
           pid == 1 ? "thread " + std::to_string(s.track)
                    : pid == 2 ? "worker " + std::to_string(s.track) : "stream " + std::to_string(s.track));
    }
    json e = {{"ph", "X"},
              {"cat", kind_name(s.kind)},
              {"pid", pid},
              {"tid", s.track},
              {"ts", static_cast<double>(s.begin_ns - t.start_ns_) / 1e3},
              {"dur", static_cast<double>(s.end_ns - s.begin_ns) / 1e3}};
    if (s.kind == SpanKind::Call) {
      const Decision d = decision_of(s.call);
      e["name"] = d.name;
      json args = {{"device", to_string(d.device)}, {"tier", d.tier}, {"reason", d.reason}};
      std::string size;
      for (std::size_t i = 0; i < d.sizes.size(); ++i) size += (i ? "x" : "") + std::to_string(d.sizes[i]);
      args["n"] = size;
      if (s.predicted_us >= 0) args["predicted_us"] = s.predicted_us;
      if (d.measured_us >= 0) args["measured_us"] = d.measured_us;
      if (s.call.explored) args["explored"] = true;
      e["args"] = std::move(args);
    } else if (s.kind == SpanKind::Worker) {
      e["name"] = "active";
    } else if (s.kind == SpanKind::GpuCall) {
      e["name"] = s.label;
    } else {
      e["name"] = std::string(kind_name(s.kind)) + " " + bytes_text(s.bytes);
      e["args"] = {{"bytes", s.bytes}};
    }
    events.push_back(std::move(e));
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"producer", "veda " VEDA_VERSION}, {"dropped_spans", t.dropped_spans_}}}};
  return doc.dump();
}

}  // namespace veda::detail

namespace veda::telemetry {
namespace {
using json = nlohmann::json;

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

std::string Snapshot::to_json() const {
  json j;
  j["enabled"] = enabled;
  if (rank >= 0) j["rank"] = rank;
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
                           {"fallback", r.fallback},
                           {"rank", r.rank}});
  return j.dump(2);
}

std::string Snapshot::to_prometheus() const {
  std::ostringstream os;
  auto header = [&](const char* name, const char* type, const char* help) {
    os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  header("veda_telemetry_enabled", "gauge", "1 when telemetry is recording");
  os << "veda_telemetry_enabled " << (enabled ? 1 : 0) << '\n';
  if (rank >= 0) {
    header("veda_rank", "gauge", "the process's rank in its MPI job (Config::rank)");
    os << "veda_rank " << rank << '\n';
  }
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
