#include "bench/matmul/contenders.hpp"
#include "veda/matmul.hpp"

namespace bench::matmul {

template <class T>
void veda_matmul(const veda::Array<T>& a, const veda::Array<T>& b, const std::string& tier) {
  veda::MatmulOptions o;
  o.tier = tier;
  auto c = veda::matmul(a, b, o);
  if (c.valid_on_device()) c.to_host();  // count the result's way back, as a caller reading it would
}
template void veda_matmul<float>(const veda::Array<float>&, const veda::Array<float>&, const std::string&);
template void veda_matmul<double>(const veda::Array<double>&, const veda::Array<double>&, const std::string&);

}  // namespace bench::matmul
