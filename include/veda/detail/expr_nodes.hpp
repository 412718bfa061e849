// The nodes of veda's lazy element-wise expressions (veda/expr.hpp), and the
// type-erased description of one evaluation (ExprCall) that libveda plans,
// places and, on a GPU, turns into a kernel.
//
// A node's type is the expression's structure: its leaves (Array operands,
// numbered left to right), its scalars and its operations. From the type
// alone come the fused CPU loop (eval<L>: leaf k is read through
// p.leaf<L + k>(), so the whole expression inlines into one loop) and the
// expression's CUDA text (ExprText, built once per type). From a node's
// value come the leaves' buffers and shapes and the scalars' values
// (collect()).
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "veda/array.hpp"
#include "veda/detail/expr_ops.hpp"

namespace veda::detail {

union ExprScalar {
  double f;
  std::int64_t i;
};

// What an expression type says, built once per type.
struct ExprText {
  std::string cuda;    // its value in CUDA: leaf k is `v<k>`, scalar j is `s<j>`
  std::string pretty;  // for decisions: "(x0 - x1) / x2"
  std::vector<const char*> scalar_types;  // CUDA type of each scalar
  double flops = 0;    // per element, for the cost model
  // libveda's site for the default-named evaluations of this type, once
  // looked up (src/expr.cpp): a call reads it without a lock.
  mutable std::atomic<void*> default_site{nullptr};

  template <class N>
  explicit ExprText(std::type_identity<N>) : flops(N::kFlops) {
    int leaf = 0;
    N::emit(*this, leaf, cuda, pretty);
  }
};

template <class N>
const ExprText& expr_text() {
  static const ExprText t{std::type_identity<N>{}};
  return t;
}

struct ExprLeaf {
  Buffer* buf = nullptr;  // null for an empty Array
  Shape shape;
  const char* type = "float";  // CUDA type name
  std::uint8_t elem_bytes = 4;
  // Elements between neighbours along each planned dimension (0: broadcast).
  std::int64_t stride[4] = {0, 0, 0, 0};
};

// One evaluation: filled by the header (leaves, scalars, output), planned by
// libveda (the broadcast shape collapsed to at most 4 dimensions, right-
// aligned in ext, and each leaf's strides along them). Its leaves and
// scalars live in the ExprCallOf that holds it (no allocation per call).
struct ExprCall {
  const ExprText* text = nullptr;
  std::span<ExprLeaf> leaves;      // in the order eval numbers them
  std::span<ExprScalar> scalars;   // in the order emit names them
  const char* out_type = "float";
  std::uint8_t out_bytes = 4;
  Buffer* out = nullptr;
  std::int64_t ext[4] = {1, 1, 1, 1};
  int dims = 1;
};

template <class T>
struct LeafNode {
  using value_type = T;
  static constexpr int kLeaves = 1, kScalars = 0;
  static constexpr double kFlops = 0;
  static constexpr bool kCallsLibm = false;
  const Array<T>* a = nullptr;
  std::shared_ptr<const Array<T>> owned;  // a temporary operand, kept alive with the expression

  template <int L, class P>
  T eval(const P& p, std::size_t i) const {
    return static_cast<const T*>(p.template leaf<L>())[i];
  }
  template <int L, int S>
  void collect(ExprCall& c) const {
    ExprLeaf& l = c.leaves[L];
    l.buf = a->buffer();
    l.shape = a->shape();
    l.type = cuda_type_name<T>();
    l.elem_bytes = sizeof(T);
  }
  static void emit(ExprText&, int& leaf, std::string& cuda, std::string& pretty) {
    const std::string k = std::to_string(leaf++);
    cuda += cat("v", k);
    pretty += cat("x", k);
  }
};

template <class T>
struct ScalarNode {
  using value_type = T;
  static constexpr int kLeaves = 0, kScalars = 1;
  static constexpr double kFlops = 0;
  static constexpr bool kCallsLibm = false;
  T v;

  template <int L, class P>
  T eval(const P&, std::size_t) const {
    return v;
  }
  template <int L, int S>
  void collect(ExprCall& c) const {
    if constexpr (std::is_floating_point_v<T>) c.scalars[S].f = v;
    else c.scalars[S].i = static_cast<std::int64_t>(v);
  }
  static void emit(ExprText& t, int&, std::string& cuda, std::string& pretty) {
    const std::string name = cat("s", std::to_string(t.scalar_types.size()));
    t.scalar_types.push_back(cuda_type_name<T>());
    cuda += name;
    pretty += name;
  }
};

template <class Op, class A>
struct UnaryNode {
  using operand_type = typename Op::template Operand<typename A::value_type>;
  using value_type = operand_type;
  static constexpr int kLeaves = A::kLeaves, kScalars = A::kScalars;
  static constexpr double kFlops = A::kFlops + expr_op_flops<Op>();
  static constexpr bool kCallsLibm = A::kCallsLibm || expr_op_calls_libm<Op>();
  A a;

  template <int L, class P>
  value_type eval(const P& p, std::size_t i) const {
    return Op::apply(static_cast<operand_type>(a.template eval<L>(p, i)));
  }
  template <int L, int S>
  void collect(ExprCall& c) const {
    a.template collect<L, S>(c);
  }
  static void emit(ExprText& t, int& leaf, std::string& cuda, std::string& pretty) {
    std::string ca, pa;
    A::emit(t, leaf, ca, pa);
    const char* type = cuda_type_name<operand_type>();
    cuda += Op::cuda(type, cast_text(type, ca));
    pretty += Op::kPretty[1] ? cat(Op::kPretty, "(", pa, ")") : cat(Op::kPretty, pa);
  }
};

template <class Op, class A, class B>
struct BinaryNode {
  using operand_type = typename Op::template Operand<typename A::value_type, typename B::value_type>;
  using value_type = typename Op::template Result<typename A::value_type, typename B::value_type>;
  static constexpr int kLeaves = A::kLeaves + B::kLeaves, kScalars = A::kScalars + B::kScalars;
  static constexpr double kFlops = A::kFlops + B::kFlops + expr_op_flops<Op>();
  static constexpr bool kCallsLibm = A::kCallsLibm || B::kCallsLibm || expr_op_calls_libm<Op>();
  A a;
  B b;

  template <int L, class P>
  value_type eval(const P& p, std::size_t i) const {
    return Op::apply(static_cast<operand_type>(a.template eval<L>(p, i)),
                     static_cast<operand_type>(b.template eval<L + A::kLeaves>(p, i)));
  }
  template <int L, int S>
  void collect(ExprCall& c) const {
    a.template collect<L, S>(c);
    b.template collect<L + A::kLeaves, S + A::kScalars>(c);
  }
  static void emit(ExprText& t, int& leaf, std::string& cuda, std::string& pretty) {
    std::string ca, pa, cb, pb;
    A::emit(t, leaf, ca, pa);
    B::emit(t, leaf, cb, pb);
    const char* type = cuda_type_name<operand_type>();
    cuda += Op::cuda(type, cast_text(type, ca), cast_text(type, cb));
    pretty += Op::kPretty[0] == ' ' ? cat("(", pa, Op::kPretty, pb, ")") : cat(Op::kPretty, "(", pa, ", ", pb, ")");
  }
};

template <class C, class A, class B>
struct WhereNode {
  using value_type = common_t<typename A::value_type, typename B::value_type>;
  static constexpr int kLeaves = C::kLeaves + A::kLeaves + B::kLeaves;
  static constexpr int kScalars = C::kScalars + A::kScalars + B::kScalars;
  static constexpr double kFlops = C::kFlops + A::kFlops + B::kFlops + 1;
  static constexpr bool kCallsLibm = C::kCallsLibm || A::kCallsLibm || B::kCallsLibm;
  C c;
  A a;
  B b;

  template <int L, class P>
  value_type eval(const P& p, std::size_t i) const {
    // Both sides are computed, then one is selected: a select vectorises, a
    // branch does not. GCC made the ternary of floats a branch, and the loop
    // scalar (where(x > 0, x, 0.1 * x) + y: 42 us for 2^16 floats), so they
    // are selected by bit masks (9 us) -- unless the loop calls libm and
    // stays scalar anyway (P::kSelectByMask false), where the masks' moves
    // between registers cost more than the branch (with + sqrt(abs(y)): 80
    // against 57 us).
    const bool k = static_cast<bool>(c.template eval<L>(p, i));
    const auto x = static_cast<value_type>(a.template eval<L + C::kLeaves>(p, i));
    const auto y = static_cast<value_type>(b.template eval<L + C::kLeaves + A::kLeaves>(p, i));
    if constexpr (P::kSelectByMask && std::is_floating_point_v<value_type> &&
                  (sizeof(value_type) == 4 || sizeof(value_type) == 8)) {
      using Bits = std::conditional_t<sizeof(value_type) == 4, std::uint32_t, std::uint64_t>;
      const Bits m = Bits{0} - static_cast<Bits>(k);
      return std::bit_cast<value_type>(static_cast<Bits>((std::bit_cast<Bits>(x) & m) | (std::bit_cast<Bits>(y) & ~m)));
    } else {
      return k ? x : y;
    }
  }
  template <int L, int S>
  void collect(ExprCall& call) const {
    c.template collect<L, S>(call);
    a.template collect<L + C::kLeaves, S + C::kScalars>(call);
    b.template collect<L + C::kLeaves + A::kLeaves, S + C::kScalars + A::kScalars>(call);
  }
  static void emit(ExprText& t, int& leaf, std::string& cuda, std::string& pretty) {
    std::string cc, pc, ca, pa, cb, pb;
    C::emit(t, leaf, cc, pc);
    A::emit(t, leaf, ca, pa);
    B::emit(t, leaf, cb, pb);
    const char* type = cuda_type_name<value_type>();
    cuda += cat("(", cast_text("bool", cc), " ? ", cast_text(type, ca), " : ", cast_text(type, cb), ")");
    pretty += cat("where(", pc, ", ", pa, ", ", pb, ")");
  }
};

// The ExprCall of an N's evaluation, holding its leaves and scalars.
// Neither copied nor moved: the call's spans point into it.
template <class N>
struct ExprCallOf : ExprCall {
  explicit ExprCallOf(const N& node) {
    text = &expr_text<N>();
    leaves = leaf_store;
    scalars = scalar_store;
    node.template collect<0, 0>(*this);
  }
  ExprCallOf(const ExprCallOf&) = delete;
  ExprCallOf& operator=(const ExprCallOf&) = delete;
  std::array<ExprLeaf, N::kLeaves> leaf_store{};
  std::array<ExprScalar, N::kScalars> scalar_store{};
};

}  // namespace veda::detail
