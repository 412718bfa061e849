// veda/scan.hpp — prefix sums that choose their device and tier per call.
//
//   veda::inclusive_scan(in, out);          // out[i] = in[0] + ... + in[i]
//   veda::exclusive_scan(in, out, 10);      // out[i] = 10 + in[0] + ... + in[i-1]
//   auto offsets = veda::exclusive_scan(counts);   // Array in, Array out
//
// Contract:
// - Element types: float, double, (u)int32, (u)int64. Ranges are any
//   contiguous ranges (std::vector, std::span, std::array) of one type; out
//   must have in's length and may be in itself (in place), but must not
//   overlap it otherwise (veda::InvalidArgument, before any work).
// - Sums are computed in the element type, as std::inclusive_scan does:
//   unsigned overflow wraps, signed overflow is the caller's to avoid.
// - Tiers: serial, tbb-auto (oneTBB, three passes: block totals, their
//   prefix, block scans; faster here than tbb::parallel_scan, see
//   bench/scan), cuda (cub::DeviceScan).
//   Integer results are identical on every tier; float results differ
//   between tiers by rounding (the additions are grouped differently). In
//   deterministic mode (Config::deterministic) float scans run serially, so
//   they are bitwise reproducible.
// - The Array overloads return an Array left where it was computed.
//
// Thread-safety: any number of threads may scan at once.
#pragma once

#include <ranges>
#include <span>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/op_types.hpp"

namespace veda {

struct ScanOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "inclusive_scan" or "exclusive_scan"
  std::string tier;  // force "serial", "tbb-auto" or "cuda": tests, benchmarks, debugging
};

namespace detail {
template <class T>
void scan_span(std::span<const T> in, std::span<T> out, bool inclusive, T init, const ScanOptions& o);
template <class T>
Array<T> scan_array(const Array<T>& in, bool inclusive, T init, const ScanOptions& o);

template <class In, class Out>
concept ScanRanges = std::ranges::contiguous_range<In> && std::ranges::contiguous_range<Out> &&
                     OpScalar<std::ranges::range_value_t<In>> &&
                     std::is_same_v<std::ranges::range_value_t<In>, std::ranges::range_value_t<Out>>;

#define VEDA_SCAN_EXTERN(T)                                                                            \
  extern template void scan_span<T>(std::span<const T>, std::span<T>, bool, T, const ScanOptions&); \
  extern template Array<T> scan_array<T>(const Array<T>&, bool, T, const ScanOptions&);
VEDA_FOR_EACH_OP_TYPE(VEDA_SCAN_EXTERN)
#undef VEDA_SCAN_EXTERN
}  // namespace detail

template <class In, class Out>
  requires detail::ScanRanges<In, Out>
void inclusive_scan(const In& in, Out&& out, const ScanOptions& options = {}) {
  using T = std::ranges::range_value_t<In>;
  detail::scan_span<T>(std::span<const T>(std::ranges::data(in), std::ranges::size(in)),
                       std::span<T>(std::ranges::data(out), std::ranges::size(out)), true, T(), options);
}

template <class In, class Out>
  requires detail::ScanRanges<In, Out>
void exclusive_scan(const In& in, Out&& out, std::ranges::range_value_t<In> init = {},
                    const ScanOptions& options = {}) {
  using T = std::ranges::range_value_t<In>;
  detail::scan_span<T>(std::span<const T>(std::ranges::data(in), std::ranges::size(in)),
                       std::span<T>(std::ranges::data(out), std::ranges::size(out)), false, init, options);
}

template <detail::OpScalar T>
Array<T> inclusive_scan(const Array<T>& in, const ScanOptions& options = {}) {
  return detail::scan_array<T>(in, true, T(), options);
}

template <detail::OpScalar T>
Array<T> exclusive_scan(const Array<T>& in, std::type_identity_t<T> init = {}, const ScanOptions& options = {}) {
  return detail::scan_array<T>(in, false, init, options);
}

}  // namespace veda
