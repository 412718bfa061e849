// veda/index_space.hpp — what parallel_for and parallel_reduce iterate over
// and the Arrays they touch.
//
//   veda::Extent<2>{rows, cols}                  // every (i, j), 0 <= i < rows
//   veda::Box<2>{{1, 1}, {rows - 1, cols - 1}}   // lo <= index < hi: an interior
//   veda::read(a), veda::write(b), veda::read_write(c)   // declared accesses
//
// A declaration becomes a View inside the function: a pointer and the
// Array's shape, captured by value, valid wherever the call runs (host or
// device). view(i) / view[i] index a 1-D Array, view(i, j) a 2-D one and
// view(i, j, k) a 3-D one (row-major); view.extent(d) is the Array's extent
// (1 past its dimensions). view(i, j) on a 3-D Array indexes its rows x
// (extent(1) * extent(2)) matrix; a 4-D Array is seen as 3-D with its last
// two extents merged. In builds without NDEBUG every index is
// bounds-checked (veda::InvalidArgument on the CPU, a trap on the GPU).
//
// Thread-safety: values; the Arrays must not be resized while a call runs.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "veda/array.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/error.hpp"

namespace veda {

// The whole index space [0, n0) x [0, n1) x ...
template <std::size_t N>
struct Extent {
  static_assert(N >= 1 && N <= 3, "veda::Extent: 1 to 3 dimensions");
  std::size_t n[N];
};

// [lo0, hi0) x [lo1, hi1) x ...: stencils over an interior need no index arithmetic.
template <std::size_t N>
struct Box {
  static_assert(N >= 1 && N <= 3, "veda::Box: 1 to 3 dimensions");
  std::array<std::size_t, N> lo{}, hi{};
  VEDA_HD std::size_t size() const noexcept {
    std::size_t s = 1;
    for (std::size_t d = 0; d < N; ++d) s *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
    return s;
  }
};

enum class Access { Read, Write, ReadWrite };

namespace detail {
// Names the index and the extents it is checked against (k, n2: 3-D only).
[[noreturn]] void throw_view_index(std::size_t i, std::size_t j, std::size_t k, std::size_t n0, std::size_t n1,
                                   std::size_t n2);
}  // namespace detail

// What f sees of one declared Array. T is const for read().
template <class T>
class View {
 public:
  View() = default;
  VEDA_HD View(T* p, std::size_t n0, std::size_t n1 = 1, std::size_t n2 = 1) : p_(p), n0_(n0), n1_(n1), n2_(n2) {}
  VEDA_HD T& operator[](std::size_t i) const {
    check(i, 0, 0, size(), 1, 1);
    return p_[i];
  }
  VEDA_HD T& operator()(std::size_t i) const { return (*this)[i]; }
  VEDA_HD T& operator()(std::size_t i, std::size_t j) const {
    check(i, j, 0, n0_, n1_ * n2_, 1);
    return p_[i * (n1_ * n2_) + j];
  }
  VEDA_HD T& operator()(std::size_t i, std::size_t j, std::size_t k) const {
    check(i, j, k, n0_, n1_, n2_);
    return p_[(i * n1_ + j) * n2_ + k];
  }
  VEDA_HD std::size_t extent(int d) const { return d == 0 ? n0_ : d == 1 ? n1_ : d == 2 ? n2_ : 1; }
  VEDA_HD std::size_t size() const { return n0_ * n1_ * n2_; }
  VEDA_HD T* data() const { return p_; }

 private:
  VEDA_HD static void check([[maybe_unused]] std::size_t i, [[maybe_unused]] std::size_t j,
                            [[maybe_unused]] std::size_t k, [[maybe_unused]] std::size_t n0,
                            [[maybe_unused]] std::size_t n1, [[maybe_unused]] std::size_t n2) {
#ifndef NDEBUG
    if (i >= n0 || j >= n1 || k >= n2) {
#if defined(__CUDA_ARCH__)
      __trap();
#else
      detail::throw_view_index(i, j, k, n0, n1, n2);
#endif
    }
#endif
  }
  T* p_ = nullptr;
  std::size_t n0_ = 0, n1_ = 1, n2_ = 1;
};

// A declared access to an Array (what read/write/read_write return).
template <class T, Access A>
struct Use {
  using value_type = T;
  using array_type = std::conditional_t<A == Access::Read, const Array<T>, Array<T>>;
  static constexpr Access access = A;
  array_type* array;
};

template <class T>
Use<T, Access::Read> read(const Array<T>& a) {
  return {&a};
}
template <class T>
Use<T, Access::Write> write(Array<T>& a) {
  return {&a};
}
template <class T>
Use<T, Access::ReadWrite> read_write(Array<T>& a) {
  return {&a};
}

namespace detail {
template <class U>
struct is_use : std::false_type {};
template <class T, Access A>
struct is_use<Use<T, A>> : std::true_type {};
template <class U>
inline constexpr bool is_use_v = is_use<std::remove_cvref_t<U>>::value;

// The view a declaration becomes, for pointer p.
template <class T, Access A>
using view_t = View<std::conditional_t<A == Access::Read, const T, T>>;

template <std::size_t N>
Box<N> to_box(const Box<N>& b) {
  return b;
}
template <std::size_t N>
Box<N> to_box(const Extent<N>& e) {
  Box<N> b;
  for (std::size_t d = 0; d < N; ++d) b.hi[d] = e.n[d];
  return b;
}
inline Box<1> to_box(std::size_t n) { return Box<1>{{0}, {n}}; }

}  // namespace detail

}  // namespace veda
