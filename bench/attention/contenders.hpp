// Contenders of the attention case: softmax(q k^T / sqrt(d)) v for float
// [1, heads, seq, 64] q, k and v (no mask), as a program without veda
// composes it: per head, OpenBLAS for q k^T and for p v (its own threads)
// and a oneTBB softmax of the score rows between them (the seq x seq scores
// materialised); and veda::attention on Arrays made once, which chooses its
// tier and leaves the result where it computed it.
#pragma once

#include <cstddef>
#include <vector>

#include "veda/array.hpp"

namespace bench::attention {

struct Problem {
  std::size_t heads, seq, d;
  std::vector<float> q, k, v, out, scores;
};

void openblas_tbb(Problem& p);
float veda_attention(const veda::Array<float>& q, const veda::Array<float>& k, const veda::Array<float>& v);

}  // namespace bench::attention
