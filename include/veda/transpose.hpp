// veda/transpose.hpp — 2-D transposes that choose their device and tier.
//
//   veda::Array<float> t = veda::transpose(m);        // m: rows x cols
//   veda::transpose(in, out, rows, cols);              // row-major ranges
//
// Contract:
// - Any trivially copyable element of 1, 2, 4 or 8 bytes. The Array form
//   needs a 2-D Array; the range form needs in and out of rows * cols
//   elements that do not overlap (veda::InvalidArgument, before any work).
// - Tiers: serial (cache-blocked), tbb-auto (blocks in parallel), cuda
//   (shared-memory tiles). Every tier moves the same bits.
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
};

namespace detail {
template <class T>
concept TransposeElem = std::is_trivially_copyable_v<T> &&
                        (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

// Elements of `elem` bytes; in/out hold rows * cols of them.
void transpose_bytes(const void* in, void* out, std::size_t in_elems, std::size_t out_elems, std::size_t rows,
                     std::size_t cols, std::size_t elem, const TransposeOptions& o);
// `out`: a buffer of in's size for the cols x rows result.
void transpose_buffers(Buffer* in, Buffer* out, std::size_t rows, std::size_t cols, std::size_t elem,
                       const TransposeOptions& o);
}  // namespace detail

template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
  requires detail::TransposeElem<std::ranges::range_value_t<In>> &&
           std::is_same_v<std::ranges::range_value_t<In>, std::ranges::range_value_t<Out>>
void transpose(const In& in, Out&& out, std::size_t rows, std::size_t cols, const TransposeOptions& options = {}) {
  using T = std::ranges::range_value_t<In>;
  detail::transpose_bytes(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in),
                          std::ranges::size(out), rows, cols, sizeof(T), options);
}

template <detail::TransposeElem T>
Array<T> transpose(const Array<T>& m, const TransposeOptions& options = {}) {
  if (m.ndim() != 2)
    throw InvalidArgument("veda::transpose: needs a 2-D Array (it is 1-D with " + std::to_string(m.size()) +
                          " elements)");
  auto t = Array<T>::from_storage(detail::make_host_storage(m.size() * sizeof(T)), m.size());
  t.reshape(m.cols(), m.rows());
  detail::transpose_buffers(m.buffer(), t.buffer(), m.rows(), m.cols(), sizeof(T), options);
  return t;
}

}  // namespace veda
