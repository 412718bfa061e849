// A plugin built against libveda, for dlopen_test: what a Python extension
// module or an application's plugin is. Loading it loads libveda with it.
#include <cstddef>
#include <numeric>
#include <vector>

#include "veda/decision.hpp"
#include "veda/gpu.hpp"
#include "veda/reduce.hpp"
#include "veda/runtime.hpp"

// Sums 1..n through veda, with a wrapped map first (a settled decision and
// the thread's record are thread-locals of libveda's), from this thread;
// -1 where veda threw, -2 where the sum was not the thread's last decision.
extern "C" double veda_plugin_sum(int n) {
  try {
    veda::init(veda::Config::builder().threads(2).build());
    std::vector<double> x(static_cast<std::size_t>(n));
    std::iota(x.begin(), x.end(), 1.0);
    static const auto twice = veda::gpu([](double v) noexcept { return 2 * v; }, {.name = "plugin-twice"});
    std::vector<double> y(x.size());
    for (int i = 0; i < 20; ++i) twice.into(y, x);
    const double s = veda::sum(y) / 2;
    const bool recorded = veda::last_decision().name == "sum";
    veda::shutdown();
    return recorded ? s : -2;
  } catch (...) {
    return -1;
  }
}
