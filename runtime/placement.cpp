#include "runtime/placement.hpp"

#include "veda/build_config.hpp"
#include "veda/runtime.hpp"

namespace veda {
namespace detail {
namespace {
[[gnu::tls_model("initial-exec")]] thread_local Placement t_scoped = Placement::Auto;
}
Placement scoped_placement() noexcept { return t_scoped; }

// What the call site lacks comes before what the machine lacks: with a
// GPU it would still not run there.
std::string gpu_obstacle(const RuntimeState& st, const Site& site, const CallDesc& d) {
  if (!st.config.gpu())
    return st.config.gpu_source() == Source::Environment ? "GPU disabled by VEDA_GPU=0"
                                                         : "GPU disabled by config (gpu(false))";
  if (!site.offers_gpu()) return "no GPU tier for this operation";
  std::string why;  // (a CPU-only veda has no usable GPU: then the site is not the cause)
  if (!d.gpu_capable && (VEDA_HAS_CUDA || st.gpu.usable))
    why = d.nvcc_site ? "function not device-callable (mark it VEDA_FN)" : "call site not compiled by nvcc";
  if (!st.gpu.usable) why += (why.empty() ? "no usable GPU: " : "; no usable GPU either: ") + st.gpu.reason;
  return why;
}

std::string forced_text(Forced f, const std::string& obstacle) {
  switch (f) {
    case Forced::None: return {};
    case Forced::ConfigCpu: return "forced to CPU by config (gpu(false))";
    case Forced::EnvCpu: return "forced to CPU by VEDA_GPU=0";
    case Forced::CallCpu: return "forced to CPU by placement option";
    case Forced::ScopedCpu: return "forced to CPU by ScopedPlacement";
    case Forced::CallGpu: return "forced to GPU by placement option";
    case Forced::ScopedGpu: return "forced to GPU by ScopedPlacement";
    case Forced::GpuFellBack: return "placement Gpu but " + obstacle + ": fell back to CPU";
    case Forced::Deterministic: return "deterministic mode: CPU tiers unless placement Gpu is asked for";
  }
  return {};
}

bool forced_tier_usable(RuntimeState& st, Site& site, const CallDesc& d, const Resolved& r) {
  if (!(site.tiers() & tier_bit(d.forced_tier)))
    throw InvalidArgument("veda: '" + site.name() + "' has no tier '" + tier_name(d.forced_tier) + "'");
  if (tier_device(d.forced_tier) == Device::Cpu) return r.mask != kGpuOnly;
  if (r.gpu_ok) return true;
  const std::string why = gpu_obstacle(st, site, d);
  if (d.strict) throw DeviceError("veda: '" + site.name() + "' forced to tier " + tier_name(d.forced_tier) + " but " + why);
  log_once(spdlog::level::warn, "tier-fallback:" + site.name(),
           "'" + site.name() + "' forced to a GPU tier but " + why + "; running on the CPU");
  return false;
}

}  // namespace detail

ScopedPlacement::ScopedPlacement(Placement p) noexcept : previous_(detail::t_scoped) { detail::t_scoped = p; }
ScopedPlacement::~ScopedPlacement() { detail::t_scoped = previous_; }

}  // namespace veda
