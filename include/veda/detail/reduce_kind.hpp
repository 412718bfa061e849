// Names for the built-in reductions and the element types they support on
// the GPU without an nvcc-compiled call site.
#pragma once

#include <cstdint>
#include <type_traits>

namespace veda::detail {

enum class ReduceKind : std::uint8_t { Sum, Min, Max };
// The reductions along an axis (veda/reduce_axis.hpp).
enum class AxisOp : std::uint8_t { Sum, Mean, Var, Stddev, Min, Max, ArgMin, ArgMax };
enum class ScalarType : std::uint8_t { F32, F64, I32, I64, U32, U64, U8, Unsupported };

template <class T>
constexpr ScalarType scalar_type_of() {
  if constexpr (std::is_same_v<T, float>) return ScalarType::F32;
  else if constexpr (std::is_same_v<T, double>) return ScalarType::F64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ScalarType::I32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ScalarType::I64;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return ScalarType::U32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return ScalarType::U64;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return ScalarType::U8;
  else return ScalarType::Unsupported;
}

// The result type of veda::sum: floating types sum in their own type,
// integers in 64 bits so that they do not overflow.
template <class T>
using sum_t = std::conditional_t<std::is_floating_point_v<T>, T,
                                 std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;
// The result type of mean, var and stddev: floats keep their type, integers give double.
template <class T>
using mean_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;

#if defined(__CUDACC__)
#define VEDA_REDUCE_HD __host__ __device__
#else
#define VEDA_REDUCE_HD
#endif

// a + b, device-callable (veda_device), accumulating into the wider type.
struct PlusOp {
  static constexpr bool veda_device = true;
  template <class A, class B>
  VEDA_REDUCE_HD auto operator()(const A& a, const B& b) const {
    return a + b;
  }
};

// NaN-propagating min and max (a NaN anywhere makes the result NaN).
struct NanMin {
  static constexpr bool veda_device = true;
  template <class T>
#if defined(__CUDACC__)
  __host__ __device__
#endif
  T operator()(const T& a, const T& b) const {
    return (a < b || a != a) ? a : b;
  }
};
struct NanMax {
  static constexpr bool veda_device = true;
  template <class T>
#if defined(__CUDACC__)
  __host__ __device__
#endif
  T operator()(const T& a, const T& b) const {
    return (b < a || a != a) ? a : b;
  }
};

}  // namespace veda::detail
