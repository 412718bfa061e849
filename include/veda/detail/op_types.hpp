// The element types the ops (scan, sort keys) are compiled for, as one list:
// VEDA_FOR_EACH_OP_TYPE(X) expands X(T) for each, for explicit
// instantiations and their extern declarations.
#pragma once

#include <cstdint>
#include <type_traits>

#define VEDA_FOR_EACH_OP_TYPE(X) X(float) X(double) X(std::int32_t) X(std::int64_t) X(std::uint32_t) X(std::uint64_t)

namespace veda::detail {

template <class T>
concept OpScalar = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
                   std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint32_t> ||
                   std::is_same_v<T, std::uint64_t>;

}  // namespace veda::detail
