#include "bench/linear_backward/contenders.hpp"
#include "veda/linear_backward.hpp"

namespace bench::linear_backward {

float veda_backward(const veda::Array<float>& x, const veda::Array<float>& w, const veda::Array<float>& grad_out,
                    const veda::Array<float>& pre_act) {
  const auto g = veda::linear_backward(x, w, grad_out, veda::Activation::Gelu, pre_act);
  return g.grad_bias.host()[0];
}

}  // namespace bench::linear_backward
