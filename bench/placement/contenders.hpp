// Contenders of the placement case: one veda call of each workload, with a
// forced tier ("serial", "tbb-static", ...) or automatic placement (tier "").
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace bench::placement {

struct Workload {
  std::vector<float> x, y, out;
  explicit Workload(std::size_t n);
};

using Runner = std::function<void()>;
Runner saxpy(Workload& w, const std::string& tier, const std::string& name);
Runner expsin(Workload& w, const std::string& tier, const std::string& name);
Runner sum(Workload& w, const std::string& tier, const std::string& name);

// The tiers every workload offers on this machine (GPU tiers when usable).
std::vector<std::string> forced_tiers();

}  // namespace bench::placement
