// Shared by the ops' tests: a runtime for one test case (no calibration, so
// the tests are fast and the analytic model decides), and the tiers to force
// on this machine: every CPU tier, and the GPU tiers where a GPU is usable.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "support/device_work.hpp"
#include "veda/runtime.hpp"

namespace veda_test {

struct OpRuntime {
  explicit OpRuntime(veda::Config c = veda::Config::builder().calibration(veda::CalibrationMode::Off).build()) {
    veda::init(c);
  }
  ~OpRuntime() { veda::shutdown(); }
  OpRuntime(const OpRuntime&) = delete;
  OpRuntime& operator=(const OpRuntime&) = delete;
};

// "" stands for the cost model's own choice.
inline std::vector<std::string> op_tiers(std::initializer_list<const char*> cpu,
                                         std::initializer_list<const char*> gpu) {
  std::vector<std::string> t(cpu.begin(), cpu.end());
  t.emplace_back();
  if (veda::get_runtime().gpu_usable()) t.insert(t.end(), gpu.begin(), gpu.end());
  return t;
}

}  // namespace veda_test
