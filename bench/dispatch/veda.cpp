#include "bench/dispatch/contenders.hpp"
#include "veda/gpu.hpp"

namespace bench::dispatch {

// (nvcc does not allow an extended lambda in a function with a deduced
// return type, so each contender keeps its own static wrapper.)
void veda_into(Data& d) {
  static const auto f = veda::gpu(VEDA_LAMBDA((float a, float x, float y) noexcept, { return a * x + y; }),
                                  {.name = "dispatch-saxpy"});
  f.into(d.out, 2.0f, d.x, d.y);
}

void veda_return(Data& d) {
  static const auto f = veda::gpu(VEDA_LAMBDA((float a, float x, float y) noexcept, { return a * x + y; }),
                                  {.name = "dispatch-saxpy-return"});
  auto r = f(2.0f, d.x, d.y);
  asm volatile("" : : "r"(r.data()) : "memory");
}

}  // namespace bench::dispatch
