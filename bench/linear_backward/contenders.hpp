// Contenders of the linear_backward case: the gradients of a GELU linear
// layer (x: m x k, w: n x k, grad_out and pre_act: m x n, float), as a
// program without veda composes them: OpenBLAS for the two GEMMs (cblas,
// its own threads) and oneTBB loops for the activation gradient and the
// bias gradient's column sums; and veda::linear_backward on Arrays made
// once (a program holding its tensors in veda::Arrays), which chooses its
// tier and leaves the gradients where it computed them.
#pragma once

#include <cstddef>
#include <vector>

#include "veda/array.hpp"

namespace bench::linear_backward {

struct Layer {
  std::size_t m, k, n;
  std::vector<float> x, w, grad_out, pre_act;  // inputs
  std::vector<float> dz, grad_x, grad_w, grad_bias;  // the composition's outputs and scratch
};

void openblas_tbb(Layer& l);
// Returns grad_bias[0], so the call's results are used.
float veda_backward(const veda::Array<float>& x, const veda::Array<float>& w, const veda::Array<float>& grad_out,
                    const veda::Array<float>& pre_act);

}  // namespace bench::linear_backward
