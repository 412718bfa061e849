// Telemetry: the runtime's record of its calls, when Config::telemetry is
// on (RuntimeState::telemetry is null otherwise, and nothing here runs).
// end_call reports every call, the devices report transfers and GPU spans,
// the CPU executor reports worker activity; snapshot() and trace_json()
// (telemetry_export.cpp) turn that into the public views.
//
// Thread-safety: every member may be called concurrently; counters that
// every call touches are atomics, the rest sits behind one mutex.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/worker_activity.hpp"  // ActivityListener
#include "runtime/device_api.hpp"          // SpanKind
#include "runtime/scheduler.hpp"
#include "veda/telemetry.hpp"

namespace veda::detail {

const char* fallback_text(FallbackKind k) noexcept;

struct Span {
  std::int64_t begin_ns = 0, end_ns = 0;
  SpanKind kind = SpanKind::Call;
  int track = 0;             // calling thread, worker slot or stream index
  std::size_t bytes = 0;     // transfers
  std::string label;         // GPU spans: the op's name
  CallRecord call;           // Call spans: the decision
  double predicted_us = -1;  // Call spans
};

// A small, stable number for the calling thread (trace track ids).
int trace_thread_id() noexcept;

class Telemetry final : public ActivityListener {
 public:
  static constexpr std::size_t kRing = 4096;
  static constexpr std::size_t kMaxSpans = std::size_t{1} << 17;
  static constexpr int kLatencyBins = 4 * 44;  // quarter octaves from 1 ns to ~4.9 hours

  Telemetry();

  // One finished call; `c` carries its explanation.
  void on_call(const CallRecord& c, std::int64_t t0, std::int64_t t1, FallbackKind fb);
  void on_transfer(SpanKind dir, std::size_t bytes) noexcept;
  void on_exploration() noexcept { explorations_.fetch_add(1, std::memory_order_relaxed); }
  void add_span(Span s);  // GPU spans, already in host time
  void on_worker_active(int slot, std::int64_t begin_ns, std::int64_t end_ns) override;

  telemetry::Snapshot snapshot(std::uint64_t pool_hits, std::uint64_t pool_misses) const;
  void reset();
  std::int64_t start_ns() const noexcept { return start_ns_; }

 private:
  struct OpAgg {
    std::uint64_t calls = 0, timed = 0, predicted = 0;
    std::array<std::uint64_t, kTierCount> by_tier{};
    std::array<std::uint64_t, kLatencyBins> latency{};
    double sum_us = 0, sum_abs_err = 0;
    std::array<std::uint64_t, 128> ratio{};  // log2(measured / predicted) in eighths of an octave, +-8 octaves
  };
  struct Record {
    CallRecord call;
    std::int64_t t_ns = 0;
    double predicted_us = -1;
    FallbackKind fallback = FallbackKind::None;
  };

  std::int64_t start_ns_;
  std::array<std::atomic<std::uint64_t>, kTierCount> calls_{};
  std::atomic<std::uint64_t> bytes_h2d_{0}, bytes_d2h_{0}, n_h2d_{0}, n_d2h_{0}, explorations_{0};
  std::array<std::atomic<std::uint64_t>, static_cast<int>(FallbackKind::Count)> fallbacks_{};

  mutable std::mutex mu_;
  std::map<std::string, OpAgg> ops_;
  std::deque<Record> ring_;
  std::vector<Span> spans_;
  std::uint64_t dropped_spans_ = 0;

  friend std::string trace_json(const Telemetry&, const std::string&, int);
};

// Chrome trace-event JSON of everything recorded (telemetry_export.cpp).
// rank >= 0 (Config::rank) prefixes each track group's name with it.
std::string trace_json(const Telemetry& t, const std::string& gpu_name, int rank);

// The prediction for the tier that ran, from its explanation (-1: none).
double predicted_us_of(const CallRecord& c);
// The public decision view of one record (decision.cpp).
Decision decision_of(const CallRecord& c);

}  // namespace veda::detail
