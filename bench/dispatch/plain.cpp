#include "bench/dispatch/contenders.hpp"

namespace bench::dispatch {

void plain(Data& d) {
  for (std::size_t i = 0; i < d.x.size(); ++i) d.out[i] = 2.0f * d.x[i] + d.y[i];
  asm volatile("" : : "r"(d.out.data()) : "memory");
}

void plain_return(Data& d) {
  std::vector<float> r(d.x.size());
  for (std::size_t i = 0; i < d.x.size(); ++i) r[i] = 2.0f * d.x[i] + d.y[i];
  asm volatile("" : : "r"(r.data()) : "memory");
}

}  // namespace bench::dispatch
