// The thread's settled plans: the hot path of a call whose decision has
// settled on the serial tier.
//
// Such a call (a small map or reduction in a loop) used to spend most of its
// ~40 ns in begin_call/end_call: a chain of dependent loads from the site to
// its bucket, the placement rules, and the last-decision record. Once
// begin_call has made a settled serial plan for a site, size bucket and
// placement, it leaves the plan in a small per-thread table; the next calls
// with the same key take it from there inline (a few independent loads) and
// leave their last-decision record for last_call() to complete when asked.
//
// An entry is used only while everything its plan was made from still holds:
// the bucket's settled decision, the runtime and its configuration (both
// g_settled_epoch: a settled decision that any thread replaces bumps it, so
// the entry need not follow a pointer to its bucket's, ~2 ns of a 256-float
// sum), the thread's scoped placement (part of the key), and for element-wise work
// whose bucket was chosen by the workers being asleep, their still being
// asleep (a serial plan made for awake workers holds either way). The calls
// that are timed for the learning (every 16th, 256th or 4096th on a thread,
// BucketState::timed_mask) take the full path, which also re-decides when
// due and refreshes the entry; plans under telemetry, replay or recording,
// or with debug logging on never enter.
//
// No CallScope: a call served from the table touches nothing a runtime owns
// (sites and buckets live for the process, the workers' asleep flag too, the
// deterministic mode is copied into the entry), so it needs no in-flight
// mark to keep one alive (without the scope a 256-float saxpy compiled by
// nvcc took ~33 ns instead of ~35, a sum compiled by g++ 0.5-1 ns less;
// docs/concepts.md). shutdown() bumps g_settled_epoch before tearing
// anything down: a call that starts after it takes the full path and throws;
// one racing it completes as if before it. SettledRun marks such a call on
// its thread, so that shutdown() inside its user function is refused as
// inside any call.
//
// Thread-safety: the tables are thread-local; the shared state they check is
// read through atomics.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "veda/decision.hpp"

namespace veda::detail {

class BucketState;

// The thread's ScopedPlacement (set by veda::ScopedPlacement).
inline thread_local Placement t_scoped = Placement::Auto;

// Counts the thread's calls with a settled decision: every 16th, 256th or 4096th (or
// every one, in buckets of long calls) is timed, and every 64th-4096th
// re-decided (a serial plan served from this table: only its timed calls,
// which alone bring the re-decision anything new).
inline thread_local std::uint32_t t_settled_calls = 0;

struct alignas(64) SettledPlan {  // one cache line
  const void* site = nullptr;
  const void* type_key = nullptr;
  std::uint64_t key = 0;  // settled_key() of the calls it serves
  const std::atomic<bool>* asleep = nullptr;  // element-wise: the workers' asleep flag (must hold)
  BucketState* bucket = nullptr;
  std::uint32_t epoch = 0;
  std::uint16_t timed_mask = 0;  // the bucket's: calls with count & timed_mask == 0 are timed
  std::uint8_t mask = 0;        // the placement mask
  bool deterministic = false;   // the runtime's Config::deterministic
};
static_assert(sizeof(SettledPlan) == 64);

struct SettledPlans {
  static constexpr std::size_t kEntries = 8;
  SettledPlan entries[kEntries];
  // Direct-mapped by site and size bucket (key bits 8-13).
  SettledPlan& entry(const void* site, std::uint64_t key) noexcept {
    return entries[((reinterpret_cast<std::uintptr_t>(site) >> 6) ^ (key >> 8)) % kEntries];
  }
};
inline thread_local SettledPlans t_settled;

// Changed whenever a plan may no longer hold: a bucket's settled decision is
// replaced or cleared, a runtime starts, a device is installed, the log
// level changes.
extern std::atomic<std::uint32_t> g_settled_epoch;
void invalidate_settled_plans() noexcept;

// The thread's calls running a plan from the table (their user functions
// may be running): shutdown() refuses to run inside one.
inline thread_local int t_settled_depth = 0;
struct SettledRun {
  SettledRun() noexcept { ++t_settled_depth; }
  ~SettledRun() { --t_settled_depth; }
  SettledRun(const SettledRun&) = delete;
  SettledRun& operator=(const SettledRun&) = delete;
};
struct NoSettledRun {};  // a call that runs no user code

// The thread's latest call, if it took a settled plan: last_call() turns it
// into the full record when anything reads or writes that.
struct SettledLast {
  BucketState* bucket = nullptr;
  std::size_t n = 0;
  std::size_t dims[3] = {0, 0, 0};  // [0, ndims) hold the call's shape
  std::uint8_t ndims = 0;
  std::uint8_t mask = 0;
  bool pending = false;
};
inline thread_local SettledLast t_settled_last;

}  // namespace veda::detail
