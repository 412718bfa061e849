#include "bench/matmul/contenders.hpp"
#include "veda/gpu.hpp"
#include "veda/matmul.hpp"

namespace bench::matmul {

template <class T>
void veda_matmul(const veda::Array<T>& a, const veda::Array<T>& b, const std::string& tier) {
  veda::MatmulOptions o;
  o.tier = tier;
  auto c = veda::matmul(a, b, o);
  if (c.valid_on_device()) c.to_host();  // count the result's way back, as a caller reading it would
}
template <class T>
void veda_matmul_acc(const veda::Array<T>& a, const veda::Array<T>& b, veda::Array<T>& c) {
  veda::matmul_into(c, a, b, {.beta = 1});
  if (c.valid_on_device()) c.to_host();
}

template <class T>
void veda_matmul_scratch_add(const veda::Array<T>& a, const veda::Array<T>& b, veda::Array<T>& c) {
  static const auto add = veda::gpu([](T x, T y) noexcept { return x + y; }, {.name = "bench-matmul-add"});
  auto ab = veda::matmul(a, b);
  add.into(c, c, ab);
  if (c.valid_on_device()) c.to_host();
}

template void veda_matmul_acc<float>(const veda::Array<float>&, const veda::Array<float>&, veda::Array<float>&);
template void veda_matmul_scratch_add<float>(const veda::Array<float>&, const veda::Array<float>&,
                                             veda::Array<float>&);
template void veda_matmul<float>(const veda::Array<float>&, const veda::Array<float>&, const std::string&);
template void veda_matmul<double>(const veda::Array<double>&, const veda::Array<double>&, const std::string&);

}  // namespace bench::matmul
