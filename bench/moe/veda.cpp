#include "bench/moe/contenders.hpp"
#include "veda/grouped_matmul.hpp"
#include "veda/moe_route.hpp"

namespace bench::moe {

std::int64_t veda_route(const veda::Array<float>& logits, std::size_t k) {
  return veda::moe_route(logits, k).order.host()[0];
}

float veda_experts(const veda::Array<float>& x, const veda::Array<float>& w, const veda::Array<std::int64_t>& counts) {
  return veda::grouped_matmul(x, w, counts).host()[0];
}

}  // namespace bench::moe
