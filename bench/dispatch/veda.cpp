#include <memory>

#include "bench/dispatch/contenders.hpp"
#include "veda/expr.hpp"
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

namespace {
struct Operands {
  veda::Array<float> x, y, out;
  explicit Operands(const Data& d) : x(d.x), y(d.y), out(d.out.size()) {}
};
std::unique_ptr<Operands> g_operands;
}  // namespace

void veda_assign(Data& d) {
  if (!g_operands || g_operands->out.size() != d.out.size()) g_operands = std::make_unique<Operands>(d);
  Operands& o = *g_operands;
  veda::assign(o.out, 2.0f * o.x + o.y);
}

void veda_release() { g_operands.reset(); }

}  // namespace bench::dispatch
