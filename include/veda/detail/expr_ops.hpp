// The operations of veda's element-wise expressions (veda/expr.hpp): each
// one's result type, its value on the CPU, and the CUDA text that computes
// the same value in a kernel generated at run time (NVRTC). Both sides cast
// the operands to the operation's type first, so a CPU and a GPU evaluation
// follow the same conversions; only the transcendental functions' last bits
// may differ between the two.
//
// Types follow NumPy where C++ would surprise: `/` of two integers and the
// math functions of integers are double; comparisons are bool; otherwise
// two operands meet in std::common_type. A scalar operand is "weak", as in
// NumPy 2: it takes the array's type (a double 2.0 times a float Array is
// float), except that a floating scalar with an integer Array gives double.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace veda::detail {

template <class T>
concept ExprElem = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
                   std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool>;

template <class T>
constexpr const char* cuda_type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "long long";
  else return "bool";
}

// A scalar S meeting an operand of type T (NumPy 2's weak scalars).
template <class S, class T>
using weak_t = std::conditional_t<
    std::is_floating_point_v<T>, T,
    std::conditional_t<std::is_floating_point_v<S>, double,
                       std::conditional_t<std::is_same_v<T, bool>,
                                          std::conditional_t<std::is_same_v<S, bool>, bool, std::int64_t>, T>>>;

template <class A, class B>
using common_t = std::common_type_t<A, B>;
template <class T>
using floating_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;

// Joins text by appending (GCC 12 warns, wrongly, about `"lit" + std::string(...)`
// under -Wrestrict once inlined into a user's program).
template <class... S>
std::string cat(const S&... s) {
  std::string r;
  (r += ... += s);
  return r;
}
inline std::string cast_text(const char* type, const std::string& x) { return cat("((", type, ")(", x, "))"); }

// Binary operations: Operand is the type both sides are cast to, Result the value's.
struct AddOp {
  template <class A, class B> using Operand = common_t<A, B>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return static_cast<C>(a + b); }
  static std::string cuda(const char*, const std::string& a, const std::string& b) { return cat("(", a, " + ", b, ")"); }
  static constexpr const char* kPretty = " + ";
};
struct SubOp {
  template <class A, class B> using Operand = common_t<A, B>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return static_cast<C>(a - b); }
  static std::string cuda(const char*, const std::string& a, const std::string& b) { return cat("(", a, " - ", b, ")"); }
  static constexpr const char* kPretty = " - ";
};
struct MulOp {
  template <class A, class B> using Operand = common_t<A, B>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return static_cast<C>(a * b); }
  static std::string cuda(const char*, const std::string& a, const std::string& b) { return cat("(", a, " * ", b, ")"); }
  static constexpr const char* kPretty = " * ";
};
struct DivOp {  // true division: integers divide as double
  template <class A, class B>
  using Operand = std::conditional_t<std::is_integral_v<A> && std::is_integral_v<B>, double, common_t<A, B>>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return a / b; }
  static std::string cuda(const char*, const std::string& a, const std::string& b) { return cat("(", a, " / ", b, ")"); }
  static constexpr const char* kPretty = " / ";
};

#define VEDA_EXPR_COMPARE(Name, op)                                                                          \
  struct Name {                                                                                              \
    template <class A, class B> using Operand = common_t<A, B>;                                             \
    template <class, class> using Result = bool;                                                             \
    template <class C> static bool apply(C a, C b) { return a op b; }                                       \
    static std::string cuda(const char*, const std::string& a, const std::string& b) {                      \
      return cat("(", a, " " #op " ", b, ")");                                                              \
    }                                                                                                        \
    static constexpr const char* kPretty = " " #op " ";                                                      \
  };
VEDA_EXPR_COMPARE(LtOp, <)
VEDA_EXPR_COMPARE(LeOp, <=)
VEDA_EXPR_COMPARE(GtOp, >)
VEDA_EXPR_COMPARE(GeOp, >=)
VEDA_EXPR_COMPARE(EqOp, ==)
VEDA_EXPR_COMPARE(NeOp, !=)
#undef VEDA_EXPR_COMPARE

// NumPy's maximum and minimum: a NaN on either side gives NaN.
struct MaximumOp {
  template <class A, class B> using Operand = common_t<A, B>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return (a != a || a > b) ? a : b; }  // NOLINT: NaN test
  static std::string cuda(const char*, const std::string& a, const std::string& b) {
    return cat("veda_maximum(", a, ", ", b, ")");
  }
  static constexpr const char* kPretty = "maximum";
};
struct MinimumOp {
  template <class A, class B> using Operand = common_t<A, B>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return (a != a || a < b) ? a : b; }  // NOLINT: NaN test
  static std::string cuda(const char*, const std::string& a, const std::string& b) {
    return cat("veda_minimum(", a, ", ", b, ")");
  }
  static constexpr const char* kPretty = "minimum";
};
struct PowOp {
  template <class A, class B> using Operand = floating_t<common_t<A, B>>;
  template <class A, class B> using Result = Operand<A, B>;
  template <class C> static C apply(C a, C b) { return std::pow(a, b); }
  static std::string cuda(const char* type, const std::string& a, const std::string& b) {
    return cat(type[0] == 'f' ? "powf(" : "pow(", a, ", ", b, ")");
  }
  static constexpr const char* kPretty = "pow";
};

// Unary operations.
struct NegOp {
  template <class A> using Operand = A;
  template <class C> static C apply(C a) { return static_cast<C>(-a); }
  static std::string cuda(const char*, const std::string& a) { return cat("(-", a, ")"); }
  static constexpr const char* kPretty = "-";
};
struct AbsOp {
  template <class A> using Operand = A;
  template <class C> static C apply(C a) {
    if constexpr (std::is_floating_point_v<C>) return std::fabs(a);
    else return a < 0 ? static_cast<C>(-a) : a;
  }
  static std::string cuda(const char* type, const std::string& a) {
    const std::string t = type;
    const char* f = t == "float" ? "fabsf(" : t == "double" ? "fabs(" : t == "int" ? "abs(" : "llabs(";
    return cat(f, a, ")");
  }
  static constexpr const char* kPretty = "abs";
};

// exp, log, sqrt, sin, cos, tanh: floating types; integers as double.
#define VEDA_EXPR_MATH(Name, fn)                                                                 \
  struct Name {                                                                                  \
    template <class A> using Operand = floating_t<A>;                                            \
    template <class C> static C apply(C a) { return std::fn(a); }                                \
    static std::string cuda(const char* type, const std::string& a) {                           \
      return cat(type[0] == 'f' ? #fn "f(" : #fn "(", a, ")");                                 \
    }                                                                                            \
    static constexpr const char* kPretty = #fn;                                                  \
  };
VEDA_EXPR_MATH(ExpOp, exp)
VEDA_EXPR_MATH(LogOp, log)
VEDA_EXPR_MATH(SqrtOp, sqrt)
VEDA_EXPR_MATH(SinOp, sin)
VEDA_EXPR_MATH(CosOp, cos)
VEDA_EXPR_MATH(TanhOp, tanh)
#undef VEDA_EXPR_MATH

// What one application costs the cost model, in flops: the transcendental
// functions about ten.
template <class Op>
constexpr double expr_op_flops() {
  if constexpr (std::is_same_v<Op, ExpOp> || std::is_same_v<Op, LogOp> || std::is_same_v<Op, SinOp> ||
                std::is_same_v<Op, CosOp> || std::is_same_v<Op, TanhOp> || std::is_same_v<Op, PowOp>)
    return 10;
  else if constexpr (std::is_same_v<Op, DivOp> || std::is_same_v<Op, SqrtOp>)
    return 4;
  else
    return 1;
}

// Whether an application calls the C math library: without -ffast-math a
// loop that does stays scalar (the call's errno path).
template <class Op>
constexpr bool expr_op_calls_libm() {
  return std::is_same_v<Op, ExpOp> || std::is_same_v<Op, LogOp> || std::is_same_v<Op, SqrtOp> ||
         std::is_same_v<Op, SinOp> || std::is_same_v<Op, CosOp> || std::is_same_v<Op, TanhOp> ||
         std::is_same_v<Op, PowOp>;
}

}  // namespace veda::detail
