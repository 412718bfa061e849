// A GPU test's proof that a call ran on the device and not on a CPU
// fallback: the decision names the tier forced, on the GPU for a GPU tier,
// and veda's count of launched device work (Runtime::device_launches) rose
// during the call. Without a GPU the count stays 0 and only the tier is
// checked, so one test body serves both backends.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "veda/decision.hpp"
#include "veda/runtime.hpp"

namespace veda_test {

// Start one right before the call it watches.
class DeviceWork {
 public:
  DeviceWork() : before_(veda::get_runtime().device_launches()) {}
  std::uint64_t launches() const { return veda::get_runtime().device_launches() - before_; }

 private:
  std::uint64_t before_;
};

// veda's tiers that run on the GPU (co-execution: partly).
inline bool is_gpu_tier(const std::string& tier) {
  return tier.rfind("gpu", 0) == 0 || tier.rfind("cuda", 0) == 0 || tier == "cpu+gpu";
}

// The last call ran `tier` ("": the model's choice, nothing to check); a GPU
// tier on the GPU, launching device work unless the call had no elements.
inline void check_ran(const std::string& tier, const DeviceWork& w, bool has_elements = true) {
  if (tier.empty()) return;
  const veda::Decision d = veda::last_decision();
  CHECK(d.tier == tier);
  if (!is_gpu_tier(tier)) return;
  CHECK(d.device == veda::Device::Gpu);
  if (has_elements) CHECK_MESSAGE(w.launches() > 0, "tier " << tier << " launched no device work");
}

}  // namespace veda_test
