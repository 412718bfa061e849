// veda/random.hpp — counter-based random numbers that are the same bits on
// every tier, device and thread count.
//
//   auto x = veda::random::uniform<float>({rows, cols}, seed);        // [0, 1)
//   auto z = veda::random::normal<double>(n, seed, 0.0, 2.0);        // mean, stddev
//   veda::random::uniform_into(v, seed, -1.0f, 1.0f);                 // Array or range
//   float u = veda::random::uniform_at<float>(seed, i);              // element i, anywhere
//
// Contract:
// - Philox 4x32-10 keyed by the 64-bit seed, the counter being the element's
//   block: element i of a stream depends only on (seed, i, T, distribution),
//   so serial, tbb-auto and cuda tiers, any thread count and any split give
//   identical bits, and uniform_at / normal_at (usable on the host, in
//   veda::gpu functions, index-space kernels and CUDA kernels) give element i
//   of the same stream. Normals come from Box-Muller with veda's own log and
//   sin/cos, exact-rounded operations only (veda/detail/philox.hpp): this
//   holds unless the calling code is compiled with -ffast-math on the host.
// - float and double. uniform: low + (high - low) u with u in [0, 1) on a grid
//   of 2^-24 (float) or 2^-53 (double); rounding can give high itself when
//   high - low is not a power of two. normal: mean + stddev z.
// - low <= high, all finite, with high - low finite; mean finite, stddev
//   finite and >= 0 (veda::InvalidArgument before any work).
// - Arrays are filled where the call runs: on the GPU the result stays there.
//   Ranges (std::vector, std::span, ...) are written on the host.
// - Different seeds give independent streams; for independent variables at
//   one index use different seeds (or indices).
//
// Thread-safety: any number of threads may generate at once.
#pragma once

#include <concepts>
#include <cstdint>
#include <ranges>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/philox.hpp"

namespace veda::random {

struct Options {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "random.uniform" or "random.normal"
  std::string tier;  // force "serial", "tbb-auto" or "cuda"
};

template <class T>
concept Real = std::same_as<T, float> || std::same_as<T, double>;

}  // namespace veda::random

namespace veda::detail {
enum class RandomDist : std::uint8_t { Uniform, Normal };
// n elements of `elem` bytes (4: float, 8: double); p0, p1: low and high,
// or mean and stddev. Validates, decides and fills.
void random_fill_span(void* out, std::size_t n, std::size_t elem, RandomDist dist, std::uint64_t seed, double p0, double p1,
               const random::Options& o);
void random_fill_buffer(Buffer* out, std::size_t n, std::size_t elem, RandomDist dist, std::uint64_t seed,
                 double p0, double p1, const random::Options& o);

template <class R>
concept RandomRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                    random::Real<std::ranges::range_value_t<R>> &&
                    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

template <random::Real T>
void random_fill(Array<T>& out, RandomDist dist, std::uint64_t seed, T p0, T p1, const random::Options& o) {
  random_fill_buffer(out.buffer(), out.size(), sizeof(T), dist, seed, p0, p1, o);
}
template <RandomRange R>
void random_fill(R&& out, RandomDist dist, std::uint64_t seed, std::ranges::range_value_t<R> p0, std::ranges::range_value_t<R> p1,
          const random::Options& o) {
  random_fill_span(std::ranges::data(out), std::ranges::size(out), sizeof(p0), dist, seed, p0, p1, o);
}
// Uninitialised storage: every tier writes each element.
template <random::Real T>
Array<T> random_array(const Shape& shape, RandomDist dist, std::uint64_t seed, T p0, T p1, const random::Options& o) {
  const std::size_t n = shape.checked_size(sizeof(T));
  auto a = Array<T>::from_storage(make_host_storage(n * sizeof(T)), n);
  a.reshape(shape);
  random_fill(a, dist, seed, p0, p1, o);
  return a;
}
}  // namespace veda::detail

namespace veda::random {

// Element i of the stream uniform<T>(..., seed, low, high) fills.
template <Real T>
VEDA_RNG_FN T uniform_at(std::uint64_t seed, std::uint64_t i, T low = 0, T high = 1) {
  constexpr int per = detail::rng::Traits<T>::kPerBlock;
  return detail::rng::uniform_of(detail::rng::block(seed, i / per), static_cast<int>(i % per), low, high);
}

// Element i of the stream normal<T>(..., seed, mean, stddev) fills.
template <Real T>
VEDA_RNG_FN T normal_at(std::uint64_t seed, std::uint64_t i, T mean = 0, T stddev = 1) {
  constexpr int per = detail::rng::Traits<T>::kPerBlock;
  const int j = static_cast<int>(i % per);
  T z0, z1;
  detail::rng::normal_pair(detail::rng::block(seed, i / per), j / 2, z0, z1);
  return detail::rng::fma_rn(j % 2 ? z1 : z0, stddev, mean);
}


template <Real T>
Array<T> uniform(const Shape& shape, std::uint64_t seed, T low = 0, T high = 1, const Options& o = {}) {
  return detail::random_array(shape, detail::RandomDist::Uniform, seed, low, high, o);
}
template <Real T>
Array<T> uniform(std::size_t n, std::uint64_t seed, T low = 0, T high = 1, const Options& o = {}) {
  return uniform(Shape{n}, seed, low, high, o);
}
template <Real T>
Array<T> normal(const Shape& shape, std::uint64_t seed, T mean = 0, T stddev = 1, const Options& o = {}) {
  return detail::random_array(shape, detail::RandomDist::Normal, seed, mean, stddev, o);
}
template <Real T>
Array<T> normal(std::size_t n, std::uint64_t seed, T mean = 0, T stddev = 1, const Options& o = {}) {
  return normal(Shape{n}, seed, mean, stddev, o);
}

// Fill an existing Array (any shape) or contiguous range with the stream.
template <Real T>
void uniform_into(Array<T>& out, std::uint64_t seed, std::type_identity_t<T> low = 0, std::type_identity_t<T> high = 1,
                  const Options& o = {}) {
  detail::random_fill(out, detail::RandomDist::Uniform, seed, low, high, o);
}
template <detail::RandomRange R>
void uniform_into(R&& out, std::uint64_t seed, std::ranges::range_value_t<R> low = 0,
                  std::ranges::range_value_t<R> high = 1, const Options& o = {}) {
  detail::random_fill(out, detail::RandomDist::Uniform, seed, low, high, o);
}
template <Real T>
void normal_into(Array<T>& out, std::uint64_t seed, std::type_identity_t<T> mean = 0,
                 std::type_identity_t<T> stddev = 1, const Options& o = {}) {
  detail::random_fill(out, detail::RandomDist::Normal, seed, mean, stddev, o);
}
template <detail::RandomRange R>
void normal_into(R&& out, std::uint64_t seed, std::ranges::range_value_t<R> mean = 0,
                 std::ranges::range_value_t<R> stddev = 1, const Options& o = {}) {
  detail::random_fill(out, detail::RandomDist::Normal, seed, mean, stddev, o);
}

}  // namespace veda::random
