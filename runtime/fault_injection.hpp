// Fault injection: a test hook that makes the Nth device allocation, GPU
// kernel launch or device copy fail, so the recovery paths run on demand.
//
// Config::faults("alloc:N,launch:M,copy:K") (or VEDA_FAULT) arms it; each
// kind counts its events from the runtime's start (after calibration) and
// fails exactly its Nth one: an allocation with veda::OutOfMemory (as a
// full device would), a launch or a copy with veda::DeviceFault. What the
// runtime does then: a copy is retried once (Buffer); a GPU call that fails
// runs again on the CPU (the result is identical); Array::to_device() leaves
// the data on the host. Each injected fault is logged and counted
// (telemetry::Snapshot::faults, memory_stats().faults_injected).
//
// Thread-safety: fault_point() may be called from any thread; the counters
// are atomic, so the Nth event is exactly one event even under contention.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace veda::detail {

enum class FaultKind : std::uint8_t { Alloc, Launch, Copy };
constexpr std::size_t kFaultKinds = 3;
const char* fault_name(FaultKind k) noexcept;

// Which event of each kind fails (0: none).
struct FaultPlan {
  std::array<std::uint64_t, kFaultKinds> nth{};
  bool any() const noexcept { return nth[0] || nth[1] || nth[2]; }
};

// Parses "alloc:3,copy:1" (kinds in any order, each at most once, N >= 1;
// "" is no faults). Throws ConfigError naming `field` on anything else.
FaultPlan parse_fault_plan(std::string_view spec, const std::string& field);

class FaultInjector {
 public:
  explicit FaultInjector(FaultPlan plan) : plan_(plan) {}
  // Counts one event; true when it is the one to fail.
  bool hit(FaultKind k) noexcept;
  std::uint64_t injected(FaultKind k) const noexcept {
    return injected_[static_cast<std::size_t>(k)].load(std::memory_order_relaxed);
  }

 private:
  FaultPlan plan_;
  std::array<std::atomic<std::uint64_t>, kFaultKinds> seen_{}, injected_{};
};

// The running runtime's injector (null when none is armed). Set by the
// runtime after calibration, cleared before it goes.
void set_fault_injector(FaultInjector* f) noexcept;
FaultInjector* fault_injector() noexcept;

// The hook: counts an event of kind k and throws its injected failure when
// it is the Nth. `where` names the operation for the message and the log.
void fault_point(FaultKind k, const char* where);

}  // namespace veda::detail
