// veda/shape.hpp — veda::Shape: the extents of a 1- to 4-D (row-major) Array.
//
//   veda::Shape s{batch, rows, cols};     // any integer types
//   veda::Array<float> x(s);               // zeros
//   s.ndim() == 3; s[0] == batch; s[3] == 1; s.size() == batch * rows * cols
//
// Contract: 1 to 4 extents, none negative (veda::InvalidArgument naming the
// extent); extents beyond ndim() read as 1. A default Shape is 1-D with no
// elements. Array checks that the volume fits in memory's address range.
//
// Thread-safety: a value type.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>

#include "veda/error.hpp"

namespace veda {

class Shape {
 public:
  static constexpr int kMaxDims = 4;

  Shape() noexcept = default;
  template <std::integral... I>
    requires(sizeof...(I) >= 1 && sizeof...(I) <= kMaxDims)
  explicit(sizeof...(I) == 1) Shape(I... extents) : ndim_(static_cast<int>(sizeof...(I))) {
    int d = 0;
    ((ext_[d] = checked(extents, d), ++d), ...);
  }

  int ndim() const noexcept { return ndim_; }
  std::size_t operator[](int d) const noexcept { return d >= 0 && d < kMaxDims ? ext_[d] : 1; }
  // The number of elements (the caller checks overflow where it matters).
  std::size_t size() const noexcept { return ext_[0] * ext_[1] * ext_[2] * ext_[3]; }
  bool operator==(const Shape&) const = default;
  // size(), or InvalidArgument when that many elements of elem_bytes bytes
  // would not fit in memory's address range (a zero extent never overflows).
  std::size_t checked_size(std::size_t elem_bytes) const {
    std::size_t v = 1;
    bool over = false;
    for (std::size_t e : ext_) {
      if (e == 0) return 0;
      over |= v > static_cast<std::size_t>(-1) / elem_bytes / e;
      v *= e;
    }
    if (over) throw InvalidArgument("veda::Shape " + str() + ": the shape overflows memory's range");
    return v;
  }

  // "[2, 3, 4]": for messages.
  std::string str() const {
    std::string s = "[";
    for (int d = 0; d < ndim_; ++d) s += (d ? ", " : "") + std::to_string(ext_[d]);
    return s + "]";
  }

 private:
  template <class I>
  static std::size_t checked(I e, int d) {
    if constexpr (std::is_signed_v<I>)
      if (e < 0)
        throw InvalidArgument("veda::Shape: extent " + std::to_string(d) + " is negative (" + std::to_string(e) + ")");
    return static_cast<std::size_t>(e);
  }

  std::size_t ext_[kMaxDims] = {0, 1, 1, 1};
  int ndim_ = 1;
};

}  // namespace veda
