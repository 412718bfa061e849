#include "runtime/placement.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "runtime/clock.hpp"
#include "runtime/cost_model.hpp"

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

std::size_t device_room(DeviceApi& dev) {
  try {
    const PoolStats s = dev.pool().stats();
    const std::size_t within_limit = s.limit > s.bytes_in_use ? s.limit - s.bytes_in_use : 0;
    return std::min(dev.memory_info().free + s.bytes_cached, within_limit);
  } catch (const std::exception&) {
    return static_cast<std::size_t>(-1);
  }
}

namespace {
// A copy between the host and a device at its staged rate, in us. One rate
// for every size: a choice between devices must not flip where the cost
// model switches from pageable to staged copies.
double staged_us(std::size_t bytes, double gbps) { return static_cast<double>(bytes) / gbps * 1e-3; }

// The best of the devices by cost, preferring those with room for what the
// call moves there (checked from kRoomCheckBytes): a device without it would
// only fail over to the CPU. Strictly better wins: the first on a tie.
class DeviceRace {
 public:
  void consider(DeviceApi& dev, std::size_t moved, double cost, std::size_t used, std::size_t index) {
    const bool fits = moved < kRoomCheckBytes || device_room(dev) >= moved;
    const auto better = [&](const Entry& e) { return cost < e.cost || (cost == e.cost && used < e.used); };
    if (better(any_)) any_ = {cost, used, index};
    if (fits && better(fit_)) fit_ = {cost, used, index};
  }
  std::size_t winner() const { return fit_.index != kNone ? fit_.index : any_.index; }
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

 private:
  struct Entry {
    double cost = std::numeric_limits<double>::infinity();
    std::size_t used = 0;
    std::size_t index = kNone;
  };
  Entry any_, fit_;
};
}  // namespace

int pick_device(const HeldOperand* ops, std::size_t count, std::size_t host_bytes) {
  if (count == 0) return -1;
  RuntimeState& st = get_runtime().state();
  if (st.device_count() <= 1) return ops[0].buf->device();
  const MachineProfile& profile = st.profile();
  const std::int64_t now = now_ns();
  DeviceRace race;
  // What copying in costs there, by where the bytes come from, with that
  // device's own rates.
  auto consider = [&](int index) {
    const int slot = st.slot_of(index);
    if (slot < 0) return;
    const auto at = static_cast<std::size_t>(slot);
    DeviceApi& dev = *st.device_at(at);
    const GpuProfile& g = profile.gpu_at(at);
    std::size_t from_host = host_bytes, from_peer = 0;
    double peer_us = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (ops[i].buf->valid_on_device(index)) continue;
      if (ops[i].buf->valid_on_host()) {
        from_host += ops[i].bytes;
      } else {
        from_peer += ops[i].bytes;
        peer_us += peer_time_us(g, static_cast<double>(ops[i].bytes), st.slot_of(ops[i].buf->device()));
      }
    }
    const double copy_us = staged_us(from_host, g.h2d_staged_gbps) + peer_us;
    race.consider(dev, from_host + from_peer, dev.backlog_us(now) + copy_us, 0, static_cast<std::size_t>(index));
  };
  for (std::size_t i = 0; i < count; ++i) consider(ops[i].buf->device());
  for (std::size_t s = 0; s < st.device_count(); ++s) consider(st.device_at(s)->index());
  return static_cast<int>(race.winner());
}

std::size_t device_slot_for(RuntimeState& st, const CallDesc& d) {
  int slot = d.device >= 0 ? st.slot_of(d.device) : -1;
  if (slot < 0 && d.resident_device >= 0) slot = st.slot_of(d.resident_device);
  if (slot >= 0) return static_cast<std::size_t>(slot);
  // Every device copies the same bytes in, each over its own link: the one
  // that would finish first, then the one with the least of its pool in use
  // (the data placed there stands for the work to come).
  const MachineProfile& profile = st.profile();
  const std::int64_t now = now_ns();
  DeviceRace race;
  for (std::size_t i = 0; i < st.device_count(); ++i) {
    DeviceApi& dev = *st.device_at(i);
    const GpuProfile& g = profile.gpu_at(i);
    const double copy_us = staged_us(d.h2d_bytes, g.h2d_staged_gbps) + staged_us(d.d2h_bytes, g.d2h_staged_gbps);
    race.consider(dev, d.h2d_bytes + d.d2h_bytes, dev.backlog_us(now) + copy_us, dev.pool().stats().bytes_in_use, i);
  }
  return race.winner() == DeviceRace::kNone ? 0 : race.winner();
}

std::vector<std::size_t> share_devices(RuntimeState& st, std::size_t first, bool idle_only) {
  const MachineProfile& profile = st.profile();
  const GpuProfile& lead = profile.gpu_at(first);
  auto close = [](double a, double b) { return a <= 1.25 * b && b <= 1.25 * a; };
  const std::int64_t now = now_ns();
  std::vector<std::pair<double, std::size_t>> others;
  for (std::size_t i = 0; i < st.device_count(); ++i) {
    const GpuProfile& g = profile.gpu_at(i);
    if (i == first || g.name != lead.name || !close(g.h2d_staged_gbps, lead.h2d_staged_gbps) ||
        !close(g.d2h_staged_gbps, lead.d2h_staged_gbps))
      continue;
    const double backlog = st.device_at(i)->backlog_us(now);
    if (!idle_only || backlog == 0) others.emplace_back(backlog, i);
  }
  std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::size_t> out{first};
  for (const auto& o : others) out.push_back(o.second);
  return out;
}

std::vector<DeviceShare> take_shares(RuntimeState& st, std::size_t first, std::size_t count, double us) {
  if (count <= 1 || st.device_count() <= 1) return {{first, 0}};
  std::vector<std::size_t> slots = share_devices(st, first, false);
  slots.resize(std::min(slots.size(), count));
  const std::int64_t now = now_ns();
  std::vector<DeviceShare> out;
  for (std::size_t s : slots)
    out.push_back({s, s != first && us > 0 ? st.device_at(s)->queue_work(us, now) : 0});
  return out;
}

void release_shares(RuntimeState& st, const std::vector<DeviceShare>& shares) noexcept {
  const std::int64_t now = now_ns();
  for (const DeviceShare& s : shares)
    if (s.due_ns) st.device_at(s.slot)->work_done(s.due_ns, now);
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
