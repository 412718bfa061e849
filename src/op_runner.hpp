// The skeleton every library op (matmul, linear, sort, scan, transpose)
// shares: its call site, its call description, one decision, the chosen
// tier, device out-of-memory falling back to the CPU, and the time reported
// back.
#pragma once

#include <string>

#include "runtime/sites.hpp"
#include "veda/build_config.hpp"
#include "veda/decision.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"
#if VEDA_HAS_CUDA
#include "runtime/runtime_state.hpp"
#endif

namespace veda::detail {

// One site per (op, element type, variant) Tag and name: history never mixes
// ops that happen to share a user-given name. A Tag always comes with the
// same default name and tiers, so its default site is looked up once (the
// registry takes a lock and compares strings).
template <class Tag>
Site& op_site(const std::string& name, const char* default_name, OpClass op, std::uint32_t tiers,
              const CostHint& hint = {}) {
  if (name.empty()) {
    static Site* const site = site_for(&type_tag<Tag>, default_name, op, tiers, hint);
    return *site;
  }
  return *site_for(&type_tag<Tag>, name, op, tiers, hint);
}

// The fields every op sets; the op adds its shape and operand residency.
template <class Options>
CallDesc op_desc(std::size_t n, std::size_t elem_bytes, const Options& o) {
  check_placement(o.placement, o.name.empty() ? std::string_view("veda") : std::string_view(o.name));
  CallDesc d;
  d.type_key = &type_tag<Options>;  // one type per op site (its Tag names the element type)
  d.n = n;
  d.elem_bytes = static_cast<std::uint8_t>(elem_bytes);
  d.placement = o.placement;
  d.strict = o.strict;
  d.forced_tier = parse_tier(o.tier);
  if constexpr (requires { o.device; }) d.device = device_byte(o.device);
  return d;
}

// gpu(plan) queues a GPU tier on this thread's stream and returns whether
// it has already finished (results copied to the host); otherwise the call
// waits only when this run is to be timed. cpu(plan) runs a CPU tier.
template <class Cpu, class Gpu>
void run_op(Runtime& rt, Site& site, const CallDesc& d, Cpu&& cpu, Gpu&& gpu) {
  if (d.device >= 0) check_device_index(rt, d.device, site.name());  // before any work, settled or not
  Plan p = begin_call(rt, site, d);
#if VEDA_HAS_CUDA
  if (tier_device(p.tier) == Device::Gpu) {
    if (try_gpu(rt, p, d, [&] {
          bool finished = gpu(p);
          if (!finished && p.sync_for_timing) {
            DeviceApi* dev = rt.state().device();
            dev->synchronize(dev->stream());
            finished = true;
          }
          end_call(rt, p, d, finished);
        }))
      return;
  }
#else
  (void)gpu;
#endif
  cpu(p);
  end_call(rt, p, d);
}

}  // namespace veda::detail
