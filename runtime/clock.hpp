// The one clock veda times with: monotonic nanoseconds, read by the
// scheduler, calibration, telemetry and both backends.
//
// Thread-safety: a free function over std::chrono::steady_clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace veda::detail {

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace veda::detail
