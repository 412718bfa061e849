// `veda explain trace.json`: where the time of a traced run went — per op,
// per device and tier, transfers, fallbacks — and the reasons veda gave.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "runtime/file_io.hpp"
#include "tools/veda/commands.hpp"
#include "veda/error.hpp"

namespace veda::cli {
namespace {
using json = nlohmann::json;

struct OpSummary {
  std::uint64_t calls = 0;
  double us = 0;
  std::map<std::string, std::uint64_t> tiers;    // "cpu/tbb-static" -> calls
  std::map<std::string, std::uint64_t> reasons;  // reason -> calls
  std::uint64_t fallbacks = 0, explored = 0;
  double predicted_us = 0, measured_us = 0;      // over calls that have both
};

struct Transfer {
  std::uint64_t count = 0, bytes = 0;
  double us = 0;
};

bool is_fallback(const std::string& reason) {
  return reason.find("fell back") != std::string::npos || reason.find("without a usable GPU") != std::string::npos ||
         reason.find("out of memory") != std::string::npos;
}

std::string top(const std::map<std::string, std::uint64_t>& m) {
  std::vector<std::pair<std::uint64_t, std::string>> v;
  for (const auto& [k, n] : m) v.emplace_back(n, k);
  std::sort(v.rbegin(), v.rend());
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < 2; ++i)
    out += (i ? "; " : "") + std::to_string(v[i].first) + "x " + v[i].second;
  return out;
}

std::string mib(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  return buf;
}
}  // namespace

int explain(const std::string& path) {
  // A regular file of bounded size: a FIFO or /dev/zero named here is an error, not a hang.
  const detail::FileText f = detail::read_file(path, detail::kTraceMaxBytes);
  if (!f.ok) throw InvalidArgument("veda explain: cannot read " + path + ": " + f.error);
  json doc;
  try {
    doc = json::parse(f.text);
  } catch (const json::exception& e) {
    throw InvalidArgument("veda explain: " + path + " is not JSON: " + e.what());
  }
  if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw InvalidArgument("veda explain: " + path + " has no traceEvents (write one with VEDA_TRACE=file.json)");
  std::map<std::string, OpSummary> ops;
  std::map<std::string, double> device_us;
  std::map<std::string, Transfer> transfers;
  double gpu_busy_us = 0, first = 0, last = 0;
  bool any = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const double ts = e.value("ts", 0.0), dur = e.value("dur", 0.0);
    first = any ? std::min(first, ts) : ts;
    last = any ? std::max(last, ts + dur) : ts + dur;
    any = true;
    const std::string cat = e.value("cat", "");
    if (cat == "call") {
      const json& a = e.contains("args") ? e["args"] : json::object();
      OpSummary& o = ops[e.value("name", "?")];
      ++o.calls;
      o.us += dur;
      const std::string dev = a.value("device", "?");
      ++o.tiers[dev + "/" + a.value("tier", "?")];
      const std::string reason = a.value("reason", "");
      ++o.reasons[reason];
      o.fallbacks += is_fallback(reason);
      o.explored += a.value("explored", false);
      if (a.contains("predicted_us") && a.contains("measured_us")) {
        o.predicted_us += a["predicted_us"].get<double>();
        o.measured_us += a["measured_us"].get<double>();
      }
      device_us[dev] += dur;
    } else if (cat == "h2d" || cat == "d2h" || cat == "d2d") {
      Transfer& t = transfers[cat];
      ++t.count;
      t.us += dur;
      if (e.contains("args")) t.bytes += e["args"].value("bytes", std::uint64_t{0});
    } else if (cat == "gpu") {
      gpu_busy_us += dur;
    }
  }
  std::printf("%s: %.3f s traced", path.c_str(), any ? (last - first) / 1e6 : 0.0);
  if (doc.contains("otherData") && doc["otherData"].value("dropped_spans", 0) > 0)
    std::printf(" (%d spans dropped: the trace is incomplete)", doc["otherData"].value("dropped_spans", 0));
  std::printf("\n\nTime in veda calls by device (calling threads):\n");
  for (const auto& [dev, us] : device_us) std::printf("  %-4s %12.3f ms\n", dev.c_str(), us / 1e3);
  if (gpu_busy_us > 0) std::printf("  GPU streams busy with veda calls: %.3f ms\n", gpu_busy_us / 1e3);

  std::vector<std::pair<double, std::string>> order;
  for (const auto& [name, o] : ops) order.emplace_back(o.us, name);
  std::sort(order.rbegin(), order.rend());
  std::printf("\nBy op (most time first):\n");
  for (const auto& [us, name] : order) {
    const OpSummary& o = ops[name];
    std::printf("  %-24s %8llu calls %12.3f ms  %s", name.c_str(), static_cast<unsigned long long>(o.calls), us / 1e3,
                top(o.tiers).c_str());
    if (o.predicted_us > 0) std::printf("  measured/predicted %.2f", o.measured_us / o.predicted_us);
    if (o.explored) std::printf("  %llu exploring", static_cast<unsigned long long>(o.explored));
    std::printf("\n    why: %s\n", top(o.reasons).c_str());
  }
  std::printf("\nTransfers:\n");
  if (transfers.empty()) std::printf("  none\n");
  for (const auto& [dir, t] : transfers)
    std::printf("  %s: %llu copies, %s, %.3f ms%s\n", dir.c_str(), static_cast<unsigned long long>(t.count),
                mib(t.bytes).c_str(), t.us / 1e3,
                t.us > 0 ? (", " + std::to_string(static_cast<int>(static_cast<double>(t.bytes) / t.us / 1e3)) +
                             " GB/s")
                               .c_str()
                         : "");
  std::uint64_t fallbacks = 0;
  for (const auto& [name, o] : ops) fallbacks += o.fallbacks;
  std::printf("\nFallbacks to the CPU: %llu\n", static_cast<unsigned long long>(fallbacks));
  for (const auto& [name, o] : ops)
    if (o.fallbacks) std::printf("  %s: %llu\n", name.c_str(), static_cast<unsigned long long>(o.fallbacks));
  return 0;
}

}  // namespace veda::cli
