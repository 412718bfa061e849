// Reason: why a decision chose its tier, kept as the few facts the text
// depends on, and formatted only when someone reads it (last_decision(),
// telemetry, debug logging). Most decisions are never read, and formatting
// them (printf's code among it) was about 200 of the 970 code lines that an
// undecided call touched from cold caches (docs/expressions.md).
//
// Thread-safety: a value type; reason_text() is a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "veda/detail/tier.hpp"

namespace veda::detail {

struct Estimate;

struct Reason {
  enum class Kind : std::uint8_t {
    NoEligible,  // nothing could run (not for real requests)
    Fastest,     // `tier` is predicted fastest
    Explore,     // `tier` is unmeasured and may beat `best`
    Refresh,     // `tier`'s figures are doubtful (`doubt`): re-measured
    Wake,        // waking oneTBB's workers: `tier` measured `us` awake against serial `serial_us`
    WakeRetry,   // the same, to re-measure `tier`'s awake figure
    Trial,       // `tier` in a stream after a wake-up
  };
  // Why a re-measured tier's figures are doubtful.
  enum class Doubt : std::uint8_t { EarlierRun, AfterAnother, FewRuns, Slowed, Old };
  Kind kind = Kind::NoEligible;
  Tier tier = Tier::Serial;
  Tier best = Tier::Serial;  // Explore, Refresh: the tier it is compared with
  Doubt doubt = Doubt::Old;
  bool wake_aside = false;     // Explore: judged without the workers' one-off wake-up
  bool all_on_device = false;  // Fastest: every range operand is valid on the device
  float ratio = 0;             // Explore, Refresh: predicted time relative to best's
  float us = 0, serial_us = 0;  // Wake, WakeRetry
  std::string forced;          // the forcing rule, which leads the text (usually empty)
};

// The text of `r` for a decision that weighed `estimates`.
std::string reason_text(const Reason& r, const std::vector<Estimate>& estimates);

}  // namespace veda::detail
