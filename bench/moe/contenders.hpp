// Contenders of the mixture-of-experts case, float: routing (each token's
// top-k experts, their gates, the counts, offsets and stable order by
// expert, and the router's mean probability per expert) and the experts'
// products (each expert's rows times its weight matrix). By hand: a oneTBB
// loop over tokens and a counting sort, then OpenBLAS expert after expert
// (its own threads). veda: moe_route and grouped_matmul on Arrays made
// once, each choosing its tier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "veda/array.hpp"

namespace bench::moe {

struct Routing {
  std::size_t tokens, experts, k;
  std::vector<float> logits, gates, importance;
  std::vector<std::int64_t> ids, counts, offsets, order;
};
struct Experts {
  std::size_t d_in, d_out;
  std::vector<float> x, w, y;  // x: rows x d_in by expert; w: experts x d_in x d_out
  std::vector<std::int64_t> counts;
};

void tbb_route(Routing& r);
void openblas_experts(Experts& e);
std::int64_t veda_route(const veda::Array<float>& logits, std::size_t k);
float veda_experts(const veda::Array<float>& x, const veda::Array<float>& w, const veda::Array<std::int64_t>& counts);

}  // namespace bench::moe
