// veda/array.hpp — veda::Array<T>: a 1- to 4-D (row-major) array whose
// data may live on the host, on the GPU, or both, with the runtime moving it.
//
//   veda::Array<float> a(std::move(vec));    // adopts the vector, no copy
//   veda::Array<float> m(rows, cols);         // zeros
//   veda::Array<float> v(nx, ny, nz);         // zeros; extent(0..2)
//   veda::Array<float> x(veda::Shape{b, c, h, w});  // zeros, 4-D
//   auto r = saxpy(2.0f, a, b);               // may run on the GPU; r stays there
//   float x = r[0];                           // copies back only now
//
// Residency (MSI style): the array knows whether its host copy and its device
// copy are valid. Reading one side copies data in only when that side is
// stale; writing one side makes the other stale. valid_on_host() and
// valid_on_device() expose this to tests and to the cost model.
//
// Access: host() gives a span; the mutable overload (on a non-const Array)
// counts as a host write, so it waits for device work in flight on the
// array and marks the device copy stale. operator[] and at() are bounds
// checked (veda::InvalidArgument) and go through the same path, so use
// host() for loops. to_vector() copies out. read() and write() copy a
// range of elements out and in without moving the rest: from or to a device
// copy, only those elements cross.
//
// Shape: shape() and extent(d) for d < ndim() (1 beyond). reshape() changes
// the shape, never the data (no copy). rows() is extent(0) and cols() the
// elements of one row (the product of the other extents): the matrix view
// 2-D ops take (they require ndim() == 2).
//
// Element types: trivially copyable. Array<bool> holds a bool per byte (a
// std::vector<bool> is copied into it, not adopted: it packs bits).
//
// Ownership: moving is free; copying is explicit (clone()). A moved-from
// Array is empty. After veda::shutdown(), arrays keep their data on the host.
//
// Thread-safety: like std::vector — concurrent const access is safe, any
// write needs exclusive access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/detail/buffer.hpp"
#include "veda/error.hpp"
#include "veda/shape.hpp"

namespace veda {

namespace detail {
template <class T>
class VectorStorage final : public HostStorage {
 public:
  explicit VectorStorage(std::vector<T>&& v) : v_(std::move(v)) {
    data = v_.data();
    bytes = v_.size() * sizeof(T);
  }

 private:
  std::vector<T> v_;
};
// std::vector<bool> packs bits: an Array<bool> holds one bool per byte.
template <>
class VectorStorage<bool> final : public HostStorage {
 public:
  explicit VectorStorage(std::vector<bool>&& v) : v_(std::make_unique<bool[]>(v.size())) {
    for (std::size_t i = 0; i < v.size(); ++i) v_[i] = v[i];
    data = v_.get();
    bytes = v.size();
  }

 private:
  std::unique_ptr<bool[]> v_;
};

void array_to_device(Buffer& b, int device);  // no-op without a usable device
void array_release_device(Buffer& b);
enum class DeviceAccess { Read, Write, Overwrite };
void* array_device_data(Buffer& b, int device, DeviceAccess access);  // nullptr without a usable device
[[noreturn]] void throw_index(std::size_t i, std::size_t n);
[[noreturn]] void throw_range(const char* what, std::size_t first, std::size_t count, std::size_t n);
[[noreturn]] void throw_shape(const std::string& what, const Shape& from, const Shape& to);
}  // namespace detail

template <class N>
class Expr;  // veda/expr.hpp

template <class T>
class Array {
  static_assert(std::is_trivially_copyable_v<T>, "veda::Array needs a trivially copyable T");

 public:
  using value_type = T;

  Array() = default;
  explicit Array(std::size_t n) : Array(Shape{n}) {}
  Array(std::size_t rows, std::size_t cols) : Array(Shape{rows, cols}) {}
  Array(std::size_t d0, std::size_t d1, std::size_t d2) : Array(Shape{d0, d1, d2}) {}
  explicit Array(const Shape& s) : Array(std::vector<T>(s.checked_size(sizeof(T)))) { shape_ = s; }
  // From data: the shape's volume must equal data.size().
  Array(std::size_t rows, std::size_t cols, std::vector<T> data) : Array(std::move(data)) { reshape(rows, cols); }
  Array(const Shape& s, std::vector<T> data) : Array(std::move(data)) { reshape(s); }
  Array(std::vector<T>&& v)  // NOLINT: adopting is the point
      : buf_(std::make_unique<detail::Buffer>(std::make_unique<detail::VectorStorage<T>>(std::move(v)))),
        shape_{buf_->bytes() / sizeof(T)} {}
  explicit Array(const std::vector<T>& v) : Array(std::vector<T>(v)) {}
  explicit Array(std::span<const T> s) : Array(std::vector<T>(s.begin(), s.end())) {}
  Array(std::initializer_list<T> il) : Array(std::vector<T>(il)) {}
  // Evaluates an element-wise expression (veda/expr.hpp); assigning one
  // writes in place when the shapes agree.
  template <class N>
  Array(const Expr<N>& e);  // NOLINT: `Array<float> z = x + y;` is the point
  template <class N>
  Array& operator=(const Expr<N>& e);

  // Host memory that is page-locked when a GPU is usable (faster, asynchronous
  // transfers); ordinary memory otherwise. Zero-initialised.
  // An n whose byte count overflows is InvalidArgument, as for Array(n).
  static Array pinned(std::size_t n) {
    const std::size_t bytes = Shape{n}.checked_size(sizeof(T)) * sizeof(T);
    Array a;
    auto storage = detail::make_pinned_storage(bytes);
    if (n) std::memset(storage->data, 0, bytes);
    a.buf_ = std::make_unique<detail::Buffer>(std::move(storage));
    a.shape_ = Shape{n};
    return a;
  }

  Array(Array&& o) noexcept : buf_(std::move(o.buf_)), shape_(std::exchange(o.shape_, Shape{})) {}
  Array& operator=(Array&& o) noexcept {
    if (this != &o) {
      buf_ = std::move(o.buf_);
      shape_ = std::exchange(o.shape_, Shape{});
    }
    return *this;
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  // A deep copy of the data, valid on the host.
  Array clone() const {
    auto s = host();
    Array c(std::vector<T>(s.begin(), s.end()));
    c.shape_ = shape_;
    return c;
  }

  std::size_t size() const noexcept { return shape_.size(); }
  bool empty() const noexcept { return size() == 0; }
  std::size_t bytes() const noexcept { return size() * sizeof(T); }
  std::size_t rows() const noexcept { return shape_[0]; }
  std::size_t cols() const noexcept { return shape_[1] * shape_[2] * shape_[3]; }
  int ndim() const noexcept { return shape_.ndim(); }
  const Shape& shape() const noexcept { return shape_; }
  std::size_t extent(int d) const noexcept { return shape_[d]; }

  // Reinterprets the shape, never the data; the new shape must hold size()
  // elements (veda::InvalidArgument naming both shapes).
  void reshape(const Shape& s) {
    if (s.checked_size(sizeof(T)) != size()) detail::throw_shape("veda::Array::reshape", shape_, s);
    shape_ = s;
  }
  void reshape(std::size_t rows, std::size_t cols) { reshape(Shape{rows, cols}); }
  void reshape(std::size_t d0, std::size_t d1, std::size_t d2) { reshape(Shape{d0, d1, d2}); }
  // Back to 1-D.
  void flatten() noexcept { shape_ = Shape{size()}; }

  std::span<const T> host() const {
    if (!buf_) return {};
    return {static_cast<const T*>(buf_->host_read()), size()};
  }
  std::span<T> host() {
    if (!buf_) return {};
    return {static_cast<T*>(buf_->host_write()), size()};
  }
  std::span<const T> chost() const { return host(); }

  T& operator[](std::size_t i) {
    if (i >= size()) detail::throw_index(i, size());
    return host()[i];
  }
  const T& operator[](std::size_t i) const {
    if (i >= size()) detail::throw_index(i, size());
    return host()[i];
  }
  T& at(std::size_t r, std::size_t c) { return host()[offset(r, c)]; }
  const T& at(std::size_t r, std::size_t c) const { return host()[offset(r, c)]; }
  T& at(std::size_t i, std::size_t j, std::size_t k, std::size_t l = 0) { return host()[offset(i, j, k, l)]; }
  const T& at(std::size_t i, std::size_t j, std::size_t k, std::size_t l = 0) const {
    return host()[offset(i, j, k, l)];
  }

  // Part of the elements, without moving the rest (a halo row out of a
  // device-resident grid, a boundary row into it): read copies elements
  // [first, first + out.size()) into `out` from the host copy when it is
  // valid, else from a device's, of which only those elements cross (through
  // pinned staging); write copies `in` over elements [first, first +
  // in.size()) of every valid copy. Neither changes where the data is valid.
  // A range past the end is InvalidArgument, before any copy.
  void read(std::size_t first, std::span<T> out) const {
    if (first > size() || out.size() > size() - first) detail::throw_range("read", first, out.size(), size());
    if (!out.empty()) buf_->read_range(first * sizeof(T), out.data(), out.size_bytes());
  }
  void write(std::size_t first, std::span<const T> in) {
    if (first > size() || in.size() > size() - first) detail::throw_range("write", first, in.size(), size());
    if (!in.empty()) buf_->write_range(first * sizeof(T), in.data(), in.size_bytes());
  }

  std::vector<T> to_vector() const {
    auto s = host();
    return std::vector<T>(s.begin(), s.end());
  }

  bool valid_on_host() const { return !buf_ || buf_->valid_on_host(); }
  bool valid_on_device() const { return buf_ && buf_->valid_on_device(); }  // on any device
  bool valid_on_device(int device) const { return buf_ && buf_->valid_on_device(device); }
  // The index of a device holding a valid copy (the first placed), -1 if none.
  int device() const { return buf_ ? buf_->device() : -1; }
  bool pinned_host() const noexcept { return buf_ && buf_->host_pinned(); }

  // Explicit placement hints: copy to the runtime's first device, or to
  // device `device` (one the runtime uses: InvalidArgument otherwise), now
  // (no-op without a usable GPU); or make the host copy valid and free every
  // device copy.
  void to_device(int device = -1) {
    if (buf_ && size()) detail::array_to_device(*buf_, device);
  }
  void to_host() {
    if (buf_) detail::array_release_device(*buf_);
  }

  // Interop with CUDA code outside veda (a CUDA library, CUDA-aware MPI):
  // the address of the array's copy on device `device` (the runtime's first
  // when -1; one it uses, else InvalidArgument), brought up to date there
  // (OutOfMemory when it cannot be placed), with all work veda queued on it
  // finished. On a non-const Array it counts as a device write: the host
  // copy and other devices' copies turn stale. nullptr for an empty array or
  // without a usable device. The address holds until the array is next used
  // by veda, placed, destroyed, or moved home (to_host(), veda::shutdown());
  // work on it must finish before then.
  const T* device_data(int device = -1) const { return device_address(device, detail::DeviceAccess::Read); }
  T* device_data(int device = -1) { return device_address(device, detail::DeviceAccess::Write); }
  // The same, for code that overwrites every element (an MPI receive): the
  // old contents are not copied in, and the copy there holds unspecified
  // values until that code has run.
  T* device_overwrite(int device = -1) { return device_address(device, detail::DeviceAccess::Overwrite); }

  // For veda's own ops: the type-erased storage (null for an empty Array).
  detail::Buffer* buffer() const noexcept { return buf_.get(); }
  // For veda's own ops: an n-element 1-D array over `storage` (contents as
  // the storage holds them; typically about to be overwritten).
  static Array from_storage(std::unique_ptr<detail::HostStorage> storage, std::size_t n) {
    Array a;
    a.buf_ = std::make_unique<detail::Buffer>(std::move(storage));
    a.shape_ = Shape{n};
    return a;
  }

 private:
  std::size_t offset(std::size_t r, std::size_t c) const {
    if (r >= rows() || c >= cols()) detail::throw_index(r * cols() + c, size());
    return r * cols() + c;
  }
  std::size_t offset(std::size_t i, std::size_t j, std::size_t k, std::size_t l) const {
    const std::size_t o = ((i * shape_[1] + j) * shape_[2] + k) * shape_[3] + l;
    if (i >= shape_[0] || j >= shape_[1] || k >= shape_[2] || l >= shape_[3]) detail::throw_index(o, size());
    return o;
  }

  T* device_address(int device, detail::DeviceAccess access) const {
    return buf_ && size() ? static_cast<T*>(detail::array_device_data(*buf_, device, access)) : nullptr;
  }

  std::unique_ptr<detail::Buffer> buf_;
  Shape shape_;
};

}  // namespace veda
