#include "runtime/placement.hpp"

#include "veda/build_config.hpp"
#include "veda/runtime.hpp"

namespace veda {
namespace detail {

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

void throw_bad_placement(Placement p, std::string_view name) {
  throw InvalidArgument(std::string(name) + ": placement " + std::to_string(static_cast<int>(p)) +
                        " is not a veda::Placement (Auto, Cpu or Gpu)");
}

std::size_t device_slot_for(RuntimeState& st, const CallDesc& d) {
  int slot = d.device >= 0 ? st.slot_of(d.device) : -1;
  if (slot < 0 && d.resident_device >= 0) slot = st.slot_of(d.resident_device);
  if (slot >= 0) return static_cast<std::size_t>(slot);
  std::size_t best = 0, least = static_cast<std::size_t>(-1);
  for (std::size_t i = 0; i < st.device_count(); ++i) {
    const std::size_t used = st.device_at(i)->pool().stats().bytes_in_use;
    if (used < least) {
      least = used;
      best = i;
    }
  }
  return best;
}

void check_device_sign(int device, std::string_view name) {
  if (device < -1)
    throw InvalidArgument(std::string(name) + ": device " + std::to_string(device) +
                          " is not a device index (-1 for the runtime's device, or 0, 1, ...)");
}

void check_device_index(Runtime& rt, int device, const std::string& name) {
  if (device == -1) return;
  check_device_sign(device, name);
  const GpuStatus& g = rt.gpu();
  if (g.usable) {
    check_device_option(rt, device, name);  // as before: it must be the runtime's device
    return;
  }
  // No usable GPU: the call runs on the CPU, so GPU 0 (what most code names)
  // and any device that exists are fine; an index beyond them is a bug.
  if (device == 0 || static_cast<std::size_t>(device) < g.devices.size()) return;
  throw InvalidArgument(name + ": device " + std::to_string(device) + " requested, but this machine has " +
                        std::to_string(g.devices.size()) + " GPU" + (g.devices.size() == 1 ? "" : "s") +
                        " (no usable GPU: " + g.reason + ")");
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
