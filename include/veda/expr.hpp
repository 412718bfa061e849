// veda/expr.hpp — NumPy-style element-wise expressions on Arrays: lazy, and
// evaluated in one fused pass wherever the cost model places it.
//
//   veda::Array<float> Z = (X - veda::mean(X, 0)) / veda::stddev(X, 0);  // one pass
//   auto e = veda::where(X > 0, X, 0.1f * X);  // builds, computes nothing
//   veda::Array<float> y = e;                  // evaluated here
//   veda::assign(out, veda::exp(-(X * X)));    // into an existing Array
//   auto r = veda::eval(X * 2 + 1, {.placement = veda::Placement::Cpu});
//
// Contract:
// - Operands: Arrays (1 to 4 dimensions) of float, double, std::int32_t,
//   std::int64_t or bool; other expressions; arithmetic scalars. At least one
//   operand of each operation is not a scalar.
// - Operations: + - * / and unary -; < <= > >= == != (bool results);
//   where(c, a, b); exp, log, sqrt, sin, cos, tanh, abs; pow, maximum,
//   minimum (NumPy's: NaN on either side gives NaN) and clamp(x, lo, hi).
// - Types (detail/expr_ops.hpp): two operands meet in std::common_type, but
//   `/` of two integers and the math functions of integers are double, as in
//   NumPy; a scalar takes the other operand's type (a double 0.5 times a
//   float Array is float), except a floating scalar with integers (double).
// - Broadcasting as in NumPy: shapes are aligned at their last dimension and
//   an extent of 1 stretches to the other's. Shapes that do not broadcast
//   are veda::InvalidArgument naming both, when the expression is evaluated
//   and before any work.
// - Lazy: building an expression computes nothing and copies no data. It
//   refers to its Array operands, which must outlive it when they are named
//   Arrays; a temporary operand (veda::mean(X, 0) above) is kept by it.
// - Evaluation: converting to veda::Array<T> (any supported T: values are
//   converted as by static_cast), veda::eval, veda::assign or Array's
//   assignment. One pass over memory, no temporaries, placed by the cost
//   model among serial, tbb-static, tbb-auto and cuda. The cuda tier is one
//   kernel generated from the expression and compiled at run time with
//   NVRTC, whatever compiler built the call site, cached in memory and on
//   disk (the profile's cache directory) by expression, element types and
//   GPU architecture. Its first compile is measured; the cost model counts
//   the expected compile or load time, spread over the calls the expression
//   has made, so a one-off small call stays on the CPU.
// - Each expression structure (its operations, types and operand count) is
//   one call site, named by its readable form ("expr (x0 - x1) / x2") unless
//   ExprOptions::name says otherwise; it learns its own times.
// - Aliasing: the output may be an operand (assign(X, X * 2)): an operand
//   that is the output has its shape, and each element is read before it is
//   written.
// - The result stays where it was computed (on the device after cuda).
// - Bits: + - * /, comparisons, where, maximum, minimum, abs and sqrt are
//   correctly rounded on every tier (the generated kernel is compiled
//   without FMA contraction), so every tier gives the same bits for them;
//   exp, log, sin, cos, tanh and pow may differ in the last bits between
//   the CPU's library and the GPU's.
//
// Thread-safety: expressions are values; evaluating two that write different
// Arrays may happen concurrently, like any veda call.
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/expr_cpu.hpp"
#include "veda/detail/expr_nodes.hpp"

namespace veda {

struct ExprOptions {
  Placement placement = Placement::Auto;
  bool strict = false;  // Placement::Gpu without a usable GPU throws instead of running on the CPU
  std::string name;     // empty: "expr " and the expression's readable form
  std::string tier;     // force "serial", "tbb-static", "tbb-auto" or "cuda": benchmarks, debugging
};

// A lazy expression; N is its node (detail/expr_nodes.hpp).
template <class N>
class Expr {
 public:
  using value_type = typename N::value_type;
  explicit Expr(N n) : node_(std::move(n)) {}
  const N& node() const noexcept { return node_; }

 private:
  N node_;
};

namespace detail {

template <class X>
struct is_expr : std::false_type {};
template <class N>
struct is_expr<Expr<N>> : std::true_type {};
template <class X>
struct is_expr_array : std::false_type {};
template <ExprElem T>
struct is_expr_array<Array<T>> : std::true_type {};

template <class X>
concept TensorOperand = is_expr<std::remove_cvref_t<X>>::value || is_expr_array<std::remove_cvref_t<X>>::value;
template <class X>
concept ScalarOperand = std::is_arithmetic_v<std::remove_cvref_t<X>>;
template <class X>
concept ExprOperand = TensorOperand<X> || ScalarOperand<X>;
template <class A, class B>
concept BinaryOperands = (TensorOperand<A> && ExprOperand<B>) || (ScalarOperand<A> && TensorOperand<B>);

// A tensor operand as a node: an Array becomes a leaf (kept alive when it is
// a temporary), an expression its own node.
template <class X>
auto tensor_node(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (is_expr<D>::value) {
    return std::forward<X>(x).node();
  } else if constexpr (std::is_lvalue_reference_v<X>) {
    return LeafNode<typename D::value_type>{&x, nullptr};
  } else {
    auto owned = std::make_shared<const D>(std::move(x));
    const D* a = owned.get();
    return LeafNode<typename D::value_type>{a, std::move(owned)};
  }
}
// Any operand as a node; a scalar takes the type `Other` gives it (weak_t).
template <class Other, class X>
auto operand_node(X&& x) {
  if constexpr (ScalarOperand<X>) {
    using S = std::remove_cvref_t<X>;
    using W = weak_t<S, Other>;
    return ScalarNode<W>{static_cast<W>(x)};
  } else {
    return tensor_node(std::forward<X>(x));
  }
}

// Two operands as nodes, at least one a tensor: a scalar takes the tensor's type.
template <class A, class B>
auto operand_nodes(A&& a, B&& b) {
  if constexpr (ScalarOperand<A>) {
    auto nb = tensor_node(std::forward<B>(b));
    auto na = operand_node<typename decltype(nb)::value_type>(std::forward<A>(a));
    return std::pair{std::move(na), std::move(nb)};
  } else {
    auto na = tensor_node(std::forward<A>(a));
    auto nb = operand_node<typename decltype(na)::value_type>(std::forward<B>(b));
    return std::pair{std::move(na), std::move(nb)};
  }
}
template <class Op, class A, class B>
auto binary(A&& a, B&& b) {
  auto [na, nb] = operand_nodes(std::forward<A>(a), std::forward<B>(b));
  return Expr<BinaryNode<Op, decltype(na), decltype(nb)>>({std::move(na), std::move(nb)});
}
template <class Op, class A>
auto unary(A&& a) {
  auto na = tensor_node(std::forward<A>(a));
  return Expr<UnaryNode<Op, decltype(na)>>({std::move(na)});
}

// libveda's side (src/expr.cpp): the broadcast shape (InvalidArgument when
// the leaves' shapes do not broadcast), and the planned, placed evaluation
// of c, whose broadcast shape is s, into c.out.
Shape expr_shape(const ExprCall& c);
void run_expr(ExprCall& c, const Shape& s, const ExprOptions& o, ExprCpuFn cpu, const void* node);
[[noreturn]] void throw_assign_shape(const Shape& expr, const Shape& out);

template <class N, class T>
void evaluate_into(const N& node, ExprCall& c, const Shape& s, Array<T>& out, const ExprOptions& o) {
  c.out_type = cuda_type_name<T>();
  c.out_bytes = sizeof(T);
  c.out = out.buffer();
  run_expr(c, s, o, &expr_cpu<N, T>, &node);
}

// `node`, whose call is c and broadcast shape s, into a new Array<R>.
template <class R, class N>
Array<R> evaluate_new(const N& node, ExprCall& c, const Shape& s, const ExprOptions& o) {
  Array<R> out = Array<R>::from_storage(make_host_storage(s.checked_size(sizeof(R)) * sizeof(R)), s.size());
  out.reshape(s);
  evaluate_into(node, c, s, out, o);
  return out;
}

}  // namespace detail

// Evaluates `e` into a new Array of its value type (or of T).
template <class T = void, class N>
auto eval(const Expr<N>& e, const ExprOptions& o = {}) {
  using R = std::conditional_t<std::is_void_v<T>, typename N::value_type, T>;
  static_assert(detail::ExprElem<R>, "veda::eval: the result type must be float, double, int32, int64 or bool");
  detail::ExprCallOf<N> c(e.node());
  return detail::evaluate_new<R>(e.node(), c, detail::expr_shape(c), o);
}

// Evaluates `e` into `out`, whose shape must be the broadcast shape
// (veda::InvalidArgument naming both otherwise).
template <detail::ExprElem T, class E>
  requires detail::TensorOperand<E>
void assign(Array<T>& out, E&& e, const ExprOptions& o = {}) {
  const auto node = detail::tensor_node(std::forward<E>(e));
  detail::ExprCallOf<std::remove_const_t<decltype(node)>> c(node);
  const Shape s = detail::expr_shape(c);
  if (s != out.shape()) detail::throw_assign_shape(s, out.shape());
  detail::evaluate_into(node, c, s, out, o);
}

template <class T>
template <class N>
Array<T>::Array(const Expr<N>& e) : Array(eval<T>(e)) {}

template <class T>
template <class N>
Array<T>& Array<T>::operator=(const Expr<N>& e) {
  detail::ExprCallOf<N> c(e.node());
  const Shape s = detail::expr_shape(c);
  if (buf_ && s == shape_) detail::evaluate_into(e.node(), c, s, *this, {});  // in place: no allocation
  else *this = detail::evaluate_new<T>(e.node(), c, s, {});  // this Array may be an operand: replaced after
  return *this;
}

// Operators and functions. Each returns an Expr.
#define VEDA_EXPR_BINARY(name, Op)                                             \
  template <class A, class B>                                                  \
    requires detail::BinaryOperands<A, B>                                      \
  auto name(A&& a, B&& b) {                                                    \
    return detail::binary<detail::Op>(std::forward<A>(a), std::forward<B>(b)); \
  }
VEDA_EXPR_BINARY(operator+, AddOp)
VEDA_EXPR_BINARY(operator-, SubOp)
VEDA_EXPR_BINARY(operator*, MulOp)
VEDA_EXPR_BINARY(operator/, DivOp)
VEDA_EXPR_BINARY(operator<, LtOp)
VEDA_EXPR_BINARY(operator<=, LeOp)
VEDA_EXPR_BINARY(operator>, GtOp)
VEDA_EXPR_BINARY(operator>=, GeOp)
VEDA_EXPR_BINARY(operator==, EqOp)
VEDA_EXPR_BINARY(operator!=, NeOp)
VEDA_EXPR_BINARY(pow, PowOp)
VEDA_EXPR_BINARY(maximum, MaximumOp)
VEDA_EXPR_BINARY(minimum, MinimumOp)
#undef VEDA_EXPR_BINARY

#define VEDA_EXPR_UNARY_FUNCTION(name, Op)                             \
  template <class A>                                                   \
    requires detail::TensorOperand<A>                                  \
  auto name(A&& a) {                                                   \
    return detail::unary<detail::Op>(std::forward<A>(a));              \
  }
VEDA_EXPR_UNARY_FUNCTION(operator-, NegOp)
VEDA_EXPR_UNARY_FUNCTION(exp, ExpOp)
VEDA_EXPR_UNARY_FUNCTION(log, LogOp)
VEDA_EXPR_UNARY_FUNCTION(sqrt, SqrtOp)
VEDA_EXPR_UNARY_FUNCTION(abs, AbsOp)
VEDA_EXPR_UNARY_FUNCTION(sin, SinOp)
VEDA_EXPR_UNARY_FUNCTION(cos, CosOp)
VEDA_EXPR_UNARY_FUNCTION(tanh, TanhOp)
#undef VEDA_EXPR_UNARY_FUNCTION

// where(c, a, b): a where c is true, else b. c is an Array or expression
// (converted to bool); a and b are any operands (two scalars meet in
// std::common_type).
template <class C, class A, class B>
  requires detail::TensorOperand<C> && detail::ExprOperand<A> && detail::ExprOperand<B>
auto where(C&& c, A&& a, B&& b) {
  auto nc = detail::tensor_node(std::forward<C>(c));
  if constexpr (detail::ScalarOperand<A> && detail::ScalarOperand<B>) {
    using V = std::common_type_t<std::remove_cvref_t<A>, std::remove_cvref_t<B>>;
    auto na = detail::ScalarNode<V>{static_cast<V>(a)};
    auto nb = detail::ScalarNode<V>{static_cast<V>(b)};
    return Expr<detail::WhereNode<decltype(nc), decltype(na), decltype(nb)>>({std::move(nc), na, nb});
  } else {
    auto [na, nb] = detail::operand_nodes(std::forward<A>(a), std::forward<B>(b));
    return Expr<detail::WhereNode<decltype(nc), decltype(na), decltype(nb)>>(
        {std::move(nc), std::move(na), std::move(nb)});
  }
}

// clamp(x, lo, hi) = minimum(maximum(x, lo), hi): NaN stays NaN.
template <class X, class Lo, class Hi>
  requires detail::TensorOperand<X> && detail::ExprOperand<Lo> && detail::ExprOperand<Hi>
auto clamp(X&& x, Lo&& lo, Hi&& hi) {
  return minimum(maximum(std::forward<X>(x), std::forward<Lo>(lo)), std::forward<Hi>(hi));
}

}  // namespace veda
