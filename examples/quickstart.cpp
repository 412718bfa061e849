// quickstart: one wrapped function at a small and a large size, a par_iter
// pipeline, and a forced-CPU run — printing where each call ran and why.
#include <veda/veda.hpp>

#include <cstdio>
#include <vector>

#include "example_util.hpp"

using example::report;
using example::settled_us;

int main() {
  std::printf("%s\n", veda::get_runtime().describe().c_str());

  // An element-wise function; VEDA_FN makes it callable on a GPU when this
  // file is compiled by nvcc.
  auto saxpy = veda::gpu([] VEDA_FN(float a, float x, float y) noexcept { return a * x + y; }, {.name = "saxpy"});

  std::vector<float> x, y, z;
  for (std::size_t n : {std::size_t{1000}, std::size_t{10'000'000}}) {
    x.assign(n, 1.0f);
    y.assign(n, 2.0f);
    const double us = settled_us([&] { saxpy.into(z, 2.0f, x, y); });
    report(n == 1000 ? "saxpy, 1e3 floats" : "saxpy, 1e7 floats", us);
  }

  // A pipeline: fused on the CPU, its gpu_map segment placed by the cost model.
  double total = 0;
  const double us = settled_us([&] {
    total = veda::par_iter(veda::range<std::int64_t>(0, 5'000'000), {.name = "pipeline"})
                .map([](std::int64_t i) { return static_cast<double>(i % 1000) / 1000.0; })
                .filter([](double v) { return v > 0.5; })
                .gpu_map([] VEDA_FN(double v) { return v * v; })
                .sum();
  });
  report("par_iter map/filter/gpu_map/sum", us);
  std::printf("%-34s = %.1f\n", "  sum", total);

  // Forcing the CPU for a block of code (Config::gpu(false) or VEDA_GPU=0
  // force it for the whole program).
  {
    veda::ScopedPlacement cpu_only(veda::Placement::Cpu);
    const double fus = settled_us([&] { saxpy.into(z, 2.0f, x, y); });
    report("saxpy, 1e7 floats, forced CPU", fus);
  }
  return 0;
}
