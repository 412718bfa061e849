// for_each_task: f(i) for every i < count, on the calling thread when
// `parallel` is null, else among veda's oneTBB workers in tasks of at least
// `grain` indices. The CPU tiers of the ops split their work this way, so
// the serial and parallel tiers run the same f on the same pieces.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>

#include "backends/cpu/cpu_executor.hpp"

namespace veda::detail::cpu {

template <class F>
void for_each_task(CpuExecutor* parallel, std::size_t count, std::size_t grain, const F& f) {
  if (!parallel) {
    for (std::size_t i = 0; i < count; ++i) f(i);
    return;
  }
  parallel->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, std::max<std::size_t>(grain, 1)),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
                      });
  });
}

}  // namespace veda::detail::cpu
