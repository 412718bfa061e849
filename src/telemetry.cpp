// veda::telemetry's entry points: snapshots, reset and the Chrome trace of
// the running runtime (the export formats: runtime/telemetry_export.cpp).
#include "veda/telemetry.hpp"

#include <optional>

#include "runtime/fault_injection.hpp"
#include "runtime/file_io.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/telemetry.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

namespace veda::telemetry {
namespace {
// Runs f(state) inside a call scope if a runtime is running. One shut down
// between the check and the scope counts as not running (the documented
// defaults), not as an error.
template <class F>
void with_state(F&& f) {
  if (!is_running()) return;
  std::optional<detail::CallScope> scope;
  try {
    scope.emplace();
  } catch (const Error&) {
    return;
  }
  f(scope->runtime().state());
}
}  // namespace

Snapshot snapshot() {
  Snapshot s;
  with_state([&](detail::RuntimeState& st) {
    if (!st.telemetry) return;
    std::uint64_t hits = 0, misses = 0;
    for (std::size_t slot = 0; slot < st.device_count(); ++slot) {
      const auto p = st.device_at(slot)->pool().stats();
      misses += p.upstream_allocations;
      hits += p.allocations > p.upstream_allocations ? p.allocations - p.upstream_allocations : 0;
    }
    s = st.telemetry->snapshot(hits, misses);
    s.rank = st.config.rank();
    for (auto& r : s.recent) r.rank = s.rank;
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
    for (std::size_t slot = 0; slot < st.device_count(); ++slot) st.device_at(slot)->flush_trace();
    detail::DeviceApi* first = st.device_at(0);
    out = detail::trace_json(*st.telemetry, first ? first->name() : std::string(), st.config.rank());
  });
  return out;
}

void write_chrome_trace(const std::string& path) {
  const std::string text = chrome_trace();
  // A regular file only, never through a symbolic link; every write checked.
  detail::FileWriter f;
  std::string why;
  if (!f.open(path, why)) throw Error("veda::telemetry::write_chrome_trace: cannot write " + path + ": " + why);
  if (!f.write(text) || !f.close())
    throw Error("veda::telemetry::write_chrome_trace: cannot write " + path + ": " + f.error());
}

}  // namespace veda::telemetry
