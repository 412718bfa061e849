// Placement rules: which devices a call may use, and why.
//
// The order of authority: Config::gpu(false) / VEDA_GPU=0, then the call's
// placement option, then the thread's ScopedPlacement, then deterministic
// mode (CPU unless the GPU is asked for), then the cost model. A GPU that is
// asked for but cannot run the call falls back to the CPU with a warning, or
// throws DeviceError when strict. A forced tier obeys the same rules.
//
// Thread-safety: pure functions of the runtime state and the call, plus a
// thread-local scope (ScopedPlacement).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/logging.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/sites.hpp"
#include "veda/error.hpp"

namespace veda::detail {

inline Placement scoped_placement() noexcept { return t_scoped; }  // (settled_plans.hpp)

// With several devices, the slot of the device a GPU call runs on: the one
// it asks for (CallDesc::device), else the one its operands on a device
// picked (CallDesc::resident_device: pick_device in dispatch.hpp weighs each
// device's backlog and copies), else the one free first, then the one with
// the least of its pool in use (the first on a tie). A call moving
// kRoomCheckBytes or more passes over devices without room for what it
// moves there, unless none has room. The scheduler asks once per call and
// makes it the thread's device for the call.
std::size_t device_slot_for(RuntimeState& st, const CallDesc& d);

// The devices that may share one call's GPU part (co-execution) with the
// device in slot `first`: those of its kind (same name, host links within
// 25%: an equal share each finishes together), `first` leading, the rest
// the least busy first; with `idle_only`, only those with nothing queued.
std::vector<std::size_t> share_devices(RuntimeState& st, std::size_t first, bool idle_only);
// A co-executed call's shares: `first` and up to count - 1 more devices from
// share_devices (busy ones too), each but the first (whose backlog the
// call's plan holds) with `us` entered in its backlog until release_shares,
// so concurrent calls do not take it for idle meanwhile.
std::vector<DeviceShare> take_shares(RuntimeState& st, std::size_t first, std::size_t count, double us);
void release_shares(RuntimeState& st, const std::vector<DeviceShare>& shares) noexcept;

// Calls that move less are not checked against free device memory: the
// check (cudaMemGetInfo) costs microseconds, and the pool's out-of-memory
// retry and the CPU fallback cover them.
constexpr std::size_t kRoomCheckBytes = std::size_t{64} << 20;

// What a device can still provide: the driver's free memory plus what its
// pool caches, within the pool's limit. Unknown (unbounded) if the device
// cannot say.
std::size_t device_room(DeviceApi& dev);

// Why the GPU cannot take this call (what the site lacks first, then what
// the machine lacks), or "" if it can.
std::string gpu_obstacle(const RuntimeState& st, const Site& site, const CallDesc& d);

enum class Forced : std::uint8_t { None, ConfigCpu, EnvCpu, CallCpu, ScopedCpu, CallGpu, ScopedGpu, GpuFellBack, Deterministic };

struct Resolved {
  std::uint8_t mask = kAnyDevice;
  Forced forced = Forced::None;
  bool gpu_ok = false;
};

// Inlined: returned through memory, its two bytes cost a store-forwarding stall per call.
[[gnu::always_inline]] inline Resolved resolve(RuntimeState& st, Site& site, const CallDesc& d) {
  Resolved r;
  const Placement scoped = scoped_placement();
  const Placement want = d.placement != Placement::Auto ? d.placement : scoped;
  const bool gpu_possible = st.config.gpu() && st.gpu.usable && d.gpu_capable && site.offers_gpu();
  if (!st.config.gpu() && want != Placement::Gpu) {
    r.mask = kCpuOnly;
    r.forced = st.config.gpu_source() == Source::Environment ? Forced::EnvCpu : Forced::ConfigCpu;
  } else if (want == Placement::Cpu) {
    r.mask = kCpuOnly;
    r.forced = d.placement == Placement::Cpu ? Forced::CallCpu : Forced::ScopedCpu;
  } else if (want == Placement::Auto && st.config.deterministic() && gpu_possible) {
    // Whether a GPU tier would win depends on the thread count (each count
    // has its own profile), and CUB/cuBLAS sum in other orders than the CPU
    // tiers: deterministic results stay on the CPU unless the GPU is asked for.
    r.mask = kCpuOnly;
    r.forced = Forced::Deterministic;
  } else if (want == Placement::Gpu) {
    if (gpu_possible) {
      r.mask = kGpuOnly;
      r.forced = d.placement == Placement::Gpu ? Forced::CallGpu : Forced::ScopedGpu;
    } else {
      const std::string why = gpu_obstacle(st, site, d);
      if (d.strict)
        throw DeviceError("veda: '" + site.name() + "' requires placement Gpu (strict) but " + why);
      log_once(spdlog::level::warn, "gpu-fallback:" + site.name(),
               "'" + site.name() + "' asked for placement Gpu but " + why + "; running on the CPU");
      r.mask = kCpuOnly;
      r.forced = Forced::GpuFellBack;
    }
  }
  r.gpu_ok = gpu_possible && r.mask != kCpuOnly;
  return r;
}

// The reason text of a forced placement ("" for None).
std::string forced_text(Forced f, const std::string& obstacle);

// A forced tier must be offered by the site and possible under the
// placement rules; a GPU tier that is not falls back like Placement::Gpu.
bool forced_tier_usable(RuntimeState& st, Site& site, const CallDesc& d, const Resolved& r);

}  // namespace veda::detail
