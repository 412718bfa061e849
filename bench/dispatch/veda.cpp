#include "bench/dispatch/contenders.hpp"
#include "veda/gpu.hpp"

namespace bench::dispatch {
namespace {
const auto& saxpy() {
  static const auto f = veda::gpu([] VEDA_FN(float a, float x, float y) noexcept { return a * x + y; },
                                  {.name = "dispatch-saxpy"});
  return f;
}
}  // namespace

void veda_into(Data& d) { saxpy().into(d.out, 2.0f, d.x, d.y); }

void veda_return(Data& d) {
  auto r = saxpy()(2.0f, d.x, d.y);
  asm volatile("" : : "r"(r.data()) : "memory");
}

}  // namespace bench::dispatch
