// Built in place of starpu.cpp where StarPU's development files are missing
// (a GPU host carrying a dependency bundle has none): the benchmarks then say
// StarPU is unavailable and measure every other contender.
#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise::starpu {

bool start(std::string& why_not) {
  why_not = "not built (StarPU development files were not found at configure time)";
  return false;
}
void stop() {}
Runner make(Work, Workload&, unsigned) { return {}; }
void resume() {}
void pause() {}

}  // namespace bench::elementwise::starpu
