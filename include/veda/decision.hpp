// veda/decision.hpp — where a call ran and why.
//
// Every veda call decides among candidates (serial on the calling thread,
// oneTBB workers, a CUDA kernel, an op's kernel tiers). veda::last_decision()
// returns the calling thread's latest Decision: the chosen device and tier,
// the reason, every candidate with its predicted time, and the measured
// time. VEDA_LOG_LEVEL=debug prints one line per decision.
//
// Placement can be forced per call (an option), for a block of code on this
// thread (ScopedPlacement), or for the whole program (Config::gpu(false),
// VEDA_GPU=0, which win over everything else). Forced results are identical
// to automatic ones.
//
// Thread-safety: last_decision() reads thread-local state; ScopedPlacement
// affects only the thread that creates it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "veda/device.hpp"

namespace veda {

enum class Placement : std::uint8_t { Auto, Cpu, Gpu };

struct Candidate {
  std::string tier;           // "serial", "tbb-static", "tbb-auto", "cuda", ...
  Device device = Device::Cpu;
  double predicted_us = 0;    // total, including transfers
  double transfer_us = 0;     // the part spent moving data
  bool from_history = false;  // measured history outranked the analytic estimate
  bool eligible = true;       // false: not possible for this call (see note)
  std::string note;
};

struct Decision {
  std::string name;                // the wrapped function's or op's name
  std::vector<std::size_t> sizes;  // element counts (or shape) of the call
  Device device = Device::Cpu;
  std::string tier;
  std::string reason;              // e.g. "below TBB break-even; no usable GPU: ..."
  std::vector<Candidate> candidates;
  double predicted_us = 0;
  double measured_us = -1;         // -1: not measured (asynchronous GPU work)
  bool explored = false;           // ran an unmeasured candidate to learn its time
  std::vector<Decision> segments;  // a par_iter plan: one entry per segment
  std::string to_string() const;   // one line; segments on following lines
};

// The calling thread's latest decision (empty name before any call).
Decision last_decision();

// Forces a placement for veda calls made by this thread while it lives.
// A per-call placement option other than Auto takes precedence.
class ScopedPlacement {
 public:
  explicit ScopedPlacement(Placement p) noexcept;
  ~ScopedPlacement();
  ScopedPlacement(const ScopedPlacement&) = delete;
  ScopedPlacement& operator=(const ScopedPlacement&) = delete;

 private:
  Placement previous_;
};

}  // namespace veda
