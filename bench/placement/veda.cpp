// The workloads as a veda user writes them; compiled by nvcc when veda has
// its CUDA backend, so the GPU tiers exist where a GPU does.
#include <cmath>

#include "bench/placement/contenders.hpp"
#include "veda/veda.hpp"

namespace bench::placement {

Workload::Workload(std::size_t n) : x(n), y(n), out(n) {
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = 0.001f * static_cast<float>(i % 1000);
    y[i] = 1.0f - 0.0005f * static_cast<float>(i % 2000);
  }
}

Runner saxpy(Workload& w, const std::string& tier, const std::string& name) {
  // VEDA_LAMBDA: under nvcc the CPU tiers get a plain, inlinable closure.
  auto f = veda::gpu(VEDA_LAMBDA((float a, float x, float y) noexcept, { return a * x + y; }), {.name = name, .tier = tier});
  return [f, &w] { f.into(w.out, 2.0f, w.x, w.y); };
}

Runner expsin(Workload& w, const std::string& tier, const std::string& name) {
  auto f = veda::gpu(VEDA_LAMBDA((float x) noexcept, { return std::exp(-x) * std::sin(4.0f * x); }),
                     {.name = name, .tier = tier});
  return [f, &w] { f.into(w.out, w.x); };
}

Runner sum(Workload& w, const std::string& tier, const std::string& name) {
  if (tier.empty() && name.empty())
    return [&w] {
      volatile float s = veda::sum(w.x);  // as a user writes it
      (void)s;
    };
  // The options are made once, as the map wrappers above hold theirs.
  return [&w, o = veda::ReduceOptions{.name = name, .tier = tier}] {
    volatile float s = veda::sum(w.x, o);
    (void)s;
  };
}

std::vector<std::string> forced_tiers() {
  std::vector<std::string> t{"serial", "tbb-static", "tbb-auto"};
  if (veda::get_runtime().gpu_usable()) t.push_back("cuda");
  return t;
}

}  // namespace bench::placement
