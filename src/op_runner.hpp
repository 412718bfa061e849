// The skeleton every library op (matmul, linear, sort, scan, transpose)
// shares: one decision at the op's site, the chosen tier, device
// out-of-memory falling back to the CPU, and the time reported back.
#pragma once

#include "veda/build_config.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/error.hpp"
#include "veda/runtime.hpp"

namespace veda::detail {

// gpu(plan) runs a GPU tier and returns whether it synchronised (so its time
// may be learned); cpu(plan) runs a CPU tier.
template <class Cpu, class Gpu>
void run_op(Runtime& rt, Site& site, const CallDesc& d, Cpu&& cpu, Gpu&& gpu) {
  Plan p = begin_call(rt, site, d);
#if VEDA_HAS_CUDA
  if (tier_device(p.tier) == Device::Gpu) {
    try {
      const bool measured = gpu(p);
      end_call(rt, p, d, measured);
      return;
    } catch (const OutOfMemory& e) {
      p = fallback_to_cpu(rt, p, d, e.what());
    }
  }
#else
  (void)gpu;
#endif
  cpu(p);
  end_call(rt, p, d);
}

}  // namespace veda::detail
