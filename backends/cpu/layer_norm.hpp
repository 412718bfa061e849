// CPU tiers of layer_norm (veda/layer_norm.hpp): serial and tbb-auto.
#pragma once

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail {
class CpuExecutor;
namespace cpu {

// Each of `rows` rows of d elements of x (float or double), normalised into
// out; gamma and beta (d elements each) may be null. `parallel` (null: the
// calling thread) splits rows among workers: every row's bits are the same.
void layer_norm(CpuExecutor* parallel, ScalarType type, const void* x, const void* gamma, const void* beta, void* out,
                std::size_t rows, std::size_t d, double eps);

}  // namespace cpu
}  // namespace veda::detail
