// veda/telemetry.hpp — what ran where, why, what it cost, what moved.
//
//   auto cfg = veda::Config::builder().telemetry(true).build();   // or VEDA_TELEMETRY=1
//   ...
//   veda::telemetry::Snapshot s = veda::telemetry::snapshot();
//   std::puts(s.to_prometheus().c_str());
//   veda::telemetry::write_chrome_trace("trace.json");           // or VEDA_TRACE=trace.json
//
// Contract:
// - Off by default. When off, veda records nothing and a call pays one
//   well-predicted branch (bench/telemetry measures it); snapshot() then
//   returns enabled = false and the counters at zero.
// - Counters: calls per device and tier, bytes copied host-to-device and
//   device-to-host, CPU fallbacks by reason, memory-pool hits and misses,
//   exploration runs. Per op (call site name): calls, latency percentiles
//   (p50/p95/p99 from quarter-octave histograms: within 19%), and how far
//   the cost model's prediction was from the measured time. Asynchronous GPU
//   calls that were not synchronised count as calls but have no latency.
// - The newest 4096 decisions are kept (a ring), with their reason.
// - The Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev) has one
//   track per calling thread (each veda call a span, its decision in the
//   span's arguments), one per oneTBB worker (when it was active), and on
//   a GPU one per CUDA stream (each call's device work, and transfers). At
//   most 2^17 (131072) spans are kept; the trace says how many were dropped.
// - VEDA_TRACE=file.json (or Config::trace) turns telemetry on and writes
//   the trace when the runtime shuts down.
//
// Thread-safety: any thread may take snapshots or traces while calls run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "veda/device.hpp"

namespace veda::telemetry {

struct OpStats {
  std::string name;                               // the call site's name ("saxpy", "matmul", ...)
  std::uint64_t calls = 0;
  std::map<std::string, std::uint64_t> by_tier;   // "cpu/tbb-static" -> calls
  std::uint64_t timed = 0;                        // calls with a latency
  double p50_us = 0, p95_us = 0, p99_us = 0, mean_us = 0;
  std::uint64_t predicted = 0;                    // timed calls that had a prediction
  double median_measured_over_predicted = 0;      // 1 = the model was right
  double mean_abs_error = 0;                      // mean |measured - predicted| / measured
};

struct DecisionRecord {
  double t_us = 0;                 // since the runtime started
  std::string name;
  std::vector<std::size_t> sizes;  // element count, or the op's shape
  Device device = Device::Cpu;
  std::string tier;
  std::string reason;
  double predicted_us = -1;        // -1: none (a forced tier)
  double measured_us = -1;         // -1: not measured
  bool explored = false;
  bool fallback = false;
  int rank = -1;                   // Config::rank: the process's rank in an MPI job, -1 for none
};

struct Snapshot {
  bool enabled = false;
  int rank = -1;                   // Config::rank
  double uptime_s = 0;
  std::map<std::string, std::uint64_t> calls;      // "device/tier" -> calls
  std::uint64_t bytes_h2d = 0, bytes_d2h = 0;
  std::uint64_t transfers_h2d = 0, transfers_d2h = 0;
  std::map<std::string, std::uint64_t> fallbacks;  // reason -> calls that fell back to the CPU
  std::map<std::string, std::uint64_t> faults;     // "alloc"/"launch"/"copy" -> faults injected (Config::faults)
  std::uint64_t pool_hits = 0, pool_misses = 0;    // device pool allocations served from cache / upstream
  std::uint64_t explorations = 0;                  // runs of a tier to learn its time
  std::vector<OpStats> ops;                        // by name
  std::vector<DecisionRecord> recent;              // oldest first

  std::string to_json() const;
  std::string to_prometheus() const;  // text exposition format, metric prefix veda_
};

// Of the running runtime (a default Snapshot when none is running).
Snapshot snapshot();
// Zeroes the counters, histograms, ring and trace of the running runtime.
void reset();
// The trace so far as Chrome trace-event JSON, and written to a file
// (veda::Error if it cannot be written).
std::string chrome_trace();
void write_chrome_trace(const std::string& path);

}  // namespace veda::telemetry
