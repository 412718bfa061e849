// Reductions along an axis on the CPU. One recursive pairwise scheme for
// every op: a range longer than a leaf is halved at a multiple of the leaf
// size and the halves merged, so the tree (and a float sum's bits) depends
// only on the shape; with workers, the halves of a large range run as two
// tasks. A contiguous axis (inner == 1) is summed in 32 interleaved lanes per
// leaf, which the compiler keeps in vector registers; a strided one row by
// row into a block of up to 128 column states, reading whole cache lines.
#include "backends/cpu/reduce_axis.hpp"

#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <cstdint>

#include "backends/cpu/tasks.hpp"
#include "veda/detail/axis_ops.hpp"

namespace veda::detail::cpu {
namespace {
constexpr std::size_t kLanes = 32;      // interleaved states in a contiguous leaf
constexpr std::size_t kLeaf = 1024;     // elements per contiguous leaf
constexpr std::size_t kLeafRows = 64;   // rows per strided leaf
constexpr std::size_t kCols = 128;      // column states per strided task
constexpr std::size_t kSplit = 1 << 15; // elements below which a range is one task

// Where a range of n > unit is halved: a multiple of unit, below n.
std::size_t halve(std::size_t n, std::size_t unit) { return (n / 2 + unit - 1) / unit * unit; }

template <class F, class G>
void both(bool parallel, const F& f, const G& g) {
  if (parallel) {
    tbb::parallel_invoke(f, g);
  } else {
    f();
    g();
  }
}

// The state of x[0, n), a contiguous run whose first element is index j0 along the axis.
template <class Op, class T>
typename Op::State row(const T* x, std::size_t n, std::int64_t j0, typename Op::Center c, bool par) {
  using S = typename Op::State;
  if (n > kLeaf) {
    const std::size_t h = halve(n, kLeaf);
    S a, b;
    both(par && n >= kSplit, [&] { a = row<Op>(x, h, j0, c, par); },
         [&] { b = row<Op>(x + h, n - h, j0 + static_cast<std::int64_t>(h), c, par); });
    Op::merge(a, b);
    return a;
  }
  S lane[kLanes];
  for (S& s : lane) s = Op::identity();
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) Op::add(lane[l], x[i + l], j0 + static_cast<std::int64_t>(i + l), c);
  for (std::size_t l = 0; i + l < n; ++l) Op::add(lane[l], x[i + l], j0 + static_cast<std::int64_t>(i + l), c);
  for (std::size_t w = kLanes / 2; w > 0; w /= 2)
    for (std::size_t l = 0; l < w; ++l) Op::merge(lane[l], lane[l + w]);
  return lane[0];
}

// out[k] = the state of x[j * stride + k] over rows j < n (index j0 + j
// along the axis), for k < w <= kCols; c: the w centers (centered ops).
template <class Op, class T>
void cols(const T* x, std::size_t n, std::int64_t j0, std::size_t stride, std::size_t w,
          const typename Op::Center* c, typename Op::State* out, bool par) {
  using S = typename Op::State;
  if (n > kLeafRows) {
    const std::size_t h = halve(n, kLeafRows);
    S right[kCols];
    both(par && n * w >= kSplit, [&] { cols<Op>(x, h, j0, stride, w, c, out, par); },
         [&] { cols<Op>(x + h * stride, n - h, j0 + static_cast<std::int64_t>(h), stride, w, c, right, par); });
    for (std::size_t k = 0; k < w; ++k) Op::merge(out[k], right[k]);
    return;
  }
  for (std::size_t k = 0; k < w; ++k) out[k] = Op::identity();
  for (std::size_t j = 0; j < n; ++j) {
    const T* r = x + j * stride;
    const std::int64_t index = j0 + static_cast<std::int64_t>(j);
    if constexpr (Op::kCentered)
      for (std::size_t k = 0; k < w; ++k) Op::add(out[k], r[k], index, c[k]);
    else
      for (std::size_t k = 0; k < w; ++k) Op::add(out[k], r[k], index, {});
  }
}

// One pass of Op; center: the op's centers laid out as out (centered ops).
template <class Op, class T, class R>
void pass(CpuExecutor* par, AxisOp op, const T* in, R* out, const typename Op::Center* center, std::size_t outer,
          std::size_t len, std::size_t inner, int ddof) {
  using C = typename Op::Center;
  const bool p = par != nullptr;
  const auto n = static_cast<std::int64_t>(len);
  if (inner == 1) {
    for_each_task(par, outer, 1, [&](std::size_t o) {
      C c{};
      if constexpr (Op::kCentered) c = center[o];
      out[o] = axis::finish<R>(op, row<Op>(in + o * len, len, 0, c, p), n, ddof);
    });
    return;
  }
  const std::size_t blocks = (inner + kCols - 1) / kCols;
  for_each_task(par, outer * blocks, 1, [&](std::size_t t) {
    const std::size_t o = t / blocks, k0 = t % blocks * kCols, w = std::min(kCols, inner - k0);
    typename Op::State s[kCols];
    const C* c = nullptr;
    if constexpr (Op::kCentered) c = center + o * inner + k0;
    cols<Op>(in + o * len * inner + k0, len, 0, inner, w, c, s, p);
    for (std::size_t k = 0; k < w; ++k) out[o * inner + k0 + k] = axis::finish<R>(op, s[k], n, ddof);
  });
}

}  // namespace

void reduce_axis(CpuExecutor* parallel, AxisOp op, ScalarType type, const void* in, void* out, std::size_t outer,
                 std::size_t len, std::size_t inner, int ddof) {
  axis::with_type(type, [&]<class T>(T) {
    using S = sum_t<T>;
    if (op == AxisOp::Sum && len == 0) {
      std::fill_n(static_cast<S*>(out), outer * inner, S{0});
      return;
    }
    axis::for_each_pass<T>(op, out, [&]<class Op, class R>(AxisOp fin, R* o, const typename Op::Center* centers) {
      pass<Op>(parallel, fin, static_cast<const T*>(in), o, centers, outer, len, inner, ddof);
    });
  });
}

}  // namespace veda::detail::cpu
