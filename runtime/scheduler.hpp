// The call lifecycle behind begin_call/end_call
// (include/veda/detail/dispatch.hpp): placement (placement.hpp), then a
// settled decision from the site's store (sites.hpp) or a fresh one from the
// cost model, then recording what ran (telemetry, last_decision()).
//
// Hot path: a settled bucket's decision is one atomic load; samples are added
// under try_lock so concurrent callers never wait for each other.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/cost_model.hpp"
#include "runtime/sites.hpp"
#include "veda/decision.hpp"
#include "veda/detail/dispatch.hpp"

namespace veda::detail {

// Why a call ran on the CPU although the GPU was wanted.
enum class FallbackKind : std::uint8_t { None, OutOfMemory, PlacementGpu, ForcedGpuTier, DeviceFault, Count };

struct Explanation {
  std::vector<Estimate> estimates;
  Reason why;  // formatted when read: reason_text(why, estimates)
  Tier chosen = Tier::Serial;
  bool explored = false;
};


// One call as last_decision() reports it.
struct CallRecord {
  Site* site = nullptr;
  BucketState* bucket = nullptr;
  std::shared_ptr<const Explanation> explanation;  // set by slow-path decisions
  std::uint8_t mask = 0;
  Tier tier = Tier::Serial;
  std::size_t n = 0;
  std::array<std::size_t, 3> dims{};  // the op's shape (ndims entries)
  std::uint8_t ndims = 0;
  double measured_us = -1;
  bool fallback = false;
  bool fault = false;  // the fallback was a device fault, not a lack of memory
  bool explored = false;
  bool forced_tier = false;
};

// The calling thread's latest call, or the plan (one record per segment) of
// its latest par_iter terminal; the Decision is built only when asked for.
struct LastCall : CallRecord {
  static constexpr std::size_t kMaxParts = 16;
  bool has_plan = false;
  std::string plan_name;
  std::size_t plan_size = 0;
  std::array<CallRecord, kMaxParts> parts;
  std::size_t nparts = 0;  // pending or committed plan records
};
LastCall& last_call() noexcept;

}  // namespace veda::detail
