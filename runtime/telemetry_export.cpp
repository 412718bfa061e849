// The Chrome trace-event JSON of a Telemetry (chrome://tracing, Perfetto):
// process 1 holds one track per calling thread, process 2 one per oneTBB
// worker slot, process 3 one per CUDA stream. Times are microseconds since
// the runtime started.
#include <nlohmann/json.hpp>

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

std::string trace_json(const Telemetry& t, const std::string& gpu_name) {
  json events = json::array();
  auto meta = [&](const char* what, int pid, int tid, const std::string& name) {
    json m = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}};
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
