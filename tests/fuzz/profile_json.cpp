// Fuzz target: the machine-profile loader (MachineProfile::from_json, what
// reads ~/.cache/veda and Config::profile files). Contract: any input either
// loads or is rejected with an exception that load_profile() turns into "re-
// measure" (std::exception); nothing crashes; a profile that loads writes
// JSON that loads again to the same text, and every figure it holds is a
// plausible rate (finite, within the loosest of the bounds the loader
// enforces, runtime/profile.cpp), so nothing derived from it (a grain of
// 20000 / ns-per-element, a time from bytes / bandwidth) overflows.
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include "runtime/profile.hpp"

namespace {
bool plausible(double v) { return std::isfinite(v) && v >= 1e-4 && v <= 1e12; }
bool plausible_or_zero(double v) { return v == 0 || plausible(v); }

bool all_plausible(const veda::detail::MachineProfile& p) {
  const auto& c = p.cpu;
  const auto& g = p.gpu;
  bool ok = p.threads >= 1 && p.threads <= 65536 && plausible(c.map_ns_per_elem) &&
            plausible(c.fma_gflops_per_thread) && plausible(c.bw_one_gbps) && plausible(c.bw_all_gbps) &&
            plausible(c.tbb_static_us) && plausible(c.tbb_auto_us) && plausible(c.tbb_wake_us) &&
            plausible(c.tbb_idle_us) && plausible_or_zero(c.sgemm_gflops) && plausible_or_zero(c.dgemm_gflops) &&
            std::isfinite(p.calibration_seconds) && p.calibration_seconds >= 0;
  if (g.present)
    ok = ok && plausible(g.launch_us) && plausible(g.h2d_pageable_gbps) && plausible(g.h2d_pinned_gbps) &&
         plausible(g.d2h_pageable_gbps) && plausible(g.d2h_pinned_gbps) && plausible(g.h2d_staged_gbps) &&
         plausible(g.d2h_staged_gbps) && plausible(g.device_bw_gbps) && plausible(g.fp32_gflops) &&
         plausible(g.sgemm_gflops) && plausible(g.sgemm_tf32_gflops) && plausible(g.hgemm_gflops) &&
         plausible(g.dgemm_gflops);
  return ok;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto p = veda::detail::MachineProfile::from_json(text);
    if (!all_plausible(p)) __builtin_trap();
    const std::string once = p.to_json();
    if (veda::detail::MachineProfile::from_json(once).to_json() != once) __builtin_trap();
  } catch (const std::exception&) {
  }
  return 0;
}
