// veda/transpose.hpp — 2-D transposes that choose their device and tier.
//
//   veda::Array<float> t = veda::transpose(m);        // m: rows x cols
//   veda::transpose(in, out, rows, cols);              // row-major ranges
//   veda::transpose(a, b, n, n, {.beta = 1});          // b += a^T, in place
//   veda::transpose_into(t, m, {.alpha = 2});          // Arrays: t = 2 m^T
//
// Contract:
// - Any trivially copyable element of 1, 2, 4 or 8 bytes. The Array form
//   needs a 2-D Array; the range form needs in and out of rows * cols
//   elements that do not overlap (veda::InvalidArgument, before any work).
// - alpha and beta (float and double only; other elements throw
//   InvalidArgument): out = alpha in^T + beta out, in one pass; with beta == 0
//   out's old contents are never read (NaN included). The returning Array
//   form has no out to scale: beta != 0 there is an error.
// - Tiers: serial (cache-blocked), tbb-auto (blocks in parallel), cuda
//   (shared-memory tiles). Every tier moves the same bits (and, scaled,
//   computes alpha * x + beta * y in the element type, without FMA
//   contraction guarantees across tiers).
// - The Array form returns a cols x rows Array left where it was computed.
//
// Thread-safety: any number of threads may transpose at once.
#pragma once

#include <ranges>
#include <span>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"

namespace veda {

struct TransposeOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "transpose"
  std::string tier;  // force "serial", "tbb-auto" or "cuda"
  double alpha = 1;  // out = alpha in^T + beta out (float and double)
  double beta = 0;
};

namespace detail {
template <class T>
concept TransposeElem = std::is_trivially_copyable_v<T> &&
                        (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

// Elements of `elem` bytes (`floating`: float or double); in/out hold rows * cols of them.
void transpose_bytes(const void* in, void* out, std::size_t in_elems, std::size_t out_elems, std::size_t rows,
                     std::size_t cols, std::size_t elem, bool floating, const TransposeOptions& o);
// `out`: a buffer of in's size for the cols x rows result.
void transpose_buffers(Buffer* in, Buffer* out, std::size_t rows, std::size_t cols, std::size_t elem, bool floating,
                       const TransposeOptions& o);
}  // namespace detail

template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  requires detail::TransposeElem<std::ranges::range_value_t<In>> &&
           std::is_same_v<std::ranges::range_value_t<In>, std::ranges::range_value_t<Out>>
void transpose(const In& in, Out&& out, std::size_t rows, std::size_t cols, const TransposeOptions& options = {}) {
  using T = std::ranges::range_value_t<In>;
  detail::transpose_bytes(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in),
                          std::ranges::size(out), rows, cols, sizeof(T), std::is_floating_point_v<T>, options);
}

namespace detail {
template <class T>
void require_2d(const Array<T>& m, const char* who, const char* what) {
  if (m.ndim() != 2)
    throw InvalidArgument(std::string(who) + ": " + what + " must be a 2-D Array (it is " + std::to_string(m.ndim()) +
                          "-D with " + std::to_string(m.size()) + " elements)");
}
}  // namespace detail

template <detail::TransposeElem T>
Array<T> transpose(const Array<T>& m, const TransposeOptions& options = {}) {
  detail::require_2d(m, "veda::transpose", "the input");
  if (options.beta != 0)
    throw InvalidArgument("veda::transpose: beta scales an existing out, which the returning form does not have "
                          "(use transpose_into)");
  auto t = Array<T>::from_storage(detail::make_host_storage(m.size() * sizeof(T)), m.size());
  t.reshape(m.cols(), m.rows());
  detail::transpose_buffers(m.buffer(), t.buffer(), m.rows(), m.cols(), sizeof(T), std::is_floating_point_v<T>,
                            options);
  return t;
}

// out (m.cols() x m.rows(), 2-D) = alpha m^T + beta out, in place.
template <detail::TransposeElem T>
void transpose_into(Array<T>& out, const Array<T>& m, const TransposeOptions& options = {}) {
  detail::require_2d(m, "veda::transpose_into", "the input");
  detail::require_2d(out, "veda::transpose_into", "out");
  if (out.rows() != m.cols() || out.cols() != m.rows())
    throw InvalidArgument("veda::transpose_into: out must be " + std::to_string(m.cols()) + "x" +
                          std::to_string(m.rows()) + " for a " + std::to_string(m.rows()) + "x" +
                          std::to_string(m.cols()) + " input (it is " + std::to_string(out.rows()) + "x" +
                          std::to_string(out.cols()) + ")");
  if (out.buffer() && out.buffer() == m.buffer())
    throw InvalidArgument("veda::transpose_into: out is the input (a transpose cannot run in place)");
  detail::transpose_buffers(m.buffer(), out.buffer(), m.rows(), m.cols(), sizeof(T), std::is_floating_point_v<T>,
                            options);
}

}  // namespace veda
