#include "bench/attention/contenders.hpp"
#include "veda/attention.hpp"

namespace bench::attention {

float veda_attention(const veda::Array<float>& q, const veda::Array<float>& k, const veda::Array<float>& v) {
  return veda::attention(q, k, v).host()[0];
}

}  // namespace bench::attention
